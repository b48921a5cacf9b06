/**
 * Receiver side of the per-path arrival report (transport-wide-cc-like).
 *
 * SOURCE: draft-holmer-rmcat-transport-wide-cc-extensions-01 §3 (the receiver
 * records the arrival time of every packet by its transport-wide sequence
 * number and periodically feeds back a range [base seq, base seq + count) with
 * a receive delta for each received packet), and libwebrtc
 * modules/remote_bitrate_estimator/remote_estimator_proxy.cc (one report per
 * interval, a late packet for an already-reported seq is still fed back, and
 * the feedback re-lists every packet received inside the range it covers).
 * Here the sequence number is our per-path `pathSeq` (Converge App. C:
 * path-specific RTCP sequence numbers), one builder per path.
 */
import type { ArrivalEntry, PathId, PathReport } from '../core/types.js';
import { seqAdd, seqDiff } from '../core/seq.js';

/** Options of {@link PathReportBuilder}. */
export interface PathReportBuilderOptions {
  /**
   * Most arrivals kept between two reports (default 1024). When full, the
   * oldest pending arrival is dropped and counted (`overflowDropped`); the
   * engine should call `makeReport` early when {@link PathReportBuilder.shouldReportEarly} is true.
   */
  maxEntries?: number;
  /**
   * A seq more than this many ahead of the newest received seq is treated as
   * corrupt or lying and dropped (counted `jumpDropped`) instead of opening a
   * huge "lost" range (default 32768).
   */
  maxSeqJump?: number;
  /**
   * Largest `endSeq - beginSeq` of one report (default 65535, the wire
   * decoder's `maxReportRange`). A wider range is clamped to its newest part;
   * arrivals that fall outside are left out and counted (`rangeClamped`).
   */
  maxReportRange?: number;
}

/** Counters of {@link PathReportBuilder} (all monotonic except `pending`). */
export interface PathReportBuilderStats {
  /** Arrivals accepted (new or late, not duplicates). */
  received: number;
  /** Arrivals of a seq already recorded (ignored). */
  duplicates: number;
  /** Accepted arrivals for a seq a previous report already covered. */
  late: number;
  /** Late arrivals too far behind the newest seq to be checked for duplicates (dropped). */
  tooOld: number;
  /** Arrivals dropped because their seq jumped more than `maxSeqJump` ahead. */
  jumpDropped: number;
  /** Arrivals with a non-uint32 seq or a non-finite/negative time (dropped). */
  invalid: number;
  /** Pending arrivals dropped because `maxEntries` was reached before a report. */
  overflowDropped: number;
  /**
   * Arrivals left out of a report because its range had to be clamped, or
   * re-listed ones left out because the report already held
   * {@link MAX_RELIST_ARRIVALS} arrivals.
   */
  rangeClamped: number;
  /** Already-reported arrivals listed again because a late packet's report re-covered them. */
  relisted: number;
  /** Reports made. */
  reports: number;
  /** Arrivals waiting for the next report. */
  pending: number;
}

const DEFAULT_MAX_ENTRIES = 1024;
const DEFAULT_MAX_SEQ_JUMP = 1 << 15;
/**
 * Re-listing stops once a report holds this many arrivals: the default
 * `maxEntries`, so a report with re-listed arrivals is no bigger than a full
 * batch (~12 kB encoded; the wire decoder takes up to 4096 arrivals).
 */
export const MAX_RELIST_ARRIVALS = 1024;

/**
 * Collects the arrivals of one path between reports and turns them into a
 * {@link PathReport}.
 *
 * Report semantics (what the sender's congestion controller may rely on;
 * every report passes the wire validator: `beginSeq <= endSeq`, all arrivals
 * inside the range, integer µs times):
 * - `[beginSeq, endSeq]` (inclusive, uint32 wrap-around) ends at the newest
 *   seq received and starts right after the previous report's `endSeq` (the
 *   first report starts at the lowest seq received). Seqs in that range that
 *   are not listed were not received (yet) — implied lost.
 * - Duplicates are never listed twice.
 * - A LATE packet (its seq was covered by an earlier report, which implied it
 *   lost) is still listed so the sender can un-count that loss; the range is
 *   then extended back to include it. The extension re-covers seqs an earlier
 *   report already settled: every one of them that was received is listed
 *   again with its original arrival time (as libwebrtc's transport feedback
 *   lists every packet received inside its range), so a seq the sender never
 *   heard about because that earlier report was lost (a dead downlink) is not
 *   implied lost. Bounded: only seqs still in the duplicate window (at least
 *   4 x `maxEntries`, >= 4096 seqs behind the newest) and at most
 *   {@link MAX_RELIST_ARRIVALS} arrivals per report (the rest counted
 *   `rangeClamped`).
 *   The sender must keep "received" sticky (a re-listed seq it already has as
 *   received is a duplicate) and only count a seq lost once
 *   (transport-wide-cc semantics; src/cc/sent-history.ts does this).
 * - When only late packets arrived since the last report, the range spans
 *   just those late seqs.
 * - `arrivals` are in arrival order (re-listed ones merged in by their arrival
 *   time, each seq once); `reportTimeUs` is the `nowUs` given to
 *   {@link makeReport} (receiver clock, rounded to an integer µs).
 *
 * Cost: `onPacket` is O(1) with no allocation (typed-array ring + a seq-indexed
 * duplicate table); `makeReport` allocates the report.
 */
