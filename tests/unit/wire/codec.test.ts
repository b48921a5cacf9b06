import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NalClass, Priority } from '../../../src/core/types.js';
import {
  WireError,
  decodeMedia,
  decodePacket,
  encodeControl,
  encodeFec,
  encodeMedia,
  encodePacket,
  type DecodeResult,
  type FecMessage,
  type MediaMessage,
  type PacketBody,
  type PacketHeader,
} from '../../../src/wire/index.js';
import { PacketType, protobuf } from './pb-reference.js';

/** A uint64 from its decimal string (long.js via protobufjs), for values beyond 2^53. */
const u64 = (v: string): unknown => (protobuf.util.Long as unknown as { fromString(s: string, unsigned: boolean): unknown }).fromString(v, true);

const header: PacketHeader = { pathId: 3, pathSeq: 123456, sendTimeUs: 1_700_000_000_123_456 };

function media(over: Partial<MediaMessage> = {}): MediaMessage {
  return {
    streamId: 7,
    flowSeq: 4_000_000_000,
    frameId: 99,
    fragIndex: 1,
    fragCount: 3,
    keyFrame: true,
    nalClass: NalClass.Idr,
    priority: Priority.Keyframe,
    captureUs: 2 ** 52 + 17,
    retransmission: false,
    payload: Uint8Array.from([0, 0, 0, 1, 0x65, 1, 2, 3]),
    ...over,
  };
}

function fec(over: Partial<FecMessage> = {}): FecMessage {
  return {
    streamId: 7,
    baseSeq: 0xffff_fff0,
    mask: Uint8Array.from([0b1011, 0, 0x80]),
    lengthXor: 1234,
    parity: Uint8Array.from({ length: 300 }, (_, i) => i & 0xff),
    protectsPath: 2,
    fecSeq: 5,
    ...over,
  };
}

const controlBodies: PacketBody[] = [
  {
    kind: 'report',
    report: {
      pathId: 1,
      beginSeq: 0xffff_fffe,
      endSeq: 3,
      arrivals: [
        { pathSeq: 0xffff_fffe, arrivalUs: 10 },
        { pathSeq: 0, arrivalUs: 2 ** 53 },
        { pathSeq: 3, arrivalUs: 12_345_678 },
      ],
      reportTimeUs: 99_999_999,
    },
  },
  { kind: 'report', report: { pathId: 0, beginSeq: 0, endSeq: 0, arrivals: [], reportTimeUs: 0 } },
  { kind: 'keyframeRequest', keyframeRequest: { streamId: 1, requestId: 0xffff_ffff } },
  { kind: 'nack', nack: { streamId: 2, flowSeqs: [0, 1, 0xffff_ffff, 77] } },
  { kind: 'qoe', qoe: { pathId: 7, alpha: -12, fcdMs: 45.678, seq: 9 } },
  { kind: 'qoe', qoe: { pathId: 0, alpha: 3, fcdMs: 0, seq: 0 } },
  { kind: 'streamInfo', streamInfo: { streamId: 1, codec: 'avc1.42e01f', width: 1280, height: 720, fps: 29.97 } },
  { kind: 'padding', padding: { size: 0 } },
  { kind: 'padding', padding: { size: 500 } },
];

function ok(r: DecodeResult): Extract<DecodeResult, { ok: true }> {
  if (!r.ok) throw new Error(`expected ok, got ${r.reason}: ${r.detail}`);
  return r;
}

/** Encodes an arbitrary Packet-shaped object with protobufjs itself (for hostile inputs). */
function rawPacket(obj: Record<string, unknown>): Uint8Array {
  return PacketType.encode(obj).finish();
}

