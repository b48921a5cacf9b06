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
 *    delivery rate max(goodput, S_i x (1 - loss)) (the paper's "measured
 *    goodput rate (which accounts for packet loss)"; acknowledged goodput
 *    alone under-reports a lightly loaded path), rtt_i = SRTT (falls back to
 *    min RTT, then `defaultRttMs`).
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
 * 6b. Best-path floor (OUR EXTENSION, issue 10; not in the paper): the
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
 * 6c. Temporal layers (OUR EXTENSION, `baseLayerFastPath`; only for frames
 *    whose packets carry `temporalLayer`): before 6b, a base-layer delta
 *    frame goes whole to the fast path and each other path's target becomes
 *    its debt (bounded to 4 typical batches); upper-layer frames pay the
 *    debt back from the fast path's target, with `upperLayerSlackMs` more
 *    deadline (they only need to arrive before the next base-layer frame).
 *    The base layer, on which every later frame depends, then rides the
 *    best path only; losses on the others cost upper-layer frames, which the
 *    receiver skips without a key frame (src/feedback/frame-buffer.ts).
 * 7. Disabled paths: P_i = 0 caused by alpha (the path's adjusted expected
 *    share of a typical batch rounds to 0 packets) disables the path, unless it
 *    is the last enabled up path. A disabled up path gets at most one probe per
 *    batch and per `probeIntervalMs`: a duplicate of a fast-path packet
 *    (Assignment.probe = true) so its RTT and loss stay measured (§4.2). It is
 *    re-enabled by Eq. 3 (see below) and then restarts from its Eq. 1 share
 *    (alpha reset).
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
import { seqDiff, seqNewer } from '../core/seq.js';
import type { Assignment, OutgoingPacket, PathId, PathState, QoeFeedback } from '../core/types.js';
import { MAX_PATHS, Priority } from '../core/types.js';
import { SchedError } from './errors.js';
import { deliveryRateBps, effectivePriority, isValidPathId, lossFraction, packetBytes, rttMs, sendRateBps } from './path-util.js';
import type { ConvergeConfig, ConvergeStats, Scheduler } from './types.js';

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
});

/** True for an upper-layer (temporal layer > 0) frame batch. */
function layerOf(layer: number | undefined): boolean {
  return layer !== undefined && layer > 0;
}

/** Bound of a path's base-layer debt, in typical frame batches. */
const MAX_LAYER_DEBT_BATCHES = 4;

/** Recent feedback seqs remembered for deduplication. */
const DEDUP_WINDOW = 64;
/** Bound of the accumulated alpha share (fraction of a batch). */
const MAX_ALPHA_SHARE = 4;
/** Bound of raw alpha kept before the first batch. */
const MAX_PENDING_ALPHA = 1e6;
const EPS = 1e-9;

/** Packet-budget scheduler of Converge; see the file comment for the algorithm. */
export class ConvergeScheduler implements Scheduler {
  readonly name = 'converge' as const;
  /** Effective configuration (defaults merged with the constructor's partial). */
  readonly config: Readonly<ConvergeConfig>;

  // --- persistent per-path state (index = PathId) ---
  private readonly known = new Uint8Array(MAX_PATHS);
  private readonly disabled = new Uint8Array(MAX_PATHS);
  /** Accumulated alpha as a fraction of a typical frame batch (Eq. 2). */
  private readonly alphaShare = new Float64Array(MAX_PATHS);
  /** Scratch of encoderRateFraction: planned share per path after Eq. 2 moves. */
  private readonly load = new Float64Array(MAX_PATHS);
  /** Raw alpha received before any batch size was known. */
  private readonly pendingAlpha = new Float64Array(MAX_PATHS);
  /** Eq. 1 rounding carry (packets). */
  private readonly carry = new Float64Array(MAX_PATHS);
  /** RTT EWMA for Eq. 3 (ms); 0 = no sample yet. */
  private readonly rttEwma = new Float64Array(MAX_PATHS);
  private readonly lastProbeUs = new Float64Array(MAX_PATHS).fill(-Infinity);
  private readonly probedSinceDisable = new Uint8Array(MAX_PATHS);
  private readonly streak = new Int32Array(MAX_PATHS);
  private readonly streakSinceUs = new Float64Array(MAX_PATHS);
  private lastCheckUs = -Infinity;
  private lastDecayUs = NaN;
  /** EWMA of the number of frame packets (priorities 2, 3, 4, 6) per batch. */
  private batchRef = 0;
  /** FCD (ms) of the newest accepted QoE feedback; -1 before any. */
  private lastFcdMs = -1;
  private readonly seenSeqs = new Float64Array(DEDUP_WINDOW).fill(-1);
  private seenPos = 0;
  private highestSeq = -1;

