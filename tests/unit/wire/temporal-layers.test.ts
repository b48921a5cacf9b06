/**
 * Temporal-layer fields of Media (temporal_layer = 12, ref_distance = 13):
 * round trip with and without them, old bytes unchanged, bounds, and the
 * packetizer -> depacketizer path carrying them to the assembled frame.
 */
import { describe, expect, it } from 'vitest';
import { NalClass, Priority } from '../../../src/core/types.js';
import { Depacketizer, MAX_REF_DISTANCE, MAX_TEMPORAL_LAYER, Packetizer, WireError, decodeMedia, decodePacket, encodeMedia, encodePacket, type MediaMessage } from '../../../src/wire/index.js';
import type { InsertResult } from '../../../src/wire/depacketizer.js';
import { MediaType, newWriter } from './pb-reference.js';

function media(over: Partial<MediaMessage> = {}): MediaMessage {
  return {
    streamId: 1,
    flowSeq: 10,
    frameId: 42,
    fragIndex: 0,
    fragCount: 1,
    keyFrame: false,
    nalClass: NalClass.NonIdr,
    priority: Priority.Media,
    captureUs: 123_456,
    retransmission: false,
    payload: Uint8Array.from([0, 0, 0, 1, 0x41, 9, 9]),
    ...over,
  };
}

describe('wire: temporal layer fields', () => {
  it('round trips with the fields and without them (absent stays absent)', () => {
    const layered = media({ temporalLayer: 1, refDistance: 2 });
    expect(decodeMedia(encodeMedia(layered))).toEqual(layered);
    const plain = media();
    const back = decodeMedia(encodeMedia(plain));
    expect(back).toEqual(plain);
    expect(back && 'temporalLayer' in back).toBe(false);
    expect(back && 'refDistance' in back).toBe(false);
    const r = decodePacket(encodePacket({ pathId: 1, pathSeq: 5, sendTimeUs: 99 }, 'media', encodeMedia(layered)));
    expect(r.ok && r.packet.body.kind === 'media' && r.packet.body.media.temporalLayer).toBe(1);
    expect(r.ok && r.packet.body.kind === 'media' && r.packet.body.media.refDistance).toBe(2);
  });

  it('a body without the fields is byte-identical to the old encoding (fields 1-11 only)', () => {
    const m = media();
    const bytes = encodeMedia(m);
    // Field numbers present in the encoding.
    const fields = new Set<number>();
    const decoded = MediaType.decode(bytes) as unknown as Record<string, unknown>;
    for (const k of Object.keys(decoded)) fields.add(MediaType.fields[k]?.id ?? -1);
    expect([...fields].every((f) => f >= 1 && f <= 11)).toBe(true);
    expect(MediaType.encode({ ...m }, newWriter()).finish()).toEqual(bytes);
  });

  it('rejects out-of-range values on encode and drops them on decode', () => {
    expect(() => encodeMedia(media({ temporalLayer: MAX_TEMPORAL_LAYER + 1 }))).toThrow(WireError);
    expect(() => encodeMedia(media({ refDistance: MAX_REF_DISTANCE + 1 }))).toThrow(WireError);
    expect(() => encodeMedia(media({ refDistance: 0 }))).toThrow(WireError);
    const bad = MediaType.encode({ ...media(), temporalLayer: 99 }, newWriter()).finish();
    expect(decodeMedia(bad)).toBeUndefined();
  });

  it('only frames that carry the fields pay for them: both fit the MTU, unlayered fragments carry 4 bytes more', () => {
    const pk = new Packetizer({ streamId: 3, mtuBytes: 300 });
    expect(pk.maxPayloadLayeredBytes).toBe(pk.maxPayloadBytes - 4);
    const data = new Uint8Array(3000).fill(0x9d);
    const plain = pk.packetize({ streamId: 3, frameId: 1, keyFrame: false, captureUs: 1000, data, codec: 'vp8' });
    const layered = pk.packetize({ streamId: 3, frameId: 2, keyFrame: false, captureUs: 2000, data, codec: 'vp8', temporalLayer: 2, refDistance: 64 });
    for (const f of [...plain, ...layered]) expect(f.sizeBytes).toBeLessThanOrEqual(300);
    expect(plain.length).toBe(Math.ceil(3000 / pk.maxPayloadBytes));
    expect(layered.length).toBe(Math.ceil(3000 / pk.maxPayloadLayeredBytes));
  });

  it('packetizer tags every fragment; the depacketizer hands the fields to the frame', () => {
    const pk = new Packetizer({ streamId: 3, mtuBytes: 300 });
    const data = new Uint8Array(1000).fill(0xab);
    data.set([0, 0, 0, 1, 0x41]);
    const frags = pk.packetize({ streamId: 3, frameId: 7, keyFrame: false, captureUs: 1000, data, codec: 'h264', temporalLayer: 0, refDistance: 2 });
    expect(frags.length).toBeGreaterThan(3);
    for (const f of frags) {
      expect(f.temporalLayer).toBeUndefined(); // base layer: default, not sent
      expect(f.refDistance).toBe(2);
      expect(f.sizeBytes).toBeLessThanOrEqual(300);
    }
    const up = pk.packetize({ streamId: 3, frameId: 8, keyFrame: false, captureUs: 2000, data, codec: 'h264', temporalLayer: 1 });
    const dp = new Depacketizer();
    let frame: InsertResult['frame'];
    for (const f of up) {
      const m = decodeMedia(f.body);
      expect(m?.temporalLayer).toBe(1);
      expect(m?.refDistance).toBeUndefined();
      const res = dp.insert(m as MediaMessage, 0, 5000, false);
      if (res.frame) frame = res.frame;
    }
    expect(frame?.temporalLayer).toBe(1);
    expect(frame?.refDistance).toBeUndefined();
    let f2: InsertResult['frame'];
    for (const f of frags) f2 = dp.insert(decodeMedia(f.body) as MediaMessage, 0, 6000, false).frame ?? f2;
    expect(f2?.refDistance).toBe(2);
    expect(() => pk.packetize({ streamId: 3, frameId: 9, keyFrame: false, captureUs: 3000, data, codec: 'h264', refDistance: 0 })).toThrow(WireError);
  });
});
