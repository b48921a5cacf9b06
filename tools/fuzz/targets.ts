/**
 * Fuzz targets: every decoder fed random, mutated (from valid seeds) and
 * extreme inputs built with fast-check arbitraries. A target "crashes" when
 * it throws (the decoders promise a counted drop instead) or breaks an
 * invariant it is checked against (the receiver's memory budgets).
 */
import fc from 'fast-check';
import { ManualClock } from '../../src/core/clock.js';
import { MAX_PATHS } from '../../src/core/types.js';
import { AppDataChannel } from '../../src/engine/app-data.js';
import { Endpoint } from '../../src/engine/endpoint.js';
import { ReceiverEngine } from '../../src/engine/receiver.js';
import { FecDecoder } from '../../src/fec/decoder.js';
import { parseClientMessage, parseServerMessage, validateClientMessage, validateServerMessage } from '../../src/signalling/protocol.js';
import { decodePacket } from '../../src/wire/decode.js';
import { Depacketizer } from '../../src/wire/depacketizer.js';
import type { FecMessage, MediaMessage } from '../../src/wire/types.js';
import { SIGNALLING_SEEDS, datagramSeeds } from './corpus.js';
import { SessionState, frameSpecArb, type FrameSpec } from './session.js';

/** One fuzz target: an arbitrary of inputs and a function that must not throw on any of them. */
export interface FuzzTarget<T = unknown> {
  name: string;
  arb: fc.Arbitrary<T>;
  /**
   * Fresh state (decoders keep state across inputs, as in a real session).
   * The returned function may carry `reached()`: how deep the inputs got
   * (frames completed, packets recovered, messages accepted), so a fuzzer that
   * only ever hits the first validation check shows it.
   */
  make(): ((input: T) => void) & { reached?: () => string };
}

function withReached<F extends (input: never) => void>(fn: F, reached: () => string): F & { reached: () => string } {
  return Object.assign(fn, { reached });
}

const U32_EXTREMES = [0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_fffe, 0xffff_ffff];
const NUM_EXTREMES = [-1, -0, 0.5, NaN, Infinity, -Infinity, 2 ** 32, 2 ** 53, Number.MAX_VALUE, -(2 ** 31)];

/** uint32 biased to boundaries, with occasional out-of-range numbers. */
const u32 = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 2000 }) },
  { weight: 3, arbitrary: fc.nat({ max: 0xffff_ffff }) },
  { weight: 2, arbitrary: fc.constantFrom(...U32_EXTREMES) },
  { weight: 1, arbitrary: fc.constantFrom(...NUM_EXTREMES) },
);
const small = (max: number) => fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max }) }, { weight: 1, arbitrary: fc.constantFrom(...NUM_EXTREMES, max + 1, 4096, 65_536) });
const bytes = (max: number) => fc.oneof({ weight: 8, arbitrary: fc.uint8Array({ maxLength: max }) }, { weight: 1, arbitrary: fc.constantFrom(new Uint8Array(0), new Uint8Array(65_536)) });

/** A mutation of a valid seed: bit flips, byte sets, inserts, deletes, truncation, splicing. */
function mutated(seeds: Uint8Array[]): fc.Arbitrary<Uint8Array> {
  const op = fc.record({ kind: fc.integer({ min: 0, max: 5 }), pos: fc.nat(), val: fc.integer({ min: 0, max: 255 }), len: fc.integer({ min: 1, max: 16 }) });
  return fc.record({ seed: fc.nat({ max: seeds.length - 1 }), other: fc.nat({ max: seeds.length - 1 }), ops: fc.array(op, { minLength: 1, maxLength: 3 }) }).map(({ seed, other, ops }) => {
    let b = Array.from(seeds[seed]);
    for (const o of ops) {
      const p = b.length === 0 ? 0 : o.pos % b.length;
      switch (o.kind) {
        case 0:
          if (b.length) b[p] ^= 1 << (o.val & 7);
          break;
        case 1:
          if (b.length) b[p] = o.val;
          break;
        case 2:
          b.splice(p, 0, ...new Array<number>(o.len).fill(o.val));
          break;
        case 3:
          b.splice(p, o.len);
          break;
        case 4:
          b = b.slice(0, p);
          break;
        default:
          b = b.slice(0, p).concat(Array.from(seeds[other]).slice(p));
      }
    }
    return Uint8Array.from(b);
  });
}

