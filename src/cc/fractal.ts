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
 * Departures from the paper's sender, on by default (docs/results.md
 * `fair7`): {@link FractalConfig.fairShare} (a subflow under its fair share
 * of its path ramps as a single-path flow, outside Algorithm 1's shared
 * ramp-up, with steps sized from its fair share; above it the steps are
 * coupled by RFC 6356's linked increase, {@link FractalConfig.coupledIncrease}
 * 'lia', and withdrawn at a 15 ms queue-delay margin unless the path loses
 * packets). `{ coupledIncrease: 'off', fairShare: false }` is the paper's.
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
   * f is kept in [0.05, 1]; single path (n = 1): f = 1. 'off' (or
   * undefined): uncoupled steps, the MPRTP paper's. Default 'lia', with
   * {@link fairShare} (the factor applies only while the subflow is above its
   * fair share of its path) and {@link coupledIncreaseMaxLoss} = 0
   * (docs/results.md `fair7`). Without fairShare, `fairness`, Jain mean /
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
   * 0.959 -> 0.925). Default 0 (any loss in the window opens the gate);
   * undefined: no loss gate. With {@link fairShare} the gate also keeps
   * FRACTaL's own distortion floor above the fair share.
   */
  coupledIncreaseMaxLoss?: number;
  /**
   * Fair share per path (not in the MPRTP paper): each subflow of a multipath
   * sender aims at the point where the multipath flow's normalised
   * throughput equals that of a single-path flow sharing its path, the point
   * the paper's fairness metric rewards (§V-B: Jain's index over throughputs
   * normalised by the capacity of the paths each flow uses, the multipath
   * flow's by the sum). With X = Σ RR_j / Σ C_j (the sender's receive rates
   * over its paths' capacities) and u_i = RR_i / C_i, the flow that shares
   * path i gets (C_i - RR_i) / C_i = 1 - u_i when the path is full, so the
   * subflow is under its fair share while X + u_i < 1, and the rate it may
   * still gain is gap_i = (1 - X - u_i) / (1 / C_i + 1 / Σ C_j). Then:
   * - under it (gap_i > 0) the subflow ramps as a single-path flow at its fair
   *   share would: Algorithm 1 leaves it out of the shared ramp-up (its
   *   SR_allocated is its SR_estimated), {@link coupledIncrease} does not
   *   scale its steps, and the INCREASE step is sized from RR_i + gap_i
   *   instead of the target (FRACTaL's step, target / monitoring interval, is
   *   proportional to the rate near the bottleneck point: a multiplicative
   *   increase, which keeps whatever ratio two flows have, Chiu and Jain
   *   1989), at most gap_i;
   * - above it (gap_i < 0) the subflow is coupled as {@link coupledIncrease}
   *   says and a step is withdrawn at a queue delay {@link fairShareMarginMs}
   *   over the median (a delay-gradient competitor such as GCC reads a few
   *   ms of queue growth as over-use, draft-ietf-rmcat-gcc-02 §5.4), unless
   *   the loss gate {@link coupledIncreaseMaxLoss} is open (a loss-based
   *   competitor keeps a standing queue; FRACTaL's own thresholds apply).
   * C_i is the largest rate at which a run of 6 consecutive packets of the
   * subflow reached the receiver over the last 5-10 s (packet dispersion:
   * Keshav, SIGCOMM 1991; Dovrolis, Ramanathan and Moore, INFOCOM 2001): it
   * is the bottleneck's rate when the subflow's packets queue behind each
   * other (a pacer's or a frame's burst), and only the subflow's own send
   * rate when they never do, so u_i then reads high (the subflow counts as
   * nearer its fair share). Single path (n = 1): no effect. Default true;
   * false with coupledIncrease 'off' is the MPRTP paper's sender. `fairness`,
   * Jain mean / worst seed over seeds 1-6 (docs/results.md `fair7`), the
   * paper's sender -> the defaults: rtp-shared 0.853 / 0.785 -> 0.991 / 0.974,
   * rtp-both 0.902 / 0.761 -> 0.970 / 0.959, tcp-cubic 0.958 / 0.936 -> 0.961 / 0.938, tcp-reno
   * 0.979 / 0.961 -> 0.993 / 0.981, fractal-shared (paper Table VI) 0.984 / 0.966 ->
   * 0.992 / 0.971, fractal-both (Table VII) 0.949 / 0.909 -> 0.979 / 0.957.
   */
  fairShare?: boolean;
  /**
   * With {@link fairShare}: the smallest margin (ms) of the distortion
   * threshold while the subflow is above its fair share (as
   * {@link distortionMarginMs}, which applies everywhere). Default 15.
   */
  fairShareMarginMs?: number;
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
  coupledIncrease: 'lia',
  coupledIncreaseMaxLoss: 0,
  fairShare: true,
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
/** Packet gaps per dispersion sample ({@link FractalConfig.fairShare}). */
const DISPERSION_GAPS = 5;
/** Distortion floor above the fair share ({@link FractalConfig.fairShareMarginMs}) (ms). */
const FAIR_SHARE_MARGIN_MS = 15;
/** Capacity from dispersion: largest sample over this long (µs), kept in two halves. */
const CAP_WINDOW_US = 10_000_000;
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
  /** {@link FractalConfig.fairShare}: the path's capacity from packet dispersion (bps, 0: not measured) and the rate still to gain before the fair share (bps; negative above it, undefined when off or unknown). */
  pathCapacityBps: number;
  fairGapBps: number | undefined;
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
  // Path capacity from packet dispersion: the current run of consecutive packets, the best rate per half window.
  private runIdx = -1;
  private runFirstUs = 0;
  private runLastUs = 0;
  private runBytes = 0;
  private runGaps = 0;
  private readonly capBps = [0, 0];
  private capSinceUs = Number.NaN;
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
    if (c.fairShareMarginMs !== undefined && !(Number.isFinite(c.fairShareMarginMs) && c.fairShareMarginMs >= 0 && c.fairShareMarginMs <= QD_MAX_MARGIN_MS)) {
      throw new RangeError(`FractalEstimator: fairShareMarginMs must be in [0, ${QD_MAX_MARGIN_MS}] ms, got ${c.fairShareMarginMs}`);
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
    if (this.cfg.fairShare) this.measureDispersion(nowUs);
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
      pathCapacityBps: this.capacityBps(),
      fairGapBps: this.fairGapBps(),
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
        this.increment = this.increaseFactor() * clamp(this.cfg.rampMinBps, this.cfg.rampMaxBps, this.stepBaseBps() / this.monitoringInterval());
        const gap = this.fairGapBps();
        if (gap !== undefined && gap > 0) this.increment = Math.min(this.increment, gap);
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
    if ((this.fairGapBps() ?? 0) < 0 && !this.lossy()) return this.qdThreshold(1, this.cfg.fairShareMarginMs ?? FAIR_SHARE_MARGIN_MS);
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

  /** {@link FractalConfig.coupledIncreaseMaxLoss}: the statistics window shows more loss than the gate allows. */
  private lossy(): boolean {
    const maxLoss = this.cfg.coupledIncreaseMaxLoss;
    return maxLoss !== undefined && this.fl.size() > 0 && this.fl.mean() > maxLoss;
  }

  /** {@link FractalConfig.coupledIncrease}: the factor (0, 1] of this subflow's increase step. */
  private increaseFactor(): number {
    const mode = this.cfg.coupledIncrease;
    if (mode === undefined || mode === 'off') return 1;
    const { share, maxShare, n } = this.coupler.shareOf(this.id);
    if (n <= 1 || this.belowFairShare() || this.lossy()) return 1;
    return clamp(0.05, 1, mode === 'share' ? n * share : maxShare * share);
  }

  /** Path capacity (bps) from packet dispersion over the last 5-10 s ({@link FractalConfig.fairShare}); 0 before a measurement. */
  private capacityBps(): number {
    return Math.max(this.capBps[0], this.capBps[1]);
  }

  /** The rate INCREASE sizes its step from: the target, or under its fair share the fair-share rate RR + gap ({@link FractalConfig.fairShare}). */
  private stepBaseBps(): number {
    const gap = this.fairGapBps();
    return gap !== undefined && gap > 0 ? Math.max(this.target, (this.acked.bitrateBps() ?? 0) + gap) : this.target;
  }

  /** {@link FractalConfig.fairShare}: a subflow of a multipath sender under its fair share of its path. */
  private belowFairShare(): boolean {
    return (this.fairGapBps() ?? 0) > 0;
  }

  /**
   * {@link FractalConfig.fairShare}: the rate (bps) this subflow may still
   * gain before its path's fair point, gap_i = (1 - X - u_i) / (1 / C_i +
   * 1 / Σ C_j) (negative: above it); undefined when off, alone, or before
   * every subflow measured a capacity and this one a receive rate.
   */
  private fairGapBps(): number | undefined {
    if (!this.cfg.fairShare || this.coupler.size() <= 1) return undefined;
    const cap = this.capacityBps();
    const rr = this.acked.bitrateBps();
    if (!(cap > 0) || rr === undefined) return undefined;
    const agg = this.coupler.aggregate();
    if (agg === undefined) return undefined;
    return (1 - agg.receiveBps / agg.capacityBps - rr / cap) / (1 / cap + 1 / agg.capacityBps);
  }

  /**
   * Packet dispersion of this report's arrivals (in arrival order): a run of
   * DISPERSION_GAPS + 1 consecutive path sequence numbers gives the rate
   * bytes after the first / (last arrival - first arrival); the largest such
   * rate over the last 5-10 s is the capacity (a run interleaved with cross
   * traffic or sent slower than the bottleneck drains only gives less).
   */
  private measureDispersion(nowUs: number): void {
    const h = this.history;
    if (Number.isNaN(this.capSinceUs) || nowUs - this.capSinceUs > CAP_WINDOW_US / 2) {
      this.capBps[0] = this.capBps[1];
      this.capBps[1] = 0;
      this.capSinceUs = nowUs;
    }
    for (const i of h.newIdx) {
      const a = h.arrivalUs[i];
      if (this.runIdx >= 0 && i === (this.runIdx + 1) % h.capacity && a >= this.runLastUs) {
        this.runBytes += h.sizes[i];
        this.runGaps++;
        this.runLastUs = a;
        this.runIdx = i;
        if (this.runGaps >= DISPERSION_GAPS) {
          const span = this.runLastUs - this.runFirstUs;
          if (span > 0) this.capBps[1] = Math.max(this.capBps[1], (this.runBytes * 8e6) / span);
        } else continue;
      }
      this.runIdx = i;
      this.runFirstUs = a;
      this.runLastUs = a;
      this.runBytes = 0;
      this.runGaps = 0;
    }
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
    this.coupler.update(
      this.id,
      {
        estimatedBps: this.target,
        stableBps: this.stable,
        state: this.pathState(),
        rttMs: this.rtt.srttMs(),
        actualBps: this.sendRateBps(),
        belowFairShare: this.belowFairShare(),
        receiveBps: this.acked.bitrateBps() ?? 0,
        capacityBps: this.capacityBps(),
      },
      now,
    );
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
