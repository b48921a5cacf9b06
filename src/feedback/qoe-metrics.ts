/**
 * THE definitions of the video QoE metrics this project reports: freezes,
 * frame rate, end-to-end latency and goodput. The library's live statistics
 * (`StreamQoeStats`, `getStats()`), the call report (`npm run call`), the
 * simulator (`npm run bench`) and the browser benchmark
 * (`npm run bench:browser`) all compute them with the functions below, so a
 * number means the same thing wherever it is printed.
 *
 * - **Freeze** (libwebrtc video/video_quality_observer2.cc, the rule behind
 *   W3C webrtc-stats `freezeCount` / `totalFreezesDuration` of
 *   RTCInboundRtpStreamStats): the interval between two rendered (here:
 *   decoded or displayed) frames is a freeze when
 *   `interval >= max(3 * avg, avg + 150 ms)`, where `avg` is the mean of the
 *   last 30 intervals INCLUDING the current one (libwebrtc adds the sample to
 *   its moving average before comparing; freezes stay in the average), and
 *   only once at least 5 intervals are known. The freeze lasts the whole
 *   interval. libwebrtc rounds `avg` down to whole ms; we keep it exact.
 *   At the end of a measurement ({@link freezesOf} with a span: the
 *   simulator's and the browser benchmark's reports), a stream that stopped
 *   counts its silence, as for the frame rate: the gap from the last frame to
 *   the end is judged as one more interval (against the mean of the known
 *   intervals while fewer than 5 are known), and a measurement without any
 *   frame is one freeze of its whole span (nothing was ever shown). The live
 *   statistics (`getStats()`, {@link FreezeDetector}) count a freeze when it
 *   ends, as webrtc-stats does.
 * - **Frame rate** (fps): frames decoded (or distinct frames displayed) /
 *   seconds from the first such frame to the end of the measurement. A stream
 *   that stops counts its silence; time before the first frame (connecting)
 *   does not.
 * - **End-to-end latency** (ms): capture (or source draw) -> decoded (or
 *   displayed), per frame ({@link latencySampleMs}: the capture time is
 *   moved onto the receiver's clock with the estimated clock offset, see
 *   ./clock-sync.ts); mean and type-7 percentiles ({@link percentiles}).
 * - **Goodput** (bps): media bytes delivered x 8 / seconds from the first
 *   decoded frame to the end, the same active span as the frame rate. Each
 *   instrument counts the bytes it can see: the simulator and the call report
 *   the encoded bytes of decoded frames, the browser benchmark the media bytes
 *   received (our datachannels; native WebRTC's inbound-rtp `bytesReceived`).
 *
 * Pure, no I/O, no clock: times are passed in.
 */
import { percentiles } from './percentile.js';

/** Intervals averaged for the freeze threshold (libwebrtc kAvgInterframeDelaysWindowSizeFrames). */
export const FREEZE_WINDOW_FRAMES = 30;
/** Intervals needed before a freeze can be detected (libwebrtc kMinFrameSamplesToDetectFreeze). */
export const FREEZE_MIN_INTERVALS = 5;
/** Minimum excess over the average interval (ms) (libwebrtc kMinIncreaseForFreezeMs). */
export const FREEZE_MIN_INCREASE_MS = 150;

/**
 * Incremental freeze detector (libwebrtc rule, see the module docstring).
 * O(1) per interval, bounded memory (`windowFrames` numbers).
 */
export class FreezeDetector {
  private readonly ring: Float64Array;
  private head = 0;
  private n = 0;
  private sum = 0;
  private readonly minIntervals: number;
  /** Freezes so far. */
  count = 0;
  /** Sum of the freeze intervals (ms). */
  totalMs = 0;
  /** Longest freeze (ms), 0 without freezes. */
  maxMs = 0;

  /** @throws RangeError when an option is not a positive integer. */
  constructor(windowFrames = FREEZE_WINDOW_FRAMES, minIntervals = FREEZE_MIN_INTERVALS) {
    for (const [name, v] of [
      ['windowFrames', windowFrames],
      ['minIntervals', minIntervals],
    ] as const) {
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`FreezeDetector: ${name} must be a positive integer, got ${v}`);
    }
    this.ring = new Float64Array(windowFrames);
    this.minIntervals = minIntervals;
  }

  /**
   * One inter-frame interval (ms). Returns the freeze duration (ms) when this
   * interval is a freeze, else 0. Negative or non-finite intervals are ignored
   * (return 0, the average is untouched).
   */
  addInterval(ms: number): number {
    if (!(ms >= 0) || !Number.isFinite(ms)) return 0;
    const w = this.ring.length;
    if (this.n === w) this.sum -= this.ring[this.head];
    else this.n++;
    this.ring[this.head] = ms;
    this.sum += ms;
    this.head = this.head + 1 === w ? 0 : this.head + 1;
    if (this.n < this.minIntervals) return 0;
    const avg = this.sum / this.n;
    if (ms < Math.max(3 * avg, avg + FREEZE_MIN_INCREASE_MS)) return 0;
    this.count++;
    this.totalMs += ms;
    if (ms > this.maxMs) this.maxMs = ms;
    return ms;
  }
}

