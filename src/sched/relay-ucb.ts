/**
 * Relay (overlay path) selection per subflow by discounted UCB.
 *
 * SOURCE: Zhang & Lei, "An Online Learning Based Path Selection for
 * Multipath Video Telephony Service in Overlay", §3.2:
 * - each subflow i has k_i candidate routes (arms): the default (direct)
 *   route and k_i - 1 routes through relays (TURN servers);
 * - the reward of a pulled arm is the bandwidth its congestion controller
 *   estimates; its mean is an exponentially smoothed estimate (Eq. 11,
 *   α = 0.9: recent rewards weigh most, the "discounting" that suits a
 *   restless, non-stationary bandit) instead of Eq. 9's plain mean;
 * - the index of arm j is Eq. 13:
 *   B̂w(i, j) + Bw(j) · sqrt(2 log(C · T) / N(i, j)), with C the number of
 *   subflows, T the decision-slot counter, N the pulls of the arm (starting
 *   at 1) and Bw(j) the largest bandwidth sample of the last
 *   kObservedTime = 10 s (Eq. 12, Alg. 2-3); once an arm has had no sample
 *   for 10 s, Bw(j) is the largest sample it ever gave (§3.2 text: "it
 *   encourages client to choose this path again");
 * - Alg. 4: per slot, each subflow takes the arm with the largest index and
 *   its N is incremented; T is incremented once per slot. At the start every
 *   arm is tried once (§3.2: "all available paths will be exploited"), in order.
 *
 * Our reading where the paper is silent: Alg. 3's loop keeps at least one
 * sample, so its "no sample" branch never runs; we read the text instead (a
 * newest sample older than the window means "not exploited within the
 * monitor interval"). Samples are bounded (oldest dropped beyond
 * `maxSamples`). The caller decides once per slot (the paper: every 1 s)
 * and feeds samples of the arm in use only.
 *
 * Our additions (not in the paper), both off by default:
 * - probe-based exploration ({@link RelayUcbSelector.onProbeSample}): an arm
 *   not in use may be measured with probe traffic (a packet train over its
 *   relay, its receive-side dispersion as the bandwidth sample) instead of
 *   moving the media onto it. Such a sample goes through Alg. 2 like any
 *   other and counts as a pull (N + 1): the probe explored the arm, so
 *   Eq. 12's bonus shrinks as it would after a pull. Why: a reward taken
 *   from the congestion controller in the 1 s slot right after a switch
 *   measures the switch gap and RTC-BBR's StartUp, not the route (`overlay`:
 *   the LTE subflow's best relay, tried once during ramp-up, scored 0.14 Mbps
 *   and was never tried again);
 * - switch hysteresis ({@link RelayUcbConfig.switchMargin}): the arm in use
 *   is kept unless another arm's Eq. 13 index exceeds its own by that margin
 *   (each switch costs an ICE restart's gap and a StartUp).
 *
 * I/O-free: times are the caller's clock (ms).
 */

/** Tuning of {@link RelayUcbSelector}; defaults are the paper's. */
export interface RelayUcbConfig {
  /** α of Eq. 11 (weight of the newest sample), (0, 1]. Default 0.9. */
  alpha: number;
  /** kObservedTime of Alg. 3 (ms). Default 10_000. */
  observedWindowMs: number;
  /** Bound on the samples kept per arm. Default 256. */
  maxSamples: number;
  /**
   * Scale of the exploration bonus: U = scale x Bw(j) x sqrt(2 log(C T) / N)
   * (Eq. 12 is scale 1; Eq. 10's B is "a tunable factor", which Eq. 12 sets
   * to Bw(j)). Default 1.
   */
  explorationScale: number;
  /**
   * Switch hysteresis (our addition, not in the paper): the arm chosen at the
   * previous decision is kept unless the best index exceeds its index x
   * (1 + switchMargin). >= 0; default 0 (Alg. 4 as written: the largest index wins).
   */
  switchMargin: number;
}

