/**
 * Per-path Google Congestion Control (send-side): target = min(delay-based,
 * loss-based, the loss-queue bound), clamped to [minBps, maxBps].
 *
 * SOURCE: libwebrtc modules/congestion_controller/goog_cc/goog_cc_network_control.cc
 * (OnTransportPacketsFeedback: feedback -> acknowledged bitrate, delay-based
 * estimate, loss counts -> SendSideBandwidthEstimation, whose target is capped
 * by the delay-based limit); draft-ietf-rmcat-gcc-02 §4 (send-side
 * architecture), §5 (delay-based), §6 (loss-based, A = min(A_r, A_s)).
 * Converge §4.1: one uncoupled GCC per path gives S_i.
 *
 * I/O-free: time only comes as `nowUs` arguments (sender clock); the
 * receiver's arrival/report times are only used as differences.
 */
import { AckedBitrateEstimator } from './acked-bitrate.js';
import { DelayBasedBwe } from './delay-based.js';
import { LossBasedBwe } from './loss-based.js';
import { GccProber } from './probe-controller.js';
import { RttEstimator, rttFromReport } from './rtt.js';
import { SentPacketHistory } from './sent-history.js';
import type { BandwidthEstimator, GccConfig, GccStats, PathProber, PathReport, SentPacketInfo } from './types.js';

/** Loss is measured once at least this many packets were resolved (libwebrtc kLimitNumPackets). */
const LOSS_MIN_PACKETS = 20;
/** Feedback-timeout cuts happen at most this often (µs); libwebrtc kTimeoutInterval. */
const TIMEOUT_INTERVAL_US = 1_000_000;
/** Gain of the EWMA behind lossRate() per loss window (>= 20 packets). */
const LOSS_EWMA_GAIN = 0.1;
const UINT32_MAX = 0xffff_ffff;
/**
 * Loss-queue bound (see refreshTarget): above LOSS_BOUND_OFFSET recent loss
 * while a queue stands (SRTT over the min RTT by more than
 * LOSS_BOUND_QUEUE_MS), the target is at most LOSS_BOUND_BPS / (loss -
 * LOSS_BOUND_OFFSET). The bound and its constants are LossBasedBweV2's
 * instant upper bound (loss_based_bwe_v2.cc CalculateInstantUpperBound,
 * InstantUpperBoundBwBalance 75 kbps, InstantUpperBoundLossOffset 0.05); the
 * queue gate is ours, so that random loss on an empty link (WiFi, loss-sweep)
 * does not cap the rate. The loss differs from upstream's (its window's
 * reported loss, 0.9 weight per >= 250 ms observation): ours is an EWMA of the
 * >= 20-packet loss windows with gain LOSS_BOUND_GAIN, reset when the path
 * comes back from an outage or changes route; the min RTT is the RTT
 * estimator's 10 s windowed minimum.
 */
const LOSS_BOUND_BPS = 75_000;
const LOSS_BOUND_OFFSET = 0.05;
const LOSS_BOUND_QUEUE_MS = 50;
const LOSS_BOUND_GAIN = 0.3;
/** After an outage, a probe result this soon (µs) may restore the loss-based estimate (onPathRestored). */
const PATH_RESTORE_PROBE_US = 2_000_000;
/** Larger "packets" are rejected as garbage (bytes). */
const MAX_PACKET_BYTES = 1 << 24;

/** Defaults of {@link GccConfig}. */
export const DEFAULT_GCC_CONFIG: Readonly<GccConfig> = Object.freeze({
  startBps: 1_000_000,
  minBps: 100_000,
  maxBps: 50_000_000,
  historyPackets: 8192,
  feedbackTimeoutMs: 1000,
  initialRttMs: 200,
});

/**
 * GCC bandwidth estimator for one path.
 *
 * Usage: call {@link onPacketSent} for every packet put on the path (media,
 * FEC, padding: anything with a pathSeq), {@link onReport} for every
 * PathReport received for the path, and {@link onTick} every 10-50 ms.
 * Read {@link targetRateBps} afterwards. Never throws on data; malformed
 * input is counted in {@link stats}.
 */