/** Freezes of a whole sequence. */
export interface FreezeStats {
  count: number;
  /** Sum of the freeze intervals (ms). */
  totalMs: number;
  /** Longest freeze (ms), 0 without freezes. */
  maxMs: number;
  /** Each freeze: `at` = time of the frame before the gap (the input's unit), `ms` = its duration. */
  list: Array<{ at: number; ms: number }>;
}

/**
 * Freezes over frame times in ms (decode or display times, in order).
 * Times that go backwards are skipped (the interval is not counted).
 * With `span` (a finished measurement, ms on the same clock): the gap from
 * the last frame to `span.endMs` is judged too (one more interval; before 5 are known, against their mean),
 * and no frame at all is one freeze of `endMs - startMs` (at `startMs`); see
 * the module docstring. Frames after `endMs` are still counted as given.
 */
export function freezesOf(timesMs: ArrayLike<number>, span?: { startMs: number; endMs: number }): FreezeStats {
  const d = new FreezeDetector();
  const list: FreezeStats['list'] = [];
  let prev: number | undefined;
  let n = 0;
  let sum = 0;
  for (let i = 0; i < timesMs.length; i++) {
    const t = timesMs[i];
    if (!Number.isFinite(t)) continue;
    if (prev !== undefined) {
      if (t < prev) continue;
      n++;
      sum += t - prev;
      const ms = d.addInterval(t - prev);
      if (ms > 0) list.push({ at: prev, ms });
    }
    prev = t;
  }
  const out = { count: d.count, totalMs: d.totalMs, maxMs: d.maxMs, list };
  if (!span || !Number.isFinite(span.startMs) || !Number.isFinite(span.endMs) || !(span.endMs > span.startMs)) return out;
  if (prev === undefined) {
    const ms = span.endMs - span.startMs;
    return { count: 1, totalMs: ms, maxMs: ms, list: [{ at: span.startMs, ms }] };
  }
  const gap = span.endMs - prev;
  if (!(gap > 0)) return out;
  // Judged as one more interval once the rule is armed; before that against the mean of the known intervals (all of them: fewer than the window).
  const avg = n > 0 ? sum / n : 0;
  const ms = n >= FREEZE_MIN_INTERVALS ? d.addInterval(gap) : gap >= Math.max(3 * avg, avg + FREEZE_MIN_INCREASE_MS) ? gap : 0;
  if (ms > 0) {
    list.push({ at: prev, ms });
    out.count++;
    out.totalMs += ms;
    out.maxMs = Math.max(out.maxMs, ms);
  }
  return out;
}

/**
 * Mean frame rate (fps): `frames` / seconds from `firstMs` (the first frame)
 * to `endMs` (the end of the measurement). 0 without frames or span.
 */
export function meanFps(frames: number, firstMs: number | undefined, endMs: number): number {
  if (firstMs === undefined || !(frames > 0)) return 0;
  const s = (endMs - firstMs) / 1000;
  return s > 0 && Number.isFinite(s) ? frames / s : 0;
}

/**
 * Goodput (bps): `bytes` x 8 / seconds from `firstMs` (the first decoded
 * frame) to `endMs`. 0 without a span.
 */
export function goodputBps(bytes: number, firstMs: number | undefined, endMs: number): number {
  if (firstMs === undefined || !(bytes > 0)) return 0;
  const s = (endMs - firstMs) / 1000;
  return s > 0 && Number.isFinite(s) ? (bytes * 8) / s : 0;
}

/**
 * One end-to-end latency sample (ms): `shownUs` (receiver clock: decoded or
 * displayed for video, played out for audio = mouth-to-ear) minus
 * `captureUs` (sender clock) moved onto the receiver's clock. Video and audio
 * latency both come from this function.
 * @param senderClockOffsetUs sender clock - receiver clock (µs), as estimated
 *   by `ClockSync.offsetUs()` (./clock-sync.ts) on the receiver; 0 when both share a clock.
 * @returns ms; NaN when an input is not finite.
 */
export function latencySampleMs(captureUs: number, shownUs: number, senderClockOffsetUs = 0): number {
  return (shownUs - (captureUs - senderClockOffsetUs)) / 1000;
}

/** End-to-end latency summary (ms). */
export interface LatencyStats {
  count: number;
  /** undefined without samples. */
  mean: number | undefined;
  p50: number | undefined;
  p95: number | undefined;
  p99: number | undefined;
}

/** Mean and type-7 p50/p95/p99 of latency samples (ms); non-finite samples are left out. */
export function latencyOf(samplesMs: readonly number[]): LatencyStats {
  const xs = samplesMs.filter(Number.isFinite);
  if (xs.length === 0) return { count: 0, mean: undefined, p50: undefined, p95: undefined, p99: undefined };
  let s = 0;
  for (const v of xs) s += v;
  const [p50, p95, p99] = percentiles(xs, [50, 95, 99]);
  return { count: xs.length, mean: s / xs.length, p50, p95, p99 };
}
