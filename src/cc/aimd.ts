/**
 * AIMD rate control of the delay-based estimate.
 *
 * SOURCE: libwebrtc modules/remote_bitrate_estimator/aimd_rate_control.cc
 * (AimdRateControl::ChangeBitrate/ChangeState, beta 0.85, multiplicative
 * increase 1.08^min(dt,1 s), additive increase of about one average packet per
 * response time (RTT + 100 ms) x 2, min 4 kbps/s, throughput limit
 * 1.5 x acked + 10 kbps, TimeToReduceFurther); draft-ietf-rmcat-gcc-02 §5.5
 * (rate controller: Increase / Decrease / Hold driven by the detector signal,
 * A_hat = beta x R_hat on decrease).
 */
import { LinkCapacityEstimator } from './link-capacity.js';
import type { BandwidthUsage, RateControlState } from './types.js';

export interface AimdConfig {
  startBps: number;
  minBps: number;
  maxBps: number;
  /** Multiplicative decrease factor. Default 0.85. */
  beta: number;
  /** RTT before setRtt() is called (ms). Default 200. */
  initialRttMs: number;
}

const MIN_INCREASE_BPS_PER_S = 4000;
const FRAME_INTERVAL_S = 1 / 30;
const PACKET_SIZE_BYTES = 1200;
/** Approximate over-use detector delay added to the RTT (ms). */
const DETECTOR_DELAY_MS = 100;

/** One decrease keeps at least this fraction of the current estimate. */
const MAX_DECREASE_FRACTION = 0.5;
/*
 * An app-limited decrease is one that MAX_DECREASE_FRACTION held: beta x the
 * acknowledged bitrate was below half the estimate, so the path carried far
 * less than its estimate (a multipath scheduler gave it a small share). Two
 * deviations from libwebrtc follow from it (docs/results.md, stop 57):
 * - TimeToReduceFurther's shortcut (throughput under half the estimate allows
 *   the next decrease before an RTT has passed) is off until the next decrease,
 *   since that throughput is our choice, not a collapsed link: with it, one
 *   overuse episode of ~200 ms halved an app-limited cellular path on every
 *   report, 1.42 -> 0.18 Mbps, on a link of 1.07 Mbps (wc:21_2 seed 4, 10.5 s).
 * - The decrease does not feed the link capacity estimator
 *   (link_capacity_estimator.cc OnOveruseDetected): the throughput is the
 *   share we sent, not the link's capacity, and taken as the capacity it put
 *   the controller in additive increase (~20 kbps/s there) far below the link.
 */

/**
 * Delay-based rate (bps) that increases while the detector says 'normal',
 * holds on 'underusing', and drops to beta x acknowledged bitrate on
 * 'overusing' (at most halving per decrease; an app-limited decrease waits an
 * RTT before the next and leaves the link capacity: see above). Increases never exceed 1.5 x acked + 10 kbps when the acked
 * bitrate is known (an estimate already above that limit is not raised
 * further, but also not pulled down: libwebrtc behaviour for app-limited senders).
 */
export class AimdRateControl {
  /** Current state (libwebrtc rate_control_state_). */
  state: RateControlState = 'hold';
  readonly link = new LinkCapacityEstimator();

  private current: number;
  private readonly minBps: number;
  private readonly maxBps: number;
  private readonly beta: number;
  private rttMs: number;
  private latestThroughputBps: number;
  private timeLastChangeUs = Number.NEGATIVE_INFINITY;
  private timeLastDecreaseUs = Number.NEGATIVE_INFINITY;
  private lastDecreaseBps: number | undefined;
  /** The last decrease was app-limited (see MAX_DECREASE_FRACTION). */
  private appLimitedDecrease = false;
  /** Decreases held at MAX_DECREASE_FRACTION because the path was app-limited (monotonic). */
  appLimitedDecreases = 0;

  /** @throws RangeError on non-finite or inconsistent rates, or beta outside (0, 1). */
  constructor(config: Partial<AimdConfig> & { startBps: number; minBps: number; maxBps: number }) {
    const { startBps, minBps, maxBps } = config;
    if (!(minBps > 0 && Number.isFinite(maxBps) && minBps <= maxBps && Number.isFinite(startBps))) {
      throw new RangeError('AimdRateControl: need 0 < minBps <= maxBps and a finite startBps');
    }
    this.beta = config.beta ?? 0.85;
    if (!(this.beta > 0 && this.beta < 1)) throw new RangeError('AimdRateControl: beta must be in (0, 1)');
    this.minBps = minBps;
    this.maxBps = maxBps;
    this.current = clamp(startBps, minBps, maxBps);
    this.latestThroughputBps = this.current;
    this.rttMs = config.initialRttMs ?? 200;
  }

  /** Current delay-based estimate (bps). */
  latestBps(): number {
    return this.current;
  }

  /** RTT used for the additive increase and the reduce interval (ms). Ignored unless finite and > 0. */
  setRtt(rttMs: number): void {
    if (Number.isFinite(rttMs) && rttMs > 0) this.rttMs = rttMs;
  }

  /** Force the estimate (e.g. halving before the acked bitrate exists). */
  setEstimate(bps: number, nowUs: number): void {
    if (!Number.isFinite(bps)) return;
    const prev = this.current;
    this.current = clamp(bps, this.minBps, this.maxBps);
    this.timeLastChangeUs = nowUs;
    if (this.current < prev) this.timeLastDecreaseUs = nowUs;
  }

