/**
 * Sender-side loss detection on one path by RACK (RFC 8985 "The RACK-TLP
 * Loss Detection Algorithm for TCP", §6.2 steps 1-5 and §6.3 reordering
 * timer), adapted to our per-path reports.
 *
 * Why per path: the receiver NACKs by flowSeq, and packets of one flow
 * legitimately arrive out of flowSeq order when they take paths with
 * different delays, so its NACK reorder wait (src/feedback/nack.ts) has to
 * cover the delay difference between paths (it learns up to 200 ms). One
 * path is close to FIFO: once a packet sent later on the same path has been
 * delivered, an earlier one still missing after a small reorder window is
 * lost, whatever the other paths do. The sender knows exactly which packet
 * went on which path and when; the receiver does not (a missing flowSeq
 * carries no path), so the decision belongs here.
 *
 * Rule (RFC 8985 §6.2 step 5): with RACK.xmit_ts the send time of the most
 * recently sent packet reported delivered on this path and RACK.rtt the
 * time from its send to the report that carried it, a packet still in
 * flight is lost when it was sent before RACK.xmit_ts and
 * `now >= its send time + RACK.rtt + reoWnd`. Packets sent within reoWnd
 * before RACK.xmit_ts wait for the timer ({@link PathRack.detect} from the
 * engine's tick once {@link PathRack.nextCheckUs} has passed). The caller
 * passes reoWnd (RFC 8985 §6.2 step 4: min RTT / 4, capped at SRTT).
 *
 * Bounded: a power-of-two ring of typed arrays indexed by `pathSeq & mask`
 * (default 2048 packets: 2 s at 12 Mbps of 1200-byte packets); older packets
 * are forgotten (never declared lost). I/O-free: times are passed in (µs).
 */
import { seqDiff } from '../core/seq.js';

const EMPTY = 0;
const IN_FLIGHT = 1;
const DELIVERED = 2;
const LOST = 3;

/** Counters of {@link PathRack} (monotonic). */
export interface PathRackStats {
  /** Packets declared lost (any kind). */
  lost: number;
  /** Of those, media packets (original or retransmission, not probe copies) whose flowSeq was returned for a resend. */
  lostMedia: number;
  /** Packets declared lost and reported delivered afterwards (spurious loss detection). */
  spurious: number;
  /** Of those, media packets (each one a spurious retransmission candidate). */
  spuriousMedia: number;
}

export class PathRack {
  private readonly mask: number;
  private readonly seqs: Float64Array;
  private readonly sendUs: Float64Array;
  private readonly flow: Float64Array;
  private readonly status: Uint8Array;
  /** 1 = a media packet to resend when lost; 0 = a copy (probe duplicate) whose loss needs nothing. */
  private readonly resend: Uint8Array;
  /** Newest pathSeq sent, -1 before any. */
  private newest = -1;
  /** Oldest pathSeq that may still be in flight, -1 before any. */
  private scanFrom = -1;
  /** RACK.xmit_ts (µs), its pathSeq and RACK.rtt (µs). */
  private rackSendUs = Number.NEGATIVE_INFINITY;
  private rackSeq = -1;
  private rackRttUs = 0;
  /** When (µs) a packet held back by the reorder window becomes lost; +Infinity = none waiting. */
  nextCheckUs = Number.POSITIVE_INFINITY;
  readonly c: PathRackStats = { lost: 0, lostMedia: 0, spurious: 0, spuriousMedia: 0 };

  /** @param capacity packets remembered (rounded up to a power of two, >= 16). @throws RangeError when not in [1, 2^20]. */
  constructor(capacity = 2048) {
    if (!Number.isFinite(capacity) || capacity < 1 || capacity > 1 << 20) throw new RangeError(`PathRack: capacity must be in [1, 2^20], got ${capacity}`);
    let n = 16;
    while (n < capacity) n <<= 1;
    this.mask = n - 1;
    this.seqs = new Float64Array(n).fill(-1);
    this.sendUs = new Float64Array(n);
    this.flow = new Float64Array(n);
    this.status = new Uint8Array(n);
    this.resend = new Uint8Array(n);
  }