export class GccEstimator implements BandwidthEstimator {
  protected readonly cfg: GccConfig;
  /** Sent packets and the last report's outcome (`newIdx`, `lostIdx`; read by subclasses after {@link onReport}). */
  protected readonly history: SentPacketHistory;
  private readonly delay: DelayBasedBwe;
  /** The classic loss-based bound; rebuilt when a probe restarts it (subclasses may watch for that). */
  protected loss: LossBasedBwe;
  private readonly acked = new AckedBitrateEstimator();
  private readonly rtt: RttEstimator;

  private target: number;
  private lastReport: number | undefined;
  private firstSentUs = Number.NaN;
  private lastSentUs = Number.NaN;
  private lastTimeoutUs = Number.NEGATIVE_INFINITY;
  private lossExpected = 0;
  private lossLost = 0;
  private lastLossRate = 0;
  /** EWMA of the loss windows, gain LOSS_BOUND_GAIN: the loss-queue bound's loss. */
  private recentLoss = 0;
  private lossWindows = 0;
  /** Last probe result (bps): the throughput measurement until the acked bitrate exists. */
  private probeThroughputBps: number | undefined;
  /** Loss windows resolved before this sender time (µs) are not congestion (see onPathRestored). */
  protected lossGraceUntilUs = Number.NEGATIVE_INFINITY;
  /** After an outage: the rate a probe result may restore the loss-based estimate to, until when (see onPathRestored). */
  private restoreByProbe: { bps: number; untilUs: number } | undefined;

  /** The prober {@link createProber} made (its start-up re-probe count shows in {@link stats}). */
  private prober: GccProber | undefined;

  /** Counters behind {@link stats} (subclasses read them). */
  protected readonly counters = {
    packetsSent: 0,
    reports: 0,
    reportsInvalid: 0,
    arrivalsUnknown: 0,
    arrivalsDuplicate: 0,
    arrivalsInvalid: 0,
    lossRecovered: 0,
    packetsLost: 0,
    packetsReceived: 0,
    sentInvalid: 0,
    rttRejected: 0,
    feedbackTimeouts: 0,
    probeResults: 0,
    probeResultsApplied: 0,
    pathRestores: 0,
    probeRestores: 0,
    lossWindowsIgnored: 0,
    departuresApplied: 0,
  };

  /**
   * @param config partial {@link GccConfig}; rates in bps.
   * @throws RangeError when a rate is not finite or <= 0, minBps > maxBps,
   *   historyPackets is outside [16, 2^20], or a time is not finite and > 0.
   *   startBps is clamped into [minBps, maxBps].
   */
  constructor(config: Partial<GccConfig> = {}) {
    const c: GccConfig = { ...DEFAULT_GCC_CONFIG, ...config };
    for (const k of ['startBps', 'minBps', 'maxBps', 'feedbackTimeoutMs', 'initialRttMs'] as const) {
      if (!Number.isFinite(c[k]) || c[k] <= 0) throw new RangeError(`GccEstimator: ${k} must be a finite number > 0, got ${c[k]}`);
    }
    if (c.minBps > c.maxBps) throw new RangeError(`GccEstimator: minBps (${c.minBps}) > maxBps (${c.maxBps})`);
    if (!Number.isInteger(c.historyPackets) || c.historyPackets < 16 || c.historyPackets > 1 << 20) {
      throw new RangeError(`GccEstimator: historyPackets must be an integer in [16, 2^20], got ${c.historyPackets}`);
    }
    c.startBps = Math.min(Math.max(c.startBps, c.minBps), c.maxBps);
    this.cfg = c;
    this.history = new SentPacketHistory(c.historyPackets);
    const rates = { startBps: c.startBps, minBps: c.minBps, maxBps: c.maxBps };
    this.delay = new DelayBasedBwe({ ...rates, initialRttMs: c.initialRttMs });
    this.loss = new LossBasedBwe(rates);
    this.rtt = new RttEstimator({ initialRttMs: c.initialRttMs });
    this.target = c.startBps;
  }