describe('wire codec round trip', () => {
  it('media: encodePacket(encodeMedia) decodes to the same message and exact body bytes', () => {
    const m = media();
    const body = encodeMedia(m);
    const r = ok(decodePacket(encodePacket(header, 'media', body)));
    expect(r.packet.pathId).toBe(3);
    expect(r.packet.pathSeq).toBe(123456);
    expect(r.packet.sendTimeUs).toBe(1_700_000_000_123_456);
    expect(r.packet.body).toEqual({ kind: 'media', media: m });
    expect(Array.from(r.bodyBytes)).toEqual(Array.from(body));
  });

  it('fec round trip and bodyBytes', () => {
    const f = fec();
    const body = encodeFec(f);
    const r = ok(decodePacket(encodePacket(header, 'fec', body)));
    expect(r.packet.body).toEqual({ kind: 'fec', fec: { ...f, code: 0 } }); // decoded messages carry every field; code 0 = XOR;
    expect(Array.from(r.bodyBytes)).toEqual(Array.from(body));
  });

  it('zero header values (omitted in proto3) round trip', () => {
    const r = ok(decodePacket(encodePacket({ pathId: 0, pathSeq: 0, sendTimeUs: 0 }, 'media', encodeMedia(media()))));
    expect(r.packet.pathId).toBe(0);
    expect(r.packet.pathSeq).toBe(0);
    expect(r.packet.sendTimeUs).toBe(0);
  });

  it.each(controlBodies.map((b) => [b.kind, b] as const))('control %s round trip', (_kind, body) => {
    const r = ok(decodePacket(encodeControl(header, body)));
    if (body.kind === 'qoe') {
      expect(r.packet.body.kind).toBe('qoe');
      const q = (r.packet.body as Extract<PacketBody, { kind: 'qoe' }>).qoe;
      expect(q.pathId).toBe(body.qoe.pathId);
      expect(q.alpha).toBe(body.qoe.alpha);
      expect(q.seq).toBe(body.qoe.seq);
      expect(q.fcdMs).toBeCloseTo(body.qoe.fcdMs, 3);
    } else if (body.kind === 'streamInfo') {
      const s = (r.packet.body as Extract<PacketBody, { kind: 'streamInfo' }>).streamInfo;
      expect(s).toEqual({ ...body.streamInfo, fps: 29.97 });
    } else {
      expect(r.packet.body).toEqual(body);
    }
  });

  it('encodeControl also wraps media and fec bodies', () => {
    const m = media({ retransmission: true, priority: Priority.Retransmission });
    expect(ok(decodePacket(encodeControl(header, { kind: 'media', media: m }))).packet.body).toEqual({ kind: 'media', media: m });
    const f = fec();
    expect(ok(decodePacket(encodeControl(header, { kind: 'fec', fec: f }))).packet.body).toEqual({ kind: 'fec', fec: { ...f, code: 0 } });
  });

  it('hand-written envelope is what protobufjs itself decodes', () => {
    const bytes = encodePacket(header, 'media', encodeMedia(media()));
    const viaPbjs = PacketType.decode(bytes) as unknown as Record<string, unknown>;
    expect(viaPbjs.pathId).toBe(3);
    expect(viaPbjs.pathSeq).toBe(123456);
    expect(Number(viaPbjs.sendTimeUs)).toBe(1_700_000_000_123_456);
    expect((viaPbjs.media as Record<string, unknown>).frameId).toBe(99);
    // and protobufjs' own encoding of the same packet decodes identically with ours
    const r = ok(decodePacket(rawPacket({ ...header, media: media() })));
    expect(r.packet.body).toEqual({ kind: 'media', media: media() });
  });

  it('property: random valid media round-trips exactly', () => {
    const arb = fc.record({
      streamId: fc.nat({ max: 0xffff_ffff }),
      flowSeq: fc.nat({ max: 0xffff_ffff }),
      frameId: fc.nat({ max: 0xffff_ffff }),
      fragCount: fc.integer({ min: 1, max: 4096 }),
      fragIndexFrac: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      keyFrame: fc.boolean(),
      nalClass: fc.integer({ min: 0, max: 6 }),
      priority: fc.integer({ min: 1, max: 6 }),
      captureUs: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      retransmission: fc.boolean(),
      payload: fc.uint8Array({ maxLength: 1500 }),
      pathId: fc.integer({ min: 0, max: 7 }),
      pathSeq: fc.nat({ max: 0xffff_ffff }),
      sendTimeUs: fc.integer({ min: 0, max: 2 ** 53 }),
    });
    fc.assert(
      fc.property(arb, (a) => {
        const m: MediaMessage = {
          streamId: a.streamId,
          flowSeq: a.flowSeq,
          frameId: a.frameId,
          fragIndex: Math.floor(a.fragIndexFrac * a.fragCount),
          fragCount: a.fragCount,
          keyFrame: a.keyFrame,
          nalClass: a.nalClass,
          priority: a.priority,
          captureUs: a.captureUs,
          retransmission: a.retransmission,
          payload: a.payload,
        };
        const body = encodeMedia(m);
        const r = ok(decodePacket(encodePacket({ pathId: a.pathId, pathSeq: a.pathSeq, sendTimeUs: a.sendTimeUs }, 'media', body)));
        expect(r.packet.body).toEqual({ kind: 'media', media: m });
        expect(r.packet.sendTimeUs).toBe(a.sendTimeUs);
        expect(decodeMedia(r.bodyBytes)).toEqual(m);
      }),
      { numRuns: 500 },
    );
  });

  it('decodeMedia validates FEC-recovered bodies', () => {
    expect(decodeMedia(encodeMedia(media()))).toEqual(media());
    expect(decodeMedia(Uint8Array.from([0xff, 0xff]))).toBeUndefined();
    // fragCount 0 (proto default) is invalid
    expect(decodeMedia(new Uint8Array(0))).toBeUndefined();
  });
});

