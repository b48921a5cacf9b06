/**
 * Converge video-aware multipath scheduler (Converge, SIGCOMM 2023:
 * §3.1, §4.1 Table 2 / Algorithm 1 / Eq. 1-2, §4.2 "Sender's reaction to
 * feedback" / Eq. 3).
 *
 * One `schedule()` call = one batch of N packets (a frame's fragments, its FEC
 * packets, or retransmissions). Steps:
 *
 * 1. Paths: only `up` paths are used; of these the *enabled* set E (the paper's
 *    "n active paths") shares the batch. If no up path is enabled, the up path
 *    with the lowest completion time is force-enabled (something must carry
 *    the call).
 * 2. Eq. 1: P_i = S_i / sum_{j in E} S_j * N with S_i = PathState.rateBps
 *    (equal split when every S_i is 0), rounded to integers that sum to N by
 *    largest remainder. The fractional remainders are carried to the next
 *    batch so that the long-run split matches S_i even for small batches.
 * 3. Eq. 2 (QoE feedback): alpha from `onQoeFeedback` is accumulated per path
 *    (see "Reading of §4.2" below) and applied as delta = round(alphaShare_i * N)
 *    packets: negative -> max(0, P_i + delta), positive -> min(P_max, P_i + delta)
 *    with P_max = ceil(maxBoost * S_i/sum(S) * N). The packets removed from /
 *    added to path i are given to / taken from the fast path (Fig. 8: "reassigns
 *    the late packets to the fast path"), or, when i is the fast path, the
 *    next path by completion time. N is preserved exactly.
 * 4. Algorithm 1: fast path = argmin over E of cpt_i(N) = N*k/rate_i + rtt_i/2
 *    with k = the largest packet of the batch (bits), rate_i = the path's
 *    delivery rate max(min(goodput, S_i), S_i x (1 - loss)) (the paper's
 *    "measured goodput rate (which accounts for packet loss)"; acknowledged
 *    goodput alone under-reports a lightly loaded path and, on a collapsing
 *    one, holds its last value: path-util.ts `deliveryRateBps`), rtt_i =
 *    SRTT (falls back to min RTT, then `defaultRttMs`).
 * 5. Table 2 priorities (1 retransmission, 2 keyframe, 3 SPS, 4 PPS, 5 FEC) are
 *    placed first, most important first, on the fast path up to its
 *    P_max = max(1, P_fast, S_fast x priorityBudgetMs / k): its Eq. 1 share
 *    after Eq. 2, or what it carries in one frame interval at its rate S_i
 *    ("P_max ... based on its S_i", §4.1), whichever is larger. Overflow goes, still
 *    in priority order, to the other enabled paths in completion-time order
 *    (each up to its P_i). Exception (§4.1): an FEC packet that does not fit on
 *    the fast path stays on the path it protects (`protectsPath`), if that path
 *    is up.
 * 6. Media (priority 6) fill the remaining P_i of each path, interleaved by a
 *    smooth weighted round-robin (so no path gets the frame's tail as a block).
 * 6b. Best-path floor (OUR EXTENSION, not in the paper): the
 *    completion times of step 4 also count the bytes already queued at the
 *    sender for the path, and after Eq. 1/Eq. 2 every non-fast path keeps
 *    only the packets that arrive by the frame's deadline = the whole frame
 *    on the fast path alone (+ `deadlineSlackMs`); the rest moves to the fast
 *    path (see applyDeadline). An enabled path the deadline leaves idle is
 *    probed like a disabled one, and the encoder target counts only the
 *    shares the deadline lets through (encoderRateFraction). So when one
 *    path is clearly better, Converge sends like that single path plus
 *    probes, and a recovered path gets packets again as soon as they would
 *    arrive in time. `deadlineSlackMs: -1` gives the paper's behaviour.
 *    The queue also counts the path's network backlog (`inflightSlackMs`,
 *    after LoLa §3.3 Eq. 4's N_f): bytes in flight beyond delivery rate x
 *    (min RTT + one report interval). A path whose capacity collapses piles
 *    them up within one report and stops being the fast path at once.
 * 6c. Temporal layers (OUR EXTENSION, `baseLayerFastPath`; only for frames
 *    whose packets carry `temporalLayer`): before 6b, a base-layer delta
 *    frame goes whole to the fast path and each other path's target becomes
 *    its debt (bounded to 4 typical batches); upper-layer frames pay the
 *    debt back from the fast path's target, with `upperLayerSlackMs` more
 *    deadline (they only need to arrive before the next base-layer frame).
 *    The base layer, on which every later frame depends, then rides the
 *    best path only; losses on the others cost upper-layer frames, which the
 *    receiver skips without a key frame (src/feedback/frame-buffer.ts).
 * 6d. Delay-budget encoder cap (from LoLa §3.2 Eq. 2 and §3.3 Eq. 3, not in
 *    Converge; `delayBudgetMs`, src/sched/delay-budget.ts): the encoder
 *    target ({@link encoderRateFraction}) is also capped at LoLa's frame
 *    target, margin x Σ_f (what path f delivers within δ - min RTT_f / 2)
 *    minus the bytes still ahead of a new packet on f (queued at the
 *    sender + in flight beyond the pipe, see 6b), per frame interval. Packets are still split by steps 2-6c; only the encoder
 *    follows the backlog. When a path's capacity drops, the bytes it holds
 *    exceed its budget within one report and the encoder backs off before
 *    the congestion controller has noticed, instead of queueing seconds of
 *    video behind the drop (the freezes of issue 10). An ablation (LoLa
 *    with and without its Eq. 3 target, cellular tune half) showed this
 *    target, not LoLa's split, is what buys LoLa's fewer freezes. Opt-in
 *    (`budgetQueuedGoodputMs`): a queued path (SRTT over min RTT by more
 *    than that) is timed at its measured goodput, not at its congestion
 *    controller's rate, which lags a fading path.
 * 7. Disabled paths: P_i = 0 caused by alpha (the path's adjusted expected
 *    share of a typical batch rounds to 0 packets) disables the path, unless it
 *    is the last enabled up path. A disabled up path gets at most one probe per
 *    batch and per `probeIntervalMs`: a duplicate of a fast-path packet
 *    (Assignment.probe = true) so its RTT and loss stay measured (§4.2). It is
 *    re-enabled by Eq. 3 (see below), or at once when its completion time
 *    beats every enabled path's by more than the FCD (`fastReenable`, on by
 *    default: the path left enabled collapsed), and then restarts from its
 *    Eq. 1 share (alpha reset). With `encoderExcludesDisabled` (on by default) its S_i
 *    leaves the encoder target while it is disabled (encoderRateFraction:
 *    the enabled paths' share of sum(S)).
 *
 * Reading of §4.2 (documented choices):
 * - Persistence: Eq. 2 adjusts P_i when feedback arrives and the paper keeps
 *   the new ratio for the following frames (Fig. 8: 4:2 becomes 5:1 and stays)
 *   until more feedback arrives, the path is disabled (P_i = 0) and later
 *   re-enabled. Taken literally (no decay, `alphaHalfLifeMs` = 0) that
 *   starves a slower path for good: feedback only comes while IFD > IFD_exp,
 *   so nothing ever gives the packets back, the idle path's GCC cannot grow,
 *   and its Eq. 1 share shrinks further (our simulator showed goodput 4.1 vs
 *   6.5 Mbps on two constant paths, and the stable path disabled before the
 *   other one collapsed). We therefore decay alpha with a 3 s half-life by
 *   default: repeated feedback still drives P_i to 0, a one-off does not.
 * - Scale: alpha is a packet count for the receiver's frames. We store it as a
 *   share of a typical frame batch (alpha / EWMA of frame-batch size), so the
 *   paper's example (alpha -5 on a 40-packet frame) moves 5 of 40 packets,
 *   and 1 of 8 on an 8-packet frame. Before any batch was seen alpha is kept
 *   raw and scaled by the next batch's size.
 * - Eq. 3 is printed as [rtt_fast - rtt_i]/2 <= FCD, which always holds when the
 *   disabled path is the slower one (the usual case) and would re-enable it at
 *   once. We read it as the one-way delay gap: (rtt_i - rtt_fast)/2 <= FCD,
 *   i.e. the path's packets would arrive within the frame construction delay.
 *   rtt values are EWMAs (gain `rttEwmaGain`) sampled every
 *   `reenableCheckIntervalMs`; FCD is the newest of the accepted feedback's
 *   and the receiver's periodic smoothed FCD (`onFcd`, path reports);
 *   the condition must hold on `reenableChecks` consecutive checks spanning at
 *   least `reenableHoldMs`, and at least one probe must have been sent since
 *   the path was disabled.
 * - Feedback is deduplicated by `seq` (the receiver sends it on every path);
 *   feedback for a path never seen in a snapshot is counted and ignored; alpha
 *   for a disabled path is counted and ignored.
 *
 * Cost: O(N * |E|) per batch with fixed typed-array scratch; one Assignment
 * object per packet (the interface's output) and nothing else per packet.
 */
