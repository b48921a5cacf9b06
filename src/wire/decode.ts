/**
 * Receiver half of the wire format (encode.ts is the sender half):
 * hand-parsed `Packet` envelope (so `bodyBytes` is the exact sender bytes of
 * the body) and strict decoding of the body by the generated static codec
 * (schema.generated.ts: a known field with the wrong wire type is malformed,
 * unknown fields are skipped), then field validation (validate.ts). Pure
 * functions; never throw (everything is caught).
 */
import type { PathReport } from '../core/types.js';
import { PbReader, WT_LEN, WT_VARINT } from './pb.js';
import { PACKET_FIELD, pb, plainView } from './schema.js';
import {
  DEFAULT_WIRE_LIMITS,
  MAX_APP_DATA_ACK_RANGES,
  type AppDataAckMessage,
  type AppDataMessage,
  type AudioMessage,
  type ClockEchoMessage,
  type DecodeResult,
  type DecodedPacket,
  type FecMessage,
  type KeyframeRequestMessage,
  type MediaMessage,
  type NackMessage,
  type PacketBody,
  type PacketHeader,
  type StreamInfoMessage,
  type WireErrorReason,
  type WireLimits,
} from './types.js';
import {
  checkAppData,
  checkAppDataAck,
  checkAudio,
  checkClockEcho,
  checkFec,
  checkHeader,
  checkKeyframeRequest,
  checkMedia,
  checkNack,
  checkQoeWire,
  checkReport,
  checkStreamInfo,
  isU32,
  type QoeWire,
} from './validate.js';

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

/** Merges user limits over the defaults, ignoring non-positive / non-finite values. */
export function resolveLimits(limits?: Partial<WireLimits>): WireLimits {
  const out: WireLimits = { ...DEFAULT_WIRE_LIMITS };
  if (limits) {
    for (const k of Object.keys(DEFAULT_WIRE_LIMITS) as (keyof WireLimits)[]) {
      const v = limits[k];
      if (typeof v === 'number' && Number.isInteger(v) && v > 0) out[k] = v;
    }
  }
  return out;
}

/** A reader over a whole body. */
const reader = (bytes: Uint8Array): PbReader => new PbReader(bytes, 0, bytes.length);

function mediaFromPb(m: pb.MediaPb): MediaMessage {
  return {
    streamId: m.streamId,
    flowSeq: m.flowSeq,
    frameId: m.frameId,
    fragIndex: m.fragIndex,
    fragCount: m.fragCount,
    keyFrame: m.keyFrame,
    nalClass: m.nalClass,
    priority: m.priority,
    captureUs: m.captureUs,
    retransmission: m.retransmission,
    payload: m.payload,
    // proto3: 0 = absent (no layering / the previous frame); left out so old and new senders decode alike.
    ...(m.temporalLayer > 0 ? { temporalLayer: m.temporalLayer } : {}),
    ...(m.refDistance > 0 ? { refDistance: m.refDistance } : {}),
  };
}

function reportFromPb(m: pb.PathReportPb, lim: WireLimits): PathReport | string {
  if (m.arrivals.length > lim.maxReportArrivals) return `${m.arrivals.length} arrivals > ${lim.maxReportArrivals}`;
  return {
    pathId: m.pathId,
    beginSeq: m.beginSeq,
    endSeq: m.endSeq,
    arrivals: m.arrivals,
    reportTimeUs: m.reportTimeUs,
    ...(m.fcdUs > 0 ? { fcdUs: m.fcdUs } : {}),
  };
}

function fail(reason: WireErrorReason, detail: string): DecodeResult {
  return { ok: false, reason, detail };
}

/** Decodes and validates a Media body; returns the message or a bad-field detail string. Throws PbError. */
function decodeMediaBody(bytes: Uint8Array, lim: WireLimits): MediaMessage | string {
  const media = mediaFromPb(pb.decodeMedia(reader(bytes)));
  const err = checkMedia(media, lim);
  return err === null ? media : err;
}