  /**
   * Record a sent packet (pathSeq uint32, size bytes rounded up to an integer,
   * sender clock µs). Invalid input (non-integer seq, size not in [0, 16 MiB],
   * non-finite time) is counted and ignored.
   */
  onPacketSent(packet: SentPacketInfo): void {
    if (
      typeof packet !== 'object' ||
      packet === null ||
      !Number.isInteger(packet.pathSeq) ||
      packet.pathSeq < 0 ||
      packet.pathSeq > UINT32_MAX ||
      !Number.isFinite(packet.sizeBytes) ||
      packet.sizeBytes < 0 ||
      packet.sizeBytes > MAX_PACKET_BYTES ||
      !Number.isFinite(packet.sendTimeUs)
    ) {
      this.counters.sentInvalid++;
      return;
    }
    this.history.add(packet.pathSeq, packet.sendTimeUs, Math.ceil(packet.sizeBytes));
    this.counters.packetsSent++;
    if (Number.isNaN(this.firstSentUs)) this.firstSentUs = packet.sendTimeUs;
    if (!(packet.sendTimeUs <= this.lastSentUs)) this.lastSentUs = packet.sendTimeUs;
  }

  /**
   * Packet `pathSeq` left the datachannel's buffer for the network at
   * `departUs` (µs): its send time in the history moves there (once no
   * report covered it and the time is later), so the delay-based detector
   * sees network delay, not the wait in SCTP (libwebrtc stamps the send time
   * when the socket takes the packet: transport_feedback_adapter.cc
   * ProcessSentPacket). Counted in `departuresApplied`.
   */
  onPacketDeparted(pathSeq: number, departUs: number): void {
    if (!Number.isInteger(pathSeq) || pathSeq < 0 || pathSeq > UINT32_MAX || !Number.isFinite(departUs)) return;
    if (this.history.delaySend(pathSeq, departUs)) this.counters.departuresApplied++;
  }

  /**
   * Process a receiver report for this path (sender clock `nowUs`, µs).
   * Cost O(arrivals + covered range), bounded by the history size.
   */
  onReport(report: PathReport, nowUs: number): void {
    if (!Number.isFinite(nowUs) || !this.history.applyReport(report)) {
      this.counters.reportsInvalid++;
      return;
    }
    const h = this.history;
    const o = h.outcome;
    const c = this.counters;
    c.reports++;
    c.arrivalsUnknown += o.unknown;
    c.arrivalsDuplicate += o.duplicates;
    c.arrivalsInvalid += o.invalid;
    c.lossRecovered += o.recovered;
    c.packetsLost += o.newlyLost - o.recovered;
    c.packetsReceived += o.newlyReceived + o.recovered;
    this.lastReport = nowUs;

    // Delay-based detector and acknowledged bitrate, in arrival order.
    const idx = h.newIdx;
    for (let k = 0; k < idx.length; k++) {
      const i = idx[k];
      const size = h.sizes[i];
      const at = h.arrivalUs[i];
      this.delay.onPacket(h.sendUs[i], at, size, nowUs);
      this.acked.update(at, size);
    }

    // RTT with the receiver's hold time removed.
    if (!Number.isNaN(h.lastArrivalUs)) {
      const sample = rttFromReport(nowUs, h.lastArrivalSendUs, h.lastArrivalUs, Number(report.reportTimeUs));
      if (sample === undefined || !this.rtt.onSample(sample, nowUs)) c.rttRejected++;
    }

    // Loss fraction over >= 20 resolved packets; late arrivals undo their loss.
    this.lossExpected += o.newlyReceived + o.newlyLost;
    this.lossLost += o.newlyLost - o.recovered;
    if (nowUs < this.lossGraceUntilUs) {
      // Packets lost in an outage (see onPathRestored) say nothing about congestion.
      if (o.newlyLost > 0) c.lossWindowsIgnored++;
      this.lossExpected = 0;
      this.lossLost = 0;
    }
    if (this.lossExpected >= LOSS_MIN_PACKETS) {
      const f = Math.min(1, Math.max(0, this.lossLost / this.lossExpected));
      // lossRate() is an EWMA over windows (a 20-packet window reads 0 a third of
      // the time at 5% loss, which made the per-path FEC rate l_i jump to 0).
      this.lastLossRate = this.lossWindows === 0 ? f : this.lastLossRate + LOSS_EWMA_GAIN * (f - this.lastLossRate);
      this.recentLoss = this.lossWindows === 0 ? f : this.recentLoss + LOSS_BOUND_GAIN * (f - this.recentLoss);
      this.lossWindows++;
      this.lossExpected = 0;
      this.lossLost = 0;
      this.loss.setRtt(this.rtt.srttMs());
      this.loss.onLossReport(f, nowUs);
    }

    // Until the acked bitrate has its first window (500 ms), a probe result is the
    // throughput measurement: over-use then backs off to 0.85 x it instead of halving.
    const ackedBps = this.acked.bitrateBps() ?? this.probeThroughputBps;
    const delayBps = this.delay.update(nowUs, ackedBps, this.rtt.srttMs());
    this.loss.setDelayBasedLimit(delayBps, nowUs);
    this.loss.updateEstimate(nowUs);
    this.refreshTarget();
  }

