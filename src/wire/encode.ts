/**
 * Protobuf wire encoder of multipath-rtc (schema: multipath.proto; protobufjs
 * Root built from the generated JSON descriptor, see schema.ts). The decoder
 * is decode.ts.
 *
 * Sender side:
 *  - {@link encodeMedia} / {@link encodeFec} encode BODY messages. Those bytes
 *    are what FEC protects and what a retransmission repeats, so they are
 *    encoded once and kept.
 *  - {@link encodePacket} wraps already-encoded body bytes into the `Packet`
 *    envelope (path_id, path_seq, send_time_us, then the length-delimited
 *    field 10 or 11) by writing the few header varints by hand and copying the
 *    body once: no re-encoding at pacing time.
 *  - {@link encodeControl} encodes any body kind (report, keyframeRequest,
 *    nack, qoe, streamInfo, padding, and media/fec for convenience).
 *
 * Receiver side (decode.ts): `decodePacket` is a pure function that never
 * throws; it validates every field (see validate.ts) and returns the exact
 * body bytes.
 *
 * Encoders throw {@link WireError} (`ERR_INVALID_MESSAGE`) when handed a
 * message the decoder would reject: that is caller misuse, not network data.
 */
import type { QoeFeedback } from '../core/types.js';
import { WireError } from './errors.js';
import {
  AppDataAckType,
  AppDataType,
  AudioType,
  FecType,
  KeyframeRequestType,
  MediaType,
  NackType,
  PACKET_FIELD,
  PaddingType,
  PathReportType,
  QoeFeedbackType,
  StreamInfoType,
  newWriter,
} from './schema.js';
import { UINT32_MAX } from './sizes.js';
import { DEFAULT_WIRE_LIMITS, type AudioMessage, type FecMessage, type MediaMessage, type PacketBody, type PacketHeader, type PacketKind } from './types.js';
import { checkAppData, checkAppDataAck, checkAudio, checkFec, checkHeader, checkKeyframeRequest, checkMedia, checkNack, checkQoeWire, checkReport, checkStreamInfo, type QoeWire } from './validate.js';
import { varintSize, writeVarint } from './varint.js';

const WT_VARINT = 0;
const WT_LEN = 2;

// ---------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------

/**
 * Encodes one Media fragment (the FEC-protected, retransmittable body).
 * @throws WireError ERR_INVALID_MESSAGE if a field is out of range.
 */
export function encodeMedia(m: MediaMessage): Uint8Array {
  const err = checkMedia(m, DEFAULT_WIRE_LIMITS);
  if (err !== null) throw WireError.invalidMessage('Media', err);
  return MediaType.encode(m, newWriter()).finish();
}

/**
 * Encodes one Audio body (one Opus frame, RFC 7587 §4.2).
 * @throws WireError ERR_INVALID_MESSAGE if a field is out of range.
 */
export function encodeAudio(a: AudioMessage): Uint8Array {
  const err = checkAudio(a);
  if (err !== null) throw WireError.invalidMessage('Audio', err);
  return AudioType.encode(a, newWriter()).finish();
}

/**
 * Encodes one Fec body (XOR parity, RFC 5109-style mask over flow seqs).
 * @throws WireError ERR_INVALID_MESSAGE if a field is out of range.
 */
export function encodeFec(f: FecMessage): Uint8Array {
  const err = checkFec(f, DEFAULT_WIRE_LIMITS);
  if (err !== null) throw WireError.invalidMessage('Fec', err);
  return FecType.encode(f, newWriter()).finish();
}

const BODY_FIELD: Record<PacketKind, number> = {
  media: PACKET_FIELD.media,
  fec: PACKET_FIELD.fec,
  report: PACKET_FIELD.report,
  keyframeRequest: PACKET_FIELD.keyframeRequest,
  nack: PACKET_FIELD.nack,
  qoe: PACKET_FIELD.qoe,
  streamInfo: PACKET_FIELD.streamInfo,
  padding: PACKET_FIELD.padding,
  appData: PACKET_FIELD.appData,
  appDataAck: PACKET_FIELD.appDataAck,
  audio: PACKET_FIELD.audio,
};

function wrap(header: PacketHeader, field: number, body: Uint8Array): Uint8Array {
  const err = checkHeader(header);
  if (err !== null) throw WireError.invalidMessage('Packet', err);
  const { pathId, pathSeq, sendTimeUs } = header;
  // proto3 canonical form: zero scalars are omitted.
  const tagPathId = (PACKET_FIELD.pathId << 3) | WT_VARINT;
  const tagPathSeq = (PACKET_FIELD.pathSeq << 3) | WT_VARINT;
  const tagSend = (PACKET_FIELD.sendTimeUs << 3) | WT_VARINT;
  const tagBody = ((field << 3) | WT_LEN) >>> 0;
  const size =
    (pathId !== 0 ? varintSize(tagPathId) + varintSize(pathId) : 0) +
    (pathSeq !== 0 ? varintSize(tagPathSeq) + varintSize(pathSeq) : 0) +
    (sendTimeUs !== 0 ? varintSize(tagSend) + varintSize(sendTimeUs) : 0) +
    varintSize(tagBody) +
    varintSize(body.length) +
    body.length;
  if (size > DEFAULT_WIRE_LIMITS.maxPacketBytes) {
    throw WireError.invalidMessage('Packet', `${size} bytes > ${DEFAULT_WIRE_LIMITS.maxPacketBytes}`);
  }
  const out = new Uint8Array(size);
  let p = 0;
  if (pathId !== 0) p = writeVarint(out, writeVarint(out, p, tagPathId), pathId);
  if (pathSeq !== 0) p = writeVarint(out, writeVarint(out, p, tagPathSeq), pathSeq);
  if (sendTimeUs !== 0) p = writeVarint(out, writeVarint(out, p, tagSend), sendTimeUs);
  p = writeVarint(out, writeVarint(out, p, tagBody), body.length);
  out.set(body, p);
  return out;
}

