/**
 * FRACTaL per subflow, with its Subflow Monitor (SM), as the `fractal`
 * bandwidth estimator: "Multipath Rate Control for Real-Time Media"
 * (Kreith and Drozdy; MPRTP) §III-A and §IV-A, FRACTaL being Kreith, Singh
 * and Ott, "FRACTaL: FEC-based rate control for RTP" (ACM MM 2017).
 *
 * FRACTaL is a state machine with the stages REDUCE, KEEP, PROBE and
 * INCREASE, run on every receiver report once 10 reports were measured:
 * - congestion (any stage but REDUCE's first deflate time -> REDUCE): the
 *   fraction lost exceeds the adaptive threshold clamp(FL_avg + 2·FL_std,
 *   0.0001, 0.2), or the last queue delay exceeds slack·QD_median +
 *   clamp(2·slack·QD_std, 30 ms, 400 ms) while the bytes queued beyond the
 *   path's pipe exceed max(5 kB, 10 % · slack of a second of sending).
 *   The thresholds follow the delay the path normally has (median and
 *   deviation over the last reports), which lets a delay-sensing controller
 *   keep its share against loss-based cross traffic (MPRTP §IV-B: "adaptive
 *   thresholds to detect congestion and compete with loss-based algorithms");
 * - undershoot (entering REDUCE): the bottleneck point becomes the receive
 *   rate RR clamped to [RR - 2·ramp_max, 0.9·RR], the target that point minus
 *   the queued bytes, at least 0.6 of the point; REDUCE holds for 2·SRTT
 *   and goes to KEEP once the send rate followed;
 * - KEEP -> PROBE after clamp(2·SRTT, 300 ms, 1 s) without distortion;
 * - PROBE: FRACTaL sends FEC at target/monitoring-interval to test the path
 *   (the monitoring interval 2..14 packets grows near the bottleneck). Our
 *   engine's FEC belongs to the FEC policy (src/fec), so here the probe is
 *   the monitoring time itself (the approve interval, 0.2..1 s, longer near
 *   the bottleneck) without a distortion (a queue delay above slack·median +
 *   clamp(slack·std, 30, 400) ms; gst-mprtp's other two distortion tests,
 *   RR·1.1 < SR and the extra bytes beyond one SRTT, are not used: the
 *   RR test fired on frame-burst noise against GCC video); a distortion
 *   alleviates
 *   the target to min(target, RR) - clamp(10 % target, ramp_min, ramp_max)
 *   and goes back to KEEP;
 * - INCREASE: the target grows by what the probe tested,
 *   clamp(target / monitoring interval, 50 kbps, 200 kbps), and once the send
 *   rate reached it for an approve interval goes back to PROBE.
 * `slack` is 2 at the bottleneck point and 1 far from it (FRACTaL's
 * sensitivity): near the rate that congested the path last time the
 * detector is more tolerant, far below it more sensitive.
 *
 * The SM maps the stages to path states (MPRTP §IV-A): REDUCE -> congested,
 * INCREASE -> underused, KEEP and PROBE -> stable, where SR_stable is
 * updated. SR_estimated is FRACTaL's target. Both go to the sender's
 * {@link FractalCoupler} (src/cc/fractal-mrcm.ts), which runs Algorithm 1 over
 * all subflows; {@link FractalEstimator.targetRateBps} is the coupler's answer
 * (SR_allocated turned into the transient rate of Eq. 1). Alone (no shared
 * coupler) the estimator is plain single-path FRACTaL.
 *
 * Constants (ramp 50-200 kbps, approve 0.2-1 s, monitoring 2-14, FL 0.2,
 * QD 30-400 ms, 10 reports of warm-up) are those of the authors' GStreamer
 * implementation (gst-mprtp plugins/fractalsubctrler.c). I/O-free: time only
 * comes as `nowUs` arguments (µs, sender clock).
 */
import { AckedBitrateEstimator } from './acked-bitrate.js';
import { FractalCoupler, type SubflowPathState } from './fractal-mrcm.js';
import { RttEstimator, rttFromReport } from './rtt.js';
import { SentPacketHistory } from './sent-history.js';
import type { BandwidthEstimator, EstimatorStats, PathReport, SentPacketInfo } from './types.js';

/** FRACTaL's inner stage. */
export type FractalStage = 'reduce' | 'keep' | 'probe' | 'increase';