  /** Periodic step (sender clock µs): loss-based increase and feedback timeout. */
  onTick(nowUs: number): void {
    if (!Number.isFinite(nowUs)) return;
    this.loss.updateEstimate(nowUs);
    const ref = this.lastReport ?? this.firstSentUs;
    const timeoutUs = this.cfg.feedbackTimeoutMs * 1000;
    if (
      this.history.inflightBytes() > 0 &&
      nowUs - ref > timeoutUs &&
      nowUs - this.lastSentUs < timeoutUs && // still sending: an idle path does not decay
      nowUs - this.lastTimeoutUs >= TIMEOUT_INTERVAL_US
    ) {
      this.lastTimeoutUs = nowUs;
      this.counters.feedbackTimeouts++;
      this.lossExpected = 0;
      this.lossLost = 0;
      this.loss.onFeedbackTimeout(nowUs);
    }
    this.refreshTarget();
  }

  targetRateBps(): number {
    return this.target;
  }

  /**
   * A bandwidth-probe result (bps, from {@link import('./probe-estimator.js').ProbeBitrateEstimator},
   * usually via {@link import('./probe-controller.js').GccProber}) at sender time `nowUs` (µs).
   * Unless the detector is over-using, the AIMD (delay-based) estimate is
   * raised to the result (capped at maxBps) when the result is higher; a lower
   * result leaves it (deviation from libwebrtc, which sets it: in the browser a
   * probe crosses the datachannel's SCTP window and can measure SCTP, not the
   * path; see the code). On a clean path (lossRate() < 2 %) the loss-based
   * estimate restarts from a raising result that is above it, so the target
   * follows at once (after an outage a restore probe may restart it without
   * raising anything: see {@link onPathRestored}).
   * Until the acknowledged bitrate is measured (first 500 ms window), the
   * last probe result stands in for it in the delay-based controller, so an
   * over-use right after a probe backs off to 0.85 x the probed rate instead
   * of halving the estimate (deviation from libwebrtc, which halves).
   * Call after {@link onReport} for the same report. Non-finite or <= 0 input is ignored.
   *
   * SOURCE: libwebrtc delay_based_bwe.cc MaybeUpdateEstimate (probe result ->
   * AimdRateControl::SetEstimate unless over-using), goog_cc_network_control.cc
   * (limit_probes_lower_than_throughput_estimate, kProbeDropThroughputFraction 0.85;
   * result.probe -> SendSideBandwidthEstimation::SetSendBitrate).
   */
  onProbeResult(bps: number, nowUs: number): void {
    if (!(Number.isFinite(bps) && bps > 0) || !Number.isFinite(nowUs)) return;
    this.counters.probeResults++;
    this.probeThroughputBps = Math.min(bps, this.cfg.maxBps);
    const rb = this.restoreByProbe;
    if (rb) {
      this.restoreByProbe = undefined;
      const r = Math.min(bps, rb.bps);
      if (nowUs <= rb.untilUs && r > this.lossBasedBps()) {
        // After an outage (onPathRestored): the probe says what the returned path carries.
        this.counters.probeRestores++;
        this.restartLoss(r);
        this.loss.setDelayBasedLimit(this.delay.estimateBps(), nowUs);
        this.refreshTarget();
      }
    }
    if (this.delay.usage() === 'overusing') return;
    const p = Math.min(bps, this.cfg.maxBps);
    const current = this.delay.estimateBps();
    // Raise only. In the browser a probe goes through the datachannel's SCTP
    // association, whose own congestion window (small at the start of a call)
    // can hold the burst back: a low result then measures SCTP, not the path,
    // and lowering GCC to it starved a clean 15 Mbps path at 0.4 Mbps in our
    // calls. Delay- and loss-based control lower the estimate when it is too high.
    if (p <= current) return;
    this.counters.probeResultsApplied++;
    this.delay.aimd.setEstimate(p, nowUs);
    // Only on a clean path: with >= 2% loss the loss-based bound is doing its job and a
    // probe (which measures capacity, not loss) must not undo it.
    if (this.lossBasedBps() < p && this.lossRate() < 0.02) {
      // libwebrtc SetSendBitrate: the loss-based estimate restarts from the probed rate.
      this.restartLoss(p);
    }
    this.loss.setDelayBasedLimit(this.delay.estimateBps(), nowUs);
    this.refreshTarget();
  }

