/**
 * Fairness metrics of a simulated call with cross traffic, as defined in
 * "Multipath Rate Control for Real-Time Media" (Kreith and Drozdy; MPRTP)
 * §V: per flow throughput, loss rate, average bandwidth utilization (ABU),
 * queue median delay (QMD) per path, rate error (RE, Eq. 2) of our flow, and
 * Jain's fairness index (Jain, Durresi and Babic, ATM Forum 99-0045) over
 * normalised throughputs. One definition, used by the simulator's result
 * (`SimResult.fairness`) and the benchmark's summary.
 *
 * Normalisation (§V-B): a single-path flow's throughput is divided by the
 * capacity of the path it uses, a multipath flow's by the aggregate capacity
 * of the paths it uses. Capacities and throughputs are link-level (bytes on
 * the wire, headers included, for every flow alike), over the window in which
 * every cross flow is active.
 *
 * The metrics mean nothing when the run did not do what the setup says, so
 * {@link fairness} checks it on the run itself ({@link FairnessResult.broken}):
 * every cross flow sent and got link bytes delivered in every 10 s slice of
 * the window (it ran throughout, not only at the start), a video cross flow
 * decoded frames, every path our flow may use carried our media in the
 * window, and every path had capacity.
 */
import type { CrossTrafficKind } from './net/scenario.js';

/** One flow's share of the window. Rates in bps. */
export interface FlowShare {
  /** `ours` or `cross[i]:kind@path`. */
  name: string;
  kind: 'ours' | CrossTrafficKind;
  /** Path indices the flow uses. */
  paths: number[];
  /** Bytes it got delivered over the window, per second (bps, link bytes). */
  throughputBps: number;
  /** Capacity of its paths over the window (bps): the normaliser. */
  capacityBps: number;
  /** ABU: throughput / capacity x 100. */
  abuPct: number;
  /** Packets lost on the link / sent, whole call (%). */
  lossPct: number;
}

/** `SimResult.fairness`. */
export interface FairnessResult {
  /** The window (s of the call): every cross flow active. */
  fromS: number;
  toS: number;
  /** Jain's index of the normalised throughputs, (Σx)² / (n Σx²), in [1/n, 1]. */
  jainIndex: number;
  /** Our flow's mean |RE| over path-seconds of the window (MPRTP Eq. 2), %. */
  rateErrorPct: number;
  flows: FlowShare[];
  /** QMD: median queueing delay per path over the link's recent samples (ms). */
  queueMedianDelayMs: number[];
  /** Broken assumptions of the run, one line each ([] when all hold): its numbers mean nothing otherwise. */
  broken: string[];
}

/** Slice of the window in which every cross flow must have delivered something (s). */
export const FAIRNESS_CHECK_SLICE_S = 10;

/**
 * Jain's fairness index (Σx)² / (n · Σx²) of non-negative values.
 * @returns 1 for an empty list or all zeros (nothing to be unfair about)
 * @throws RangeError for a negative or non-finite value
 */
export function jainIndex(xs: readonly number[]): number {
  let s = 0;
  let s2 = 0;
  for (const x of xs) {
    if (!Number.isFinite(x) || x < 0) throw new RangeError(`jainIndex: values must be finite and >= 0, got ${x}`);
    s += x;
    s2 += x * x;
  }
  return s2 === 0 ? 1 : (s * s) / (xs.length * s2);
}

/**
 * MPRTP §V Eq. 2 rate error (SR_actual - SR_allocated) / SR_allocated, as the
 * mean of its absolute value over the samples whose allocation is > 0, in %.
 * @returns 0 without a usable sample
 */
export function rateErrorPct(samples: ReadonlyArray<{ actualBps: number; allocatedBps: number }>): number {
  let n = 0;
  let sum = 0;
  for (const s of samples) {
    if (!(s.allocatedBps > 0) || !Number.isFinite(s.actualBps)) continue;
    sum += Math.abs((s.actualBps - s.allocatedBps) / s.allocatedBps);
    n++;
  }
  return n > 0 ? (100 * sum) / n : 0;
}

/** Median of a list (0 when empty). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  const a = [...xs].sort((x, y) => x - y);
  const h = a.length >> 1;
  return a.length % 2 === 1 ? a[h] : (a[h - 1] + a[h]) / 2;
}

/** What {@link fairness} needs from a run. */
export interface FairnessInput {
  durationS: number;
  /** Per path: capacity per second of the call (bps; index t = second [t, t+1)). */
  capacityBps: number[][];
  /**
   * Our flow: the paths it may use; link bytes delivered per path per second; packets sent / delivered;
   * media packets sent per path per second (absent: not checked).
   */
  ours: { paths: number[]; bytes: number[][]; sent: number; delivered: number; mediaPackets?: number[][] };
  /** Cross flows: kind, path, active window (s), link bytes per second, packets sent / delivered, video flows' frames decoded. */
  cross: Array<{ kind: CrossTrafficKind; path: number; startS: number; stopS: number; bytes: number[]; sent: number; delivered: number; framesDecoded?: number }>;
  /** Our flow's per-path per-second (allocated, actual) rates (bps) for RE, with the second t. */
  rates: Array<{ t: number; allocatedBps: number; actualBps: number }>;
  /** Per path: recent queueing delays (ms). */
  queueDelaysMs: number[][];
}

