/**
 * GCC with libwebrtc's LossBasedBweV2 as its loss-based bound: the
 * `gcc-lossv2` estimator (src/strategies.ts), opt-in. Upstream runs v2 by
 * default; in our simulator's cellular suite and in the browser it froze
 * longer than the classic rule (docs/results.md, stop 42), so `gcc` keeps
 * the classic rule.
 *
 * SOURCE: libwebrtc goog_cc_network_control.cc OnTransportPacketsFeedback
 * (SetAcknowledgedRate, then UpdateLossBasedEstimator with the report's
 * packets, the delay-based estimate and the ALR flag) and
 * send_side_bandwidth_estimation.cc UpdateEstimate (once v2 is ready its
 * result replaces the classic rule, which runs until then; the target is
 * min(delay-based, loss-based)); a probe result (SetSendBitrate) restarts the
 * classic estimate only, not v2.
 *
 * Deviations: an outage's restore probe (GccEstimator.onPathRestored, ours)
 * restarts v2's estimate too; reports inside an outage's grace window are
 * not fed to v2 (their losses are the outage's, not congestion); v2 bounds
 * the target as soon as it is ready (~0.75 s), where upstream, in the first
 * 2 s without loss, lets the target follow the delay-based estimate (v2
 * then follows it too, one 250 ms observation behind). As upstream, our
 * feedback-timeout cut (classic rule) does not touch v2. GccEstimator's
 * loss-queue bound (refreshTarget) applies on top of v2's own instant upper
 * bound (stop 42 measured gcc-lossv2 before that bound was on).
 */
import { GccEstimator } from './gcc.js';
import { LossBasedBweV2, type LossBasedBweV2Config, type LossBasedBweV2Stats, type LossV2Packet, type LossV2State } from './loss-based-v2.js';
import type { GccConfig, GccStats, PathProber, PathReport } from './types.js';

export class GccLossV2Estimator extends GccEstimator {
  /** The v2 estimator (read its stats(), result()). */
  readonly lossV2: LossBasedBweV2;

  /**
   * @param config partial {@link GccConfig} (rates in bps); v2 gets its min/max
   * @param lossV2Config partial LossBasedBweV2 settings (default: upstream's code defaults)
   * @throws RangeError as GccEstimator and LossBasedBweV2 do on invalid settings
   */
  constructor(config: Partial<GccConfig> = {}, lossV2Config: Partial<LossBasedBweV2Config> = {}) {
    super(config);
    this.lossV2 = new LossBasedBweV2(lossV2Config);
    this.lossV2.setMinMaxBitrate(this.cfg.minBps, this.cfg.maxBps);
  }

  /**
   * GccEstimator.onReport, then v2: the acknowledged rate, then the
   * report's packets (lost ones first) with the delay-based estimate and the
   * ALR flag; then the target again.
   */
  override onReport(report: PathReport, nowUs: number): void {
    super.onReport(report, nowUs);
    if (!Number.isFinite(nowUs)) return; // rejected before the history saw it: its outcome is the previous report's
    const v2 = this.lossV2;
    const ackedBps = this.ackedRateBps();
    if (ackedBps !== undefined) v2.setAcknowledgedBitrate(ackedBps);
    if (nowUs < this.lossGraceUntilUs) return;
    const h = this.history;
    const packets: LossV2Packet[] = [];
    for (const i of h.lostIdx) packets.push({ seq: h.seqs[i], sendTimeUs: h.sendUs[i], sizeBytes: h.sizes[i], received: false });
    for (const i of h.newIdx) packets.push({ seq: h.seqs[i], sendTimeUs: h.sendUs[i], sizeBytes: h.sizes[i], received: true });
    if (packets.length > 0) v2.updateBandwidthEstimate(packets, this.delayBasedBps(), this.inAlr);
    this.refreshTarget();
  }

  /** The path sends well below its estimate (the prober's ALR flag, as of the previous report). */
  private inAlr = false;

  /**
   * GccEstimator.onProbeResult. A probe result does not touch v2 (upstream's
   * SetSendBitrate leaves it), except the restore probe after an outage
   * (GccEstimator.onPathRestored, ours): when it restarted the classic
   * estimate, v2 restarts there too.
   */
  override onProbeResult(bps: number, nowUs: number): void {
    const restores = this.counters.probeRestores;
    super.onProbeResult(bps, nowUs);
    if (this.counters.probeRestores !== restores && this.lossV2.isReady()) this.lossV2.setBandwidthEstimate(this.loss.targetBps());
  }

  /**
   * GccEstimator.createProber, also keeping the ALR flag v2's acked-rate
   * candidate needs. Without a prober (the sender's `probing: false`) v2
   * never learns ALR and always offers the acked rate as a candidate.
   */
  override createProber(config: { maxBps: number; alrIntervalMs: number }): PathProber {
    const p = super.createProber(config);
    return {
      ...p,
      setApplicationLimited: (appLimited) => {
        this.inAlr = appLimited === true;
        p.setApplicationLimited(appLimited);
      },
    };
  }

  /**
   * GccEstimator.stats() plus `lossV2`: whether v2 is ready, its state, its
   * result (bps: before it is ready, the last delay-based estimate it was
   * given, Infinity before any), its window's average loss (0..1) and its
   * counters. Shows in call reports that v2 really ran.
   */
  override stats(): GccStats & { lossV2: LossBasedBweV2Stats & { ready: boolean; state: LossV2State; estimateBps: number; averageLoss: number } } {
    const v2 = this.lossV2;
    const r = v2.result();
    return { ...super.stats(), lossV2: { ...v2.stats(), ready: v2.isReady(), state: r.state, estimateBps: r.bandwidthEstimateBps, averageLoss: v2.averageLossRatio() } };
  }

  /** v2's estimate once it is ready, else the classic rule's (bps). */
  override lossBasedBps(): number {
    // lossV2 is set after super(): undefined if the base constructor ever asked.
    const v2 = this.lossV2 as LossBasedBweV2 | undefined;
    if (v2?.isReady()) {
      const r = v2.result().bandwidthEstimateBps;
      if (Number.isFinite(r) && r > 0) return r;
    }
    return super.lossBasedBps();
  }
}