function decodeBody(field: number, bytes: Uint8Array, lim: WireLimits): PacketBody | string {
  let err: string | null;
  switch (field) {
    case PACKET_FIELD.media: {
      const media = decodeMediaBody(bytes, lim);
      return typeof media === 'string' ? media : { kind: 'media', media };
    }
    case PACKET_FIELD.fec: {
      const fec: FecMessage = pb.decodeFec(reader(bytes));
      return (err = checkFec(fec, lim)) !== null ? err : { kind: 'fec', fec };
    }
    case PACKET_FIELD.report: {
      const report = reportFromPb(pb.decodePathReport(reader(bytes)), lim);
      if (typeof report === 'string') return report;
      return (err = checkReport(report, lim)) !== null ? err : { kind: 'report', report };
    }
    case PACKET_FIELD.keyframeRequest: {
      const keyframeRequest: KeyframeRequestMessage = pb.decodeKeyframeRequest(reader(bytes));
      return (err = checkKeyframeRequest(keyframeRequest)) !== null ? err : { kind: 'keyframeRequest', keyframeRequest };
    }
    case PACKET_FIELD.nack: {
      const nack: NackMessage = pb.decodeNack(reader(bytes));
      return (err = checkNack(nack, lim)) !== null ? err : { kind: 'nack', nack };
    }
    case PACKET_FIELD.qoe: {
      const w: QoeWire = pb.decodeQoeFeedback(reader(bytes));
      if ((err = checkQoeWire(w)) !== null) return err;
      return { kind: 'qoe', qoe: { pathId: w.pathId, alpha: w.alpha, fcdMs: w.fcdUs / 1000, seq: w.feedbackSeq } };
    }
    case PACKET_FIELD.streamInfo: {
      const m = pb.decodeStreamInfo(reader(bytes));
      const streamInfo: StreamInfoMessage = { streamId: m.streamId, codec: m.codec, width: m.width, height: m.height, fps: m.fpsMilli / 1000 };
      return (err = checkStreamInfo(streamInfo)) !== null ? err : { kind: 'streamInfo', streamInfo };
    }
    case PACKET_FIELD.padding: {
      const { size, data } = pb.decodePadding(reader(bytes));
      if (!isU32(size) || size > lim.maxPacketBytes) return `padding size ${size} > ${lim.maxPacketBytes}`;
      if (data.length !== size) return `padding size ${size} != data length ${data.length}`;
      return { kind: 'padding', padding: { size } };
    }
    case PACKET_FIELD.appData: {
      const appData: AppDataMessage = pb.decodeAppData(reader(bytes));
      return (err = checkAppData(appData)) !== null ? err : { kind: 'appData', appData };
    }
    case PACKET_FIELD.appDataAck: {
      const appDataAck: AppDataAckMessage = pb.decodeAppDataAck(reader(bytes));
      if (appDataAck.ranges.length > 2 * MAX_APP_DATA_ACK_RANGES) return `${appDataAck.ranges.length / 2} ranges > ${MAX_APP_DATA_ACK_RANGES}`;
      return (err = checkAppDataAck(appDataAck)) !== null ? err : { kind: 'appDataAck', appDataAck };
    }
    case PACKET_FIELD.audio: {
      const audio: AudioMessage = pb.decodeAudio(reader(bytes));
      return (err = checkAudio(audio)) !== null ? err : { kind: 'audio', audio };
    }
    case PACKET_FIELD.clockEcho: {
      const clockEcho: ClockEchoMessage = pb.decodeClockEcho(reader(bytes));
      return (err = checkClockEcho(clockEcho)) !== null ? err : { kind: 'clockEcho', clockEcho };
    }
    default:
      return `unknown body field ${field}`;
  }
}

function isBodyField(field: number): boolean {
  return (
    (field >= PACKET_FIELD.media && field <= PACKET_FIELD.padding) ||
    field === PACKET_FIELD.appData ||
    field === PACKET_FIELD.appDataAck ||
    field === PACKET_FIELD.clockEcho ||
    field === PACKET_FIELD.audio
  );
}