  /**
   * A datagram went out on the path with per-path seq `pathSeq` (uint32) at
   * `sendUs`; `flowSeq` is the media flow seq it carries, or -1 for FEC,
   * padding and control. `resendOnLoss` false for a copy of a media packet
   * whose loss needs no resend (a probe duplicate): its delivery still
   * counts ({@link onReport}'s `onDelivered`).
   */
  onSent(pathSeq: number, sendUs: number, flowSeq: number, resendOnLoss = true): void {
    if (this.newest >= 0 && Math.abs(seqDiff(this.newest, pathSeq)) > this.mask) this.reset(); // a jump: the old window says nothing
    const i = pathSeq & this.mask;
    this.seqs[i] = pathSeq;
    this.sendUs[i] = sendUs;
    this.flow[i] = flowSeq;
    this.resend[i] = flowSeq >= 0 && resendOnLoss ? 1 : 0;
    this.status[i] = IN_FLIGHT;
    if (this.newest < 0 || seqDiff(this.newest, pathSeq) > 0) this.newest = pathSeq;
    if (this.scanFrom < 0) this.scanFrom = pathSeq;
  }

  /**
   * A report of this path arrived at `nowUs` listing these delivered
   * pathSeqs: update RACK (RFC 8985 §6.2 step 2) and return the flowSeqs of
   * the media packets now known lost (step 5), oldest first. `onDelivered`
   * hears the flowSeq of each media datagram (original, retransmission or
   * copy) first reported delivered, with its arrival time (µs, the
   * receiver's clock; NaN when the report has none), so the caller can skip
   * resending a packet a copy on another path already delivered.
   */
  onReport(delivered: readonly { pathSeq: number; arrivalUs?: number }[], nowUs: number, reoWndUs: number, onDelivered?: (flowSeq: number, arrivalUs: number) => void): number[] {
    for (const a of delivered) {
      const s = a?.pathSeq;
      if (typeof s !== 'number' || !Number.isInteger(s) || s < 0) continue;
      const i = s & this.mask;
      if (this.seqs[i] !== s) continue;
      const st = this.status[i];
      if (st === DELIVERED) continue;
      if (st === LOST) {
        this.c.spurious++;
        if (this.resend[i] === 1) this.c.spuriousMedia++;
      }
      this.status[i] = DELIVERED;
      if (this.flow[i] >= 0) onDelivered?.(this.flow[i], typeof a.arrivalUs === 'number' ? a.arrivalUs : Number.NaN);
      const t = this.sendUs[i];
      if (t > this.rackSendUs || (t === this.rackSendUs && seqDiff(this.rackSeq, s) > 0)) {
        this.rackSendUs = t;
        this.rackSeq = s;
        this.rackRttUs = Math.max(0, nowUs - t);
      }
    }
    return this.detect(nowUs, reoWndUs);
  }

  /**
   * RFC 8985 §6.2 step 5 over the packets sent before RACK.xmit_ts: marks
   * and returns the lost media flowSeqs, and sets {@link nextCheckUs} for
   * the ones the reorder window still holds (§6.3).
   */
  detect(nowUs: number, reoWndUs: number): number[] {
    const lost: number[] = [];
    this.nextCheckUs = Number.POSITIVE_INFINITY;
    if (this.rackSeq < 0 || this.scanFrom < 0) return lost;
    // Keep the scan inside the ring.
    if (seqDiff(this.scanFrom, this.newest) > this.mask) this.scanFrom = (this.newest - this.mask + 0x1_0000_0000) % 0x1_0000_0000;
    let prefixResolved = true;
    let s = this.scanFrom;
    for (; seqDiff(s, this.rackSeq) > 0; s = (s + 1) >>> 0) {
      const i = s & this.mask;
      if (this.seqs[i] !== s || this.status[i] !== IN_FLIGHT) {
        if (prefixResolved) this.scanFrom = (s + 1) >>> 0;
        continue;
      }
      const t = this.sendUs[i];
      if (t > this.rackSendUs) {
        // Sent after RACK.xmit_ts (same pathSeq order should prevent it; clock steps): not judged.
        prefixResolved = false;
        continue;
      }
      const due = t + this.rackRttUs + reoWndUs;
      if (nowUs >= due) {
        this.status[i] = LOST;
        this.c.lost++;
        if (this.resend[i] === 1) {
          this.c.lostMedia++;
          lost.push(this.flow[i]);
        }
        if (prefixResolved) this.scanFrom = (s + 1) >>> 0;
      } else {
        prefixResolved = false;
        if (due < this.nextCheckUs) this.nextCheckUs = due;
      }
    }
    return lost;
  }

  private reset(): void {
    this.seqs.fill(-1);
    this.status.fill(EMPTY);
    this.newest = -1;
    this.scanFrom = -1;
    this.rackSendUs = Number.NEGATIVE_INFINITY;
    this.rackSeq = -1;
    this.rackRttUs = 0;
    this.nextCheckUs = Number.POSITIVE_INFINITY;
  }
}
