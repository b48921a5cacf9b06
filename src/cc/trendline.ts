/**
 * Trendline estimator: slope of the smoothed accumulated one-way delay
 * variation against arrival time.
 *
 * SOURCE: libwebrtc modules/congestion_controller/goog_cc/trendline_estimator.cc
 * (TrendlineEstimator::UpdateTrendline, LinearFitSlope; kDefaultTrendlineWindowSize 20,
 * kDefaultTrendlineSmoothingCoeff 0.9, kDefaultTrendlineThresholdGain 4,
 * kMinNumDeltas 60, kDeltaCounterMax 1000). It replaced the Kalman filter of
 * draft-ietf-rmcat-gcc-02 §5.3 as the estimate m(i) of the queuing-delay
 * gradient that the over-use detector (§5.4) compares with its threshold.
 */

export interface TrendlineConfig {
  /** Points in the regression window. Default 20. */
  windowSize: number;
  /** Exponential smoothing of the accumulated delay, 0..1. Default 0.9. */
  smoothingCoef: number;
  /** Gain applied to the slope before comparison with the threshold. Default 4. */
  thresholdGain: number;
}

const MIN_NUM_DELTAS = 60;
const DELTA_COUNTER_MAX = 1000;

/**
 * Fixed-size ring of (arrival ms, smoothed delay ms) points; allocation-free
 * per update, O(window) per group.
 */
export class TrendlineEstimator {
  /** Latest slope (ms of delay per ms of arrival time, dimensionless); held while the window fills. */
  trend = 0;
  /** Inter-group deltas seen, saturating at 1000. */
  numDeltas = 0;
  /** Accumulated delay variation (ms). */
  accumulatedDelayMs = 0;
  /** Smoothed accumulated delay (ms). */
  smoothedDelayMs = 0;

  private readonly windowSize: number;
  private readonly smoothing: number;
  private readonly gain: number;
  private readonly xs: Float64Array;
  private readonly ys: Float64Array;
  private count = 0;
  private head = 0;
  private firstArrivalMs = Number.NaN;

  /** @throws RangeError for a window < 2, smoothing outside [0, 1) or a non-positive gain. */
  constructor(config: Partial<TrendlineConfig> = {}) {
    this.windowSize = config.windowSize ?? 20;
    this.smoothing = config.smoothingCoef ?? 0.9;
    this.gain = config.thresholdGain ?? 4;
    if (!Number.isInteger(this.windowSize) || this.windowSize < 2) throw new RangeError(`TrendlineEstimator: windowSize must be an integer >= 2`);
    if (!(this.smoothing >= 0 && this.smoothing < 1)) throw new RangeError(`TrendlineEstimator: smoothingCoef must be in [0, 1)`);
    if (!(this.gain > 0 && Number.isFinite(this.gain))) throw new RangeError(`TrendlineEstimator: thresholdGain must be > 0`);
    this.xs = new Float64Array(this.windowSize);
    this.ys = new Float64Array(this.windowSize);
  }

  /**
   * The detector input: min(numDeltas, 60) x trend x gain (ms), as libwebrtc
   * TrendlineEstimator::Detect computes `modified_trend`.
   */
  get modifiedTrend(): number {
    return Math.min(this.numDeltas, MIN_NUM_DELTAS) * this.trend * this.gain;
  }

  /**
   * Add one inter-group sample.
   * @param recvDeltaMs arrival delta between groups (ms)
   * @param sendDeltaMs send delta between groups (ms)
   * @param arrivalMs arrival time of the completed group, receiver clock (ms)
   */
  update(recvDeltaMs: number, sendDeltaMs: number, arrivalMs: number): void {
    const delta = recvDeltaMs - sendDeltaMs;
    if (!Number.isFinite(delta) || !Number.isFinite(arrivalMs)) return;
    this.numDeltas = Math.min(this.numDeltas + 1, DELTA_COUNTER_MAX);
    if (Number.isNaN(this.firstArrivalMs)) this.firstArrivalMs = arrivalMs;
    this.accumulatedDelayMs += delta;
    this.smoothedDelayMs = this.smoothing * this.smoothedDelayMs + (1 - this.smoothing) * this.accumulatedDelayMs;

    this.xs[this.head] = arrivalMs - this.firstArrivalMs;
    this.ys[this.head] = this.smoothedDelayMs;
    this.head = (this.head + 1) % this.windowSize;
    if (this.count < this.windowSize) this.count++;

    if (this.count === this.windowSize) {
      const slope = this.linearFitSlope();
      if (slope !== undefined) this.trend = slope;
    }
  }

  /** Least-squares slope over the window; undefined when all x are equal or the result is not finite. */
  private linearFitSlope(): number | undefined {
    const n = this.count;
    let sumX = 0;
    let sumY = 0;
    for (let i = 0; i < n; i++) {
      sumX += this.xs[i];
      sumY += this.ys[i];
    }
    const avgX = sumX / n;
    const avgY = sumY / n;
    let num = 0;
    let den = 0;
    for (let i = 0; i < n; i++) {
      const dx = this.xs[i] - avgX;
      num += dx * (this.ys[i] - avgY);
      den += dx * dx;
    }
    if (den === 0) return undefined;
    const slope = num / den;
    return Number.isFinite(slope) ? slope : undefined;
  }
}
