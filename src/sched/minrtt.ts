/**
 * SRTT / minRTT baseline: the default packet scheduler of MPTCP (Linux
 * `mptcp_sched.c`, "default" = lowest-RTT-first) and MPQUIC, which Converge
 * evaluates as "SRTT" (Converge §2.2 and §5 "Multipath WebRTC variants").
 *
 * Per packet: among the up paths whose congestion window still has room, the
 * one with the lowest SRTT; when every window is full, the lowest-SRTT path
 * anyway (the packet must go somewhere: a real-time sender does not hold
 * media back). The window stands in for MPTCP's cwnd, derived from the GCC
 * target rate:
 *
 *   window_i (bytes) = rateBps_i * max(srtt_i, 20 ms) / 8 * 2   (2 x BDP)
 *   used_i   (bytes) = inflightBytes_i + queuedBytes_i + bytes given to i in this batch
 *   room     <=>  used_i < window_i        (TCP: send while in-flight < cwnd)
 *
 * No priorities, no feedback. Allocation: one Assignment per packet.
 */
import type { Assignment, OutgoingPacket, PathId, PathState } from '../core/types.js';
import { MAX_PATHS } from '../core/types.js';
import { firstUsable, nonNeg, packetBytes, rttMs, sendRateBps } from './path-util.js';
import type { Scheduler } from './types.js';

/** Floor of the RTT used for the window (ms), so low-RTT paths still get a useful window. */
export const MINRTT_WINDOW_FLOOR_MS = 20;
/** Window in multiples of the bandwidth-delay product. */
export const MINRTT_WINDOW_BDP = 2;

export class MinRttScheduler implements Scheduler {
  readonly name = 'minrtt' as const;
  private readonly ids = new Int32Array(MAX_PATHS);
  private readonly srtt = new Float64Array(MAX_PATHS);
  private readonly window = new Float64Array(MAX_PATHS);
  private readonly used = new Float64Array(MAX_PATHS);
  private readonly seen = new Uint8Array(MAX_PATHS);

  schedule(packets: readonly OutgoingPacket[], paths: readonly PathState[], _nowUs: number): Assignment[] {
    const seen = this.seen;
    seen.fill(0);
    let n = 0;
    for (let i = 0; i < paths.length; i++) {
      const p = firstUsable(paths, i, seen);
      if (p === undefined) continue;
      const rtt = rttMs(p);
      this.ids[n] = p.id;
      this.srtt[n] = rtt;
      this.window[n] = ((sendRateBps(p) * Math.max(rtt, MINRTT_WINDOW_FLOOR_MS)) / 1000 / 8) * MINRTT_WINDOW_BDP;
      this.used[n] = nonNeg(p.inflightBytes) + nonNeg(p.queuedBytes);
      n++;
    }
    if (n === 0) return [];
    const out: Assignment[] = new Array(packets.length);
    for (let k = 0; k < packets.length; k++) {
      let best = -1;
      let bestAny = 0;
      for (let j = 0; j < n; j++) {
        const s = this.srtt[j];
        if (s < this.srtt[bestAny] || (s === this.srtt[bestAny] && this.ids[j] < this.ids[bestAny])) bestAny = j;
        if (this.used[j] < this.window[j]) {
          if (best < 0 || s < this.srtt[best] || (s === this.srtt[best] && this.ids[j] < this.ids[best])) best = j;
        }
      }
      const j = best >= 0 ? best : bestAny;
      this.used[j] += packetBytes(packets[k]);
      out[k] = { packet: packets[k], pathId: this.ids[j] };
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