/** Configuration of {@link FractalEstimator}; rates in bps. */
export interface FractalConfig {
  /** Initial target (bps). Default 1_000_000. */
  startBps: number;
  /** Floor of the target (bps). Default 100_000. */
  minBps: number;
  /** Ceiling of the target (bps). Default 50_000_000. */
  maxBps: number;
  /** Smallest ramp-up step (bps). Default 50_000. */
  rampMinBps: number;
  /** Largest ramp-up step (bps). Default 200_000. */
  rampMaxBps: number;
  /** Reports measured before the state machine runs. Default 10. */
  warmupReports: number;
  /** With bytes in flight and no report for max(this, 3 SRTT) the target is cut once to 0.9 · min(SR, RR) (ms). Default 1500. */
  feedbackTimeoutMs: number;
  /**
   * Before its first report a subflow starts at startBps / (live subflows of
   * its sender), so the multipath flow as a whole starts like one
   * single-path flow (MPRTP §II-B/§III-B: the MPTCP fairness principles of
   * Wischik et al., NSDI 2011, "do no harm"; §V-A: "FRACtaL starts
   * conservatively"). false: every subflow starts at startBps. Default
   * false: `fairness`, 6 seeds, it raised rtp-shared (Jain mean 0.85 -> 0.95)
   * but lowered tcp-cubic (0.97 -> 0.94), tcp-reno (0.99 -> 0.96), rtp-both
   * (0.91 -> 0.87) and fractal-both (0.95 -> 0.85, its single-path FRACTaL
   * competitors start at the whole rate): where a flow starts decides much
   * of where it ends within 120 s.
   */
  splitStart: boolean;
  /**
   * Smallest margin (ms) of the distortion threshold, the one PROBE and
   * INCREASE test a step against (a queue delay above slack·QD_median +
   * max(this, slack·QD_std) withdraws the step or alleviates the target).
   * Undefined: 30 ms, the congestion threshold's floor (gst-mprtp). FRACTaL
   * and MPRTP leave fairness to other single-path controllers out of scope
   * (MPRTP §IV-B); a delay-gradient controller such as GCC reads a step
   * that raises the queue by 10-30 ms as overuse (draft-ietf-rmcat-gcc-02
   * §5.4: adaptive threshold of a few ms on the trendline) and backs off to
   * 0.85 x its acked rate, so with a 30 ms floor the steps FRACTaL keeps are
   * the ones GCC yields to. A lower floor keeps FRACTaL's steps below that.
   * Opt-in: `fairness`, 6 seeds, 15 ms raised the GCC setups' worst seed
   * (rtp-shared 0.785 -> 0.895, rtp-both 0.761 -> 0.902) but lowered the
   * check half on seeds 4-6 (rtp-both mean 0.947 -> 0.921, tcp-reno
   * 0.984 -> 0.977, fractal-both worst 0.909 -> 0.890).
   */
  distortionMarginMs?: number;
  /**
   * With {@link distortionMarginMs}: the floor is distortionMarginMs · slack
   * (slack = FRACTaL's sensitivity, 1 far from the bottleneck point .. 2 at
   * it), as the threshold's other two terms (slack · QD_median, slack ·
   * QD_std) are: far from the bottleneck point, where FRACTaL takes its
   * large, quickly approved steps, the floor is distortionMarginMs; at the
   * bottleneck point twice that (30 ms, gst-mprtp's floor, for 15). Not in
   * gst-mprtp (its floor is 30 ms at any slack). Opt-in, default false (the
   * floor is distortionMarginMs everywhere): `fairness`, 6 seeds, with
   * distortionMarginMs=15, Jain mean / worst seed: rtp-shared 0.853 / 0.785
   * -> 0.925 / 0.839, rtp-both 0.902 / 0.761 -> 0.929 / 0.850,
   * fractal-shared 0.984 / 0.966 -> 0.991 / 0.986, but tcp-cubic
   * 0.959 / 0.937 -> 0.949 / 0.934, tcp-reno 0.981 / 0.963 -> 0.977 / 0.960,
   * fractal-both 0.949 / 0.909 -> 0.943 / 0.876.
   */
  distortionMarginScales?: boolean;
  /**
   * Coupled increase across the subflows of one sender (MPTCP's linked
   * increase, RFC 6356 §3; MPRTP's Algorithm 1 couples only the allocation
   * of simultaneous ramp-ups, which leaves a subflow that ramps alone
   * uncoupled): the step INCREASE takes, clamp(target / monitoring interval,
   * rampMinBps, rampMaxBps), is scaled by a factor f of the subflow's share
   * s_i = SR_stable_i / Σ SR_stable over the n live subflows of its sender:
   * - 'share': f = min(1, n · s_i): a subflow with less than an equal share
   *   of the total (its path is shared with cross traffic that holds the
   *   rest) ramps proportionally gentler; with equal shares it is plain FRACTaL;
   * - 'lia': f = min(1, max_j s_j · s_i), RFC 6356's per-subflow increase
   *   with equal RTTs, alpha · cwnd_i / cwnd_total = (max_j r_j / Σ r) ·
   *   (r_i / Σ r) of an uncoupled flow's (1/n² of it with equal shares).
   * f is kept in [0.05, 1]; single path (n = 1): f = 1. Undefined: 'off'
   * (uncoupled steps, the MPRTP paper's). Opt-in: `fairness`, Jain mean /
   * worst seed over seeds 1-6 (docs/results.md `fair6`), 'share' with
   * {@link coupledIncreaseMaxLoss} = 0: rtp-shared 0.853 / 0.785 ->
   * 0.961 / 0.861, rtp-both 0.902 / 0.761 -> 0.944 / 0.841, tcp-cubic
   * 0.958 / 0.936 (same), tcp-reno 0.979 / 0.961 -> 0.981 / 0.967,
   * fractal-shared 0.984 / 0.966 -> 0.985 / 0.953, but fractal-both
   * 0.949 / 0.909 -> 0.934 / 0.901 (the multipath flow is the weaker one
   * there and its smaller subflow ramps gentler). 'lia' (seeds 1-3):
   * rtp-shared 0.992, but fractal-both 0.847 and rtp-both 0.890: the paper's
   * Jain normalises the multipath flow by the sum of its paths, so taking
   * no more than one single-path flow (RFC 6356 §2 goal 2) is unfair by it
   * wherever every path is shared.
   */
  coupledIncrease?: 'off' | 'share' | 'lia';
  /**
   * With {@link coupledIncrease}: the coupled factor applies only while the
   * subflow's mean fraction lost over its statistics window (the last 64
   * loss windows of >= 10 packets) is at most this (fraction, 0..1; 0: no
   * loss at all); above it the path is shared with a flow that fills the
   * queue to overflow (TCP Reno / CUBIC: 1-8 % of our packets on the shared
   * path dropped at the queue; GCC video: < 0.03 %), and the subflow takes FRACTaL's
   * uncoupled steps (FRACTaL's own aim, MPRTP §IV-B: "compete with
   * loss-based algorithms"). Without it a subflow squeezed by bulk TCP
   * ratchets down (smaller share, smaller steps: tcp-cubic seeds 1-3
   * 0.959 -> 0.925). Undefined: no loss gate.
   */
  coupledIncreaseMaxLoss?: number;
}