/** Varint bombs, huge declared lengths, deep nesting of length-delimited fields. */
const extremeBytes: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.constant(Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f])),
  fc.constant(Uint8Array.from(new Array<number>(20).fill(0xff))),
  fc.constant(Uint8Array.from(new Array<number>(2000).fill(0x0a))),
  fc.integer({ min: 0, max: 255 }).map((v) => new Uint8Array(65_536).fill(v)),
  fc.constant(new Uint8Array(70_000)),
);

function datagramArb(): fc.Arbitrary<Uint8Array> {
  const seeds = datagramSeeds();
  return fc.oneof({ weight: 3, arbitrary: fc.uint8Array({ maxLength: 1500 }) }, { weight: 6, arbitrary: mutated(seeds) }, { weight: 1, arbitrary: extremeBytes });
}

const mediaArb: fc.Arbitrary<MediaMessage> = fc.record({
  streamId: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 20 }) }, { weight: 1, arbitrary: u32 }),
  flowSeq: u32,
  frameId: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 300 }) }, { weight: 1, arbitrary: u32 }),
  fragIndex: small(40),
  fragCount: small(40),
  keyFrame: fc.boolean(),
  nalClass: fc.integer({ min: 0, max: 7 }),
  priority: fc.integer({ min: 0, max: 7 }),
  captureUs: fc.oneof(fc.integer({ min: 0, max: 1e9 }), fc.constantFrom(...NUM_EXTREMES)),
  retransmission: fc.boolean(),
  payload: bytes(1200),
}) as fc.Arbitrary<MediaMessage>;

const fecArb: fc.Arbitrary<FecMessage> = fc.record({
  streamId: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 20 }) }, { weight: 1, arbitrary: u32 }),
  baseSeq: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 3000 }) }, { weight: 1, arbitrary: u32 }),
  mask: bytes(9),
  lengthXor: u32,
  parity: bytes(1300),
  protectsPath: small(MAX_PATHS),
  fecSeq: u32,
}) as fc.Arbitrary<FecMessage>;

const wire: FuzzTarget<Uint8Array | FrameSpec> = {
  name: 'wire decode',
  arb: fc.oneof({ weight: 2, arbitrary: datagramArb() }, { weight: 1, arbitrary: frameSpecArb }),
  make: () => {
    const kinds: Record<string, number> = {};
    const session = new SessionState();
    return withReached(
      (inp: Uint8Array | FrameSpec) => {
        for (const b of inp instanceof Uint8Array ? [inp] : session.datagrams(inp)) {
          const r = decodePacket(b);
          const k = r.ok ? r.packet.body.kind : `drop:${r.reason}`;
          kinds[k] = (kinds[k] ?? 0) + 1;
        }
      },
      () =>
        Object.entries(kinds)
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => `${k} ${v}`)
          .join(', '),
    );
  },
};

type DepacketizerInput = { msgs: MediaMessage[]; path: number; t: number; drop: number } | { frame: FrameSpec };
const depacketizer: FuzzTarget<DepacketizerInput> = {
  name: 'depacketizer',
  arb: fc.oneof(
    {
      weight: 1,
      arbitrary: fc.record({ msgs: fc.array(mediaArb, { minLength: 1, maxLength: 8 }), path: small(MAX_PATHS), t: fc.integer({ min: 0, max: 50_000 }), drop: fc.integer({ min: -1, max: 300 }) }),
    },
    { weight: 2, arbitrary: frameSpecArb.map((frame) => ({ frame })) },
  ),
  make: () => {
    const d = new Depacketizer();
    const session = new SessionState();
    let now = 0;
    return withReached(
      (inp: DepacketizerInput) => {
        if ('frame' in inp) {
          now += inp.frame.advanceUs;
          for (const m of session.fragments(inp.frame)) d.insert(m, inp.frame.path, now);
          return;
        }
        const { msgs, path, t, drop } = inp;
        now += t;
        for (const m of msgs) d.insert(m, path, now, (m.flowSeq & 1) === 1);
        if (drop >= 0 && msgs[0].streamId >>> 0 === msgs[0].streamId) d.dropBefore(msgs[0].streamId, drop);
      },
      () => {
        const st = d.stats();
        return `stored ${st.packetsStored}, frames completed ${st.framesCompleted}, rejected ${st.rejected}, stale ${st.stale}, duplicates ${st.duplicates}, evicted ${st.framesEvicted}, expired ${st.framesExpired}`;
      },
    );
  },
};

