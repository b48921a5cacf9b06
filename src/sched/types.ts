/**
 * Strategy interface for multipath schedulers. A scheduler is I/O-free: the
 * engine gives it a batch of packets (usually one encoded frame's fragments,
 * or that frame's FEC packets, or retransmissions) and a snapshot of the
 * paths, and gets back one path per packet (plus optional probe duplicates).
 */
import type { Assignment, OutgoingPacket, PathId, PathState, QoeFeedback } from '../core/types.js';
import type { BuiltinSchedulerName } from '../strategies.js';

/**
 * A scheduler's registry name (src/sched/factory.ts): one the library ships
 * (src/strategies.ts; all but 'converge' registered on demand) or one an
 * app added with `registerScheduler`.
 */
export type SchedulerName = BuiltinSchedulerName | (string & {});

export interface Scheduler {
  /** Its registry name. */
  readonly name: string;
  /**
   * Assign every packet of `packets` to exactly one path that is `up` (never
   * drop). Packets of priority 1-5 (Converge Table 2) may be placed first.
   * May add `probe` duplicates for disabled paths. With no path up it returns [].
   */
  schedule(packets: readonly OutgoingPacket[], paths: readonly PathState[], nowUs: number): Assignment[];
  /** Receiver QoE feedback (Converge §4.2). Schedulers that do not use it ignore it. */
  onQoeFeedback(feedback: QoeFeedback, nowUs: number): void;
  /** False when the scheduler has disabled the path (Converge P_i = 0). */
  isEnabled(pathId: PathId): boolean;
  /**
   * Fraction (0, 1] of the summed rates S_i of the enabled paths that the
   * scheduler can fill without pushing any path past its own S_i, given how
   * it currently shifts packets between paths (Converge Eq. 2, negative
   * alpha moves packets to another path). The sender scales the encoder
   * target by it. Absent = 1 (schedulers that split by rate alone).
   */
  encoderRateFraction?(): number;
  /**
   * The receiver's current smoothed frame construction delay (ms), from its
   * periodic path reports. Converge uses it in the Eq. 3 re-enable check.
   */
  onFcd?(fcdMs: number, nowUs: number): void;
  /**
   * Optional: the smallest expected latency (ms) a packet scheduled now
   * would see over `paths` (Zhang & Lei §3.1.3 Eq. 4, overlay-ucb). When
   * present the sender drops a camera frame before encoding if it exceeds
   * 400 ms (ibid. §3.3 Eq. 15).
   */
  minExpectedLatencyMs?(paths: readonly PathState[]): number;
}

/**
 * Tuning of {@link ConvergeScheduler} (src/sched/converge.ts). Every field has
 * a default (`DEFAULT_CONVERGE_CONFIG`); pass a partial to override.
 */
