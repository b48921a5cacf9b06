/**
 * State of the Converge scheduler (src/sched/converge.ts): per-path
 * persistent state (enabled set, accumulated alpha, Eq. 3 streaks, probe
 * times, layer debt) and per-batch scratch arrays, indexed by PathId, so
 * that a batch allocates nothing but its Assignment objects. The batch
 * steps operating on it are in src/sched/converge-split.ts.
 */
import type { PathState } from '../core/types.js';
import { MAX_PATHS } from '../core/types.js';
import { SchedError } from './errors.js';
import { networkBacklogBytes } from './delay-budget.js';
import { deliveryRateBps, isValidPathId, lossFraction, rttMs, sendRateBps } from './path-util.js';
import type { ConvergeConfig, ConvergeStats } from './types.js';

/** Defaults of {@link ConvergeConfig}. */
export const DEFAULT_CONVERGE_CONFIG: Readonly<ConvergeConfig> = Object.freeze({
  probeIntervalMs: 100,
  reenableCheckIntervalMs: 100,
  reenableChecks: 3,
  reenableHoldMs: 250,
  rttEwmaGain: 0.25,
  defaultRttMs: 100,
  maxBoost: 1.25,
  priorityBudgetMs: 33,
  batchEwmaGain: 0.125,
  alphaHalfLifeMs: 3000,
  reenableMaxLossRate: 1,
  reenableMinFcdMs: 33,
  deadlineSlackMs: 0,
  deadlineEwmaGain: 0.05,
  baseLayerFastPath: true,
  upperLayerSlackMs: 33,
  delayBudgetMs: 200,
  delayBudgetMargin: 0.8,
  budgetQueuedGoodputMs: 0,
  inflightSlackMs: 50,
  encoderExcludesDisabled: true,
  fastReenable: true,
});

/**
 * Merge `config` over the defaults and validate it.
 * @throws SchedError `invalid-config` for a non-finite or out-of-range field.
 */
export function resolveConvergeConfig(config: Partial<ConvergeConfig>): Readonly<ConvergeConfig> {
  const c: ConvergeConfig = { ...DEFAULT_CONVERGE_CONFIG, ...config };
  const check = (field: keyof ConvergeConfig, ok: boolean, expected: string): void => {
    if (!ok) throw SchedError.invalidConfig(field, c[field], expected);
  };
  const fin = (x: number): boolean => typeof x === 'number' && Number.isFinite(x);
  check('probeIntervalMs', fin(c.probeIntervalMs) && c.probeIntervalMs >= 0, 'finite >= 0');
  check('reenableCheckIntervalMs', fin(c.reenableCheckIntervalMs) && c.reenableCheckIntervalMs >= 0, 'finite >= 0');
  check('reenableChecks', fin(c.reenableChecks) && Number.isInteger(c.reenableChecks) && c.reenableChecks >= 1, 'integer >= 1');
  check('reenableHoldMs', fin(c.reenableHoldMs) && c.reenableHoldMs >= 0, 'finite >= 0');
  check('rttEwmaGain', fin(c.rttEwmaGain) && c.rttEwmaGain > 0 && c.rttEwmaGain <= 1, 'in (0, 1]');
  check('defaultRttMs', fin(c.defaultRttMs) && c.defaultRttMs > 0, 'finite > 0');
  check('maxBoost', fin(c.maxBoost) && c.maxBoost >= 1, 'finite >= 1');
  check('priorityBudgetMs', fin(c.priorityBudgetMs) && c.priorityBudgetMs >= 0, 'finite >= 0');
  check('batchEwmaGain', fin(c.batchEwmaGain) && c.batchEwmaGain > 0 && c.batchEwmaGain <= 1, 'in (0, 1]');
  check('alphaHalfLifeMs', fin(c.alphaHalfLifeMs) && c.alphaHalfLifeMs >= 0, 'finite >= 0 (0 = no decay)');
  check('reenableMinFcdMs', fin(c.reenableMinFcdMs) && c.reenableMinFcdMs >= 0, 'finite >= 0');
  check('reenableMaxLossRate', fin(c.reenableMaxLossRate) && c.reenableMaxLossRate >= 0 && c.reenableMaxLossRate <= 1, 'in [0, 1]');
  check('deadlineSlackMs', fin(c.deadlineSlackMs) && (c.deadlineSlackMs >= 0 || c.deadlineSlackMs === -1), 'finite >= 0, or -1 (off)');
  check('deadlineEwmaGain', fin(c.deadlineEwmaGain) && c.deadlineEwmaGain > 0 && c.deadlineEwmaGain <= 1, 'in (0, 1]');
  check('upperLayerSlackMs', fin(c.upperLayerSlackMs) && c.upperLayerSlackMs >= 0, 'finite >= 0');
  check('delayBudgetMs', fin(c.delayBudgetMs) && c.delayBudgetMs >= 0, 'finite >= 0 (0 = off)');
  check('budgetQueuedGoodputMs', fin(c.budgetQueuedGoodputMs) && c.budgetQueuedGoodputMs >= 0, 'finite >= 0 (0 = off)');
  check('delayBudgetMargin', fin(c.delayBudgetMargin) && c.delayBudgetMargin > 0, 'finite > 0');
  check('inflightSlackMs', fin(c.inflightSlackMs) && (c.inflightSlackMs >= 0 || c.inflightSlackMs === -1), 'finite >= 0, or -1 (off)');
  if (typeof c.encoderExcludesDisabled !== 'boolean') throw SchedError.invalidConfig('encoderExcludesDisabled', c.encoderExcludesDisabled as unknown as number, 'a boolean');
  if (typeof c.fastReenable !== 'boolean') throw SchedError.invalidConfig('fastReenable', c.fastReenable as unknown as number, 'a boolean');
  if (typeof c.baseLayerFastPath !== 'boolean') throw SchedError.invalidConfig('baseLayerFastPath', c.baseLayerFastPath as unknown as number, 'a boolean');
  return Object.freeze(c);
}