import type { Assignment, OutgoingPacket, PathId, PathState, QoeFeedback } from '../core/types.js';
import { MAX_PATHS, Priority } from '../core/types.js';
import { applyAlpha, applyDeadline, applyLayer, buildEnabledSet, checkReenable, encoderRateFraction, maybeProbe, splitEq1 } from './converge-split.js';
import { ConvergeState, MAX_ALPHA_SHARE, MAX_PENDING_ALPHA, clamp, resolveConvergeConfig } from './converge-state.js';
import { DelayBudgetCap } from './delay-budget.js';
import { FeedbackSeqFilter } from './feedback-filter.js';
import { completionTimeMs, effectivePriority, isValidPathId, packetBytes } from './path-util.js';
import type { ConvergeConfig, ConvergeStats, Scheduler } from './types.js';

export { DEFAULT_CONVERGE_CONFIG } from './converge-state.js';

/** True for an upper-layer (temporal layer > 0) frame batch. */
function layerOf(layer: number | undefined): boolean {
  return layer !== undefined && layer > 0;
}

/** Recent feedback seqs remembered for deduplication. */
const DEDUP_WINDOW = 64;

/** Packet-budget scheduler of Converge; see the file comment for the algorithm. */
export class ConvergeScheduler implements Scheduler {
  readonly name = 'converge' as const;
  /** Effective configuration (defaults merged with the constructor's partial). */
  readonly config: Readonly<ConvergeConfig>;
  private readonly s: ConvergeState;
  private readonly seqs = new FeedbackSeqFilter(DEDUP_WINDOW);
  /** LoLa Eq. 2-3 encoder cap (`delayBudgetMs` > 0), else undefined. */
  private readonly budget: DelayBudgetCap | undefined;
  /**
   * @param config partial {@link ConvergeConfig}; missing fields take
   *   {@link DEFAULT_CONVERGE_CONFIG}.
   * @throws SchedError `invalid-config` for a non-finite or out-of-range field.
   */
  constructor(config: Partial<ConvergeConfig> = {}) {
    this.config = resolveConvergeConfig(config);
    this.s = new ConvergeState(this.config);
    this.budget =
      this.config.delayBudgetMs > 0 ? new DelayBudgetCap(this.config.delayBudgetMs, this.config.delayBudgetMargin, this.config.inflightSlackMs, this.config.budgetQueuedGoodputMs) : undefined;
  }

