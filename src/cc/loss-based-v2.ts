/**
 * LossBasedBweV2: goog_cc's maximum-likelihood loss-based bandwidth estimator.
 *
 * Feedback packets accumulate into an open observation (packets, bytes, and the
 * lost packets keyed by seq, so that a later "received" for a seq un-loses it
 * while the observation is open). It closes once the send-time span since the
 * previous observation reaches observationDurationLowerBoundMs, enters a ring of
 * observationWindowSize, and the estimator runs once: candidates
 * (candidateFactors × current best, the acked rate unless in ALR, the
 * delay-based estimate when higher) each get Newton steps on their inherent
 * loss, and the one maximising the time-weighted Bernoulli log-likelihood plus
 * a high-bandwidth bias (sign flips at lossThresholdOfHighBandwidthPreference)
 * wins. Loss model for bandwidth B and an observation sent at rate R:
 * p = inherent + (1 − inherent)·(R − B)/R if R > B, else inherent. Published:
 * max(instant lower bound, min(best, instant upper bound, delay-based
 * estimate)); the instant upper bound is instantUpperBoundBwBalanceBps /
 * (average loss − instantUpperBoundLossOffset) once the average loss exceeds
 * the offset. While loss-limited an increase is capped at maxIncreaseFactor per
 * delayedIncreaseWindowMs. States: 'increasing' ('increase-using-padding' when
 * paddingDurationMs > 0), 'decreasing' (optional HOLD), 'delay-based'.
 *
 * SOURCE: libwebrtc modules/congestion_controller/goog_cc/loss_based_bwe_v2.cc
 * and .h, mid-2024 (goodsollee/rate-intensive-webrtc @006a58c1): CreateConfig,
 * IsConfigValid, IsReady, ReadyToUseInStartPhase, GetLossBasedResult,
 * SetAcknowledgedBitrate, SetBandwidthEstimate, SetMinMaxBitrate,
 * UpdateBandwidthEstimate, IsEstimateIncreasingWhenLossLimited,
 * UpdateAverageReportedLossRatio, CalculateAverageReported{Packet,Byte}LossRatio,
 * GetMedianSendingRate, GetCandidateBandwidthUpperBound, GetCandidates,
 * GetDerivatives, GetFeasibleInherentLoss, GetInherentLossUpperBound,
 * AdjustBiasFactor, GetHighBandwidthBias, GetObjective, GetSendingRate,
 * Calculate/GetInstant{Upper,Lower}Bound, CalculateTemporalWeights,
 * NewtonsMethodUpdate, PushBackObservation, IsInLossLimitedState,
 * CanKeepIncreasingState, PaceAtLossBasedEstimate; kCongestionControllerMinBitrate
 * (5 kbps, remote_bitrate_estimator/include/bwe_defines.h).
 *
 * DEFAULTS: CreateConfig's code defaults (what runs without the
 * WebRTC-Bwe-LossBasedBweV2 field trial): the only set the source pins down;
 * deployed field-trial values are unverified. So HOLD, padding, the acked-rate
 * lower bound and rampup acceleration are off and the rampup factors (1e6) do
 * not bind.
 *
 * UNITS: rates bps (±Infinity for upstream's Plus/MinusInfinity), sizes bytes,
 * times µs of the sender clock. "Now" is the newest send time of the
 * observation that just closed; no timers, no I/O.
 *
 * DEVIATIONS: an invalid config throws RangeError (upstream disables the
 * estimator). Bad input is counted and ignored (min/max must be > 0; a NaN or
 * negative delay-based estimate counts as none). Rates are rounded to whole bps
 * where upstream's DataRate arithmetic rounds, which keeps its exact-equality
 * state checks and the +1 bps step meaningful. The lost-seq map is capped
 * (maxLostSeqEntries): a loss beyond the cap still counts but cannot be
 * un-lost, and counts again if reported lost again. A zero-size window reads
 * as 0 loss, not 0/0. As upstream, a packet reported lost then received counts
 * in both reports' packet and byte totals, and as received.
 * SKIPPED: nothing of the estimator; acting on the state (probe cap, padding
 * rate, pacing at the estimate) is the caller's.
 */

/** One packet's fate from a feedback report. */
export interface LossV2Packet {
  /** Path sequence number (uint32): identifies a packet reported lost and later received. */
  seq: number;
  /** Sender clock (µs) when the packet left. */
  sendTimeUs: number;
  sizeBytes: number;
  /** false = reported lost in this feedback. */
  received: boolean;
}

/** upstream LossBasedState: kIncreasing, kIncreaseUsingPadding, kDecreasing, kDelayBasedEstimate. */
export type LossV2State = 'increasing' | 'increase-using-padding' | 'decreasing' | 'delay-based';

