/**
 * Receiver side of the XOR FEC of src/fec/xor.ts (RFC 5109 §8 / RFC 8627 §6
 * recovery, our own layout): keeps recent media bodies and pending FEC packets
 * per stream, rebuilds a media packet when an FEC packet has exactly one
 * protected packet missing, and iterates (a rebuilt packet may complete
 * another FEC packet). Rebuilt packets are stored as media too.
 *
 * Lying input (mask pointing nowhere or far away, lengths that do not fit the
 * parity, absurd parity sizes, duplicates, random bytes) is counted in
 * {@link FecDecoderStats.dropped} and dropped; nothing here throws on data.
 * A forged FEC packet whose lengths and padding are self-consistent cannot be
 * told apart from a real one by XOR alone: pass `validate` (e.g. "decodes as a
 * `Media` message with this stream id and flow_seq") to close that gap.
 *
 * Memory: per stream at most `maxMediaPackets` bodies and `maxFecPackets`
 * pending FEC packets (oldest evicted first, counted), at most `maxStreams`
 * streams (least recently used evicted, counted); all streams together hold at
 * most `maxBytes` (oldest entries of the largest stream evicted first), and
 * entries older than `maxAgeMs` of receiver time are dropped when a time is
 * passed. A body or parity that is a small view of a much larger buffer (the
 * whole datagram, a socket slab) is copied so an entry never pins more than
 * itself.
 */
import { MAX_PATHS } from '../core/types.js';
import { seqAdd, seqDiff } from '../core/seq.js';
import type { FecMessage } from '../wire/types.js';
import { numOption } from './errors.js';
import type { FecDecoderStats, FecDropStats, FecPathStats, RecoveredPacket } from './types.js';
import { type PathCounters, type PendingFec, type StreamState, isSameFec, isU32, newStreamState, unpinned, zeroFecDropStats } from './decoder-state.js';
import { FEC_MAX_MASK_BITS, maskOffsets, xorInto } from './xor.js';

export interface FecDecoderOptions {
  /** Media bodies kept per stream (default 2048). */
  maxMediaPackets?: number;
  /** Pending FEC packets kept per stream (default 512). */
  maxFecPackets?: number;
  /**
   * Sequence horizon (default 1024): media older than newest - maxAgeSeqs is
   * neither stored nor used, FEC packets whose mask lies entirely outside
   * [newest - maxAgeSeqs, newest + maxAgeSeqs] are dropped as far away.
   */
  maxAgeSeqs?: number;
  /** Streams tracked at once (default 16). */
  maxStreams?: number;
  /** Largest parity accepted, bytes (default 65536). */
  maxParityBytes?: number;
  /** Bytes all streams may hold in media bodies and pending parities (default 8 MiB: ~1.3 s of 4K video at 50 Mbps). */
  maxBytes?: number;
  /** Entries older than this (receiver clock, when `nowUs` is passed) are dropped (ms, default 1000; 0 disables). */
  maxAgeMs?: number;
  /** Optional check of a rebuilt body before it is returned; `false` rejects it (counted). */
  validate?: (streamId: number, flowSeq: number, body: Uint8Array) => boolean;
}

const EMPTY: RecoveredPacket[] = [];

/** Estimated heap cost of one stored entry besides its bytes (object, map slot), bytes. */
export const FEC_ENTRY_OVERHEAD_BYTES = 96;
/** Default {@link FecDecoderOptions.maxBytes}: 8 MiB. */
export const DEFAULT_FEC_DECODER_BYTES = 8 * 1024 * 1024;
/**
 * XOR FEC decoder. Feed every received media body (`addMedia`) and FEC packet
 * (`addFec`) of every path; both return the packets rebuilt by that call, in
 * the order they were rebuilt (hand them to the depacketizer as if received).
 */