/**
 * Fairness of a run, over the window where every cross flow is active
 * (whole seconds). Undefined without cross traffic or with a window under 1 s.
 */
export function fairness(inp: FairnessInput): FairnessResult | undefined {
  if (inp.cross.length === 0) return undefined;
  const from = Math.ceil(Math.max(...inp.cross.map((c) => c.startS)));
  const to = Math.floor(Math.min(inp.durationS, ...inp.cross.map((c) => c.stopS)));
  if (to - from < 1) return undefined;
  const span = to - from;
  const sumRange = (xs: readonly number[]) => {
    let s = 0;
    for (let t = from; t < to; t++) s += xs[t] ?? 0;
    return s;
  };
  const capOf = (paths: readonly number[]) => paths.reduce((a, p) => a + sumRange(inp.capacityBps[p] ?? []) / span, 0);
  const share = (name: string, kind: FlowShare['kind'], paths: number[], bytes: number, sent: number, delivered: number): FlowShare => {
    const throughputBps = (bytes * 8) / span;
    const capacityBps = capOf(paths);
    return {
      name,
      kind,
      paths,
      throughputBps: Math.round(throughputBps),
      capacityBps: Math.round(capacityBps),
      abuPct: capacityBps > 0 ? Math.round((1000 * throughputBps) / capacityBps) / 10 : 0,
      lossPct: sent > 0 ? Math.round((10_000 * Math.max(0, sent - delivered)) / sent) / 100 : 0,
    };
  };
  const oursBytes = inp.ours.paths.reduce((a, p) => a + sumRange(inp.ours.bytes[p] ?? []), 0);
  const flows: FlowShare[] = [
    share('ours', 'ours', [...inp.ours.paths], oursBytes, inp.ours.sent, inp.ours.delivered),
    ...inp.cross.map((c, i) => share(`cross[${i}]:${c.kind}@${c.path}`, c.kind, [c.path], sumRange(c.bytes), c.sent, c.delivered)),
  ];
  const x = flows.map((f) => (f.capacityBps > 0 ? f.throughputBps / f.capacityBps : 0));
  return {
    fromS: from,
    toS: to,
    jainIndex: Math.round(jainIndex(x) * 1000) / 1000,
    rateErrorPct: Math.round(rateErrorPct(inp.rates.filter((r) => r.t >= from && r.t < to)) * 10) / 10,
    flows,
    queueMedianDelayMs: inp.queueDelaysMs.map((q) => Math.round(median(q) * 10) / 10),
    broken: fairnessChecks(inp, from, to),
  };
}

/**
 * The assumptions behind a fairness result, checked on the run (see the module doc), over the window [fromS, toS).
 * @returns one line per broken assumption ([] when all hold)
 */
export function fairnessChecks(inp: FairnessInput, fromS: number, toS: number): string[] {
  const out: string[] = [];
  const sum = (xs: readonly number[] | undefined, a: number, b: number) => {
    let s = 0;
    for (let t = a; t < b; t++) s += xs?.[t] ?? 0;
    return s;
  };
  const used = new Set([...inp.ours.paths, ...inp.cross.map((c) => c.path)]);
  for (const p of used) if (!(sum(inp.capacityBps[p], fromS, toS) > 0)) out.push(`path ${p} has no capacity in ${fromS}-${toS} s`);
  inp.cross.forEach((c, i) => {
    const name = `cross[${i}] ${c.kind}@${c.path}`;
    if (!(c.sent > 0)) out.push(`${name} sent nothing`);
    for (let a = fromS; a < toS; a += FAIRNESS_CHECK_SLICE_S) {
      const b = Math.min(toS, a + FAIRNESS_CHECK_SLICE_S);
      if (!(sum(c.bytes, a, b) > 0)) out.push(`${name} delivered nothing in ${a}-${b} s`);
    }
    if (c.framesDecoded !== undefined && !(c.framesDecoded > 0)) out.push(`${name} decoded no frame`);
  });
  for (const p of inp.ours.paths) {
    if (!(sum(inp.ours.bytes[p], fromS, toS) > 0)) out.push(`our flow delivered nothing on path ${p} in ${fromS}-${toS} s`);
    if (inp.ours.mediaPackets && !(sum(inp.ours.mediaPackets[p], fromS, toS) > 0)) out.push(`our flow sent no media on path ${p} in ${fromS}-${toS} s`);
  }
  return out;
}
