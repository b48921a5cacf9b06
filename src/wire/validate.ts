/**
 * Field validators shared by the encoders (a failure is caller misuse and
 * throws) and the decoder (a failure is a counted 'bad-field' drop). Each
 * returns `null` when the message is valid, or a short human-readable detail.
 *
 * Bounds: multipath.proto comments; report range / arrivals after
 * draft-holmer-rmcat-transport-wide-cc-extensions (a feedback message covers at
 * most 2^16 sequence numbers); NACK list bound after RFC 4585 §6.2.1 generic
 * NACK (we cap the list instead of using BLP bitmasks).
 */
import { MAX_PATHS } from '../core/types.js';
import type { PathReport } from '../core/types.js';
import { seqDiff } from '../core/seq.js';
import { MAX_TIMESTAMP_US } from './sizes.js';
import { MAX_REF_DISTANCE, MAX_TEMPORAL_LAYER } from './types.js';
import { MAX_APP_DATA_ACK_RANGES, MAX_APP_DATA_BYTES, MAX_AUDIO_DURATION_US, MAX_AUDIO_PAYLOAD_BYTES } from './types.js';
import type {
  AppDataAckMessage,
  AppDataMessage,
  AudioMessage,
  ClockEchoMessage,
  FecMessage,
  KeyframeRequestMessage,
  MediaMessage,
  NackMessage,
  PacketHeader,
  StreamInfoMessage,
  WireLimits,
} from './types.js';

/** Largest NalClass enum value (NalClass.Delta). */
const MAX_NAL_CLASS = 6;
/** StreamInfo bounds. */
export const MAX_CODEC_CHARS = 64;
export const MAX_DIMENSION = 8192;
export const MAX_FPS = 240;
/** FEC mask: 1..8 bytes (at most 64 protected packets). */
export const MAX_FEC_MASK_BYTES = 8;

/** True for an integer in [0, 2^32 - 1]. */
export function isU32(x: unknown): x is number {
  return typeof x === 'number' && x === x >>> 0;
}

/** True for an integer in [0, 2^53] (µs timestamps). */
export function isTimestampUs(x: unknown): x is number {
  return typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= MAX_TIMESTAMP_US;
}

function isPathId(x: unknown): boolean {
  return typeof x === 'number' && Number.isInteger(x) && x >= 0 && x < MAX_PATHS;
}

function isIntIn(x: unknown, lo: number, hi: number): boolean {
  return typeof x === 'number' && Number.isInteger(x) && x >= lo && x <= hi;
}

export function checkHeader(h: PacketHeader): string | null {
  if (!isPathId(h.pathId)) return `pathId ${h.pathId} not in [0, ${MAX_PATHS})`;
  if (!isU32(h.pathSeq)) return `pathSeq ${h.pathSeq} not a uint32`;
  if (!isTimestampUs(h.sendTimeUs)) return `sendTimeUs ${h.sendTimeUs} not an integer in [0, 2^53]`;
  return null;
}

export function checkMedia(m: MediaMessage, lim: WireLimits): string | null {
  if (!isU32(m.streamId)) return `streamId ${m.streamId} not a uint32`;
  if (!isU32(m.flowSeq)) return `flowSeq ${m.flowSeq} not a uint32`;
  if (!isU32(m.frameId)) return `frameId ${m.frameId} not a uint32`;
  if (!isIntIn(m.fragCount, 1, lim.maxFragments)) return `fragCount ${m.fragCount} not in [1, ${lim.maxFragments}]`;
  if (!isIntIn(m.fragIndex, 0, m.fragCount - 1)) return `fragIndex ${m.fragIndex} not in [0, fragCount ${m.fragCount})`;
  if (typeof m.keyFrame !== 'boolean') return 'keyFrame not a boolean';
  if (!isIntIn(m.nalClass, 0, MAX_NAL_CLASS)) return `nalClass ${m.nalClass} unknown`;
  if (!isIntIn(m.priority, 1, 6)) return `priority ${m.priority} not in [1, 6]`;
  if (!isTimestampUs(m.captureUs)) return `captureUs ${m.captureUs} not an integer in [0, 2^53]`;
  if (typeof m.retransmission !== 'boolean') return 'retransmission not a boolean';
  if (!(m.payload instanceof Uint8Array)) return 'payload not a Uint8Array';
  if (m.payload.length > lim.maxPacketBytes) return `payload ${m.payload.length} bytes > ${lim.maxPacketBytes}`;
  if (m.temporalLayer !== undefined && !isIntIn(m.temporalLayer, 0, MAX_TEMPORAL_LAYER)) return `temporalLayer ${m.temporalLayer} not in [0, ${MAX_TEMPORAL_LAYER}]`;
  if (m.refDistance !== undefined && !isIntIn(m.refDistance, 1, MAX_REF_DISTANCE)) return `refDistance ${m.refDistance} not in [1, ${MAX_REF_DISTANCE}]`;
  return null;
}

