/**
 * Structure-aware fuzz inputs: frames that a real sender could produce
 * (consistent fragments, running flow sequence, real XOR FEC over them), then
 * lost, reordered, duplicated and lightly corrupted. Random bytes almost never
 * get past the first validation check; these reach frame assembly, FEC
 * recovery, NACK and the frame buffer.
 */
import fc from 'fast-check';
import { NalClass, Priority } from '../../src/core/types.js';
import { makeFecPackets } from '../../src/fec/xor.js';
import { encodeControl, encodeFec, encodeMedia, encodePacket } from '../../src/wire/encode.js';
import type { FecMessage, MediaMessage } from '../../src/wire/types.js';

export interface FrameSpec {
  streamId: number;
  /** Frame id step from the stream's last one (negative: an old id again). */
  frameStep: number;
  fragCount: number;
  keyFrame: boolean;
  fragBytes: number;
  /** Bit i drops fragment i (media only). */
  dropMask: number;
  /** Bit i sends fragment i twice. */
  dupMask: number;
  /** Seed of the delivery order shuffle. */
  shuffle: number;
  fec: boolean;
  /** Corrupt one of the packets: field (structured) or byte (encoded). */
  corrupt: { idx: number; pos: number; val: number; field: number } | null;
  path: number;
  advanceUs: number;
  /** Jump the flow sequence forward before this frame (a gap the NACK list sees). */
  seqJump: number;
}

export const frameSpecArb: fc.Arbitrary<FrameSpec> = fc.record({
  streamId: fc.integer({ min: 0, max: 2 }),
  frameStep: fc.oneof({ weight: 8, arbitrary: fc.constant(1) }, { weight: 2, arbitrary: fc.integer({ min: -3, max: 5 }) }),
  fragCount: fc.integer({ min: 1, max: 5 }),
  keyFrame: fc.oneof({ weight: 1, arbitrary: fc.constant(true) }, { weight: 4, arbitrary: fc.constant(false) }),
  fragBytes: fc.integer({ min: 1, max: 1200 }),
  dropMask: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 31 }) }),
  dupMask: fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 31 }) }),
  shuffle: fc.nat(),
  fec: fc.boolean(),
  corrupt: fc.option(fc.record({ idx: fc.nat(), pos: fc.nat(), val: fc.integer({ min: 0, max: 255 }), field: fc.integer({ min: 0, max: 5 }) }), { freq: 5 }),
  path: fc.integer({ min: 0, max: 1 }),
  advanceUs: fc.integer({ min: 0, max: 40_000 }),
  seqJump: fc.oneof({ weight: 20, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 40_000 }) }),
});

/** Running sender state of a fuzz session. */
export class SessionState {
  private readonly frameIds = new Map<number, number>();
  private readonly flowSeqs = new Map<number, number>();
  private readonly pathSeqs = [0, 0];
  private fecSeq = 0;
  captureUs = 0;

  /** The media fragments and (optionally) FEC packets of one frame, before loss/reorder. */
  build(spec: FrameSpec): { media: MediaMessage[]; bodies: Uint8Array[]; fecs: FecMessage[] } {
    const fid = ((this.frameIds.get(spec.streamId) ?? 0) + spec.frameStep) >>> 0;
    this.frameIds.set(spec.streamId, fid);
    let seq = ((this.flowSeqs.get(spec.streamId) ?? 0) + spec.seqJump) >>> 0;
    this.captureUs += 33_333;
    const media: MediaMessage[] = [];
    const bodies: Uint8Array[] = [];
    for (let i = 0; i < spec.fragCount; i++) {
      const m: MediaMessage = {
        streamId: spec.streamId,
        flowSeq: seq,
        frameId: fid,
        fragIndex: i,
        fragCount: spec.fragCount,
        keyFrame: spec.keyFrame,
        nalClass: spec.keyFrame ? NalClass.Key : NalClass.Delta,
        priority: spec.keyFrame ? Priority.Keyframe : Priority.Media,
        captureUs: this.captureUs,
        retransmission: false,
        payload: new Uint8Array(spec.fragBytes).fill((fid + i) & 0xff),
      };
      media.push(m);
      bodies.push(encodeMedia(m));
      seq = (seq + 1) >>> 0;
    }
    this.flowSeqs.set(spec.streamId, seq);
    const fecs = spec.fec
      ? makeFecPackets({
          streamId: spec.streamId,
          packets: media.map((m, i) => ({ flowSeq: m.flowSeq, body: bodies[i] })),
          mask: 'random',
          protectsPath: spec.path,
          firstFecSeq: this.fecSeq,
          count: 1,
        })
      : [];
    this.fecSeq = (this.fecSeq + fecs.length) >>> 0;
    return { media, bodies, fecs };
  }

  /** Encoded datagrams of one frame as the receiver would get them (loss, duplicates, reorder, one corrupted byte). */
  datagrams(spec: FrameSpec): Uint8Array[] {
    const { bodies, fecs } = this.build(spec);
    const out: Uint8Array[] = [];
    const hdr = () => ({ pathId: spec.path, pathSeq: this.pathSeqs[spec.path]++ >>> 0, sendTimeUs: this.captureUs });
    bodies.forEach((b, i) => {
      if (spec.dropMask & (1 << i)) return;
      const d = encodePacket(hdr(), 'media', b);
      out.push(d);
      if (spec.dupMask & (1 << i)) out.push(d.slice());
    });
    for (const f of fecs) out.push(encodePacket(hdr(), 'fec', encodeFec(f)));
    if (spec.frameStep === 1 && spec.keyFrame) out.push(encodeControl(hdr(), { kind: 'streamInfo', streamInfo: { streamId: spec.streamId, codec: 'avc1.42e01f', width: 640, height: 480, fps: 30 } }));
    shuffle(out, spec.shuffle);
    if (spec.corrupt && out.length > 0) {
      const d = out[spec.corrupt.idx % out.length];
      if (d.length > 0) d[spec.corrupt.pos % d.length] = spec.corrupt.val;
    }
    return out;
  }

  /** Structured fragments of one frame (no encoding), with loss, reorder and one corrupted field. */
  fragments(spec: FrameSpec): MediaMessage[] {
    const { media } = this.build(spec);
    const out = media.filter((_, i) => !(spec.dropMask & (1 << i)));
    for (let i = 0; i < media.length; i++) if (spec.dupMask & (1 << i)) out.push({ ...media[i] });
    shuffle(out, spec.shuffle);
    const c = spec.corrupt;
    if (c && out.length > 0) {
      const m = { ...out[c.idx % out.length] };
      if (c.field === 0) m.fragCount = c.val;
      else if (c.field === 1) m.keyFrame = !m.keyFrame;
      else if (c.field === 2) m.captureUs += c.val;
      else if (c.field === 3) m.fragIndex = c.val;
      else if (c.field === 4) m.frameId = (m.frameId + c.val * 1000) >>> 0;
      else m.payload = new Uint8Array(c.val * 300);
      out[c.idx % out.length] = m;
    }
    return out;
  }
}

function shuffle<T>(a: T[], seed: number): void {
  let s = seed >>> 0 || 1;
  for (let i = a.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [a[i], a[j]] = [a[j], a[i]];
  }
}
