/**
 * summary.md of `npm run bench` (tables in the style of Converge Tables 1, 3,
 * 4, the loss-sweep FEC table and the issue's targets); report.html is
 * bench/sim/report-html.ts (uPlot charts, inlined like tools/harness/report.ts).
 */
import { renderFairness } from './report-fairness.js';
import { bestSingle } from './best-single.js';
import { renderFreezeCauses } from './report-freezes.js';
import { heapSlopeBytesPerMin } from '../../sim/heap.js';
import { mean, round } from '../../sim/metrics.js';
import { DELAY_JUMP, FLAP, OUTAGE, SOAK } from '../../sim/scenarios.js';
import type { SimResult } from '../../sim/simulator.js';

export interface BenchEntry {
  variant: string;
  config: string;
  loss?: number;
  /** Half of a split suite (`cellular`). */
  half?: 'tune' | 'check';
  wallMs: number;
  result: SimResult;
}

/** Means over seeds of one (variant, config). */
export interface Agg {
  variant: string;
  config: string;
  loss?: number;
  half?: 'tune' | 'check';
  n: number;
  framesSent: number;
  dropped: number;
  freezeCount: number;
  freezeMs: number;
  maxFreezeMs: number;
  fps: number;
  p95: number;
  goodputBps: number;
  fecOverheadPct: number;
  fecUtilizationPct: number;
  keyframeRequests: number;
  retransmissions: number;
  violations: number;
  sumCapacityBps: number;
  /** AggDeliv's packet transmission time (ms): means over seeds of each run's mean, p95 and max. */
  ptMean: number;
  ptP95: number;
  ptMax: number;
  wallMs: number;
}

export function aggregate(entries: BenchEntry[]): Agg[] {
  const groups = new Map<string, BenchEntry[]>();
  for (const e of entries) {
    const k = `${e.variant}\u0000${e.config}`;
    let g = groups.get(k);
    if (!g) groups.set(k, (g = []));
    g.push(e);
  }
  return [...groups.values()].map((g) => {
    const m = (f: (r: SimResult) => number) => mean(g.map((e) => f(e.result)));
    return {
      variant: g[0].variant,
      config: g[0].config,
      loss: g[0].loss,
      half: g[0].half,
      n: g.length,
      framesSent: m((r) => r.frames.sent),
      dropped: m((r) => r.frames.dropped),
      freezeCount: m((r) => r.freezes.count),
      freezeMs: m((r) => r.freezes.totalMs),
      maxFreezeMs: m((r) => r.freezes.maxMs),
      fps: m((r) => r.fps),
      p95: m((r) => r.latencyMs.p95),
      goodputBps: m((r) => r.goodputBps),
      fecOverheadPct: m((r) => r.fec.overheadPct),
      fecUtilizationPct: m((r) => r.fec.utilizationPct),
      keyframeRequests: m((r) => r.keyframeRequests),
      retransmissions: m((r) => r.retransmissions),
      violations: m((r) => r.decoderViolations),
      sumCapacityBps: m((r) => r.paths.reduce((a, p) => a + p.meanCapacityBps, 0)),
      ptMean: m((r) => r.packetTransmissionMs.mean),
      ptP95: m((r) => r.packetTransmissionMs.p95),
      ptMax: m((r) => r.packetTransmissionMs.max),
      wallMs: mean(g.map((e) => e.wallMs)),
    };
  });
}

/** Mean of per-variant means, per config (for multi-variant scenarios). */
function acrossVariants(aggs: Agg[]): Agg[] {
  const by = new Map<string, Agg[]>();
  for (const a of aggs) {
    let l = by.get(a.config);
    if (!l) by.set(a.config, (l = []));
    l.push(a);
  }
  return [...by.values()].map((l) => {
    const out = { ...l[0], variant: 'all', n: l.reduce((s, a) => s + a.n, 0) } as Agg;
    for (const k of Object.keys(out) as Array<keyof Agg>) {
      if (typeof out[k] === 'number' && k !== 'n' && k !== 'loss') (out as unknown as Record<string, number>)[k] = mean(l.map((a) => a[k] as number));
    }
    return out;
  });
}

const HEAD =
  '| configuration | frames dropped | freezes | freeze ms | max freeze ms | fps | p95 latency ms | goodput Mbps | FEC overhead % | FEC util % | keyframe req. | rtx | violations |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |';

