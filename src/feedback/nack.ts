/**
 * Receiver NACK generation over the per-stream flow sequence (which spans
 * all paths).
 *
 * SOURCE: RFC 4585 §6.2.1 (Generic NACK), libwebrtc
 * modules/video_coding/nack_requester.cc (gap detection on the sequence
 * number, a NACK is re-sent after one RTT, at most a fixed number of retries,
 * give up on packets that are too old; unlike libwebrtc the list is not
 * cleared behind a key frame: those seqs age out by maxNackAgeMs) and
 * pion/interceptor pkg/nack (bounded receive log).
 *
 * Multipath twist: packets of one flow travel on several paths with
 * different one-way delays, so a gap is usually reordering, not loss. A
 * missing seq is NACKed only after a reorder wait: max(reorderWindowMs, an
 * adaptive estimate). The estimate is the largest reorder delay recently
 * observed (a missing seq that then arrived as an original, not a
 * retransmission), multiplied by 1.2 and decaying with a 10 s time constant,
 * capped by maxReorderWindowMs.
 *
 * Which late arrivals are reordering samples: a retransmission repeats the
 * original's bytes (the receiver cannot tell them apart), so a seq that
 * arrives after its first NACK is ambiguous, as a TCP segment's ACK after a
 * retransmission is for the RTT (Karn's algorithm: Karn & Partridge,
 * "Improving Round-Trip Time Estimates in Reliable Transport Protocols",
 * SIGCOMM 1987; RFC 6298 §3). It is a sample only when it left the
 * sender before that NACK was sent (its datagram's send time on our clock,
 * as far as the clock offset's error bound allows; the caller passes it),
 * or, with no send time, when it came back sooner than half an RTT after
 * the NACK (too soon for a retransmission). A seq answered ambiguously is
 * remembered for a while (at most ANSWERED_MAX per stream): when its
 * original turns up later as a duplicate (a path whose delay jumped: the
 * retransmission over the fast path came first), the original is the
 * sample, so the wait still learns a slow path's delay. Counting every answered NACK
 * as reordering made a failover
 * inflate the wait to its cap: the retransmissions of the dead path's
 * packets crossed the slower path (NACK + RTT ~150 ms x 1.2), and every
 * NACK after that waited 200 ms (then the cap) instead of 30 (seed 3 of the `failover`
 * scenario: a 622 ms freeze). libwebrtc likewise leaves retransmitted
 * packets out of its reordering histogram (nack_requester.cc,
 * UpdateReorderingStatistics only when !is_retransmitted).
 *
 * Cost bound: missing seqs are kept as runs (ranges sharing one detection time
 * and retry state), so a gap of any size costs O(1) on arrival and a late or
 * recovered packet O(log runs) to find plus one split; a forward jump larger
 * than `maxTracked` (the NACK window) clears the stream's list and asks for a
 * key frame instead of tracking the gap, as libwebrtc's NackRequester does when
 * a gap exceeds kMaxNackPackets (modules/video_coding/nack_requester.cc,
 * AddPacketsToNack / "clear and request a key frame").
 */
import { seqAdd, seqDiff } from '../core/seq.js';
import type { NackRequest } from './types.js';

export type { NackRequest } from './types.js';

