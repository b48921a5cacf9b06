/**
 * What the {@link import('./decoder.js').FecDecoder} keeps per stream: media
 * bodies by flow_seq, the FEC packets still waiting for all but one of their
 * protected packets (libwebrtc's ReceivedFecPacket), and the identities of
 * recently seen FEC packets for deduplication.
 */
import type { FecDropStats } from './types.js';

/** A received FEC packet still missing two or more of the packets it protects. */
export interface PendingFec {
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
  /** Arrival (µs). */
  atUs: number;
}

/** A stored media body. */
export interface MediaEntry {
  body: Uint8Array;
  /** Arrival (µs). */
  atUs: number;
}

/** A buffer larger than its view by more than this is copied before it is kept (bytes). */
const PIN_SLACK_BYTES = 1024;

/** `b`, or a copy of it when it views a buffer much larger than itself. */
export function unpinned(b: Uint8Array): Uint8Array {
  return b.buffer.byteLength > b.byteLength + PIN_SLACK_BYTES ? b.slice() : b;
}

/** What identifies a duplicate: same fec_seq, base, length XOR and parity size. */
export interface SeenFec {
  baseSeq: number;
  lengthXor: number;
  parityLen: number;
}

/** One stream's bodies and FEC packets. */
export interface StreamState {
  id: number;
  /** seq -> body; insertion order = arrival order (age eviction reads the front). */
  media: Map<number, MediaEntry>;
  /** Estimated bytes held (bodies + parities + overhead). */
  bytes: number;
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

/** FEC counters of the path an FEC packet protects. */
export interface PathCounters {
  fecReceived: number;
  fecUsed: number;
  fecDiscarded: number;
  recovered: number;
}

/** A uint32 number. */
export function isU32(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffff_ffff;
}

/** An empty stream state for stream `id`. */
export function newStreamState(id: number): StreamState {
  return { id, media: new Map(), bytes: 0, fecs: new Set(), waiting: new Map(), seenFec: new Map(), newest: 0, hasNewest: false, lastUse: 0 };
}

/** `seen` is the FEC packet with this base, length XOR and parity size (a duplicate, or the one a rejected recovery came from). */
export function isSameFec(seen: SeenFec | undefined, baseSeq: number, lengthXor: number, parityLen: number): boolean {
  return seen !== undefined && seen.baseSeq === baseSeq && seen.lengthXor === lengthXor && seen.parityLen === parityLen;
}

/** Every {@link FecDropStats} counter at 0 (a fresh decoder's, and the start of a sum). */
export function zeroFecDropStats(): FecDropStats {
  return {
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
    evictedBudget: 0,
    expiredByTime: 0,
  };
}
