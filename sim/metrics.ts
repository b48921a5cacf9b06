/**
 * QoE metrics of a simulated call, with the SAME names and meanings as the
 * call's report.json (tools/harness/report.ts `CallReport`, docs/report.md),
 * plus `goodputBps` and `fec {overheadPct, utilizationPct}` at top level.
 *
 * Freezes, fps, latency and goodput follow the project's one definition of
 * each (src/feedback/qoe-metrics.ts: libwebrtc's freeze rule, fps and goodput
 * over the span from the first decoded frame to the end, type-7 latency
 * percentiles); this file only adapts the simulator's decode log to it.
 * - frames.sent: frames the encoder produced; frames.decoded: frames the
 *   decoder output; frames.dropped: frame ids up to the newest decoded one
 *   that were never decoded (frames still in flight at the end are not counted).
 * - latencyMs: capture -> decoded (ms), one sample per frame by qoe-metrics
 *   `latencySampleMs`. Sender and receiver share the virtual clock (offset 0)
 *   unless SimOptions.clockSkewMs gives them different clocks; then each
 *   sample is corrected by the receiver's clock-offset estimate at decode
 *   time, as in a real call.
 * - goodputBps: encoded bytes of decoded frames x 8 / seconds from the first
 *   decoded frame to the end of the call.
 */
import { percentiles } from '../src/feedback/percentile.js';
import { decodePacket } from '../src/wire/decode.js';
import { freezesOf, goodputBps, latencyOf, latencySampleMs, meanFps } from '../src/feedback/qoe-metrics.js';

/** One decoded frame as the simulator's decoder model logs it. */
export interface DecodedFrame {
  frameId: number;
  /** Sender capture time (µs). */
  captureUs: number;
  /** Decode time (µs, virtual clock). */
  decodedUs: number;
  /**
   * Sender clock - virtual clock (µs) used to put `captureUs` on the virtual
   * clock: 0 with a shared clock, else the receiver's estimate at decode time
   * (ReceiverEngine.senderClockOffsetUs), NaN before its first clock exchange.
   * Absent = 0.
   */
  senderClockOffsetUs?: number;
  /** Encoded size (bytes). */
  bytes: number;
}

export interface FreezeStats {
  count: number;
  totalMs: number;
  /** Longest freeze (ms), 0 without freezes. */
  maxMs: number;
  /** Start time (µs, decode time of the frame before the gap) and duration (ms) of each freeze. */
  list: Array<{ atUs: number; ms: number }>;
}

export interface LatencyStats {
  mean: number;
  p50: number;
  p95: number;
  p99: number;
}

/** Round to `d` decimals (keeps JSON compact and stable). */
export function round(x: number, d = 1): number {
  if (!Number.isFinite(x)) return 0;
  const k = 10 ** d;
  return Math.round(x * k) / k;
}

/**
 * Freezes (src/feedback/qoe-metrics.ts `freezesOf`) over decode times in µs; backward times are skipped.
 * With `endUs` (the end of the call, which starts at 0): a stream that stopped counts its silence, and a
 * stream that never decoded a frame is frozen throughout.
 */
export function freezeStats(decodedUs: readonly number[], endUs?: number): FreezeStats {
  const fz = freezesOf(
    decodedUs.map((t) => t / 1000),
    endUs === undefined ? undefined : { startMs: 0, endMs: endUs / 1000 },
  );
  return { count: fz.count, totalMs: fz.totalMs, maxMs: fz.maxMs, list: fz.list.map((f) => ({ atUs: f.at * 1000, ms: f.ms })) };
}

/** The frame's capture -> decoded latency (ms; NaN when the clocks could not be compared yet). */
export function frameLatencyMs(f: DecodedFrame): number {
  return latencySampleMs(f.captureUs, f.decodedUs, f.senderClockOffsetUs ?? 0);
}

/** Mean and p50/p95/p99 of latency samples (ms) (src/feedback/qoe-metrics.ts `latencyOf`); zeros when empty. */
export function latencyStats(ms: readonly number[]): LatencyStats {
  const l = latencyOf(ms);
  return { mean: l.mean ?? 0, p50: l.p50 ?? 0, p95: l.p95 ?? 0, p99: l.p99 ?? 0 };
}