/** Options of {@link NackGenerator}. */
export interface NackGeneratorOptions {
  /**
   * NACK window: most missing seqs tracked per stream (default 1000, libwebrtc
   * kMaxNackPackets); the oldest are evicted and counted. A single gap larger
   * than this resets the stream's list and asks for a key frame.
   */
  maxTracked?: number;
  /** NACKs per missing seq (default 3). */
  maxRetries?: number;
  /** Minimum reorder wait before the first NACK, ms (default 30). */
  reorderWindowMs?: number;
  /**
   * Cap of the adaptive reorder wait, ms (default 100). A packet only
   * delayed on a slower path for longer is NACKed and sent twice; one lost
   * behind a path's delay spike is resent a round sooner. 100 ms since stop
   * 43 (was 200): simulator, cellular suite, converge, 15 seeds in five
   * 3-seed sets, frozen s per set -> all +0.45 / -1.72 / -1.23 / -0.85 /
   * -2.15 (total 207.6 -> 191.1 s, goodput 0.996x; worst pair mm:verizon+att
   * +0.27 s per seed), the check half lower in all five sets; named
   * scenarios not worse; browser, carriers 60 s, converge, 2 + 2 runs: 1.10 /
   * 0.41 -> 0 / 0.23 s frozen, 40.9 -> 40.1 dB, 3.21 -> 2.98 Mbps, p95
   * latency 184-199 -> 230-239 ms (docs/results.md, stop 43).
   */
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
  /** Originals (sent before their NACK) that arrived after their seq was recovered: reordering samples. */
  lateOriginals: number;
  /** Seq numbers sent in NACKs (retries included). */
  nacked: number;
  /** First NACKs only. */
  firstNacks: number;
  retries: number;
  /** Gave up: maxRetries reached without the packet. */
  exhausted: number;
  /** Gave up: older than maxNackAgeMs. */
  expired: number;
  /** Evicted / not tracked because of the maxTracked bound. */
  capped: number;
  /** Gaps larger than the NACK window: list cleared, key frame requested (libwebrtc NackRequester). */
  windowResets: number;
  /** Packets ignored as bogus forward jumps. */
  bogusJumps: number;
  resyncs: number;
  invalid: number;
  /** Missing seqs tracked now. */
  tracked: number;
  /** Current reorder wait (ms). */
  reorderWindowMs: number;
}

/** A run of consecutive missing seqs detected together (they share their NACK state). */
interface MissingRun {
  /** First missing seq of the run. */
  start: number;
  /** Seqs in the run (>= 1). */
  len: number;
  detectedUs: number;
  /** Time (µs) of the run's first NACK (0 before it). */
  firstNackUs: number;
  lastNackUs: number;
  retries: number;
}

/** Seqs answered after their NACK (ambiguous) remembered per stream, waiting for a late original. */
const ANSWERED_MAX = 256;

interface StreamNackState {
  highest: number;
  /** seq -> (detection, first NACK) times (µs) of seqs answered after a NACK by a packet that may have been the retransmission; insertion order, bounded. */
  answered: Map<number, { detectedUs: number; firstNackUs: number }>;
  /** Runs oldest first (send order); disjoint. */
  runs: MissingRun[];
  /** Sum of run lengths. */
  tracked: number;
  jumpRun: number;
}

