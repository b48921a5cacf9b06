/**
 * Sender-side packetizer: splits one encoded frame into `Media` fragments
 * whose whole `Packet` (envelope + Media header + payload) fits the MTU,
 * assigns flow sequence numbers, and tags each fragment with its NAL class and
 * Converge priority.
 *
 * Sources: H.264 NAL-aligned fragmentation after RFC 6184 §5.8 (FU-A keeps a
 * fragment inside one NAL unit; here the start codes stay in the payload so
 * concatenating fragments reproduces the Annex B access unit byte for byte);
 * priorities from Converge §4.1 Table 2: 1 retransmission,
 * 2 keyframe, 3 SPS, 4 PPS, 5 FEC, 6 media.
 */
import { NalClass, Priority } from '../core/types.js';
import { seqAdd } from '../core/seq.js';
import { findNalUnits, classifyNalType } from '../codec/nal.js';
import { decodeMedia } from './decode.js';
import { encodeMedia } from './encode.js';
import { WireError } from './errors.js';
import type { EncodedFrameInput } from './packetization.js';
import { pb } from './schema.js';
import { envelopeOverheadBytes, mediaOverheadBytes } from './sizes.js';
import { DEFAULT_WIRE_LIMITS, MAX_REF_DISTANCE, MAX_TEMPORAL_LAYER, type MediaMessage } from './types.js';
import { isTimestampUs, isU32 } from './validate.js';

/** Default MTU: the whole encoded Packet must fit (bytes). */
export const DEFAULT_MTU_BYTES = 1200;
/** Smallest accepted MTU (bytes): below it the headers leave too little payload. */
export const MIN_MTU_BYTES = 200;

export interface PacketizerOptions {
  /** Whole encoded Packet incl. envelope must fit (bytes). Default 1200, range [200, 65536]. */
  mtuBytes?: number;
  /** Stream id (uint32) written in every fragment; frames must carry the same id. */
  streamId: number;
  /** First flow sequence number (uint32, default 0). */
  initialFlowSeq?: number;
}

/**
 * One fragment ready for the scheduler: the Media fields, the encoded body
 * (FEC-protected, retransmittable bytes) and an upper bound of its size on
 * the wire. Structurally an `OutgoingPacket` (src/core/types.ts).
 * `payload` is a view of the frame's `data` (no copy); `body` is independent.
 */
export interface PacketizedFragment extends MediaMessage {
  /** encodeMedia(this fragment): exactly what FEC protects. */
  body: Uint8Array;
  /** Upper bound (bytes) of the final Packet for `body` whatever header the pacer stamps. */
  sizeBytes: number;
}

/**
 * Converge Table 2 priority of a fresh (non-retransmitted) fragment:
 * SPS 3, PPS 4, IDR / VP8-VP9-AV1 key / any fragment of a key frame 2, else 6.
 * Deterministic in (nalClass, keyFrame), so a receiver can rebuild the original
 * body of a retransmission (see {@link originalMediaBody}).
 */
export function fragmentPriority(nalClass: NalClass, keyFrame: boolean): Priority {
  if (nalClass === NalClass.Sps) return Priority.Sps;
  if (nalClass === NalClass.Pps) return Priority.Pps;
  if (nalClass === NalClass.Idr || nalClass === NalClass.Key || keyFrame) return Priority.Keyframe;
  return Priority.Media;
}

export class Packetizer {
  /** MTU (bytes) every Packet fits. */
  readonly mtuBytes: number;
  readonly streamId: number;
  /** Largest payload per fragment (bytes), after worst-case headers, for a frame without temporal-layer fields. */
  readonly maxPayloadBytes: number;
  /** The same for a frame that carries temporal_layer / ref_distance (2 x 2 bytes less). */
  readonly maxPayloadLayeredBytes: number;
  private readonly maxFragments = DEFAULT_WIRE_LIMITS.maxFragments;
  private flowSeq: number;