type FecOp = { fec?: FecMessage; media?: { stream: number; seq: number; body: Uint8Array } };
const fecDecoder: FuzzTarget<FecOp[]> = {
  name: 'fec decoder',
  arb: fc.oneof(
    {
      weight: 1,
      arbitrary: fc.array(
        fc.oneof(
          fecArb.map((fec) => ({ fec })),
          fc.record({ stream: fc.integer({ min: 0, max: 20 }), seq: fc.oneof(fc.integer({ min: 0, max: 3000 }), u32), body: bytes(1200) }).map((media) => ({ media })),
        ),
        { minLength: 1, maxLength: 8 },
      ),
    },
    { weight: 2, arbitrary: frameSpecArb.map((frame) => [{ frame }] as unknown as FecOp[]) },
  ),
  make: () => {
    const dec = new FecDecoder({ validate: (_s, _q, b) => b.length > 3 });
    const session = new SessionState();
    let now = 0;
    return withReached(
      (ops: FecOp[]) => {
        const spec = (ops[0] as { frame?: FrameSpec }).frame;
        if (spec) {
          const { media, bodies, fecs } = session.build({ ...spec, fec: true });
          const order: FecOp[] = [];
          media.forEach((m, i) => {
            if (!(spec.dropMask & (1 << i))) order.push({ media: { stream: m.streamId, seq: m.flowSeq, body: bodies[i] } });
          });
          for (const f of fecs) {
            if (spec.corrupt) {
              const c = spec.corrupt;
              if (c.field === 0) f.parity = f.parity.slice(0, Math.max(1, f.parity.length - c.val));
              else if (c.field === 1) f.mask = Uint8Array.from([c.val]);
              else if (c.field === 2) f.lengthXor ^= c.val;
              else if (f.parity.length > 0) f.parity[c.pos % f.parity.length] ^= c.val | 1;
            }
            if (spec.shuffle & 1) order.unshift({ fec: f });
            else order.push({ fec: f });
          }
          ops = order;
        }
        for (const op of ops) {
          now += 1000;
          if (op.fec) dec.addFec(op.fec, now);
          else if (op.media) dec.addMedia(op.media.stream, op.media.seq, op.media.body, now);
        }
      },
      () => {
        const st = dec.stats();
        const dropped = Object.entries(st.dropped)
          .filter(([, v]) => v > 0)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ');
        return `fec ${st.fecReceived}, pending-or-used ${st.fecReceived - st.fecDiscarded}, recovered ${st.recovered}; dropped: ${dropped}`;
      },
    );
  },
};

/** Receiver budgets used by the endpoint target and the attacks (the defaults). */
export const RECEIVER_BUDGET_BYTES = { frameBuffer: 24 << 20, depacketizer: 16 << 20, fec: 8 << 20 };