/**
 * Gap detector + NACK scheduler. `onPacket` is O(1) without allocation for
 * in-order arrivals, O(1) for a gap of any size, O(log runs) for a late
 * packet; `poll` is O(tracked).
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
  /** RTT (ms) of the last poll: a seq back sooner than half of it after its first NACK is an original, not a retransmission. */
  private pollRttMs: number;
  private readonly st = {
    packets: 0,
    missing: 0,
    reordered: 0,
    recovered: 0,
    lateOriginals: 0,
    nacked: 0,
    firstNacks: 0,
    retries: 0,
    exhausted: 0,
    expired: 0,
    capped: 0,
    windowResets: 0,
    bogusJumps: 0,
    resyncs: 0,
    invalid: 0,
  };

  /** @throws RangeError on a non-positive/non-finite option. */
  constructor(opts: NackGeneratorOptions = {}) {
    this.maxTracked = posInt(opts.maxTracked ?? 1000, 'maxTracked');
    this.maxRetries = posInt(opts.maxRetries ?? 3, 'maxRetries');
    this.reorderMinMs = nonNeg(opts.reorderWindowMs ?? 30, 'reorderWindowMs');
    this.reorderMaxMs = Math.max(this.reorderMinMs, nonNeg(opts.maxReorderWindowMs ?? 100, 'maxReorderWindowMs'));
    this.maxAgeUs = nonNeg(opts.maxNackAgeMs ?? 1000, 'maxNackAgeMs') * 1000;
    this.defaultRttMs = nonNeg(opts.defaultRttMs ?? 100, 'defaultRttMs');
    this.minRetryMs = nonNeg(opts.minRetryIntervalMs ?? 5, 'minRetryIntervalMs');
    this.maxJump = posInt(opts.maxSeqJump ?? 1 << 15, 'maxSeqJump');
    this.resyncAfter = posInt(opts.resyncAfterJumps ?? 16, 'resyncAfterJumps');
    this.maxStreams = posInt(opts.maxStreams ?? 16, 'maxStreams');
    this.maxPerNack = posInt(opts.maxSeqsPerNack ?? 256, 'maxSeqsPerNack');
    this.pollRttMs = this.defaultRttMs;
  }

  /**
   * A media packet (or a recovered one) of `streamId` with flow sequence
   * `flowSeq` arrived at `nowUs` (receiver clock, µs).
   * @param recovered true for a retransmission or an FEC-rebuilt packet:
   *   it clears the entry but says nothing about reordering.
   * @param sentByUs the latest time (receiver clock, µs) the packet can have
   *   left the sender (its send time through the clock offset, plus the
   *   offset's error bound); undefined when unknown. A seq that arrives after
   *   its NACK is a reordering sample only if it was sent before that NACK.
   * @returns true when the gap before this packet exceeded the NACK window:
   *   the stream's NACK list was cleared and the caller should request a key
   *   frame (rate-limited by its KeyframeRequester). Never throws; invalid
   *   input is counted.
   */
  onPacket(streamId: number, flowSeq: number, nowUs: number, recovered = false, sentByUs?: number): boolean {
    if (flowSeq >>> 0 !== flowSeq || streamId >>> 0 !== streamId || !Number.isFinite(nowUs)) {
      this.st.invalid++;
      return false;
    }
    this.st.packets++;
    let s: StreamNackState | undefined;
    if (streamId === this.lastStreamId) s = this.lastStream;
    else {
      s = this.streams.get(streamId);
      if (s === undefined) {
        if (this.streams.size >= this.maxStreams) {
          this.st.invalid++;
          return false;
        }
        s = { highest: flowSeq, runs: [], tracked: 0, jumpRun: 0, answered: new Map() };
        this.streams.set(streamId, s);
        this.lastStreamId = streamId;
        this.lastStream = s;
        return false;
      }
      this.lastStreamId = streamId;
      this.lastStream = s;
    }
    if (s === undefined) return false;
    const d = seqDiff(s.highest, flowSeq);
    if (d === 1) {
      s.highest = flowSeq;
      s.jumpRun = 0;
      return false;
    }
    if (d <= 0) {
      if (s.tracked > 0 || s.answered.size > 0) this.onLate(s, flowSeq, -d, nowUs, recovered, sentByUs);
      return false;
    }
    if (d > this.maxJump) {
      if (++s.jumpRun < this.resyncAfter) {
        this.st.bogusJumps++;
        return false;
      }
      // Consistent large jump: the sender really moved on; restart tracking.
      this.st.resyncs++;
      this.clear(s);
      s.highest = flowSeq;
      s.jumpRun = 0;
      return false;
    }
    s.jumpRun = 0;
    const gap = d - 1;
    s.highest = flowSeq;
    if (gap > this.maxTracked) {
      // Beyond the NACK window: nothing we could ask for would arrive in time; start over from a key frame.
      this.st.windowResets++;
      this.st.capped += gap;
      this.clear(s);
      return true;
    }
    // Make room: evict the oldest missing seqs (front of the oldest runs).
    let excess = s.tracked + gap - this.maxTracked;
    while (excess > 0 && s.runs.length > 0) {
      const r = s.runs[0];
      const k = Math.min(excess, r.len);
      r.start = seqAdd(r.start, k);
      r.len -= k;
      s.tracked -= k;
      excess -= k;
      this.st.capped += k;
      if (r.len === 0) s.runs.shift();
    }
    s.runs.push({ start: seqAdd(flowSeq, -gap), len: gap, detectedUs: nowUs, firstNackUs: 0, lastNackUs: 0, retries: 0 });
    s.tracked += gap;
    this.st.missing += gap;
    return false;
  }

  /** A seq `back` behind the highest arrived: clear it from its run, if tracked. */
  private onLate(s: StreamNackState, seq: number, back: number, nowUs: number, recovered: boolean, sentByUs: number | undefined): void {
    const runs = s.runs;
    // Runs are oldest first, so the distance behind `highest` of a run's newest seq decreases along the array:
    // find the first run whose newest seq is not older than `seq`.
    let lo = 0;
    let hi = runs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const r = runs[mid];
      if (seqDiff(seqAdd(r.start, r.len - 1), s.highest) > back) lo = mid + 1;
      else hi = mid;
    }
    const r = lo < runs.length ? runs[lo] : undefined;
    const k = r ? seqDiff(r.start, seq) : -1;
    if (!r || k < 0 || k >= r.len) {
      this.onDuplicate(s, seq, nowUs, recovered, sentByUs);
      return;
    }
    if (r.len === 1) runs.splice(lo, 1);
    else if (k === 0) {
      r.start = seqAdd(r.start, 1);
      r.len--;
    } else if (k === r.len - 1) r.len--;
    else {
      runs.splice(lo + 1, 0, { start: seqAdd(seq, 1), len: r.len - k - 1, detectedUs: r.detectedUs, firstNackUs: r.firstNackUs, lastNackUs: r.lastNackUs, retries: r.retries });
      r.len = k;
    }
    s.tracked--;
    if (r.retries === 0) this.st.reordered++;
    else this.st.recovered++;
    // Karn: after a NACK only a packet sent before it (or back too soon for a retransmission) is known to be the original.
    const afterNackOriginal = sentByUs !== undefined && Number.isFinite(sentByUs) ? sentByUs < r.firstNackUs : nowUs - r.firstNackUs < (this.pollRttMs * 1000) / 2;
    const original = !recovered && (r.retries === 0 || afterNackOriginal);
    if (original) this.reorderSample((nowUs - r.detectedUs) / 1000, nowUs);
    else if (r.retries > 0) {
      if (s.answered.size >= ANSWERED_MAX) s.answered.delete(s.answered.keys().next().value as number);
      s.answered.set(seq, { detectedUs: r.detectedUs, firstNackUs: r.firstNackUs });
    }
  }

  /** A seq no longer tracked arrived again: if it was answered ambiguously and this is its original (sent before the NACK), it is a reordering sample. */
  private onDuplicate(s: StreamNackState, seq: number, nowUs: number, recovered: boolean, sentByUs: number | undefined): void {
    if (s.answered.size === 0) return;
    const a = s.answered.get(seq);
    if (a === undefined || recovered || sentByUs === undefined || !Number.isFinite(sentByUs) || sentByUs >= a.firstNackUs) return;
    s.answered.delete(seq);
    this.st.lateOriginals++;
    this.reorderSample((nowUs - a.detectedUs) / 1000, nowUs);
  }

  private clear(s: StreamNackState): void {
    this.st.capped += s.tracked;
    s.answered.clear();
    s.runs.length = 0;
    s.tracked = 0;
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
    this.pollRttMs = rtt;
    for (const [streamId, s] of this.streams) {
      if (s.runs.length === 0) continue;
      let cur: number[] | undefined;
      let keep = 0;
      for (const r of s.runs) {
        let drop = false;
        let send = false;
        if (nowUs - r.detectedUs > this.maxAgeUs) {
          this.st.expired += r.len;
          drop = true;
        } else if (r.retries === 0) {
          if (nowUs - r.detectedUs >= waitUs) {
            this.st.firstNacks += r.len;
            send = true;
          }
        } else if (nowUs - r.lastNackUs >= retryUs) {
          if (r.retries >= this.maxRetries) {
            this.st.exhausted += r.len;
            drop = true;
          } else {
            this.st.retries += r.len;
            send = true;
          }
        }
        if (drop) {
          s.tracked -= r.len;
          continue;
        }
        s.runs[keep++] = r;
        if (!send) continue;
        if (r.retries === 0) r.firstNackUs = nowUs;
        r.retries++;
        r.lastNackUs = nowUs;
        this.st.nacked += r.len;
        let seq = r.start;
        for (let i = 0; i < r.len; i++) {
          if (cur === undefined || cur.length >= this.maxPerNack) {
            cur = [];
            out.push({ streamId, flowSeqs: cur });
          }
          cur.push(seq);
          seq = seq + 1 === 0x1_0000_0000 ? 0 : seq + 1;
        }
      }
      s.runs.length = keep;
    }
    return out;
  }

  /** Missing seqs tracked for `streamId` (all streams when omitted). */
  trackedCount(streamId?: number): number {
    if (streamId !== undefined) return this.streams.get(streamId)?.tracked ?? 0;
    let n = 0;
    for (const s of this.streams.values()) n += s.tracked;
    return n;
  }

  /** Counters (a copy). */
  stats(): NackGeneratorStats {
    return { ...this.st, tracked: this.trackedCount(), reorderWindowMs: this.reorderWindowMs() };
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
