/**
 * Automatic relay choice for a call's paths (issue 16, `MultipathCallOptions.relaySelection`):
 * the discounted UCB of Zhang & Lei, "An Online Learning Based Path Selection
 * for Multipath Video Telephony Service in Overlay", §3.2 (Eq. 11-13, Alg.
 * 2-4; src/sched/relay-ucb.ts), fed with each path's measured round-trip
 * time, switching a path with `MultipathCall.switchRelay`.
 *
 * - One bandit per path (its arms: the relays it may use, `relaysOf[pathId]`,
 *   default every relay), so each path's switches have their own dwell;
 *   Eq. 13's subflow count C is then 1.
 * - Reward: 1000 / RTT ms (s⁻¹; larger is better, as the paper's bandwidth
 *   reward), from the RTT of the path's selected ICE candidate pair
 *   (`currentRoundTripTime` of its STUN checks, which cross the relay and its
 *   queues like the media). The paper rewards the estimated bandwidth; a
 *   relay that got slow is what a real-time call must leave, and the RTT is
 *   measured on every path whatever it carries (the offerer, which drives the
 *   switch, may send no media at all). Only fresh samples (the pair's
 *   `responsesReceived` grew) of the relay in use count (Alg. 2).
 * - A decision slot (Alg. 4) every `intervalMs` (default 1000, the paper's
 *   1 s), only once the path has been on its relay `minDwellMs` (default
 *   10 s, the paper's kObservedTime) and its relay has at least one sample,
 *   and never during a switch. Ours, not the paper's: a bail-out (after 3 s
 *   on the relay, dwell or not) to the relay with the best smoothed reward
 *   when the relay in use earns under half of it by its newest sample since the switch:
 *   early in a call (few pulls) the exploration term of Eq. 13 can keep a
 *   relay whose RTT just grew tenfold for the whole observed window, and the
 *   retry of a relay that is still slow costs seconds, not a dwell.
 *   An arm never sampled has an infinite index (§3.2 "all available paths
 *   will be exploited"), so early in a call each path tries every relay of
 *   its list once, one per dwell; a relay left long ago is retried now and then
 *   (Bw of an unobserved arm is its best sample ever, §3.2): each retry is one
 *   ICE restart (src/call/route-handover.ts).
 * - A relay that got slow is left at the first slot where its index falls
 *   below another's, the dwell permitting, or by the bail-out. The
 *   observed window (Alg. 3 kObservedTime) is 30 s by default, not the
 *   paper's 10 s ({@link DEFAULT_OBSERVED_WINDOW_MS} says why).
 *
 * {@link RelaySelection} is the decision logic (testable with a fake clock);
 * {@link startRelaySelection} drives it from the call on a timer. This module
 * is loaded only by calls that use `relaySelection`.
 */
import type { PathId } from '../core/types.js';
import { type RelayUcbConfig, RelayUcbSelector } from '../sched/relay-ucb.js';
import type { ResolvedRelaySelection } from './relay-selection-config.js';

export type { RelaySelectionConfig, RelaySelectionOption } from './relay-selection-config.js';

interface PathBandit {
  arms: number[];
  ucb: RelayUcbSelector;
  lastSwitchMs: number;
  /** A sample of the relay in use arrived since the last switch. */
  sampledSinceSwitch: boolean;
  /** Reward of the newest sample of the relay in use. */
  lastReward: number;
}

/**
 * kObservedTime (Alg. 3) for relays (ms): 30 s where the paper has 10 s. A
 * relay unobserved for this long is credited its best sample ever and so
 * retried; each retry is an ICE restart and seconds of that relay's latency
 * (the paper's arms cost a bandwidth sample). With 10 s a relay that stays
 * slow was retried every ~14 s in the unit test (21% of the time on it), with
 * 30 s every ~31 s.
 */
export const DEFAULT_OBSERVED_WINDOW_MS = 30_000;

/** Bail-out: the relay in use is left (dwell or not) when the reward of its newest sample is below this fraction of another relay's smoothed reward. */
export const BAIL_OUT_RATIO = 0.5;

/** What one slot needs to know about a path. */
export interface RelaySlotInput {
  /** The relay the path runs through now (index in `relays`). */
  relay: number;
  /** A fresh RTT sample (ms) of the path on that relay since the last slot, if any. */
  rttMs?: number;
  /** An ICE restart of the path is under way: no sample, no decision. */
  switching: boolean;
}

/** See the module comment. */
export class RelaySelection {
  private readonly paths: PathBandit[];
  private readonly minDwellMs: number;
  private readonly bailOutMs: number;
  /** Switches asked for so far. */
  switches = 0;

  /**
   * @param relaysOf the relays each path may use (resolveRelaySelection)
   * @param startMs now: the dwell of the relays the paths start on counts from here
   * @param bailOutMs least time on a relay before a bail-out (ms; default 3 s, at most `minDwellMs`)
   * @throws RelayUcbError for a bad `ucb` config
   */
  constructor(relaysOf: number[][], minDwellMs: number, startMs: number, ucb: Partial<RelayUcbConfig> = {}, bailOutMs = 3000) {
    this.minDwellMs = minDwellMs;
    this.bailOutMs = Math.min(bailOutMs, minDwellMs);
    const cfg = { observedWindowMs: DEFAULT_OBSERVED_WINDOW_MS, ...ucb };
    this.paths = relaysOf.map((arms) => ({ arms: [...arms], ucb: new RelayUcbSelector([arms.length], cfg), lastSwitchMs: startMs, sampledSinceSwitch: false, lastReward: 0 }));
  }

