/**
 * Classic loss-based bandwidth bound.
 *
 * SOURCE: libwebrtc modules/congestion_controller/goog_cc/send_side_bandwidth_estimation.cc
 * (SendSideBandwidthEstimation::UpdateEstimate, UpdateMinHistory,
 * UpdateTargetBitrate: loss <= 2 % -> 1.08 x min(target over the last
 * kBweIncreaseInterval 1 s) + 1 kbps; 2-10 % -> hold; > 10 % -> target x
 * (1 - 0.5 x loss) at most once per kBweDecreaseInterval 300 ms + RTT and once
 * per loss report; kStartPhase 2 s follows the delay-based estimate upward
 * while no loss is seen; the target never exceeds the delay-based limit;
 * feedback-timeout cut x 0.8 once per kTimeoutInterval 1 s);
 * draft-ietf-rmcat-gcc-02 §6 (loss-based controller, A_s).
 */

export interface LossBasedConfig {
  startBps: number;
  minBps: number;
  maxBps: number;
  /** Below or at this loss the rate increases. Default 0.02. */
  lowLossThreshold: number;
  /** Above this loss the rate decreases. Default 0.1. */
  highLossThreshold: number;
  /** Increase interval (ms). Default 1000. */
  increaseIntervalMs: number;
  /** Decrease interval, RTT added (ms). Default 300. */
  decreaseIntervalMs: number;
  /** Start phase (ms since the first loss report). Default 2000. */
  startPhaseMs: number;
  /** Increase only while the last loss report is younger than this (ms). Default 1000. */
  lossReportValidityMs: number;
}

const MAX_HISTORY = 256;

/**
 * Target (bps) bounded by loss and by the delay-based limit. Call
 * {@link onLossReport} with each loss fraction, {@link setDelayBasedLimit}
 * after each delay-based update and {@link updateEstimate} periodically.
 */
export class LossBasedBwe {
  private readonly cfg: LossBasedConfig;
  private target: number;
  private delayLimit = Number.POSITIVE_INFINITY;
  private lastFraction = 0;
  private lastLossReportUs = Number.NaN;
  private firstReportUs = Number.NaN;
  private hasDecreasedSinceLastLoss = false;
  private timeLastDecreaseUs = Number.NEGATIVE_INFINITY;
  private rttMs = 0;
  // Min-history: monotonic deque (increasing values) of (time, rate), ring-buffered.
  private readonly hTime = new Float64Array(MAX_HISTORY);
  private readonly hVal = new Float64Array(MAX_HISTORY);
  private hHead = 0;
  private hLen = 0;

  /** @throws RangeError on inconsistent rates or thresholds. */
  constructor(config: Partial<LossBasedConfig> & { startBps: number; minBps: number; maxBps: number }) {
    this.cfg = {
      lowLossThreshold: 0.02,
      highLossThreshold: 0.1,
      increaseIntervalMs: 1000,
      decreaseIntervalMs: 300,
      startPhaseMs: 2000,
      lossReportValidityMs: 1000,
      ...config,
    };
    const c = this.cfg;
    if (!(c.minBps > 0 && c.minBps <= c.maxBps && Number.isFinite(c.maxBps) && Number.isFinite(c.startBps))) {
      throw new RangeError('LossBasedBwe: need 0 < minBps <= maxBps and a finite startBps');
    }
    if (!(c.lowLossThreshold >= 0 && c.lowLossThreshold <= c.highLossThreshold && c.highLossThreshold <= 1)) {
      throw new RangeError('LossBasedBwe: need 0 <= lowLossThreshold <= highLossThreshold <= 1');
    }
    this.target = clamp(c.startBps, c.minBps, c.maxBps);
  }

  /** Current loss-based target (bps), already capped by the delay-based limit. */
  targetBps(): number {
    return this.target;
  }

  /** Last loss fraction given to {@link onLossReport} (0..1). */
  lossFraction(): number {
    return this.lastFraction;
  }

  /** RTT used in the decrease interval (ms). */
  setRtt(rttMs: number): void {
    if (Number.isFinite(rttMs) && rttMs >= 0) this.rttMs = rttMs;
  }

