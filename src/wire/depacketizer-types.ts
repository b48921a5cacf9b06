/** Options, insert outcomes and counters of the {@link import('./depacketizer.js').Depacketizer}. */
import type { AssembledFrame } from './packetization.js';

export interface DepacketizerOptions {
  /** Total stored fragments across incomplete frames. Default 4096. */
  maxPackets?: number;
  /** Total incomplete frames. Default 256. */
  maxFrames?: number;
  /** Bytes of one frame. Default 4 MiB. */
  maxFrameBytes?: number;
  /** Stream states kept. Default 16. */
  maxStreams?: number;
  /** Completed frame ids remembered per stream (dedup after completion). Default 1024. */
  completedWindow?: number;
  /** Bytes all incomplete frames may hold together (payload + per-fragment overhead). Default 16 MiB. */
  maxBytes?: number;
  /** An incomplete frame whose first fragment arrived longer ago than this is evicted (ms). Default 3000; 0 disables. */
  maxAgeMs?: number;
}

export type InsertStatus = 'stored' | 'completed' | 'duplicate' | 'stale' | 'rejected';

export interface InsertResult {
  status: InsertStatus;
  /** The assembled frame, when status is 'completed'. */
  frame?: AssembledFrame;
  /** Why, for 'duplicate' / 'stale' / 'rejected'. */
  reason?: string;
  /** For 'duplicate': the frame had already been completed and emitted. */
  lateForCompletedFrame?: boolean;
}

/** Monotonic counters since construction. */
export interface DepacketizerStats {
  /** insert() calls. */
  packetsIn: number;
  /** Fragments stored into a frame (incl. the completing one). */
  packetsStored: number;
  /** Stored fragments that were FEC-recovered. */
  packetsRecovered: number;
  framesCompleted: number;
  duplicates: number;
  /** Subset of duplicates whose frame had already completed. */
  duplicatesAfterComplete: number;
  stale: number;
  rejected: number;
  /** Rejected: fields invalid (fragIndex >= fragCount, bad path, ...). */
  rejectedInvalid: number;
  /** Rejected: fragCount/keyFrame/captureUs disagree with the frame's first fragment. */
  rejectedConflict: number;
  /** Rejected: frame id too far ahead of the newest seen. */
  rejectedFarAhead: number;
  /** Rejected: the frame would exceed maxFrameBytes. */
  rejectedTooLarge: number;
  /** Incomplete frames evicted by the maxPackets / maxFrames / maxBytes bounds. */
  framesEvicted: number;
  /** Subset of framesEvicted evicted by the maxBytes budget. */
  framesEvictedBudget: number;
  /** Incomplete frames evicted for being older than maxAgeMs. */
  framesExpired: number;
  /** Payloads copied because they were views into a much larger buffer. */
  payloadsCopied: number;
  packetsEvicted: number;
  /** Incomplete frames discarded by dropBefore(). */
  framesDropped: number;
  packetsDropped: number;
  streamsEvicted: number;
  resyncs: number;
}

/** Every counter at zero. */
export function zeroDepacketizerStats(): DepacketizerStats {
  return {
    packetsIn: 0,
    packetsStored: 0,
    packetsRecovered: 0,
    framesCompleted: 0,
    duplicates: 0,
    duplicatesAfterComplete: 0,
    stale: 0,
    rejected: 0,
    rejectedInvalid: 0,
    rejectedConflict: 0,
    rejectedFarAhead: 0,
    rejectedTooLarge: 0,
    framesEvicted: 0,
    framesEvictedBudget: 0,
    framesExpired: 0,
    payloadsCopied: 0,
    packetsEvicted: 0,
    framesDropped: 0,
    packetsDropped: 0,
    streamsEvicted: 0,
    resyncs: 0,
  };
}
