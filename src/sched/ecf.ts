/**
 * ECF, Earliest Completion First (Lim, Nahum, Towsley, Gibbens, "ECF: An
 * MPTCP Path Scheduler to Manage Heterogeneous Paths", CoNEXT 2017, §3
 * Algorithm 1; Linux multipath-tcp `mptcp_ecf.c`). A baseline of AggDeliv
 * (§II-B), the best of the four it measured.
 *
 * MPTCP's default scheduler picks the lowest-RTT subflow with room in its
 * congestion window. When that is not the fastest subflow x_f (its window
 * is full), ECF asks whether waiting for x_f would finish the data sooner
 * than sending on the slower x_s:
 *
 *   k   = bytes still to send (the rest of this batch, from this packet on)
 *   x_f = max(k, cwnd_f),  x_s = max(k, cwnd_s)          (bytes)
 *   δ   = max(σ_f, σ_s)   (RTT deviations)
 *   if  rtt_f · (x_f + cwnd_f) < (1 + waiting·β) · cwnd_f · (rtt_s + δ):
 *       if  rtt_s · x_s >= cwnd_s · (2·rtt_f + δ):  waiting = 1, wait for x_f
 *       else send on x_s
 *   else  waiting = 0, send on x_s
 *
 * with β = 0.25 (the hysteresis that keeps the choice from flapping).
 *
 * Our reading, for a real-time sender over rate-controlled paths:
 * - cwnd and in-flight come from {@link WindowSnapshot} (2 x BDP at the GCC
 *   target rate; in flight + queued).
 * - "wait for x_f" assigns the packet to x_f, where it queues behind that
 *   path's window in the pacer: the scheduler never drops or holds a packet
 *   (the {@link Scheduler} contract), as minRTT does when every window is full.
 * - σ, the RTT deviation, is not in the path snapshot; we use SRTT - min RTT
 *   (the queueing part of the RTT), which grows as an RTT becomes unstable.
 *
 * No priorities, no QoE feedback.
 */
import type { Assignment, OutgoingPacket, PathId, PathState } from '../core/types.js';
import { packetBytes } from './path-util.js';
import type { Scheduler } from './types.js';
import { WindowSnapshot } from './window-snapshot.js';

/** β of ECF Algorithm 1 (the kernel's `1 / mptcp_ecf_r_beta`). */
export const ECF_BETA = 0.25;

export class EcfScheduler implements Scheduler {
  readonly name = 'ecf' as const;
  private readonly snap = new WindowSnapshot();
  /** ECF's `waiting` flag: the last decision was to wait for the fastest path. */
  private waiting = false;

  schedule(packets: readonly OutgoingPacket[], paths: readonly PathState[], _nowUs: number): Assignment[] {
    const s = this.snap;
    if (s.load(paths) === 0) return [];
    let remaining = 0;
    for (const p of packets) remaining += packetBytes(p);
    const out: Assignment[] = new Array(packets.length);
    for (let k = 0; k < packets.length; k++) {
      const f = s.fastest();
      const b = s.fastestWithRoom();
      let j = b < 0 ? f : b;
      if (b >= 0 && b !== f && this.waitForFastest(f, b, remaining)) j = f;
      const bytes = packetBytes(packets[k]);
      s.used[j] += bytes;
      remaining -= bytes;
      out[k] = { packet: packets[k], pathId: s.ids[j] };
    }
    return out;
  }

  /** ECF Algorithm 1 for fastest entry `f` (window full) and slower entry `sl` (room). */
  private waitForFastest(f: number, sl: number, remainingBytes: number): boolean {
    const s = this.snap;
    const cwndF = s.window[f];
    const cwndS = s.window[sl];
    const rttF = s.srtt[f];
    const rttS = s.srtt[sl];
    if (!(cwndF > 0) || !(cwndS > 0)) return false;
    const delta = Math.max(rttF - s.minRtt[f], rttS - s.minRtt[sl]);
    const xF = Math.max(remainingBytes, cwndF);
    const xS = Math.max(remainingBytes, cwndS);
    if (rttF * (xF + cwndF) < (1 + (this.waiting ? ECF_BETA : 0)) * cwndF * (rttS + delta)) {
      if (rttS * xS >= cwndS * (2 * rttF + delta)) {
        this.waiting = true;
        return true;
      }
      return false;
    }
    this.waiting = false;
    return false;
  }

  /** Ignored (MPTCP has no application QoE feedback). */
  onQoeFeedback(): void {}

  /** Always true. */
  isEnabled(_pathId: PathId): boolean {
    return true;
  }
}
