/**
 * Receiver-side video QoE statistics of one stream: decoded / dropped frames,
 * decoded fps, freezes, end-to-end latency.
 *
 * SOURCES:
 * - Freeze, frame rate, latency: the project's one definition of each, in
 *   ./qoe-metrics.ts (libwebrtc video/video_quality_observer2.cc freeze rule,
 *   W3C webrtc-stats `freezeCount` / `totalFreezesDuration`; type-7
 *   latency percentiles).
 * - Converge §6 metrics: FPS, freezes (stalls), E2E latency.
 *
 * CLOCKS: capture -> decoded latency compares the sender's capture time
 * with the receiver's decode time, so it is only meaningful with an estimate
 * of `senderClockOffsetUs` = receiver clock - sender clock (µs), which the
 * engine supplies (e.g. from RTT/2-corrected send timestamps). With both
 * clocks identical (tests, simulator) pass 0.
 */
import { percentiles } from './percentile.js';
import { FreezeDetector, endToEndLatencyMs, goodputBps, meanFps } from './qoe-metrics.js';

/** Options of {@link StreamQoeStats}. */
export interface StreamQoeStatsOptions {
  /** Latency samples kept for percentiles (most recent; default 4096). */
  latencyWindow?: number;
  /** Per-second entries kept (most recent; default 600). */
  maxSeriesSeconds?: number;
  /** Intervals averaged for the freeze threshold (default 30). */
  freezeWindowFrames?: number;
  /** Intervals needed before freezes are detected (default 5). */
  minFramesForFreeze?: number;
}

/** One second of the per-second series. */
export interface QoeSecond {
  /** Seconds since the first decoded frame (bucket start). */
  tSec: number;
  /** Frames decoded in that second (= fps). */
  fps: number;
  framesDropped: number;
  freezes: number;
  /** Mean capture -> decoded latency (ms), undefined without samples. */
  meanLatencyMs: number | undefined;
}

/** Latency summary (ms). */
export interface LatencySummary {
  /** All samples ever. */
  count: number;
  meanMs: number | undefined;
  minMs: number | undefined;
  maxMs: number | undefined;
  /** Over the most recent `latencyWindow` samples. */
  p50Ms: number | undefined;
  p95Ms: number | undefined;
  p99Ms: number | undefined;
}

/** What {@link StreamQoeStats.snapshot} returns. */
export interface StreamQoeSnapshot {
  framesDecoded: number;
  framesDropped: number;
  /** Encoded bytes of the decoded frames. */
  bytesDecoded: number;
  /** `bytesDecoded` x 8 / seconds from the first decode to `nowUs` (bps; `goodputBps` of ./qoe-metrics.ts), undefined before 2 frames. */
  goodputBps: number | undefined;
  /** Decoded frames / seconds from the first decode to `nowUs` (fps; `meanFps` of ./qoe-metrics.ts), undefined before 2 frames. */
  decodedFps: number | undefined;
  /** Frames decoded in the last complete second. */
  fpsLastSecond: number | undefined;
  freezeCount: number;
  totalFreezesDurationMs: number;
  /** Frames whose decode time went backwards (ignored for intervals). */
  clockErrors: number;
  latency: LatencySummary;
  /** Completed seconds, oldest first (bounded). */
  series: QoeSecond[];
}

/**
 * Per-stream QoE statistics. O(1) per decoded frame (plus a bounded roll of
 * empty seconds); `snapshot` is O(latencyWindow log latencyWindow).
 */
export class StreamQoeStats {
  private readonly latWin: number;
  private readonly maxSeries: number;
  private readonly freeze: FreezeDetector;
  // Latency ring (ms) and all-time aggregates.
  private readonly lat: Float64Array;
  private latHead = 0;
  private latCount = 0;
  private latTotal = 0;
  private latSum = 0;
  private latMin = Infinity;
  private latMax = -Infinity;
  private decoded = 0;
  private bytes = 0;
  private dropped = 0;
  private clockErrors = 0;
  private firstDecodedUs: number | undefined = undefined;
  private lastDecodedUs: number | undefined = undefined;
  // Per-second series.
  private bucketStartUs: number | undefined = undefined;
  private bucketIndex = 0;
  private bFrames = 0;
  private bDropped = 0;
  private bFreezes = 0;
  private bLatSum = 0;
  private bLatCount = 0;
  private readonly series: QoeSecond[] = [];

  /** @throws RangeError on a non-positive-integer option. */
  constructor(opts: StreamQoeStatsOptions = {}) {
    this.latWin = posInt(opts.latencyWindow ?? 4096, 'latencyWindow');
    this.maxSeries = posInt(opts.maxSeriesSeconds ?? 600, 'maxSeriesSeconds');
    this.freeze = new FreezeDetector(posInt(opts.freezeWindowFrames ?? 30, 'freezeWindowFrames'), posInt(opts.minFramesForFreeze ?? 5, 'minFramesForFreeze'));
    this.lat = new Float64Array(this.latWin);
  }

