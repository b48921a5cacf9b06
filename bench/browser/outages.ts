/**
 * Where a path's links stop delivering, and how much of a run's freeze time
 * falls into those stops: the split between freezes no sender can avoid
 * (the media uplink delivers nothing), freezes inside an outage of the
 * feedback downlink only (structural for a stack whose media needs
 * acknowledgements on the reverse path, like our SCTP datachannel; RTP
 * needs none) and freezes outside every outage (the stack's own).
 *
 * Outage: a span where the link offers no delivery opportunity for at
 * least `minGapMs` (mahimahi semantics: each opportunity is one packet),
 * with gaps that touch (a lone opportunity between two gaps, as the AT&T
 * driving downlink's one packet per second at trace 20-30 s) merged into
 * one; `downPeriods` count as outages too. Pure, no I/O: the capacity
 * comes in as a {@link LinkConfig} (sim/net/scenario.ts linkConfigFromSpec).
 */
import type { LinkConfig } from '../../sim/net/link.js';
import { capacityAt } from '../../sim/net/traces.js';

/** A span [startMs, endMs) in scenario (link) time. */
export type Span = readonly [number, number];

/** Shortest span without a delivery opportunity that counts as an outage (ms). */
export const OUTAGE_MIN_GAP_MS = 300;
/** Gaps closer than this (ms) merge into one outage (a lone packet between two gaps does not end it). */
const OUTAGE_MERGE_MS = 50;

/** Merge overlapping or nearly touching spans (sorted, non-overlapping result). */
export function mergeSpans(spans: readonly Span[], joinMs = 0): Span[] {
  const s = [...spans].filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  const out: Array<[number, number]> = [];
  for (const [a, b] of s) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + joinMs) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/**
 * Outages of one link over scenario time [fromMs, toMs) (ms; the trace loops
 * and starts at `traceOffsetMs` as in sim/net/link.ts). O(toMs - fromMs).
 * @throws RangeError for a negative or non-finite span or minGapMs <= 0
 */
export function linkOutages(cfg: Pick<LinkConfig, 'capacity' | 'downPeriods' | 'traceOffsetMs'>, fromMs: number, toMs: number, minGapMs = OUTAGE_MIN_GAP_MS): Span[] {
  if (!(Number.isFinite(fromMs) && Number.isFinite(toMs) && fromMs >= 0 && toMs >= fromMs)) throw new RangeError(`linkOutages: bad span [${fromMs}, ${toMs})`);
  if (!(minGapMs > 0)) throw new RangeError(`linkOutages: minGapMs must be > 0, got ${minGapMs}`);
  const gaps: Span[] = [];
  const off = cfg.traceOffsetMs ?? 0;
  let lastOpp = Math.floor(fromMs) - 1; // treat the span's start as an opportunity: only gaps inside it count
  const end = Math.ceil(toMs);
  for (let ms = Math.floor(fromMs); ms < end; ms++) {
    if (capacityAt(cfg.capacity, ms, off) <= 0) continue;
    if (ms - lastOpp >= minGapMs) gaps.push([lastOpp + 1, ms]);
    lastOpp = ms;
  }
  if (end - lastOpp >= minGapMs) gaps.push([lastOpp + 1, end]);
  for (const [a, b] of cfg.downPeriods ?? []) if (b > fromMs && a < toMs) gaps.push([Math.max(a, fromMs), Math.min(b, toMs)]);
  return mergeSpans(gaps, OUTAGE_MERGE_MS);
}

/** Total length (ms) of the overlap between [a, b) and a merged span list. */
function overlapMs(a: number, b: number, spans: readonly Span[]): number {
  let sum = 0;
  for (const [s, e] of spans) sum += Math.max(0, Math.min(b, e) - Math.max(a, s));
  return sum;
}

/** Freeze time of a run split by where it fell (ms; the three parts sum to the total). */
export interface FreezeSplit {
  /** Inside an outage of a media uplink. */
  inUplinkOutageMs: number;
  /** Inside an outage of a feedback downlink while the uplink delivered. */
  inDownlinkOnlyOutageMs: number;
  /** Outside every outage. */
  outsideMs: number;
  /** The outages used, scenario time (ms), after the shift. */
  uplinkOutages: Span[];
  downlinkOutages: Span[];
  /** How far the outages were moved to meet the display clock (ms): the run's median draw -> display latency. */
  shiftMs: number;
}

/**
 * Split `freezes` (each [startMs, endMs) in scenario time, display clock) by
 * the outages of the enabled paths' links. A frame sent at scenario time t
 * is shown at t + latency, so the outages are moved by `shiftMs` (the run's
 * median latency) before the overlap is taken. With several paths the
 * outages are the union over them: an outage of one path while another
 * works is still counted as "in an outage" (a multipath stack that kept
 * freezing there had another path to use; read that split with care).
 */
export function splitFreezes(freezes: readonly Span[], uplink: readonly Span[], downlink: readonly Span[], shiftMs: number): FreezeSplit {
  const sh = (s: readonly Span[]): Span[] => s.map(([a, b]) => [a + shiftMs, b + shiftMs] as const);
  const up = mergeSpans(sh(uplink));
  const down = mergeSpans(sh(downlink));
  let inUp = 0;
  let inDown = 0;
  let total = 0;
  for (const [a, b] of freezes) {
    if (!(b > a)) continue;
    total += b - a;
    const u = overlapMs(a, b, up);
    inUp += u;
    // Downlink-only: the part of the freeze in a downlink outage and not in an uplink outage.
    const d = overlapMs(a, b, down);
    const both = down.reduce((acc, [s, e]) => acc + overlapMs(Math.max(a, s), Math.min(b, e), up), 0);
    inDown += d - both;
  }
  const r = (x: number) => Math.round(x);
  return {
    inUplinkOutageMs: r(inUp),
    inDownlinkOnlyOutageMs: r(inDown),
    outsideMs: r(total - inUp - inDown),
    uplinkOutages: up.map(([a, b]) => [r(a), r(b)] as const),
    downlinkOutages: down.map(([a, b]) => [r(a), r(b)] as const),
    shiftMs: r(shiftMs),
  };
}