function row(a: Agg): string {
  return `| ${a.config} | ${round(a.dropped)} | ${round(a.freezeCount)} | ${Math.round(a.freezeMs)} | ${Math.round(a.maxFreezeMs)} | ${round(a.fps, 2)} | ${round(a.p95)} | ${(a.goodputBps / 1e6).toFixed(2)} | ${round(a.fecOverheadPct)} | ${round(a.fecUtilizationPct)} | ${round(a.keyframeRequests)} | ${Math.round(a.retransmissions)} | ${round(a.violations)} |`;
}

interface Check {
  what: string;
  ok: boolean;
  detail: string;
}

const fmt = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : String(x));

/** The issue's targets, where the scenario and configurations allow checking them. */
export function checkTargets(scenario: string, entries: BenchEntry[], aggs: Agg[]): Check[] {
  const checks: Check[] = [];
  const variants = [...new Set(aggs.map((a) => a.variant))];
  const get = (v: string, c: string) => aggs.find((a) => a.variant === v && a.config === c);
  if (scenario === 'collapse') {
    for (const v of variants) {
      const cv = get(v, 'converge');
      if (!cv) continue;
      for (const b of ['converge-nofb', 'minrtt']) {
        const o = get(v, b);
        if (!o) continue;
        checks.push({
          what: `converge drops <= 1/5 of ${b}'s frames`,
          ok: cv.dropped * 5 <= o.dropped,
          detail: `${fmt(cv.dropped, 1)} vs ${fmt(o.dropped, 1)} (ratio ${fmt(o.dropped > 0 ? cv.dropped / o.dropped : cv.dropped === 0 ? 0 : Infinity)})`,
        });
        checks.push({
          what: `converge has fewer keyframe requests than ${b}`,
          ok: cv.keyframeRequests < o.keyframeRequests,
          detail: `${fmt(cv.keyframeRequests, 1)} vs ${fmt(o.keyframeRequests, 1)}`,
        });
      }
    }
  }
  if (scenario === 'carriers' || scenario === 'wifi-cellular') {
    const rows = scenario === 'wifi-cellular' ? [...aggs, ...acrossVariants(aggs)] : aggs;
    const vs = scenario === 'wifi-cellular' ? [...variants, 'all'] : variants;
    let pass = { g: 0, f: 0, l: 0, d: 0, z: 0 };
    let count = 0;
    for (const v of vs) {
      const g = (c: string) => rows.find((a) => a.variant === v && a.config === c);
      const cv = g('converge');
      if (!cv) continue;
      const singles = rows.filter((a) => a.variant === v && a.config.startsWith('single:'));
      if (singles.length === 0) continue;
      const best = singles.reduce((b, a) => (a.goodputBps > b.goodputBps ? a : b));
      const okG = cv.goodputBps >= 1.2 * best.goodputBps;
      const okF = cv.freezeMs <= 0.5 * best.freezeMs;
      const okL = cv.p95 <= best.p95;
      const multi = rows.filter((a) => a.variant === v && ['minrtt', 'mtput', 'mrtp', 'roundrobin'].includes(a.config));
      // Without any multipath baseline in the run there is nothing to compare against (no check).
      const okD = multi.length > 0 && multi.every((m) => cv.dropped < m.dropped);
      const okZ = multi.length > 0 && multi.every((m) => cv.freezeMs < m.freezeMs);
      if (v !== 'all') {
        count++;
        pass = { g: pass.g + +okG, f: pass.f + +okF, l: pass.l + +okL, d: pass.d + +okD, z: pass.z + +okZ };
      }
      if (scenario === 'wifi-cellular' && v !== 'all') continue;
      const tag = v === 'all' ? ' (mean over pairs)' : '';
      checks.push({
        what: `goodput >= 1.2x best single path (${best.config})${tag}`,
        ok: okG,
        detail: `${fmt(cv.goodputBps / 1e6)} vs ${fmt(best.goodputBps / 1e6)} Mbps = ${fmt(cv.goodputBps / best.goodputBps)}x`,
      });
      checks.push({ what: `freeze duration <= 0.5x best single path${tag}`, ok: okF, detail: `${Math.round(cv.freezeMs)} vs ${Math.round(best.freezeMs)} ms` });
      checks.push({ what: `p95 latency no worse than best single path${tag}`, ok: okL, detail: `${fmt(cv.p95, 1)} vs ${fmt(best.p95, 1)} ms` });
      if (multi.length > 0) {
        checks.push({
          what: `fewer frames dropped than every multipath baseline${tag}`,
          ok: okD,
          detail: multi.map((m) => `${m.config} ${fmt(m.dropped, 1)}`).join(', ') + ` vs ${fmt(cv.dropped, 1)}`,
        });
        checks.push({
          what: `less freeze than every multipath baseline${tag}`,
          ok: okZ,
          detail: multi.map((m) => `${m.config} ${Math.round(m.freezeMs)}`).join(', ') + ` vs ${Math.round(cv.freezeMs)} ms`,
        });
      }
    }
    if (scenario === 'wifi-cellular' && count > 0) {
      checks.push({
        what: 'pairs passing: goodput / freeze / p95 / dropped vs multipath / freeze vs multipath',
        ok: true,
        detail: `${pass.g} / ${pass.f} / ${pass.l} / ${pass.d} / ${pass.z} of ${count}`,
      });
    }
  }
  if (scenario === 'loss-sweep') {
    for (const a of aggs) {
      if (!a.config.endsWith('/path') || !(a.loss && a.loss > 0)) continue;
      const wt = aggs.find((x) => x.variant === a.variant && x.config === a.config.replace('/path', '/webrtc-table'));
      checks.push({
        what: `${a.variant}: path FEC overhead <= 10% and utilization >= 50%`,
        ok: a.fecOverheadPct <= 10 && a.fecUtilizationPct >= 50,
        detail: `overhead ${fmt(a.fecOverheadPct, 1)}%, utilization ${fmt(a.fecUtilizationPct, 1)}%` + (wt ? `; webrtc-table ${fmt(wt.fecOverheadPct, 1)}% / ${fmt(wt.fecUtilizationPct, 1)}%` : ''),
      });
    }
  }
  if (scenario === 'constant') {
    for (const a of aggs) {
      if (a.config !== 'converge') continue;
      const e = entries.find((x) => x.config === a.config);
      const maxBps = 8_000_000 * (e?.result.streams ?? 1);
      const goal = 0.9 * Math.min(a.sumCapacityBps, maxBps);
      checks.push({
        what: 'goodput >= 90% of min(sum of capacities, encoder max)',
        ok: a.goodputBps >= goal,
        detail: `${fmt(a.goodputBps / 1e6)} vs ${fmt(goal / 1e6)} Mbps (${fmt((100 * a.goodputBps) / Math.min(a.sumCapacityBps, maxBps), 1)}%)`,
      });
      checks.push({ what: 'p95 latency <= slowest one-way delay (60 ms) + 100 ms', ok: a.p95 <= 160, detail: `${fmt(a.p95, 1)} ms` });
    }
  }
  if (scenario === 'failover') {
    for (const a of aggs) {
      if (a.config.startsWith('single')) continue;
      const es = entries.filter((x) => x.config === a.config);
      const longest = mean(es.map((e) => Math.max(0, ...e.result.perStream[0].freezeList.filter((f) => f.atS >= 19 && f.atS <= 32).map((f) => f.ms))));
      const fpsDuring = mean(es.map((e) => mean(e.result.perSecond.filter((p) => p.t > 20 && p.t <= 30).map((p) => p.fps))));
      checks.push({ what: `${a.config}: video keeps flowing during the blackhole (fps 20-30 s)`, ok: fpsDuring >= 20, detail: `${fmt(fpsDuring, 1)} fps` });
      checks.push({ what: `${a.config}: longest freeze around the blackhole <= 300 ms`, ok: longest <= 300, detail: `${Math.round(longest)} ms (mean over seeds)` });
    }
  }
  return checks;
}