export function checkFec(f: FecMessage, lim: WireLimits): string | null {
  if (!isU32(f.streamId)) return `streamId ${f.streamId} not a uint32`;
  if (!isU32(f.baseSeq)) return `baseSeq ${f.baseSeq} not a uint32`;
  if (!(f.mask instanceof Uint8Array) || f.mask.length < 1 || f.mask.length > MAX_FEC_MASK_BYTES) {
    return `mask must be 1..${MAX_FEC_MASK_BYTES} bytes`;
  }
  let any = 0;
  for (let i = 0; i < f.mask.length; i++) any |= f.mask[i];
  if (any === 0) return 'mask protects no packet (all zero)';
  if (!isU32(f.lengthXor)) return `lengthXor ${f.lengthXor} not a uint32`;
  if (!(f.parity instanceof Uint8Array)) return 'parity not a Uint8Array';
  if (f.parity.length > lim.maxPacketBytes) return `parity ${f.parity.length} bytes > ${lim.maxPacketBytes}`;
  if (!isPathId(f.protectsPath)) return `protectsPath ${f.protectsPath} not in [0, ${MAX_PATHS})`;
  if (!isU32(f.fecSeq)) return `fecSeq ${f.fecSeq} not a uint32`;
  if (f.code !== undefined && (!Number.isInteger(f.code) || f.code < 0 || f.code > 255)) return `code ${f.code} not in [0, 255]`;
  return null;
}

export function checkReport(r: PathReport, lim: WireLimits): string | null {
  if (!isPathId(r.pathId)) return `pathId ${r.pathId} not in [0, ${MAX_PATHS})`;
  if (!isU32(r.beginSeq) || !isU32(r.endSeq)) return 'beginSeq/endSeq not uint32';
  const span = seqDiff(r.beginSeq, r.endSeq);
  if (span < 0) return `endSeq ${r.endSeq} before beginSeq ${r.beginSeq}`;
  if (span > lim.maxReportRange) return `report range ${span} > ${lim.maxReportRange}`;
  if (!Array.isArray(r.arrivals)) return 'arrivals not an array';
  if (r.arrivals.length > lim.maxReportArrivals) return `${r.arrivals.length} arrivals > ${lim.maxReportArrivals}`;
  for (let i = 0; i < r.arrivals.length; i++) {
    const a = r.arrivals[i];
    if (!isU32(a.pathSeq)) return `arrival ${i} pathSeq not a uint32`;
    const off = seqDiff(r.beginSeq, a.pathSeq);
    if (off < 0 || off > span) return `arrival pathSeq ${a.pathSeq} outside [${r.beginSeq}, ${r.endSeq}]`;
    if (!isTimestampUs(a.arrivalUs)) return `arrival ${i} arrivalUs not an integer in [0, 2^53]`;
  }
  if (!isTimestampUs(r.reportTimeUs)) return `reportTimeUs ${r.reportTimeUs} not an integer in [0, 2^53]`;
  if (r.fcdUs !== undefined && !isU32(r.fcdUs)) return `fcdUs ${r.fcdUs} not a uint32`;
  return null;
}

