/**
 * Receiver NACK generation over the per-stream flow sequence (which spans
 * all paths).
 *
 * SOURCE: RFC 4585 §6.2.1 (Generic NACK), libwebrtc
 * modules/video_coding/nack_requester.cc (gap detection on the sequence
 * number, a NACK is re-sent after one RTT, at most a fixed number of retries,
 * give up on packets that are too old or behind a key frame) and
 * pion/interceptor pkg/nack (bounded receive log).
 *
 * Multipath twist: packets of one flow travel on several paths with
 * different one-way delays, so a gap is usually reordering, not loss. A
 * missing seq is NACKed only after a reorder wait: max(reorderWindowMs, an
 * adaptive estimate). The estimate is the largest reorder delay recently
 * observed (a missing seq that then arrived as an original, not a
 * retransmission), multiplied by 1.2 and decaying with a 10 s time constant,
 * capped by maxReorderWindowMs.
 */
import { seqAdd, seqDiff } from '../core/seq.js';
import type { NackRequest } from './types.js';

export type { NackRequest } from './types.js';

/** Options of {@link NackGenerator}. */
export interface NackGeneratorOptions {
  /** Most missing seqs tracked per stream (default 1000); the oldest are evicted and counted. */
  maxTracked?: number;
  /** NACKs per missing seq (default 3). */
  maxRetries?: number;
  /** Minimum reorder wait before the first NACK, ms (default 30). */
  reorderWindowMs?: number;
  /** Cap of the adaptive reorder wait, ms (default 200). */
  maxReorderWindowMs?: number;
  /** Give up on a seq missing for longer than this, ms (default 1000). */
  maxNackAgeMs?: number;
  /** Retry interval when the RTT is unknown, ms (default 100). */
  defaultRttMs?: number;
  /** Lower bound of the retry interval, ms (default 5). */
  minRetryIntervalMs?: number;
  /** A forward jump larger than this is treated as a bogus seq (default 32768). */
  maxSeqJump?: number;
  /** Consecutive bogus jumps that make the stream resynchronise (default 16). */
  resyncAfterJumps?: number;
  /** Most streams (default 16). */
  maxStreams?: number;
  /** Most seqs in one returned request; more make several requests (default 256). */
  maxSeqsPerNack?: number;
}

/** Counters of {@link NackGenerator} (monotonic except `tracked`). */
export interface NackGeneratorStats {
  packets: number;
  /** Missing seqs detected (gaps). */
  missing: number;
  /** Missing seqs that arrived before their first NACK (reordering). */
  reordered: number;
  /** Missing seqs that arrived after a NACK (recovered: retransmission, FEC or late original). */
  recovered: number;
  /** Seq numbers sent in NACKs (retries included). */
  nacked: number;
  /** First NACKs only. */
  firstNacks: number;
  retries: number;
  /** Gave up: maxRetries reached without the packet. */
  exhausted: number;
  /** Gave up: older than maxNackAgeMs. */
  expired: number;
  /** Removed by dropBefore() (frame buffer moved on). */
  skipped: number;
  /** Evicted / not tracked because of the maxTracked bound. */
  capped: number;
  /** Packets ignored as bogus forward jumps. */
  bogusJumps: number;
  resyncs: number;
  invalid: number;
  /** Missing seqs tracked now. */
  tracked: number;
  /** Current reorder wait (ms). */
  reorderWindowMs: number;
}

interface Missing {
  detectedUs: number;
  lastNackUs: number;
  retries: number;
}

interface StreamNackState {
  highest: number;
  missing: Map<number, Missing>;
  jumpRun: number;
}

/**
 * Gap detector + NACK scheduler. `onPacket` is O(1) without allocation for
 * in-order and reordered arrivals (allocation only per missing seq); `poll` is
 * O(tracked).
 */
export class NackGenerator {
  private readonly maxTracked: number;
  private readonly maxRetries: number;
  private readonly reorderMinMs: number;
  private readonly reorderMaxMs: number;
  private readonly maxAgeUs: number;
  private readonly defaultRttMs: number;
  private readonly minRetryMs: number;
  private readonly maxJump: number;
  private readonly resyncAfter: number;
  private readonly maxStreams: number;
  private readonly maxPerNack: number;
  private readonly streams = new Map<number, StreamNackState>();
  private lastStreamId = -1;
  private lastStream: StreamNackState | undefined = undefined;
  /** Adaptive reorder estimate (ms) and when it was last decayed (µs). */
  private reorderEstMs = 0;
  private reorderEstUs = 0;
  private readonly st = {
    packets: 0,
    missing: 0,
    reordered: 0,
    recovered: 0,
    nacked: 0,
    firstNacks: 0,
    retries: 0,
    exhausted: 0,
    expired: 0,
    skipped: 0,
    capped: 0,
    bogusJumps: 0,
    resyncs: 0,
    invalid: 0,
  };