  /**
   * The path came back after an outage: it went silent (no reports; a
   * blackhole, a handover, a dead radio) at rate `rateBps` and reports
   * resumed at `nowUs` (µs). Silence is not congestion, but GCC takes it as
   * such: every second of it cuts the loss-based estimate by 20% (feedback
   * timeout), and the packets sent into the silence are reported lost when
   * the first reports come back. So loss windows resolved until
   * `graceUntilUs` (µs) are dropped (counted in `lossWindowsIgnored`), and
   * the next probe result within PATH_RESTORE_PROBE_US (the caller sends a
   * probe cluster at `rateBps`) restarts the loss-based estimate from
   * min(probe result, `rateBps`), even when the delay-based estimate (which
   * silence does not move) is above it. Nothing is restored without that
   * measurement: a path that returns slower (a cellular fade) keeps its cut.
   * (libwebrtc has no multipath outage; its nearest rule is the network-route
   * change, goog_cc_network_control.cc OnNetworkRouteChange, which restarts
   * the estimators and probes.) Non-finite or <= 0 input is ignored.
   */
  onPathRestored(rateBps: number, nowUs: number, graceUntilUs: number): void {
    if (!(Number.isFinite(rateBps) && rateBps > 0) || !Number.isFinite(nowUs) || !Number.isFinite(graceUntilUs)) return;
    this.counters.pathRestores++;
    this.lossGraceUntilUs = graceUntilUs;
    this.recentLoss = 0; // the outage's losses are not the returned path's
    this.lossExpected = 0;
    this.lossLost = 0;
    this.lastTimeoutUs = nowUs;
    this.restoreByProbe = { bps: Math.min(Math.max(rateBps, this.cfg.minBps), this.cfg.maxBps), untilUs: nowUs + PATH_RESTORE_PROBE_US };
  }

  /**
   * The classic loss-based estimate restarts at `bps`. LossBasedBwe has no
   * setter for its target, so it is rebuilt (its loss history restarts; the
   * next loss report, within ~20 packets, re-arms it).
   */
  private restartLoss(bps: number): void {
    const c = this.cfg;
    this.loss = new LossBasedBwe({ startBps: bps, minBps: c.minBps, maxBps: c.maxBps });
    this.loss.setRtt(this.rtt.srttMs());
  }

  /**
   * The path now runs over another route (BandwidthEstimator.onRouteChange,
   * e.g. an ICE restart onto another relay): the loss-queue bound forgets the
   * old route's loss (its min RTT, a 10 s window, may still be the old
   * route's). The estimators are not restarted (libwebrtc's
   * OnNetworkRouteChange does; measured, it slowed the relay switch's ramp:
   * docs/results.md, stop 41).
   */
  onRouteChange(_nowUs: number): void {
    this.recentLoss = 0;
  }