  /**
   * @throws WireError ERR_MTU_TOO_SMALL if mtuBytes < 200, ERR_MTU_TOO_LARGE if
   *   > 65536, ERR_INVALID_OPTION for a non-uint32 streamId / initialFlowSeq.
   */
  constructor(opts: PacketizerOptions) {
    const mtu = opts.mtuBytes ?? DEFAULT_MTU_BYTES;
    if (typeof mtu !== 'number' || !Number.isInteger(mtu)) throw WireError.invalidOption('mtuBytes', mtu, 'an integer');
    if (mtu < MIN_MTU_BYTES) throw WireError.mtuTooSmall(mtu, MIN_MTU_BYTES);
    if (mtu > DEFAULT_WIRE_LIMITS.maxPacketBytes) throw WireError.mtuTooLarge(mtu, DEFAULT_WIRE_LIMITS.maxPacketBytes);
    if (!isU32(opts.streamId)) throw WireError.invalidOption('streamId', opts.streamId, 'a uint32');
    const first = opts.initialFlowSeq ?? 0;
    if (!isU32(first)) throw WireError.invalidOption('initialFlowSeq', first, 'a uint32');
    this.mtuBytes = mtu;
    this.streamId = opts.streamId;
    this.flowSeq = first;
    // Length prefixes are bounded using mtu itself (>= any body or payload length).
    // A frame without temporal-layer fields does not pay for them (they are absent on the wire).
    this.maxPayloadLayeredBytes = mtu - envelopeOverheadBytes(mtu) - mediaOverheadBytes(mtu, this.maxFragments, opts.streamId, true);
    this.maxPayloadBytes = mtu - envelopeOverheadBytes(mtu) - mediaOverheadBytes(mtu, this.maxFragments, opts.streamId, false);
    if (this.maxPayloadLayeredBytes < 1) throw WireError.mtuTooSmall(mtu, mtu - this.maxPayloadLayeredBytes + 1);
  }

  /** Flow sequence number the next fragment will get. */
  get nextFlowSeq(): number {
    return this.flowSeq;
  }

  /**
   * Splits one encoded frame into fragments (frag_index order), assigning
   * consecutive uint32 flow seqs. H.264: NAL-aligned, one NAL unit per
   * fragment or split across several (never two NAL units in one fragment),
   * start codes kept. VP8/VP9/AV1: even split of the frame. An empty frame
   * gives one fragment with an empty payload.
   * @throws WireError ERR_STREAM_MISMATCH, ERR_INVALID_FRAME (bad ids, time,
   *   data, temporal layer, reference distance), ERR_FRAME_TOO_LARGE (more than 4096 fragments).
   */
  packetize(frame: EncodedFrameInput): PacketizedFragment[] {
    this.checkFrame(frame);
    const { data, keyFrame } = frame;
    // Plan: [start, end, nalClass] per NAL-aligned chunk.
    let chunks: { start: number; end: number; nalClass: NalClass }[];
    if (frame.codec === 'h264') {
      const units = findNalUnits(data);
      chunks = units.map((u) => ({ start: u.start, end: u.end, nalClass: classifyNalType(u.type) }));
      if (chunks.length === 0) chunks = [{ start: 0, end: 0, nalClass: NalClass.Other }];
    } else {
      chunks = [{ start: 0, end: data.length, nalClass: keyFrame ? NalClass.Key : NalClass.Delta }];
    }
    // Temporal layering: only non-default values go on the wire (absent = base layer / the previous frame).
    const layer = frame.temporalLayer !== undefined && frame.temporalLayer > 0 ? frame.temporalLayer : undefined;
    const refDistance = !keyFrame && frame.refDistance !== undefined && frame.refDistance !== 1 ? frame.refDistance : undefined;
    const P = layer !== undefined || refDistance !== undefined ? this.maxPayloadLayeredBytes : this.maxPayloadBytes;
    let fragCount = 0;
    for (const c of chunks) fragCount += Math.max(1, Math.ceil((c.end - c.start) / P));
    if (fragCount > this.maxFragments) throw WireError.frameTooLarge(data.length, fragCount, this.maxFragments);

    const out: PacketizedFragment[] = new Array(fragCount);
    let fragIndex = 0;
    for (const c of chunks) {
      const len = c.end - c.start;
      const pieces = Math.max(1, Math.ceil(len / P));
      const base = Math.floor(len / pieces);
      const rem = len - base * pieces;
      const priority = fragmentPriority(c.nalClass, keyFrame);
      let off = c.start;
      for (let k = 0; k < pieces; k++) {
        const n = base + (k < rem ? 1 : 0);
        const frag: PacketizedFragment = {
          streamId: this.streamId,
          flowSeq: this.flowSeq,
          frameId: frame.frameId,
          fragIndex,
          fragCount,
          keyFrame,
          nalClass: c.nalClass,
          priority,
          captureUs: frame.captureUs,
          retransmission: false,
          payload: data.subarray(off, off + n),
          body: EMPTY,
          sizeBytes: 0,
        };
        if (layer !== undefined) frag.temporalLayer = layer;
        if (refDistance !== undefined) frag.refDistance = refDistance;
        // Fields already validated once per frame: encode without re-checking.
        frag.body = pb.encodeMedia(frag);
        frag.sizeBytes = frag.body.length + envelopeOverheadBytes(frag.body.length);
        out[fragIndex++] = frag;
        this.flowSeq = seqAdd(this.flowSeq, 1);
        off += n;
      }
    }
    return out;
  }

