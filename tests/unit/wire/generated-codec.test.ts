/**
 * The generated static codec (tools/gen-wire.ts -> src/wire/schema.generated.ts)
 * against the reference implementation (protobufjs reflection over the same
 * .proto): each decodes what the other encodes, for random messages.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PbReader, PbWriter } from '../../../src/wire/pb.js';
import { pb } from '../../../src/wire/schema.js';
import { GENERATED_PATH } from '../../../tools/gen-wire.js';
import { newWriter, protobuf, referenceRoot } from './pb-reference.js';

const ref = (name: string) => referenceRoot.lookupType(`mprtc.${name}`);
const u32 = fc.nat({ max: 0xffff_ffff });
const u64 = fc.maxSafeNat();
const bytes = fc.uint8Array({ maxLength: 64 });

/** protobufjs decode to plain values (uint64 as numbers, bytes as plain Uint8Arrays). */
function refDecode(name: string, b: Uint8Array): Record<string, unknown> {
  const t = ref(name);
  return t.toObject(t.decode(b), { longs: Number, defaults: true, arrays: true }) as Record<string, unknown>;
}

/** JSON-comparable: byte arrays (Uint8Array, or a Node Buffer that JSON.stringify already turned into { type, data }) as number arrays. */
const plain = (o: unknown): unknown =>
  JSON.parse(JSON.stringify(o, (_k, v) => (v instanceof Uint8Array ? Array.from(v) : v !== null && typeof v === 'object' && v.type === 'Buffer' && Array.isArray(v.data) ? v.data : v)));

const cases = [
  {
    name: 'Media',
    arb: fc.record({
      streamId: u32,
      flowSeq: u32,
      frameId: u32,
      fragIndex: u32,
      fragCount: u32,
      keyFrame: fc.boolean(),
      nalClass: fc.integer({ min: 0, max: 6 }),
      priority: u32,
      captureUs: u64,
      retransmission: fc.boolean(),
      payload: bytes,
      temporalLayer: u32,
      refDistance: u32,
    }),
    enc: pb.encodeMedia,
    dec: pb.decodeMedia,
  },
  {
    name: 'PathReport',
    arb: fc.record({ pathId: u32, beginSeq: u32, endSeq: u32, arrivals: fc.array(fc.record({ pathSeq: u32, arrivalUs: u64 }), { maxLength: 20 }), reportTimeUs: u64, fcdUs: u32 }),
    enc: pb.encodePathReport,
    dec: pb.decodePathReport,
  },
  { name: 'Nack', arb: fc.record({ streamId: u32, flowSeqs: fc.array(u32, { maxLength: 50 }) }), enc: pb.encodeNack, dec: pb.decodeNack },
  {
    name: 'QoeFeedback',
    arb: fc.record({ pathId: u32, alpha: fc.integer({ min: -0x8000_0000, max: 0x7fff_ffff }), fcdUs: u32, feedbackSeq: u32 }),
    enc: pb.encodeQoeFeedback,
    dec: pb.decodeQoeFeedback,
  },
  {
    name: 'StreamInfo',
    arb: fc.record({ streamId: u32, codec: fc.string({ unit: 'grapheme', maxLength: 20 }), width: u32, height: u32, fpsMilli: u32 }),
    enc: pb.encodeStreamInfo,
    dec: pb.decodeStreamInfo,
  },
  { name: 'AppDataAck', arb: fc.record({ cumulative: u32, ranges: fc.array(u32, { maxLength: 32 }), ackDelayUs: u32 }), enc: pb.encodeAppDataAck, dec: pb.decodeAppDataAck },
  { name: 'ClockEcho', arb: fc.record({ echoUs: u64, holdUs: u32 }), enc: pb.encodeClockEcho, dec: pb.decodeClockEcho },
] as const;

describe('generated codec vs protobufjs reflection', () => {
  for (const c of cases) {
    it(`${c.name}: same bytes as protobufjs, and each decodes the other's`, () => {
      fc.assert(
        fc.property(c.arb as fc.Arbitrary<Record<string, unknown>>, (m) => {
          const ours = (c.enc as (x: unknown) => Uint8Array)(m);
          const theirs = ref(c.name).encode(ref(c.name).fromObject(m), newWriter()).finish();
          expect(Array.from(ours)).toEqual(Array.from(theirs));
          expect(plain(refDecode(c.name, ours))).toEqual(plain(m));
          expect(plain((c.dec as (r: PbReader) => unknown)(new PbReader(theirs)))).toEqual(plain(m));
        }),
        { numRuns: 200 },
      );
    });
  }

  it('reads unpacked repeated scalars and skips unknown fields, as the spec says', () => {
    const w = new PbWriter();
    w.tag(1, 0);
    w.varint(7);
    for (const s of [5, 6, 0xffff_ffff]) {
      w.tag(2, 0); // flow_seqs unpacked
      w.varint(s);
    }
    w.tag(99, 2); // unknown length-delimited field
    w.bytes(new Uint8Array([1, 2, 3]));
    w.tag(98, 5); // unknown fixed32
    w.bytes(new Uint8Array([0, 0, 0])); // 1 length byte + 3 bytes = the 4 bytes of a fixed32
    expect(pb.decodeNack(new PbReader(w.finish()))).toEqual({ streamId: 7, flowSeqs: [5, 6, 0xffff_ffff] });
  });

  it('negative int32 (enum) values take 10 bytes and read back, as protobufjs writes them', () => {
    const w = new PbWriter();
    w.int32(-2);
    const theirs = protobuf.Writer.create().int32(-2).finish();
    expect(Array.from(w.finish())).toEqual(Array.from(theirs));
    expect(new PbReader(w.finish()).int32()).toBe(-2);
  });

  it('the generated module builds no code at run time', () => {
    const src = readFileSync(GENERATED_PATH, 'utf8');
    expect(src).not.toMatch(/\beval\s*\(|\bFunction\s*\(/);
    expect(src).not.toMatch(/protobufjs/);
  });
});