type EndpointInput = { dgrams: Uint8Array[]; path: number; advanceUs: number } | { frame: FrameSpec };
const endpoint: FuzzTarget<EndpointInput> = {
  name: 'receiver (Endpoint)',
  arb: fc.oneof(
    {
      weight: 1,
      arbitrary: fc.record({ dgrams: fc.array(datagramArb(), { minLength: 1, maxLength: 4 }), path: fc.integer({ min: 0, max: MAX_PATHS + 1 }), advanceUs: fc.integer({ min: 0, max: 40_000 }) }),
    },
    { weight: 3, arbitrary: frameSpecArb.map((frame) => ({ frame })) },
  ),
  make: () => {
    const clock = new ManualClock(1_000_000);
    const rx = new ReceiverEngine({ clock });
    for (let p = 0; p < 2; p++) rx.addPath(p, { send: () => true, bufferedAmount: () => 0 });
    rx.on('frame', () => {});
    const appData = new AppDataChannel({ clock, transmit: () => true, deliver: () => {} });
    for (let p = 0; p < 2; p++) appData.setPathUp(p, true);
    const ep = new Endpoint(rx, undefined, appData);
    let n = 0;
    let frames = 0;
    rx.on('frame', () => frames++);
    const session = new SessionState();
    return withReached(
      (inp: EndpointInput) => {
        const { dgrams, path, advanceUs } = 'frame' in inp ? { dgrams: session.datagrams(inp.frame), path: inp.frame.path, advanceUs: inp.frame.advanceUs } : inp;
        for (const d of dgrams) ep.onDatagram(path, d);
        clock.advanceUs(advanceUs);
        ep.tick();
        if (++n % 500 === 0) {
          const held = rx.stats().heldBytes;
          for (const k of ['frameBuffer', 'depacketizer', 'fec'] as const) {
            if (held[k] > RECEIVER_BUDGET_BYTES[k]) throw new Error(`invariant: ${k} holds ${held[k]} bytes > budget ${RECEIVER_BUDGET_BYTES[k]}`);
          }
          const ad = appData.stats();
          if (ad.reorderBufferedBytes > 1 << 20) throw new Error(`invariant: app data reorder buffer holds ${ad.reorderBufferedBytes} bytes > 1 MiB`);
        }
      },
      () => {
        const st = rx.stats();
        const malformed = Object.values(ep.malformed).reduce((a, b) => a + (b ?? 0), 0);
        const ad = appData.stats();
        return `to receiver ${st.packetsReceived}, malformed ${malformed}, app data delivered ${ad.received} (dropped ${ad.dropped.outOfWindow + ad.dropped.bufferFull}, bad acks ${ad.dropped.badAck}), frames assembled ${st.framesAssembled}, to decoder ${frames}, FEC-recovered ${st.recoveredByFec}, NACKs ${st.nacksSent}, key frame requests ${st.keyframeRequestsSent}`;
      },
    );
  },
};

function mutateText(seed: string, ops: Array<{ kind: number; pos: number; ch: string }>): string {
  let s = seed;
  for (const o of ops) {
    const p = s.length === 0 ? 0 : o.pos % s.length;
    if (o.kind === 0) s = s.slice(0, p) + o.ch + s.slice(p + 1);
    else if (o.kind === 1) s = s.slice(0, p) + o.ch + s.slice(p);
    else if (o.kind === 2) s = s.slice(0, p) + s.slice(p + 1);
    else s = s.slice(0, p);
  }
  return s;
}

const idArb = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);
const validSignallingArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ type: fc.constant('join'), room: idArb, peerId: fc.option(idArb, { nil: undefined }), token: fc.option(fc.string({ minLength: 1, maxLength: 200 }), { nil: undefined }) }),
  fc.record({ type: fc.constant('signal'), to: idArb, pathId: fc.integer({ min: 0, max: MAX_PATHS - 1 }), data: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })) }),
  fc.constant({ type: 'leave' }),
  fc.record({ type: fc.constant('joined'), peerId: idArb, peers: fc.array(idArb, { maxLength: 8 }) }),
  fc.record({ type: fc.constantFrom('peer-joined', 'peer-left'), peerId: idArb }),
  fc.record({ type: fc.constant('signal'), from: idArb, pathId: fc.integer({ min: 0, max: MAX_PATHS - 1 }), data: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })) }),
  fc.record({ type: fc.constant('error'), code: fc.constantFrom('room-full', 'unauthorized', 'peer-id-taken', 'nope'), message: fc.string({ maxLength: 40 }) }),
);