export interface ConvergeConfig {
  /** Minimum spacing of probe duplicates sent to a disabled path (ms). Default 100. */
  probeIntervalMs: number;
  /** Spacing of Eq. 3 re-enable checks and RTT-EWMA updates (ms). Default 100. */
  reenableCheckIntervalMs: number;
  /** Consecutive checks that must satisfy Eq. 3 before a path is re-enabled. Default 3. */
  reenableChecks: number;
  /** ...and for at least this long since the first satisfied check (ms). Default 250. */
  reenableHoldMs: number;
  /** Gain of the RTT EWMA used in Eq. 3 (0 < g <= 1). Default 0.25. */
  rttEwmaGain: number;
  /** RTT (ms) assumed for a path with no SRTT nor min RTT. Default 100. */
  defaultRttMs: number;
  /**
   * P_max of Eq. 2 for positive feedback, as a multiple of the path's Eq. 1
   * share: P_i + alpha is capped at ceil(maxBoost * S_i/sum(S) * N). Default 1.25.
   */
  maxBoost: number;
  /**
   * Priority packets may fill the fast path up to what it carries in this
   * many ms at its rate S_i (one frame interval at 30 fps by default), even
   * beyond its Eq. 1 share of the batch. 0 = share only.
   */
  priorityBudgetMs: number;
  /** Gain of the EWMA of frame-batch size that scales alpha to other batch sizes. Default 0.125. */
  batchEwmaGain: number;
  /**
   * Half-life (ms) of the accumulated alpha. Default 3000 (see "Reading of
   * §4.2" in src/sched/converge.ts: without decay a slower path starves for
   * good). 0 = no decay, the paper's literal rule: the adjusted P_i is kept
   * until further feedback or a disable/re-enable.
   */
  alphaHalfLifeMs: number;
  /**
   * Floor (ms) of the FCD that Eq. 3 compares a disabled path's delay gap
   * with. A gap below one frame interval delays a frame by less than the
   * time to the next one; with frames of a few packets the measured FCD is
   * near 0 and would keep any slower path disabled for good. Default 33
   * (one frame interval at 30 fps); 0 = the paper's rule.
   */
  reenableMinFcdMs: number;
  /** Extra re-enable guard: a disabled path's loss must be <= this (0..1). Default 1 (off). */
  reenableMaxLossRate: number;
  /**
   * Best-path floor (our extension of Converge §4.1): a path gets a
   * frame's packets only up to what arrives (its queue + packets at its
   * delivery rate + SRTT/2) by the frame's deadline = the completion time of
   * the whole frame on the best path alone + this slack (ms); the rest goes to
   * the best path. -1 = off (the paper's Eq. 1 split). Default 0.
   */
  deadlineSlackMs: number;
  /**
   * Temporal layers (our extension): a base-layer delta frame (packets with
   * `temporalLayer` 0) goes whole on the fast path (Algorithm 1's earliest
   * completion), and the other paths get their Eq. 1 share back from the next
   * upper-layer frames (a per-path debt in packets, bounded), within the
   * deadline of the best-path floor. The base layer, which every later frame
   * depends on, then rides the better path only; a loss on the others costs
   * upper-layer frames, which the receiver skips without a key frame.
   * Streams without layers are unaffected. Default true.
   */
  baseLayerFastPath: boolean;
  /**
   * Extra slack (ms) of the best-path deadline for upper-layer frames (one
   * frame interval at 30 fps by default): such a frame only has to arrive
   * before the next base-layer frame, which does not depend on it, so the
   * other paths can take their share back without a late base layer.
   * Default 33.
   */
  upperLayerSlackMs: number;
  /**
   * Gain of the per-path EWMA of the fraction of its Eq. 1 share that the
   * deadline let through; it scales the encoder target
   * ({@link Scheduler.encoderRateFraction}). Default 0.05.
   */
  deadlineEwmaGain: number;
  /**
   * Delay-budget encoder cap (LoLa §3.2 Eq. 2 and §3.3 Eq. 3, applied to
   * Converge's encoder target; src/sched/delay-budget.ts): the encoder may
   * produce at most margin x what every up path delivers within this
   * one-way delay budget δ, minus the bytes it already holds (in flight
   * and queued), per frame interval. It cuts the encoder as soon as the
   * paths' backlog exceeds the budget, before a late frame freezes the
   * picture. ms; 0 = off. Default 200, chosen on the tune half of the
   * cellular suite (1 seed; 100/150/200/250 tried): LoLa's 100 ms, with
   * LoLa's literal N_f (all bytes in flight), cut goodput to 0.67-0.70x the
   * best single path on slow high-RTT pairs; with N_f read after
   * `inflightSlackMs`, 150 and 200 both kept goodput >= 1.0x on every pair
   * and 200 froze least.
   */
  delayBudgetMs: number;
  /** The margin on each path's delay-budget window (LoLa Eq. 3: 0.8). Default 0.8. */
  delayBudgetMargin: number;
  /**
   * The delay-budget cap's packet time (LoLa §3.2 ewma_iat, which LoLa
   * measures from ACK arrivals) on a queued path: when a path's SRTT exceeds
   * its min RTT by more than this (ms), its packets are timed at the goodput
   * it measured alone (it is saturated, so what it delivers is its
   * capacity), not at `deliveryRateBps` (from S_i), which keeps a fading
   * path's stale S_i. On wc:21_2 WiFi fades from 16 Mbps to 0 in 6 s while
   * its GCC estimate lags 2x behind: the cap floored the encoder while
   * WiFi's queue was full, the drained queue read as under-use (GCC held
   * its stale estimate), and the cap then let the encoder back to that
   * estimate, 2.5 Mbps into a 1.3 Mbps path. Cellular suite, converge, 3
   * seeds: tune half 7.13 -> 6.42 s frozen (wc:21_1 1.73 -> 1.38, mm:verizon+att
   * 2.90 -> 2.63, wc:7_3 1.76 -> 1.67; no pair worse), check half 11.51 ->
   * 10.91 s (mm:tmobile+att 4.43 -> 4.12, wc:21_2 4.29 -> 4.17); goodput >=
   * 1.00x the best single path on every pair. But on seeds 4-6 it loses
   * (tune 6.41 -> 6.52 s, check 13.55 -> 14.09 s; seeds 1-6: tune 6.77 ->
   * 6.47, check 12.53 -> 12.50), and it is sensitive to the threshold
   * (tune half, seeds 1-3, at 40 / 50 / 80 / 100 ms: 7.37 / 6.89 / 6.32 /
   * 8.75 s, the last from mm:verizon+att 2.90 -> 4.72 s), so it is not a
   * default. Timing every path at its goodput (LoLa's literal reading):
   * 6.95 s with goodput down to 0.94x. ms; 0 = off. Default 0 (try 60).
   */
  budgetQueuedGoodputMs: number;
  /**
   * Network backlog in the completion times (LoLa §3.3 Eq. 4: a frame's
   * packets on path f arrive after the N_f packets it already holds; our
   * extension of Algorithm 1's cpt and the best-path floor): the bytes in
   * flight beyond what the path holds at its base delay, delivery rate x
   * (min RTT + this slack), count like bytes queued at the sender. The slack
   * covers the receiver-report interval (packets delivered but not yet
   * reported). When a path's capacity collapses its in-flight bytes pile up
   * within one report, so the frame goes to the other path before the
   * congestion controller or the RTT has reacted. ms; -1 = off (sender
   * queue only). Only with the best-path floor (`deadlineSlackMs` >= 0).
   * The delay-budget cap (`delayBudgetMs`) reads N_f the same way; -1 gives
   * it LoLa's literal N_f (every byte in flight). Default 50.
   */
  inflightSlackMs: number;
  /**
   * OUR EXTENSION: leave a path Converge has disabled (P_i = 0, probe copies
   * only) out of the encoder target: {@link Scheduler.encoderRateFraction}
   * is scaled by the enabled paths' share of sum(S) over the up paths (the
   * sender sums S over every up path). Cellular suite, 3 seeds, audio on:
   * tune half 10.00 -> 9.63 s frozen, check half 14.73 -> 13.75 s, pairs
   * within +0.5 s unchanged (1 seed it had lost 0.5 s on the tune half; 2
   * seeds: tune 10.0 -> 9.4, check 14.8 -> 14.6). With {@link fastReenable}:
   * tune 8.80 s, check 13.09 s. Default true.
   */
  encoderExcludesDisabled: boolean;
  /**
   * OUR EXTENSION of Converge §4.2 Eq. 3: a disabled up path is enabled at
   * once (without Eq. 3's checks and hold) when its completion time
   * (Algorithm 1's cpt, with its sender queue and network backlog counted)
   * beats every enabled path's by more than the frame construction delay
   * (the newest FCD, floored at `reenableMinFcdMs`): the enabled paths then
   * deliver the frame later than the disabled one would, so keeping it
   * disabled costs more than the lateness Eq. 2 saw. Cellular suite wc:8_2
   * at 51 s: QoE feedback disabled the cellular path (cpt ~50 ms) while the
   * WiFi path it left alone collapsed (cpt 150 -> 1,000 ms); frames and
   * retransmissions went into WiFi for ~350 ms. Cellular suite, 3 seeds,
   * audio on: tune half 10.00 -> 9.28 s frozen, check half 14.73 -> 13.40 s,
   * no pair worse by more than 0.07 s (with {@link encoderExcludesDisabled}:
   * 8.80 / 13.09 s). Default true.
   */
  fastReenable: boolean;
}