/** Defaults of {@link FractalConfig}. */
export const DEFAULT_FRACTAL_CONFIG: Readonly<FractalConfig> = Object.freeze({
  startBps: 1_000_000,
  minBps: 100_000,
  maxBps: 50_000_000,
  rampMinBps: 50_000,
  rampMaxBps: 200_000,
  warmupReports: 10,
  feedbackTimeoutMs: 1500,
  splitStart: false,
});

/** Loss threshold bounds (fraction). */
const FL_MIN_TH = 0.0001;
const FL_MAX_TH = 0.2;
/** Queue-delay threshold margin bounds (ms). */
const QD_MIN_MARGIN_MS = 30;
const QD_MAX_MARGIN_MS = 400;
/** Extra (queued) bytes needed for a congestion verdict (bytes). */
const MIN_EXTRA_BYTES = 5000;
/** Reports kept for the median/deviation statistics (~3-6 s at 50-100 ms reports). */
const STAT_WINDOW = 64;
/** Approve interval bounds (µs). */
const APPROVE_MIN_US = 200_000;
const APPROVE_MAX_US = 1_000_000;
/** Monitoring interval bounds (packets per FEC packet). */
const MON_MIN = 2;
const MON_MAX = 14;
/** Base one-way delay: minimum over this long (µs), kept in two halves. */
const BASE_WINDOW_US = 10_000_000;
/** Send rate window (µs). */
const SEND_WINDOW_US = 500_000;
/** Half-life of lossRate() after the last loss window (µs). */
const LOSS_HALF_LIFE_US = 1_000_000;
/** Larger "packets" are rejected as garbage (bytes). */
const MAX_PACKET_BYTES = 1 << 24;