/** upstream LossBasedBweV2::Config; field-trial key in brackets. */
export interface LossBasedBweV2Config {
  /** [Enabled] false: never ready, result() follows the delay-based estimate. */
  enabled: boolean;
  /** [BwRampupUpperBoundFactor] while loss-limited an increase is capped at this × acked rate; > 1. */
  bwRampupUpperBoundFactor: number;
  /** [BwRampupUpperBoundInHoldFactor] the cap while acked < bwRampupUpperBoundHoldThreshold × HOLD rate; > 1. */
  bwRampupUpperBoundInHoldFactor: number;
  /** [BwRampupUpperBoundHoldThreshold] >= 0. */
  bwRampupUpperBoundHoldThreshold: number;
  /** [BwRampupAccelMaxFactor] candidate upper bound += this × acked × (time since last reduction / maxout); >= 0, 0 = off. */
  rampupAccelerationMaxFactor: number;
  /** [BwRampupAccelMaxoutTime] > 0. */
  rampupAccelerationMaxoutTimeMs: number;
  /** [CandidateFactors] each > 0; multiply the current best estimate. */
  candidateFactors: readonly number[];
  /** [HigherBwBiasFactor] bias per kbps; >= 0. */
  higherBandwidthBiasFactor: number;
  /** [HigherLogBwBiasFactor] bias per ln(1 + kbps). */
  higherLogBandwidthBiasFactor: number;
  /** [InherentLossLowerBound] in [0, 1). */
  inherentLossLowerBound: number;
  /** [LossThresholdOfHighBandwidthPreference] average loss where the bias changes sign; in [0, 1). */
  lossThresholdOfHighBandwidthPreference: number;
  /** [BandwidthPreferenceSmoothingFactor] in (0, 1]. */
  bandwidthPreferenceSmoothingFactor: number;
  /** [InherentLossUpperBoundBwBalance] bps, > 0: inherent loss <= offset + this / B. */
  inherentLossUpperBoundBwBalanceBps: number;
  /** [InherentLossUpperBoundOffset] in [inherentLossLowerBound, 1). */
  inherentLossUpperBoundOffset: number;
  /** [InitialInherentLossEstimate] in [0, 1). */
  initialInherentLossEstimate: number;
  /** [NewtonIterations] integer > 0. */
  newtonIterations: number;
  /** [NewtonStepSize] > 0. */
  newtonStepSize: number;
  /** [AckedRateCandidate] */
  appendAcknowledgedRateCandidate: boolean;
  /** [DelayBasedCandidate] */
  appendDelayBasedEstimateCandidate: boolean;
  /** [UpperBoundCandidateInAlr] in ALR, the instant upper bound is a candidate when below the best. */
  appendUpperBoundCandidateInAlr: boolean;
  /** [ObservationDurationLowerBound] send-time span that closes an observation; > 0. */
  observationDurationLowerBoundMs: number;
  /** [ObservationWindowSize] integer >= 2 (ring of observations). */
  observationWindowSize: number;
  /** [SendingRateSmoothingFactor] weight of the previous observation's rate; in [0, 1). */
  sendingRateSmoothingFactor: number;
  /** [InstantUpperBoundTemporalWeightFactor] in (0, 1]; also weights the average loss. */
  instantUpperBoundTemporalWeightFactor: number;
  /** [InstantUpperBoundBwBalance] bps, > 0. */
  instantUpperBoundBwBalanceBps: number;
  /** [InstantUpperBoundLossOffset] in [0, 1). */
  instantUpperBoundLossOffset: number;
  /** [TemporalWeightFactor] likelihood weight per observation of age; in (0, 1]. */
  temporalWeightFactor: number;
  /** [BwBackoffLowerBoundFactor] scales the acked-rate candidate; <= 1. */
  bwBackoffLowerBoundFactor: number;
  /** [MaxIncreaseFactor] while loss-limited, at most × this per delayedIncreaseWindowMs; > 0. */
  maxIncreaseFactor: number;
  /** [DelayedIncreaseWindow] > 0. */
  delayedIncreaseWindowMs: number;
  /** [NotIncreaseIfInherentLossLessThanAverageLoss] */
  notIncreaseIfInherentLossLessThanAverageLoss: boolean;
  /** [NotUseAckedRateInAlr] */
  notUseAckedRateInAlr: boolean;
  /** [UseInStartPhase] only read by {@link LossBasedBweV2.readyToUseInStartPhase}. */
  useInStartPhase: boolean;
  /** [MinNumObservations] integer > 0. */
  minNumObservations: number;
  /** [LowerBoundByAckedRateFactor] instant lower bound = max(min bitrate, this × acked); >= 0, 0 = off. */
  lowerBoundByAckedRateFactor: number;
  /** [HoldDurationFactor] > 0 enables HOLD (300 ms, × this each time, <= 60 s); 0 = off. */
  holdDurationFactor: number;
  /** [UseByteLossRate] likelihood in kB and a spike-trimmed byte loss ratio. */
  useByteLossRate: boolean;
  /** [PaddingDuration] > 0 reports 'increase-using-padding' instead of 'increasing'; 0 = off. */
  paddingDurationMs: number;
  /** [BoundBestCandidate] reset the internal best to the published value when bounded. */
  boundBestCandidate: boolean;
  /** [PaceAtLossBasedEstimate] only read by {@link LossBasedBweV2.paceAtLossBasedEstimate}. */
  paceAtLossBasedEstimate: boolean;
  /** [MedianSendingRateFactor] byte mode: no trimming when the max-loss observation was sent at >= this × median rate. */
  medianSendingRateFactor: number;
  /** Ours: cap on the open observation's lost-seq map; integer >= 1. */
  maxLostSeqEntries: number;
}