export class FecDecoder {
  private readonly maxMedia: number;
  private readonly maxFec: number;
  private readonly maxAge: number;
  private readonly maxStreams: number;
  private readonly maxParity: number;
  private readonly maxBytes: number;
  private readonly maxAgeUs: number;
  private totalBytes = 0;
  private copied = 0;
  private readonly validate: FecDecoderOptions['validate'];
  private readonly streams = new Map<number, StreamState>();
  private readonly paths: PathCounters[] = [];
  private readonly drops: FecDropStats = zeroFecDropStats();
  private fecReceived = 0;
  private fecUsed = 0;
  private fecDiscarded = 0;
  private recovered = 0;
  private useClock = 0;
  private readonly offs = new Uint8Array(FEC_MAX_MASK_BITS);

  /** @throws FecError on out-of-range options. */
  constructor(opts: FecDecoderOptions = {}) {
    this.maxMedia = numOption('maxMediaPackets', opts.maxMediaPackets, 2048, 2, 1 << 20, true);
    this.maxFec = numOption('maxFecPackets', opts.maxFecPackets, 512, 1, 1 << 18, true);
    this.maxAge = numOption('maxAgeSeqs', opts.maxAgeSeqs, 1024, FEC_MAX_MASK_BITS, 1 << 30, true);
    this.maxStreams = numOption('maxStreams', opts.maxStreams, 16, 1, 4096, true);
    this.maxParity = numOption('maxParityBytes', opts.maxParityBytes, 65536, 1, 1 << 24, true);
    this.maxBytes = numOption('maxBytes', opts.maxBytes, DEFAULT_FEC_DECODER_BYTES, 1024, 2 ** 40, true);
    this.maxAgeUs = numOption('maxAgeMs', opts.maxAgeMs, 1000, 0, 3_600_000, false) * 1000;
    this.validate = opts.validate;
    for (let p = 0; p < MAX_PATHS; p++) this.paths.push({ fecReceived: 0, fecUsed: 0, fecDiscarded: 0, recovered: 0 });
  }

  /**
   * A media packet (encoded `Media` bytes) arrived. The body is kept by
   * reference (do not mutate it afterwards) unless it views a much larger
   * buffer, then it is copied.
   * @param nowUs receiver clock (µs); when given, entries older than
   *   `maxAgeMs` are dropped first.
   * @returns packets rebuilt thanks to it (usually none).
   */
  addMedia(streamId: number, flowSeq: number, body: Uint8Array, nowUs?: number): RecoveredPacket[] {
    if (!isU32(streamId) || !isU32(flowSeq) || !(body instanceof Uint8Array)) {
      this.drops.malformedMedia++;
      return EMPTY;
    }
    const st = this.stream(streamId);
    const now = this.age(st, nowUs);
    if (st.media.has(flowSeq)) {
      this.drops.duplicateMedia++;
      return EMPTY;
    }
    if (st.hasNewest && seqDiff(flowSeq, st.newest) > this.maxAge) {
      this.drops.staleMedia++;
      return EMPTY;
    }
    this.storeMedia(st, flowSeq, body, now);
    return this.propagate(st, flowSeq, EMPTY, now);
  }

  /** Drop entries of `st` older than maxAgeMs before `nowUs`; returns the time to stamp new entries with. */
  private age(st: StreamState, nowUs: number | undefined): number {
    if (nowUs === undefined || !Number.isFinite(nowUs)) return 0;
    if (this.maxAgeUs <= 0) return nowUs;
    const limit = nowUs - this.maxAgeUs;
    for (;;) {
      const first = st.media.entries().next();
      if (first.done || first.value[1].atUs >= limit) break;
      this.dropMedia(st, first.value[0]);
      this.drops.expiredByTime++;
    }
    for (;;) {
      const first = st.fecs.values().next();
      if (first.done || first.value.atUs >= limit) break;
      this.removeFec(st, first.value);
      this.drops.expiredByTime++;
    }
    return nowUs;
  }