/** Fixed-size ring of numbers with mean, deviation and median. */
class Ring {
  private readonly buf: Float64Array;
  private n = 0;
  private at = 0;
  constructor(size: number) {
    this.buf = new Float64Array(size);
  }
  push(x: number): void {
    this.buf[this.at] = x;
    this.at = (this.at + 1) % this.buf.length;
    if (this.n < this.buf.length) this.n++;
  }
  size(): number {
    return this.n;
  }
  mean(): number {
    let s = 0;
    for (let i = 0; i < this.n; i++) s += this.buf[i];
    return this.n > 0 ? s / this.n : 0;
  }
  std(): number {
    if (this.n < 2) return 0;
    const m = this.mean();
    let s = 0;
    for (let i = 0; i < this.n; i++) s += (this.buf[i] - m) ** 2;
    return Math.sqrt(s / (this.n - 1));
  }
  median(): number {
    if (this.n === 0) return 0;
    const a = Array.from(this.buf.subarray(0, this.n)).sort((x, y) => x - y);
    const h = this.n >> 1;
    return this.n % 2 === 1 ? a[h] : (a[h - 1] + a[h]) / 2;
  }
}

const clamp = (lo: number, hi: number, x: number): number => Math.min(hi, Math.max(lo, x));

/** Counters and internals of {@link FractalEstimator} beyond {@link EstimatorStats}. */
export interface FractalStats extends EstimatorStats {
  stage: FractalStage;
  pathState: SubflowPathState;
  /** SR_estimated, SR_stable, SR_allocated (bps). */
  estimatedBps: number;
  stableBps: number;
  allocatedBps: number;
  /** Bottleneck point (bps), 0 before the first congestion. */
  bottleneckBps: number;
  /** Last report's queue delay and the window median (ms). */
  queueDelayMs: number;
  queueDelayMedianMs: number;
  /** Send rate (bps) over the last 0.5 s. */
  sendRateBps: number;
  reports: number;
  reportsInvalid: number;
  sentInvalid: number;
  congestions: number;
  distortions: number;
  increases: number;
  feedbackTimeouts: number;
}

/**
 * FRACTaL bandwidth estimator for one subflow, coupled to the other subflows
 * of its sender through a {@link FractalCoupler} (see the module doc).
 * Never throws on data; malformed input is counted in {@link stats}.
 */
export class FractalEstimator implements BandwidthEstimator {
  private readonly cfg: FractalConfig;
  private readonly coupler: FractalCoupler;
  private readonly id: number;
  private readonly history = new SentPacketHistory(8192);
  private readonly rtt = new RttEstimator({ initialRttMs: 200 });
  private readonly acked = new AckedBitrateEstimator();
  private readonly qd = new Ring(STAT_WINDOW);
  private readonly fl = new Ring(STAT_WINDOW);

  private stage: FractalStage = 'keep';
  /** SR_estimated (FRACTaL's target). */
  private target: number;
  private stable: number;
  private bottleneck = 0;
  private lastQdMs = 0;
  private lastFl = 0;
  private flExpected = 0;
  private flLost = 0;
  private baseOwd = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
  private baseSinceUs = Number.NaN;
  private reports = 0;
  private lastReport: number | undefined;
  private lastDistortedUs = Number.NEGATIVE_INFINITY;
  private lastSettledUs = Number.NEGATIVE_INFINITY;
  private stageSinceUs = 0;
  private approveSinceUs: number | undefined;
  private increment = 0;
  private timedOut = false;
  private lossRateEwma = 0;
  private lossWindowUs = 0;
  private lastTickUs = 0;
  // Send rate: bytes per 50 ms bucket over the last SEND_WINDOW_US.
  private readonly sendBuckets = new Float64Array(SEND_WINDOW_US / 50_000);
  private sendBucketAt = Number.NaN;
  private lastRollUs = 0;
  private readonly c = { reportsInvalid: 0, sentInvalid: 0, congestions: 0, distortions: 0, increases: 0, feedbackTimeouts: 0 };