  /** Bandwidth probing bound to this estimator (BandwidthEstimator.createProber; a {@link GccProber}). */
  createProber(config: { maxBps: number; alrIntervalMs: number }): PathProber {
    const prober = new GccProber(config);
    this.prober = prober;
    return {
      start: (nowUs, startBps) => prober.start(nowUs, startBps),
      onPacketSent: (clusterId, pathSeq, sizeBytes, sendTimeUs, bufferedBytes) => prober.onPacketSent(clusterId, pathSeq, sizeBytes, sendTimeUs, bufferedBytes),
      onReport: (report, nowUs) => prober.onReport(report, nowUs, this),
      requestProbe: (nowUs, targetBps) => prober.requestProbe(nowUs, targetBps),
      setApplicationLimited: (appLimited) => prober.setApplicationLimited(appLimited),
    };
  }

  ackedRateBps(): number | undefined {
    return this.acked.bitrateBps();
  }

  srttMs(): number {
    return this.rtt.srttMs();
  }

  minRttMs(): number {
    return this.rtt.minRttMs();
  }

  /** True once an RTT sample was accepted (before that, RTTs are the configured initialRttMs). */
  hasRttSample(): boolean {
    return this.rtt.hasSample();
  }

  lossRate(): number {
    return this.lastLossRate;
  }

  /** `GccConfig.minBps` (bps): the target never goes below it. */
  minRateBps(): number {
    return this.cfg.minBps;
  }

  inflightBytes(): number {
    return this.history.inflightBytes();
  }

  lastReportUs(): number | undefined {
    return this.lastReport;
  }

  /** Delay-based estimate (bps). */
  delayBasedBps(): number {
    return this.delay.estimateBps();
  }

  /** Loss-based estimate (bps), the bound the target takes the minimum with: the classic rule's here (subclasses may replace it). */
  lossBasedBps(): number {
    return this.loss.targetBps();
  }

  stats(): GccStats {
    const det = this.delay.detector;
    return {
      targetRateBps: this.target,
      delayBasedBps: this.delay.estimateBps(),
      lossBasedBps: this.lossBasedBps(),
      ackedRateBps: this.acked.bitrateBps(),
      srttMs: this.rtt.srttMs(),
      minRttMs: this.rtt.minRttMs(),
      latestRttMs: this.rtt.latestRttMs(),
      lossRate: this.lastLossRate,
      recentLossRate: this.recentLoss,
      trend: this.delay.trendline.modifiedTrend,
      threshold: det.threshold,
      bandwidthUsage: det.state,
      rateControlState: this.delay.aimd.state,
      linkCapacityBps: this.delay.aimd.link.estimateBps(),
      appLimitedDecreases: this.delay.aimd.appLimitedDecreases,
      inflightBytes: this.history.inflightBytes(),
      interArrivalResets: this.delay.interArrival.resets,
      overuseOnsets: det.overuseOnsets,
      ...this.counters,
      startReprobes: this.prober?.startReprobes ?? 0,
    };
  }

  /**
   * target = min(delay-based, {@link lossBasedBps}, the loss-queue bound)
   * within [minBps, maxBps]. The loss-queue bound (LOSS_BOUND_*) caps the
   * target at 75 kbps / (recent loss - 0.05) while the loss is above 5 % and
   * SRTT stands more than 50 ms over the min RTT: losses with a standing
   * queue are the path's capacity falling under the rate (a fading WiFi), and
   * the classic rule, which cuts at most once per 300 ms + RTT by half the
   * loss, follows such a fall over seconds.
   */
  protected refreshTarget(): void {
    let t = Math.min(this.delay.estimateBps(), this.lossBasedBps());
    const l = this.recentLoss;
    if (l > LOSS_BOUND_OFFSET && this.rtt.srttMs() - this.rtt.minRttMs() > LOSS_BOUND_QUEUE_MS) t = Math.min(t, LOSS_BOUND_BPS / (l - LOSS_BOUND_OFFSET));
    if (!Number.isFinite(t)) return; // cannot happen; keep the previous target
    if (t < this.cfg.minBps) t = this.cfg.minBps;
    else if (t > this.cfg.maxBps) t = this.cfg.maxBps;
    this.target = t;
  }
}