  /** Copy of the counters. */
  get stats(): ConvergeStats {
    return { ...this.s.counters };
  }

  /** False while Converge has disabled the path (P_i = 0). Unknown/invalid ids: true. */
  isEnabled(pathId: PathId): boolean {
    return !isValidPathId(pathId) || this.s.disabled[pathId] !== 1;
  }

  /**
   * Diagnostics for one path: accumulated alpha as a batch fraction, RTT EWMA
   * (ms, 0 = none) and the current Eq. 3 streak. For tests and stats pages.
   */
  pathDebug(pathId: PathId): { enabled: boolean; alphaShare: number; rttEwmaMs: number; reenableStreak: number } | undefined {
    if (!isValidPathId(pathId) || this.s.known[pathId] !== 1) return undefined;
    return {
      enabled: this.s.disabled[pathId] !== 1,
      alphaShare: this.s.alphaShare[pathId],
      rttEwmaMs: this.s.rttEwma[pathId],
      reenableStreak: this.s.streak[pathId],
    };
  }

  /** FCD (ms) of the newest accepted QoE feedback or FCD report, or -1 before any. */
  get latestFcdMs(): number {
    return this.s.lastFcdMs;
  }

  /**
   * The receiver's smoothed FCD from its periodic path reports (ms): Eq. 3
   * then compares a disabled path's delay gap with the FCD of the frames
   * built without it, not with the FCD of the last QoE feedback, which may be
   * seconds old (feedback only comes with QoE drops). Invalid values are
   * counted as `feedbackInvalid` and ignored.
   */
  onFcd(fcdMs: number, _nowUs: number): void {
    if (!(typeof fcdMs === 'number' && Number.isFinite(fcdMs) && fcdMs >= 0)) {
      this.s.counters.feedbackInvalid++;
      return;
    }
    this.s.lastFcdMs = fcdMs;
  }

