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
 * streams (least recently used evicted, counted).
 */
import { MAX_PATHS } from '../core/types.js';
import { seqAdd, seqDiff } from '../core/seq.js';
import type { FecMessage } from '../wire/types.js';
import { numOption } from './errors.js';
import type { FecDecoderStats, FecDropStats, FecPathStats, RecoveredPacket } from './types.js';
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
  /** Optional check of a rebuilt body before it is returned; `false` rejects it (counted). */
  validate?: (streamId: number, flowSeq: number, body: Uint8Array) => boolean;
}

interface PendingFec {
  baseSeq: number;
  offsets: Uint8Array;
  missing: number;
  lengthXor: number;
  parity: Uint8Array;
  protectsPath: number;
  /** Highest protected seq (for age expiry). */
  lastSeq: number;
  fecSeq: number;
  alive: boolean;
}

/** What identifies a duplicate: same fec_seq, base, length XOR and parity size. */
interface SeenFec {
  baseSeq: number;
  lengthXor: number;
  parityLen: number;
}

interface StreamState {
  id: number;
  media: Map<number, Uint8Array>;
  /** Insertion-ordered pending FEC packets. */
  fecs: Set<PendingFec>;
  /** Missing seq -> pending FEC packets waiting for it. */
  waiting: Map<number, PendingFec[]>;
  /** fecSeq -> identity of recently seen FEC packets (dedup), insertion ordered. */
  seenFec: Map<number, SeenFec>;
  newest: number;
  hasNewest: boolean;
  lastUse: number;
}

interface PathCounters {
  fecReceived: number;
  fecUsed: number;
  fecDiscarded: number;
  recovered: number;
}

const EMPTY: RecoveredPacket[] = [];

function isU32(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffff_ffff;
}

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
  private readonly validate: FecDecoderOptions['validate'];
  private readonly streams = new Map<number, StreamState>();
  private readonly paths: PathCounters[] = [];
  private readonly drops: FecDropStats = {
    malformedFec: 0,
    absurdParity: 0,
    farAwayFec: 0,
    duplicateFec: 0,
    inconsistentFec: 0,
    recoveryRejected: 0,
    expiredFec: 0,
    evictedFec: 0,
    evictedMedia: 0,
    malformedMedia: 0,
    staleMedia: 0,
    duplicateMedia: 0,
    evictedStreams: 0,
  };
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
    this.validate = opts.validate;
    for (let p = 0; p < MAX_PATHS; p++) this.paths.push({ fecReceived: 0, fecUsed: 0, fecDiscarded: 0, recovered: 0 });
  }

  /**
   * A media packet (encoded `Media` bytes) arrived. The body is kept by
   * reference (do not mutate it afterwards).
   * @returns packets rebuilt thanks to it (usually none).
   */
  addMedia(streamId: number, flowSeq: number, body: Uint8Array): RecoveredPacket[] {
    if (!isU32(streamId) || !isU32(flowSeq) || !(body instanceof Uint8Array)) {
      this.drops.malformedMedia++;
      return EMPTY;
    }
    const st = this.stream(streamId);
    if (st.media.has(flowSeq)) {
      this.drops.duplicateMedia++;
      return EMPTY;
    }
    if (st.hasNewest && seqDiff(flowSeq, st.newest) > this.maxAge) {
      this.drops.staleMedia++;
      return EMPTY;
    }
    this.storeMedia(st, flowSeq, body);
    return this.propagate(st, flowSeq, EMPTY);
  }

  /**
   * An FEC packet arrived (any path).
   * @returns packets rebuilt thanks to it, with `protectsPath` of this FEC (or of a chained one).
   */
  addFec(fec: FecMessage): RecoveredPacket[] {
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
    if (seen !== undefined && seen.baseSeq === base && seen.lengthXor === fec.lengthXor && seen.parityLen === fec.parity.length) {
      this.drops.duplicateFec++;
      return EMPTY;
    }
    let missing = 0;
    for (let i = 0; i < count; i++) {
      const body = st.media.get(seqAdd(base, offs[i]));
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
    };
    if (missing === 1) {
      const rec = this.recover(st, entry);
      if (rec === null) return EMPTY;
      return this.propagate(st, rec.flowSeq, [rec]);
    }
    st.fecs.add(entry);
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
    return EMPTY;
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
          this.drops.evictedStreams++;
        }
      }
      st = { id, media: new Map(), fecs: new Set(), waiting: new Map(), seenFec: new Map(), newest: 0, hasNewest: false, lastUse: 0 };
      this.streams.set(id, st);
    }
    st.lastUse = ++this.useClock;
    return st;
  }

  private storeMedia(st: StreamState, seq: number, body: Uint8Array): void {
    st.media.set(seq, body);
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
  }

  private evictMedia(st: StreamState, seq: number): void {
    st.media.delete(seq);
    this.drops.evictedMedia++;
    // Pending FEC packets never wait on a stored seq, but they may need its body:
    // they fail (counted as expired) when they try to recover without it.
  }

  /** Decrement FEC packets waiting for `seq` and recover what became possible, iteratively. */
  private propagate(st: StreamState, seq: number, out: RecoveredPacket[]): RecoveredPacket[] {
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
          const rec = this.recover(st, fec);
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
  private recover(st: StreamState, fec: PendingFec): RecoveredPacket | null {
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
      const body = st.media.get(s);
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
    this.storeMedia(st, missingSeq, body);
    return { streamId: st.id, flowSeq: missingSeq, body, protectsPath: fec.protectsPath };
  }

  /** A rebuilt body was refused: count it and forget the FEC packet, so an honest copy with the same fec_seq is not taken for a duplicate. */
  private reject(st: StreamState, fec: PendingFec): null {
    this.drops.recoveryRejected++;
    const seen = st.seenFec.get(fec.fecSeq);
    if (seen !== undefined && seen.baseSeq === fec.baseSeq && seen.lengthXor === fec.lengthXor && seen.parityLen === fec.parity.length) {
      st.seenFec.delete(fec.fecSeq);
    }
    return null;
  }

  private removeFec(st: StreamState, fec: PendingFec): void {
    if (!fec.alive) return;
    fec.alive = false;
    st.fecs.delete(fec);
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
