/**
 * Deduplication of QoE feedback by sequence number. The receiver sends each
 * feedback message on every path (Converge §4.2), so the sender sees it once
 * per path, in any order; only the first copy may act.
 * Bounded: remembers the last `window` sequence numbers (default 64); a
 * number older than the window behind the newest is treated as a stale
 * duplicate.
 */
import { seqDiff, seqNewer } from '../core/seq.js';

/** Verdict of {@link FeedbackSeqFilter.accept}. */
export type FeedbackSeqVerdict = 'duplicate' | 'newest' | 'older';

export class FeedbackSeqFilter {
  private readonly seen: Float64Array;
  private pos = 0;
  private highest = -1;

  /** @throws RangeError for a window that is not an integer >= 1. */
  constructor(private readonly window = 64) {
    if (!Number.isInteger(window) || window < 1) throw new RangeError(`FeedbackSeqFilter: window must be an integer >= 1, got ${window}`);
    this.seen = new Float64Array(window).fill(-1);
  }

  /**
   * Judge feedback `seq` (uint32) and remember it unless it is a duplicate:
   * 'newest' = newer than everything seen, 'older' = first copy of an older
   * one, 'duplicate' = seen already (or too old to tell).
   */
  accept(seq: number): FeedbackSeqVerdict {
    const s = seq >>> 0;
    if (this.isDuplicate(s)) return 'duplicate';
    const newest = this.highest < 0 || seqNewer(s, this.highest);
    this.seen[this.pos] = s;
    this.pos = (this.pos + 1) % this.window;
    if (newest) this.highest = s;
    return newest ? 'newest' : 'older';
  }

  private isDuplicate(s: number): boolean {
    if (this.highest < 0) return false;
    for (let i = 0; i < this.window; i++) if (this.seen[i] === s) return true;
    return seqDiff(s, this.highest) > this.window;
  }
}