  /**
   * @param config partial {@link FractalConfig}
   * @param coupler the sender's MRCM shared by its subflows (default: a private one: single-path FRACTaL)
   * @throws RangeError for non-finite or inconsistent rates
   */
  constructor(config: Partial<FractalConfig> = {}, coupler?: FractalCoupler) {
    const c: FractalConfig = { ...DEFAULT_FRACTAL_CONFIG, ...config };
    for (const k of ['startBps', 'minBps', 'maxBps', 'rampMinBps', 'rampMaxBps', 'feedbackTimeoutMs'] as const) {
      if (!Number.isFinite(c[k]) || c[k] <= 0) throw new RangeError(`FractalEstimator: ${k} must be a finite number > 0, got ${c[k]}`);
    }
    if (c.distortionMarginMs !== undefined && !(Number.isFinite(c.distortionMarginMs) && c.distortionMarginMs >= 0 && c.distortionMarginMs <= QD_MAX_MARGIN_MS)) {
      throw new RangeError(`FractalEstimator: distortionMarginMs must be in [0, ${QD_MAX_MARGIN_MS}] ms, got ${c.distortionMarginMs}`);
    }
    if (c.coupledIncreaseMaxLoss !== undefined && !(c.coupledIncreaseMaxLoss >= 0 && c.coupledIncreaseMaxLoss <= 1)) {
      throw new RangeError(`FractalEstimator: coupledIncreaseMaxLoss must be a fraction in [0, 1], got ${c.coupledIncreaseMaxLoss}`);
    }
    if (c.coupledIncrease !== undefined && !['off', 'share', 'lia'].includes(c.coupledIncrease))
      throw new RangeError(`FractalEstimator: coupledIncrease must be 'off', 'share' or 'lia', got ${c.coupledIncrease}`);
    if (c.minBps > c.maxBps || c.rampMinBps > c.rampMaxBps) throw new RangeError('FractalEstimator: minBps <= maxBps and rampMinBps <= rampMaxBps required');
    this.cfg = c;
    this.target = clamp(c.minBps, c.maxBps, c.startBps);
    this.stable = this.target;
    this.coupler = coupler ?? new FractalCoupler();
    this.id = this.coupler.join(this.target, 0);
  }

  onPacketSent(p: SentPacketInfo): void {
    if (!p || !Number.isFinite(p.sendTimeUs) || !(p.sizeBytes > 0) || p.sizeBytes > MAX_PACKET_BYTES || !Number.isInteger(p.pathSeq) || p.pathSeq < 0) {
      this.c.sentInvalid++;
      return;
    }
    if (!this.history.add(p.pathSeq, p.sendTimeUs, Math.ceil(p.sizeBytes))) {
      this.c.sentInvalid++;
      return;
    }
    this.rollSend(p.sendTimeUs);
    this.sendBuckets[Math.floor(p.sendTimeUs / 50_000) % this.sendBuckets.length] += p.sizeBytes;
  }

  onReport(report: PathReport, nowUs: number): void {
    if (Number.isFinite(nowUs)) this.shareStart(nowUs);
    if (!Number.isFinite(nowUs) || !this.history.applyReport(report)) {
      this.c.reportsInvalid++;
      return;
    }
    const h = this.history;
    const o = h.outcome;
    this.reports++;
    this.lastReport = nowUs;
    this.timedOut = false;
    this.rollSend(nowUs);
    // Queue delay: one-way delay over its 10 s minimum (the clock offset cancels).
    if (Number.isNaN(this.baseSinceUs) || nowUs - this.baseSinceUs > BASE_WINDOW_US / 2) {
      this.baseOwd = [this.baseOwd[1], Number.POSITIVE_INFINITY];
      this.baseSinceUs = nowUs;
    }
    let qdSum = 0;
    for (const i of h.newIdx) {
      const owd = h.arrivalUs[i] - h.sendUs[i];
      if (owd < this.baseOwd[1]) this.baseOwd[1] = owd;
      this.acked.update(h.arrivalUs[i], h.sizes[i]);
    }
    const base = Math.min(this.baseOwd[0], this.baseOwd[1]);
    for (const i of h.newIdx) qdSum += h.arrivalUs[i] - h.sendUs[i] - base;
    if (h.newIdx.length > 0) {
      this.lastQdMs = qdSum / h.newIdx.length / 1000;
      this.qd.push(this.lastQdMs);
    }
    if (!Number.isNaN(h.lastArrivalUs)) {
      const s = rttFromReport(nowUs, h.lastArrivalSendUs, h.lastArrivalUs, Number(report.reportTimeUs));
      if (s !== undefined) this.rtt.onSample(s, nowUs);
    }
    // Fraction lost per >= 10 resolved packets.
    this.flExpected += o.newlyReceived + o.newlyLost;
    this.flLost += Math.max(0, o.newlyLost - o.recovered);
    if (this.flExpected >= 10) {
      this.lastFl = Math.min(1, this.flLost / this.flExpected);
      this.fl.push(this.lastFl);
      this.lossRateEwma = this.lossRate() + 0.1 * (this.lastFl - this.lossRate());
      this.lossWindowUs = nowUs;
      this.flExpected = 0;
      this.flLost = 0;
    }
    if (this.reports > this.cfg.warmupReports) this.runStage(nowUs);
    else this.approveSinceUs = undefined;
    this.publish(nowUs);
  }