/** Bound of the accumulated alpha share (fraction of a batch). */
export const MAX_ALPHA_SHARE = 4;
/** Bound of raw alpha kept before the first batch. */
export const MAX_PENDING_ALPHA = 1e6;
export const EPS = 1e-9;

/** See the module comment. Fields are shared with the batch steps (converge-split.ts). */
export class ConvergeState {
  constructor(readonly config: Readonly<ConvergeConfig>) {}

  // --- persistent per-path state (index = PathId) ---
  readonly known = new Uint8Array(MAX_PATHS);
  readonly disabled = new Uint8Array(MAX_PATHS);
  /** Accumulated alpha as a fraction of a typical frame batch (Eq. 2). */
  readonly alphaShare = new Float64Array(MAX_PATHS);
  /** Scratch of encoderRateFraction: planned share per path after Eq. 2 moves. */
  readonly load = new Float64Array(MAX_PATHS);
  /** Raw alpha received before any batch size was known. */
  readonly pendingAlpha = new Float64Array(MAX_PATHS);
  /** Eq. 1 rounding carry (packets). */
  readonly carry = new Float64Array(MAX_PATHS);
  /** RTT EWMA for Eq. 3 (ms); 0 = no sample yet. */
  readonly rttEwma = new Float64Array(MAX_PATHS);
  readonly lastProbeUs = new Float64Array(MAX_PATHS).fill(-Infinity);
  readonly probedSinceDisable = new Uint8Array(MAX_PATHS);
  readonly streak = new Int32Array(MAX_PATHS);
  readonly streakSinceUs = new Float64Array(MAX_PATHS);
  lastCheckUs = -Infinity;
  lastDecayUs = NaN;
  /** EWMA of the number of frame packets (priorities 2, 3, 4, 6) per batch. */
  batchRef = 0;
  /** FCD (ms) of the newest accepted QoE feedback; -1 before any. */
  lastFcdMs = -1;

