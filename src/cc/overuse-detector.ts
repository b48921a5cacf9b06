/**
 * Over-use detector with an adaptive threshold.
 *
 * SOURCE: libwebrtc modules/congestion_controller/goog_cc/trendline_estimator.cc
 * (TrendlineEstimator::Detect and UpdateThreshold: k_up 0.0087, k_down 0.039,
 * initial threshold 12.5 ms, clamp [6, 600] ms, kMaxAdaptOffsetMs 15,
 * kOverUsingTimeThreshold 10 ms, at most 100 ms of adaptation per step);
 * draft-ietf-rmcat-gcc-02 §5.4 (eq. for del_var_th(i) =
 * del_var_th(i-1) + (t(i)-t(i-1)) * K(i) * (|m(i)| - del_var_th(i-1))).
 */
import type { BandwidthUsage } from './types.js';

export interface OveruseDetectorConfig {
  /** Threshold gain when |m| exceeds the threshold. Default 0.0087. */
  kUp: number;
  /** Threshold gain when |m| is below the threshold. Default 0.039. */
  kDown: number;
  /** Initial threshold (ms). Default 12.5. */
  initialThresholdMs: number;
  /** Threshold clamp (ms). Defaults 6 and 600. */
  minThresholdMs: number;
  maxThresholdMs: number;
  /** Over-use must last this long (ms of send time) before it is declared. Default 10. */
  overusingTimeThresholdMs: number;
}

const MAX_ADAPT_OFFSET_MS = 15;
const MAX_TIME_DELTA_MS = 100;

/**
 * State machine normal / overusing / underusing driven by the modified trend.
 * Over-use is declared when the modified trend stays above the threshold for
 * more than 10 ms and at least 2 consecutive samples, with a non-decreasing trend.
 */
export class OveruseDetector {
  /** Current adaptive threshold (ms). */
  threshold: number;
  /** Current hypothesis. */
  state: BandwidthUsage = 'normal';
  /** Times the hypothesis turned to 'overusing' from another state (diagnostic: false over-use shows up here). */
  overuseOnsets = 0;

  private readonly cfg: OveruseDetectorConfig;
  private timeOverusingMs = -1;
  private overuseCounter = 0;
  private prevTrend = 0;
  private lastUpdateMs = Number.NaN;

  /** @throws RangeError for non-positive gains or an inconsistent threshold clamp. */
  constructor(config: Partial<OveruseDetectorConfig> = {}) {
    this.cfg = {
      kUp: config.kUp ?? 0.0087,
      kDown: config.kDown ?? 0.039,
      initialThresholdMs: config.initialThresholdMs ?? 12.5,
      minThresholdMs: config.minThresholdMs ?? 6,
      maxThresholdMs: config.maxThresholdMs ?? 600,
      overusingTimeThresholdMs: config.overusingTimeThresholdMs ?? 10,
    };
    const c = this.cfg;
    if (!(c.kUp > 0 && c.kDown > 0 && Number.isFinite(c.kUp) && Number.isFinite(c.kDown))) throw new RangeError('OveruseDetector: kUp and kDown must be > 0');
    if (!(c.minThresholdMs > 0 && c.minThresholdMs <= c.maxThresholdMs && Number.isFinite(c.maxThresholdMs))) throw new RangeError('OveruseDetector: need 0 < minThresholdMs <= maxThresholdMs');
    if (!(c.initialThresholdMs >= c.minThresholdMs && c.initialThresholdMs <= c.maxThresholdMs)) throw new RangeError('OveruseDetector: initialThresholdMs outside the clamp');
    if (!(c.overusingTimeThresholdMs >= 0)) throw new RangeError('OveruseDetector: overusingTimeThresholdMs must be >= 0');
    this.threshold = c.initialThresholdMs;
  }

  /**
   * One detection step per completed group.
   * @param modifiedTrend min(numDeltas, 60) x slope x gain (ms), see TrendlineEstimator.modifiedTrend
   * @param trend raw slope (used for the "still rising" check)
   * @param numDeltas deltas seen so far (< 2 gives 'normal')
   * @param sendDeltaMs send delta of the group pair (ms): time credited to an over-use
   * @param nowMs arrival time of the group (receiver clock, ms): drives threshold adaptation
   * @returns the new hypothesis
   */
  detect(modifiedTrend: number, trend: number, numDeltas: number, sendDeltaMs: number, nowMs: number): BandwidthUsage {
    if (numDeltas < 2 || !Number.isFinite(modifiedTrend)) {
      this.state = 'normal';
      return this.state;
    }
    if (modifiedTrend > this.threshold) {
      if (this.timeOverusingMs === -1) {
        // The over-use started somewhere inside this delta: count half of it.
        this.timeOverusingMs = sendDeltaMs / 2;
      } else {
        this.timeOverusingMs += sendDeltaMs;
      }
      this.overuseCounter++;
      if (this.timeOverusingMs > this.cfg.overusingTimeThresholdMs && this.overuseCounter > 1 && trend >= this.prevTrend) {
        this.timeOverusingMs = 0;
        this.overuseCounter = 0;
        if (this.state !== 'overusing') this.overuseOnsets++;
        this.state = 'overusing';
      }
    } else if (modifiedTrend < -this.threshold) {
      this.timeOverusingMs = -1;
      this.overuseCounter = 0;
      this.state = 'underusing';
    } else {
      this.timeOverusingMs = -1;
      this.overuseCounter = 0;
      this.state = 'normal';
    }
    this.prevTrend = trend;
    this.updateThreshold(modifiedTrend, nowMs);
    return this.state;
  }

  private updateThreshold(modifiedTrend: number, nowMs: number): void {
    if (Number.isNaN(this.lastUpdateMs)) this.lastUpdateMs = nowMs;
    const absTrend = Math.abs(modifiedTrend);
    if (absTrend > this.threshold + MAX_ADAPT_OFFSET_MS) {
      // A spike (e.g. a sudden capacity drop) must not drag the threshold up.
      this.lastUpdateMs = nowMs;
      return;
    }
    const k = absTrend < this.threshold ? this.cfg.kDown : this.cfg.kUp;
    let dt = nowMs - this.lastUpdateMs;
    if (!(dt > 0)) dt = 0; // receiver clock went back (or NaN): no adaptation
    if (dt > MAX_TIME_DELTA_MS) dt = MAX_TIME_DELTA_MS;
    this.threshold += k * (absTrend - this.threshold) * dt;
    if (this.threshold < this.cfg.minThresholdMs) this.threshold = this.cfg.minThresholdMs;
    else if (this.threshold > this.cfg.maxThresholdMs) this.threshold = this.cfg.maxThresholdMs;
    this.lastUpdateMs = nowMs;
  }
}