const signalling: FuzzTarget<{ text?: string; obj?: unknown }> = {
  name: 'signalling protocol',
  arb: fc.oneof(
    fc.string({ maxLength: 300 }).map((text) => ({ text })),
    fc.json({ maxDepth: 4 }).map((text) => ({ text })),
    fc
      .record({
        seed: fc.constantFrom(...SIGNALLING_SEEDS),
        ops: fc.array(fc.record({ kind: fc.integer({ min: 0, max: 3 }), pos: fc.nat(), ch: fc.constantFrom('"', '{', '}', '[', ']', ':', ',', '\\', '0', 'x', '\u0000', '\ud800', 'é', ' ') }), {
          minLength: 1,
          maxLength: 5,
        }),
      })
      .map(({ seed, ops }) => ({ text: mutateText(seed, ops) })),
    fc
      .record({
        type: fc.constantFrom('join', 'signal', 'leave', 'joined', 'peer-joined', 'peer-left', 'error', 'x'),
        room: fc.anything(),
        peerId: fc.anything(),
        peers: fc.anything(),
        to: fc.anything(),
        from: fc.anything(),
        pathId: fc.anything(),
        data: fc.anything(),
        token: fc.anything(),
        code: fc.anything(),
      })
      .map((obj) => ({ obj })),
    fc.constantFrom({ text: 'x'.repeat(70_000) }, { text: '['.repeat(5000) }, { text: `{"type":"join","room":"${'a'.repeat(65)}"}` }),
    validSignallingArb.map((m) => ({ text: JSON.stringify(m) })),
    validSignallingArb.map((m) => ({ obj: m })),
  ),
  make: () => {
    let ok = 0;
    let total = 0;
    return withReached(
      (inp: { text?: string; obj?: unknown }) => {
        const a = inp.text !== undefined ? parseClientMessage(inp.text) : validateClientMessage(inp.obj);
        const b = inp.text !== undefined ? parseServerMessage(inp.text) : validateServerMessage(inp.obj);
        total += 2;
        ok += (a.ok ? 1 : 0) + (b.ok ? 1 : 0);
      },
      () => `valid messages ${ok} of ${total} parses`,
    );
  },
};

/** A target with its input type forgotten: runTarget only feeds `arb`'s own values to `make()`'s function, so this is sound. */
function erase<T>(t: FuzzTarget<T>): FuzzTarget<unknown> {
  return t as unknown as FuzzTarget<unknown>;
}

export const TARGETS: readonly FuzzTarget<unknown>[] = [erase(wire), erase(depacketizer), erase(fecDecoder), erase(endpoint), erase(signalling)];

export interface TargetResult {
  name: string;
  /** How deep the inputs got (target-specific counters). */
  reached: string;
  inputs: number;
  crashes: number;
  /** First few crashing inputs (JSON-ish) with their errors. */
  examples: string[];
  maxUsPerInput: number;
  meanUsPerInput: number;
  wallMs: number;
}

function describeInput(v: unknown): string {
  try {
    const s = fc.stringify(v);
    return s.length > 400 ? `${s.slice(0, 400)}…` : s;
  } catch {
    return String(v);
  }
}

/**
 * Run `inputs` inputs of one target (seeded). Never throws: crashes are
 * counted and the first 5 kept with their input.
 */
export function runTarget<T>(t: FuzzTarget<T>, inputs: number, seed: number): TargetResult {
  const fn = t.make();
  let crashes = 0;
  const examples: string[] = [];
  let maxUs = 0;
  let sumUs = 0;
  const t0 = performance.now();
  // fc.sample in chunks: cheap generation without fc.assert's shrinking machinery.
  const CHUNK = 2000;
  for (let done = 0; done < inputs; done += CHUNK) {
    const n = Math.min(CHUNK, inputs - done);
    const batch = fc.sample(t.arb, { numRuns: n, seed: (seed + done * 7919) | 0 });
    for (const input of batch) {
      const s = performance.now();
      try {
        fn(input);
      } catch (err) {
        crashes++;
        if (examples.length < 5) examples.push(`${(err as Error)?.stack?.split('\n').slice(0, 3).join(' | ') ?? String(err)}\n    input: ${describeInput(input)}`);
      }
      const us = (performance.now() - s) * 1000;
      sumUs += us;
      if (us > maxUs) maxUs = us;
    }
  }
  return { name: t.name, reached: fn.reached?.() ?? '', inputs, crashes, examples, maxUsPerInput: maxUs, meanUsPerInput: inputs > 0 ? sumUs / inputs : 0, wallMs: performance.now() - t0 };
}