  onTick(nowUs: number): void {
    if (!Number.isFinite(nowUs)) return;
    if (nowUs > this.lastTickUs) this.lastTickUs = nowUs;
    this.coupler.touch(this.id, nowUs);
    this.shareStart(nowUs);
    this.rollSend(nowUs);
    this.coupler.setActual(this.id, this.sendRateBps());
    // Backward congestion (no reports while sending): cut once to 0.9 min(SR, RR).
    const since = this.lastReport ?? 0;
    const limitUs = Math.max(this.cfg.feedbackTimeoutMs * 1000, 3 * this.rtt.srttMs() * 1000);
    if (!this.timedOut && this.history.inflightBytes() > 0 && nowUs - since > limitUs) {
      this.timedOut = true;
      this.c.feedbackTimeouts++;
      const rr = this.acked.bitrateBps() ?? Number.POSITIVE_INFINITY;
      this.setTarget(0.9 * Math.min(this.sendRateBps() || this.target, rr, this.target));
      this.stable = Math.min(this.stable, this.target);
      this.enter('keep', nowUs);
      this.lastDistortedUs = nowUs;
      this.publish(nowUs);
    }
  }

  /** SR_transient scaled to Σ SR_allocated (the coupler's answer), clamped to [minBps, maxBps]. */
  targetRateBps(): number {
    return clamp(this.cfg.minBps, this.cfg.maxBps, this.coupler.targetBps(this.id) || this.target);
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

  /**
   * Loss fraction 0..1: EWMA over 10-packet windows, fading with a 1 s
   * half-life from the last window (a path that carries nothing is not kept
   * "lossy" for good by stale reports).
   */
  lossRate(): number {
    const ageUs = Math.max(0, this.lastTickUs - this.lossWindowUs);
    return this.lossRateEwma * 2 ** (-ageUs / LOSS_HALF_LIFE_US);
  }

  inflightBytes(): number {
    return this.history.inflightBytes();
  }

  lastReportUs(): number | undefined {
    return this.lastReport;
  }

  /** The SM's path state (MPRTP §IV-A): REDUCE -> congested, INCREASE -> underused, else stable. */
  pathState(): SubflowPathState {
    return this.stage === 'reduce' ? 'congested' : this.stage === 'increase' ? 'underused' : 'stable';
  }

  stats(): FractalStats {
    const state = this.pathState();
    return {
      targetRateBps: this.targetRateBps(),
      delayBasedBps: this.target,
      lossBasedBps: this.target,
      ackedRateBps: this.acked.bitrateBps(),
      srttMs: this.rtt.srttMs(),
      minRttMs: this.rtt.minRttMs(),
      lossRate: this.lossRate(),
      trend: this.lastQdMs,
      threshold: this.distortionThreshold(),
      bandwidthUsage: state === 'congested' ? 'overusing' : state === 'underused' ? 'underusing' : 'normal',
      rateControlState: this.stage === 'reduce' ? 'decrease' : this.stage === 'increase' ? 'increase' : 'hold',
      stage: this.stage,
      pathState: state,
      estimatedBps: this.target,
      stableBps: this.stable,
      allocatedBps: this.coupler.allocatedBps(this.id),
      bottleneckBps: this.bottleneck,
      queueDelayMs: this.lastQdMs,
      queueDelayMedianMs: this.qd.median(),
      sendRateBps: this.sendRateBps(),
      reports: this.reports,
      ...this.c,
    };
  }

  // ------------------------------------------------------------------ FRACTaL stages

  private runStage(now: number): void {
    const srttUs = this.rtt.srttMs() * 1000;
    switch (this.stage) {
      case 'reduce': {
        if (now - this.stageSinceUs < 2 * srttUs) return; // deflate time
        if (this.congestion()) {
          this.undershoot(now);
          return;
        }
        // Approved once the send rate followed the cut.
        if (this.sendRateBps() <= this.allocated() * 1.1 || now - this.stageSinceUs > 4 * srttUs + APPROVE_MAX_US) {
          if (this.bottleneck > 0 && this.target < this.bottleneck - 2 * this.cfg.rampMinBps) this.setTarget(this.target + this.cfg.rampMinBps);
          this.settle(now);
          this.enter('keep', now);
        }
        return;
      }
      case 'keep': {
        if (this.congestion()) {
          this.undershoot(now);
          return;
        }
        const hold = clamp(300_000, 1_000_000, 2 * srttUs);
        if (now - Math.max(this.lastSettledUs, this.lastDistortedUs, this.stageSinceUs) < hold) return;
        this.enter('probe', now);
        return;
      }
      case 'probe': {
        if (this.congestion()) {
          this.undershoot(now);
          return;
        }
        if (this.distortion()) {
          this.noteDistortion(now);
          const rr = this.acked.bitrateBps() ?? this.target;
          this.setTarget(Math.min(this.target, rr) - clamp(this.cfg.rampMinBps, this.cfg.rampMaxBps, 0.1 * this.target));
          this.settle(now);
          this.enter('keep', now);
          return;
        }
        if (now - this.stageSinceUs < this.approveIntervalUs()) return;
        this.increment = this.increaseFactor() * clamp(this.cfg.rampMinBps, this.cfg.rampMaxBps, this.target / this.monitoringInterval());
        this.setTarget(this.target + this.increment);
        this.c.increases++;
        this.enter('increase', now);
        return;
      }
      case 'increase': {
        if (this.congestion()) {
          this.undershoot(now);
          return;
        }
        if (this.distortion()) {
          this.noteDistortion(now);
          this.setTarget(this.target - this.increment);
          this.settle(now);
          this.enter('keep', now);
          return;
        }
        // Approved once the send rate reached the allocation for an approve interval.
        // (FRACTaL: half the step; also 10 % of the allocation: an encoder's output scatters around its target.)
        const boundary = Math.max(0.5 * clamp(this.cfg.rampMinBps, this.cfg.rampMaxBps, this.increment), 0.1 * this.allocated());
        if (this.sendRateBps() < this.allocated() - boundary) {
          this.approveSinceUs = undefined;
          return;
        }
        this.approveSinceUs ??= now;
        if (now - this.approveSinceUs < this.approveIntervalUs()) return;
        this.settle(now);
        this.enter('probe', now);
        return;
      }
    }
  }

  /** SR_allocated of this subflow (bps). */
  private allocated(): number {
    return this.coupler.allocatedBps(this.id);
  }

  /** The subflow settled: SR_stable and SR_estimated become what it was allocated and achieved. */
  private settle(now: number): void {
    const a = Math.min(this.target, this.allocated());
    this.setTarget(a);
    this.stable = this.target;
    this.lastSettledUs = now;
  }

  private enter(stage: FractalStage, now: number): void {
    this.stage = stage;
    this.stageSinceUs = now;
    this.approveSinceUs = undefined;
  }

  private noteDistortion(now: number): void {
    this.c.distortions++;
    this.lastDistortedUs = now;
  }

  private undershoot(now: number): void {
    this.c.congestions++;
    const rr = this.acked.bitrateBps() ?? Math.min(this.target, this.sendRateBps() || this.target);
    this.bottleneck = clamp(rr - 2 * this.cfg.rampMaxBps, 0.9 * rr, rr);
    const extraBits = this.extraBytes() * 8;
    this.setTarget(Math.max(this.bottleneck - extraBits, 0.6 * this.bottleneck));
    this.stable = Math.min(this.stable, this.target);
    this.lastDistortedUs = now;
    this.enter('reduce', now);
  }

  /** 0 at the bottleneck point, 1 far (>= 25 %) from it or before the first congestion. */
  private distanceFromBottleneck(): number {
    if (!(this.bottleneck > 0)) return 1;
    return clamp(0, 1, Math.abs(this.target - this.bottleneck) / (0.25 * this.bottleneck));
  }

  /** FRACTaL's sensitivity: 2 at the bottleneck, 1 far from it. */
  private slack(): number {
    const a = this.distanceFromBottleneck();
    return 1 * a + 2 * (1 - a);
  }

  private qdThreshold(marginScale: number, minMarginMs = QD_MIN_MARGIN_MS): number {
    const s = this.slack();
    return s * this.qd.median() + clamp(minMarginMs, QD_MAX_MARGIN_MS, marginScale * s * this.qd.std());
  }

  /** Bytes in flight beyond what the pipe holds at the receive rate (bytes). */
  private extraBytes(): number {
    const rr = this.acked.bitrateBps() ?? this.sendRateBps();
    const pipe = (rr / 8) * (this.rtt.minRttMs() / 1000);
    return Math.max(0, this.history.inflightBytes() - pipe);
  }

  private congestion(): boolean {
    const flTh = clamp(FL_MIN_TH, FL_MAX_TH, this.fl.mean() + 2 * this.fl.std());
    if (this.fl.size() > 0 && this.lastFl > flTh) return true;
    if (this.lastQdMs < this.qdThreshold(2)) return false;
    const ebTh = Math.max(MIN_EXTRA_BYTES, (this.sendRateBps() / 8) * this.slack() * 0.1);
    return this.extraBytes() >= ebTh;
  }

  private distortion(): boolean {
    return this.lastQdMs > this.distortionThreshold();
  }

  /** The queue delay (ms) above which a step is a distortion ({@link FractalConfig.distortionMarginMs}, {@link FractalConfig.distortionMarginScales}). */
  private distortionThreshold(): number {
    const m = this.cfg.distortionMarginMs;
    return this.qdThreshold(1, m !== undefined && this.cfg.distortionMarginScales ? Math.min(QD_MAX_MARGIN_MS, m * this.slack()) : m);
  }

  /**
   * Approve interval (µs): 0.2 s far from the bottleneck .. 1 s at it, and at
   * least one SRTT plus a report interval (100 ms): a step is only approved
   * once the reports can show what it did to the queue.
   */
  private approveIntervalUs(): number {
    const a = this.distanceFromBottleneck();
    return Math.max(APPROVE_MIN_US * a + APPROVE_MAX_US * (1 - a), this.rtt.srttMs() * 1000 + 100_000);
  }

  /** Monitoring interval (packets per FEC packet): 2 far from the bottleneck .. 14 at it. */
  private monitoringInterval(): number {
    const a = this.distanceFromBottleneck();
    return MON_MIN * a + MON_MAX * (1 - a);
  }

  /** {@link FractalConfig.coupledIncrease}: the factor (0, 1] of this subflow's increase step. */
  private increaseFactor(): number {
    const mode = this.cfg.coupledIncrease;
    if (mode === undefined || mode === 'off') return 1;
    const { share, maxShare, n } = this.coupler.shareOf(this.id);
    if (n <= 1) return 1;
    const maxLoss = this.cfg.coupledIncreaseMaxLoss;
    if (maxLoss !== undefined && this.fl.size() > 0 && this.fl.mean() > maxLoss) return 1;
    return clamp(0.05, 1, mode === 'share' ? n * share : maxShare * share);
  }

  private setTarget(bps: number): void {
    this.target = clamp(this.cfg.minBps, this.cfg.maxBps, Number.isFinite(bps) ? bps : this.target);
  }

  /** {@link FractalConfig.splitStart}: until the first valid report the start rate is shared by the live subflows. */
  private shareStart(now: number): void {
    if (!this.cfg.splitStart || this.reports > 0) return;
    const share = clamp(this.cfg.minBps, this.cfg.maxBps, this.cfg.startBps / Math.max(1, this.coupler.size()));
    if (share === this.target) return;
    this.target = share;
    this.stable = share;
    this.publish(now);
  }

  /** Tell the MRCM (Algorithm 1 runs there over all subflows). */
  private publish(now: number): void {
    this.coupler.update(this.id, { estimatedBps: this.target, stableBps: this.stable, state: this.pathState(), rttMs: this.rtt.srttMs(), actualBps: this.sendRateBps() }, now);
  }

  private rollSend(nowUs: number): void {
    if (nowUs > this.lastRollUs) this.lastRollUs = nowUs;
    const b = Math.floor(nowUs / 50_000);
    if (Number.isNaN(this.sendBucketAt)) {
      this.sendBucketAt = b;
      return;
    }
    if (b <= this.sendBucketAt) return;
    const n = this.sendBuckets.length;
    for (let k = this.sendBucketAt + 1; k <= Math.min(b, this.sendBucketAt + n); k++) this.sendBuckets[k % n] = 0;
    this.sendBucketAt = b;
  }

  /** Send rate over the last 0.45-0.5 s (bps): the full buckets and the current one, over the time they span. */
  private sendRateBps(): number {
    let s = 0;
    for (const x of this.sendBuckets) s += x;
    if (Number.isNaN(this.sendBucketAt)) return 0;
    const spanUs = SEND_WINDOW_US - 50_000 + Math.max(1, this.lastRollUs - this.sendBucketAt * 50_000);
    return (s * 8 * 1e6) / spanUs;
  }
}