export class PathReportBuilder {
  readonly pathId: PathId;
  private readonly cap: number;
  private readonly maxSeqJump: number;
  private readonly maxRange: number;
  // Ring of pending arrivals.
  private readonly ringSeq: Uint32Array;
  private readonly ringTime: Float64Array;
  private head = 0;
  private count = 0;
  // Duplicate detection: seenSeq[seq & mask] = seq + 1 (0 = empty).
  private readonly seenSeq: Float64Array;
  /** Arrival time (µs, rounded) of the seq in the same slot of seenSeq. */
  private readonly seenTime: Float64Array;
  private readonly seenMask: number;
  private readonly window: number;
  private hasHighest = false;
  private highest = 0;
  /** Seq right after the previous report's endSeq; undefined before the first report. */
  private nextBegin: number | undefined = undefined;
  /** Lowest new seq of the pending batch (only used before the first report). */
  private batchLow = 0;
  private batchHasNew = false;
  private batchHigh = 0;
  private batchHasLate = false;
  private lateLow = 0;
  private lateHigh = 0;
  private readonly st: PathReportBuilderStats = {
    received: 0,
    duplicates: 0,
    late: 0,
    tooOld: 0,
    jumpDropped: 0,
    invalid: 0,
    overflowDropped: 0,
    rangeClamped: 0,
    relisted: 0,
    reports: 0,
    pending: 0,
  };

  /**
   * @param pathId the path this builder reports on (copied into each report).
   * @throws RangeError when `pathId` is not a non-negative integer, or an
   *   option is not a positive integer.
   */
  constructor(pathId: PathId, opts: PathReportBuilderOptions = {}) {
    if (!Number.isInteger(pathId) || pathId < 0) throw new RangeError(`PathReportBuilder: bad pathId ${pathId}`);
    const cap = opts.maxEntries ?? DEFAULT_MAX_ENTRIES;
    const jump = opts.maxSeqJump ?? DEFAULT_MAX_SEQ_JUMP;
    const range = opts.maxReportRange ?? 65535;
    if (!Number.isInteger(range) || range < 1 || range > 0x7fff_ffff) throw new RangeError(`PathReportBuilder: maxReportRange must be a positive integer, got ${range}`);
    this.maxRange = range;
    if (!Number.isInteger(cap) || cap < 1 || cap > 1 << 20) throw new RangeError(`PathReportBuilder: maxEntries must be an integer in [1, 2^20], got ${cap}`);
    if (!Number.isInteger(jump) || jump < 1 || jump > 0x7fff_ffff) throw new RangeError(`PathReportBuilder: maxSeqJump must be a positive integer, got ${jump}`);
    this.pathId = pathId;
    this.cap = cap;
    this.maxSeqJump = jump;
    this.ringSeq = new Uint32Array(cap);
    this.ringTime = new Float64Array(cap);
    let w = 4096;
    while (w < 4 * cap) w *= 2;
    this.window = w;
    this.seenMask = w - 1;
    this.seenSeq = new Float64Array(w);
    this.seenTime = new Float64Array(w);
  }

  /**
   * Record the arrival of the packet with per-path sequence number `pathSeq`
   * at receiver time `arrivalUs` (µs). Never throws; bad input is counted.
   */
  onPacket(pathSeq: number, arrivalUs: number): void {
    if (pathSeq >>> 0 !== pathSeq || !(arrivalUs >= 0 && arrivalUs <= Number.MAX_SAFE_INTEGER)) {
      this.st.invalid++;
      return;
    }
    if (this.hasHighest) {
      const d = seqDiff(this.highest, pathSeq);
      if (d > this.maxSeqJump) {
        this.st.jumpDropped++;
        return;
      }
      if (d <= -this.window) {
        this.st.tooOld++;
        return;
      }
    }
    const slot = pathSeq & this.seenMask;
    if (this.seenSeq[slot] === pathSeq + 1) {
      this.st.duplicates++;
      return;
    }
    this.seenSeq[slot] = pathSeq + 1;
    const at = Math.round(arrivalUs);
    this.seenTime[slot] = at;
    if (!this.hasHighest || seqDiff(this.highest, pathSeq) > 0) {
      this.highest = pathSeq;
      this.hasHighest = true;
    }
    const isNew = this.nextBegin === undefined || seqDiff(this.nextBegin, pathSeq) >= 0;
    if (isNew) {
      if (!this.batchHasNew) {
        this.batchHasNew = true;
        this.batchLow = pathSeq;
        this.batchHigh = pathSeq;
      } else {
        if (seqDiff(this.batchLow, pathSeq) < 0) this.batchLow = pathSeq;
        if (seqDiff(this.batchHigh, pathSeq) > 0) this.batchHigh = pathSeq;
      }
    } else {
      this.st.late++;
      if (!this.batchHasLate) {
        this.batchHasLate = true;
        this.lateLow = pathSeq;
        this.lateHigh = pathSeq;
      } else {
        if (seqDiff(this.lateLow, pathSeq) < 0) this.lateLow = pathSeq;
        if (seqDiff(this.lateHigh, pathSeq) > 0) this.lateHigh = pathSeq;
      }
    }
    this.st.received++;
    // Append to the ring, dropping the oldest pending entry when full.
    if (this.count === this.cap) {
      this.head = this.head + 1 === this.cap ? 0 : this.head + 1;
      this.count--;
      this.st.overflowDropped++;
    }
    let tail = this.head + this.count;
    if (tail >= this.cap) tail -= this.cap;
    this.ringSeq[tail] = pathSeq;
    this.ringTime[tail] = at;
    this.count++;
  }