/** One acceptance line of a fault scenario (issue 11). */
export interface FaultAcceptance {
  scenario: string;
  target: string;
  /** undefined: informational (no target in the issue). */
  ok: boolean | undefined;
  measured: string;
}

/** Issue 11: converge's freeze may exceed the better single path's by this much (ms). */
export const FAULT_FREEZE_SLACK_MS = 500;
/** Issue 11: after an outage the encoder target is back to this fraction of its pre-outage value ... */
export const OUTAGE_TARGET_FRACTION = 0.8;
/** ... within this long after the paths return (s). */
export const OUTAGE_RECOVERY_S = 3;
/** Issue 11: longest freeze around the failover blackhole (ms). */
export const FAILOVER_MAX_FREEZE_MS = 300;
/**
 * `soak`: heap growth allowed after the warm-up (bytes over the rest of the
 * call). The simulator's own logs grow with the call (the decode log, ~70
 * bytes a frame, and a sender stats snapshot a second: ~0.3 MB a simulated
 * minute, ~7 MB over the 25 min measured); an engine leak of one small
 * object per packet would add ~30 MB a minute.
 */
export const SOAK_MAX_HEAP_GROWTH_BYTES = 16 * 1024 * 1024;
/** `soak`: samples before this (simulated s) are warm-up (bounded windows and histories fill). */
export const SOAK_WARMUP_S = 300;