/**
 * Frames encoded but never decoded: ids in [firstId, newest decoded id] that
 * were not decoded (ids are consecutive from `firstId`).
 */
export function framesDropped(decodedIds: readonly number[], firstId = 0): number {
  if (decodedIds.length === 0) return 0;
  let max = -Infinity;
  const uniq = new Set<number>();
  for (const id of decodedIds) {
    if (id >= firstId) uniq.add(id);
    if (id > max) max = id;
  }
  return Math.max(0, max - firstId + 1 - uniq.size);
}

/** Latency CDF as `points + 1` evenly spaced percentiles (0, 100/points, ..., 100), ms. */
export function latencyCdf(samplesMs: readonly number[], points = 50): number[] {
  const ms = samplesMs.filter(Number.isFinite);
  if (ms.length === 0) return [];
  const ps: number[] = [];
  for (let i = 0; i <= points; i++) ps.push((100 * i) / points);
  return percentiles(ms, ps).map((v) => round(v, 1));
}

/** Stream-level QoE of a list of decoded frames (in decode order). */
export interface StreamQoe {
  frames: { sent: number; decoded: number; dropped: number };
  fps: number;
  freezes: { count: number; totalMs: number; maxMs: number };
  latencyMs: LatencyStats;
  goodputBps: number;
  framesOutOfOrder: number;
}

/**
 * @param decoded frames in decode order
 * @param sent frames the encoder produced (ids 0..sent-1)
 * @param endUs end of the call (µs); the call started at 0
 */
export function streamQoe(decoded: readonly DecodedFrame[], sent: number, endUs: number): StreamQoe {
  const times = decoded.map((f) => f.decodedUs);
  const fz = freezeStats(times, endUs);
  const lat = latencyStats(decoded.map(frameLatencyMs));
  let bytes = 0;
  let ooo = 0;
  let last = -1;
  for (const f of decoded) {
    bytes += f.bytes;
    if (f.frameId <= last) ooo++;
    else last = f.frameId;
  }
  const firstMs = decoded.length ? decoded[0].decodedUs / 1000 : undefined;
  return {
    frames: { sent, decoded: decoded.length, dropped: framesDropped(decoded.map((f) => f.frameId)) },
    fps: round(meanFps(decoded.length, firstMs, endUs / 1000), 2),
    freezes: { count: fz.count, totalMs: Math.round(fz.totalMs), maxMs: Math.round(fz.maxMs) },
    latencyMs: { mean: round(lat.mean), p50: round(lat.p50), p95: round(lat.p95), p99: round(lat.p99) },
    goodputBps: Math.round(goodputBps(bytes, firstMs, endUs / 1000)),
    framesOutOfOrder: ooo,
  };
}

/** Per-second decoded fps, latency p50/p95 (ms) and mean inter-frame decode interval (ms), seconds [0, nSeconds). */
export function perSecondQoe(decoded: readonly DecodedFrame[], nSeconds: number): Array<{ fps: number; latencyP50Ms: number; latencyP95Ms: number; ifdMeanMs: number }> {
  const frames = new Array<number>(nSeconds).fill(0);
  const buckets: number[][] = Array.from({ length: nSeconds }, () => []);
  const ifd: number[][] = Array.from({ length: nSeconds }, () => []);
  let prev: number | undefined;
  for (const f of decoded) {
    const s = Math.floor(f.decodedUs / 1e6);
    if (s >= 0 && s < nSeconds) {
      frames[s]++;
      const lat = frameLatencyMs(f);
      if (Number.isFinite(lat)) buckets[s].push(lat);
      if (prev !== undefined) ifd[s].push((f.decodedUs - prev) / 1000);
    }
    prev = f.decodedUs;
  }
  return buckets.map((b, i) => {
    const [p50, p95] = b.length ? percentiles(b, [50, 95]) : [0, 0];
    const m = ifd[i].length ? ifd[i].reduce((a, c) => a + c, 0) / ifd[i].length : 0;
    return { fps: frames[i], latencyP50Ms: round(p50), latencyP95Ms: round(p95), ifdMeanMs: round(m, 2) };
  });
}

