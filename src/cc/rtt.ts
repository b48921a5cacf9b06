/**
 * Per-path RTT from receiver reports: SRTT (EWMA 1/8) and a windowed minimum.
 *
 * SOURCE: RFC 6298 §2 (SRTT <- 7/8 SRTT + 1/8 R', RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|,
 * first sample SRTT = R, RTTVAR = R/2); RTT from a report with hold time as in
 * RFC 3550 §6.4.1 (RTT = A - LSR - DLSR) and libwebrtc
 * transport_feedback_adapter.cc / goog_cc_network_control.cc (feedback RTT);
 * min RTT over a 10 s window as in BBR (draft-cardwell-iccrg-bbr-congestion-control §4.3.3 MinRTT filter).
 */

/** Hold time adjusted RTT sample (µs) or undefined when the inputs are inconsistent. */
export function rttFromReport(nowUs: number, sendTimeUs: number, arrivalUs: number, reportTimeUs: number): number | undefined {
  const holdUs = reportTimeUs - arrivalUs;
  if (!Number.isFinite(holdUs) || holdUs < 0) return undefined;
  const rtt = nowUs - sendTimeUs - holdUs;
  if (!Number.isFinite(rtt) || rtt <= 0 || rtt > MAX_RTT_US) return undefined;
  return rtt;
}

/** RTT samples above this are rejected as garbage (µs). */
export const MAX_RTT_US = 60_000_000;

export interface RttConfig {
  /** Window of the minimum (ms). Default 10_000. */
  minRttWindowMs: number;
  /** Value reported before the first sample (ms). Default 200. */
  initialRttMs: number;
  /** Bound on the min-filter deque (samples). Default 1024. */
  maxSamples: number;
}

/**
 * SRTT / RTTVAR / min RTT. O(1) amortized per sample, bounded memory
 * (monotonic deque of at most `maxSamples` entries).
 */
export class RttEstimator {
  private srttUs = 0;
  private rttvarUs = 0;
  private latestUs = 0;
  private has = false;
  private readonly windowUs: number;
  private readonly initialUs: number;
  private readonly cap: number;
  // Monotonic deque (increasing values) of (time, rtt) as a ring.
  private readonly dqTime: Float64Array;
  private readonly dqVal: Float64Array;
  private dqHead = 0;
  private dqLen = 0;

  /** @throws RangeError for a non-positive window, initial RTT or sample bound. */
  constructor(config: Partial<RttConfig> = {}) {
    const windowMs = config.minRttWindowMs ?? 10_000;
    const initialMs = config.initialRttMs ?? 200;
    this.cap = config.maxSamples ?? 1024;
    if (!(windowMs > 0 && Number.isFinite(windowMs))) throw new RangeError('RttEstimator: minRttWindowMs must be > 0');
    if (!(initialMs > 0 && Number.isFinite(initialMs))) throw new RangeError('RttEstimator: initialRttMs must be > 0');
    if (!(Number.isInteger(this.cap) && this.cap >= 1)) throw new RangeError('RttEstimator: maxSamples must be an integer >= 1');
    this.windowUs = windowMs * 1000;
    this.initialUs = initialMs * 1000;
    this.dqTime = new Float64Array(this.cap);
    this.dqVal = new Float64Array(this.cap);
  }

  /** True after the first accepted sample. */
  hasSample(): boolean {
    return this.has;
  }

  /**
   * Add one RTT sample.
   * @param rttUs RTT (µs), ignored unless finite, > 0 and <= 60 s
   * @param nowUs sender clock (µs)
   * @returns true when accepted
   */
  onSample(rttUs: number, nowUs: number): boolean {
    if (!Number.isFinite(rttUs) || rttUs <= 0 || rttUs > MAX_RTT_US || !Number.isFinite(nowUs)) return false;
    this.latestUs = rttUs;
    if (!this.has) {
      this.srttUs = rttUs;
      this.rttvarUs = rttUs / 2;
      this.has = true;
    } else {
      this.rttvarUs = 0.75 * this.rttvarUs + 0.25 * Math.abs(this.srttUs - rttUs);
      this.srttUs = 0.875 * this.srttUs + 0.125 * rttUs;
    }
    // Monotonic deque: drop tail entries not smaller than the new sample.
    while (this.dqLen > 0 && this.dqVal[(this.dqHead + this.dqLen - 1) % this.cap] >= rttUs) this.dqLen--;
    if (this.dqLen === this.cap) {
      this.dqHead = (this.dqHead + 1) % this.cap;
      this.dqLen--;
    }
    const tail = (this.dqHead + this.dqLen) % this.cap;
    this.dqTime[tail] = nowUs;
    this.dqVal[tail] = rttUs;
    this.dqLen++;
    this.expire(nowUs);
    return true;
  }

  /** Smoothed RTT (ms); the initial RTT before any sample. */
  srttMs(): number {
    return (this.has ? this.srttUs : this.initialUs) / 1000;
  }

  /** RTT variation (ms); half the initial RTT before any sample. */
  rttvarMs(): number {
    return (this.has ? this.rttvarUs : this.initialUs / 2) / 1000;
  }

  /** Latest sample (ms), 0 before any. */
  latestRttMs(): number {
    return this.latestUs / 1000;
  }

  /**
   * Minimum RTT (ms) over the window ending at the last sample; the latest
   * sample if all expired; the initial RTT before any sample.
   * @param nowUs when given, expire samples older than the window first
   */
  minRttMs(nowUs?: number): number {
    if (!this.has) return this.initialUs / 1000;
    if (nowUs !== undefined && Number.isFinite(nowUs)) this.expire(nowUs);
    if (this.dqLen === 0) return this.latestUs / 1000;
    return this.dqVal[this.dqHead] / 1000;
  }

  private expire(nowUs: number): void {
    // Keep the newest entry even if old, so a min always exists after samples.
    while (this.dqLen > 1 && nowUs - this.dqTime[this.dqHead] > this.windowUs) {
      this.dqHead = (this.dqHead + 1) % this.cap;
      this.dqLen--;
    }
  }
}
