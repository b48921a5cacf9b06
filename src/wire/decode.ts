/**
 * Receiver half of the wire format (encode.ts is the sender half):
 * hand-parsed `Packet` envelope (so `bodyBytes` is the exact sender bytes of
 * the body) and strict protobufjs decoding of the body, then field validation
 * (validate.ts). Pure functions; never throw (everything is caught).
 */
import type { PathReport } from '../core/types.js';
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
  plainView,
  protobuf,
} from './schema.js';
import { UINT32_MAX } from './sizes.js';
import {
  DEFAULT_WIRE_LIMITS,
  MAX_APP_DATA_ACK_RANGES,
  type AppDataAckMessage,
  type AppDataMessage,
  type AudioMessage,
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

const EMPTY = new Uint8Array(0);
const WT_VARINT = 0;
const WT_I64 = 1;
const WT_LEN = 2;
const WT_I32 = 5;

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

/** Thrown internally for structural errors; always caught and turned into 'malformed'. */
class Malformed extends Error {}

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

/** Cursor position shared by the varint reader below (module-local, single-threaded). */
let cur = 0;

/**
 * Reads a varint at `cur` as an exact number when <= 2^53, else Infinity.
 * @throws Malformed when truncated or longer than 10 bytes.
 */
function readVarint(buf: Uint8Array, end: number): number {
  let lo = 0; // bits 0..27
  let shift = 0;
  let i = 0;
  for (; i < 4; i++) {
    if (cur >= end) throw new Malformed('truncated varint');
    const b = buf[cur++];
    lo |= (b & 0x7f) << shift;
    shift += 7;
    if (b < 0x80) return lo >>> 0;
  }
  let hi = 0; // bits 28.., as a float: exact up to 2^53 total
  let mul = 1;
  for (; i < 10; i++) {
    if (cur >= end) throw new Malformed('truncated varint');
    const b = buf[cur++];
    hi += (b & 0x7f) * mul;
    mul *= 128;
    if (b < 0x80) {
      // value = hi * 2^28 + lo; > 2^53 <=> hi > 2^25 or (hi == 2^25 and lo > 0)
      if (hi > 0x200_0000 || (hi === 0x200_0000 && lo !== 0)) return Infinity;
      return hi * 0x1000_0000 + (lo >>> 0);
    }
  }
  throw new Malformed('varint longer than 10 bytes');
}

function skipField(buf: Uint8Array, end: number, wireType: number): void {
  switch (wireType) {
    case WT_VARINT:
      readVarint(buf, end);
      return;
    case WT_I64:
      cur += 8;
      break;
    case WT_LEN: {
      const len = readVarint(buf, end);
      if (len > end - cur) throw new Malformed(`length ${len} past end`);
      cur += len;
      return;
    }
    case WT_I32:
      cur += 4;
      break;
    default:
      throw new Malformed(`unsupported wire type ${wireType}`);
  }
  if (cur > end) throw new Malformed('truncated fixed-width field');
}

/** uint64 from protobufjs (Long with long.js, number without) to number; Infinity above 2^53. */
function u64(v: unknown): number {
  if (typeof v === 'number') return v;
  if (v !== null && typeof v === 'object' && 'low' in v && 'high' in v) {
    const lo = (v as { low: number }).low >>> 0;
    const hi = (v as { high: number }).high >>> 0;
    if (hi > 0x20_0000 || (hi === 0x20_0000 && lo !== 0)) return Infinity;
    return hi * 0x1_0000_0000 + lo;
  }
  return NaN;
}

function bytesOf(v: unknown): Uint8Array {
  return v instanceof Uint8Array ? v : EMPTY;
}

/**
 * protobufjs decode that keeps unknown fields, then rejects any "unknown"
 * field whose number IS in the schema: that means a wrong wire type for a
 * known field (protobufjs would otherwise silently skip it).
 */
function decodeStrict(t: protobuf.Type, bytes: Uint8Array): Record<string, unknown> {
  const r = protobuf.Reader.create(bytes);
  r.discardUnknown = false;
  const m = t.decode(r) as unknown as Record<string, unknown>;
  checkUnknowns(t, m);
  return m;
}

function checkUnknowns(t: protobuf.Type, m: Record<string, unknown>): void {
  const unknowns = m.$unknowns as Uint8Array[] | undefined;
  if (!unknowns) return;
  for (const raw of unknowns) {
    cur = 0;
    const field = Math.floor(readVarint(raw, raw.length) / 8);
    const known = t.fieldsById[field];
    if (known) throw new Malformed(`wrong wire type for ${t.name}.${known.name}`);
  }
}

function mediaFromPb(m: Record<string, unknown>): MediaMessage {
  return {
    streamId: m.streamId as number,
    flowSeq: m.flowSeq as number,
    frameId: m.frameId as number,
    fragIndex: m.fragIndex as number,
    fragCount: m.fragCount as number,
    keyFrame: m.keyFrame as boolean,
    nalClass: m.nalClass as number,
    priority: m.priority as number,
    captureUs: u64(m.captureUs),
    retransmission: m.retransmission as boolean,
    payload: bytesOf(m.payload),
    // proto3: 0 = absent (no layering / the previous frame); left out so old and new senders decode alike.
    ...((m.temporalLayer as number) > 0 ? { temporalLayer: m.temporalLayer as number } : {}),
    ...((m.refDistance as number) > 0 ? { refDistance: m.refDistance as number } : {}),
  };
}

function fecFromPb(m: Record<string, unknown>): FecMessage {
  return {
    streamId: m.streamId as number,
    baseSeq: m.baseSeq as number,
    mask: bytesOf(m.mask),
    lengthXor: m.lengthXor as number,
    parity: bytesOf(m.parity),
    protectsPath: m.protectsPath as number,
    fecSeq: m.fecSeq as number,
  };
}

const ArrivalType = PathReportType.fields.arrivals.resolvedType as protobuf.Type;

function reportFromPb(m: Record<string, unknown>, lim: WireLimits): PathReport | string {
  const raw = m.arrivals as Record<string, unknown>[];
  if (raw.length > lim.maxReportArrivals) return `${raw.length} arrivals > ${lim.maxReportArrivals}`;
  const arrivals = new Array<{ pathSeq: number; arrivalUs: number }>(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const a = raw[i];
    checkUnknowns(ArrivalType, a);
    arrivals[i] = { pathSeq: a.pathSeq as number, arrivalUs: u64(a.arrivalUs) };
  }
  return {
    pathId: m.pathId as number,
    beginSeq: m.beginSeq as number,
    endSeq: m.endSeq as number,
    arrivals,
    reportTimeUs: u64(m.reportTimeUs),
    ...((m.fcdUs as number) > 0 ? { fcdUs: m.fcdUs as number } : {}),
  };
}

function fail(reason: WireErrorReason, detail: string): DecodeResult {
  return { ok: false, reason, detail };
}

/** Decodes and validates a Media body; returns the message or a bad-field detail string. Throws Malformed. */
function decodeMediaBody(bytes: Uint8Array, lim: WireLimits): MediaMessage | string {
  const media = mediaFromPb(decodeStrict(MediaType, bytes));
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
      const fec = fecFromPb(decodeStrict(FecType, bytes));
      return (err = checkFec(fec, lim)) !== null ? err : { kind: 'fec', fec };
    }
    case PACKET_FIELD.report: {
      const report = reportFromPb(decodeStrict(PathReportType, bytes), lim);
      if (typeof report === 'string') return report;
      return (err = checkReport(report, lim)) !== null ? err : { kind: 'report', report };
    }
    case PACKET_FIELD.keyframeRequest: {
      const m = decodeStrict(KeyframeRequestType, bytes);
      const keyframeRequest: KeyframeRequestMessage = { streamId: m.streamId as number, requestId: m.requestId as number };
      return (err = checkKeyframeRequest(keyframeRequest)) !== null ? err : { kind: 'keyframeRequest', keyframeRequest };
    }
    case PACKET_FIELD.nack: {
      const m = decodeStrict(NackType, bytes);
      const nack: NackMessage = { streamId: m.streamId as number, flowSeqs: (m.flowSeqs as number[]).slice() };
      return (err = checkNack(nack, lim)) !== null ? err : { kind: 'nack', nack };
    }
    case PACKET_FIELD.qoe: {
      const m = decodeStrict(QoeFeedbackType, bytes);
      const w: QoeWire = { pathId: m.pathId as number, alpha: m.alpha as number, fcdUs: m.fcdUs as number, feedbackSeq: m.feedbackSeq as number };
      if ((err = checkQoeWire(w)) !== null) return err;
      return { kind: 'qoe', qoe: { pathId: w.pathId, alpha: w.alpha, fcdMs: w.fcdUs / 1000, seq: w.feedbackSeq } };
    }
    case PACKET_FIELD.streamInfo: {
      const m = decodeStrict(StreamInfoType, bytes);
      const fpsMilli = m.fpsMilli as number;
      const streamInfo: StreamInfoMessage = {
        streamId: m.streamId as number,
        codec: m.codec as string,
        width: m.width as number,
        height: m.height as number,
        fps: fpsMilli / 1000,
      };
      return (err = checkStreamInfo(streamInfo)) !== null ? err : { kind: 'streamInfo', streamInfo };
    }
    case PACKET_FIELD.padding: {
      const m = decodeStrict(PaddingType, bytes);
      const size = m.size as number;
      const data = bytesOf(m.data);
      if (!isU32(size) || size > lim.maxPacketBytes) return `padding size ${size} > ${lim.maxPacketBytes}`;
      if (data.length !== size) return `padding size ${size} != data length ${data.length}`;
      return { kind: 'padding', padding: { size } };
    }
    case PACKET_FIELD.appData: {
      const m = decodeStrict(AppDataType, bytes);
      const appData: AppDataMessage = {
        seq: m.seq as number,
        reliable: m.reliable as boolean,
        text: m.text as boolean,
        payload: bytesOf(m.payload),
        skip: m.skip as boolean,
      };
      return (err = checkAppData(appData)) !== null ? err : { kind: 'appData', appData };
    }
    case PACKET_FIELD.appDataAck: {
      const m = decodeStrict(AppDataAckType, bytes);
      const raw = m.ranges as number[];
      if (raw.length > 2 * MAX_APP_DATA_ACK_RANGES) return `${raw.length / 2} ranges > ${MAX_APP_DATA_ACK_RANGES}`;
      const appDataAck: AppDataAckMessage = { cumulative: m.cumulative as number, ranges: raw.slice(), ackDelayUs: m.ackDelayUs as number };
      return (err = checkAppDataAck(appDataAck)) !== null ? err : { kind: 'appDataAck', appDataAck };
    }
    case PACKET_FIELD.audio: {
      const m = decodeStrict(AudioType, bytes);
      const audio: AudioMessage = {
        streamId: m.streamId as number,
        seq: m.seq as number,
        captureUs: u64(m.captureUs),
        durationUs: m.durationUs as number,
        payload: bytesOf(m.payload),
      };
      return (err = checkAudio(audio)) !== null ? err : { kind: 'audio', audio };
    }
    default:
      return `unknown body field ${field}`;
  }
}

