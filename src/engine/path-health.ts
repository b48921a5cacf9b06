/**
 * Per-path health signals learned from the path's own feedback,
 * I/O-free and clock-free: the engine feeds report arrivals and loss windows
 * with their times (µs) and asks two questions.
 *
 * 1. **How long a silence means the path failed?**
 *    {@link PathHealth.silenceThresholdUs}: max(minSilenceMs, srttFactor x
 *    SRTT, gapMargin x the gapQuantile of the path's recent report gaps).
 *    A report gap is the age of the oldest packet not yet covered by a
 *    receiver report when a report arrives (the same quantity the engine
 *    compares with the threshold while it waits). A steady path (a wired
 *    link, WiFi with a constant rate) has gaps of one report interval plus
 *    the one-way delay, so its threshold stays at 2 x SRTT and a blackhole is
 *    caught in ~100-150 ms. An LTE uplink delivers in bursts (the scheduler
 *    grants the uplink in bursts; stalls of 0.3-1 s with every packet
 *    delivered afterwards are common in the mahimahi LTE traces): its gaps'
 *    tail is long, so it needs a longer silence before the engine calls it
 *    failed (duplicates its media, asks for key frames, demotes it).
 *    A gap that ended with most of its packets lost (a blackhole that came
 *    back) is not learned: it is the failure the threshold exists to catch,
 *    and learning it would slow the detection of the next one (a flapping
 *    path). A gap that outlasted the threshold with its packets delivered
 *    was a false alarm: it is learned with the weight of 2 x (1 -
 *    gapQuantile) of the history, so the threshold moves past it at once
 *    (as TCP adapts its RTO after a spurious timeout: the Eifel response
 *    algorithm, RFC 4015 §4). The gap history is a histogram over log-spaced bins whose weights
 *    decay with a half-life, so the path's recent behaviour counts most.
 *
 *    The idea follows RFC 3550 §6.4.1's interarrival jitter (a path's own
 *    timing variation, measured, sets how long to wait) and TCP's RTO
 *    (RFC 6298 §2: SRTT + 4 x RTTVAR, i.e. a high quantile of the measured
 *    delay, not a constant); the quantile over a decaying histogram is our
 *    choice because LTE gaps are heavy-tailed (a mean + k x deviation
 *    estimate is dominated by the many short gaps).
 *
 * 2. **Is the path's loss sustained and not congestion?**
 *    {@link PathHealth.sustainedLoss}: the lowest loss fraction of the last
 *    `sustainedLossWindows` loss windows (0 until that many were fed),
 *    where a window closed while the path had a standing queue (SRTT above
 *    min RTT by more than max(congestionQueueMs, minRTT / 2)) counts as 0.
 *    A path with 30% random loss loses in every window at its base RTT; an
 *    overloaded LTE queue drops in bursts, with its RTT several times its
 *    base, and that loss is congestion control's business (GCC backs off):
 *    demoting such a path moves its load onto the other path, which then
 *    congests in turn. Classifying loss as random or congestive by the
 *    queueing delay at the time follows TCP Veno (Fu & Liew, "TCP Veno: TCP
 *    Enhancement for Transmission Over Wireless Access Networks", IEEE JSAC
 *    21(2), 2003, §II: a loss with a small backlog estimate is random).
 *    Except at the rate floor (`countQueueLoss`, decided by the caller,
 *    src/engine/path-recovery.ts): a path whose congestion controller has
 *    sat at its minimum rate cannot back off any further, so while another
 *    usable path loses less its loss counts even with a queue (our rule; a
 *    0.1 Mbps uplink pinned at GCC's 100 kbps floor, issue 10's slow pairs).
 *
 * Bounded: MAX_PATHS entries of fixed size (GAP_BINS numbers and a ring of
 * sustainedLossWindows numbers each).
 */
import { MAX_PATHS } from '../core/types.js';
import type { PathId } from '../core/types.js';
import { suspectSilenceUs } from '../sched/path-manager.js';
import { isValidPathId } from '../sched/path-util.js';