  /**
   * Receiver QoE feedback (Converge §4.2, Fig. 8). `alpha` (packets, signed)
   * accumulates on `pathId` and shifts packets at the next `schedule()`;
   * `fcdMs` feeds Eq. 3. Duplicates (same `seq`), unknown paths and malformed
   * feedback are counted in {@link stats} and ignored; never throws.
   */
  onQoeFeedback(feedback: QoeFeedback, _nowUs: number): void {
    const c = this.s.counters;
    if (feedback == null || typeof feedback !== 'object') {
      c.feedbackInvalid++;
      return;
    }
    const { pathId, alpha, fcdMs, seq } = feedback;
    if (
      !isValidPathId(pathId) ||
      typeof alpha !== 'number' ||
      !Number.isFinite(alpha) ||
      typeof fcdMs !== 'number' ||
      !Number.isFinite(fcdMs) ||
      fcdMs < 0 ||
      typeof seq !== 'number' ||
      !Number.isInteger(seq)
    ) {
      c.feedbackInvalid++;
      return;
    }
    const verdict = this.seqs.accept(seq);
    if (verdict === 'duplicate') {
      c.feedbackDuplicate++;
      return;
    }
    const newest = verdict === 'newest';
    if (this.s.known[pathId] !== 1) {
      c.feedbackUnknownPath++;
      return;
    }
    c.feedbackAccepted++;
    if (newest) this.s.lastFcdMs = fcdMs;
    if (alpha === 0) return;
    if (this.s.disabled[pathId] === 1) {
      c.feedbackIgnoredDisabled++;
      return;
    }
    if (this.s.batchRef > 0) {
      this.s.alphaShare[pathId] = clamp(this.s.alphaShare[pathId] + alpha / this.s.batchRef, -MAX_ALPHA_SHARE, MAX_ALPHA_SHARE);
    } else {
      this.s.pendingAlpha[pathId] = clamp(this.s.pendingAlpha[pathId] + alpha, -MAX_PENDING_ALPHA, MAX_PENDING_ALPHA);
    }
  }