function isBodyField(field: number): boolean {
  return (field >= PACKET_FIELD.media && field <= PACKET_FIELD.padding) || field === PACKET_FIELD.appData || field === PACKET_FIELD.appDataAck || field === PACKET_FIELD.audio;
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
  cur = 0;
  while (cur < end) {
    const tag = readVarint(bytes, end);
    const field = Math.floor(tag / 8);
    const wt = tag % 8;
    if (field === 0 || tag > UINT32_MAX) return fail('malformed', `illegal tag ${tag}`);
    if (field === PACKET_FIELD.pathId || field === PACKET_FIELD.pathSeq || field === PACKET_FIELD.sendTimeUs) {
      if (wt !== WT_VARINT) return fail('malformed', `wrong wire type ${wt} for envelope field ${field}`);
      const v = readVarint(bytes, end);
      if (field === PACKET_FIELD.pathId) pathId = v;
      else if (field === PACKET_FIELD.pathSeq) pathSeq = v;
      else sendTimeUs = v;
    } else if (isBodyField(field)) {
      if (wt !== WT_LEN) return fail('malformed', `wrong wire type ${wt} for body field ${field}`);
      if (bodyField !== 0) return fail('malformed', 'more than one body');
      const len = readVarint(bytes, end);
      if (len > end - cur) return fail('malformed', `body length ${len} past end of packet`);
      bodyField = field;
      bodyStart = cur;
      bodyEnd = cur + len;
      cur = bodyEnd;
    } else {
      skipField(bytes, end, wt); // unknown field: forward compatible
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
