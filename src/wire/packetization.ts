/**
 * Contract of the packetizer (sender) and depacketizer (receiver). The
 * implementation lives in packetizer.ts / depacketizer.ts.
 */
import type { NalClass, PathId } from '../core/types.js';

/** An encoded frame as the codec layer hands it to the packetizer. */
export interface EncodedFrameInput {
  streamId: number;
  frameId: number;
  keyFrame: boolean;
  /** Capture time (µs, sender clock). */
  captureUs: number;
  /** Encoded bitstream (H.264 Annex B with start codes, or VP8/VP9/AV1 frame). */
  data: Uint8Array;
  codec: 'h264' | 'vp8' | 'vp9' | 'av1';
  /** Temporal layer id (0 = base; undefined = no temporal layering). See MediaMessage.temporalLayer. */
  temporalLayer?: number;
  /**
   * Delta frames: frameId distance to the frame this one references (default
   * 1, the previous frame). See MediaMessage.refDistance.
   */
  refDistance?: number;
}

/** How one fragment arrived, for FCD / late-packet accounting. */
export interface FragmentArrival {
  fragIndex: number;
  pathId: PathId;
  arrivalUs: number;
  nalClass: NalClass;
  retransmission: boolean;
  /** Rebuilt by FEC rather than received. */
  recovered: boolean;
}

/** A frame whose fragments are all present, bytes concatenated in fragment order. */
export interface AssembledFrame {
  streamId: number;
  frameId: number;
  keyFrame: boolean;
  captureUs: number;
  data: Uint8Array;
  /**
   * `data.byteLength`, when the producer knows it without building `data`
   * (the depacketizer assembles a multi-fragment frame's `data` lazily, on
   * first read, so a frame dropped before decode is never copied). Read this
   * rather than `data.byteLength` to size a frame.
   */
  dataBytes?: number;
  /** Receiver clock (µs) of the first and last fragment arrival. */
  firstArrivalUs: number;
  lastArrivalUs: number;
  /** One entry per fragment, in arrival order. */
  arrivals: FragmentArrival[];
  /** Temporal layer id from the wire (absent = 0 / no layering). */
  temporalLayer?: number;
  /** frameId distance to the referenced frame (absent = 1, the previous frame; ignored on a key frame). */
  refDistance?: number;
}
