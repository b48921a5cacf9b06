/**
 * Round-robin baseline (AggDeliv §IV "RR"): packet k goes to the
 * next up path in cyclic PathId order, the cursor persisting across batches.
 * No priorities, no rates, no feedback.
 */
import type { Assignment, OutgoingPacket, PathId, PathState } from '../core/types.js';
import { MAX_PATHS } from '../core/types.js';
import { firstUsable } from './path-util.js';
import type { Scheduler } from './types.js';

export class RoundRobinScheduler implements Scheduler {
  readonly name = 'roundrobin' as const;
  private readonly upMask = new Uint8Array(MAX_PATHS);
  private readonly seen = new Uint8Array(MAX_PATHS);
  /** Last PathId used (-1 before the first packet). */
  private last = -1;

  schedule(packets: readonly OutgoingPacket[], paths: readonly PathState[], _nowUs: number): Assignment[] {
    const up = this.upMask;
    up.fill(0);
    this.seen.fill(0);
    let n = 0;
    for (let i = 0; i < paths.length; i++) {
      const p = firstUsable(paths, i, this.seen);
      if (p !== undefined) {
        up[p.id] = 1;
        n++;
      }
    }
    if (n === 0) return [];
    const out: Assignment[] = new Array(packets.length);
    let cur = this.last;
    for (let k = 0; k < packets.length; k++) {
      for (let step = 1; step <= MAX_PATHS; step++) {
        const id = (((cur + step) % MAX_PATHS) + MAX_PATHS) % MAX_PATHS;
        if (up[id] === 1) {
          cur = id;
          break;
        }
      }
      out[k] = { packet: packets[k], pathId: cur };
    }
    this.last = cur;
    return out;
  }

  /** Ignored. */
  onQoeFeedback(): void {}

  /** Always true. */
  isEnabled(_pathId: PathId): boolean {
    return true;
  }
}
