/**
 * FEC rate policies (how many FEC packets to add) are separate from the XOR
 * code itself (which packets each FEC packet protects).
 */
import type { PathId } from '../core/types.js';

export type FecPolicyName = 'path' | 'webrtc-table' | 'none';

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
  readonly name: FecPolicyName;
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
