/**
 * Decoded shapes of the wire messages in `multipath.proto`. All integers are
 * plain JS numbers (uint64 timestamps are converted; µs fit in 2^53).
 */
import type { NalClass, PathId, PathReport, Priority, QoeFeedback } from '../core/types.js';

export interface MediaMessage {
  streamId: number;
  flowSeq: number;
  frameId: number;
  fragIndex: number;
  fragCount: number;
  keyFrame: boolean;
  nalClass: NalClass;
  priority: Priority;
  /** Frame capture time on the sender clock (µs). */
  captureUs: number;
  retransmission: boolean;
  payload: Uint8Array;
}

export interface FecMessage {
  streamId: number;
  /** flow_seq of bit 0 of `mask`. */
  baseSeq: number;
  /** Bitmask over base_seq + i, little-endian bit order, at most 8 bytes. */
  mask: Uint8Array;
  /** XOR of the protected encoded-Media lengths. */
  lengthXor: number;
  /** XOR of the protected encoded-Media messages, zero-padded to the longest. */
  parity: Uint8Array;
  protectsPath: PathId;
  fecSeq: number;
}

export interface KeyframeRequestMessage {
  streamId: number;
  requestId: number;
}

export interface NackMessage {
  streamId: number;
  flowSeqs: number[];
}

export interface StreamInfoMessage {
  streamId: number;
  codec: string;
  width: number;
  height: number;
  /** Frames per second (IFD_exp = 1000 / fps ms). */
  fps: number;
}

export interface PaddingMessage {
  size: number;
}

/** Body of a packet, tagged by kind. */
export type PacketBody =
  | { kind: 'media'; media: MediaMessage }
  | { kind: 'fec'; fec: FecMessage }
  | { kind: 'report'; report: PathReport }
  | { kind: 'keyframeRequest'; keyframeRequest: KeyframeRequestMessage }
  | { kind: 'nack'; nack: NackMessage }
  | { kind: 'qoe'; qoe: QoeFeedback }
  | { kind: 'streamInfo'; streamInfo: StreamInfoMessage }
  | { kind: 'padding'; padding: PaddingMessage };

export type PacketKind = PacketBody['kind'];

/** Envelope fields stamped per path at send time. */
export interface PacketHeader {
  pathId: PathId;
  /** Per-path sequence number (media, fec and padding only; 0 for control). */
  pathSeq: number;
  /** Sender clock at send (µs). */
  sendTimeUs: number;
}

export interface DecodedPacket extends PacketHeader {
  body: PacketBody;
}

/** Why a packet was dropped by the decoder (counted, never thrown to the app). */
export type WireErrorReason =
  | 'empty'
  | 'too-large'
  | 'malformed'
  | 'no-body'
  | 'bad-field';
