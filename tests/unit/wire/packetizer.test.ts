import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NalClass, Priority } from '../../../src/core/types.js';
import type { OutgoingPacket } from '../../../src/core/types.js';
import {
  DEFAULT_MTU_BYTES,
  Packetizer,
  WireError,
  decodeMedia,
  decodePacket,
  encodeMedia,
  encodePacket,
  originalMediaBody,
  retransmissionBody,
  type EncodedFrameInput,
  type PacketizedFragment,
} from '../../../src/wire/index.js';

/** Worst-case envelope: every header field at its largest encoding. */
const WORST_HEADER = { pathId: 7, pathSeq: 2 ** 32 - 1, sendTimeUs: 2 ** 52 };

function h264Frame(nals: number[][], keyFrame: boolean, over: Partial<EncodedFrameInput> = {}): EncodedFrameInput {
  const bytes: number[] = [];
  for (const [i, n] of nals.entries()) bytes.push(...(i % 2 === 0 ? [0, 0, 0, 1] : [0, 0, 1]), ...n);
  return { streamId: 1, frameId: 10, keyFrame, captureUs: 2 ** 53, data: Uint8Array.from(bytes), codec: 'h264', ...over };
}

function nal(type: number, len: number, fill = 0xab): number[] {
  return [0x60 | type, ...new Array(Math.max(0, len - 1)).fill(fill)];
}

function concatPayloads(frags: PacketizedFragment[]): number[] {
  return Array.from(Buffer.concat([...frags].sort((a, b) => a.fragIndex - b.fragIndex).map((f) => f.payload)));
}

function sameBytes(frags: PacketizedFragment[], data: Uint8Array): boolean {
  return Buffer.concat([...frags].sort((a, b) => a.fragIndex - b.fragIndex).map((f) => f.payload)).equals(data);
}

function worstCaseEnvelopeSize(f: PacketizedFragment): number {
  const rtx = retransmissionBody(f.body);
  return Math.max(encodePacket(WORST_HEADER, 'media', f.body).length, encodePacket(WORST_HEADER, 'media', rtx).length);
}