describe('encoders refuse invalid messages (caller misuse)', () => {
  it.each([
    ['fragIndex >= fragCount', media({ fragIndex: 3, fragCount: 3 })],
    ['fragCount 0', media({ fragCount: 0, fragIndex: 0 })],
    ['priority 7', media({ priority: 7 as Priority })],
    ['nalClass 9', media({ nalClass: 9 as NalClass })],
    ['NaN capture', media({ captureUs: Number.NaN })],
    ['capture > 2^53', media({ captureUs: 2 ** 54 })],
    ['negative stream', media({ streamId: -1 })],
  ])('%s', (_n, m) => {
    expect(() => encodeMedia(m)).toThrowError(WireError);
    try {
      encodeMedia(m);
    } catch (e) {
      expect((e as WireError).code).toBe('ERR_INVALID_MESSAGE');
    }
  });

  it('fec mask all zero / too long, bad header', () => {
    expect(() => encodeFec(fec({ mask: new Uint8Array(2) }))).toThrow(/mask/);
    expect(() => encodeFec(fec({ mask: new Uint8Array(9).fill(1) }))).toThrow(/mask/);
    expect(() => encodePacket({ pathId: 8, pathSeq: 0, sendTimeUs: 0 }, 'media', new Uint8Array(1))).toThrow(/pathId/);
    expect(() => encodeControl(header, { kind: 'streamInfo', streamInfo: { streamId: 1, codec: 'avc1\n', width: 1, height: 1, fps: 30 } })).toThrow(/codec/);
  });
});