  /** Arrivals waiting for the next report. */
  pendingCount(): number {
    return this.count;
  }

  /**
   * True when at least 3/4 of `maxEntries` are pending: the engine should
   * call {@link makeReport} now instead of waiting for its report timer, so
   * nothing is dropped.
   */
  shouldReportEarly(): boolean {
    return this.count * 4 >= this.cap * 3;
  }

  /**
   * Build a report of everything received since the previous report and
   * start a new batch. Returns `undefined` when nothing arrived since.
   * @param nowUs receiver clock (µs), copied to `reportTimeUs`.
   */
  makeReport(nowUs: number): PathReport | undefined {
    if (this.count === 0) return undefined;
    let beginSeq: number;
    let endSeq: number;
    const prevNext = this.nextBegin;
    if (this.batchHasNew) {
      beginSeq = this.nextBegin ?? this.batchLow;
      endSeq = this.batchHigh;
      this.nextBegin = seqAdd(endSeq, 1);
    } else {
      beginSeq = this.lateLow;
      endSeq = this.lateHigh;
    }
    if (this.batchHasLate && seqDiff(beginSeq, this.lateLow) < 0) beginSeq = this.lateLow;
    const clamp = seqDiff(beginSeq, endSeq) > this.maxRange;
    if (clamp) beginSeq = seqAdd(endSeq, -this.maxRange);
    let arrivals: ArrivalEntry[] = [];
    let idx = this.head;
    for (let i = 0; i < this.count; i++) {
      const seq = this.ringSeq[idx];
      if (clamp && seqDiff(beginSeq, seq) < 0) this.st.rangeClamped++;
      else arrivals.push({ pathSeq: seq, arrivalUs: this.ringTime[idx] });
      idx = idx + 1 === this.cap ? 0 : idx + 1;
    }
    // The range re-covers [beginSeq, prevNext - 1] (a late packet): list again what was received there.
    if (this.batchHasLate && prevNext !== undefined && seqDiff(beginSeq, prevNext) > 0)
      arrivals = this.relist(arrivals, beginSeq, seqDiff(beginSeq, endSeq) < seqDiff(beginSeq, prevNext) ? endSeq : seqAdd(prevNext, -1));
    this.head = 0;
    this.count = 0;
    this.batchHasNew = false;
    this.batchHasLate = false;
    this.st.reports++;
    if (arrivals.length === 0) return undefined;
    const t = Number.isFinite(nowUs) && nowUs > 0 ? Math.round(nowUs) : 0;
    return { pathId: this.pathId, beginSeq, endSeq, arrivals, reportTimeUs: t };
  }

  /**
   * `arrivals` plus every seq in [lo, hi] (inside the duplicate window) that
   * was received and is not already in `arrivals`, all sorted by arrival
   * time (a stable sort: equal times keep their order).
   */
  private relist(arrivals: ArrivalEntry[], lo: number, hi: number): ArrivalEntry[] {
    const oldest = seqAdd(this.highest, 1 - this.window);
    if (seqDiff(oldest, lo) < 0) lo = oldest;
    const listed = new Set<number>();
    for (const a of arrivals) listed.add(a.pathSeq);
    const extra: ArrivalEntry[] = [];
    const n = seqDiff(lo, hi);
    for (let k = 0; k <= n; k++) {
      const seq = seqAdd(lo, k);
      const slot = seq & this.seenMask;
      if (this.seenSeq[slot] !== seq + 1 || listed.has(seq)) continue;
      if (arrivals.length + extra.length >= MAX_RELIST_ARRIVALS) {
        this.st.rangeClamped++;
        continue;
      }
      extra.push({ pathSeq: seq, arrivalUs: this.seenTime[slot] });
    }
    this.st.relisted += extra.length;
    return extra.length ? extra.concat(arrivals).sort((x, y) => x.arrivalUs - y.arrivalUs) : arrivals;
  }

  /** Counters (a copy). */
  stats(): PathReportBuilderStats {
    return { ...this.st, pending: this.count };
  }
}