  // --- per-batch scratch (no allocation per batch, except growth of prio/dest) ---
  readonly seen = new Uint8Array(MAX_PATHS);
  readonly up = new Uint8Array(MAX_PATHS);
  readonly rate = new Float64Array(MAX_PATHS);
  readonly gput = new Float64Array(MAX_PATHS);
  readonly rtt = new Float64Array(MAX_PATHS);
  readonly loss = new Float64Array(MAX_PATHS);
  readonly inE = new Uint8Array(MAX_PATHS);
  readonly order = new Int32Array(MAX_PATHS);
  readonly cpt = new Float64Array(MAX_PATHS);
  readonly share = new Float64Array(MAX_PATHS);
  readonly base = new Float64Array(MAX_PATHS);
  readonly target = new Int32Array(MAX_PATHS);
  readonly extra = new Uint8Array(MAX_PATHS);
  readonly used = new Int32Array(MAX_PATHS);
  readonly rem = new Int32Array(MAX_PATHS);
  /** Bytes queued at the sender (pacer + transport buffer) per up path, plus the network backlog (`inflightSlackMs`). */
  readonly queued = new Float64Array(MAX_PATHS);
  /** EWMA of (packets kept by the deadline) / (Eq. 1+2 target) per path; 1 = never cut. */
  readonly keptFrac = new Float64Array(MAX_PATHS).fill(1);
  /** Packets of its Eq. 1 share a path gave to the fast path for base-layer frames, owed back by upper-layer frames. */
  readonly layerDebt = new Float64Array(MAX_PATHS);
  /** Packets of debt paid back to the path in the current batch. */
  readonly layerPaid = new Float64Array(MAX_PATHS);
  /** Last time (µs) a batch gave the path packets (media or priority). */
  readonly lastUsedUs = new Float64Array(MAX_PATHS).fill(-Infinity);
  readonly cred = new Float64Array(MAX_PATHS);
  readonly prioCount = new Int32Array(7);
  prio = new Uint8Array(64);
  dest = new Int8Array(64);
  eCount = 0;

  readonly counters: ConvergeStats = {
    feedbackAccepted: 0,
    feedbackDuplicate: 0,
    feedbackUnknownPath: 0,
    feedbackInvalid: 0,
    feedbackIgnoredDisabled: 0,
    probesSent: 0,
    pathsDisabled: 0,
    pathsEnabled: 0,
    forcedEnables: 0,
    fastReenables: 0,
    invalidPathStates: 0,
    deadlineMovedPackets: 0,
    baseLayerMovedPackets: 0,
  };

  /** Copy the snapshot into scratch arrays; returns the number of up paths. */
  readPaths(paths: readonly PathState[]): number {
    this.seen.fill(0);
    this.up.fill(0);
    let upCount = 0;
    const n = paths == null ? 0 : paths.length;
    for (let i = 0; i < n; i++) {
      const p = paths[i];
      if (p == null || !isValidPathId(p.id) || this.seen[p.id] === 1) {
        this.counters.invalidPathStates++;
        continue;
      }
      const id = p.id;
      this.seen[id] = 1;
      this.known[id] = 1;
      if (p.up !== true) continue;
      this.up[id] = 1;
      upCount++;
      this.rate[id] = sendRateBps(p);
      this.gput[id] = deliveryRateBps(p);
      this.rtt[id] = rttMs(p, this.config.defaultRttMs);
      this.loss[id] = lossFraction(p);
      const q = p.queuedBytes;
      this.queued[id] = typeof q === 'number' && q > 0 && Number.isFinite(q) ? q : 0;
      if (this.config.inflightSlackMs >= 0) this.queued[id] += networkBacklogBytes(p, this.config.inflightSlackMs);
    }
    return upCount;
  }

  decayAlpha(nowUs: number): void {
    const hl = this.config.alphaHalfLifeMs;
    if (hl > 0 && Number.isFinite(this.lastDecayUs) && nowUs > this.lastDecayUs) {
      const f = Math.pow(2, -(nowUs - this.lastDecayUs) / 1000 / hl);
      for (let i = 0; i < MAX_PATHS; i++) if (this.alphaShare[i] !== 0) this.alphaShare[i] *= f;
    }
    if (!Number.isFinite(this.lastDecayUs) || nowUs > this.lastDecayUs) this.lastDecayUs = nowUs;
  }

  disable(i: number): void {
    this.disabled[i] = 1;
    this.streak[i] = 0;
    this.probedSinceDisable[i] = 0;
    this.lastProbeUs[i] = -Infinity;
    this.carry[i] = 0;
    this.layerDebt[i] = 0;
    this.counters.pathsDisabled++;
  }

  enable(i: number): void {
    this.disabled[i] = 0;
    this.alphaShare[i] = 0;
    this.pendingAlpha[i] = 0;
    this.carry[i] = 0;
    this.layerDebt[i] = 0;
    this.streak[i] = 0;
    this.counters.pathsEnabled++;
  }
}

export function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : x > hi ? hi : x;
}