export interface PathHealthConfig {
  /** Floor of the silence threshold (ms). Default 100 (receivers report every 50 ms). */
  minSilenceMs: number;
  /** The threshold is at least this many SRTTs. Default 2 (a path silent for > 2 x its RTT is suspect). */
  srttFactor: number;
  /** Quantile (0..1) of the recent report gaps the threshold is scaled from. Default 0.99. */
  gapQuantile: number;
  /** Factor on that quantile. Default 1.25. */
  gapMargin: number;
  /** Half-life of a gap sample's weight (ms of the caller's clock). Default 30000. */
  gapHalfLifeMs: number;
  /** Decayed sample weight needed before learned gaps count (reports; 20 = 1 s of reports). Default 20. */
  minGapSamples: number;
  /** A gap that ended with at least this fraction of its packets lost is a failure, not learned. Default 0.5. */
  failureLoss: number;
  /** Loss windows (see sustainedLoss) that must all be lossy. Default 3. */
  sustainedLossWindows: number;
  /** A loss window with more queueing delay (SRTT - min RTT, ms) than max(this, min RTT / 2) is congestion, not counted. Default 50. */
  congestionQueueMs: number;
}

export const DEFAULT_PATH_HEALTH_CONFIG: Readonly<PathHealthConfig> = Object.freeze({
  minSilenceMs: 100,
  srttFactor: 2,
  gapQuantile: 0.99,
  gapMargin: 1.25,
  gapHalfLifeMs: 30_000,
  minGapSamples: 20,
  failureLoss: 0.5,
  sustainedLossWindows: 3,
  congestionQueueMs: 50,
});

/** Gap histogram: bin k holds gaps in [GAP_MIN_MS x 2^(k/BINS_PER_OCTAVE), next edge). */
const GAP_MIN_MS = 10;
const BINS_PER_OCTAVE = 4;
/** 12 octaves above 10 ms: up to 41 s (longer gaps fall in the last bin). */
const GAP_BINS = 12 * BINS_PER_OCTAVE;

export interface PathHealthStats {
  /** Gaps learned (all paths). */
  gapsLearned: number;
  /** Gaps longer than the silence threshold that ended with most of their packets lost: failures (all paths). */
  failureGaps: number;
  /** Gaps longer than the silence threshold whose packets arrived: delay stalls (all paths). */
  falseAlarms: number;
}

interface Entry {
  bins: Float64Array;
  total: number;
  lastDecayUs: number;
  loss: Float64Array;
  lossCount: number;
  lossNext: number;
  /** A failure gap ended and nobody took it yet (see takeFailure). */
  failed: boolean;
  /** Start (µs) of the silence failoverDue last answered true for. */
  failoverSilenceUs: number;
}

export class PathHealth {
  readonly config: Readonly<PathHealthConfig>;
  private readonly entries: (Entry | undefined)[] = new Array(MAX_PATHS).fill(undefined);
  private readonly counters: PathHealthStats = { gapsLearned: 0, failureGaps: 0, falseAlarms: 0 };

  /** @throws RangeError for a quantile or loss outside [0, 1], a margin < 1, or non-positive times or counts. */
  constructor(config: Partial<PathHealthConfig> = {}) {
    const c = { ...DEFAULT_PATH_HEALTH_CONFIG, ...config };
    for (const k of ['gapQuantile', 'failureLoss'] as const) {
      if (!(c[k] >= 0 && c[k] <= 1)) throw new RangeError(`PathHealth: ${k} must be in [0, 1], got ${c[k]}`);
    }
    if (!(c.gapMargin >= 1 && Number.isFinite(c.gapMargin))) throw new RangeError(`PathHealth: gapMargin must be a finite number >= 1, got ${c.gapMargin}`);
    for (const k of ['minSilenceMs', 'srttFactor', 'gapHalfLifeMs', 'minGapSamples', 'congestionQueueMs'] as const) {
      if (!(Number.isFinite(c[k]) && c[k] > 0)) throw new RangeError(`PathHealth: ${k} must be a finite number > 0, got ${c[k]}`);
    }
    if (!(Number.isInteger(c.sustainedLossWindows) && c.sustainedLossWindows >= 1 && c.sustainedLossWindows <= 64)) {
      throw new RangeError(`PathHealth: sustainedLossWindows must be an integer in [1, 64], got ${c.sustainedLossWindows}`);
    }
    this.config = Object.freeze(c);
  }