/**
 * Seconds from `fromS` until the encoder target is back to `fraction` of the
 * target in effect at `beforeS` (from the run's targetChanges); Infinity if never.
 */
export function targetRecoveryS(changes: ReadonlyArray<{ atS: number; bps: number }>, beforeS: number, fromS: number, fraction: number): number {
  let pre = 0;
  for (const c of changes) if (c.atS <= beforeS) pre = c.bps;
  if (pre <= 0) return Infinity;
  let cur = 0;
  for (const c of changes) {
    if (c.atS <= fromS) {
      cur = c.bps;
      continue;
    }
    if (cur >= fraction * pre) return 0;
    if (c.bps >= fraction * pre) return c.atS - fromS;
    cur = c.bps;
  }
  return cur >= fraction * pre ? 0 : Infinity;
}

/** Converge's freeze against the better single path (+ slack), for a scenario with single:0 and single:1. */
function freezeVsBetterPath(scenario: string, aggs: Agg[], info: boolean): FaultAcceptance | undefined {
  const cv = aggs.find((a) => a.config === 'converge');
  const singles = aggs.filter((a) => a.config.startsWith('single:'));
  if (!cv || singles.length === 0) return undefined;
  const best = singles.reduce((b, a) => (a.freezeMs < b.freezeMs ? a : b));
  const measured = `converge ${fmt(cv.freezeMs / 1000)} s (${fmt(cv.freezeCount, 1)} freezes, longest ${Math.round(cv.maxFreezeMs)} ms) vs ${best.config} ${fmt(best.freezeMs / 1000)} s; ${singles.map((a) => `${a.config} ${fmt(a.fps, 1)} fps / ${fmt(a.keyframeRequests, 0)} keyframe req.`).join(', ')}`;
  return {
    scenario,
    target: `converge freeze <= better path alone + ${FAULT_FREEZE_SLACK_MS / 1000} s${info ? ' (no issue target; flap rule)' : ''}`,
    ok: info ? undefined : cv.freezeMs <= best.freezeMs + FAULT_FREEZE_SLACK_MS,
    measured,
  };
}