  /** Evict the oldest entries of the largest stream until under the byte budget. */
  private enforceBudget(): void {
    while (this.totalBytes > this.maxBytes) {
      let big: StreamState | undefined;
      for (const s of this.streams.values()) if (big === undefined || s.bytes > big.bytes) big = s;
      if (big === undefined || big.bytes <= 0) break;
      const m = big.media.entries().next();
      const f = big.fecs.values().next();
      // Evict whichever of the two oldest entries arrived first.
      if (!f.done && (m.done || f.value.atUs <= m.value[1].atUs)) this.removeFec(big, f.value);
      else if (!m.done) this.dropMedia(big, m.value[0]);
      else break;
      this.drops.evictedBudget++;
    }
  }

  /**
   * An FEC packet arrived (any path).
   * @param nowUs receiver clock (µs); when given, entries older than `maxAgeMs` are dropped first.
   * @returns packets rebuilt thanks to it, with `protectsPath` of this FEC (or of a chained one).
   */
  addFec(fec: FecMessage, nowUs?: number): RecoveredPacket[] {
    this.fecReceived++;
    if (
      fec === null ||
      typeof fec !== 'object' ||
      !isU32(fec.streamId) ||
      !isU32(fec.baseSeq) ||
      !isU32(fec.lengthXor) ||
      !isU32(fec.fecSeq) ||
      !Number.isInteger(fec.protectsPath) ||
      fec.protectsPath < 0 ||
      fec.protectsPath >= MAX_PATHS ||
      !(fec.mask instanceof Uint8Array) ||
      fec.mask.length === 0 ||
      fec.mask.length > FEC_MAX_MASK_BITS >>> 3
    ) {
      this.drops.malformedFec++;
      return EMPTY;
    }
    if (!(fec.parity instanceof Uint8Array) || fec.parity.length === 0 || fec.parity.length > this.maxParity) {
      this.drops.absurdParity++;
      return EMPTY;
    }
    const offs = this.offs;
    const count = maskOffsets(fec.mask, offs);
    if (count === 0) {
      this.drops.malformedFec++;
      return EMPTY;
    }
    const st = this.stream(fec.streamId);
    const now = this.age(st, nowUs);
    const base = fec.baseSeq;
    const lastSeq = seqAdd(base, offs[count - 1]);
    if (st.hasNewest) {
      const ahead = seqDiff(st.newest, base); // > 0: base newer than newest
      if (ahead > this.maxAge || seqDiff(lastSeq, st.newest) > this.maxAge) {
        this.drops.farAwayFec++;
        return EMPTY;
      }
    }
    const seen = st.seenFec.get(fec.fecSeq);
    if (isSameFec(seen, base, fec.lengthXor, fec.parity.length)) {
      this.drops.duplicateFec++;
      return EMPTY;
    }
    let missing = 0;
    for (let i = 0; i < count; i++) {
      const body = st.media.get(seqAdd(base, offs[i]))?.body;
      if (body === undefined) missing++;
      else if (body.length > fec.parity.length) {
        this.drops.inconsistentFec++;
        return EMPTY;
      }
    }
    st.seenFec.delete(fec.fecSeq); // re-insert as newest
    st.seenFec.set(fec.fecSeq, { baseSeq: base, lengthXor: fec.lengthXor, parityLen: fec.parity.length });
    if (st.seenFec.size > this.maxFec * 2) st.seenFec.delete(st.seenFec.keys().next().value as number);

    const path = this.paths[fec.protectsPath];
    path.fecReceived++;
    if (missing === 0) {
      path.fecDiscarded++;
      this.fecDiscarded++;
      return EMPTY;
    }
    const entry: PendingFec = {
      baseSeq: base,
      offsets: offs.slice(0, count),
      missing,
      lengthXor: fec.lengthXor,
      parity: fec.parity,
      protectsPath: fec.protectsPath,
      lastSeq,
      fecSeq: fec.fecSeq,
      alive: true,
      atUs: now,
    };
    if (missing === 1) {
      const rec = this.recover(st, entry, now);
      if (rec === null) return EMPTY;
      return this.propagate(st, rec.flowSeq, [rec], now);
    }
    entry.parity = this.keep(fec.parity);
    st.fecs.add(entry);
    this.account(st, entry.parity.length + FEC_ENTRY_OVERHEAD_BYTES);
    for (let i = 0; i < count; i++) {
      const s = seqAdd(base, entry.offsets[i]);
      if (st.media.has(s)) continue;
      const list = st.waiting.get(s);
      if (list === undefined) st.waiting.set(s, [entry]);
      else list.push(entry);
    }
    while (st.fecs.size > this.maxFec) {
      const oldest = st.fecs.values().next().value as PendingFec;
      this.removeFec(st, oldest);
      this.drops.evictedFec++;
    }
    this.enforceBudget();
    return EMPTY;
  }