describe('decodePacket rejects bad input without throwing', () => {
  const good = encodePacket(header, 'media', encodeMedia(media()));

  it('empty, too large, not a Uint8Array', () => {
    expect(decodePacket(new Uint8Array(0))).toMatchObject({ ok: false, reason: 'empty' });
    expect(decodePacket(new Uint8Array(70_000))).toMatchObject({ ok: false, reason: 'too-large' });
    expect(decodePacket(good, { maxPacketBytes: good.length - 1 })).toMatchObject({ ok: false, reason: 'too-large' });
    expect(decodePacket(null as unknown as Uint8Array)).toMatchObject({ ok: false, reason: 'malformed' });
  });

  it('every truncation of a valid packet is rejected (never a wrong packet)', () => {
    for (let n = 1; n < good.length; n++) {
      const r = decodePacket(good.subarray(0, n));
      expect(r.ok, `prefix ${n}`).toBe(false);
    }
  });

  it('no body', () => {
    expect(decodePacket(rawPacket({ pathId: 1, pathSeq: 2 }))).toMatchObject({ ok: false, reason: 'no-body' });
  });

  it('wrong wire type for an envelope field and for a body field', () => {
    // path_id (field 1) as length-delimited
    expect(decodePacket(Uint8Array.from([0x0a, 0x01, 0x00, 0x52, 0x00]))).toMatchObject({ ok: false, reason: 'malformed' });
    // media field 10 as varint
    expect(decodePacket(Uint8Array.from([0x50, 0x01]))).toMatchObject({ ok: false, reason: 'malformed' });
    // inside Media: frame_id (field 3) sent as fixed32 (wire type 5)
    const body = Uint8Array.from([...encodeMedia(media()), 0x1d, 1, 2, 3, 4]);
    expect(decodePacket(encodePacket(header, 'media', body))).toMatchObject({ ok: false, reason: 'malformed' });
    // inside an Arrival of a report: path_seq as length-delimited
    const arrival = Uint8Array.from([0x0a, 0x01, 0x05]);
    const report = Uint8Array.from([0x08, 0x01, 0x18, 0x05, 0x22, arrival.length, ...arrival]);
    const pkt = Uint8Array.from([0x62, report.length, ...report]);
    expect(decodePacket(pkt)).toMatchObject({ ok: false, reason: 'malformed' });
  });

  it('absurd lengths and varints', () => {
    // media field with length 2^31
    expect(decodePacket(Uint8Array.from([0x52, 0x80, 0x80, 0x80, 0x80, 0x08, 0x00]))).toMatchObject({ ok: false, reason: 'malformed' });
    // 11-byte varint
    expect(decodePacket(Uint8Array.from([0x08, ...new Array(10).fill(0xff), 0x01, 0x52, 0x00]))).toMatchObject({ ok: false, reason: 'malformed' });
    // payload length past the end inside Media
    const body = Uint8Array.from([0x28, 0x01, 0x5a, 0x7f, 0x00]);
    expect(decodePacket(encodePacket(header, 'media', body))).toMatchObject({ ok: false, reason: 'malformed' });
    // field number 0
    expect(decodePacket(Uint8Array.from([0x00, 0x01]))).toMatchObject({ ok: false, reason: 'malformed' });
    // group wire types
    expect(decodePacket(Uint8Array.from([0x0b, 0x0c, 0x52, 0x00]))).toMatchObject({ ok: false, reason: 'malformed' });
    // two bodies
    const mb = encodeMedia(media());
    expect(decodePacket(Uint8Array.from([0x52, mb.length, ...mb, 0x52, mb.length, ...mb]))).toMatchObject({ ok: false, reason: 'malformed' });
  });

  it('invalid UTF-8 in codec string is malformed', () => {
    const si = Uint8Array.from([0x08, 0x01, 0x12, 0x02, 0xc3, 0x28, 0x18, 0x10, 0x20, 0x10, 0x28, 0x10]);
    expect(decodePacket(Uint8Array.from([0x82, 0x01, si.length, ...si]))).toMatchObject({ ok: false, reason: 'malformed' });
  });

  it('unknown fields are skipped (forward compatible)', () => {
    const withUnknown = Uint8Array.from([0xa0, 0x06, 0x05, ...good]); // field 100 varint 5
    const r = ok(decodePacket(withUnknown));
    expect(r.packet.body).toEqual({ kind: 'media', media: media() });
    const bodyUnknown = Uint8Array.from([...encodeMedia(media()), 0xa0, 0x06, 0x01]);
    expect(ok(decodePacket(encodePacket(header, 'media', bodyUnknown))).packet.body).toEqual({ kind: 'media', media: media() });
  });

  const badFields: [string, Record<string, unknown>][] = [
    ['pathId 8', { pathId: 8, media: media() }],
    ['sendTimeUs 2^53+1', { sendTimeUs: u64('9007199254740993'), media: media() }],
    ['sendTimeUs 2^64-1', { sendTimeUs: u64('18446744073709551615'), media: media() }],
    ['fragCount 0', { media: { ...media(), fragCount: 0, fragIndex: 0 } }],
    ['fragCount 4097', { media: { ...media(), fragCount: 4097 } }],
    ['fragIndex == fragCount', { media: { ...media(), fragIndex: 3 } }],
    ['priority 0', { media: { ...media(), priority: 0 } }],
    ['priority 7', { media: { ...media(), priority: 7 } }],
    ['nalClass 7', { media: { ...media(), nalClass: 7 } }],
    ['nalClass -1', { media: { ...media(), nalClass: -1 } }],
    ['captureUs 2^60', { media: { ...media(), captureUs: u64('1152921504606846976') } }],
    ['fec mask empty', { fec: { ...fec(), mask: new Uint8Array(0) } }],
    ['fec mask all zero', { fec: { ...fec(), mask: new Uint8Array(3) } }],
    ['fec mask 9 bytes', { fec: { ...fec(), mask: new Uint8Array(9).fill(1) } }],
    ['fec protectsPath 8', { fec: { ...fec(), protectsPath: 8 } }],
    ['report end < begin', { report: { pathId: 0, beginSeq: 10, endSeq: 9, arrivals: [] } }],
    ['report range 65536', { report: { pathId: 0, beginSeq: 0, endSeq: 65536, arrivals: [] } }],
    ['report arrival outside', { report: { pathId: 0, beginSeq: 10, endSeq: 20, arrivals: [{ pathSeq: 21, arrivalUs: 1 }] } }],
    ['report arrival before', { report: { pathId: 0, beginSeq: 10, endSeq: 20, arrivals: [{ pathSeq: 9, arrivalUs: 1 }] } }],
    ['report 4097 arrivals', { report: { pathId: 0, beginSeq: 0, endSeq: 5000, arrivals: Array.from({ length: 4097 }, (_, i) => ({ pathSeq: i, arrivalUs: 1 })) } }],
    ['report pathId 9', { report: { pathId: 9, beginSeq: 0, endSeq: 0, arrivals: [] } }],
    ['nack 1025 seqs', { nack: { streamId: 1, flowSeqs: Array.from({ length: 1025 }, (_, i) => i) } }],
    ['qoe pathId 8', { qoe: { pathId: 8, alpha: 1, fcdUs: 1, feedbackSeq: 1 } }],
    ['codec too long', { streamInfo: { streamId: 1, codec: 'a'.repeat(65), width: 1, height: 1, fpsMilli: 30000 } }],
    ['codec empty', { streamInfo: { streamId: 1, codec: '', width: 1, height: 1, fpsMilli: 30000 } }],
    ['codec control char', { streamInfo: { streamId: 1, codec: 'avc1\u0007', width: 1, height: 1, fpsMilli: 30000 } }],
    ['codec non-ASCII', { streamInfo: { streamId: 1, codec: 'avc1é', width: 1, height: 1, fpsMilli: 30000 } }],
    ['width 0', { streamInfo: { streamId: 1, codec: 'vp8', width: 0, height: 1, fpsMilli: 30000 } }],
    ['height 8193', { streamInfo: { streamId: 1, codec: 'vp8', width: 1, height: 8193, fpsMilli: 30000 } }],
    ['fps 0', { streamInfo: { streamId: 1, codec: 'vp8', width: 1, height: 1, fpsMilli: 0 } }],
    ['fps 240.001', { streamInfo: { streamId: 1, codec: 'vp8', width: 1, height: 1, fpsMilli: 240001 } }],
    ['padding size != data', { padding: { size: 10, data: new Uint8Array(3) } }],
  ];

  it.each(badFields)('bad-field: %s', (_name, obj) => {
    const r = decodePacket(rawPacket(obj));
    expect(r).toMatchObject({ ok: false, reason: 'bad-field' });
  });

  it('boundary values that ARE valid are accepted', () => {
    const okCases: Record<string, unknown>[] = [
      { sendTimeUs: u64('9007199254740992'), media: media() },
      { media: { ...media(), fragCount: 4096, fragIndex: 4095 } },
      { fec: { ...fec(), mask: Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 1]) } },
      { report: { pathId: 7, beginSeq: 0xffff_8000, endSeq: 0x7fff, arrivals: [{ pathSeq: 0, arrivalUs: 5 }] } },
      { streamInfo: { streamId: 1, codec: 'a'.repeat(64), width: 8192, height: 8192, fpsMilli: 240000 } },
      { nack: { streamId: 1, flowSeqs: Array.from({ length: 1024 }, (_, i) => i) } },
    ];
    for (const o of okCases) expect(decodePacket(rawPacket(o)).ok, JSON.stringify(Object.keys(o))).toBe(true);
  });

  it('fuzz: random bytes never throw and failures carry a known reason', () => {
    const reasons = new Set(['empty', 'too-large', 'malformed', 'no-body', 'bad-field']);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), (bytes) => {
        const r = decodePacket(bytes);
        if (!r.ok) expect(reasons.has(r.reason)).toBe(true);
        else expect(r.bodyBytes).toBeInstanceOf(Uint8Array);
      }),
      { numRuns: 5000 },
    );
  });

  it('fuzz: mutated valid packets never throw; accepted ones re-validate', () => {
    const seeds = [good, encodePacket(header, 'fec', encodeFec(fec())), ...controlBodies.map((b) => encodeControl(header, b))];
    fc.assert(
      fc.property(fc.integer({ min: 0, max: seeds.length - 1 }), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }), (si, muts) => {
        const b = seeds[si].slice();
        for (const [pos, v] of muts) b[pos % b.length] = v;
        const r = decodePacket(b);
        if (r.ok && r.packet.body.kind === 'media') {
          const m = r.packet.body.media;
          expect(m.fragIndex).toBeLessThan(m.fragCount);
          expect(m.priority).toBeGreaterThanOrEqual(1);
          expect(m.priority).toBeLessThanOrEqual(6);
          expect(Number.isSafeInteger(m.captureUs) || m.captureUs === 2 ** 53).toBe(true);
        }
        if (r.ok) expect(r.packet.pathId).toBeLessThan(8);
      }),
      { numRuns: 5000 },
    );
  });

  it.each([
    ['a good packet', () => good, undefined],
    ['an empty packet', () => new Uint8Array(0), 'empty'],
    ['a packet over maxPacketBytes', () => new Uint8Array(3000), 'too-large'],
    ['a truncated varint', () => Uint8Array.from([0xff]), 'malformed'],
    ['a path id out of range', () => rawPacket({ pathId: 9, media: media() }), 'bad-field'],
  ] as const)('decodePacket names the drop reason of %s', (_name, bytes, reason) => {
    const r = decodePacket(bytes(), { maxPacketBytes: 2000 });
    if (reason === undefined) expect(r.ok).toBe(true);
    else expect(r).toMatchObject({ ok: false, reason });
  });
});
