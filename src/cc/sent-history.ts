/**
 * Sender-side record of sent packets, matched against the receiver's
 * per-path reports: which packets arrived (and when), which are lost, which
 * bytes are still in flight.
 *
 * SOURCE: libwebrtc modules/congestion_controller/rtp/transport_feedback_adapter.cc
 * (send-time history keyed by transport-wide seq, feedback matched to it,
 * packets in flight) and goog_cc_network_control.cc (lost / expected per
 * feedback for the loss-based estimate); seq arithmetic RFC 1982.
 *
 * Bounded: a power-of-two ring of typed arrays indexed by `pathSeq & mask`
 * (default 8192 packets); older packets are forgotten and reports about them
 * counted as unknown. No allocation per packet.
 */
import { seqDiff, seqNewer } from '../core/seq.js';
import type { PathReport } from '../core/types.js';

const EMPTY = 0;
const UNREPORTED = 1;
const RECEIVED = 2;
const LOST = 3;

const UINT32_MAX = 0xffff_ffff;
/** Arrival times beyond +/- 2^53 µs are rejected as garbage. */
const MAX_ABS_TIME_US = Number.MAX_SAFE_INTEGER;

function isSeq(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= UINT32_MAX;
}

/** Result counters of the last {@link SentPacketHistory.applyReport}. */
export interface ReportOutcome {
  /** Packets first known received with this report. */
  newlyReceived: number;
  /** Packets first marked lost with this report. */
  newlyLost: number;
  /** Packets previously marked lost, now reported received. */
  recovered: number;
  duplicates: number;
  unknown: number;
  invalid: number;
}

export class SentPacketHistory {
  readonly capacity: number;
  private readonly mask: number;
  /** Path seq held in each slot (-1 when empty). */
  readonly seqs: Float64Array;
  readonly sendUs: Float64Array;
  readonly sizes: Float64Array;
  readonly arrivalUs: Float64Array;
  private readonly status: Uint8Array;
  private readonly inflight: Uint8Array;
  private newest = -1;
  private highestCovered = -1;
  private inflightSum = 0;

  /**
   * Slot indices of the packets newly received in the last report, sorted by
   * arrival time (ascending). Read `sendUs/sizes/arrivalUs[idx]`.
   */
  readonly newIdx: number[] = [];
  /** Slot indices of the packets first marked lost by the last report, in seq order. */
  readonly lostIdx: number[] = [];
  /** Counters of the last report. */
  readonly outcome: ReportOutcome = { newlyReceived: 0, newlyLost: 0, recovered: 0, duplicates: 0, unknown: 0, invalid: 0 };
  /**
   * For the RTT: the known packet (new or duplicate) with the latest arrival
   * time in the last report; NaN when none.
   */
  lastArrivalSendUs = Number.NaN;
  lastArrivalUs = Number.NaN;

  /** @param capacity packets kept (rounded up to a power of two, >= 16). @throws RangeError when not finite or > 2^20. */
  constructor(capacity = 8192) {
    if (!Number.isFinite(capacity) || capacity < 1 || capacity > 1 << 20) {
      throw new RangeError(`SentPacketHistory: capacity must be in [1, 2^20], got ${capacity}`);
    }
    let c = 16;
    while (c < capacity) c <<= 1;
    this.capacity = c;
    this.mask = c - 1;
    this.seqs = new Float64Array(c).fill(-1);
    this.sendUs = new Float64Array(c);
    this.sizes = new Float64Array(c);
    this.arrivalUs = new Float64Array(c);
    this.status = new Uint8Array(c);
    this.inflight = new Uint8Array(c);
  }

  /** Bytes sent and not yet covered by a report (only packets still in the history). */
  inflightBytes(): number {
    return this.inflightSum;
  }

  /** Newest sent seq, -1 before any. */
  newestSeq(): number {
    return this.newest;
  }

  /**
   * Record a sent packet. Caller validates the fields.
   * @returns false when the seq was already in the history (it is overwritten)
   */
  add(seq: number, sendUs: number, sizeBytes: number): boolean {
    if (this.newest >= 0 && seqDiff(this.newest, seq) > this.capacity) this.clear(); // far jump: the old window is useless
    const i = seq & this.mask;
    const fresh = this.seqs[i] !== seq || this.status[i] === EMPTY;
    if (this.status[i] !== EMPTY && this.inflight[i] === 1) this.inflightSum -= this.sizes[i];
    this.seqs[i] = seq;
    this.sendUs[i] = sendUs;
    this.sizes[i] = sizeBytes;
    this.arrivalUs[i] = 0;
    this.status[i] = UNREPORTED;
    const covered = this.highestCovered >= 0 && !seqNewer(seq, this.highestCovered);
    this.inflight[i] = covered ? 0 : 1;
    if (!covered) this.inflightSum += sizeBytes;
    if (this.newest < 0 || seqNewer(seq, this.newest)) this.newest = seq;
    return fresh;
  }

