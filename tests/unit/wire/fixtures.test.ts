import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { NalClass, Priority } from '../../../src/core/types.js';
import { Depacketizer, Packetizer, decodePacket, encodePacket, type EncodedFrameInput, type PacketizedFragment } from '../../../src/wire/index.js';

const read = (rel: string): Uint8Array => new Uint8Array(readFileSync(fileURLToPath(new URL(`../../fixtures/${rel}`, import.meta.url))));

const h264Key = read('h264/key.264');
const h264Delta = read('h264/delta.264');
const vp8Key = read('vp8/key.vp8');
const vp8Delta = read('vp8/delta.vp8');

function roundTrip(p: Packetizer, d: Depacketizer, frame: EncodedFrameInput): { frags: PacketizedFragment[]; data: Uint8Array } {
  const frags = p.packetize(frame);
  let out: Uint8Array | undefined;
  // reverse order over two paths, through the real envelope
  [...frags].reverse().forEach((f, i) => {
    const r = decodePacket(encodePacket({ pathId: i % 2, pathSeq: i, sendTimeUs: 1000 + i }, 'media', f.body));
    if (!r.ok || r.packet.body.kind !== 'media') throw new Error('decode failed');
    const ins = d.insert(r.packet.body.media, r.packet.pathId, 2000 + i);
    if (ins.status === 'completed') out = ins.frame!.data;
  });
  if (!out) throw new Error('frame not completed');
  return { frags, data: out };
}

describe('packetizer + depacketizer on real Chromium encoder output', () => {
  it('H.264 key AU: SPS, PPS, IDR fragments with their priorities, byte-exact reassembly', () => {
    const p = new Packetizer({ streamId: 1 });
    const d = new Depacketizer();
    const { frags, data } = roundTrip(p, d, { streamId: 1, frameId: 0, keyFrame: true, captureUs: 0, data: h264Key, codec: 'h264' });
    expect(Buffer.from(data).equals(Buffer.from(h264Key))).toBe(true);
    expect(frags[0]).toMatchObject({ nalClass: NalClass.Sps, priority: Priority.Sps });
    expect(frags[1]).toMatchObject({ nalClass: NalClass.Pps, priority: Priority.Pps });
    const idr = frags.slice(2);
    expect(idr.length).toBeGreaterThanOrEqual(1);
    for (const f of idr) expect(f).toMatchObject({ nalClass: NalClass.Idr, priority: Priority.Keyframe, keyFrame: true });
    for (const f of frags) expect(f.sizeBytes).toBeLessThanOrEqual(1200);
  });

  it('H.264 delta AU: non-IDR fragments priority 6, byte-exact reassembly (also at a small MTU)', () => {
    for (const mtuBytes of [1200, 300]) {
      const p = new Packetizer({ streamId: 1, mtuBytes });
      const d = new Depacketizer();
      const { frags, data } = roundTrip(p, d, { streamId: 1, frameId: 1, keyFrame: false, captureUs: 33_333, data: h264Delta, codec: 'h264' });
      expect(Buffer.from(data).equals(Buffer.from(h264Delta))).toBe(true);
      expect(frags.length).toBeGreaterThan(1);
      for (const f of frags) expect(f).toMatchObject({ nalClass: NalClass.NonIdr, priority: Priority.Media, keyFrame: false });
    }
  });

  it('VP8 key/delta pair: Key/Delta classes, byte-exact reassembly', () => {
    const p = new Packetizer({ streamId: 4, mtuBytes: 400 });
    const d = new Depacketizer();
    const k = roundTrip(p, d, { streamId: 4, frameId: 0, keyFrame: true, captureUs: 0, data: vp8Key, codec: 'vp8' });
    const dl = roundTrip(p, d, { streamId: 4, frameId: 1, keyFrame: false, captureUs: 33_333, data: vp8Delta, codec: 'vp8' });
    expect(Buffer.from(k.data).equals(Buffer.from(vp8Key))).toBe(true);
    expect(Buffer.from(dl.data).equals(Buffer.from(vp8Delta))).toBe(true);
    expect(k.frags.every((f) => f.nalClass === NalClass.Key && f.priority === Priority.Keyframe)).toBe(true);
    expect(dl.frags.every((f) => f.nalClass === NalClass.Delta && f.priority === Priority.Media)).toBe(true);
    // VP8 key frame: frame tag bit 0 clear and start code 9d 01 2a (RFC 6386 §9.1)
    expect(vp8Key[0] & 1).toBe(0);
    expect(Array.from(vp8Key.subarray(3, 6))).toEqual([0x9d, 0x01, 0x2a]);
    expect(vp8Delta[0] & 1).toBe(1);
  });
});