  private checkFrame(frame: EncodedFrameInput): void {
    if (frame.streamId !== this.streamId) throw WireError.streamMismatch(this.streamId, frame.streamId);
    if (!isU32(frame.frameId)) throw WireError.invalidFrame(`frameId ${frame.frameId} not a uint32`);
    if (!isTimestampUs(frame.captureUs)) throw WireError.invalidFrame(`captureUs ${frame.captureUs} not an integer in [0, 2^53]`);
    if (typeof frame.keyFrame !== 'boolean') throw WireError.invalidFrame('keyFrame not a boolean');
    if (!(frame.data instanceof Uint8Array)) throw WireError.invalidFrame('data not a Uint8Array');
    if (frame.temporalLayer !== undefined && !(Number.isInteger(frame.temporalLayer) && frame.temporalLayer >= 0 && frame.temporalLayer <= MAX_TEMPORAL_LAYER)) {
      throw WireError.invalidFrame(`temporalLayer ${frame.temporalLayer} not an integer in [0, ${MAX_TEMPORAL_LAYER}]`);
    }
    if (frame.refDistance !== undefined && !(Number.isInteger(frame.refDistance) && frame.refDistance >= 1 && frame.refDistance <= MAX_REF_DISTANCE)) {
      throw WireError.invalidFrame(`refDistance ${frame.refDistance} not an integer in [1, ${MAX_REF_DISTANCE}]`);
    }
    if (frame.codec !== 'h264' && frame.codec !== 'vp8' && frame.codec !== 'vp9' && frame.codec !== 'av1') {
      throw WireError.invalidFrame(`unknown codec ${String(frame.codec)}`);
    }
  }
}

const EMPTY = new Uint8Array(0);

/**
 * Re-encodes a stored Media body as a NACK answer: same fields and payload,
 * `retransmission = true`, priority 1 (Converge Table 2 "retransmission").
 * The packetizer's MTU budget already reserves the 2 extra bytes.
 *
 * FEC note: FEC parity was computed over the ORIGINAL body, so the receiver
 * identifies a retransmission by its flow_seq (stream_id, flow_seq) and, to
 * use it for FEC recovery, rebuilds the original bytes with
 * {@link originalMediaBody}.
 * @throws WireError ERR_INVALID_MESSAGE if `body` is not a valid Media message.
 */
export function retransmissionBody(body: Uint8Array): Uint8Array {
  const m = decodeMedia(body);
  if (!m) throw WireError.invalidMessage('Media', 'stored body does not decode');
  m.retransmission = true;
  m.priority = Priority.Retransmission;
  return encodeMedia(m);
}

/**
 * Rebuilds the exact bytes the packetizer originally sent for a fragment
 * (retransmission = false, priority from {@link fragmentPriority}). The codec
 * encodes deterministically (field-number order, proto3 defaults omitted), so
 * the result equals the original body and can be fed to the FEC decoder.
 * @throws WireError ERR_INVALID_MESSAGE if a field is out of range.
 */
export function originalMediaBody(m: MediaMessage): Uint8Array {
  return encodeMedia({ ...m, retransmission: false, priority: fragmentPriority(m.nalClass, m.keyFrame) });
}
