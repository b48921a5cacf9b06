/**
 * Single-path baseline (plain WebRTC over one network, Converge §6 "WebRTC-W/T/V"):
 * every packet goes to one fixed path; nothing is sent while that path is down.
 */
import type { Assignment, OutgoingPacket, PathId, PathState } from '../core/types.js';
import { MAX_PATHS } from '../core/types.js';
import { SchedError } from './errors.js';
import { firstUsable, isValidPathId } from './path-util.js';
import type { Scheduler } from './types.js';

export class SinglePathScheduler implements Scheduler {
  readonly name = 'single' as const;
  /** The only path this scheduler uses. */
  readonly pathId: PathId;
  private readonly seen = new Uint8Array(MAX_PATHS);

  /** @throws SchedError `invalid-path-id` when `pathId` is not an integer in [0, MAX_PATHS). */
  constructor(pathId: PathId) {
    if (!isValidPathId(pathId)) throw SchedError.invalidPathId(pathId, MAX_PATHS);
    this.pathId = pathId;
  }

  /** All packets on `pathId` when it is up in `paths`, else `[]`. */
  schedule(packets: readonly OutgoingPacket[], paths: readonly PathState[], _nowUs: number): Assignment[] {
    let up = false;
    this.seen.fill(0);
    for (let i = 0; i < paths.length; i++) {
      const p = firstUsable(paths, i, this.seen);
      if (p !== undefined && p.id === this.pathId) {
        up = true;
        break;
      }
    }
    if (!up) return [];
    const out: Assignment[] = new Array(packets.length);
    for (let i = 0; i < packets.length; i++) out[i] = { packet: packets[i], pathId: this.pathId };
    return out;
  }

  /** Ignored (no QoE feedback in single-path WebRTC). */
  onQoeFeedback(): void {}

  /** Only the chosen path is in use (so the encoder target counts only its rate). */
  isEnabled(pathId: PathId): boolean {
    return pathId === this.pathId;
  }
}
