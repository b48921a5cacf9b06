/**
 * I/O-free path demotion with hysteresis: a path that flaps (goes
 * silent again and again) or loses heavily is demoted at once, and promoted
 * back only after it has stayed clean for a hold time that doubles with
 * every fault episode it had recently.
 *
 * Why: a flapping path returns, gets the call's media, and dies again with
 * a frame or two in flight each time: every flap is a freeze. A path that
 * loses 30% of its packets costs NACK round trips and FEC on every frame.
 * Sending like the better path alone is what the user would get by
 * unplugging the bad one; the hysteresis makes that automatic and lets the
 * path back once it behaves.
 *
 * Per path, fed a health sample at every engine tick ({@link PathHysteresis.update}):
 * - fault = the path is silent (no receiver reports while sending: the
 *   engine's suspect/down rule) or its loss rate is above `demoteLoss`;
 * - the rising edge of a fault is an episode: strikes + 1 (strikes are
 *   forgotten after `forgetMs` without a new episode); the path is demoted;
 * - a demoted path is clean while it reports with loss below `promoteLoss`
 *   (plus the lowest loss of the usable paths, with `promoteRelative`)
 *   and an SRTT at most `promoteMaxRttExcessMs` above the best other path's;
 *   it is promoted once clean for hold = min(maxHoldMs, holdMs x 2^(strikes - 1)).
 *   Any fault or loss at or above `promoteLoss` restarts the clean clock.
 *
 * This is our design, in the spirit of BGP route flap damping (RFC 2439:
 * a penalty per flap, suppression, reuse after a quiet time) and of TCP's
 * timer back-off (RFC 6298 §5 (5.5): RTO doubles on each expiry): each
 * repeated failure makes the next trial wait longer.
 *
 * Bounded: MAX_PATHS entries of fixed size. Time is passed in (µs).
 */
import { MAX_PATHS } from '../core/types.js';
import type { PathId } from '../core/types.js';
import { isValidPathId } from './path-util.js';

export interface PathHysteresisConfig {
  /** Loss rate (0..1) above which a path is faulty. Default 0.15. */
  demoteLoss: number;
  /** Loss rate (0..1) below which a demoted path counts as clean. Default 0.05. */
  promoteLoss: number;
  /** Clean time a path needs after its first fault episode (ms). Default 3000. */
  holdMs: number;
  /** Longest hold (ms). Default 30000. */
  maxHoldMs: number;
  /** Strikes are forgotten after this long without a fault episode (ms). Default 30000. */
  forgetMs: number;
  /**
   * A demoted path counts as clean only while its SRTT exceeds the best
   * other path's by at most this (ms): a path that came back with a far
   * longer delay would only deliver late. Default 100.
   */
  promoteMaxRttExcessMs: number;
  /**
   * Promotion relative to the paths in use: a demoted path counts as clean
   * below promoteLoss plus the lowest loss of the usable paths
   * ({@link PathHealthSample.otherLossRate}), i.e. when it loses no more
   * than the path carrying the call, within promoteLoss. With an absolute
   * threshold a path demoted where every path loses ~10 % (random loss)
   * never comes back, since no path gets under 5 %. Our rule, in the
   * spirit of RFC 2439's reuse threshold (a route is reused once its
   * penalty decays, not once it is perfect). Default true: loss-sweep
   * (`--fec path`, converge), frozen s summed over seeds 1-9, 10 % loss
   * 39.84 -> 33.96, 0-5 % identical; the cellular suite (seeds 1-3) and
   * carriers, collapse, failover, flap, constant identical (no demotion
   * there ever ends by it).
   */
  promoteRelative: boolean;
}

export const DEFAULT_PATH_HYSTERESIS_CONFIG: Readonly<PathHysteresisConfig> = Object.freeze({
  demoteLoss: 0.15,
  promoteLoss: 0.05,
  holdMs: 3000,
  maxHoldMs: 30_000,
  forgetMs: 30_000,
  promoteMaxRttExcessMs: 100,
  promoteRelative: true,
});

/** One health sample of a path. */
export interface PathHealthSample {
  /** No receiver reports while sending (or the transport is down). */
  silent: boolean;
  /** Recent loss fraction 0..1 (promotion: a demoted path is clean below promoteLoss). */
  lossRate: number;
  /**
   * Loss fraction 0..1 that demotes above demoteLoss: the loss sustained over
   * several windows (src/engine/path-health.ts sustainedLoss), so a single
   * burst does not demote. Default: lossRate.
   */
  sustainedLossRate?: number;
  /** SRTT minus the best other usable path's SRTT (ms); undefined or <= 0 when none is better. */
  rttExcessMs?: number;
  /** Lowest recent loss fraction 0..1 of the other usable paths (PathHysteresisConfig.promoteRelative); undefined when none. */
  otherLossRate?: number;
}