describe('Packetizer', () => {
  it('H.264 key frame: NAL-aligned fragments, classes and priorities, byte-exact concatenation', () => {
    const frame = h264Frame([nal(9, 2), nal(7, 12), nal(8, 5), nal(6, 30), nal(5, 3000)], true);
    const p = new Packetizer({ streamId: 1 });
    const frags = p.packetize(frame);
    expect(concatPayloads(frags)).toEqual(Array.from(frame.data));
    const classes = frags.map((f) => f.nalClass);
    expect(classes.slice(0, 4)).toEqual([NalClass.Other, NalClass.Sps, NalClass.Pps, NalClass.Other]);
    expect(classes.slice(4).every((c) => c === NalClass.Idr)).toBe(true);
    expect(frags.length).toBe(4 + Math.ceil((3000 + 4) / p.maxPayloadBytes));
    expect(frags.map((f) => f.priority)).toEqual([Priority.Keyframe, Priority.Sps, Priority.Pps, Priority.Keyframe, ...frags.slice(4).map(() => Priority.Keyframe)]);
    for (const f of frags) {
      expect(f.fragCount).toBe(frags.length);
      expect(f.keyFrame).toBe(true);
      expect(f.retransmission).toBe(false);
      // each fragment starts with a start code or continues a single NAL: never two start codes
      const starts = [...f.payload].filter((_, i, a) => a[i] === 0 && a[i + 1] === 0 && a[i + 2] === 1).length;
      expect(starts).toBeLessThanOrEqual(1);
      const { body, sizeBytes: _size, ...fields } = f;
      expect(decodeMedia(body)).toEqual(fields);
      expect(Buffer.from(encodeMedia(fields)).equals(Buffer.from(body))).toBe(true);
    }
    // IDR pieces are balanced (differ by at most one byte)
    const idrSizes = frags.slice(4).map((f) => f.payload.length);
    expect(Math.max(...idrSizes) - Math.min(...idrSizes)).toBeLessThanOrEqual(1);
  });

  it('H.264 delta frame: non-IDR priority 6, SPS in a delta frame still 3', () => {
    const frags = new Packetizer({ streamId: 1 }).packetize(h264Frame([nal(7, 10), nal(1, 2000)], false));
    expect(frags[0].nalClass).toBe(NalClass.Sps);
    expect(frags[0].priority).toBe(Priority.Sps);
    for (const f of frags.slice(1)) {
      expect(f.nalClass).toBe(NalClass.NonIdr);
      expect(f.priority).toBe(Priority.Media);
      expect(f.keyFrame).toBe(false);
    }
  });

  it('VP8/VP9/AV1: key fragments priority 2 class Key, delta priority 6 class Delta', () => {
    for (const codec of ['vp8', 'vp9', 'av1'] as const) {
      const p = new Packetizer({ streamId: 2, mtuBytes: 500 });
      const data = Uint8Array.from({ length: 5000 }, (_, i) => i * 7);
      const key = p.packetize({ streamId: 2, frameId: 1, keyFrame: true, captureUs: 5, data, codec });
      expect(key.every((f) => f.priority === Priority.Keyframe && f.nalClass === NalClass.Key)).toBe(true);
      expect(concatPayloads(key)).toEqual(Array.from(data));
      const delta = p.packetize({ streamId: 2, frameId: 2, keyFrame: false, captureUs: 6, data: data.subarray(0, 700), codec });
      expect(delta.every((f) => f.priority === Priority.Media && f.nalClass === NalClass.Delta)).toBe(true);
      expect(delta.length).toBe(2);
    }
  });

  it('flow seqs are consecutive across frames and wrap at 2^32', () => {
    const p = new Packetizer({ streamId: 1, initialFlowSeq: 2 ** 32 - 3 });
    const a = p.packetize({ streamId: 1, frameId: 0, keyFrame: false, captureUs: 0, data: new Uint8Array(3000), codec: 'vp8' });
    const b = p.packetize({ streamId: 1, frameId: 1, keyFrame: false, captureUs: 0, data: new Uint8Array(10), codec: 'vp8' });
    expect([...a, ...b].map((f) => f.flowSeq)).toEqual([2 ** 32 - 3, 2 ** 32 - 2, 2 ** 32 - 1, 0]);
    expect(p.nextFlowSeq).toBe(1);
  });

  it('empty frame gives one empty fragment; garbage H.264 is carried verbatim', () => {
    const p = new Packetizer({ streamId: 1 });
    const e = p.packetize({ streamId: 1, frameId: 0, keyFrame: false, captureUs: 0, data: new Uint8Array(0), codec: 'h264' });
    expect(e.length).toBe(1);
    expect(e[0].payload.length).toBe(0);
    const junk = Uint8Array.from({ length: 3000 }, (_, i) => ((i * 31 + 7) & 0xff) | 0x10);
    const g = p.packetize({ streamId: 1, frameId: 1, keyFrame: false, captureUs: 0, data: junk, codec: 'h264' });
    expect(concatPayloads(g)).toEqual(Array.from(junk));
    expect(g.every((f) => f.nalClass === NalClass.Other)).toBe(true);
  });

  it('fragments are structurally OutgoingPackets', () => {
    const [f] = new Packetizer({ streamId: 1 }).packetize(h264Frame([nal(1, 10)], false));
    const out: OutgoingPacket = f;
    expect(out.body).toBe(f.body);
    expect(out.sizeBytes).toBeGreaterThanOrEqual(encodePacket(WORST_HEADER, 'media', f.body).length);
  });

  it('MTU fit: every envelope with worst-case header (and as a retransmission) fits mtuBytes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 200, max: 9000 }),
        fc.nat({ max: 2 ** 32 - 1 }),
        fc.nat({ max: 2 ** 32 - 1 }),
        fc.array(fc.tuple(fc.constantFrom(1, 5, 6, 7, 8, 9), fc.integer({ min: 1, max: 6000 })), { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        (mtu, streamId, frameId, nals, keyFrame) => {
          const p = new Packetizer({ streamId, mtuBytes: mtu, initialFlowSeq: 2 ** 32 - 2 });
          const frame = h264Frame(
            nals.map(([t, n]) => nal(t, n)),
            keyFrame,
            { streamId, frameId, captureUs: 2 ** 53 },
          );
          const frags = p.packetize(frame);
          expect(sameBytes(frags, frame.data)).toBe(true);
          for (const f of frags) {
            const worst = worstCaseEnvelopeSize(f);
            expect(worst).toBeLessThanOrEqual(mtu);
            expect(f.sizeBytes).toBeGreaterThanOrEqual(encodePacket(WORST_HEADER, 'media', f.body).length);
            expect(f.sizeBytes).toBeLessThanOrEqual(mtu);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('MTU fit at the default 1200 with frag counts near the 4096 limit', () => {
    const p = new Packetizer({ streamId: 0xffff_ffff, initialFlowSeq: 2 ** 32 - 1 });
    expect(p.mtuBytes).toBe(DEFAULT_MTU_BYTES);
    const data = new Uint8Array(p.maxPayloadBytes * 4000).fill(0xff);
    const frags = p.packetize({ streamId: 0xffff_ffff, frameId: 2 ** 32 - 1, keyFrame: true, captureUs: 2 ** 53, data, codec: 'av1' });
    expect(frags.length).toBe(4000);
    for (const f of [frags[0], frags[3999]]) {
      expect(worstCaseEnvelopeSize(f)).toBeLessThanOrEqual(1200);
      // and the receiver accepts it
      expect(decodePacket(encodePacket(WORST_HEADER, 'media', retransmissionBody(f.body))).ok).toBe(true);
    }
  });

  it('errors: MTU too small / large, bad options, stream mismatch, bad frame, too many fragments', () => {
    const code = (fn: () => unknown): string | undefined => {
      try {
        fn();
      } catch (e) {
        expect(e).toBeInstanceOf(WireError);
        return (e as WireError).code;
      }
      return undefined;
    };
    expect(code(() => new Packetizer({ streamId: 1, mtuBytes: 199 }))).toBe('ERR_MTU_TOO_SMALL');
    expect(code(() => new Packetizer({ streamId: 1, mtuBytes: 64 }))).toBe('ERR_MTU_TOO_SMALL');
    expect(code(() => new Packetizer({ streamId: 1, mtuBytes: 70000 }))).toBe('ERR_MTU_TOO_LARGE');
    expect(code(() => new Packetizer({ streamId: 1, mtuBytes: 1200.5 }))).toBe('ERR_INVALID_OPTION');
    expect(code(() => new Packetizer({ streamId: -1 }))).toBe('ERR_INVALID_OPTION');
    const p = new Packetizer({ streamId: 1 });
    const f: EncodedFrameInput = { streamId: 1, frameId: 0, keyFrame: false, captureUs: 0, data: new Uint8Array(1), codec: 'vp8' };
    expect(code(() => p.packetize({ ...f, streamId: 2 }))).toBe('ERR_STREAM_MISMATCH');
    expect(code(() => p.packetize({ ...f, captureUs: Number.NaN }))).toBe('ERR_INVALID_FRAME');
    expect(code(() => p.packetize({ ...f, frameId: 2 ** 32 }))).toBe('ERR_INVALID_FRAME');
    expect(code(() => p.packetize({ ...f, codec: 'h265' as 'vp8' }))).toBe('ERR_INVALID_FRAME');
    expect(code(() => p.packetize({ ...f, data: new Uint8Array(p.maxPayloadBytes * 4096 + 1) }))).toBe('ERR_FRAME_TOO_LARGE');
    expect(p.nextFlowSeq).toBe(0); // failed calls consume no sequence numbers
  });

  it('retransmissionBody sets retransmission and priority 1; originalMediaBody restores the exact sent bytes', () => {
    const frags = new Packetizer({ streamId: 1 }).packetize(h264Frame([nal(7, 10), nal(8, 4), nal(5, 2500)], true));
    for (const f of frags) {
      const rtx = retransmissionBody(f.body);
      const m = decodeMedia(rtx)!;
      expect(m.retransmission).toBe(true);
      expect(m.priority).toBe(Priority.Retransmission);
      expect(m.flowSeq).toBe(f.flowSeq);
      expect(Array.from(m.payload)).toEqual(Array.from(f.payload));
      expect(Array.from(originalMediaBody(m))).toEqual(Array.from(f.body));
    }
    expect(() => retransmissionBody(Uint8Array.from([0xff]))).toThrowError(WireError);
  });
});