  /**
   * Bail-out: the measured relay with the best smoothed reward when the relay
   * in use (arm `arm`) earns under BAIL_OUT_RATIO of it by its newest sample
   * (ICE RTT samples come every few seconds: waiting for the smoothed value
   * to fall costs one more), else undefined.
   */
  private bailOutTarget(b: PathBandit, arm: number): number | undefined {
    const cur = b.lastReward;
    let best: number | undefined;
    let bestHat = cur / BAIL_OUT_RATIO;
    for (let j = 0; j < b.arms.length; j++) {
      const o = b.ucb.arm(0, j);
      if (j !== arm && o && o.samples > 0 && o.bwHat > bestHat) {
        best = j;
        bestHat = o.bwHat;
      }
    }
    return best;
  }

  /**
   * One decision slot at `nowMs`: feed each path's fresh sample to its
   * bandit, decide where the dwell allows. @returns the switches to make
   * (path, relay); the caller makes them (MultipathCall.switchRelay).
   */
  onSlot(nowMs: number, input: (pathId: PathId) => RelaySlotInput | undefined): Array<{ pathId: PathId; relay: number }> {
    const out: Array<{ pathId: PathId; relay: number }> = [];
    for (const [pathId, b] of this.paths.entries()) {
      const x = input(pathId);
      if (!x || x.switching || b.arms.length < 2) continue;
      const arm = b.arms.indexOf(x.relay);
      if (arm >= 0 && x.rttMs !== undefined && Number.isFinite(x.rttMs) && x.rttMs >= 0) {
        b.lastReward = 1000 / Math.max(1, x.rttMs);
        b.ucb.onBandwidthSample(0, arm, b.lastReward, nowMs);
        b.sampledSinceSwitch = true;
      }
      // Never leave a relay of the list before it gave one sample.
      if (arm >= 0 && (b.ucb.arm(0, arm)?.samples ?? 0) === 0) continue;
      const since = nowMs - b.lastSwitchMs;
      const better = since >= this.bailOutMs && arm >= 0 && b.sampledSinceSwitch ? this.bailOutTarget(b, arm) : undefined;
      if (better === undefined && since < this.minDwellMs) continue;
      const relay = better !== undefined ? b.arms[better] : b.arms[b.ucb.decide(nowMs)[0]];
      if (relay !== x.relay) {
        b.lastSwitchMs = nowMs;
        b.sampledSinceSwitch = false;
        this.switches++;
        out.push({ pathId, relay });
      }
    }
    return out;
  }

  /** The bandit's view of a path's relays: the Eq. 13 index and the smoothed reward (1000 / RTT ms) per relay. */
  describe(pathId: PathId): Array<{ relay: number; index: number; reward: number; samples: number }> {
    const b = this.paths[pathId];
    if (!b) return [];
    return b.arms.map((relay, j) => ({ relay, index: b.ucb.index(0, j), reward: b.ucb.arm(0, j)?.bwHat ?? 0, samples: b.ucb.arm(0, j)?.samples ?? 0 }));
  }
}

/** What {@link startRelaySelection} needs from the call. */
export interface RelaySelectionHost {
  nowMs(): number;
  numPaths: number;
  /** Sessions whose paths this side offers (and so switches), connected. */
  offered(): Array<{ freshPairRtt(id: PathId): Promise<number | undefined>; isSwitching(id: PathId): boolean }>;
  relayIndex(id: PathId): number;
  switchRelay(id: PathId, relay: number): void;
  onError(e: Error): void;
}

/** A running selection: its state, and how to stop its timer. */
export interface RunningRelaySelection {
  selection: RelaySelection;
  stop(): void;
}

/**
 * Run the selection every `cfg.intervalMs`: per path, the mean fresh ICE
 * RTT over the participants whose paths this side offers, then the
 * switches it chooses (MultipathCall.switchRelay). A slot still reading
 * stats when the next is due is not overlapped.
 */
export function startRelaySelection(cfg: ResolvedRelaySelection, host: RelaySelectionHost): RunningRelaySelection {
  const selection = new RelaySelection(cfg.relaysOf, cfg.minDwellMs, host.nowMs(), cfg.ucb);
  let busy = false;
  let stopped = false;
  const slot = async (): Promise<void> => {
    const offered = host.offered();
    if (offered.length === 0) return;
    const inputs = await Promise.all(
      Array.from({ length: host.numPaths }, async (_, pathId): Promise<RelaySlotInput> => {
        const rtts = (await Promise.all(offered.map((s) => s.freshPairRtt(pathId)))).filter((x): x is number => x !== undefined);
        return {
          relay: host.relayIndex(pathId),
          switching: offered.some((s) => s.isSwitching(pathId)),
          ...(rtts.length > 0 ? { rttMs: rtts.reduce((a, b) => a + b, 0) / rtts.length } : {}),
        };
      }),
    );
    if (stopped) return;
    for (const { pathId, relay } of selection.onSlot(host.nowMs(), (id) => inputs[id])) host.switchRelay(pathId, relay);
  };
  const timer = setInterval(() => {
    if (busy || stopped) return;
    busy = true;
    slot()
      .catch((e) => host.onError(e instanceof Error ? e : new Error(String(e))))
      .finally(() => {
        busy = false;
      });
  }, cfg.intervalMs);
  return {
    selection,
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