/**
 * Wraps ALREADY-ENCODED Media, Fec or Audio body bytes into a `Packet` envelope.
 * Cost: a few varints plus one copy of the body; the body is not re-encoded,
 * so FEC parity computed over `bodyBytes` stays valid.
 * Size: `bodyBytes.length + envelopeOverheadBytes(bodyBytes.length)` at most.
 * @throws WireError ERR_INVALID_MESSAGE if the header is out of range
 *   (pathId >= MAX_PATHS, pathSeq not uint32, sendTimeUs not in [0, 2^53]).
 */
export function encodePacket(header: PacketHeader, kind: 'media' | 'fec' | 'audio', bodyBytes: Uint8Array): Uint8Array {
  return wrap(header, BODY_FIELD[kind], bodyBytes);
}

/** QoeFeedback (ms, any number) to its wire form (µs, integers). */
function qoeToWire(q: QoeFeedback): QoeWire {
  const fcdUs = Number.isFinite(q.fcdMs) && q.fcdMs > 0 ? Math.min(UINT32_MAX, Math.round(q.fcdMs * 1000)) : q.fcdMs === 0 ? 0 : NaN;
  const alpha = Number.isFinite(q.alpha) ? Math.max(-0x8000_0000, Math.min(0x7fff_ffff, Math.round(q.alpha))) : NaN;
  return { pathId: q.pathId, alpha, fcdUs, feedbackSeq: q.seq };
}

/**
 * Encodes the body of any kind and wraps it. QoE: `fcdMs` is sent as integer
 * µs (clamped to uint32), `alpha` rounded to an integer packet count.
 * StreamInfo: `fps` is sent as integer milli-fps. Padding: `size` zero bytes
 * in `data`.
 * @throws WireError ERR_INVALID_MESSAGE if any field is out of range.
 */
export function encodeControl(header: PacketHeader, body: PacketBody): Uint8Array {
  return wrap(header, BODY_FIELD[body.kind], encodeBody(body));
}

function encodeBody(body: PacketBody): Uint8Array {
  const lim = DEFAULT_WIRE_LIMITS;
  let err: string | null;
  switch (body.kind) {
    case 'media':
      return encodeMedia(body.media);
    case 'fec':
      return encodeFec(body.fec);
    case 'report':
      if ((err = checkReport(body.report, lim)) !== null) throw WireError.invalidMessage('PathReport', err);
      return PathReportType.encode(body.report, newWriter()).finish();
    case 'keyframeRequest':
      if ((err = checkKeyframeRequest(body.keyframeRequest)) !== null) throw WireError.invalidMessage('KeyframeRequest', err);
      return KeyframeRequestType.encode(body.keyframeRequest, newWriter()).finish();
    case 'nack':
      if ((err = checkNack(body.nack, lim)) !== null) throw WireError.invalidMessage('Nack', err);
      return NackType.encode(body.nack, newWriter()).finish();
    case 'qoe': {
      const w = qoeToWire(body.qoe);
      if ((err = checkQoeWire(w)) !== null) throw WireError.invalidMessage('QoeFeedback', err);
      return QoeFeedbackType.encode(w, newWriter()).finish();
    }
    case 'streamInfo': {
      const s = body.streamInfo;
      if ((err = checkStreamInfo(s)) !== null) throw WireError.invalidMessage('StreamInfo', err);
      const fpsMilli = Math.round(s.fps * 1000);
      if (fpsMilli < 1) throw WireError.invalidMessage('StreamInfo', `fps ${s.fps} rounds to 0 milli-fps`);
      return StreamInfoType.encode({ streamId: s.streamId, codec: s.codec, width: s.width, height: s.height, fpsMilli }, newWriter()).finish();
    }
    case 'padding': {
      const size = body.padding.size;
      if (!Number.isInteger(size) || size < 0 || size > lim.maxPacketBytes) {
        throw WireError.invalidMessage('Padding', `size ${size} not in [0, ${lim.maxPacketBytes}]`);
      }
      return PaddingType.encode({ size, data: new Uint8Array(size) }, newWriter()).finish();
    }
    case 'appData':
      if ((err = checkAppData(body.appData)) !== null) throw WireError.invalidMessage('AppData', err);
      return AppDataType.encode(body.appData, newWriter()).finish();
    case 'appDataAck':
      if ((err = checkAppDataAck(body.appDataAck)) !== null) throw WireError.invalidMessage('AppDataAck', err);
      return AppDataAckType.encode(body.appDataAck, newWriter()).finish();
    case 'audio':
      return encodeAudio(body.audio);
    default: {
      const never: never = body;
      throw WireError.invalidMessage('Packet', `unknown body kind ${(never as { kind: string }).kind}`);
    }
  }
}