  /**
   * Assign every packet to exactly one up path (see the file comment), in
   * input order, then append at most one probe duplicate for a disabled path.
   * Returns [] when no path is up or the batch is empty.
   */
  schedule(packets: readonly OutgoingPacket[], paths: readonly PathState[], nowUs: number): Assignment[] {
    const N = packets.length;
    const upCount = this.s.readPaths(paths);
    if (upCount === 0 || N === 0) return [];
    const timeOk = Number.isFinite(nowUs);
    if (timeOk) this.s.decayAlpha(nowUs);

    // Priorities and the frame-batch size used to scale alpha.
    if (this.s.prio.length < N) {
      let cap = this.s.prio.length;
      while (cap < N) cap *= 2;
      this.s.prio = new Uint8Array(cap);
      this.s.dest = new Int8Array(cap);
    }
    const prio = this.s.prio;
    const dest = this.s.dest;
    const cnt = this.s.prioCount;
    cnt.fill(0);
    let maxBytes = 0;
    let layer: number | undefined;
    for (let k = 0; k < N; k++) {
      const pkt = packets[k];
      const p = effectivePriority(pkt);
      prio[k] = p;
      cnt[p]++;
      if (p === Priority.Media && layer === undefined && pkt.temporalLayer !== undefined && !pkt.isRetransmission) layer = pkt.temporalLayer;
      const b = packetBytes(pkt);
      if (b > maxBytes) maxBytes = b;
    }
    const frameN = cnt[Priority.Keyframe] + cnt[Priority.Sps] + cnt[Priority.Pps] + cnt[Priority.Media];
    if (frameN > 0) {
      this.s.batchRef = this.s.batchRef === 0 ? frameN : this.s.batchRef + this.config.batchEwmaGain * (frameN - this.s.batchRef);
    }
    const ref = this.s.batchRef > 0 ? this.s.batchRef : N;
    if (this.budget !== undefined && timeOk) this.budget.observe(packets, paths, nowUs, frameN > 0);
    for (let i = 0; i < MAX_PATHS; i++) {
      if (this.s.pendingAlpha[i] !== 0) {
        this.s.alphaShare[i] = clamp(this.s.alphaShare[i] + this.s.pendingAlpha[i] / ref, -MAX_ALPHA_SHARE, MAX_ALPHA_SHARE);
        this.s.pendingAlpha[i] = 0;
      }
    }

    // Completion times (Algorithm 1) for every up path. Our extension: the
    // bytes already queued at the sender for the path (pacer + transport
    // buffer) are sent first, so they count in the completion time.
    const kBits = maxBytes * 8;
    const queueAware = this.config.deadlineSlackMs >= 0;
    for (let i = 0; i < MAX_PATHS; i++) {
      if (this.s.up[i] !== 1) continue;
      const r = this.s.gput[i] > 0 ? this.s.gput[i] : 1e-3;
      const qBits = queueAware ? this.s.queued[i] * 8 : 0;
      this.s.cpt[i] = completionTimeMs(qBits + N * kBits, r, this.s.rtt[i]);
    }

    buildEnabledSet(this.s, ref, nowUs);
    const eCount = this.s.eCount;
    const order = this.s.order;
    const fast = order[0];
    const target = this.s.target;

    splitEq1(this.s, N);
    applyAlpha(this.s, N);
    const baseMoved = applyLayer(this.s, layer, ref);
    if (queueAware) applyDeadline(this.s, N, kBits, cnt[Priority.Media] > 0 && !baseMoved, layerOf(layer));

    // Table 2 priority packets: fast path first, then overflow by cpt.
    const used = this.s.used;
    used.fill(0);
    // P_max of the fast path "based on its S_i" (§4.1): what it carries in one
    // frame interval at its rate, and at least its Eq. 1/Eq. 2 share of this batch.
    // (A share-only P_max would split every key frame by Eq. 1, since a key
    // frame's packets are all priority packets.)
    const capacity = Math.floor((this.s.rate[fast] * this.config.priorityBudgetMs) / 1000 / kBits);
    // NaN only for a batch of zero-byte packets at rate 0 (0 / 0): it fits whole.
    const pmaxFast = Math.max(1, target[fast], capacity) || N;
    if (N - cnt[Priority.Media] > 0) {
      for (let p = Priority.Retransmission; p <= Priority.Fec; p++) {
        if (cnt[p] === 0) continue;
        for (let k = 0; k < N; k++) {
          if (prio[k] !== p) continue;
          let d = -1;
          if (used[fast] < pmaxFast) {
            d = fast;
          } else {
            const pkt = packets[k];
            const pp = pkt.protectsPath;
            if (p === Priority.Fec && pkt.isFec === true && pp !== undefined && isValidPathId(pp) && this.s.up[pp] === 1) {
              d = pp;
            } else {
              for (let o = 1; o < eCount; o++) {
                const j = order[o];
                if (used[j] < target[j]) {
                  d = j;
                  break;
                }
              }
              if (d < 0) d = fast;
            }
          }
          dest[k] = d;
          used[d]++;
        }
      }
    }

    // Media: remaining budgets, interleaved by smooth weighted round-robin.
    const M = cnt[Priority.Media];
    if (M > 0) {
      const rem = this.s.rem;
      const cred = this.s.cred;
      let sumR = 0;
      for (let o = 0; o < eCount; o++) {
        const j = order[o];
        const r = target[j] - used[j];
        rem[j] = r > 0 ? r : 0;
        sumR += rem[j];
        cred[j] = 0;
      }
      if (sumR < M) {
        rem[fast] += M - sumR;
      } else if (sumR > M) {
        let excess = sumR - M;
        for (let o = eCount - 1; o >= 0 && excess > 0; o--) {
          const j = order[o];
          const take = rem[j] < excess ? rem[j] : excess;
          rem[j] -= take;
          excess -= take;
        }
      }
      for (let k = 0; k < N; k++) {
        if (prio[k] !== Priority.Media) continue;
        let best = -1;
        for (let o = 0; o < eCount; o++) {
          const j = order[o];
          if (rem[j] === 0) continue;
          cred[j] += rem[j];
          if (best < 0 || cred[j] > cred[best]) best = j;
        }
        cred[best] -= M;
        dest[k] = best;
      }
    }

    const out: Assignment[] = new Array(N);
    let lastFastIdx = -1;
    for (let k = 0; k < N; k++) {
      const d = dest[k];
      if (d === fast) lastFastIdx = k;
      out[k] = { packet: packets[k], pathId: d };
      if (timeOk) this.s.lastUsedUs[d] = nowUs;
    }

    if (timeOk) {
      checkReenable(this.s, nowUs, fast);
      maybeProbe(this.s, out, packets, lastFastIdx >= 0 ? lastFastIdx : 0, nowUs);
    }
    return out;
  }

  /**
   * {@link Scheduler.encoderRateFraction}: the share of sum(S) the encoder
   * may produce without overloading a path after Eq. 2 moves and the
   * best-path floor (see converge-split.ts encoderRateFraction).
   */
  encoderRateFraction(): number {
    const f = encoderRateFraction(this.s);
    return this.budget === undefined ? f : Math.min(f, this.budget.fraction());
  }
}