/** The fault scenarios' acceptance lines (issue 11), computed from the runs. */
export function faultAcceptance(scenario: string, entries: BenchEntry[], aggs: Agg[]): FaultAcceptance[] {
  const out: FaultAcceptance[] = [];
  const cvRuns = entries.filter((e) => e.config === 'converge');
  if (scenario === 'flap' || scenario === 'lossy-path' || scenario === 'delay-jump') {
    const r = freezeVsBetterPath(scenario, aggs, scenario === 'delay-jump');
    if (r) out.push(r);
    if (scenario === 'flap' && cvRuns.length > 0) {
      const fl = cvRuns.map((e) => e.result.perStream[0].freezeList.filter((f) => f.atS >= FLAP.fromS));
      out.push({
        scenario,
        target: 'freezes while path 0 flaps (info)',
        ok: undefined,
        measured: `${fmt(mean(fl.map((l) => l.length)), 1)} per run, longest ${Math.round(mean(fl.map((l) => Math.max(0, ...l.map((f) => f.ms)))))} ms (mean over seeds)`,
      });
    }
    if (scenario === 'delay-jump' && cvRuns.length > 0) {
      const fl = cvRuns.map((e) => e.result.perStream[0].freezeList.filter((f) => f.atS >= DELAY_JUMP.fromS - 1 && f.atS <= DELAY_JUMP.toS + 2));
      out.push({
        scenario,
        target: 'freezes around the delay jump (info)',
        ok: undefined,
        measured: `${fmt(mean(fl.map((l) => l.length)), 1)} per run, longest ${Math.round(mean(fl.map((l) => Math.max(0, ...l.map((f) => f.ms)))))} ms (mean over seeds)`,
      });
    }
  }
  if (scenario === 'outage' && cvRuns.length > 0) {
    const rec = cvRuns.map((e) => targetRecoveryS(e.result.perStream[0].targetChanges, OUTAGE.fromS - 0.5, OUTAGE.toS, OUTAGE_TARGET_FRACTION));
    const resume = cvRuns.map((e) => {
      const after = e.result.perStream[0].freezeList.find((f) => f.atS < OUTAGE.toS && f.atS + f.ms / 1000 > OUTAGE.toS);
      return after ? after.atS + after.ms / 1000 - OUTAGE.toS : 0;
    });
    const worst = Math.max(...rec);
    out.push({
      scenario,
      target: `converge: encoder target back to ${OUTAGE_TARGET_FRACTION * 100}% of its pre-outage value within ${OUTAGE_RECOVERY_S} s of the paths' return`,
      ok: worst <= OUTAGE_RECOVERY_S,
      measured: `${rec.map((x) => (Number.isFinite(x) ? `${fmt(x, 1)} s` : 'never')).join(', ')} per seed (worst ${Number.isFinite(worst) ? fmt(worst, 1) : 'never'} s); video resumes ${resume.map((x) => `${fmt(x, 2)} s`).join(', ')} after`,
    });
  }
  if (scenario === 'failover') {
    const es = cvRuns;
    if (es.length > 0) {
      const longest = es.map((e) => Math.max(0, ...e.result.perStream[0].freezeList.filter((f) => f.atS >= 19 && f.atS <= 32).map((f) => f.ms)));
      out.push({
        scenario,
        target: `converge: longest freeze around the blackhole <= ${FAILOVER_MAX_FREEZE_MS} ms (every seed)`,
        ok: Math.max(...longest) <= FAILOVER_MAX_FREEZE_MS,
        measured: `${longest.map((x) => `${Math.round(x)} ms`).join(', ')} per seed`,
      });
    }
  }
  if (scenario === 'soak' && cvRuns.length > 0) {
    const fz = cvRuns.map((e) => e.result.freezes.count);
    out.push({
      scenario,
      target: 'converge: zero freezes',
      ok: fz.every((n) => n === 0),
      measured: `${fz.join(', ')} per seed (${cvRuns.map((e) => `${Math.round(e.result.freezes.totalMs)} ms`).join(', ')})`,
    });
    const growth = cvRuns.map((e) => {
      const h = (e.result.heap?.samples ?? []).filter((x) => x.atS >= SOAK_WARMUP_S);
      return h.length >= 2 ? h[h.length - 1].usedBytes - h[0].usedBytes : NaN;
    });
    const slopes = cvRuns.map((e) => heapSlopeBytesPerMin(e.result.heap?.samples ?? [], SOAK_WARMUP_S));
    const gc = cvRuns.every((e) => e.result.heap?.gc === true);
    out.push({
      scenario,
      target: `converge: flat memory (heap after GC grows <= ${SOAK_MAX_HEAP_GROWTH_BYTES / 2 ** 20} MB from ${SOAK_WARMUP_S} s to the end, sampled every ${SOAK.heapSampleS} s)`,
      ok: growth.every((g) => Number.isFinite(g) && g <= SOAK_MAX_HEAP_GROWTH_BYTES),
      measured: `growth ${growth.map((g) => `${fmt(g / 2 ** 20, 1)} MB`).join(', ')}; slope ${slopes.map((x) => `${fmt(x / 2 ** 10, 0)} kB/min`).join(', ')} per seed${gc ? '' : ' (no forced GC: noisy)'}`,
    });
  }
  return out;
}

/** One pair of the cellular suite: converge against its best single path. */
export interface PairCompare {
  variant: string;
  half?: 'tune' | 'check';
  converge: Agg;
  /** The single:i that froze least (ties: higher goodput). */
  best: Agg;
  /** Converge freeze minus best single freeze (ms). */
  freezeDeltaMs: number;
  goodputRatio: number;
  okFreeze: boolean;
  okGoodput: boolean;
  /**
   * The best single path plays below {@link LOW_FPS_RATIO} x converge's fps:
   * libwebrtc's freeze rule is relative to the mean frame interval, so a path
   * stuck at a few fps counts few freezes and can look "best" by freeze alone.
   */
  lowFpsBest: boolean;
}

/** Per-pair acceptance of issue 10: freeze <= best single + 0.5 s, goodput >= 0.95x. */
export const PAIR_FREEZE_SLACK_MS = 500;
export const PAIR_GOODPUT_RATIO = 0.95;
/** Suite acceptance: converge's total freeze <= this x the best single paths' total. */
export const TOTAL_FREEZE_RATIO = 0.5;
/** A best single path below this fraction of converge's fps is flagged (see PairCompare.lowFpsBest). */
export const LOW_FPS_RATIO = 0.8;