  /** New delay-based estimate (bps): the target is capped by it. */
  setDelayBasedLimit(bps: number, nowUs: number): void {
    if (!Number.isFinite(bps) || bps <= 0) return;
    this.delayLimit = bps;
    this.updateTarget(this.target, nowUs);
  }

  /**
   * A loss measurement over >= 20 packets.
   * @param fraction lost / expected, 0..1
   * @param nowUs sender clock (µs)
   */
  onLossReport(fraction: number, nowUs: number): void {
    if (!Number.isFinite(fraction)) return;
    this.lastFraction = clamp(fraction, 0, 1);
    this.hasDecreasedSinceLastLoss = false;
    if (Number.isNaN(this.firstReportUs)) this.firstReportUs = nowUs;
    this.lastLossReportUs = nowUs;
    this.updateEstimate(nowUs);
  }

  /** Feedback timeout: cut the target to 80 % (floored at minBps). */
  onFeedbackTimeout(nowUs: number): void {
    this.updateTarget(this.target * 0.8, nowUs);
  }

  /** Time-driven step (every report and every tick). */
  updateEstimate(nowUs: number): void {
    if (!Number.isFinite(nowUs)) return;
    if (this.lastFraction === 0 && this.inStartPhase(nowUs) && Number.isFinite(this.delayLimit)) {
      const next = Math.max(this.target, this.delayLimit);
      if (next !== this.target) {
        this.hLen = 0;
        this.pushHistory(nowUs, next);
        this.updateTarget(next, nowUs);
        return;
      }
    }
    this.updateMinHistory(nowUs);
    if (Number.isNaN(this.lastLossReportUs)) return; // no loss report yet
    if (nowUs - this.lastLossReportUs > this.cfg.lossReportValidityMs * 1000) return;

    const loss = this.lastFraction;
    if (loss <= this.cfg.lowLossThreshold) {
      const minRecent = this.hLen > 0 ? this.hVal[this.hHead] : this.target;
      this.updateTarget(minRecent * 1.08 + 1000, nowUs);
    } else if (loss > this.cfg.highLossThreshold) {
      if (!this.hasDecreasedSinceLastLoss && nowUs - this.timeLastDecreaseUs >= (this.cfg.decreaseIntervalMs + this.rttMs) * 1000) {
        this.timeLastDecreaseUs = nowUs;
        this.hasDecreasedSinceLastLoss = true;
        this.updateTarget(this.target * (1 - 0.5 * loss), nowUs);
      }
    }
    // 2-10 %: hold.
  }

  private inStartPhase(nowUs: number): boolean {
    return Number.isNaN(this.firstReportUs) || nowUs - this.firstReportUs < this.cfg.startPhaseMs * 1000;
  }

  private updateTarget(bps: number, _nowUs: number): void {
    if (!Number.isFinite(bps)) return;
    let next = Math.min(bps, this.delayLimit, this.cfg.maxBps);
    if (next < this.cfg.minBps) next = this.cfg.minBps;
    this.target = next;
  }

  private updateMinHistory(nowUs: number): void {
    const windowUs = this.cfg.increaseIntervalMs * 1000;
    // Drop points older than the increase interval (+1 ms as libwebrtc does).
    while (this.hLen > 0 && nowUs - this.hTime[this.hHead] + 1000 > windowUs) {
      this.hHead = (this.hHead + 1) % MAX_HISTORY;
      this.hLen--;
    }
    // Sliding-window minimum: pop values not below the current target.
    while (this.hLen > 0 && this.target <= this.hVal[(this.hHead + this.hLen - 1) % MAX_HISTORY]) this.hLen--;
    this.pushHistory(nowUs, this.target);
  }

  private pushHistory(nowUs: number, bps: number): void {
    if (this.hLen === MAX_HISTORY) {
      this.hHead = (this.hHead + 1) % MAX_HISTORY;
      this.hLen--;
    }
    this.hTime[(this.hHead + this.hLen) % MAX_HISTORY] = nowUs;
    this.hVal[(this.hHead + this.hLen) % MAX_HISTORY] = bps;
    this.hLen++;
  }
}

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}