export const DEFAULT_RELAY_UCB_CONFIG: RelayUcbConfig = { alpha: 0.9, observedWindowMs: 10_000, maxSamples: 256, explorationScale: 1, switchMargin: 0 };

/** One arm's state (paths_info of Alg. 4). */
export interface ArmState {
  /** B̂w: smoothed bandwidth (bps, Eq. 11), 0 before the first sample. */
  bwHat: number;
  /** Bw: largest sample of the observed window, or the all-time max when the arm went unobserved (bps). */
  bwMax: number;
  /** maxBw_: largest sample ever (bps). */
  maxEver: number;
  /** N: times pulled (starts at 1). */
  pulls: number;
  /** Samples received (media and probe). */
  samples: number;
  /** Of which probe samples ({@link RelayUcbSelector.onProbeSample}). */
  probes: number;
}

interface Arm extends ArmState {
  window: Array<{ bw: number; tMs: number }>;
}

/** Thrown for a bad subflow / arm layout or config. */
export class RelayUcbError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = 'RelayUcbError';
  }
}

export class RelayUcbSelector {
  private readonly cfg: RelayUcbConfig;
  private readonly arms: Arm[][];
  private readonly chosen: number[];
  private slot = 1;
  /** Samples refused (non-finite, negative, unknown subflow or arm). */
  invalidSamples = 0;

  /**
   * @param armsPerSubflow k_i for each subflow (each >= 1; arm 0 is the default route).
   * @throws RelayUcbError for an empty layout, a k_i that is not an integer >= 1, or a bad config.
   */
  constructor(armsPerSubflow: readonly number[], config: Partial<RelayUcbConfig> = {}) {
    const c = { ...DEFAULT_RELAY_UCB_CONFIG, ...config };
    if (!(c.alpha > 0 && c.alpha <= 1)) throw new RelayUcbError(`RelayUcbSelector: alpha must be in (0, 1], got ${c.alpha}`);
    if (!(Number.isFinite(c.observedWindowMs) && c.observedWindowMs > 0)) throw new RelayUcbError(`RelayUcbSelector: observedWindowMs must be > 0, got ${c.observedWindowMs}`);
    if (!(Number.isFinite(c.explorationScale) && c.explorationScale >= 0)) throw new RelayUcbError(`RelayUcbSelector: explorationScale must be a finite number >= 0, got ${c.explorationScale}`);
    if (!(Number.isFinite(c.switchMargin) && c.switchMargin >= 0)) throw new RelayUcbError(`RelayUcbSelector: switchMargin must be a finite number >= 0, got ${c.switchMargin}`);
    if (!(Number.isInteger(c.maxSamples) && c.maxSamples >= 1)) throw new RelayUcbError(`RelayUcbSelector: maxSamples must be an integer >= 1, got ${c.maxSamples}`);
    if (armsPerSubflow.length === 0) throw new RelayUcbError('RelayUcbSelector: needs at least one subflow');
    for (const k of armsPerSubflow) if (!(Number.isInteger(k) && k >= 1)) throw new RelayUcbError(`RelayUcbSelector: arms per subflow must be integers >= 1, got ${k}`);
    this.cfg = c;
    this.arms = armsPerSubflow.map((k) => Array.from({ length: k }, () => ({ bwHat: 0, bwMax: 0, maxEver: 0, pulls: 1, samples: 0, probes: 0, window: [] })));
    this.chosen = armsPerSubflow.map(() => 0);
  }

  /** Alg. 2 OnNewBandwidthSample: a bandwidth estimate (bps) of arm `arm` of subflow `subflow` at `nowMs`. Bad input is counted and ignored. */
  onBandwidthSample(subflow: number, arm: number, bwBps: number, nowMs: number): void {
    const a = this.arms[subflow]?.[arm];
    if (!a || !(Number.isFinite(bwBps) && bwBps >= 0) || !Number.isFinite(nowMs)) {
      this.invalidSamples++;
      return;
    }
    a.window.push({ bw: bwBps, tMs: nowMs });
    if (a.window.length > this.cfg.maxSamples) a.window.shift();
    if (a.samples === 0) {
      a.bwMax = bwBps;
      a.maxEver = bwBps;
      a.bwHat = bwBps;
    } else a.bwHat = (1 - this.cfg.alpha) * a.bwHat + this.cfg.alpha * bwBps; // Eq. 11
    if (bwBps > a.maxEver) a.maxEver = bwBps;
    this.expire(a, nowMs);
    a.samples++;
  }