/** Converge vs best single path per variant (variants without both are skipped). */
export function comparePairs(aggs: Agg[]): PairCompare[] {
  const out: PairCompare[] = [];
  for (const v of [...new Set(aggs.map((a) => a.variant))]) {
    const cv = aggs.find((a) => a.variant === v && a.config === 'converge');
    const singles = aggs.filter((a) => a.variant === v && a.config.startsWith('single:'));
    if (!cv || singles.length === 0) continue;
    const best = bestSingle(singles);
    const goodputRatio = best.goodputBps > 0 ? cv.goodputBps / best.goodputBps : Infinity;
    out.push({
      variant: v,
      half: cv.half,
      converge: cv,
      best,
      freezeDeltaMs: cv.freezeMs - best.freezeMs,
      goodputRatio,
      okFreeze: cv.freezeMs <= best.freezeMs + PAIR_FREEZE_SLACK_MS,
      okGoodput: goodputRatio >= PAIR_GOODPUT_RATIO,
      lowFpsBest: best.fps < LOW_FPS_RATIO * cv.fps,
    });
  }
  return out;
}

/** The cellular suite's section of summary.md: per-pair table and the acceptance checks per half. */
export function renderPairSuite(aggs: Agg[]): string[] {
  const pairs = comparePairs(aggs);
  const lines: string[] = [];
  lines.push(
    '## Converge vs best single path, per pair',
    '',
    "Best single = the `single:i` with the least mean freeze (ties: higher goodput). Half: FNV-1a hash of the pair label, even = tune, odd = check (sim/scenarios.ts `cellularHalf`). fps and keyframe requests are converge / best single; ⚠ marks a best single path playing below 0.8x converge's fps (libwebrtc's freeze rule is relative to the mean frame interval, so a path stuck at a few fps counts few freezes).",
    '',
    '| pair | half | converge freeze s | best single | best freeze s | delta s | converge goodput Mbps | best goodput Mbps | ratio | converge p95 ms | best p95 ms | fps | keyframe req. | freeze ok | goodput ok |',
    '| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |',
  );
  for (const p of pairs) {
    lines.push(
      `| ${p.variant} | ${p.half ?? '-'} | ${fmt(p.converge.freezeMs / 1000, 1)} | ${p.best.config} | ${fmt(p.best.freezeMs / 1000, 1)} | ${fmt(p.freezeDeltaMs / 1000, 1)} | ${fmt(p.converge.goodputBps / 1e6)} | ${fmt(p.best.goodputBps / 1e6)} | ${fmt(p.goodputRatio)} | ${fmt(p.converge.p95, 0)} | ${fmt(p.best.p95, 0)} | ${fmt(p.converge.fps, 1)} / ${fmt(p.best.fps, 1)}${p.lowFpsBest ? ' ⚠' : ''} | ${fmt(p.converge.keyframeRequests, 1)} / ${fmt(p.best.keyframeRequests, 1)} | ${p.okFreeze ? 'yes' : '**no**'} | ${p.okGoodput ? 'yes' : '**no**'} |`,
    );
  }
  lines.push('');
  const halves: Array<['tune' | 'check' | 'all', PairCompare[]]> = [
    ['tune', pairs.filter((p) => p.half === 'tune')],
    ['check', pairs.filter((p) => p.half === 'check')],
    ['all', pairs],
  ];
  lines.push(
    '## Acceptance per half (issue 10)',
    '',
    '| half | pairs | freeze <= best + 0.5 s | goodput >= 0.95x | converge total freeze s | best single total s | ratio (<= 0.5) | converge goodput / best (mean) | worst pair (freeze delta) | met |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |',
  );
  for (const [h, ps] of halves) {
    if (ps.length === 0) continue;
    const cvTotal = ps.reduce((a, p) => a + p.converge.freezeMs, 0);
    const bestTotal = ps.reduce((a, p) => a + p.best.freezeMs, 0);
    const ratio = bestTotal > 0 ? cvTotal / bestTotal : cvTotal === 0 ? 0 : Infinity;
    const nF = ps.filter((p) => p.okFreeze).length;
    const nG = ps.filter((p) => p.okGoodput).length;
    const worst = ps.reduce((w, p) => (p.freezeDeltaMs > w.freezeDeltaMs ? p : w));
    const met = nF === ps.length && nG === ps.length && ratio <= TOTAL_FREEZE_RATIO;
    const gm = mean(ps.map((p) => p.goodputRatio));
    lines.push(
      `| ${h} | ${ps.length} | ${nF}/${ps.length} | ${nG}/${ps.length} | ${fmt(cvTotal / 1000, 1)} | ${fmt(bestTotal / 1000, 1)} | ${fmt(ratio)} | ${fmt(gm)} | ${worst.variant} (${fmt(worst.converge.freezeMs / 1000, 1)} vs ${fmt(worst.best.freezeMs / 1000, 1)} s, goodput ${fmt(worst.goodputRatio)}x) | ${met ? 'yes' : '**no**'} |`,
    );
  }
  lines.push('');
  return lines;
}