export interface PathHysteresisStats {
  demotions: number;
  promotions: number;
  /** Fault episodes (rising edges), all paths. */
  faults: number;
}

interface Entry {
  demoted: boolean;
  faulty: boolean;
  strikes: number;
  lastFaultUs: number;
  /** Since when the demoted path is clean (µs); NaN = not clean. */
  cleanSinceUs: number;
}

export class PathHysteresis {
  readonly config: Readonly<PathHysteresisConfig>;
  private readonly entries: (Entry | undefined)[] = new Array(MAX_PATHS).fill(undefined);
  private readonly counters: PathHysteresisStats = { demotions: 0, promotions: 0, faults: 0 };

  /** @throws RangeError for losses outside [0, 1], promoteLoss > demoteLoss, or non-positive times. */
  constructor(config: Partial<PathHysteresisConfig> = {}) {
    const c = { ...DEFAULT_PATH_HYSTERESIS_CONFIG, ...config };
    for (const k of ['demoteLoss', 'promoteLoss'] as const) {
      if (!(c[k] >= 0 && c[k] <= 1)) throw new RangeError(`PathHysteresis: ${k} must be in [0, 1], got ${c[k]}`);
    }
    if (c.promoteLoss > c.demoteLoss) throw new RangeError(`PathHysteresis: promoteLoss (${c.promoteLoss}) > demoteLoss (${c.demoteLoss})`);
    for (const k of ['holdMs', 'maxHoldMs', 'forgetMs', 'promoteMaxRttExcessMs'] as const) {
      if (!(Number.isFinite(c[k]) && c[k] > 0)) throw new RangeError(`PathHysteresis: ${k} must be a finite number > 0, got ${c[k]}`);
    }
    this.config = Object.freeze(c);
  }

  get stats(): PathHysteresisStats {
    return { ...this.counters };
  }

  /** Feed a health sample of `id` at `nowUs`. Invalid ids and times are ignored. */
  update(id: PathId, nowUs: number, sample: PathHealthSample): void {
    if (!isValidPathId(id) || !Number.isFinite(nowUs)) return;
    let e = this.entries[id];
    if (!e) this.entries[id] = e = { demoted: false, faulty: false, strikes: 0, lastFaultUs: -Infinity, cleanSinceUs: Number.NaN };
    const loss = Number.isFinite(sample.lossRate) ? sample.lossRate : 0;
    const sustained = sample.sustainedLossRate !== undefined && Number.isFinite(sample.sustainedLossRate) ? sample.sustainedLossRate : loss;
    const fault = sample.silent || sustained > this.config.demoteLoss;
    if (fault) {
      if (!e.faulty) {
        e.faulty = true;
        this.counters.faults++;
        if (nowUs - e.lastFaultUs > this.config.forgetMs * 1000) e.strikes = 0;
        e.strikes = Math.min(e.strikes + 1, 30);
        e.lastFaultUs = nowUs;
      }
      if (!e.demoted) {
        e.demoted = true;
        this.counters.demotions++;
      }
      e.cleanSinceUs = Number.NaN;
      return;
    }
    e.faulty = false;
    if (!e.demoted) return;
    const other = this.config.promoteRelative && Number.isFinite(sample.otherLossRate) ? (sample.otherLossRate as number) : 0;
    if (loss >= this.config.promoteLoss + other || (sample.rttExcessMs ?? 0) > this.config.promoteMaxRttExcessMs) {
      e.cleanSinceUs = Number.NaN;
      return;
    }
    if (Number.isNaN(e.cleanSinceUs)) e.cleanSinceUs = nowUs;
    if (nowUs - e.cleanSinceUs >= this.holdUs(e.strikes)) {
      e.demoted = false;
      e.cleanSinceUs = Number.NaN;
      this.counters.promotions++;
    }
  }

  /** Is the path demoted (carry no media; probe it)? Unknown paths: false. */
  isDemoted(id: PathId): boolean {
    return isValidPathId(id) && this.entries[id]?.demoted === true;
  }

  /** The clean time (ms) the path needs now, 0 when it is not demoted. */
  holdMs(id: PathId): number {
    const e = isValidPathId(id) ? this.entries[id] : undefined;
    return e?.demoted ? this.holdUs(e.strikes) / 1000 : 0;
  }

  /** Forget a path (removed). */
  remove(id: PathId): void {
    if (isValidPathId(id)) this.entries[id] = undefined;
  }

  private holdUs(strikes: number): number {
    const c = this.config;
    return Math.min(c.maxHoldMs, c.holdMs * 2 ** Math.max(0, strikes - 1)) * 1000;
  }
}
