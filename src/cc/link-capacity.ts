/**
 * Link capacity estimate with a normalized variance, used by AIMD to switch
 * between multiplicative and additive increase.
 *
 * SOURCE: libwebrtc modules/congestion_controller/goog_cc/link_capacity_estimator.cc
 * (LinkCapacityEstimator: EWMA alpha 0.05 on over-use, normalized deviation
 * clamped to [0.4, 2.5] kbps, bounds estimate +/- 3 std dev);
 * draft-ietf-rmcat-gcc-02 §5.5 (average and variance of the incoming rate at
 * over-use, "near convergence" region of +/- 3 standard deviations).
 */
export class LinkCapacityEstimator {
  private estimateKbps: number | undefined;
  private deviationKbps = 0.4;

  /** True once an over-use has produced an estimate (and until reset). */
  hasEstimate(): boolean {
    return this.estimateKbps !== undefined;
  }

  /** Estimate (bps), undefined when none. */
  estimateBps(): number | undefined {
    return this.estimateKbps === undefined ? undefined : this.estimateKbps * 1000;
  }

  /** estimate + 3 std dev (bps); +Infinity without an estimate. */
  upperBoundBps(): number {
    if (this.estimateKbps === undefined) return Number.POSITIVE_INFINITY;
    return (this.estimateKbps + 3 * this.stdDevKbps()) * 1000;
  }

  /** max(0, estimate - 3 std dev) (bps); 0 without an estimate. */
  lowerBoundBps(): number {
    if (this.estimateKbps === undefined) return 0;
    return Math.max(0, this.estimateKbps - 3 * this.stdDevKbps()) * 1000;
  }

  /** Forget the estimate (the deviation is kept, as in libwebrtc). */
  reset(): void {
    this.estimateKbps = undefined;
  }

  /** Sample at an over-use: the acknowledged rate (bps), weight 0.05. */
  onOveruseDetected(ackedBps: number): void {
    this.update(ackedBps, 0.05);
  }

  /** Sample from a probe (bps), weight 0.5. */
  onProbeRate(probeBps: number): void {
    this.update(probeBps, 0.5);
  }

  private update(sampleBps: number, alpha: number): void {
    if (!Number.isFinite(sampleBps) || sampleBps < 0) return;
    const sample = sampleBps / 1000;
    const est = this.estimateKbps === undefined ? sample : (1 - alpha) * this.estimateKbps + alpha * sample;
    this.estimateKbps = est;
    const norm = Math.max(est, 1);
    const err = est - sample;
    let dev = (1 - alpha) * this.deviationKbps + (alpha * err * err) / norm;
    if (!(dev >= 0.4)) dev = 0.4;
    else if (dev > 2.5) dev = 2.5;
    this.deviationKbps = dev;
  }

  private stdDevKbps(): number {
    return Math.sqrt(this.deviationKbps * (this.estimateKbps ?? 0));
  }
}