export const DEFAULT_LOSS_BASED_BWE_V2_CONFIG: Readonly<LossBasedBweV2Config> = Object.freeze({
  enabled: true,
  bwRampupUpperBoundFactor: 1_000_000,
  bwRampupUpperBoundInHoldFactor: 1_000_000,
  bwRampupUpperBoundHoldThreshold: 1.3,
  rampupAccelerationMaxFactor: 0,
  rampupAccelerationMaxoutTimeMs: 60_000,
  candidateFactors: Object.freeze([1.02, 1.0, 0.95]),
  higherBandwidthBiasFactor: 0.0002,
  higherLogBandwidthBiasFactor: 0.02,
  inherentLossLowerBound: 1.0e-3,
  lossThresholdOfHighBandwidthPreference: 0.15,
  bandwidthPreferenceSmoothingFactor: 0.002,
  inherentLossUpperBoundBwBalanceBps: 75_000,
  inherentLossUpperBoundOffset: 0.05,
  initialInherentLossEstimate: 0.01,
  newtonIterations: 1,
  newtonStepSize: 0.75,
  appendAcknowledgedRateCandidate: true,
  appendDelayBasedEstimateCandidate: true,
  appendUpperBoundCandidateInAlr: false,
  observationDurationLowerBoundMs: 250,
  observationWindowSize: 20,
  sendingRateSmoothingFactor: 0,
  instantUpperBoundTemporalWeightFactor: 0.9,
  instantUpperBoundBwBalanceBps: 75_000,
  instantUpperBoundLossOffset: 0.05,
  temporalWeightFactor: 0.9,
  bwBackoffLowerBoundFactor: 1.0,
  maxIncreaseFactor: 1.3,
  delayedIncreaseWindowMs: 300,
  notIncreaseIfInherentLossLessThanAverageLoss: true,
  notUseAckedRateInAlr: true,
  useInStartPhase: false,
  minNumObservations: 3,
  lowerBoundByAckedRateFactor: 0,
  holdDurationFactor: 0,
  useByteLossRate: false,
  paddingDurationMs: 0,
  boundBestCandidate: false,
  paceAtLossBasedEstimate: false,
  medianSendingRateFactor: 2.0,
  maxLostSeqEntries: 4096,
});

/** Counters of ignored input and of the estimator's progress. */
export interface LossBasedBweV2Stats {
  /** updateBandwidthEstimate calls whose packets were not an array. */
  reportsInvalid: number;
  /** Packets skipped: not an object, seq not a uint32, non-finite send time, size not finite and >= 0, received not boolean. */
  packetsInvalid: number;
  /** Rates ignored: non-finite/negative acked or estimate, min/max not finite and > 0, NaN/negative delay-based (taken as none). */
  ratesInvalid: number;
  /** Losses not entered in the full lost-seq map (still counted as lost, cannot be un-lost). */
  lostSeqOverflow: number;
  /** Observations closed so far. */
  observations: number;
  /** Entries in the open observation's lost-seq map (<= maxLostSeqEntries). */
  partialLostEntries: number;
}

/** The loss-based estimate (bps; Infinity = no limit) and its state. */
export interface LossV2Result {
  bandwidthEstimateBps: number;
  state: LossV2State;
}

interface Observation {
  numPackets: number;
  numLost: number;
  numReceived: number;
  sendingRateBps: number;
  sizeBytes: number;
  lostBytes: number;
  /** What the likelihood counts (GetDerivatives, GetObjective): lost, received and all, in packets, or in kB with useByteLossRate. */
  lostUnits: number;
  okUnits: number;
  totalUnits: number;
  /** -1 = slot not yet used. */
  id: number;
}

interface Channel {
  inherentLoss: number;
  bandwidthBps: number;
}

const INF = Number.POSITIVE_INFINITY;
const NEG_INF = Number.NEGATIVE_INFINITY;
const CONGESTION_CONTROLLER_MIN_BPS = 5000;
const INIT_HOLD_US = 300_000;
const MAX_HOLD_US = 60_000_000;
const UINT32_MAX = 0xffff_ffff;

type NumKey = { [K in keyof LossBasedBweV2Config]: LossBasedBweV2Config[K] extends number ? K : never }[keyof LossBasedBweV2Config];

/** Upstream IsConfigValid's rules (plus integers and our cap); every number must also be finite, every flag boolean. */
const NUM_RULES: ReadonlyArray<readonly [NumKey, string, (v: number, c: LossBasedBweV2Config) => boolean]> = [
  ['bwRampupUpperBoundFactor', '> 1', (v) => v > 1],
  ['bwRampupUpperBoundInHoldFactor', '> 1', (v) => v > 1],
  ['bwRampupUpperBoundHoldThreshold', '>= 0', (v) => v >= 0],
  ['rampupAccelerationMaxFactor', '>= 0', (v) => v >= 0],
  ['rampupAccelerationMaxoutTimeMs', '> 0', (v) => v > 0],
  ['higherBandwidthBiasFactor', '>= 0', (v) => v >= 0],
  ['inherentLossLowerBound', 'in [0, 1)', (v) => v >= 0 && v < 1],
  ['lossThresholdOfHighBandwidthPreference', 'in [0, 1)', (v) => v >= 0 && v < 1],
  ['bandwidthPreferenceSmoothingFactor', 'in (0, 1]', (v) => v > 0 && v <= 1],
  ['inherentLossUpperBoundBwBalanceBps', '> 0', (v) => v > 0],
  ['inherentLossUpperBoundOffset', 'in [inherentLossLowerBound, 1)', (v, c) => v >= c.inherentLossLowerBound && v < 1],
  ['initialInherentLossEstimate', 'in [0, 1)', (v) => v >= 0 && v < 1],
  ['newtonIterations', 'an integer > 0', (v) => Number.isInteger(v) && v > 0],
  ['newtonStepSize', '> 0', (v) => v > 0],
  ['observationDurationLowerBoundMs', '> 0', (v) => v > 0],
  ['observationWindowSize', 'an integer >= 2', (v) => Number.isInteger(v) && v >= 2],
  ['sendingRateSmoothingFactor', 'in [0, 1)', (v) => v >= 0 && v < 1],
  ['instantUpperBoundTemporalWeightFactor', 'in (0, 1]', (v) => v > 0 && v <= 1],
  ['instantUpperBoundBwBalanceBps', '> 0', (v) => v > 0],
  ['instantUpperBoundLossOffset', 'in [0, 1)', (v) => v >= 0 && v < 1],
  ['temporalWeightFactor', 'in (0, 1]', (v) => v > 0 && v <= 1],
  ['bwBackoffLowerBoundFactor', '<= 1', (v) => v <= 1],
  ['maxIncreaseFactor', '> 0', (v) => v > 0],
  ['delayedIncreaseWindowMs', '> 0', (v) => v > 0],
  ['minNumObservations', 'an integer > 0', (v) => Number.isInteger(v) && v > 0],
  ['lowerBoundByAckedRateFactor', '>= 0', (v) => v >= 0],
  ['paddingDurationMs', '>= 0', (v) => v >= 0],
  ['maxLostSeqEntries', 'an integer >= 1', (v) => Number.isInteger(v) && v >= 1],
];