export function checkKeyframeRequest(k: KeyframeRequestMessage): string | null {
  if (!isU32(k.streamId)) return `streamId ${k.streamId} not a uint32`;
  if (!isU32(k.requestId)) return `requestId ${k.requestId} not a uint32`;
  return null;
}

export function checkNack(n: NackMessage, lim: WireLimits): string | null {
  if (!isU32(n.streamId)) return `streamId ${n.streamId} not a uint32`;
  if (!Array.isArray(n.flowSeqs)) return 'flowSeqs not an array';
  if (n.flowSeqs.length > lim.maxNackSeqs) return `${n.flowSeqs.length} flowSeqs > ${lim.maxNackSeqs}`;
  for (let i = 0; i < n.flowSeqs.length; i++) if (!isU32(n.flowSeqs[i])) return `flowSeqs[${i}] not a uint32`;
  return null;
}

/** Wire form of QoeFeedback (µs and integer alpha). */
export interface QoeWire {
  pathId: number;
  alpha: number;
  fcdUs: number;
  feedbackSeq: number;
}

export function checkQoeWire(q: QoeWire): string | null {
  if (!isPathId(q.pathId)) return `pathId ${q.pathId} not in [0, ${MAX_PATHS})`;
  if (!isIntIn(q.alpha, -0x8000_0000, 0x7fff_ffff)) return `alpha ${q.alpha} not an int32`;
  if (!isU32(q.fcdUs)) return `fcdUs ${q.fcdUs} not a uint32`;
  if (!isU32(q.feedbackSeq)) return `feedbackSeq ${q.feedbackSeq} not a uint32`;
  return null;
}

