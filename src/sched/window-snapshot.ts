/**
 * The MPTCP view of a path snapshot that the window-based schedulers share
 * (minRTT, ECF, BLEST): per up path its SRTT, a congestion window derived
 * from the GCC target rate, and the bytes it already holds. MPTCP's
 * schedulers read `snd_cwnd` and `packets_out`; we have rate-based
 * congestion control, so:
 *
 *   window_i (bytes) = rateBps_i * max(srtt_i, 20 ms) / 8 * 2   (2 x BDP)
 *   used_i   (bytes) = inflightBytes_i + queuedBytes_i + bytes given to i in this batch
 *   room     <=>  used_i < window_i        (TCP: send while in-flight < cwnd)
 *
 * Allocation-free after construction: one instance per scheduler, `load`
 * per batch.
 */
import { MAX_PATHS, type PathState } from '../core/types.js';
import { firstUsable, nonNeg, rttMs, sendRateBps } from './path-util.js';

/** Floor of the RTT used for the window (ms), so low-RTT paths still get a useful window. */
export const MINRTT_WINDOW_FLOOR_MS = 20;
/** Window in multiples of the bandwidth-delay product. */
export const MINRTT_WINDOW_BDP = 2;

export class WindowSnapshot {
  /** Number of up paths loaded; entries [0, n) are valid. */
  n = 0;
  readonly ids = new Int32Array(MAX_PATHS);
  /** SRTT (ms), falling back to min RTT, then 100 ms. */
  readonly srtt = new Float64Array(MAX_PATHS);
  /** Min RTT (ms); the SRTT when unknown. */
  readonly minRtt = new Float64Array(MAX_PATHS);
  /** Congestion window (bytes). */
  readonly window = new Float64Array(MAX_PATHS);
  /** Bytes in flight, queued, and given in this batch. */
  readonly used = new Float64Array(MAX_PATHS);
  /** Bytes in flight and queued before this batch. */
  readonly inflight = new Float64Array(MAX_PATHS);
  /** Target send rate (bps). */
  readonly rate = new Float64Array(MAX_PATHS);
  private readonly seen = new Uint8Array(MAX_PATHS);

  /** Load a snapshot (first entry per id, up paths only). Returns the number of up paths. */
  load(paths: readonly PathState[]): number {
    this.seen.fill(0);
    let n = 0;
    for (let i = 0; i < paths.length; i++) {
      const p = firstUsable(paths, i, this.seen);
      if (p === undefined) continue;
      const rtt = rttMs(p);
      const min = Number.isFinite(p.minRttMs) && p.minRttMs > 0 ? Math.min(p.minRttMs, rtt) : rtt;
      this.ids[n] = p.id;
      this.srtt[n] = rtt;
      this.minRtt[n] = min;
      this.rate[n] = sendRateBps(p);
      this.window[n] = ((this.rate[n] * Math.max(rtt, MINRTT_WINDOW_FLOOR_MS)) / 1000 / 8) * MINRTT_WINDOW_BDP;
      this.inflight[n] = nonNeg(p.inflightBytes) + nonNeg(p.queuedBytes);
      this.used[n] = this.inflight[n];
      n++;
    }
    this.n = n;
    return n;
  }

  /** True when entry j's window has room. */
  hasRoom(j: number): boolean {
    return this.used[j] < this.window[j];
  }

  /** Index of the lowest-SRTT entry (ties: lower path id). Needs n > 0. */
  fastest(): number {
    let best = 0;
    for (let j = 1; j < this.n; j++) if (this.before(j, best)) best = j;
    return best;
  }

  /** Index of the lowest-SRTT entry with room in its window, or -1 (MPTCP's default scheduler). */
  fastestWithRoom(): number {
    let best = -1;
    for (let j = 0; j < this.n; j++) if (this.hasRoom(j) && (best < 0 || this.before(j, best))) best = j;
    return best;
  }

  private before(a: number, b: number): boolean {
    const s = this.srtt[a];
    return s < this.srtt[b] || (s === this.srtt[b] && this.ids[a] < this.ids[b]);
  }
}