  private keep(b: Uint8Array): Uint8Array {
    const k = unpinned(b);
    if (k !== b) this.copied++;
    return k;
  }

  private account(st: StreamState, delta: number): void {
    st.bytes += delta;
    this.totalBytes += delta;
  }

  /** Counters since creation plus current memory use (a fresh object each call). */
  stats(): FecDecoderStats {
    const perPath: FecPathStats[] = [];
    this.paths.forEach((p, pathId) => {
      if (p.fecReceived > 0) perPath.push({ pathId, ...p });
    });
    let storedMedia = 0;
    let pendingFec = 0;
    for (const st of this.streams.values()) {
      storedMedia += st.media.size;
      pendingFec += st.fecs.size;
    }
    return {
      fecReceived: this.fecReceived,
      fecUsed: this.fecUsed,
      fecDiscarded: this.fecDiscarded,
      recovered: this.recovered,
      perPath,
      dropped: { ...this.drops },
      storedMedia,
      pendingFec,
      storedBytes: this.totalBytes,
      copied: this.copied,
    };
  }

  private stream(id: number): StreamState {
    let st = this.streams.get(id);
    if (st === undefined) {
      if (this.streams.size >= this.maxStreams) {
        let victim: StreamState | undefined;
        for (const s of this.streams.values()) if (victim === undefined || s.lastUse < victim.lastUse) victim = s;
        if (victim !== undefined) {
          this.streams.delete(victim.id);
          this.totalBytes -= victim.bytes;
          this.drops.evictedStreams++;
        }
      }
      st = newStreamState(id);
      this.streams.set(id, st);
    }
    st.lastUse = ++this.useClock;
    return st;
  }

  private storeMedia(st: StreamState, seq: number, raw: Uint8Array, now: number): void {
    const body = this.keep(raw);
    st.media.set(seq, { body, atUs: now });
    this.account(st, body.length + FEC_ENTRY_OVERHEAD_BYTES);
    if (!st.hasNewest || seqDiff(st.newest, seq) > 0) {
      st.newest = seq;
      st.hasNewest = true;
    }
    // Bound and age: evict oldest-inserted first.
    while (st.media.size > this.maxMedia) this.evictMedia(st, st.media.keys().next().value as number);
    for (;;) {
      const first = st.media.keys().next();
      if (first.done || first.value === seq || seqDiff(first.value, st.newest) <= this.maxAge) break;
      this.evictMedia(st, first.value);
    }
    for (;;) {
      const first = st.fecs.values().next();
      if (first.done || seqDiff(first.value.lastSeq, st.newest) <= this.maxAge) break;
      this.removeFec(st, first.value);
      this.drops.expiredFec++;
    }
    this.enforceBudget();
  }

  private evictMedia(st: StreamState, seq: number): void {
    this.dropMedia(st, seq);
    this.drops.evictedMedia++;
  }

  private dropMedia(st: StreamState, seq: number): void {
    const e = st.media.get(seq);
    if (e === undefined) return;
    st.media.delete(seq);
    this.account(st, -(e.body.length + FEC_ENTRY_OVERHEAD_BYTES));
    // Pending FEC packets never wait on a stored seq, but they may need its body:
    // they fail (counted as expired) when they try to recover without it.
  }