  /**
   * Move the send time of `seq` later, to `sendUs` (µs), while no report has
   * covered it yet. @returns whether it was moved
   */
  delaySend(seq: number, sendUs: number): boolean {
    const i = seq & this.mask;
    if (this.seqs[i] !== seq || this.status[i] !== UNREPORTED || this.inflight[i] !== 1 || !(sendUs > this.sendUs[i])) return false;
    this.sendUs[i] = sendUs;
    return true;
  }

  /**
   * Apply one report: mark listed packets received, unlisted ones in
   * [beginSeq, endSeq] lost, advance the covered point. Fills {@link newIdx},
   * {@link lostIdx}, {@link outcome}, {@link lastArrivalSendUs}/{@link lastArrivalUs}.
   * @returns false (and changes nothing) when the report is not an object with an arrivals array
   */
  applyReport(report: PathReport): boolean {
    const o = this.outcome;
    o.newlyReceived = o.newlyLost = o.recovered = o.duplicates = o.unknown = o.invalid = 0;
    this.newIdx.length = 0;
    this.lostIdx.length = 0;
    this.lastArrivalSendUs = Number.NaN;
    this.lastArrivalUs = Number.NaN;
    if (typeof report !== 'object' || report === null || !Array.isArray(report.arrivals)) return false;

    const arrivals = report.arrivals;
    let sorted = true;
    let prevArrival = Number.NEGATIVE_INFINITY;
    for (let k = 0; k < arrivals.length; k++) {
      const a = arrivals[k] as unknown as { pathSeq?: unknown; arrivalUs?: unknown } | null;
      if (typeof a !== 'object' || a === null) {
        o.invalid++;
        continue;
      }
      const seq = a.pathSeq;
      const at = a.arrivalUs;
      if (!isSeq(seq) || typeof at !== 'number' || !Number.isFinite(at) || Math.abs(at) > MAX_ABS_TIME_US) {
        o.invalid++;
        continue;
      }
      const i = seq & this.mask;
      if (this.seqs[i] !== seq || this.status[i] === EMPTY) {
        o.unknown++;
        continue;
      }
      if (!(at <= this.lastArrivalUs)) {
        // Newest arrival (or first): candidate for the RTT sample.
        this.lastArrivalUs = at;
        this.lastArrivalSendUs = this.sendUs[i];
      }
      const st = this.status[i];
      if (st === RECEIVED) {
        o.duplicates++;
        continue;
      }
      if (st === LOST) o.recovered++;
      else o.newlyReceived++;
      this.status[i] = RECEIVED;
      this.arrivalUs[i] = at;
      if (this.inflight[i] === 1) {
        this.inflight[i] = 0;
        this.inflightSum -= this.sizes[i];
      }
      if (at < prevArrival) sorted = false;
      prevArrival = at;
      this.newIdx.push(i);
    }

    if (isSeq(report.beginSeq) && isSeq(report.endSeq) && this.newest >= 0) {
      this.applyRange(report.beginSeq, report.endSeq);
    }
    if (!sorted) {
      const arr = this.arrivalUs;
      this.newIdx.sort((x, y) => arr[x] - arr[y]);
    }
    return true;
  }

  private applyRange(begin: number, end: number): void {
    const len = seqDiff(begin, end);
    if (len < 0) return; // inverted range: ignore it
    // Work in window coordinates: 0 = oldest packet kept, mask = newest sent.
    const oldest = (this.newest - this.mask + 0x1_0000_0000) % 0x1_0000_0000;
    const relB = seqDiff(oldest, begin);
    const lo = Math.max(relB, 0);
    const hi = Math.min(relB + len, this.mask);
    if (lo > hi) return; // the range does not touch what we still hold
    for (let r = lo; r <= hi; r++) {
      const s = (oldest + r) >>> 0;
      const i = s & this.mask;
      if (this.seqs[i] !== s || this.status[i] !== UNREPORTED) continue;
      this.status[i] = LOST;
      this.outcome.newlyLost++;
      this.lostIdx.push(i);
    }
    // Advance the covered point; packets at or before it are no longer in flight.
    const relCovered = this.highestCovered < 0 ? -1 : seqDiff(oldest, this.highestCovered);
    if (relCovered >= hi) return;
    for (let r = Math.max(relCovered + 1, 0); r <= hi; r++) {
      const s = (oldest + r) >>> 0;
      const i = s & this.mask;
      if (this.seqs[i] === s && this.inflight[i] === 1) {
        this.inflight[i] = 0;
        this.inflightSum -= this.sizes[i];
      }
    }
    this.highestCovered = (oldest + hi) >>> 0;
  }

  private clear(): void {
    this.seqs.fill(-1);
    this.status.fill(EMPTY);
    this.inflight.fill(0);
    this.inflightSum = 0;
    this.newest = -1;
    this.highestCovered = -1;
  }
}
