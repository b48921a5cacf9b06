/**
 * Acknowledged bitrate: the rate at which the receiver reports getting our
 * bytes, measured on the receiver's arrival clock.
 *
 * SOURCE: libwebrtc modules/congestion_controller/goog_cc/bitrate_estimator.cc
 * (BitrateEstimator: 500 ms initial window then 150 ms windows, Bayesian
 * update with sample uncertainty 10 x |estimate - sample| / estimate and
 * process noise 5) and acknowledged_bitrate_estimator.cc (fed with every
 * acknowledged packet's size at its receive time); draft-ietf-rmcat-gcc-02
 * §5.5 (R_hat, incoming bitrate measured over a 0.5-1 s window).
 */

export interface AckedBitrateConfig {
  /** First window, used until the first sample (ms). Default 500. */
  initialWindowMs: number;
  /** Window of later samples (ms). Default 150. */
  windowMs: number;
  /** Sample uncertainty scale. Default 10. */
  uncertaintyScale: number;
}

/** Out-of-order arrivals up to this far back are counted at the latest time; beyond it the window restarts (ms). */
const MAX_BACKWARDS_MS = 1000;

/**
 * Bayesian-smoothed throughput (bps). Feed every newly acknowledged packet
 * (size, arrival time on the receiver clock) in arrival order. O(1), no allocation.
 */
export class AckedBitrateEstimator {
  private readonly initialWindowMs: number;
  private readonly windowMs: number;
  private readonly scale: number;
  private sumBytes = 0;
  private currentWindowMs = 0;
  private prevTimeMs = Number.NaN;
  private estimateKbps = -1;
  private estimateVar = 50;

  /** @throws RangeError for non-positive windows or scale. */
  constructor(config: Partial<AckedBitrateConfig> = {}) {
    this.initialWindowMs = config.initialWindowMs ?? 500;
    this.windowMs = config.windowMs ?? 150;
    this.scale = config.uncertaintyScale ?? 10;
    if (!(this.initialWindowMs > 0 && this.windowMs > 0 && this.scale > 0) || !Number.isFinite(this.initialWindowMs + this.windowMs + this.scale)) {
      throw new RangeError('AckedBitrateEstimator: windows and scale must be finite and > 0');
    }
  }

  /** Estimate (bps), undefined until the first full window. */
  bitrateBps(): number | undefined {
    return this.estimateKbps < 0 ? undefined : this.estimateKbps * 1000;
  }

  /**
   * Add one acknowledged packet.
   * @param arrivalUs arrival time on the receiver clock (µs)
   * @param bytes packet size (bytes)
   */
  update(arrivalUs: number, bytes: number): void {
    if (!Number.isFinite(arrivalUs) || !(bytes >= 0)) return;
    let nowMs = arrivalUs / 1000;
    if (nowMs < this.prevTimeMs) {
      if (this.prevTimeMs - nowMs > MAX_BACKWARDS_MS) {
        // Receiver clock jumped back: restart the window.
        this.prevTimeMs = Number.NaN;
        this.sumBytes = 0;
        this.currentWindowMs = 0;
      } else {
        nowMs = this.prevTimeMs; // late (reordered) arrival: count it now
      }
    }
    const window = this.estimateKbps < 0 ? this.initialWindowMs : this.windowMs;
    const sample = this.updateWindow(nowMs, bytes, window);
    if (sample < 0) return;
    if (this.estimateKbps < 0) {
      this.estimateKbps = sample;
      return;
    }
    const uncertainty = (this.scale * Math.abs(this.estimateKbps - sample)) / Math.max(this.estimateKbps, 1e-3);
    const sampleVar = uncertainty * uncertainty;
    const predVar = this.estimateVar + 5;
    const next = (sampleVar * this.estimateKbps + predVar * sample) / (sampleVar + predVar);
    const nextVar = (sampleVar * predVar) / (sampleVar + predVar);
    if (Number.isFinite(next) && Number.isFinite(nextVar)) {
      this.estimateKbps = next;
      this.estimateVar = nextVar;
    }
  }

  /** Let the estimate move fast for the next samples (libwebrtc ExpectFastRateChange). */
  expectFastRateChange(): void {
    this.estimateVar += 200;
  }

  /** Returns a rate sample (kbps) when a window completed, else -1. */
  private updateWindow(nowMs: number, bytes: number, windowMs: number): number {
    if (!Number.isNaN(this.prevTimeMs)) {
      const gap = nowMs - this.prevTimeMs;
      this.currentWindowMs += gap;
      if (gap > windowMs) {
        // Nothing received for more than a window: start a fresh sum.
        this.sumBytes = 0;
        this.currentWindowMs %= windowMs;
      }
    }
    this.prevTimeMs = nowMs;
    let sample = -1;
    if (this.currentWindowMs >= windowMs) {
      sample = (8 * this.sumBytes) / windowMs; // bits per ms = kbps
      this.currentWindowMs -= windowMs;
      this.sumBytes = 0;
    }
    this.sumBytes += bytes;
    return sample;
  }
}
