/**
 * Pure helpers of the RTP-carrier feasibility experiment (see README.md here):
 * the bytes a sender-side `RTCRtpScriptTransform` writes into an encoded video
 * frame in place of the encoder's output, and the check the receiver-side
 * transform runs on what comes back.
 *
 * Layout of one carried payload (all integers big-endian):
 *   [0, 10)   VP8 prefix: a 3-byte delta-frame tag (P bit = 1), or the 10-byte
 *             key-frame header (tag with P bit = 0, start code 9d 01 2a, 14-bit
 *             width and height) that libwebrtc's VP8 depacketizer requires of a
 *             key frame (modules/rtp_rtcp/source/video_rtp_depacketizer_vp8.cc:
 *             a first packet with P = 0 and fewer than 10 payload bytes is
 *             dropped; width/height are read from bytes 6-9). RFC 6386 §9.1
 *             (frame tag) and §19.1 (key frame start code, size).
 *   [10, 14)  magic "RTPX"
 *   [14, 18)  sequence number (u32)
 *   [18, 22)  total payload length in bytes (u32)
 *   [22, 30)  send time, ms (f64, the worker's `performance.now()`)
 *   [30, len) filler from xorshift32 seeded by the sequence number, so the
 *             receiver can verify every byte without a copy of the original.
 */

export const VP8_PREFIX_BYTES = 10;
export const HEADER_BYTES = 30;
/** Smallest payload {@link buildPayload} writes. */
export const MIN_PAYLOAD_BYTES = HEADER_BYTES;
/** Largest payload {@link buildPayload} writes (bounds the experiment's allocations). */
export const MAX_PAYLOAD_BYTES = 1 << 20;
const MAGIC = [0x52, 0x54, 0x50, 0x58]; // "RTPX"

export type Vp8FrameKind = 'key' | 'delta';

/**
 * The 10-byte VP8 prefix. Key: frame tag (RFC 6386 §9.1: bit 0 = 0 key frame,
 * bits 1-3 version 0, bit 4 show_frame = 1, bits 5-23 first partition size),
 * start code 9d 01 2a, width and height (14 bits each, scale 0; §19.1).
 * Delta: the 3-byte tag with bit 0 = 1, then 7 zero bytes (part of "the
 * partition", which no depacketizer reads).
 *
 * @param firstPartitionBytes written into the tag's 19-bit size field (clamped)
 * @throws RangeError when width or height is not in 1..16383
 */
export function vp8Prefix(kind: Vp8FrameKind, width = 16, height = 16, firstPartitionBytes = 0): Uint8Array {
  if (!Number.isInteger(width) || width < 1 || width > 0x3fff) throw new RangeError(`vp8Prefix: width must be 1..16383, got ${width}`);
  if (!Number.isInteger(height) || height < 1 || height > 0x3fff) throw new RangeError(`vp8Prefix: height must be 1..16383, got ${height}`);
  const size = Math.max(0, Math.min(0x7ffff, Math.floor(firstPartitionBytes)));
  const tag = (kind === 'key' ? 0 : 1) | (1 << 4) | (size << 5);
  const out = new Uint8Array(VP8_PREFIX_BYTES);
  out[0] = tag & 0xff;
  out[1] = (tag >>> 8) & 0xff;
  out[2] = (tag >>> 16) & 0xff;
  if (kind === 'key') {
    out.set([0x9d, 0x01, 0x2a], 3);
    out[6] = width & 0xff;
    out[7] = width >>> 8;
    out[8] = height & 0xff;
    out[9] = height >>> 8;
  }
  return out;
}

/** What the receiver's VP8 depacketizer reads from the first payload byte: key frame when bit 0 is 0. */
export function vp8IsKeyFrame(payload: Uint8Array): boolean {
  return payload.length > 0 && (payload[0] & 1) === 0;
}

function xorshift32(state: number): number {
  let x = state | 0;
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return x >>> 0;
}

function fill(out: Uint8Array, from: number, seq: number): void {
  let s = (seq * 0x9e3779b1 + 0x7f4a7c15) >>> 0 || 1;
  for (let i = from; i < out.length; i++) {
    s = xorshift32(s);
    out[i] = s & 0xff;
  }
}

/**
 * Build one carried payload of exactly `bytes` bytes.
 * @throws RangeError when `bytes` is not an integer in MIN_PAYLOAD_BYTES..MAX_PAYLOAD_BYTES or seq is not a u32
 */
export function buildPayload(seq: number, bytes: number, sendMs: number, kind: Vp8FrameKind = 'delta'): Uint8Array {
  if (!Number.isInteger(bytes) || bytes < MIN_PAYLOAD_BYTES || bytes > MAX_PAYLOAD_BYTES) throw new RangeError(`buildPayload: bytes must be ${MIN_PAYLOAD_BYTES}..${MAX_PAYLOAD_BYTES}, got ${bytes}`);
  if (!Number.isInteger(seq) || seq < 0 || seq > 0xffffffff) throw new RangeError(`buildPayload: seq must be a u32, got ${seq}`);
  const out = new Uint8Array(bytes);
  out.set(vp8Prefix(kind), 0);
  out.set(MAGIC, VP8_PREFIX_BYTES);
  const v = new DataView(out.buffer);
  v.setUint32(14, seq);
  v.setUint32(18, bytes);
  v.setFloat64(22, sendMs);
  fill(out, HEADER_BYTES, seq);
  return out;
}

export type PayloadCheck = { ok: true; seq: number; bytes: number; sendMs: number } | { ok: false; reason: 'short' | 'magic' | 'length' | 'content'; seq?: number };

/**
 * Verify a payload written by {@link buildPayload}, byte for byte. `offset`
 * skips bytes the path added in front (none expected; H.264 start codes).
 */
export function checkPayload(data: Uint8Array, offset = 0): PayloadCheck {
  const p = offset ? data.subarray(offset) : data;
  if (p.length < HEADER_BYTES) return { ok: false, reason: 'short' };
  for (let i = 0; i < 4; i++) if (p[VP8_PREFIX_BYTES + i] !== MAGIC[i]) return { ok: false, reason: 'magic' };
  const v = new DataView(p.buffer, p.byteOffset, p.byteLength);
  const seq = v.getUint32(14);
  const bytes = v.getUint32(18);
  if (bytes !== p.length) return { ok: false, reason: 'length', seq };
  const ref = new Uint8Array(bytes);
  fill(ref, HEADER_BYTES, seq);
  for (let i = HEADER_BYTES; i < bytes; i++) if (ref[i] !== p[i]) return { ok: false, reason: 'content', seq };
  return { ok: true, seq, bytes, sendMs: v.getFloat64(22) };
}

/**
 * "Append" mode: the encoder's own frame, then our payload, then a 4-byte
 * trailer with the payload's length, so the receiver can give the decoder
 * the original frame back. Returns the combined bytes.
 */
export function appendPayload(encoded: Uint8Array, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(encoded.length + payload.length + 4);
  out.set(encoded, 0);
  out.set(payload, encoded.length);
  new DataView(out.buffer).setUint32(out.length - 4, payload.length);
  return out;
}

/** Split what {@link appendPayload} wrote; null when the trailer does not fit. */
export function splitAppended(data: Uint8Array): { encoded: Uint8Array; payload: Uint8Array } | null {
  if (data.length < 4) return null;
  const n = new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(data.length - 4);
  if (n + 4 > data.length) return null;
  const cut = data.length - 4 - n;
  return { encoded: data.subarray(0, cut), payload: data.subarray(cut, data.length - 4) };
}
