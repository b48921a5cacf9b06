import { describe, expect, it } from 'vitest';
import { HEADER_BYTES, MIN_PAYLOAD_BYTES, appendPayload, buildPayload, checkPayload, splitAppended, vp8IsKeyFrame, vp8Prefix } from '../../../tools/experiments/rtp-carrier/payload.js';

describe('RTP-carrier experiment payloads (tools/experiments/rtp-carrier)', () => {
  it('writes the VP8 key-frame header the depacketizer reads (RFC 6386 §9.1, §19.1)', () => {
    const k = vp8Prefix('key', 640, 480, 1234);
    expect(k.length).toBe(10);
    expect(k[0] & 1).toBe(0); // P bit 0: key frame
    expect((k[0] >> 4) & 1).toBe(1); // show_frame
    expect(((k[0] | (k[1] << 8) | (k[2] << 16)) >>> 5) & 0x7ffff).toBe(1234);
    expect([...k.subarray(3, 6)]).toEqual([0x9d, 0x01, 0x2a]);
    expect((k[6] | (k[7] << 8)) & 0x3fff).toBe(640);
    expect((k[8] | (k[9] << 8)) & 0x3fff).toBe(480);
    const d = vp8Prefix('delta');
    expect(d[0] & 1).toBe(1);
    expect(vp8IsKeyFrame(k)).toBe(true);
    expect(vp8IsKeyFrame(d)).toBe(false);
    expect(() => vp8Prefix('key', 0, 10)).toThrow(RangeError);
    expect(() => vp8Prefix('key', 10, 16384)).toThrow(RangeError);
  });

  it('round-trips payloads of every size and rejects any changed byte', () => {
    for (const size of [MIN_PAYLOAD_BYTES, 100, 1200, 60_000]) {
      const p = buildPayload(7, size, 123.5, 'key');
      expect(p.length).toBe(size);
      expect(checkPayload(p)).toEqual({ ok: true, seq: 7, bytes: size, sendMs: 123.5 });
    }
    const p = buildPayload(9, 500, 1);
    const bad = p.slice();
    bad[HEADER_BYTES + 17] ^= 1;
    expect(checkPayload(bad)).toMatchObject({ ok: false, reason: 'content', seq: 9 });
    expect(checkPayload(p.subarray(0, 499))).toMatchObject({ ok: false, reason: 'length' });
    expect(checkPayload(p.subarray(0, 10))).toMatchObject({ ok: false, reason: 'short' });
    const wrongMagic = p.slice();
    wrongMagic[11] = 0;
    expect(checkPayload(wrongMagic)).toMatchObject({ ok: false, reason: 'magic' });
    // Different sequence numbers give different filler.
    expect(buildPayload(1, 200, 0).subarray(HEADER_BYTES)).not.toEqual(buildPayload(2, 200, 0).subarray(HEADER_BYTES));
    expect(() => buildPayload(1, MIN_PAYLOAD_BYTES - 1, 0)).toThrow(RangeError);
    expect(() => buildPayload(-1, 100, 0)).toThrow(RangeError);
  });

  it('appends after the encoder frame and splits it back', () => {
    const enc = new Uint8Array([1, 2, 3, 4, 5]);
    const p = buildPayload(3, 64, 2);
    const both = appendPayload(enc, p);
    const parts = splitAppended(both);
    expect(parts && [...parts.encoded]).toEqual([1, 2, 3, 4, 5]);
    expect(parts && checkPayload(parts.payload).ok).toBe(true);
    expect(splitAppended(new Uint8Array([0, 0, 1]))).toBeNull();
    expect(splitAppended(new Uint8Array([0, 0, 0, 9]))).toBeNull();
  });
});