  /** @throws RangeError on a non-positive/non-finite option. */
  constructor(opts: NackGeneratorOptions = {}) {
    this.maxTracked = posInt(opts.maxTracked ?? 1000, 'maxTracked');
    this.maxRetries = posInt(opts.maxRetries ?? 3, 'maxRetries');
    this.reorderMinMs = nonNeg(opts.reorderWindowMs ?? 30, 'reorderWindowMs');
    this.reorderMaxMs = Math.max(this.reorderMinMs, nonNeg(opts.maxReorderWindowMs ?? 200, 'maxReorderWindowMs'));
    this.maxAgeUs = nonNeg(opts.maxNackAgeMs ?? 1000, 'maxNackAgeMs') * 1000;
    this.defaultRttMs = nonNeg(opts.defaultRttMs ?? 100, 'defaultRttMs');
    this.minRetryMs = nonNeg(opts.minRetryIntervalMs ?? 5, 'minRetryIntervalMs');
    this.maxJump = posInt(opts.maxSeqJump ?? 1 << 15, 'maxSeqJump');
    this.resyncAfter = posInt(opts.resyncAfterJumps ?? 16, 'resyncAfterJumps');
    this.maxStreams = posInt(opts.maxStreams ?? 16, 'maxStreams');
    this.maxPerNack = posInt(opts.maxSeqsPerNack ?? 256, 'maxSeqsPerNack');
  }

  /**
   * A media packet (or a recovered one) of `streamId` with flow sequence
   * `flowSeq` arrived at `nowUs` (receiver clock, µs).
   * @param recovered true for a retransmission or an FEC-rebuilt packet:
   *   it clears the entry but says nothing about reordering.
   * Never throws; invalid input is counted.
   */
  onPacket(streamId: number, flowSeq: number, nowUs: number, recovered = false): void {
    if ((flowSeq >>> 0) !== flowSeq || (streamId >>> 0) !== streamId || !Number.isFinite(nowUs)) {
      this.st.invalid++;
      return;
    }
    this.st.packets++;
    let s: StreamNackState | undefined;
    if (streamId === this.lastStreamId) s = this.lastStream;
    else {
      s = this.streams.get(streamId);
      if (s === undefined) {
        if (this.streams.size >= this.maxStreams) {
          this.st.invalid++;
          return;
        }
        s = { highest: flowSeq, missing: new Map(), jumpRun: 0 };
        this.streams.set(streamId, s);
        this.lastStreamId = streamId;
        this.lastStream = s;
        return;
      }
      this.lastStreamId = streamId;
      this.lastStream = s;
    }
    if (s === undefined) return;
    const d = seqDiff(s.highest, flowSeq);
    if (d === 1) {
      s.highest = flowSeq;
      s.jumpRun = 0;
      return;
    }
    if (d <= 0) {
      const m = s.missing.get(flowSeq);
      if (m !== undefined) {
        s.missing.delete(flowSeq);
        if (m.retries === 0) {
          this.st.reordered++;
          if (!recovered) this.reorderSample((nowUs - m.detectedUs) / 1000, nowUs);
        } else {
          this.st.recovered++;
          if (!recovered) this.reorderSample((nowUs - m.detectedUs) / 1000, nowUs);
        }
      }
      return;
    }
    if (d > this.maxJump) {
      if (++s.jumpRun < this.resyncAfter) {
        this.st.bogusJumps++;
        return;
      }
      // Consistent large jump: the sender really moved on; restart tracking.
      this.st.resyncs++;
      this.st.capped += s.missing.size;
      s.missing.clear();
      s.highest = flowSeq;
      s.jumpRun = 0;
      return;
    }
    s.jumpRun = 0;
    // Gap of d - 1 missing seqs; track at most maxTracked of the newest.
    const gap = d - 1;
    const add = Math.min(gap, this.maxTracked);
    if (gap > add) this.st.capped += gap - add;
    let seq = seqAdd(flowSeq, -add);
    for (let i = 0; i < add; i++) {
      if (s.missing.size >= this.maxTracked) this.evictOldest(s);
      s.missing.set(seq, { detectedUs: nowUs, lastNackUs: 0, retries: 0 });
      seq = seq + 1 === 0x1_0000_0000 ? 0 : seq + 1;
    }
    this.st.missing += add;
    s.highest = flowSeq;
  }

