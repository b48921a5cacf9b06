/**
 * Shared vocabulary of the I/O-free core. Every folder (cc, sched, fec,
 * feedback, engine) speaks these types; nothing here does I/O.
 *
 * Units are in the names: `Us` = microseconds, `Ms` = milliseconds,
 * `Bps` = bits per second, `Bytes` = bytes.
 */

/** Index of a network path, 0-based, < {@link MAX_PATHS}. */
export type PathId = number;

/** Upper bound on simultaneous paths (wire format and bitmasks rely on it). */
export const MAX_PATHS = 8;

/**
 * Packet priority, exactly as Converge §4.1 Table 2: lower number
 * = more important. Everything that is not 1-5 is plain media (6).
 */
export enum Priority {
  Retransmission = 1,
  Keyframe = 2,
  Sps = 3,
  Pps = 4,
  Fec = 5,
  Media = 6,
}

/**
 * What a fragment carries. For H.264 Annex B the class comes from the NAL unit
 * type (7 = SPS, 8 = PPS, 5 = IDR slice, 1 = non-IDR slice, anything else
 * Other); for VP8/VP9/AV1 only Key/Delta are used.
 */
export enum NalClass {
  Other = 0,
  Sps = 1,
  Pps = 2,
  Idr = 3,
  NonIdr = 4,
  Key = 5,
  Delta = 6,
}

/** Encoded frame type as WebCodecs reports it. */
export type FrameType = 'key' | 'delta';

/** Video codecs the SDK negotiates. */
export type CodecName = 'h264' | 'vp8' | 'vp9' | 'av1';

/**
 * One media packet before it is given a path: what the scheduler, the FEC
 * policy and the pacer need to know. `payload` is the encoded `Media` wire
 * message (see src/wire), i.e. the exact bytes FEC protects.
 */
export interface OutgoingPacket {
  streamId: number;
  /** Flow-level (per stream, across paths) sequence number, uint32 wrapping. */
  flowSeq: number;
  frameId: number;
  priority: Priority;
  nalClass: NalClass;
  /** Size on the wire in bytes (header + payload), used for rate accounting. */
  sizeBytes: number;
  /** For FEC packets: the path whose packets this FEC packet protects. */
  protectsPath?: PathId;
  /** Encoded bytes to send (Media or Fec body, without the path envelope). */
  body: Uint8Array;
  /** True for FEC packets (body is a `Fec` message). */
  isFec?: boolean;
  /** True for a NACK answer. */
  isRetransmission?: boolean;
  /** Temporal layer id of the packet's frame (0 = base) when the stream uses temporal layers; undefined otherwise. */
  temporalLayer?: number;
}

/**
 * Transport state of a path (its RTCPeerConnection and datachannel, or a
 * simulator link), the one type the transports, the engines and the path
 * manager share: new -> connecting -> connected -> (failed | closed).
 */
export type PathTransportState = 'new' | 'connecting' | 'connected' | 'failed' | 'closed';

/**
 * A path as the scheduler sees it at one instant. Built by the engine from the
 * path's congestion controller and transport; read-only to schedulers.
 */
export interface PathState {
  id: PathId;
  /** Connected and its receiver reports arrive. A down path gets nothing. */
  up: boolean;
  /** S_i: the congestion controller's target send rate (bps). */
  rateBps: number;
  /** Goodput measured from receiver reports (acknowledged bitrate, bps). */
  goodputBps: number;
  /** Smoothed RTT (ms). */
  srttMs: number;
  /** Minimum RTT seen over a recent window (ms). */
  minRttMs: number;
  /** Recent loss fraction 0..1 from receiver reports. */
  lossRate: number;
  /** Bytes sent and not yet covered by a receiver report. */
  inflightBytes: number;
  /** Bytes waiting in the pacer plus the datachannel's bufferedAmount. */
  queuedBytes: number;
}

/** One scheduling decision. */
export interface Assignment {
  packet: OutgoingPacket;
  pathId: PathId;
  /**
   * A duplicate sent only to probe a disabled path (Converge §4.1): the
   * receiver discards the duplicate but its arrival keeps RTT/loss known.
   */
  probe?: boolean;
}

/**
 * Receiver QoE feedback in the paper's form (Converge §4.2, Fig. 8): the path
 * that caused the inter-frame delay, alpha as a signed packet count (negative:
 * send fewer packets on that path; positive: more), and the current frame
 * construction delay (FCD).
 */
export interface QoeFeedback {
  pathId: PathId;
  alpha: number;
  fcdMs: number;
  /** Monotonic feedback id, so duplicates (sent on every path) are ignored. */
  seq: number;
}

/** Per-path arrival report entry: one received packet. */
export interface ArrivalEntry {
  /** Per-path sequence number of the received packet. */
  pathSeq: number;
  /** Arrival time on the receiver's clock (µs). */
  arrivalUs: number;
}

/**
 * Transport-wide-cc-like report for one path (sent every 50-100 ms over that
 * path). Sequence numbers in [beginSeq, endSeq] not listed were not received
 * (yet) when the report was made.
 */
export interface PathReport {
  pathId: PathId;
  /** First per-path seq the report covers. */
  beginSeq: number;
  /** Last per-path seq the report covers (inclusive). */
  endSeq: number;
  arrivals: ArrivalEntry[];
  /** Receiver clock (µs) when the report was sent: with the last arrival it gives the hold time for RTT. */
  reportTimeUs: number;
  /**
   * The receiver's smoothed frame construction delay (µs, uint32), absent when
   * unknown. Keeps the sender's Converge Eq. 3 check current while no QoE
   * feedback arrives (feedback only comes with QoE drops).
   */
  fcdUs?: number;
}