  /**
   * A probe measurement (our addition, see the module doc): bandwidth `bwBps`
   * (bps) of arm `arm` of subflow `subflow` measured at `nowMs` with probe
   * traffic while the media used another arm. Alg. 2 on the sample, and the
   * arm counts as pulled once more (N + 1) unless it is the arm in use (whose
   * pull {@link decide} already counted). Bad input is counted and ignored.
   */
  onProbeSample(subflow: number, arm: number, bwBps: number, nowMs: number): void {
    const a = this.arms[subflow]?.[arm];
    const before = this.invalidSamples;
    this.onBandwidthSample(subflow, arm, bwBps, nowMs);
    if (!a || this.invalidSamples !== before) return;
    a.probes++;
    if (this.chosen[subflow] !== arm) a.pulls++;
  }

  /** Alg. 3 DeleteObsoleteSamples (with the text's reading of an unobserved arm). */
  private expire(a: Arm, nowMs: number): void {
    const w = a.window;
    while (w.length > 1 && nowMs - w[0].tMs > this.cfg.observedWindowMs) w.shift();
    if (w.length === 0 || nowMs - w[w.length - 1].tMs > this.cfg.observedWindowMs) {
      a.bwMax = a.maxEver;
      return;
    }
    let m = 0;
    for (const s of w) if (s.bw > m) m = s.bw;
    a.bwMax = m;
  }

  /** Eq. 13 index of an arm at the current slot (+Infinity for an arm never sampled). */
  index(subflow: number, arm: number): number {
    const a = this.arms[subflow]?.[arm];
    if (!a) return Number.NaN;
    if (a.samples === 0) return Number.POSITIVE_INFINITY;
    const c = this.arms.length;
    return a.bwHat + this.cfg.explorationScale * a.bwMax * Math.sqrt((2 * Math.log(c * this.slot)) / a.pulls);
  }

  /**
   * Alg. 4 for one decision slot at `nowMs`: expire samples (Alg. 3), pick
   * the arm with the largest index per subflow (never-sampled arms first,
   * lowest index first; ties keep the lower arm), count the pull, advance T.
   * With `switchMargin` > 0 the previous arm is kept unless the best index
   * exceeds its own x (1 + switchMargin) (our addition).
   * @returns the chosen arm per subflow
   */
  decide(nowMs: number): number[] {
    for (const arms of this.arms) for (const a of arms) this.expire(a, nowMs);
    for (let i = 0; i < this.arms.length; i++) {
      let best = 0;
      let bestX = Number.NEGATIVE_INFINITY;
      for (let j = 0; j < this.arms[i].length; j++) {
        const x = this.index(i, j);
        if (x > bestX) {
          bestX = x;
          best = j;
        }
      }
      const prev = this.chosen[i];
      if (this.slot > 1 && best !== prev && this.cfg.switchMargin > 0 && bestX <= (1 + this.cfg.switchMargin) * this.index(i, prev)) best = prev;
      this.chosen[i] = best;
      this.arms[i][best].pulls++;
    }
    this.slot++;
    return [...this.chosen];
  }

  /** The arm chosen for `subflow` at the last decision (0 before the first). */
  current(subflow: number): number {
    return this.chosen[subflow] ?? 0;
  }

  /** T: decision slots so far + 1. */
  get slots(): number {
    return this.slot;
  }

  /** A copy of an arm's state, undefined for an unknown one. */
  arm(subflow: number, arm: number): ArmState | undefined {
    const a = this.arms[subflow]?.[arm];
    return a && { bwHat: a.bwHat, bwMax: a.bwMax, maxEver: a.maxEver, pulls: a.pulls, samples: a.samples, probes: a.probes };
  }
}
