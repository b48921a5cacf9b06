/**
 * SRTT / minRTT baseline: the default packet scheduler of MPTCP (Linux
 * `mptcp_sched.c`, "default" = lowest-RTT-first) and MPQUIC, which Converge
 * evaluates as "SRTT" (Converge §2.2 and §5 "Multipath WebRTC variants").
 *
 * Per packet: among the up paths whose congestion window still has room, the
 * one with the lowest SRTT; when every window is full, the lowest-SRTT path
 * anyway (the packet must go somewhere: a real-time sender does not hold
 * media back). The window stands in for MPTCP's cwnd, derived from the GCC
 * target rate ({@link WindowSnapshot}: 2 x BDP at the target rate).
 *
 * No priorities, no feedback. Allocation: one Assignment per packet.
 */
import type { Assignment, OutgoingPacket, PathId, PathState } from '../core/types.js';
import { packetBytes } from './path-util.js';
import type { Scheduler } from './types.js';
import { WindowSnapshot } from './window-snapshot.js';

export { MINRTT_WINDOW_BDP, MINRTT_WINDOW_FLOOR_MS } from './window-snapshot.js';

export class MinRttScheduler implements Scheduler {
  readonly name = 'minrtt' as const;
  private readonly snap = new WindowSnapshot();

  schedule(packets: readonly OutgoingPacket[], paths: readonly PathState[], _nowUs: number): Assignment[] {
    const s = this.snap;
    if (s.load(paths) === 0) return [];
    const out: Assignment[] = new Array(packets.length);
    for (let k = 0; k < packets.length; k++) {
      const best = s.fastestWithRoom();
      const j = best >= 0 ? best : s.fastest();
      s.used[j] += packetBytes(packets[k]);
      out[k] = { packet: packets[k], pathId: s.ids[j] };
    }
    return out;
  }

  /** Ignored (MPTCP/MPQUIC have no application QoE feedback). */
  onQoeFeedback(): void {}

  /** Always true. */
  isEnabled(_pathId: PathId): boolean {
    return true;
  }
}