function validate(c: LossBasedBweV2Config): void {
  for (const [k, def] of Object.entries(DEFAULT_LOSS_BASED_BWE_V2_CONFIG)) {
    const v: unknown = c[k as keyof LossBasedBweV2Config];
    if (typeof def === 'boolean' && typeof v !== 'boolean') throw new RangeError(`LossBasedBweV2: ${k} must be a boolean, got ${String(v)}`);
    if (typeof def === 'number' && !(typeof v === 'number' && Number.isFinite(v))) throw new RangeError(`LossBasedBweV2: ${k} must be a finite number, got ${String(v)}`);
  }
  for (const [k, what, ok] of NUM_RULES) {
    if (!ok(c[k], c)) throw new RangeError(`LossBasedBweV2: ${k} must be ${what}, got ${c[k]}`);
  }
  const f = c.candidateFactors;
  if (!Array.isArray(f) || f.some((x) => typeof x !== 'number' || !Number.isFinite(x) || x <= 0)) {
    throw new RangeError('LossBasedBweV2: candidateFactors must be an array of finite numbers > 0');
  }
  if (!c.appendAcknowledgedRateCandidate && !c.appendDelayBasedEstimateCandidate && !f.some((x) => x !== 1)) {
    throw new RangeError('LossBasedBweV2: candidateFactors needs a factor other than 1, unless appendAcknowledgedRateCandidate or appendDelayBasedEstimateCandidate');
  }
}

/** Loss probability of the channel model, clamped to [1e-6, 1 − 1e-6]. */
function lossProbability(inherentLoss: number, bandwidthBps: number, sendingRateBps: number): number {
  const inherent = Math.min(Math.max(inherentLoss, 0), 1);
  let p = inherent;
  if (Number.isFinite(sendingRateBps) && Number.isFinite(bandwidthBps) && sendingRateBps > bandwidthBps) {
    p += ((1 - inherent) * (sendingRateBps - bandwidthBps)) / sendingRateBps;
  }
  return Math.min(Math.max(p, 1e-6), 1 - 1e-6);
}

/** Whole bps, as upstream's DataRate arithmetic (std::round) yields; ±Infinity kept. */
function bps(x: number): number {
  return Number.isFinite(x) ? Math.round(x) : x;
}

function validPacket(p: LossV2Packet): boolean {
  return (
    typeof p === 'object' &&
    p !== null &&
    Number.isInteger(p.seq) &&
    p.seq >= 0 &&
    p.seq <= UINT32_MAX &&
    Number.isFinite(p.sendTimeUs) &&
    Number.isFinite(p.sizeBytes) &&
    p.sizeBytes >= 0 &&
    typeof p.received === 'boolean'
  );
}

/**
 * Loss-based bandwidth estimator (LossBasedBweV2). Feed it every feedback
 * report with {@link updateBandwidthEstimate} after {@link setAcknowledgedBitrate};
 * read {@link result} once {@link isReady}.
 */
export class LossBasedBweV2 {
  private readonly cfg: LossBasedBweV2Config;
  private readonly temporalWeights: Float64Array;
  private readonly iubTemporalWeights: Float64Array;
  private readonly observations: Observation[];
  private numObservations = 0;
  private ackedBps: number | undefined;
  private best: Channel;
  // Open (partial) observation.
  private partialPackets = 0;
  private partialBytes = 0;
  private readonly partialLost = new Map<number, number>();
  private partialOverflowLost = 0;
  private partialOverflowLostBytes = 0;
  /** Newest send time (µs) of the last closed observation: the estimator's "now". */
  private lastObservationUs = INF;
  private lastReducedUs = NEG_INF;
  private cachedUpperBps: number | undefined;
  private cachedLowerBps: number | undefined;
  private recoveringAfterLossUs = NEG_INF;
  private windowLimitBps = INF;
  private minBps = 1000;
  private maxBps = INF;
  private delayBps = INF;
  private resultBps = 0;
  private state: LossV2State = 'delay-based';
  private holdUntilUs = NEG_INF;
  private holdDurationUs = INIT_HOLD_US;
  private holdRateBps = INF;
  private paddingRateBps = NEG_INF;
  private paddingStartUs = NEG_INF;
  private avgLoss = 0;
  private readonly counters = { reportsInvalid: 0, packetsInvalid: 0, ratesInvalid: 0, lostSeqOverflow: 0 };

