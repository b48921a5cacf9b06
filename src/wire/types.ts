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
  /**
   * Temporal layer id of the frame (0 = base layer; WebCodecs
   * `EncodedVideoChunkMetadata.svc.temporalLayerId`). Absent = 0.
   */
  temporalLayer?: number;
  /**
   * frameId distance to the one frame this delta frame references (1 = the
   * previous frame, the meaning when absent). With temporal layers a frame
   * references the last frame of a lower layer (the last base-layer frame for
   * a base-layer frame), so losing an upper-layer frame breaks no later
   * base-layer frame. In [1, {@link MAX_REF_DISTANCE}].
   */
  refDistance?: number;
}

/** Largest temporal layer id on the wire (AV1 allows 8 temporal layers). */
export const MAX_TEMPORAL_LAYER = 7;
/** Largest {@link MediaMessage.refDistance} on the wire (frames). */
export const MAX_REF_DISTANCE = 64;

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
  /** FEC code wire id (src/fec/codes.ts): absent or 0 = XOR parity (the fields above as documented); 1..255 another registered code. */
  code?: number;
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

/** Largest AppData payload (bytes): 16 KiB, the message size every browser's SCTP stack delivers whole. */
export const MAX_APP_DATA_BYTES = 16384;
/** Most gap blocks ([start, end) pairs) in one AppDataAck (SCTP SACK gap blocks, RFC 9260 §3.3.4). */
export const MAX_APP_DATA_ACK_RANGES = 16;

/** One application data message (multipath.proto `AppData`). */
export interface AppDataMessage {
  /** Per call and direction; reliable and unreliable messages count separately (uint32, wraps). */
  seq: number;
  reliable: boolean;
  /** The payload is UTF-8 text (the app sent a string). */
  text: boolean;
  /** At most {@link MAX_APP_DATA_BYTES}; empty when `skip`. */
  payload: Uint8Array;
  /** Reliable only: the sender abandoned `seq` (PR-SCTP FORWARD-TSN, RFC 3758); the receiver skips it. */
  skip: boolean;
}

/** Acknowledgement of reliable AppData (multipath.proto `AppDataAck`). */
export interface AppDataAckMessage {
  /** Next seq expected in order: every seq before it was received. */
  cumulative: number;
  /** Received blocks above `cumulative`: flat [start, end) pairs (uint32 serial), at most {@link MAX_APP_DATA_ACK_RANGES} pairs. */
  ranges: number[];
  /** How long the receiver held the ack before sending it (µs). */
  ackDelayUs: number;
}

/**
 * Reply to a PathReport carrying the report's send time back (multipath.proto
 * `ClockEcho`; RFC 3550 §6.4.1 LSR/DLSR, RFC 5905 §8).
 */
export interface ClockEchoMessage {
  /** `sendTimeUs` of the echoed packet, on the clock of the side that receives this echo (µs). */
  echoUs: number;
  /** Time the echoer held it: from the echoed packet's arrival to this packet's `sendTimeUs`, echoer's clock (µs, uint32). */
  holdUs: number;
}

/** Largest Opus packet payload (bytes): RFC 6716 §3.2.1 (1275 bytes per frame, one frame per packet, RFC 7587). */
export const MAX_AUDIO_PAYLOAD_BYTES = 1275;
/** Longest audio frame on the wire (µs): 120 ms, Opus' longest packet (RFC 6716 §2.1.4). */
export const MAX_AUDIO_DURATION_US = 120_000;

/** One encoded audio frame (multipath.proto `Audio`): one Opus frame per packet (RFC 7587 §4.2). */
export interface AudioMessage {
  streamId: number;
  /** Per audio stream, +1 per frame (uint32, wraps). */
  seq: number;
  /** Capture time of the first sample on the sender clock (µs). */
  captureUs: number;
  /** Frame duration (µs), in (0, {@link MAX_AUDIO_DURATION_US}]. */
  durationUs: number;
  /** The Opus packet, at most {@link MAX_AUDIO_PAYLOAD_BYTES}; empty = a DTX/no-data frame. */
  payload: Uint8Array;
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
  | { kind: 'padding'; padding: PaddingMessage }
  | { kind: 'appData'; appData: AppDataMessage }
  | { kind: 'appDataAck'; appDataAck: AppDataAckMessage }
  | { kind: 'clockEcho'; clockEcho: ClockEchoMessage }
  | { kind: 'audio'; audio: AudioMessage };

export type PacketKind = PacketBody['kind'];

/** Envelope fields stamped per path at send time. */
export interface PacketHeader {
  pathId: PathId;
  /** Per-path sequence number (media, fec, padding and audio only; 0 for control). */
  pathSeq: number;
  /** Sender clock at send (µs). */
  sendTimeUs: number;
}

export interface DecodedPacket extends PacketHeader {
  body: PacketBody;
}

/** Why a packet was dropped by the decoder (counted, never thrown to the app). */
export type WireErrorReason = 'empty' | 'too-large' | 'malformed' | 'no-body' | 'bad-field';

/**
 * Decoder bounds (all data-driven sizes are checked against these before any
 * allocation or loop that depends on them).
 */
export interface WireLimits {
  /** Whole encoded Packet (bytes). Default 65536. */
  maxPacketBytes: number;
  /** Max `frag_count` of a Media fragment. Default 4096. */
  maxFragments: number;
  /** Max arrivals listed in one PathReport. Default 4096. */
  maxReportArrivals: number;
  /** Max `end_seq - begin_seq` (uint32 serial) of one PathReport. Default 65535. */
  maxReportRange: number;
  /** Max flow seqs in one Nack. Default 1024. */
  maxNackSeqs: number;
}

/** Default {@link WireLimits}. */
export const DEFAULT_WIRE_LIMITS: Readonly<WireLimits> = Object.freeze({
  maxPacketBytes: 65536,
  maxFragments: 4096,
  maxReportArrivals: 4096,
  maxReportRange: 65535,
  maxNackSeqs: 1024,
});

/**
 * Result of `decodePacket`: the validated packet plus `bodyBytes`, the exact
 * sender bytes of the body sub-message (a view into the input, not a copy),
 * which is what FEC protects for a Media body. Never an exception.
 */
export type DecodeResult = { ok: true; packet: DecodedPacket; bodyBytes: Uint8Array } | { ok: false; reason: WireErrorReason; detail: string };
