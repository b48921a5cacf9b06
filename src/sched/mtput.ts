/**
 * M-TPUT baseline: the throughput-proportional scheduler of Musher that
 * Converge evaluates (Converge §2.2 and §5: "distributing packets in
 * proportion to the throughput of each path").
 *
 * Weight of an up path = its measured goodput (PathState.goodputBps, bps),
 * falling back to the target rate (rateBps) while goodput is 0/unknown; equal
 * weights when every weight is 0. Bytes are split in that proportion by a
 * smooth weighted round-robin whose credits persist across batches
 * ({@link WeightedSplitter}). No priorities, no feedback.
 */
import type { Assignment, OutgoingPacket, PathId, PathState } from '../core/types.js';
import { firstUsable, goodputOrRateBps } from './path-util.js';
import { MAX_PATHS } from '../core/types.js';
import type { Scheduler } from './types.js';
import { WeightedSplitter } from './weighted-split.js';

export class MTputScheduler implements Scheduler {
  readonly name = 'mtput' as const;
  private readonly split = new WeightedSplitter();
  private readonly seen = new Uint8Array(MAX_PATHS);

  schedule(packets: readonly OutgoingPacket[], paths: readonly PathState[], _nowUs: number): Assignment[] {
    const sp = this.split;
    sp.begin();
    this.seen.fill(0);
    for (let i = 0; i < paths.length; i++) {
      const p = firstUsable(paths, i, this.seen);
      if (p !== undefined) sp.add(p.id, goodputOrRateBps(p));
    }
    if (sp.count === 0) return [];
    return sp.assign(packets);
  }

  /** Ignored. */
  onQoeFeedback(): void {}

  /** Always true. */
  isEnabled(_pathId: PathId): boolean {
    return true;
  }
}
