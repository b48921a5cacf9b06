/**
 * Rate-limited key frame requests (PLI).
 *
 * SOURCE: RFC 4585 §6.3.1 (Picture Loss Indication) and libwebrtc
 * video/rtp_video_stream_receiver2.cc / modules/video_coding
 * (the receiver re-requests a key frame at most about once per RTT-ish
 * interval; a PLI storm only makes the sender spend its rate on key frames).
 * Interval used here: max(rttFactor x RTT, minIntervalMs) = max(1.5 RTT, 300 ms).
 *
 * Keyframe economy: a granted request stays OUTSTANDING
 * until a key frame arrives ({@link KeyframeRequester.onKeyframe}); while it
 * is, no new request goes out before the measured response time (request ->
 * key frame received = RTT + encode + the key frame's transmit time, EWMA
 * gain 1/4, at most {@link MAX_RESPONSE_MS}) has passed, so a slow path
 * carrying a large key frame is not sent a second request it would have to
 * answer with a second large key frame.
 */
import type { KeyframeRequestReason } from './types.js';

export type { KeyframeRequestReason } from './types.js';

/** Options of {@link KeyframeRequester}. */
export interface KeyframeRequesterOptions {
  /** Stream the requests are for (copied into {@link KeyframeRequester.streamId}); default 0. */
  streamId?: number;
  /** Minimum spacing of two requests, ms (default 300). */
  minIntervalMs?: number;
  /** Spacing as a multiple of the RTT when that is larger (default 1.5). */
  rttFactor?: number;
}

/** Counters of {@link KeyframeRequester}. */
export interface KeyframeRequesterStats {
  requests: number;
  suppressed: number;
  /** Granted requests per reason (at most 16 distinct reasons; the rest under 'other'). */
  byReason: Record<string, number>;
  lastRequestId: number;
  lastRequestUs: number | undefined;
  /** A granted request not answered by a key frame yet. */
  outstanding: boolean;
  /** Smoothed request -> key frame time (ms), undefined before the first answer. */
  responseMs: number | undefined;
}

const MAX_REASONS = 16;
/** Least time without a released frame that counts as a stall (ms), see {@link KeyframeRequester.stalled}. */
export const STALL_MIN_MS = 100;
/** Release gaps longer than this (µs) enter the interval EWMA capped (a freeze must not teach that freezes are normal). */
const STALL_MAX_INTERVAL_US = 200_000;
/** Longest key frame response time the requester waits for (ms). */
export const MAX_RESPONSE_MS = 3000;

/**
 * One per stream. The engine calls {@link request} whenever something needs a
 * key frame (frame buffer `keyframeNeeded`, decoder error, ...); when it
 * returns true, send a `KeyframeRequest { streamId, requestId }`.
 */
export class KeyframeRequester {
  readonly streamId: number;
  private readonly minIntervalMs: number;
  private readonly rttFactor: number;
  private lastUs: number | undefined = undefined;
  private id = 0;
  private requests = 0;
  private suppressed = 0;
  private readonly byReason = new Map<string, number>();
  private outstanding = false;
  /** EWMA of request -> key frame received (ms); undefined before the first answered request. */
  private responseMs: number | undefined = undefined;
  /** Last frame released for decoding (µs) and the smoothed interval between releases (µs). */
  private lastReleaseUs: number | undefined = undefined;
  private releaseIntervalUs: number | undefined = undefined;

  /** @throws RangeError on a negative/non-finite option or a non-uint32 streamId. */
  constructor(opts: KeyframeRequesterOptions = {}) {
    const sid = opts.streamId ?? 0;
    if (sid >>> 0 !== sid) throw new RangeError(`KeyframeRequester: bad streamId ${sid}`);
    this.streamId = sid;
    this.minIntervalMs = nonNeg(opts.minIntervalMs ?? 300, 'minIntervalMs');
    this.rttFactor = nonNeg(opts.rttFactor ?? 1.5, 'rttFactor');
  }

  /** Current minimum spacing (ms) for a given RTT (ms; non-finite counts as 0). */
  intervalMs(rttMs: number): number {
    const rtt = Number.isFinite(rttMs) && rttMs > 0 ? rttMs : 0;
    return Math.max(this.rttFactor * rtt, this.minIntervalMs);
  }