  /** Decrement FEC packets waiting for `seq` and recover what became possible, iteratively. */
  private propagate(st: StreamState, seq: number, out: RecoveredPacket[], now: number): RecoveredPacket[] {
    let result = out;
    const stack: number[] = [seq];
    while (stack.length > 0) {
      const s = stack.pop() as number;
      const list = st.waiting.get(s);
      if (list === undefined) continue;
      st.waiting.delete(s);
      for (const fec of list) {
        if (!fec.alive) continue;
        fec.missing--;
        if (fec.missing <= 0) {
          // Everything arrived: this FEC packet was not needed after all.
          this.removeFec(st, fec);
        } else if (fec.missing === 1) {
          this.removeFec(st, fec);
          const rec = this.recover(st, fec, now);
          if (rec !== null) {
            if (result === EMPTY) result = [];
            result.push(rec);
            stack.push(rec.flowSeq);
          }
        }
      }
    }
    return result;
  }

  /** Rebuild the single missing packet of `fec` (which must not be in `st.fecs`). */
  private recover(st: StreamState, fec: PendingFec, now: number): RecoveredPacket | null {
    const parityLen = fec.parity.length;
    let missingSeq = -1;
    for (let i = 0; i < fec.offsets.length; i++) {
      const s = seqAdd(fec.baseSeq, fec.offsets[i]);
      if (!st.media.has(s)) {
        if (missingSeq >= 0) {
          // A body counted as present was evicted meanwhile.
          this.drops.expiredFec++;
          return null;
        }
        missingSeq = s;
      }
    }
    if (missingSeq < 0) return null;
    const buf = fec.parity.slice();
    let len = fec.lengthXor;
    for (let i = 0; i < fec.offsets.length; i++) {
      const s = seqAdd(fec.baseSeq, fec.offsets[i]);
      if (s === missingSeq) continue;
      const body = st.media.get(s)?.body;
      if (body === undefined) {
        this.drops.expiredFec++;
        return null;
      }
      if (body.length > parityLen) {
        this.drops.inconsistentFec++;
        return null;
      }
      xorInto(buf, body);
      len = (len ^ body.length) >>> 0;
    }
    if (len === 0 || len > parityLen) return this.reject(st, fec);
    for (let i = len; i < parityLen; i++) if (buf[i] !== 0) return this.reject(st, fec);
    const body = len === parityLen ? buf : buf.subarray(0, len);
    if (this.validate !== undefined) {
      let ok = false;
      try {
        ok = this.validate(st.id, missingSeq, body) === true;
      } catch {
        ok = false;
      }
      if (!ok) return this.reject(st, fec);
    }
    const path = this.paths[fec.protectsPath];
    path.fecUsed++;
    path.recovered++;
    this.fecUsed++;
    this.recovered++;
    this.storeMedia(st, missingSeq, body, now);
    return { streamId: st.id, flowSeq: missingSeq, body, protectsPath: fec.protectsPath };
  }

  /** A rebuilt body was refused: count it and forget the FEC packet, so an honest copy with the same fec_seq is not taken for a duplicate. */
  private reject(st: StreamState, fec: PendingFec): null {
    this.drops.recoveryRejected++;
    const seen = st.seenFec.get(fec.fecSeq);
    if (isSameFec(seen, fec.baseSeq, fec.lengthXor, fec.parity.length)) {
      st.seenFec.delete(fec.fecSeq);
    }
    return null;
  }

  private removeFec(st: StreamState, fec: PendingFec): void {
    if (!fec.alive) return;
    fec.alive = false;
    if (st.fecs.delete(fec)) this.account(st, -(fec.parity.length + FEC_ENTRY_OVERHEAD_BYTES));
    // Entries left in `waiting` are skipped (alive = false); drop emptied lists now.
    for (let i = 0; i < fec.offsets.length; i++) {
      const s = seqAdd(fec.baseSeq, fec.offsets[i]);
      const list = st.waiting.get(s);
      if (list === undefined) continue;
      const j = list.indexOf(fec);
      if (j >= 0) {
        list[j] = list[list.length - 1];
        list.pop();
      }
      if (list.length === 0) st.waiting.delete(s);
    }
  }
}