export function renderSummary(scenario: string, entries: BenchEntry[], info: { seeds: number; streams: number; wallS: number; fec: string[]; rateScale?: number }): string {
  const aggs = aggregate(entries);
  const variants = [...new Set(aggs.map((a) => a.variant))];
  const lines: string[] = [];
  // `--rate-scale`: the scenario's name still selects its sections (the cellular suite's per-pair
  // acceptance is relative to the best single path of the same run, so it holds at any scale);
  // the named scenarios' absolute targets are defined at capacity x 1 and are not checked.
  const scaled = info.rateScale !== undefined && info.rateScale !== 1;
  lines.push(`# Simulator benchmark: ${scenario}${scaled ? ` (every capacity x ${info.rateScale})` : ''}`, '');
  lines.push(
    `${entries.length} runs (${info.seeds} seed(s), ${info.streams} stream(s), FEC ${info.fec.join('/')}), duration ${entries[0]?.result.durationS ?? 0} s simulated per run, ${info.wallS.toFixed(1)} s wall in total; mean wall per run ${(mean(entries.map((e) => e.wallMs)) / 1000).toFixed(2)} s. Values are means over seeds.`,
    '',
  );
  if (variants.length > 1) {
    lines.push('## All variants (mean of per-variant means)', '', HEAD, ...acrossVariants(aggs).map(row), '');
  }
  if (scenario === 'cellular') lines.push(...renderPairSuite(aggs));
  for (const v of variants) {
    if (scenario === 'cellular') break; // per-pair rows above; every metric is in results.json
    const cap = aggs.find((a) => a.variant === v)?.sumCapacityBps ?? 0;
    lines.push(`## ${v}`, '', `Sum of mean path capacities: ${(cap / 1e6).toFixed(2)} Mbps.`, '', HEAD, ...aggs.filter((a) => a.variant === v).map(row), '');
  }
  if (scenario === 'loss-sweep') {
    const configs = [...new Set(aggs.map((a) => a.config))];
    lines.push('## FEC by loss level', '', `| loss | ${configs.map((c) => `${c} overhead % / util % / dropped`).join(' | ')} |`, `| --- | ${configs.map(() => '---').join(' | ')} |`);
    for (const v of variants) {
      lines.push(
        `| ${v} | ${configs
          .map((c) => {
            const a = aggs.find((x) => x.variant === v && x.config === c);
            return a ? `${round(a.fecOverheadPct)} / ${round(a.fecUtilizationPct)} / ${round(a.dropped)}` : '-';
          })
          .join(' | ')} |`,
      );
    }
    lines.push('');
  }
  lines.push(...renderPaperMetrics(aggs));
  lines.push(...renderAudio(entries));
  lines.push(...renderFairness(scenario, entries));
  lines.push(...renderFreezeCauses(entries));
  if (scaled) {
    lines.push(`Named targets (issues 11, 16, ...) are defined at capacity x 1: not checked at x ${info.rateScale}.`, '');
    return lines.join('\n') + '\n';
  }
  const fa = faultAcceptance(scenario, entries, aggs);
  if (fa.length) {
    lines.push(
      '## Acceptance (issue 11)',
      '',
      '| scenario | target | met | measured |',
      '| --- | --- | --- | --- |',
      ...fa.map((f) => `| ${f.scenario} | ${f.target} | ${f.ok === undefined ? 'info' : f.ok ? 'yes' : '**no**'} | ${f.measured} |`),
      '',
    );
  }
  const checks = checkTargets(scenario, entries, aggs);
  if (checks.length) {
    lines.push('## Targets', '', '| target | met | measured |', '| --- | --- | --- |', ...checks.map((c) => `| ${c.what} | ${c.ok ? 'yes' : '**no**'} | ${c.detail} |`), '');
  }
  return lines.join('\n') + '\n';
}