  /**
   * Stop asking for anything of `streamId` older than `flowSeq` (the frame
   * buffer moved past it, e.g. after a key frame or a dropped frame).
   */
  dropBefore(streamId: number, flowSeq: number): void {
    const s = this.streams.get(streamId);
    if (s === undefined || (flowSeq >>> 0) !== flowSeq) return;
    for (const seq of s.missing.keys()) {
      if (seqDiff(flowSeq, seq) < 0) {
        s.missing.delete(seq);
        this.st.skipped++;
      }
    }
  }

  /** Current reorder wait before a first NACK (ms). */
  reorderWindowMs(nowUs?: number): number {
    if (nowUs !== undefined) this.decay(nowUs);
    return Math.min(this.reorderMaxMs, Math.max(this.reorderMinMs, this.reorderEstMs));
  }

  /**
   * Seqs to NACK now.
   * @param nowUs receiver clock (µs).
   * @param rttMs current RTT estimate (ms); the retry interval is
   *   max(rttMs, minRetryIntervalMs), `defaultRttMs` when not finite/positive.
   * @returns requests grouped by stream, at most `maxSeqsPerNack` seqs each
   *   (a stream may appear several times), seqs ascending in send order.
   */
  poll(nowUs: number, rttMs: number): NackRequest[] {
    const out: NackRequest[] = [];
    if (!Number.isFinite(nowUs)) return out;
    const waitUs = this.reorderWindowMs(nowUs) * 1000;
    const rtt = Number.isFinite(rttMs) && rttMs > 0 ? rttMs : this.defaultRttMs;
    const retryUs = Math.max(rtt, this.minRetryMs) * 1000;
    for (const [streamId, s] of this.streams) {
      let cur: number[] | undefined;
      for (const [seq, m] of s.missing) {
        if (nowUs - m.detectedUs > this.maxAgeUs) {
          s.missing.delete(seq);
          this.st.expired++;
          continue;
        }
        if (m.retries === 0) {
          if (nowUs - m.detectedUs < waitUs) continue;
          this.st.firstNacks++;
        } else {
          if (nowUs - m.lastNackUs < retryUs) continue;
          if (m.retries >= this.maxRetries) {
            s.missing.delete(seq);
            this.st.exhausted++;
            continue;
          }
          this.st.retries++;
        }
        m.retries++;
        m.lastNackUs = nowUs;
        this.st.nacked++;
        if (cur === undefined || cur.length >= this.maxPerNack) {
          cur = [];
          out.push({ streamId, flowSeqs: cur });
        }
        cur.push(seq);
      }
    }
    return out;
  }

  /** Missing seqs tracked for `streamId` (all streams when omitted). */
  trackedCount(streamId?: number): number {
    if (streamId !== undefined) return this.streams.get(streamId)?.missing.size ?? 0;
    let n = 0;
    for (const s of this.streams.values()) n += s.missing.size;
    return n;
  }

  /** Counters (a copy). */
  stats(): NackGeneratorStats {
    return { ...this.st, tracked: this.trackedCount(), reorderWindowMs: this.reorderWindowMs() };
  }

  private evictOldest(s: StreamNackState): void {
    // Map iteration order is insertion order; gaps are inserted in seq order.
    const it = s.missing.keys().next();
    if (!it.done) {
      s.missing.delete(it.value);
      this.st.capped++;
    }
  }

  private reorderSample(ms: number, nowUs: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    this.decay(nowUs);
    const v = Math.min(this.reorderMaxMs, ms * 1.2);
    if (v > this.reorderEstMs) this.reorderEstMs = v;
  }

  private decay(nowUs: number): void {
    if (!Number.isFinite(nowUs)) return;
    const dt = nowUs - this.reorderEstUs;
    if (dt > 0) {
      this.reorderEstMs *= Math.exp(-dt / 10_000_000);
      this.reorderEstUs = nowUs;
    }
  }
}

function posInt(v: number, name: string): number {
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`NackGenerator: ${name} must be a positive integer, got ${v}`);
  return v;
}

function nonNeg(v: number, name: string): number {
  if (!Number.isFinite(v) || v < 0) throw new RangeError(`NackGenerator: ${name} must be a finite number >= 0, got ${v}`);
  return v;
}
