/**
 * FEC rate policies (how many FEC packets to add) are separate from the XOR
 * code itself (which packets each FEC packet protects).
 */
import type { PathId } from '../core/types.js';
import type { BuiltinFecPolicyName } from '../strategies.js';

/**
 * An FEC policy's registry name (src/fec/factory.ts): one the library ships
 * (src/strategies.ts; all but 'path' and 'none' registered on demand) or
 * one an app added with `registerFecPolicy`.
 */
export type FecPolicyName = BuiltinFecPolicyName | (string & {});

/** What a policy sees when a frame's packets were scheduled on a path. */
export interface FecContext {
  pathId: PathId;
  /** Media packets of this frame just scheduled on this path (P_i of the frame). */
  mediaCount: number;
  isKeyframe: boolean;
  /** Path loss fraction 0..1 (l_i). */
  lossRate: number;
  rttMs: number;
  /** Path target rate (bps). */
  rateBps: number;
  /** Current encoder frame rate (fps). */
  fps: number;
  /** Bytes of this frame on this path. */
  frameBytes: number;
}

export interface FecPolicy {
  /** Its registry name (`FecPolicyName`). */
  readonly name: string;
  /** Number of FEC packets to add for these media packets (>= 0, integer). */
  fecCount(ctx: FecContext, nowUs: number): number;
  /** NACKs the receiver sent for packets that went on `pathId`. */
  onNack(pathId: PathId, count: number, nowUs: number): void;
  /** Mask kind for this protection (random for spread loss, bursty for bursts). */
  maskKind?(ctx: FecContext): 'random' | 'bursty';
}

/** A media packet (its encoded `Media` message bytes) rebuilt by FEC. */
export interface RecoveredPacket {
  streamId: number;
  flowSeq: number;
  /** Encoded `Media` message bytes, exactly as the sender produced them. */
  body: Uint8Array;
  /** Path the FEC packet that rebuilt it was protecting. */
  protectsPath: number;
}

/**
 * Mask layout of {@link makeFecPackets} (see src/fec/xor.ts):
 * - `'random'`: consecutive blocks (RFC 8627 §1.1.2 "row" FEC): FEC f protects
 *   the f-th run of consecutive packets. Fits independent (Bernoulli) loss.
 * - `'bursty'`: interleaved (RFC 8627 §1.1.3 "column" FEC): packet j is
 *   protected by FEC j mod count, so any burst of up to `count` consecutive
 *   losses inside a group is recoverable.
 */
export type FecMaskKind = 'random' | 'bursty';

/** Counters of one path's FEC packets at the receiver (all counts since creation). */
export interface FecPathStats {
  pathId: number;
  /** Valid, non-duplicate FEC packets that protect this path. */
  fecReceived: number;
  /** FEC packets that rebuilt at least one packet (strict utilization = fecUsed / fecReceived). */
  fecUsed: number;
  /**
   * FEC packets that had nothing to do when they arrived (every protected
   * packet already present), as Chrome's `fecPacketsDiscarded`. Chrome-style
   * utilization = (fecReceived - fecDiscarded) / fecReceived.
   */
  fecDiscarded: number;
  /** Packets rebuilt by this path's FEC. */
  recovered: number;
}

/** Why the decoder dropped something (each a counter, never an exception). */
export interface FecDropStats {
  /** FEC with bad field types/ranges: empty/oversized mask, no bit set, bad path, bad stream. */
  malformedFec: number;
  /** Parity empty or larger than `maxParityBytes`. */
  absurdParity: number;
  /** Mask pointing far from the stream's newest media (> maxAgeSeqs away). */
  farAwayFec: number;
  /** Same (fecSeq, baseSeq, lengthXor, parity length) already seen (a rejected FEC packet is forgotten). */
  duplicateFec: number;
  /** A protected packet is longer than the parity: the FEC cannot be over that packet. */
  inconsistentFec: number;
  /** Rebuilt body rejected: length > parity, non-zero padding, empty, or refused by `validate`. */
  recoveryRejected: number;
  /** Pending FEC removed because a packet it needs was evicted or became too old. */
  expiredFec: number;
  /** Pending FEC evicted by the `maxFecPackets` bound. */
  evictedFec: number;
  /** Stored media evicted by the `maxMediaPackets` bound or by age. */
  evictedMedia: number;
  /** Media with bad stream id / seq / body type. */
  malformedMedia: number;
  /** Media older than newest - maxAgeSeqs (not stored). */
  staleMedia: number;
  /** Media already stored (received twice, or received after being rebuilt). */
  duplicateMedia: number;
  /** Whole stream states evicted by the `maxStreams` bound. */
  evictedStreams: number;
  /** Stored media or pending FEC evicted by the `maxBytes` budget. */
  evictedBudget: number;
  /** Stored media or pending FEC older than `maxAgeMs` (receiver clock). */
  expiredByTime: number;
}

/** Snapshot returned by `FecDecoder.stats()`. */
export interface FecDecoderStats {
  /** Every `addFec` call, valid or not. */
  fecReceived: number;
  /** FEC packets that rebuilt at least one packet. */
  fecUsed: number;
  /** Valid FEC packets that arrived with nothing missing (Chrome `fecPacketsDiscarded`). */
  fecDiscarded: number;
  /** Packets rebuilt. */
  recovered: number;
  /** Per path, only paths with at least one valid FEC packet. */
  perPath: FecPathStats[];
  dropped: FecDropStats;
  /** Current memory use. */
  storedMedia: number;
  pendingFec: number;
  /** Estimated bytes held by stored media bodies and pending parities (with per-entry overhead). */
  storedBytes: number;
  /** Bodies / parities copied because they were views into a much larger buffer. */
  copied: number;
}