function decodeUnchecked(bytes: Uint8Array, lim: WireLimits): DecodeResult {
  if (!(bytes instanceof Uint8Array)) return fail('malformed', 'input is not a Uint8Array');
  bytes = plainView(bytes);
  const end = bytes.length;
  if (end === 0) return fail('empty', 'zero-length packet');
  if (end > lim.maxPacketBytes) return fail('too-large', `${end} bytes > ${lim.maxPacketBytes}`);
  let pathId = 0;
  let pathSeq = 0;
  let sendTimeUs = 0;
  let bodyField = 0;
  let bodyStart = 0;
  let bodyEnd = 0;
  const r = reader(bytes);
  while (r.pos < end) {
    const tag = r.tag();
    const field = Math.floor(tag / 8);
    const wt = tag % 8;
    if (field === PACKET_FIELD.pathId || field === PACKET_FIELD.pathSeq || field === PACKET_FIELD.sendTimeUs) {
      if (wt !== WT_VARINT) return fail('malformed', `wrong wire type ${wt} for envelope field ${field}`);
      const v = r.uint64();
      if (field === PACKET_FIELD.pathId) pathId = v;
      else if (field === PACKET_FIELD.pathSeq) pathSeq = v;
      else sendTimeUs = v;
    } else if (isBodyField(field)) {
      if (wt !== WT_LEN) return fail('malformed', `wrong wire type ${wt} for body field ${field}`);
      if (bodyField !== 0) return fail('malformed', 'more than one body');
      bodyEnd = r.lenEnd();
      bodyField = field;
      bodyStart = r.pos;
      r.pos = bodyEnd;
    } else {
      r.skip(wt); // unknown field: forward compatible
    }
  }
  if (bodyField === 0) return fail('no-body', 'packet carries no body');
  const header: PacketHeader = { pathId, pathSeq, sendTimeUs };
  const herr = checkHeader(header);
  if (herr !== null) return fail('bad-field', herr);
  const bodyBytes = bytes.subarray(bodyStart, bodyEnd);
  const body = decodeBody(bodyField, bodyBytes, lim);
  if (typeof body === 'string') return fail('bad-field', body);
  const packet: DecodedPacket = { pathId, pathSeq, sendTimeUs, body };
  return { ok: true, packet, bodyBytes };
}

/**
 * Decodes and validates one `Packet` with already-resolved limits (see
 * {@link resolveLimits}), for callers that decode many packets with the same
 * limits and do not want them merged per packet.
 * Never throws.
 */
export function decodePacketWith(bytes: Uint8Array, lim: WireLimits): DecodeResult {
  try {
    return decodeUnchecked(bytes, lim);
  } catch (e) {
    return fail('malformed', e instanceof Error ? e.message : String(e));
  }
}

/**
 * Decodes and validates one received `Packet` (one RTCDataChannel message).
 * Pure; never throws. On success `bodyBytes` is a view (no copy) of the body
 * sub-message exactly as the sender encoded it (what FEC protects for Media),
 * and `media.payload` is a view into the input too.
 *
 * Drop reasons: 'empty' (0 bytes), 'too-large' (> limits.maxPacketBytes),
 * 'malformed' (bad varint/length/wire type, two bodies, invalid UTF-8),
 * 'no-body', 'bad-field' (a value out of range; see validate.ts).
 * Invalid `limits` values are ignored (defaults used).
 */
export function decodePacket(bytes: Uint8Array, limits?: Partial<WireLimits>): DecodeResult {
  return decodePacketWith(bytes, limits ? resolveLimits(limits) : DEFAULT_WIRE_LIMITS);
}

/**
 * Decodes and validates a bare Media body, e.g. one rebuilt by the FEC decoder.
 * @returns the message, or undefined when malformed or out of range. Never throws.
 */
export function decodeMedia(bodyBytes: Uint8Array, limits?: Partial<WireLimits>): MediaMessage | undefined {
  try {
    if (!(bodyBytes instanceof Uint8Array)) return undefined;
    const lim = limits ? resolveLimits(limits) : DEFAULT_WIRE_LIMITS;
    if (bodyBytes.length > lim.maxPacketBytes) return undefined;
    const m = decodeMediaBody(plainView(bodyBytes), lim);
    return typeof m === 'string' ? undefined : m;
  } catch {
    return undefined;
  }
}