/** Mean of numbers (0 when empty). */
export function mean(a: readonly number[]): number {
  return a.length ? a.reduce((x, y) => x + y, 0) / a.length : 0;
}

/** Packet transmission time summary (ms) over the media packets that arrived (see {@link PacketTransmission}). */
export interface PacketTransmissionStats {
  mean: number;
  p95: number;
  max: number;
  /** Media packets counted. */
  packets: number;
}

/** Slots of the duplicate filter: a copy arriving this many flow sequence numbers after the first is counted again (never in practice). */
const SEEN_SLOTS = 1 << 16;
/** Histogram resolution (ms) and range (ms) of {@link PacketTransmission}; longer times share the last bin (the max stays exact). */
const BIN_MS = 0.1;
const RANGE_MS = 10_000;
const BINS = Math.round(RANGE_MS / BIN_MS) + 1;

/**
 * AggDeliv's *packet transmission time* (AggDeliv §IV-A, "the time needed to
 * transmit a packet between two devices", averaged over all transmitted
 * packets; its Fig. 3 and Fig. 9): for each media packet, its arrival at the
 * receiver minus the moment the application handed its frame to the sender
 * (the simulator encodes at capture, so the frame's capture time). It
 * includes the pacer queue, the link queue, serialization and propagation:
 * what a scheduler's path choice changes. First copies only: retransmissions,
 * FEC packets, probes' duplicates and copies of a packet already counted are
 * left out (a packet that never arrives has no transmission time).
 * Decodes each datagram with the library's own decoder; malformed ones are ignored.
 *
 * Memory is constant whatever the call's length (a 30 min soak must not grow
 * the heap): a 0.1 ms histogram up to 10 s gives the p95 (nearest rank, to
 * 0.1 ms); mean and max are exact.
 */
export class PacketTransmission {
  private readonly hist = new Uint32Array(BINS);
  private count = 0;
  private sumMs = 0;
  private maxMs = 0;
  private readonly seen = new Uint32Array(SEEN_SLOTS);

  /** A datagram arrived at the receiver at `nowSenderUs` (the arrival on the sender's clock, µs). */
  onArrival(bytes: Uint8Array, nowSenderUs: number): void {
    const r = decodePacket(bytes);
    if (!r.ok || r.packet.body.kind !== 'media') return;
    const m = r.packet.body.media;
    if (m.retransmission) return;
    const slot = m.flowSeq & (SEEN_SLOTS - 1);
    const tag = (m.flowSeq + 1) >>> 0 || 1;
    if (this.seen[slot] === tag) return;
    this.seen[slot] = tag;
    this.add((nowSenderUs - m.captureUs) / 1000);
  }

  /** One sample (ms); negative or non-finite ones are ignored. */
  add(ms: number): void {
    if (!(ms >= 0) || !Number.isFinite(ms)) return;
    this.hist[Math.min(BINS - 1, Math.floor(ms / BIN_MS + 1e-9))]++;
    this.count++;
    this.sumMs += ms;
    if (ms > this.maxMs) this.maxMs = ms;
  }

  /** Mean, p95 and max (ms) of the packets seen so far (zeros when none). */
  stats(): PacketTransmissionStats {
    return PacketTransmission.merged([this]);
  }

  /** The stats of several streams' packets together. */
  static merged(all: readonly PacketTransmission[]): PacketTransmissionStats {
    const n = all.reduce((a, t) => a + t.count, 0);
    if (n === 0) return { mean: 0, p95: 0, max: 0, packets: 0 };
    const max = Math.max(...all.map((t) => t.maxMs));
    const rank = Math.ceil(0.95 * n);
    let seen = 0;
    let p95 = max;
    for (let b = 0; b < BINS; b++) {
      for (const t of all) seen += t.hist[b];
      if (seen >= rank) {
        p95 = b === BINS - 1 ? max : Math.min(max, b * BIN_MS);
        break;
      }
    }
    return { mean: round(all.reduce((a, t) => a + t.sumMs, 0) / n), p95: round(p95), max: round(max), packets: n };
  }
}