  /**
   * A frame was decoded (or rendered) at `decodedUs`.
   * @param frameId the frame's id (kept for symmetry with the frame buffer; not used for ordering).
   * @param captureUs capture time on the SENDER clock (µs).
   * @param decodedUs decode time on the RECEIVER clock (µs).
   * @param senderClockOffsetUs receiver clock - sender clock (µs), default 0.
   * @param bytes the frame's encoded size (bytes, for goodput), default 0.
   * Non-finite times are ignored for the metrics they feed (never throws).
   */
  onFrameDecoded(frameId: number, captureUs: number, decodedUs: number, senderClockOffsetUs = 0, bytes = 0): void {
    void frameId;
    if (!Number.isFinite(decodedUs)) {
      this.clockErrors++;
      return;
    }
    this.roll(decodedUs);
    this.decoded++;
    if (bytes > 0 && Number.isFinite(bytes)) this.bytes += bytes;
    this.bFrames++;
    if (this.firstDecodedUs === undefined) this.firstDecodedUs = decodedUs;
    const last = this.lastDecodedUs;
    if (last !== undefined && decodedUs < last) {
      this.clockErrors++;
    } else {
      if (last !== undefined && this.freeze.addInterval((decodedUs - last) / 1000) > 0) this.bFreezes++;
      this.lastDecodedUs = decodedUs;
    }
    const latMs = endToEndLatencyMs(captureUs, decodedUs, senderClockOffsetUs);
    if (Number.isFinite(latMs)) {
      this.lat[this.latHead] = latMs;
      this.latHead = this.latHead + 1 === this.latWin ? 0 : this.latHead + 1;
      if (this.latCount < this.latWin) this.latCount++;
      this.latTotal++;
      this.latSum += latMs;
      if (latMs < this.latMin) this.latMin = latMs;
      if (latMs > this.latMax) this.latMax = latMs;
      this.bLatSum += latMs;
      this.bLatCount++;
    }
  }

  /**
   * Frames dropped before decoding (e.g. `FrameBufferOutput.dropped`).
   * @param count frames (non-negative integer; anything else is ignored).
   * @param nowUs receiver clock (µs), for the per-second series (optional).
   */
  onFramesDropped(count: number, nowUs?: number): void {
    if (!Number.isInteger(count) || count <= 0) return;
    if (nowUs !== undefined && Number.isFinite(nowUs)) this.roll(nowUs);
    this.dropped += count;
    this.bDropped += count;
  }

  /**
   * Current statistics. Completes the per-second buckets up to `nowUs`
   * (receiver clock, µs), so the series is current.
   */
  snapshot(nowUs: number): StreamQoeSnapshot {
    if (Number.isFinite(nowUs)) this.roll(nowUs);
    const recent = this.lat.subarray(0, this.latCount);
    const [p50, p95, p99] = this.latCount > 0 ? percentiles(recent, [50, 95, 99]) : [NaN, NaN, NaN];
    const first = this.firstDecodedUs;
    const last = this.lastDecodedUs;
    const endUs = last !== undefined && Number.isFinite(nowUs) ? Math.max(nowUs, last) : last;
    const lastSec = this.series.length > 0 ? this.series[this.series.length - 1] : undefined;
    return {
      framesDecoded: this.decoded,
      framesDropped: this.dropped,
      bytesDecoded: this.bytes,
      goodputBps: this.decoded >= 2 && endUs !== undefined && first !== undefined ? goodputBps(this.bytes, first / 1000, endUs / 1000) : undefined,
      decodedFps: this.decoded >= 2 && endUs !== undefined && first !== undefined ? meanFps(this.decoded, first / 1000, endUs / 1000) : undefined,
      fpsLastSecond: lastSec?.fps,
      freezeCount: this.freeze.count,
      totalFreezesDurationMs: this.freeze.totalMs,
      clockErrors: this.clockErrors,
      latency: {
        count: this.latTotal,
        meanMs: this.latTotal > 0 ? this.latSum / this.latTotal : undefined,
        minMs: this.latTotal > 0 ? this.latMin : undefined,
        maxMs: this.latTotal > 0 ? this.latMax : undefined,
        p50Ms: undef(p50),
        p95Ms: undef(p95),
        p99Ms: undef(p99),
      },
      series: this.series.slice(),
    };
  }

  /** Close every full second before `nowUs` (bounded by maxSeriesSeconds). */
  private roll(nowUs: number): void {
    if (this.bucketStartUs === undefined) {
      this.bucketStartUs = nowUs;
      return;
    }
    let elapsed = Math.floor((nowUs - this.bucketStartUs) / 1e6);
    if (elapsed <= 0) return;
    // Close the current bucket, then add the empty seconds (at most maxSeries of them).
    this.pushSecond();
    elapsed--;
    if (elapsed > this.maxSeries) {
      const skip = elapsed - this.maxSeries;
      this.bucketIndex += skip;
      this.bucketStartUs += skip * 1e6;
      elapsed = this.maxSeries;
    }
    for (let i = 0; i < elapsed; i++) this.pushSecond();
  }

  private pushSecond(): void {
    this.series.push({
      tSec: this.bucketIndex,
      fps: this.bFrames,
      framesDropped: this.bDropped,
      freezes: this.bFreezes,
      meanLatencyMs: this.bLatCount > 0 ? this.bLatSum / this.bLatCount : undefined,
    });
    if (this.series.length > this.maxSeries) this.series.shift();
    this.bucketIndex++;
    this.bucketStartUs = (this.bucketStartUs as number) + 1e6;
    this.bFrames = 0;
    this.bDropped = 0;
    this.bFreezes = 0;
    this.bLatSum = 0;
    this.bLatCount = 0;
  }
}

function undef(v: number): number | undefined {
  return Number.isFinite(v) ? v : undefined;
}

function posInt(v: number, name: string): number {
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`StreamQoeStats: ${name} must be a positive integer, got ${v}`);
  return v;
}
