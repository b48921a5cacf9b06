/**
 * M-RTP baseline: an MPRTP-style sender that splits media over all subflows
 * by their loss-based sending-rate estimate (Converge §2.2 and §5:
 * "a scheduler that sends packets using a loss-based estimated sending rate";
 * the MPRTP / FRACTaL paper, §III-C and Algorithm 2).
 *
 * What is implemented (a simplification of the FRACTaL paper, documented):
 * - weight_i = rateBps_i * (1 - lossRate_i): the subflow's sending rate
 *   discounted by its loss fraction (our stand-in for SR_allocated; we have
 *   no SR_stable/transient, so Eq. 1's target_off is taken as 1, i.e. the
 *   target is the allocated rate).
 * - Paper 002 §III-C schedules only on subflows that are Stable or Underused.
 *   We call a subflow Congested when its loss exceeds
 *   {@link MRTP_CONGESTED_LOSS} (10 %, the loss above which GCC's loss-based
 *   controller decreases, draft-ietf-rmcat-gcc-02 §6) and leave it out while
 *   at least one other up path is not congested.
 * - Algorithm 2 maps each packet to the subflow whose target rate most exceeds
 *   the bitrate already sent on it; a smooth weighted round-robin on bytes with
 *   persistent credits ({@link WeightedSplitter}) is that same largest-deficit
 *   rule in normalised form.
 * No priorities (MPRTP's I-frame avoidance of congested paths is subsumed by
 * excluding congested paths for every packet), no QoE feedback.
 */
import type { Assignment, OutgoingPacket, PathId, PathState } from '../core/types.js';
import { firstUsable, lossFraction, sendRateBps } from './path-util.js';
import { MAX_PATHS } from '../core/types.js';
import type { Scheduler } from './types.js';
import { WeightedSplitter } from './weighted-split.js';

/** Loss fraction above which a subflow counts as Congested (and is avoided). */
export const MRTP_CONGESTED_LOSS = 0.1;

export class MRtpScheduler implements Scheduler {
  readonly name = 'mrtp' as const;
  private readonly split = new WeightedSplitter();
  private readonly seen = new Uint8Array(MAX_PATHS);

  schedule(packets: readonly OutgoingPacket[], paths: readonly PathState[], _nowUs: number): Assignment[] {
    let anyUp = false;
    let anyUncongested = false;
    this.seen.fill(0);
    for (let i = 0; i < paths.length; i++) {
      const p = firstUsable(paths, i, this.seen);
      if (p === undefined) continue;
      anyUp = true;
      if (lossFraction(p) <= MRTP_CONGESTED_LOSS) anyUncongested = true;
    }
    if (!anyUp) return [];
    const sp = this.split;
    sp.begin();
    this.seen.fill(0);
    for (let i = 0; i < paths.length; i++) {
      const p = firstUsable(paths, i, this.seen);
      if (p === undefined) continue;
      const loss = lossFraction(p);
      if (anyUncongested && loss > MRTP_CONGESTED_LOSS) continue;
      sp.add(p.id, sendRateBps(p) * (1 - loss));
    }
    return sp.assign(packets);
  }

  /** Ignored (MPRTP sends no QoE feedback). */
  onQoeFeedback(): void {}

  /** Always true. */
  isEnabled(_pathId: PathId): boolean {
    return true;
  }
}