  /**
   * Ask for a key frame.
   * @param nowUs receiver clock (µs).
   * @param rttMs current RTT estimate (ms).
   * @param reason why (for stats).
   * @returns true when a request should be sent now (requestId was
   *   incremented, see {@link requestId}); false when suppressed by the rate limit.
   */
  request(nowUs: number, rttMs: number, reason: KeyframeRequestReason = 'unspecified'): boolean {
    if (!Number.isFinite(nowUs)) {
      this.suppressed++;
      return false;
    }
    if (this.lastUs !== undefined && nowUs - this.lastUs < this.waitMs(rttMs) * 1000) {
      this.suppressed++;
      return false;
    }
    this.lastUs = nowUs;
    this.outstanding = true;
    this.id = (this.id + 1) >>> 0;
    this.requests++;
    const key = this.byReason.has(reason) || this.byReason.size < MAX_REASONS ? reason : 'other';
    this.byReason.set(key, (this.byReason.get(key) ?? 0) + 1);
    return true;
  }

  /** Least spacing (ms) of the next request after the last granted one: the interval, and while that one is outstanding its measured response time. */
  private waitMs(rttMs: number): number {
    return this.outstanding && this.responseMs !== undefined ? Math.max(this.intervalMs(rttMs), this.responseMs) : this.intervalMs(rttMs);
  }

  /**
   * A granted request is still unanswered and {@link request} would grant
   * another now: the moment to repeat it while the picture stays stalled
   * (libwebrtc's receive stream repeats a pending key frame request every
   * 200 ms, video/video_receive_stream2.cc max_wait_for_keyframe).
   * @param rttMs as for {@link request}.
   */
  repeatDue(nowUs: number, rttMs: number): boolean {
    return this.outstanding && this.lastUs !== undefined && nowUs - this.lastUs >= this.waitMs(rttMs) * 1000;
  }

  /**
   * A key frame of the stream arrived (complete): answers the outstanding
   * request, whose age updates the response-time EWMA. Non-finite or earlier
   * times are ignored.
   */
  onKeyframe(nowUs: number): void {
    if (!this.outstanding || this.lastUs === undefined || !Number.isFinite(nowUs) || nowUs < this.lastUs) return;
    this.outstanding = false;
    const ms = Math.min(MAX_RESPONSE_MS, (nowUs - this.lastUs) / 1000);
    this.responseMs = this.responseMs === undefined ? ms : this.responseMs + (ms - this.responseMs) / 4;
  }

  /**
   * A frame of the stream was released to the decoder at `nowUs`: feeds
   * {@link stalled} (release interval EWMA, gain 1/16). Non-finite or
   * earlier times are ignored.
   */
  onFrameReleased(nowUs: number): void {
    if (!Number.isFinite(nowUs) || (this.lastReleaseUs !== undefined && nowUs < this.lastReleaseUs)) return;
    if (this.lastReleaseUs !== undefined) {
      const d = Math.min(STALL_MAX_INTERVAL_US, nowUs - this.lastReleaseUs);
      this.releaseIntervalUs = this.releaseIntervalUs === undefined ? d : this.releaseIntervalUs + (d - this.releaseIntervalUs) / 16;
    }
    this.lastReleaseUs = nowUs;
  }

  /**
   * The decode chain is stalled: no frame released for
   * max({@link STALL_MIN_MS}, 3 x the smoothed release interval) (the shape
   * of the freeze rule of src/feedback/qoe-metrics.ts). False before the
   * first released frame.
   */
  stalled(nowUs: number): boolean {
    if (this.lastReleaseUs === undefined || !Number.isFinite(nowUs)) return false;
    return nowUs - this.lastReleaseUs >= Math.max(STALL_MIN_MS * 1000, 3 * (this.releaseIntervalUs ?? 0));
  }

  /** Id of the last granted request (uint32, 0 before the first). */
  get requestId(): number {
    return this.id;
  }

  /** Counters (a copy). */
  stats(): KeyframeRequesterStats {
    return {
      requests: this.requests,
      suppressed: this.suppressed,
      byReason: Object.fromEntries(this.byReason),
      lastRequestId: this.id,
      lastRequestUs: this.lastUs,
      outstanding: this.outstanding,
      responseMs: this.responseMs,
    };
  }
}

function nonNeg(v: number, name: string): number {
  if (!Number.isFinite(v) || v < 0) throw new RangeError(`KeyframeRequester: ${name} must be a finite number >= 0, got ${v}`);
  return v;
}