  /** Time of the last decrease (µs), -Infinity before any. */
  lastDecreaseUs(): number {
    return this.timeLastDecreaseUs;
  }

  /**
   * Whether another decrease is allowed now: an RTT (clamped 10..200 ms) has
   * passed since the last change, or the throughput fell below half the
   * estimate and the last decrease was not app-limited (see MAX_DECREASE_FRACTION).
   */
  timeToReduceFurther(nowUs: number, throughputBps: number): boolean {
    const intervalUs = clamp(this.rttMs, 10, 200) * 1000;
    if (nowUs - this.timeLastChangeUs >= intervalUs) return true;
    return !this.appLimitedDecrease && throughputBps < 0.5 * this.current;
  }

  /**
   * One rate-control step per feedback.
   * @param usage detector hypothesis
   * @param ackedBps acknowledged bitrate (bps) if measured
   * @param nowUs sender clock (µs)
   * @returns the new estimate (bps)
   */
  update(usage: BandwidthUsage, ackedBps: number | undefined, nowUs: number): number {
    const acked = ackedBps !== undefined && Number.isFinite(ackedBps) && ackedBps >= 0 ? ackedBps : undefined;
    const throughput = acked ?? this.latestThroughputBps;
    if (acked !== undefined) this.latestThroughputBps = acked;

    this.changeState(usage, nowUs);
    const limit = 1.5 * throughput + 10_000;
    let next: number | undefined;

    switch (this.state) {
      case 'hold':
        break;
      case 'increase': {
        if (throughput > this.link.upperBoundBps()) this.link.reset();
        if (this.current < limit) {
          const inc = this.link.hasEstimate() ? this.additiveIncreaseBps(nowUs) : this.multiplicativeIncreaseBps(nowUs);
          next = Math.min(this.current + inc, limit);
        }
        this.timeLastChangeUs = nowUs;
        break;
      }
      case 'decrease': {
        let decreased = throughput * this.beta;
        if (decreased > this.current) {
          const est = this.link.estimateBps();
          if (est !== undefined) decreased = this.beta * est;
        }
        // An app-limited path (one that carried a small share until another path
        // failed) has a throughput far below its real rate: beta x throughput
        // would throw the estimate to the floor on the first overuse after the
        // traffic moves to it, and it would then climb at 8%/s for tens of
        // seconds. One overuse at most halves the estimate (as the loss-based
        // controller's worst case does); repeated overuse still goes lower.
        this.appLimitedDecrease = decreased < MAX_DECREASE_FRACTION * this.current;
        if (this.appLimitedDecrease) {
          this.appLimitedDecreases++;
          decreased = MAX_DECREASE_FRACTION * this.current;
        }
        if (decreased < this.current) next = decreased;
        if (throughput < this.current) {
          this.lastDecreaseBps = next === undefined ? 0 : this.current - next;
        }
        if (!this.appLimitedDecrease) {
          if (throughput < this.link.lowerBoundBps()) this.link.reset();
          this.link.onOveruseDetected(throughput);
        }
        // Stay on hold until the queues have drained.
        this.state = 'hold';
        this.timeLastChangeUs = nowUs;
        this.timeLastDecreaseUs = nowUs;
        break;
      }
    }
    if (next !== undefined && Number.isFinite(next)) this.current = clamp(next, this.minBps, this.maxBps);
    return this.current;
  }

  /**
   * Bitrate drop of the last decrease (bps), undefined before any.
   * libwebrtc uses it for the expected bandwidth period.
   */
  lastDecrease(): number | undefined {
    return this.lastDecreaseBps;
  }

  /** Additive increase rate near convergence (bps per second). */
  nearMaxIncreaseBpsPerSecond(): number {
    const frameBytes = (this.current * FRAME_INTERVAL_S) / 8;
    const packetsPerFrame = Math.max(1, Math.ceil(frameBytes / PACKET_SIZE_BYTES));
    const avgPacketBytes = frameBytes / packetsPerFrame;
    const responseTimeS = ((this.rttMs + DETECTOR_DELAY_MS) * 2) / 1000;
    return Math.max(MIN_INCREASE_BPS_PER_S, (avgPacketBytes * 8) / responseTimeS);
  }

  private changeState(usage: BandwidthUsage, nowUs: number): void {
    switch (usage) {
      case 'normal':
        if (this.state === 'hold') {
          this.timeLastChangeUs = nowUs;
          this.state = 'increase';
        }
        break;
      case 'overusing':
        this.state = 'decrease';
        break;
      case 'underusing':
        this.state = 'hold';
        break;
    }
  }

  private multiplicativeIncreaseBps(nowUs: number): number {
    let alpha = 1.08;
    if (Number.isFinite(this.timeLastChangeUs)) {
      const dtS = Math.max(0, Math.min((nowUs - this.timeLastChangeUs) / 1e6, 1));
      alpha = Math.pow(alpha, dtS);
    }
    return Math.max(this.current * (alpha - 1), 1000);
  }

  private additiveIncreaseBps(nowUs: number): number {
    const dtS = Number.isFinite(this.timeLastChangeUs) ? Math.max(0, (nowUs - this.timeLastChangeUs) / 1e6) : 0;
    return this.nearMaxIncreaseBpsPerSecond() * dtS;
  }
}

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}