/** True for 1..64 printable ASCII characters (WebCodecs codec strings). */
export function isCodecString(s: unknown): boolean {
  if (typeof s !== 'string' || s.length < 1 || s.length > MAX_CODEC_CHARS) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

export function checkStreamInfo(s: StreamInfoMessage): string | null {
  if (!isU32(s.streamId)) return `streamId ${s.streamId} not a uint32`;
  if (!isCodecString(s.codec)) return `codec must be 1..${MAX_CODEC_CHARS} printable ASCII chars`;
  if (!isIntIn(s.width, 1, MAX_DIMENSION)) return `width ${s.width} not in [1, ${MAX_DIMENSION}]`;
  if (!isIntIn(s.height, 1, MAX_DIMENSION)) return `height ${s.height} not in [1, ${MAX_DIMENSION}]`;
  if (typeof s.fps !== 'number' || !(s.fps > 0 && s.fps <= MAX_FPS)) return `fps ${s.fps} not in (0, ${MAX_FPS}]`;
  return null;
}

/**
 * Why a Media fragment offered to the depacketizer cannot be stored (fields
 * out of range, wrong types, a path id outside [0, MAX_PATHS), a non-finite
 * arrival time), or null when it can. `fragCount` is bounded by both
 * `maxFragments` (wire limit) and `maxPackets` (the depacketizer's store).
 */
export function fragmentProblem(m: MediaMessage, pathId: number, arrivalUs: number, maxFragments: number, maxPackets: number): string | null {
  if (m === null || typeof m !== 'object') return 'not a Media message';
  if (!isU32(m.streamId) || !isU32(m.frameId)) return 'streamId/frameId not uint32';
  const fc = m.fragCount;
  if (!Number.isInteger(fc) || fc < 1 || fc > maxFragments || fc > maxPackets) {
    return `fragCount ${fc} not in [1, ${Math.min(maxFragments, maxPackets)}]`;
  }
  if (!Number.isInteger(m.fragIndex) || m.fragIndex < 0 || m.fragIndex >= fc) return `fragIndex ${m.fragIndex} not in [0, ${fc})`;
  if (!(m.payload instanceof Uint8Array)) return 'payload not a Uint8Array';
  if (typeof m.keyFrame !== 'boolean') return 'keyFrame not a boolean';
  if (typeof m.captureUs !== 'number' || !Number.isFinite(m.captureUs)) return 'captureUs not finite';
  if (!Number.isInteger(pathId) || pathId < 0 || pathId >= MAX_PATHS) return `pathId ${pathId} not in [0, ${MAX_PATHS})`;
  if (typeof arrivalUs !== 'number' || !Number.isFinite(arrivalUs)) return 'arrivalUs not finite';
  return null;
}

/** AppData: uint32 seq, at most {@link MAX_APP_DATA_BYTES} of payload, a skip marker is reliable and empty. */
export function checkAppData(d: AppDataMessage): string | null {
  if (!isU32(d.seq)) return `seq ${d.seq} not a uint32`;
  if (typeof d.reliable !== 'boolean' || typeof d.text !== 'boolean' || typeof d.skip !== 'boolean') return 'reliable/text/skip not booleans';
  if (!(d.payload instanceof Uint8Array)) return 'payload not a Uint8Array';
  if (d.payload.length > MAX_APP_DATA_BYTES) return `payload ${d.payload.length} bytes > ${MAX_APP_DATA_BYTES}`;
  if (d.skip && (!d.reliable || d.payload.length > 0)) return 'skip marker must be reliable and empty';
  return null;
}

/**
 * AppDataAck: at most {@link MAX_APP_DATA_ACK_RANGES} [start, end) pairs,
 * each non-empty, ascending, disjoint and above `cumulative` (RFC 1982 serial
 * order), all within 2^16 of it (a receiver never buffers further ahead).
 */
export function checkAppDataAck(a: AppDataAckMessage): string | null {
  if (!isU32(a.cumulative)) return `cumulative ${a.cumulative} not a uint32`;
  if (!isU32(a.ackDelayUs)) return `ackDelayUs ${a.ackDelayUs} not a uint32`;
  if (!Array.isArray(a.ranges)) return 'ranges not an array';
  if (a.ranges.length % 2 !== 0) return `ranges has an odd length ${a.ranges.length}`;
  if (a.ranges.length > 2 * MAX_APP_DATA_ACK_RANGES) return `${a.ranges.length / 2} ranges > ${MAX_APP_DATA_ACK_RANGES}`;
  let prev = 0; // offset of the previous end from cumulative
  for (let i = 0; i < a.ranges.length; i += 2) {
    if (!isU32(a.ranges[i]) || !isU32(a.ranges[i + 1])) return `ranges[${i}] not uint32`;
    const s = seqDiff(a.cumulative, a.ranges[i]);
    const e = seqDiff(a.cumulative, a.ranges[i + 1]);
    if (s <= prev || e <= s || e > 0x1_0000) return `range ${i / 2} [${a.ranges[i]}, ${a.ranges[i + 1]}) not ascending above cumulative ${a.cumulative}`;
    prev = e;
  }
  return null;
}

export function checkClockEcho(c: ClockEchoMessage): string | null {
  if (!isTimestampUs(c.echoUs)) return `echoUs ${c.echoUs} not an integer in [0, 2^53]`;
  if (!isU32(c.holdUs)) return `holdUs ${c.holdUs} not a uint32`;
  return null;
}

/** Audio: uint32 stream id and seq, a µs capture time, a duration in (0, 120 ms], at most 1275 payload bytes (RFC 6716 §3.2.1). */
export function checkAudio(a: AudioMessage): string | null {
  if (!isU32(a.streamId)) return `streamId ${a.streamId} not a uint32`;
  if (!isU32(a.seq)) return `seq ${a.seq} not a uint32`;
  if (!isTimestampUs(a.captureUs)) return `captureUs ${a.captureUs} not a µs timestamp`;
  if (!isU32(a.durationUs) || a.durationUs === 0 || a.durationUs > MAX_AUDIO_DURATION_US) return `durationUs ${a.durationUs} not in (0, ${MAX_AUDIO_DURATION_US}]`;
  if (!(a.payload instanceof Uint8Array)) return 'payload not a Uint8Array';
  if (a.payload.length > MAX_AUDIO_PAYLOAD_BYTES) return `payload ${a.payload.length} bytes > ${MAX_AUDIO_PAYLOAD_BYTES}`;
  return null;
}