/**
 * The seed papers' own headline metrics per configuration, over every
 * variant (a variant is a pair of the cellular suite, a loss level, ...):
 * - LoLa §4.3 (its Fig. 9-11): the p95 end-to-end frame delay (capture ->
 *   decoded; the paper aims near or below 100 ms). Its SSIM needs pixels: the
 *   browser benchmark reports it (bench/browser, PSNR/SSIM per configuration).
 * - AggDeliv §IV (Fig. 7-9): aggregate goodput against the best single path of
 *   the same variant (the paper reports 1.1-3.2x), mean and worst variant; and
 *   the packet transmission time (ms; sim/metrics.ts `PacketTransmission`),
 *   mean / p95 / max, each the mean over variants.
 * Empty when only one configuration ran.
 */
export function renderPaperMetrics(aggs: Agg[]): string[] {
  const configs = [...new Set(aggs.map((a) => a.config))];
  if (configs.length < 2) return [];
  const variants = [...new Set(aggs.map((a) => a.variant))];
  const bestSingle = new Map<string, number>();
  for (const v of variants) {
    const singles = aggs.filter((a) => a.variant === v && a.config.startsWith('single:'));
    if (singles.length) bestSingle.set(v, Math.max(...singles.map((a) => a.goodputBps)));
  }
  const lines = [
    "## The papers' headline metrics",
    '',
    'LoLa: p95 end-to-end frame delay (its SSIM: browser benchmark only). AggDeliv: goodput against the best single path of the same variant, and packet transmission time (frame handed to the sender -> packet arrived; first copies of media packets). Means over variants' +
      (variants.length > 1 ? ` (${variants.length})` : '') +
      '.',
    '',
    '| configuration | p95 frame delay ms | goodput vs best single (mean / worst) | packet transmission ms mean / p95 / max |',
    '| --- | ---: | --- | --- |',
  ];
  for (const c of configs) {
    const rows = aggs.filter((a) => a.config === c);
    const ratios = rows.flatMap((a) => {
      const b = bestSingle.get(a.variant);
      return b && b > 0 ? [a.goodputBps / b] : [];
    });
    const g = ratios.length ? `${fmt(mean(ratios))}x / ${fmt(Math.min(...ratios))}x` : '-';
    lines.push(
      `| ${c} | ${round(mean(rows.map((a) => a.p95)))} | ${g} | ${round(mean(rows.map((a) => a.ptMean)))} / ${round(mean(rows.map((a) => a.ptP95)))} / ${round(mean(rows.map((a) => a.ptMax)))} |`,
    );
  }
  lines.push('');
  return lines;
}

/**
 * The audio table (runs with SimOptions.audio): per variant and
 * configuration, concealment (webrtc-stats concealedSamples /
 * totalSamplesReceived) and mouth-to-ear p95, mean over seeds and the worst
 * seed, with issue 13's targets (<= 2 %, <= 250 ms). Empty without audio.
 */
export function renderAudio(entries: BenchEntry[]): string[] {
  const groups = new Map<string, BenchEntry[]>();
  for (const e of entries) {
    if (!e.result.audio) continue;
    const k = `${e.variant}|${e.config}`;
    groups.set(k, [...(groups.get(k) ?? []), e]);
  }
  if (groups.size === 0) return [];
  const lines = [
    '## Audio (20 ms Opus-sized frames; target: concealment <= 2 %, mouth-to-ear p95 <= 250 ms)',
    '',
    '| variant | config | concealed % (mean / worst) | mouth-to-ear p95 ms (mean / worst) | lost | duplicates | late | A/V offset ms (video - audio p50) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const [k, es] of groups) {
    const [variant, config] = k.split('|');
    const a = es.map((e) => e.result.audio!);
    const c = a.map((x) => x.concealedPct);
    const m = a.map((x) => x.mouthToEarP95Ms);
    lines.push(
      `| ${variant} | ${config} | ${round(mean(c), 2)} / ${round(Math.max(...c), 2)} | ${Math.round(mean(m))} / ${Math.round(Math.max(...m))} | ${round(mean(a.map((x) => x.packetsLost)))} | ${round(mean(a.map((x) => x.duplicates)))} | ${round(mean(a.map((x) => x.latePackets)))} | ${Math.round(mean(a.map((x) => x.avOffsetMs)))} |`,
    );
  }
  lines.push('');
  return lines;
}