  get stats(): PathHealthStats {
    return { ...this.counters };
  }

  /**
   * A receiver report of path `id` arrived at `nowUs`.
   * @param gapUs age (µs) of the oldest packet that no report covered until
   *   this one; undefined when nothing was outstanding (nothing to learn).
   * @param lostFraction fraction (0..1) of the packets this report resolved
   *   that it declared lost: at or above `failureLoss` the gap is not
   *   learned, and if it was longer than the silence threshold (and the path
   *   has `minGapSamples` of history) it was a failure ({@link takeFailure}).
   * @param srttMs the path's SRTT (ms), for the threshold.
   * Invalid ids, times and gaps are ignored.
   */
  onReport(id: PathId, nowUs: number, gapUs: number | undefined, lostFraction: number, srttMs: number): void {
    if (gapUs === undefined || !(gapUs >= 0) || !Number.isFinite(gapUs) || !Number.isFinite(nowUs)) return;
    const e = this.entry(id);
    if (!e) return;
    if (lostFraction >= this.config.failureLoss) {
      // Before the path has a history (its first second: start-up probes overload
      // small uplinks and lose most of a burst), a lossy gap is not judged.
      if (e.total >= this.config.minGapSamples && gapUs > this.silenceThresholdUs(id, srttMs)) {
        this.counters.failureGaps++;
        e.failed = true;
      }
      return;
    }
    // A false alarm: the gap outlasted the threshold but its packets arrived (a
    // delay stall). It weighs 2 x (1 - gapQuantile) of the history at once, so the
    // quantile, and the threshold, move past it now rather than after many more.
    const falseAlarm = e.total >= this.config.minGapSamples && gapUs > this.silenceThresholdUs(id, srttMs);
    this.decay(e, nowUs);
    const ms = gapUs / 1000;
    const k = ms <= GAP_MIN_MS ? 0 : Math.min(GAP_BINS - 1, Math.floor(BINS_PER_OCTAVE * Math.log2(ms / GAP_MIN_MS)));
    const w = falseAlarm ? Math.max(1, 2 * (1 - this.config.gapQuantile) * e.total) : 1;
    e.bins[k] += w;
    e.total += w;
    this.counters.gapsLearned++;
    if (falseAlarm) this.counters.falseAlarms++;
  }

  /**
   * The report gap (ms) below which a `gapQuantile` share of the path's
   * recent gaps fell (the upper edge of that histogram bin); undefined
   * before `minGapSamples` of decayed weight.
   */
  gapQuantileMs(id: PathId): number | undefined {
    const e = isValidPathId(id) ? this.entries[id] : undefined;
    if (!e || e.total < this.config.minGapSamples) return undefined;
    const tail = (1 - this.config.gapQuantile) * e.total;
    let above = 0;
    for (let k = GAP_BINS - 1; k >= 0; k--) {
      above += e.bins[k];
      if (above > tail) return GAP_MIN_MS * 2 ** ((k + 1) / BINS_PER_OCTAVE);
    }
    return GAP_MIN_MS;
  }

  /**
   * How long (µs) path `id` may stay silent (packets outstanding, no report)
   * before it counts as failed: max(minSilenceMs, srttFactor x `srttMs`,
   * gapMargin x {@link gapQuantileMs}).
   */
  silenceThresholdUs(id: PathId, srttMs: number): number {
    const c = this.config;
    let ms = Math.max(c.minSilenceMs, Number.isFinite(srttMs) ? c.srttFactor * srttMs : 0);
    const q = this.gapQuantileMs(id);
    if (q !== undefined) ms = Math.max(ms, c.gapMargin * q);
    return ms * 1000;
  }