  // --- per-batch scratch (no allocation per batch, except growth of prio/dest) ---
  private readonly seen = new Uint8Array(MAX_PATHS);
  private readonly up = new Uint8Array(MAX_PATHS);
  private readonly rate = new Float64Array(MAX_PATHS);
  private readonly gput = new Float64Array(MAX_PATHS);
  private readonly rtt = new Float64Array(MAX_PATHS);
  private readonly loss = new Float64Array(MAX_PATHS);
  private readonly inE = new Uint8Array(MAX_PATHS);
  private readonly order = new Int32Array(MAX_PATHS);
  private readonly cpt = new Float64Array(MAX_PATHS);
  private readonly share = new Float64Array(MAX_PATHS);
  private readonly base = new Float64Array(MAX_PATHS);
  private readonly target = new Int32Array(MAX_PATHS);
  private readonly extra = new Uint8Array(MAX_PATHS);
  private readonly used = new Int32Array(MAX_PATHS);
  private readonly rem = new Int32Array(MAX_PATHS);
  /** Bytes queued at the sender (pacer + transport buffer) per up path. */
  private readonly queued = new Float64Array(MAX_PATHS);
  /** EWMA of (packets kept by the deadline) / (Eq. 1+2 target) per path; 1 = never cut. */
  private readonly keptFrac = new Float64Array(MAX_PATHS).fill(1);
  /** Packets of its Eq. 1 share a path gave to the fast path for base-layer frames, owed back by upper-layer frames. */
  private readonly layerDebt = new Float64Array(MAX_PATHS);
  /** Packets of debt paid back to the path in the current batch. */
  private readonly layerPaid = new Float64Array(MAX_PATHS);
  /** Last time (µs) a batch gave the path packets (media or priority). */
  private readonly lastUsedUs = new Float64Array(MAX_PATHS).fill(-Infinity);
  private readonly cred = new Float64Array(MAX_PATHS);
  private readonly prioCount = new Int32Array(7);
  private prio = new Uint8Array(64);
  private dest = new Int8Array(64);
  private eCount = 0;

  private readonly counters: ConvergeStats = {
    feedbackAccepted: 0,
    feedbackDuplicate: 0,
    feedbackUnknownPath: 0,
    feedbackInvalid: 0,
    feedbackIgnoredDisabled: 0,
    probesSent: 0,
    pathsDisabled: 0,
    pathsEnabled: 0,
    forcedEnables: 0,
    invalidPathStates: 0,
    deadlineMovedPackets: 0,
    baseLayerMovedPackets: 0,
  };

  /**
   * @param config partial {@link ConvergeConfig}; missing fields take
   *   {@link DEFAULT_CONVERGE_CONFIG}.
   * @throws SchedError `invalid-config` for a non-finite or out-of-range field.
   */
  constructor(config: Partial<ConvergeConfig> = {}) {
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
    if (typeof c.baseLayerFastPath !== 'boolean') throw SchedError.invalidConfig('baseLayerFastPath', c.baseLayerFastPath as unknown as number, 'a boolean');
    this.config = Object.freeze(c);
  }

  /** Copy of the counters. */
  get stats(): ConvergeStats {
    return { ...this.counters };
  }

  /** False while Converge has disabled the path (P_i = 0). Unknown/invalid ids: true. */
  isEnabled(pathId: PathId): boolean {
    return !isValidPathId(pathId) || this.disabled[pathId] !== 1;
  }

  /**
   * Diagnostics for one path: accumulated alpha as a batch fraction, RTT EWMA
   * (ms, 0 = none) and the current Eq. 3 streak. For tests and stats pages.
   */
  pathDebug(pathId: PathId): { enabled: boolean; alphaShare: number; rttEwmaMs: number; reenableStreak: number } | undefined {
    if (!isValidPathId(pathId) || this.known[pathId] !== 1) return undefined;
    return {
      enabled: this.disabled[pathId] !== 1,
      alphaShare: this.alphaShare[pathId],
      rttEwmaMs: this.rttEwma[pathId],
      reenableStreak: this.streak[pathId],
    };
  }