  /**
   * @param config partial {@link LossBasedBweV2Config}; the rest from
   *   {@link DEFAULT_LOSS_BASED_BWE_V2_CONFIG}.
   * @throws RangeError naming the first invalid field (upstream IsConfigValid's
   *   rules; numbers must also be finite, counts integers, flags booleans).
   */
  constructor(config: Partial<LossBasedBweV2Config> = {}) {
    const c: LossBasedBweV2Config = { ...DEFAULT_LOSS_BASED_BWE_V2_CONFIG, ...config };
    validate(c);
    c.candidateFactors = Object.freeze([...c.candidateFactors]);
    this.cfg = c;
    const n = c.observationWindowSize;
    this.temporalWeights = new Float64Array(n);
    this.iubTemporalWeights = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      this.temporalWeights[i] = c.temporalWeightFactor ** i;
      this.iubTemporalWeights[i] = c.instantUpperBoundTemporalWeightFactor ** i;
    }
    this.observations = Array.from({ length: n }, () => ({
      numPackets: 0,
      numLost: 0,
      numReceived: 0,
      sendingRateBps: NEG_INF,
      sizeBytes: 0,
      lostBytes: 0,
      lostUnits: 0,
      okUnits: 0,
      totalUnits: 0,
      id: -1,
    }));
    this.best = { inherentLoss: c.initialInherentLossEstimate, bandwidthBps: NEG_INF };
  }

  /** IsReady: enabled, a bandwidth estimate exists, >= minNumObservations observations. */
  isReady(): boolean {
    return this.cfg.enabled && Number.isFinite(this.best.bandwidthBps) && this.numObservations >= this.cfg.minNumObservations;
  }

  /** ReadyToUseInStartPhase: ready and useInStartPhase. */
  readyToUseInStartPhase(): boolean {
    return this.isReady() && this.cfg.useInStartPhase;
  }

  /** PaceAtLossBasedEstimate: paceAtLossBasedEstimate and loss-limited. */
  paceAtLossBasedEstimate(): boolean {
    return this.cfg.paceAtLossBasedEstimate && this.isLossLimited();
  }

  /**
   * GetLossBasedResult: estimate (bps) and state. Before {@link isReady}: the
   * delay-based estimate (Infinity if none) and 'delay-based'.
   */
  result(): LossV2Result {
    if (!this.isReady()) return { bandwidthEstimateBps: Number.isFinite(this.delayBps) ? this.delayBps : INF, state: 'delay-based' };
    return { bandwidthEstimateBps: this.resultBps, state: this.state };
  }

  /** Temporally weighted average reported loss ratio over the window (0..1; 0 before the first observation). */
  averageLossRatio(): number {
    return this.avgLoss;
  }

  /** The instant upper bound (bps; max bitrate, possibly Infinity, while average loss <= the offset). */
  instantUpperBoundBps(): number {
    return this.cachedUpperBps ?? this.maxBps;
  }

  /** Counters of ignored input, closed observations, and the open observation's lost-seq map size. */
  stats(): LossBasedBweV2Stats {
    return { ...this.counters, observations: this.numObservations, partialLostEntries: this.partialLost.size };
  }

  /** SetMinMaxBitrate (bps). A value that is not finite and > 0 is ignored (counted). */
  setMinMaxBitrate(minBps: number, maxBps: number): void {
    if (Number.isFinite(minBps) && minBps > 0) {
      this.minBps = bps(minBps);
      this.updateLowerBound();
    } else this.counters.ratesInvalid++;
    if (Number.isFinite(maxBps) && maxBps > 0) this.maxBps = bps(maxBps);
    else this.counters.ratesInvalid++;
  }

  /** SetAcknowledgedBitrate (bps). Non-finite or negative is ignored (counted). */
  setAcknowledgedBitrate(rateBps: number): void {
    if (!(Number.isFinite(rateBps) && rateBps >= 0)) {
      this.counters.ratesInvalid++;
      return;
    }
    this.ackedBps = bps(rateBps);
    this.updateLowerBound();
  }

  /**
   * SetBandwidthEstimate (bps): e.g. a probe result or an initial rate. Sets
   * the current best estimate's loss-limited bandwidth and the published
   * result (state 'delay-based'). Non-finite or negative is ignored (counted).
   */
  setBandwidthEstimate(rateBps: number): void {
    if (!(Number.isFinite(rateBps) && rateBps >= 0)) {
      this.counters.ratesInvalid++;
      return;
    }
    this.best.bandwidthBps = bps(rateBps);
    this.resultBps = this.best.bandwidthBps;
    this.state = 'delay-based';
  }

  /**
   * UpdateBandwidthEstimate: one feedback report's packets, the delay-based
   * estimate (bps; Infinity if none; NaN or negative counts as invalid and as
   * none) and whether the sender is application-limited (ALR). The estimate
   * moves only when the report closes an observation. Never throws: a
   * non-array or bad packets are counted and skipped.
   */
  updateBandwidthEstimate(packets: readonly LossV2Packet[], delayBasedBps: number, inAlr: boolean): void {
    if (!Array.isArray(packets)) {
      this.counters.reportsInvalid++;
      return;
    }
    let delay = delayBasedBps;
    if (typeof delay !== 'number' || Number.isNaN(delay) || delay < 0) {
      this.counters.ratesInvalid++;
      delay = INF;
    }
    this.delayBps = bps(delay);
    if (!this.cfg.enabled || !this.pushBackObservation(packets)) return;
    const c = this.cfg;
    const now = this.lastObservationUs;

    if (!Number.isFinite(this.best.bandwidthBps)) {
      if (!Number.isFinite(this.delayBps)) return;
      this.best.bandwidthBps = this.delayBps;
      this.resultBps = this.delayBps;
      this.state = 'delay-based';
    }
    const current = this.best;

    let best: Channel = { ...current };
    let objectiveMax = -Number.MAX_VALUE;
    for (const cand of this.candidates(inAlr === true)) {
      this.newtonUpdate(cand);
      const o = this.objective(cand);
      if (o > objectiveMax) {
        objectiveMax = o;
        best = cand;
      }
    }
    if (best.bandwidthBps < current.bandwidthBps) this.lastReducedUs = now;

    // No increase while the average loss exceeds the candidate's inherent loss.
    if (c.notIncreaseIfInherentLossLessThanAverageLoss && this.avgLoss > best.inherentLoss && current.bandwidthBps < best.bandwidthBps) {
      best.bandwidthBps = current.bandwidthBps;
    }

    if (this.isLossLimited()) {
      // Within the delayed-increase window, stay below the window's limit.
      if (Number.isFinite(this.recoveringAfterLossUs) && this.recoveringAfterLossUs + c.delayedIncreaseWindowMs * 1000 > now && best.bandwidthBps > this.windowLimitBps) {
        best.bandwidthBps = this.windowLimitBps;
      }
      if (this.increasingWhenLossLimited(current.bandwidthBps, best.bandwidthBps) && this.ackedBps !== undefined) {
        let rampup = c.bwRampupUpperBoundFactor;
        if (Number.isFinite(this.holdRateBps) && this.ackedBps < c.bwRampupUpperBoundHoldThreshold * this.holdRateBps) rampup = c.bwRampupUpperBoundInHoldFactor;
        best.bandwidthBps = Math.max(current.bandwidthBps, Math.min(best.bandwidthBps, bps(rampup * this.ackedBps)));
        // Leaving 'decreasing' needs a strictly higher value, so the state can flip to increasing.
        if (this.state === 'decreasing' && best.bandwidthBps === current.bandwidthBps) best.bandwidthBps = current.bandwidthBps + 1;
      }
    }

    const lower = this.cachedLowerBps ?? 0;
    const bounded = Math.max(lower, Math.min(best.bandwidthBps, this.instantUpperBoundBps(), this.delayBps));
    if (c.boundBestCandidate && bounded < best.bandwidthBps) {
      this.best = { inherentLoss: 0, bandwidthBps: bounded };
    } else {
      this.best = best;
      if (c.lowerBoundByAckedRateFactor > 0) best.bandwidthBps = Math.max(best.bandwidthBps, lower);
    }

    // HOLD: while it lasts, the published value may not exceed the hold rate.
    if (this.state === 'decreasing' && this.holdUntilUs > now && bounded < this.delayBps) {
      if (c.lowerBoundByAckedRateFactor > 0) this.holdRateBps = Math.max(lower, this.holdRateBps);
      this.resultBps = Math.min(this.holdRateBps, bounded);
      return;
    }

    const padding = c.paddingDurationMs > 0;
    if (this.increasingWhenLossLimited(this.resultBps, bounded) && this.canKeepIncreasing(bounded) && bounded < this.delayBps && bounded < this.maxBps) {
      if (padding && bounded > this.paddingRateBps) {
        this.paddingRateBps = bounded;
        this.paddingStartUs = now;
      }
      this.state = padding ? 'increase-using-padding' : 'increasing';
    } else if (bounded < this.delayBps && bounded < this.maxBps) {
      if (this.state !== 'decreasing' && c.holdDurationFactor > 0) {
        this.holdUntilUs = now + this.holdDurationUs;
        this.holdDurationUs = Math.min(MAX_HOLD_US, Math.round(this.holdDurationUs * c.holdDurationFactor));
        this.holdRateBps = bounded;
      }
      this.paddingRateBps = NEG_INF;
      this.paddingStartUs = NEG_INF;
      this.state = 'decreasing';
    } else {
      // The delay-based estimate rules: forget HOLD so the rate cannot stay stuck low.
      this.holdUntilUs = NEG_INF;
      this.holdDurationUs = INIT_HOLD_US;
      this.holdRateBps = INF;
      this.paddingRateBps = NEG_INF;
      this.paddingStartUs = NEG_INF;
      this.state = 'delay-based';
    }
    this.resultBps = bounded;

    // Open a new delayed-increase window once the previous one has elapsed.
    if (this.isLossLimited() && (!Number.isFinite(this.recoveringAfterLossUs) || this.recoveringAfterLossUs + c.delayedIncreaseWindowMs * 1000 < now)) {
      this.windowLimitBps = Math.max(CONGESTION_CONTROLLER_MIN_BPS, bps(this.best.bandwidthBps * c.maxIncreaseFactor));
      this.recoveringAfterLossUs = now;
    }
  }

  private isLossLimited(): boolean {
    return this.state !== 'delay-based';
  }

  private increasingWhenLossLimited(oldBps: number, newBps: number): boolean {
    const increasingState = this.state === 'increasing' || this.state === 'increase-using-padding';
    return (oldBps < newBps || (oldBps === newBps && increasingState)) && this.isLossLimited();
  }

  private canKeepIncreasing(estimateBps: number): boolean {
    if (this.cfg.paddingDurationMs === 0 || this.state !== 'increase-using-padding') return true;
    return this.paddingStartUs + this.cfg.paddingDurationMs * 1000 >= this.lastObservationUs || this.paddingRateBps < estimateBps;
  }

  private updateLowerBound(): void {
    let lower = 0;
    if (this.ackedBps !== undefined && this.cfg.lowerBoundByAckedRateFactor > 0) lower = bps(this.cfg.lowerBoundByAckedRateFactor * this.ackedBps);
    this.cachedLowerBps = Math.max(lower, this.minBps);
  }

  /** Adds a report to the open observation; true when that closed an observation. */
  private pushBackObservation(packets: readonly LossV2Packet[]): boolean {
    const lost = this.partialLost;
    const cap = this.cfg.maxLostSeqEntries;
    let first = INF;
    let last = NEG_INF;
    let valid = 0;
    for (const p of packets) {
      if (!validPacket(p)) {
        this.counters.packetsInvalid++;
        continue;
      }
      valid++;
      if (p.received) lost.delete(p.seq);
      else if (!lost.has(p.seq)) {
        if (lost.size < cap) lost.set(p.seq, p.sizeBytes);
        else {
          this.counters.lostSeqOverflow++;
          this.partialOverflowLost++;
          this.partialOverflowLostBytes += p.sizeBytes;
        }
      }
      this.partialBytes += p.sizeBytes;
      if (p.sendTimeUs > last) last = p.sendTimeUs;
      if (p.sendTimeUs < first) first = p.sendTimeUs;
    }
    if (valid === 0) return false;
    this.partialPackets += valid;
    if (!Number.isFinite(this.lastObservationUs)) this.lastObservationUs = first;
    const durationUs = last - this.lastObservationUs;
    if (durationUs <= 0 || durationUs < this.cfg.observationDurationLowerBoundMs * 1000) return false;
    this.lastObservationUs = last;

    let lostBytes = this.partialOverflowLostBytes;
    for (const size of lost.values()) lostBytes += size;
    const numLost = lost.size + this.partialOverflowLost;
    const c = this.cfg;
    // DataSize / TimeDelta: microbits divided by µs, truncated.
    const instantRate = Math.floor((this.partialBytes * 8e6) / durationUs);
    let rate = instantRate;
    if (this.numObservations > 0) {
      const prev = this.observations[(this.numObservations - 1) % c.observationWindowSize];
      rate = bps(c.sendingRateSmoothingFactor * prev.sendingRateBps) + bps((1 - c.sendingRateSmoothingFactor) * instantRate);
    }
    const id = this.numObservations++;
    const o = this.observations[id % c.observationWindowSize];
    o.numPackets = this.partialPackets;
    o.numLost = numLost;
    o.numReceived = this.partialPackets - numLost;
    o.sendingRateBps = rate;
    o.sizeBytes = this.partialBytes;
    o.lostBytes = lostBytes;
    const kB = c.useByteLossRate;
    o.lostUnits = kB ? lostBytes / 1000 : numLost;
    o.okUnits = kB ? (this.partialBytes - lostBytes) / 1000 : o.numReceived;
    o.totalUnits = kB ? this.partialBytes / 1000 : this.partialPackets;
    o.id = id;

    this.partialPackets = 0;
    this.partialBytes = 0;
    lost.clear();
    this.partialOverflowLost = 0;
    this.partialOverflowLostBytes = 0;

    this.avgLoss = c.useByteLossRate ? this.byteLossRatio() : this.packetLossRatio();
    this.cachedUpperBps = this.avgLoss > c.instantUpperBoundLossOffset ? bps(c.instantUpperBoundBwBalanceBps / (this.avgLoss - c.instantUpperBoundLossOffset)) : this.maxBps;
    return true;
  }

  /** The likelihood's temporal weight of an observation (temporalWeightFactor^age). */
  private weight(o: Observation): number {
    return this.temporalWeights[this.numObservations - 1 - o.id];
  }

  private iubWeight(o: Observation): number {
    return this.iubTemporalWeights[this.numObservations - 1 - o.id];
  }

  private packetLossRatio(): number {
    let packets = 0;
    let lostPackets = 0;
    for (const o of this.observations) {
      if (o.id < 0) continue;
      const w = this.iubWeight(o);
      packets += w * o.numPackets;
      lostPackets += w * o.numLost;
    }
    return packets > 0 ? lostPackets / packets : 0;
  }

  /** Byte loss ratio with the highest- and lowest-loss observations left out, unless the highest was a sending-rate spike. */
  private byteLossRatio(): number {
    let total = 0;
    let lostTotal = 0;
    let minRate = 1;
    let maxRate = 0;
    let minLost = 0;
    let minTotal = 0;
    let maxLost = 0;
    let maxTotal = 0;
    let maxLossSendingRate = 0;
    for (const o of this.observations) {
      if (o.id < 0) continue;
      const w = this.iubWeight(o);
      total += w * o.sizeBytes;
      lostTotal += w * o.lostBytes;
      const r = o.sizeBytes > 0 ? o.lostBytes / o.sizeBytes : 0;
      if (this.numObservations > 3) {
        if (r > maxRate) {
          maxRate = r;
          maxLost = w * o.lostBytes;
          maxTotal = w * o.sizeBytes;
          maxLossSendingRate = o.sendingRateBps;
        }
        if (r < minRate) {
          minRate = r;
          minLost = w * o.lostBytes;
          minTotal = w * o.sizeBytes;
        }
      }
    }
    if (this.medianSendingRate() * this.cfg.medianSendingRateFactor <= maxLossSendingRate) return total > 0 ? lostTotal / total : 0;
    const denominator = total - maxTotal - minTotal;
    // Nothing left after the trim (a window of 2): the plain ratio, as upstream. Upstream's
    // weighted sizes are whole bytes and compare exactly; ours are doubles, hence the tolerance.
    if (!(denominator > 1e-9 * total)) return total > 0 ? lostTotal / total : 0;
    return Math.min(1, Math.max(0, (lostTotal - minLost - maxLost) / denominator));
  }

  private medianSendingRate(): number {
    const rates: number[] = [];
    for (const o of this.observations) {
      if (o.id >= 0 && Number.isFinite(o.sendingRateBps) && o.sendingRateBps !== 0) rates.push(o.sendingRateBps);
    }
    if (rates.length === 0) return 0;
    rates.sort((a, b) => a - b);
    const h = rates.length >> 1;
    return rates.length % 2 === 0 ? Math.floor((rates[h - 1] + rates[h]) / 2) : rates[h];
  }

  private candidateUpperBound(): number {
    const c = this.cfg;
    let upper = this.maxBps;
    if (this.isLossLimited() && Number.isFinite(this.windowLimitBps)) upper = this.windowLimitBps;
    if (this.ackedBps === undefined) return upper;
    if (c.rampupAccelerationMaxFactor > 0) {
      const maxoutUs = c.rampupAccelerationMaxoutTimeMs * 1000;
      const sinceReducedUs = Math.min(maxoutUs, Math.max(0, this.lastObservationUs - this.lastReducedUs));
      upper += bps(((c.rampupAccelerationMaxFactor * sinceReducedUs) / maxoutUs) * this.ackedBps);
    }
    return upper;
  }

  private candidates(inAlr: boolean): Channel[] {
    const c = this.cfg;
    const bestBps = this.best.bandwidthBps;
    const bandwidths = c.candidateFactors.map((f) => bps(f * bestBps));
    if (this.ackedBps !== undefined && c.appendAcknowledgedRateCandidate) {
      const paddingActive = c.paddingDurationMs > 0 && this.paddingStartUs + c.paddingDurationMs * 1000 >= this.lastObservationUs;
      if (!(c.notUseAckedRateInAlr && inAlr) || paddingActive) bandwidths.push(bps(this.ackedBps * c.bwBackoffLowerBoundFactor));
    }
    if (Number.isFinite(this.delayBps) && c.appendDelayBasedEstimateCandidate && this.delayBps > bestBps) bandwidths.push(this.delayBps);
    const iub = this.instantUpperBoundBps();
    if (inAlr && c.appendUpperBoundCandidateInAlr && bestBps > iub) bandwidths.push(iub);
    const upper = Math.max(bestBps, this.candidateUpperBound());
    return bandwidths.map((bw) => {
      const cand: Channel = { inherentLoss: this.best.inherentLoss, bandwidthBps: Math.min(bw, upper) };
      cand.inherentLoss = this.feasibleInherentLoss(cand);
      return cand;
    });
  }

  private feasibleInherentLoss(ch: Channel): number {
    return Math.min(Math.max(ch.inherentLoss, this.cfg.inherentLossLowerBound), this.inherentLossUpperBound(ch.bandwidthBps));
  }

  private inherentLossUpperBound(bandwidthBps: number): number {
    if (bandwidthBps === 0) return 1;
    return Math.min(this.cfg.inherentLossUpperBoundOffset + this.cfg.inherentLossUpperBoundBwBalanceBps / bandwidthBps, 1);
  }

  /** Moves the inherent loss towards the likelihood maximum (Newton steps), kept feasible. */
  private newtonUpdate(ch: Channel): void {
    if (this.numObservations <= 0) return;
    for (let i = 0; i < this.cfg.newtonIterations; i++) {
      let first = 0;
      let second = 0;
      for (const o of this.observations) {
        if (o.id < 0) continue;
        const p = lossProbability(ch.inherentLoss, ch.bandwidthBps, o.sendingRateBps);
        const w = this.weight(o);
        first += w * (o.lostUnits / p - o.okUnits / (1 - p));
        second -= w * (o.lostUnits / (p * p) + o.okUnits / ((1 - p) * (1 - p)));
      }
      if (second >= 0) second = -1e-6; // only reachable with no data; keeps the step finite
      ch.inherentLoss -= (this.cfg.newtonStepSize * first) / second;
      ch.inherentLoss = this.feasibleInherentLoss(ch);
    }
  }

  private adjustBias(lossRate: number, factor: number): number {
    const t = this.cfg.lossThresholdOfHighBandwidthPreference;
    return (factor * (t - lossRate)) / (this.cfg.bandwidthPreferenceSmoothingFactor + Math.abs(t - lossRate));
  }

  private highBandwidthBias(bandwidthBps: number): number {
    if (!Number.isFinite(bandwidthBps)) return 0;
    const kbps = bandwidthBps / 1000;
    return this.adjustBias(this.avgLoss, this.cfg.higherBandwidthBiasFactor) * kbps + this.adjustBias(this.avgLoss, this.cfg.higherLogBandwidthBiasFactor) * Math.log(1 + kbps);
  }

  /** Time-weighted Bernoulli log-likelihood of the window plus the high-bandwidth bias. */
  private objective(ch: Channel): number {
    const bias = this.highBandwidthBias(ch.bandwidthBps);
    let objective = 0;
    for (const o of this.observations) {
      if (o.id < 0) continue;
      const p = lossProbability(ch.inherentLoss, ch.bandwidthBps, o.sendingRateBps);
      const w = this.weight(o);
      objective += w * (o.lostUnits * Math.log(p) + o.okUnits * Math.log(1 - p)) + w * bias * o.totalUnits;
    }
    return objective;
  }
}