  /**
   * True when the path's learned silence threshold is below the fixed
   * suspicion rule's (PathManager: max(250 ms, 2 x SRTT + 100 ms)): a steady
   * path, whose silence that long is an anomaly, so fast failover may act
   * on it (duplicates, a key frame). A path whose own report gaps are
   * routinely that long (an LTE uplink's delay stalls, delivered in full
   * afterwards) is left to the fixed rule: acting on its silences cost
   * 1-4 s of freeze per call on the mahimahi LTE pairs, as the key frames and
   * duplicates landed on the other path while it ran near its capacity.
   */
  detectsEarly(id: PathId, srttMs: number): boolean {
    return this.silenceThresholdUs(id, srttMs) < suspectSilenceUs(srttMs);
  }

  /**
   * Fast failover: true once per silence (identified by `silenceStartUs`,
   * the send time of its oldest unreported packet) as soon as it outlasts
   * {@link silenceThresholdUs}. Invalid input: false.
   */
  failoverDue(id: PathId, silenceStartUs: number, nowUs: number, srttMs: number): boolean {
    if (!Number.isFinite(silenceStartUs) || !Number.isFinite(nowUs) || nowUs - silenceStartUs <= this.silenceThresholdUs(id, srttMs)) return false;
    const e = this.entry(id);
    if (!e || e.failoverSilenceUs === silenceStartUs) return false;
    e.failoverSilenceUs = silenceStartUs;
    return true;
  }

  /**
   * Did a failure end on path `id` since the last call (a silence longer
   * than the threshold whose packets were mostly lost: a blackhole, not a
   * delay stall)? Clears the flag.
   */
  takeFailure(id: PathId): boolean {
    const e = isValidPathId(id) ? this.entries[id] : undefined;
    if (!e?.failed) return false;
    e.failed = false;
    return true;
  }

  /**
   * A loss window of path `id` closed with this loss fraction (0..1; invalid
   * values are ignored) while the path's SRTT and min RTT were these (ms;
   * non-finite = unknown, the loss counts). `countQueueLoss`: the loss
   * counts even with a standing queue (the caller's rate-floor rule, see the
   * module comment, 2.).
   */
  onLossWindow(id: PathId, lossRate: number, srttMs: number, minRttMs: number, countQueueLoss = false): void {
    if (!(lossRate >= 0 && lossRate <= 1)) return;
    const e = this.entry(id);
    if (!e) return;
    const queueMs = srttMs - minRttMs;
    const congested = !countQueueLoss && Number.isFinite(queueMs) && queueMs > Math.max(this.config.congestionQueueMs, minRttMs / 2);
    e.loss[e.lossNext] = congested ? 0 : lossRate;
    e.lossNext = (e.lossNext + 1) % e.loss.length;
    e.lossCount = Math.min(e.loss.length, e.lossCount + 1);
  }

  /** The lowest loss fraction of the last `sustainedLossWindows` windows; 0 before that many. */
  sustainedLoss(id: PathId): number {
    const e = isValidPathId(id) ? this.entries[id] : undefined;
    if (!e || e.lossCount < e.loss.length) return 0;
    let m = 1;
    for (let i = 0; i < e.loss.length; i++) m = Math.min(m, e.loss[i]);
    return m;
  }

  /** Forget a path (removed). */
  remove(id: PathId): void {
    if (isValidPathId(id)) this.entries[id] = undefined;
  }

  private entry(id: PathId): Entry | undefined {
    if (!isValidPathId(id)) return undefined;
    let e = this.entries[id];
    if (!e) {
      e = {
        bins: new Float64Array(GAP_BINS),
        total: 0,
        lastDecayUs: Number.NaN,
        loss: new Float64Array(this.config.sustainedLossWindows),
        lossCount: 0,
        lossNext: 0,
        failed: false,
        failoverSilenceUs: Number.NaN,
      };
      this.entries[id] = e;
    }
    return e;
  }

  private decay(e: Entry, nowUs: number): void {
    if (Number.isNaN(e.lastDecayUs)) {
      e.lastDecayUs = nowUs;
      return;
    }
    const dt = nowUs - e.lastDecayUs;
    if (!(dt > 0)) return;
    e.lastDecayUs = nowUs;
    const f = 2 ** (-dt / (this.config.gapHalfLifeMs * 1000));
    e.total = 0;
    for (let k = 0; k < GAP_BINS; k++) {
      e.bins[k] *= f;
      e.total += e.bins[k];
    }
  }
}