  /** FCD (ms) of the newest accepted QoE feedback or FCD report, or -1 before any. */
  get latestFcdMs(): number {
    return this.lastFcdMs;
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
      this.counters.feedbackInvalid++;
      return;
    }
    this.lastFcdMs = fcdMs;
  }

  /**
   * Receiver QoE feedback (Converge §4.2, Fig. 8). `alpha` (packets, signed)
   * accumulates on `pathId` and shifts packets at the next `schedule()`;
   * `fcdMs` feeds Eq. 3. Duplicates (same `seq`), unknown paths and malformed
   * feedback are counted in {@link stats} and ignored; never throws.
   */
  onQoeFeedback(feedback: QoeFeedback, _nowUs: number): void {
    const c = this.counters;
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
    const s = seq >>> 0;
    if (this.isDuplicate(s)) {
      c.feedbackDuplicate++;
      return;
    }
    const newest = this.highestSeq < 0 || seqNewer(s, this.highestSeq);
    this.seenSeqs[this.seenPos] = s;
    this.seenPos = (this.seenPos + 1) % DEDUP_WINDOW;
    if (newest) this.highestSeq = s;
    if (this.known[pathId] !== 1) {
      c.feedbackUnknownPath++;
      return;
    }
    c.feedbackAccepted++;
    if (newest) this.lastFcdMs = fcdMs;
    if (alpha === 0) return;
    if (this.disabled[pathId] === 1) {
      c.feedbackIgnoredDisabled++;
      return;
    }
    if (this.batchRef > 0) {
      this.alphaShare[pathId] = clamp(this.alphaShare[pathId] + alpha / this.batchRef, -MAX_ALPHA_SHARE, MAX_ALPHA_SHARE);
    } else {
      this.pendingAlpha[pathId] = clamp(this.pendingAlpha[pathId] + alpha, -MAX_PENDING_ALPHA, MAX_PENDING_ALPHA);
    }
  }

  /**
   * Assign every packet to exactly one up path (see the file comment), in
   * input order, then append at most one probe duplicate for a disabled path.
   * Returns [] when no path is up or the batch is empty.
   */
  schedule(packets: readonly OutgoingPacket[], paths: readonly PathState[], nowUs: number): Assignment[] {
    const N = packets.length;
    const upCount = this.readPaths(paths);
    if (upCount === 0 || N === 0) return [];
    const timeOk = Number.isFinite(nowUs);
    if (timeOk) this.decayAlpha(nowUs);

    // Priorities and the frame-batch size used to scale alpha.
    if (this.prio.length < N) {
      let cap = this.prio.length;
      while (cap < N) cap *= 2;
      this.prio = new Uint8Array(cap);
      this.dest = new Int8Array(cap);
    }
    const prio = this.prio;
    const dest = this.dest;
    const cnt = this.prioCount;
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
      this.batchRef = this.batchRef === 0 ? frameN : this.batchRef + this.config.batchEwmaGain * (frameN - this.batchRef);
    }
    const ref = this.batchRef > 0 ? this.batchRef : N;
    for (let i = 0; i < MAX_PATHS; i++) {
      if (this.pendingAlpha[i] !== 0) {
        this.alphaShare[i] = clamp(this.alphaShare[i] + this.pendingAlpha[i] / ref, -MAX_ALPHA_SHARE, MAX_ALPHA_SHARE);
        this.pendingAlpha[i] = 0;
      }
    }

    // Completion times (Algorithm 1) for every up path. Our extension: the
    // bytes already queued at the sender for the path (pacer + transport
    // buffer) are sent first, so they count in the completion time.
    const kBits = maxBytes * 8;
    const queueAware = this.config.deadlineSlackMs >= 0;
    for (let i = 0; i < MAX_PATHS; i++) {
      if (this.up[i] !== 1) continue;
      const r = this.gput[i] > 0 ? this.gput[i] : 1e-3;
      const qBits = queueAware ? this.queued[i] * 8 : 0;
      this.cpt[i] = ((qBits + N * kBits) / r) * 1000 + this.rtt[i] / 2; // ms
    }

    this.buildEnabledSet(ref, nowUs);
    const eCount = this.eCount;
    const order = this.order;
    const fast = order[0];
    const target = this.target;

    this.splitEq1(N);
    this.applyAlpha(N);
    const baseMoved = this.applyLayer(layer, ref);
    if (queueAware) this.applyDeadline(N, kBits, cnt[Priority.Media] > 0 && !baseMoved, layerOf(layer));

    // Table 2 priority packets: fast path first, then overflow by cpt.
    const used = this.used;
    used.fill(0);
    // P_max of the fast path "based on its S_i" (§4.1): what it carries in one
    // frame interval at its rate, and at least its Eq. 1/Eq. 2 share of this batch.
    // (A share-only P_max would split every key frame by Eq. 1, since a key
    // frame's packets are all priority packets.)
    const capacity = Math.floor((this.rate[fast] * this.config.priorityBudgetMs) / 1000 / kBits);
    const pmaxFast = Math.max(1, target[fast], capacity);
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
            if (p === Priority.Fec && pkt.isFec === true && pp !== undefined && isValidPathId(pp) && this.up[pp] === 1) {
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
      const rem = this.rem;
      const cred = this.cred;
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
      if (timeOk) this.lastUsedUs[d] = nowUs;
    }

    if (timeOk) {
      this.checkReenable(nowUs, fast);
      this.maybeProbe(out, packets, lastFastIdx >= 0 ? lastFastIdx : 0, nowUs);
    }
    return out;
  }

  // ------------------------------------------------------------------------

  /** Copy the snapshot into scratch arrays; returns the number of up paths. */
  private readPaths(paths: readonly PathState[]): number {
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
    }
    return upCount;
  }

  private decayAlpha(nowUs: number): void {
    const hl = this.config.alphaHalfLifeMs;
    if (hl > 0 && Number.isFinite(this.lastDecayUs) && nowUs > this.lastDecayUs) {
      const f = Math.pow(2, -(nowUs - this.lastDecayUs) / 1000 / hl);
      for (let i = 0; i < MAX_PATHS; i++) if (this.alphaShare[i] !== 0) this.alphaShare[i] *= f;
    }
    if (!Number.isFinite(this.lastDecayUs) || nowUs > this.lastDecayUs) this.lastDecayUs = nowUs;
  }

  /**
   * Build E (up and enabled), disable paths whose alpha drove P_i to 0 (never
   * the last one), compute the Eq. 1 shares and the cpt order of E.
   */
  private buildEnabledSet(ref: number, nowUs: number): void {
    const inE = this.inE;
    let e = 0;
    for (let i = 0; i < MAX_PATHS; i++) {
      inE[i] = this.up[i] === 1 && this.disabled[i] !== 1 ? 1 : 0;
      e += inE[i];
    }
    if (e === 0) {
      // Every up path is disabled: force-enable the one with the lowest cpt.
      let best = -1;
      for (let i = 0; i < MAX_PATHS; i++) {
        if (this.up[i] === 1 && (best < 0 || this.cpt[i] < this.cpt[best])) best = i;
      }
      this.enable(best);
      this.counters.forcedEnables++;
      inE[best] = 1;
      e = 1;
    }
    // Disable loop: removing a path changes the others' shares, so repeat.
    for (;;) {
      this.computeShares(e);
      if (e <= 1) break;
      let victim = -1;
      for (let i = 0; i < MAX_PATHS; i++) {
        if (inE[i] !== 1 || this.alphaShare[i] >= 0) continue;
        if ((this.share[i] + this.alphaShare[i]) * ref < 0.5) {
          victim = i;
          break;
        }
      }
      if (victim < 0) break;
      this.disable(victim, nowUs);
      inE[victim] = 0;
      e--;
    }
    // Clamp the accumulated alpha to what Eq. 2 can realise: [-share, share*(maxBoost-1)].
    const boost = this.config.maxBoost - 1;
    for (let i = 0; i < MAX_PATHS; i++) {
      if (inE[i] !== 1) continue;
      this.alphaShare[i] = clamp(this.alphaShare[i], -this.share[i], this.share[i] * boost);
    }
    // Order E by completion time (insertion sort, ties by id).
    const order = this.order;
    let n = 0;
    for (let i = 0; i < MAX_PATHS; i++) {
      if (inE[i] !== 1) continue;
      let j = n++;
      while (j > 0 && this.cpt[order[j - 1]] > this.cpt[i]) {
        order[j] = order[j - 1];
        j--;
      }
      order[j] = i;
    }
    this.eCount = e;
  }

  private computeShares(e: number): void {
    let sumS = 0;
    for (let i = 0; i < MAX_PATHS; i++) if (this.inE[i] === 1) sumS += this.rate[i];
    for (let i = 0; i < MAX_PATHS; i++) {
      this.share[i] = this.inE[i] !== 1 ? 0 : sumS > 0 ? this.rate[i] / sumS : 1 / e;
    }
  }

  /** Eq. 1 with largest-remainder rounding (+ carried remainders): sum(target) = N. */
  private splitEq1(N: number): void {
    const { order, base, target, carry, extra, share } = this;
    const e = this.eCount;
    let sumFloor = 0;
    for (let o = 0; o < e; o++) {
      const j = order[o];
      base[j] = share[j] * N;
      const f = Math.floor(base[j] + EPS);
      target[j] = f > N ? N : f;
      sumFloor += target[j];
      extra[j] = 0;
    }
    let left = N - sumFloor;
    while (left > 0) {
      let best = -1;
      let bestKey = -Infinity;
      for (let o = 0; o < e; o++) {
        const j = order[o];
        if (extra[j] === 1) continue;
        const key = base[j] - target[j] + carry[j];
        if (key > bestKey + EPS) {
          bestKey = key;
          best = j;
        }
      }
      if (best < 0) {
        // More leftovers than paths can only come from float error: give them to the fast path.
        target[order[0]] += left;
        break;
      }
      target[best]++;
      extra[best] = 1;
      left--;
    }
    for (let o = 0; o < e; o++) {
      const j = order[o];
      carry[j] = clamp(carry[j] + base[j] - target[j], -1, 1);
    }
  }

  /** Eq. 2: shift round(alphaShare_i * N) packets between path i and its counterpart. */
  private applyAlpha(N: number): void {
    const { order, target, base, alphaShare } = this;
    const e = this.eCount;
    if (e < 2) return;
    for (let o = 0; o < e; o++) {
      const i = order[o];
      const a = alphaShare[i];
      if (a === 0) continue;
      let d = Math.round(a * N);
      if (d === 0) continue;
      if (d < 0) {
        const give = -d < target[i] ? -d : target[i];
        if (give === 0) continue;
        target[i] -= give;
        target[order[o === 0 ? 1 : 0]] += give;
      } else {
        const pmax = Math.max(target[i], Math.ceil(this.config.maxBoost * base[i] - EPS));
        if (d > pmax - target[i]) d = pmax - target[i];
        let need = d;
        // Take from the fast path first (or the next by cpt when i is the fast path).
        for (let q = 0; q < e && need > 0; q++) {
          const j = order[q];
          if (j === i) continue;
          const take = target[j] < need ? target[j] : need;
          target[j] -= take;
          need -= take;
        }
        target[i] += d - need;
      }
    }
  }

  /**
   * {@link ConvergeConfig.baseLayerFastPath}: a base-layer frame's packets all
   * go to the fast path (each other path's target becomes its debt); an
   * upper-layer frame gives each other path up to its debt from the fast
   * path's target. Returns true when it moved a base-layer frame (the
   * deadline's encoder-rate EWMA then skips the batch: the other paths' share
   * was deferred, not refused).
   */
  private applyLayer(layer: number | undefined, ref: number): boolean {
    const e = this.eCount;
    if (!this.config.baseLayerFastPath || layer === undefined || e < 2) return false;
    const { order, target, layerDebt, layerPaid } = this;
    layerPaid.fill(0);
    const fast = order[0];
    const cap = MAX_LAYER_DEBT_BATCHES * Math.max(1, ref);
    let moved = 0;
    for (let o = 1; o < e; o++) {
      const j = order[o];
      if (layer === 0) {
        if (target[j] === 0) continue;
        layerDebt[j] = Math.min(cap, layerDebt[j] + target[j]);
        moved += target[j];
        target[j] = 0;
      } else {
        const give = Math.min(Math.floor(layerDebt[j] + EPS), target[fast]);
        if (give <= 0) continue;
        target[j] += give;
        target[fast] -= give;
        layerDebt[j] -= give;
        layerPaid[j] = give;
      }
    }
    if (moved === 0) return false;
    target[fast] += moved;
    this.counters.baseLayerMovedPackets += moved;
    return true;
  }

  /**
   * Best-path floor (our extension of Converge §4.1; issue 10 "the best path
   * is the floor"). The frame's deadline D = cpt of the fast path for the
   * WHOLE batch (its queue + N packets at its delivery rate + SRTT/2: what
   * sending the frame on the best path alone would achieve) +
   * `deadlineSlackMs`. Every other enabled path j keeps at most the packets
   * that arrive by D, n_j = floor(((D - SRTT_j/2) x rate_j - queued_j) / k);
   * the rest of its target goes to the fast path. The frame therefore
   * completes no later (by the estimates) than on the best path alone, a
   * path whose queue or delay misses every deadline carries no media (it is
   * probed, {@link maybeProbe}), and takes packets again as soon as it
   * would deliver them in time. Frames that the fast path serialises slower
   * than the other paths' delay gap still use every path (Eq. 1).
   * `mediaBatch`: only frame batches update the encoder-rate EWMA.
   */
  private applyDeadline(N: number, kBits: number, mediaBatch: boolean, upperLayer = false): void {
    const { order, target } = this;
    const e = this.eCount;
    if (e < 2 || kBits <= 0) return;
    const fast = order[0];
    const deadlineMs = this.cpt[fast] + this.config.deadlineSlackMs + (upperLayer ? this.config.upperLayerSlackMs : 0);
    const g = this.config.deadlineEwmaGain;
    for (let o = 1; o < e; o++) {
      const j = order[o];
      const want = target[j];
      const r = this.gput[j] > 0 ? this.gput[j] : 1e-3;
      const budgetBits = ((deadlineMs - this.rtt[j] / 2) / 1000) * r - this.queued[j] * 8;
      const cap = budgetBits > 0 ? Math.floor(budgetBits / kBits + EPS) : 0;
      let keep = want;
      if (want > cap) {
        keep = cap;
        target[fast] += want - cap;
        target[j] = cap;
        this.counters.deadlineMovedPackets += want - cap;
      }
      if (mediaBatch) {
        // Fraction of the path's Eq. 1 share (not N; plus the base-layer debt paid back in this batch) kept:
        // an unused share lowers the encoder target.
        const ref = this.share[j] * N + (upperLayer ? this.layerPaid[j] : 0);
        const f = ref > EPS ? Math.min(1, keep / ref) : 1;
        this.keptFrac[j] += g * (f - this.keptFrac[j]);
      }
    }
    if (mediaBatch) this.keptFrac[fast] += g * (1 - this.keptFrac[fast]);
  }

  /**
   * {@link Scheduler.encoderRateFraction}: Eq. 2 with a negative alpha moves
   * a fraction of path i's share onto its counterpart (the fast path, or the
   * next by cpt when i is the fast path), which then carries more than its
   * own S_i whenever the encoder produces sum(S). The encoder can produce at
   * most sum(S) / max_j(load_j / share_j) without overloading any path.
   * Positive alpha (an "early" path takes up to maxBoost x its share from the
   * fast path) does not lower it: it uses headroom the receiver saw.
   * Computed from the shares and alpha of the last `schedule` call.
   */
  encoderRateFraction(): number {
    const e = this.eCount;
    if (e < 2) return 1;
    const { order, share, alphaShare } = this;
    const load = this.load;
    for (let o = 0; o < e; o++) load[order[o]] = share[order[o]];
    for (let o = 0; o < e; o++) {
      const i = order[o];
      const a = alphaShare[i];
      if (!(a < 0)) continue;
      const give = -a < load[i] ? -a : load[i];
      load[i] -= give;
      load[order[o === 0 ? 1 : 0]] += give;
    }
    let worst = 1;
    for (let o = 0; o < e; o++) {
      const j = order[o];
      if (share[j] > 0 && load[j] / share[j] > worst) worst = load[j] / share[j];
    }
    if (this.config.deadlineSlackMs < 0) return 1 / worst;
    // Best-path floor: the shares the deadline keeps cutting are not usable
    // rate; the encoder targets the fast path's S plus what the others carry.
    let usable = 0;
    for (let o = 0; o < e; o++) usable += share[order[o]] * (o === 0 ? 1 : this.keptFrac[order[o]]);
    return Math.min(1 / worst, usable);
  }

  /** Eq. 3 re-enable checks, every `reenableCheckIntervalMs`, with RTT EWMA and hold. */
  private checkReenable(nowUs: number, fast: number): void {
    const cfg = this.config;
    if (nowUs - this.lastCheckUs < cfg.reenableCheckIntervalMs * 1000) return;
    this.lastCheckUs = nowUs;
    const g = cfg.rttEwmaGain;
    for (let i = 0; i < MAX_PATHS; i++) {
      if (this.up[i] !== 1) continue;
      const r = this.rtt[i];
      this.rttEwma[i] = this.rttEwma[i] === 0 ? r : this.rttEwma[i] + g * (r - this.rttEwma[i]);
    }
    for (let i = 0; i < MAX_PATHS; i++) {
      if (this.up[i] !== 1 || this.disabled[i] !== 1) continue;
      const ok =
        this.probedSinceDisable[i] === 1 &&
        this.lastFcdMs >= 0 &&
        (this.rttEwma[i] - this.rttEwma[fast]) / 2 <= Math.max(this.lastFcdMs, cfg.reenableMinFcdMs) &&
        this.loss[i] <= cfg.reenableMaxLossRate;
      if (!ok) {
        this.streak[i] = 0;
        continue;
      }
      if (this.streak[i] === 0) this.streakSinceUs[i] = nowUs;
      this.streak[i]++;
      if (this.streak[i] >= cfg.reenableChecks && nowUs - this.streakSinceUs[i] >= cfg.reenableHoldMs * 1000) {
        this.enable(i);
      }
    }
  }

  /**
   * At most one probe per batch: the disabled up path probed least recently,
   * if due; with the best-path floor also an enabled up path that the
   * deadline has kept idle for `probeIntervalMs` (its RTT must stay measured
   * for it to be taken back when it recovers).
   */
  private maybeProbe(out: Assignment[], packets: readonly OutgoingPacket[], dupIdx: number, nowUs: number): void {
    const intervalUs = this.config.probeIntervalMs * 1000;
    const floor = this.config.deadlineSlackMs >= 0;
    let best = -1;
    for (let i = 0; i < MAX_PATHS; i++) {
      if (this.up[i] !== 1) continue;
      if (this.disabled[i] !== 1 && !(floor && nowUs - this.lastUsedUs[i] >= intervalUs)) continue;
      if (nowUs - this.lastProbeUs[i] < intervalUs) continue;
      if (best < 0 || this.lastProbeUs[i] < this.lastProbeUs[best]) best = i;
    }
    if (best < 0) return;
    out.push({ packet: packets[dupIdx], pathId: best, probe: true });
    this.lastProbeUs[best] = nowUs;
    this.probedSinceDisable[best] = 1;
    this.counters.probesSent++;
  }

  private disable(i: number, _nowUs: number): void {
    this.disabled[i] = 1;
    this.streak[i] = 0;
    this.probedSinceDisable[i] = 0;
    this.lastProbeUs[i] = -Infinity;
    this.carry[i] = 0;
    this.layerDebt[i] = 0;
    this.counters.pathsDisabled++;
  }

  private enable(i: number): void {
    this.disabled[i] = 0;
    this.alphaShare[i] = 0;
    this.pendingAlpha[i] = 0;
    this.carry[i] = 0;
    this.layerDebt[i] = 0;
    this.streak[i] = 0;
    this.counters.pathsEnabled++;
  }

  private isDuplicate(s: number): boolean {
    if (this.highestSeq < 0) return false;
    for (let i = 0; i < DEDUP_WINDOW; i++) if (this.seenSeqs[i] === s) return true;
    // Older than the dedup window: cannot tell, treat as a stale duplicate.
    return seqDiff(s, this.highestSeq) > DEDUP_WINDOW;
  }
}

function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : x > hi ? hi : x;
}