/** Counters of {@link ConvergeScheduler} (monotonic since construction). */
export interface ConvergeStats {
  feedbackAccepted: number;
  /** Same seq seen before (feedback is sent on every path) or older than the dedup window. */
  feedbackDuplicate: number;
  /** pathId valid but never seen in a path snapshot. */
  feedbackUnknownPath: number;
  /** Malformed: bad pathId, non-finite alpha/fcd/seq. */
  feedbackInvalid: number;
  /** Alpha for a path that is currently disabled (it carries no media). */
  feedbackIgnoredDisabled: number;
  probesSent: number;
  pathsDisabled: number;
  pathsEnabled: number;
  /** A disabled path enabled without Eq. 3 because no enabled path was up. */
  forcedEnables: number;
  /** A disabled path enabled without Eq. 3 because its completion time beat every enabled path's ({@link ConvergeConfig.fastReenable}). */
  fastReenables: number;
  /** Path snapshots skipped (invalid id, duplicate id). */
  invalidPathStates: number;
  /** Packets the best-path floor moved from a path that would miss the frame deadline to the best path. */
  deadlineMovedPackets: number;
  /** Packets of base-layer frames moved to the fast path ({@link ConvergeConfig.baseLayerFastPath}). */
  baseLayerMovedPackets: number;
}

/** Lifecycle / scheduler events reported by `PathManager.tick` (src/sched/path-manager.ts). */
export type PathEventType = 'path-added' | 'path-up' | 'path-down' | 'path-disabled' | 'path-enabled' | 'path-removed';

export interface PathEvent {
  type: PathEventType;
  pathId: PathId;
  /** When the change was detected (µs, caller's clock). */
  atUs: number;
  /** Human-readable cause, e.g. 'no receiver report for 800 ms while sending'. */
  reason: string;
}
