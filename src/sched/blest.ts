/**
 * BLEST, Blocking Estimation-based scheduler (Ferlin, Alay, Mehani, Boreli,
 * "BLEST: Blocking Estimation-based MPTCP Scheduler for Heterogeneous
 * Networks", IFIP Networking 2016, §III; Linux multipath-tcp
 * `mptcp_blest.c`). A baseline of AggDeliv (§II-B).
 *
 * MPTCP's default scheduler picks the lowest-RTT subflow with room in its
 * congestion window. When that is a slower subflow x_s (the fastest, x_f, is
 * full), BLEST estimates whether a packet sent on x_s now would block the
 * connection's send window while x_f could have used it:
 *
 *   linger_s = max(srtt_s, min_s + (max_s - min_s) · inflight_s / cwnd_s)
 *              (max_s when x_s's window is full)        time until x_s acks it
 *   n        = ⌊linger_s / avg_rtt_f⌋ + 1                x_f's RTTs meanwhile
 *   X        = MSS · (cwnd_f + (n - 1) / 2) · n · λ      bytes x_f sends meanwhile
 *   if  X > W - (bytes of this packet + inflight_s):  wait for x_f
 *
 * (packets and cwnd in MSS units; x_f in congestion avoidance, Ferlin §III
 * Eq. 1-2). λ starts at 1.2 and adapts once per RTT of x_s: +0.04 after
 * head-of-line blocking, -0.01 otherwise, within [1.0, 1.3] (the kernel's
 * defaults).
 *
 * Our reading, for a real-time sender over unordered, rate-controlled paths:
 * - cwnd and in-flight come from {@link WindowSnapshot} (2 x BDP at the GCC
 *   target rate; in flight + queued); min/max SRTT per path are tracked over
 *   the call, as the kernel does.
 * - There is no connection-level send window W. What blocks a real-time
 *   receiver is a frame that waits for its slow packets: W = the bytes all
 *   paths carry at their target rates in {@link BLEST_WINDOW_MS} (the playout
 *   delay a receiver holds), so a slow packet that would keep that much data
 *   waiting counts as blocking.
 * - "Head-of-line blocking happened" (the kernel's retransmission flag) is a
 *   batch of retransmissions (NACKed packets) since the last λ update.
 * - "Wait for x_f" assigns the packet to x_f, where it queues behind that
 *   path's window in the pacer (the {@link Scheduler} contract: never drop
 *   or hold a packet).
 */
import { MAX_PATHS, type Assignment, type OutgoingPacket, type PathId, type PathState } from '../core/types.js';
import { packetBytes } from './path-util.js';
import type { Scheduler } from './types.js';
import { WindowSnapshot } from './window-snapshot.js';

/** The receiver's hold time that stands in for MPTCP's send window (ms). */
export const BLEST_WINDOW_MS = 250;
/** MSS (bytes) for the packet counts of the estimate. */
const MSS = 1200;
const LAMBDA_START = 1.2;
const LAMBDA_MIN = 1.0;
const LAMBDA_MAX = 1.3;
const LAMBDA_BAD = 0.04;
const LAMBDA_GOOD = 0.01;

export class BlestScheduler implements Scheduler {
  readonly name = 'blest' as const;
  private readonly snap = new WindowSnapshot();
  private readonly minSrtt = new Float64Array(MAX_PATHS).fill(Number.POSITIVE_INFINITY);
  private readonly maxSrtt = new Float64Array(MAX_PATHS);
  /** λ, the scaling of x_f's estimated bytes. */
  private lambda = LAMBDA_START;
  private lastLambdaUs: number | undefined;
  private blocked = false;

  /** Current λ (for tests and stats). */
  get lambdaValue(): number {
    return this.lambda;
  }

  schedule(packets: readonly OutgoingPacket[], paths: readonly PathState[], nowUs: number): Assignment[] {
    const s = this.snap;
    if (s.load(paths) === 0) return [];
    let sumRate = 0;
    for (let j = 0; j < s.n; j++) {
      const id = s.ids[j];
      this.minSrtt[id] = Math.min(this.minSrtt[id], s.srtt[j]);
      this.maxSrtt[id] = Math.max(this.maxSrtt[id], s.srtt[j]);
      sumRate += s.rate[j];
    }
    for (const p of packets) if (p.isRetransmission === true) this.blocked = true;
    const sendWindow = ((sumRate / 8) * BLEST_WINDOW_MS) / 1000;
    const out: Assignment[] = new Array(packets.length);
    for (let k = 0; k < packets.length; k++) {
      const f = s.fastest();
      const b = s.fastestWithRoom();
      let j = b < 0 ? f : b;
      const bytes = packetBytes(packets[k]);
      if (b >= 0 && b !== f) {
        this.updateLambda(b, nowUs);
        if (this.fastBytesDuring(f, this.lingerMs(b)) > Math.max(0, sendWindow - (bytes + s.used[b]))) j = f;
      }
      s.used[j] += bytes;
      out[k] = { packet: packets[k], pathId: s.ids[j] };
    }
    return out;
  }

  /** λ update, at most once per min SRTT of the slow entry `sl` (Ferlin §III-B). */
  private updateLambda(sl: number, nowUs: number): void {
    const period = this.minSrtt[this.snap.ids[sl]] * 1000;
    if (this.lastLambdaUs === undefined) this.lastLambdaUs = nowUs;
    if (nowUs - this.lastLambdaUs < period) return;
    this.lambda += this.blocked ? LAMBDA_BAD : -LAMBDA_GOOD;
    this.lambda = Math.min(LAMBDA_MAX, Math.max(LAMBDA_MIN, this.lambda));
    this.blocked = false;
    this.lastLambdaUs = nowUs;
  }

  /** How long a packet sent now on entry `sl` stays unacknowledged (ms). */
  private lingerMs(sl: number): number {
    const s = this.snap;
    const id = s.ids[sl];
    const inflight = s.used[sl] / MSS + 1;
    const cwnd = Math.max(1, s.window[sl] / MSS);
    const est = inflight >= cwnd ? this.maxSrtt[id] : this.minSrtt[id] + ((this.maxSrtt[id] - this.minSrtt[id]) * inflight) / cwnd;
    return Math.max(s.srtt[sl], est);
  }

  /** Bytes entry `f` sends in `timeMs` (congestion avoidance), times λ. */
  private fastBytesDuring(f: number, timeMs: number): number {
    const s = this.snap;
    const id = s.ids[f];
    const avgRtt = (this.minSrtt[id] + this.maxSrtt[id]) / 2;
    const rtts = avgRtt > 0 ? Math.floor(timeMs / avgRtt) + 1 : 1;
    const cwnd = s.window[f] / MSS;
    return (cwnd + (rtts - 1) / 2) * rtts * MSS * this.lambda;
  }

  /** Ignored (MPTCP has no application QoE feedback). */
  onQoeFeedback(): void {}

  /** Always true. */
  isEnabled(_pathId: PathId): boolean {
    return true;
  }
}
