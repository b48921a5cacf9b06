/**
 * The FEC code registry (src/fec/codes.ts): a conformance suite every
 * registered code runs, the plug point end to end (a code registered by a
 * test carries a lossy call), and a receiver facing a code it does not know.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { ManualClock } from '../../../src/core/clock.js';
import { Endpoint } from '../../../src/engine/endpoint.js';
import { ReceiverEngine } from '../../../src/engine/receiver.js';
import { type FecCodeDecoder, type FecCodeEntry, fecCode, fecCodeByWireId, fecCodeNames, registerFecCode, sumFecDecoderStats } from '../../../src/fec/codes.js';
import { FecError } from '../../../src/fec/errors.js';
import type { FecDecoderStats, RecoveredPacket } from '../../../src/fec/types.js';
import { encodeFec, encodePacket } from '../../../src/wire/encode.js';
import type { FecMessage } from '../../../src/wire/types.js';
import { makeCall } from '../engine/call-helper.js';
import { bodyMatchesSeq, makePackets, sameBytes } from './helpers.js';

describe.each(fecCodeNames())('FEC code %s (conformance)', (name) => {
  const code = fecCode(name);
  const decoder = () => code.createDecoder({ validate: bodyMatchesSeq });

  it.each(['random', 'bursty'] as const)('rebuilds any one lost packet a repair packet covers, exactly (%s masks)', (mask) => {
    const rng = new Rng(7);
    const packets = makePackets(0xffff_fff0, 40, rng); // wraps the flow seq
    const fecs = code.encode({ streamId: 3, packets, count: 8, mask, protectsPath: 1, firstFecSeq: 0 });
    expect(fecs.length).toBeGreaterThan(0);
    expect(fecs.length).toBeLessThanOrEqual(8);
    for (let lose = 0; lose < packets.length; lose++) {
      const d = decoder();
      for (let i = 0; i < packets.length; i++) if (i !== lose) d.addMedia(3, packets[i].flowSeq, packets[i].body, 1000);
      const got: RecoveredPacket[] = [];
      for (const f of fecs) got.push(...d.addFec(f, 1000));
      expect(got.length).toBe(1);
      expect(got[0].flowSeq).toBe(packets[lose].flowSeq);
      expect(got[0].streamId).toBe(3);
      expect(sameBytes(got[0].body, packets[lose].body)).toBe(true);
    }
  });

  it('invents nothing when nothing is lost, and counts the repair packets as discarded', () => {
    const packets = makePackets(100, 20, new Rng(2));
    const fecs = code.encode({ streamId: 0, packets, count: 4, mask: 'random', protectsPath: 0, firstFecSeq: 0 });
    const d = decoder();
    for (const p of packets) d.addMedia(0, p.flowSeq, p.body, 0);
    for (const f of fecs) expect(d.addFec(f, 0)).toEqual([]);
    expect(d.stats().fecDiscarded).toBe(fecs.length);
  });

  it('survives lying repair packets: never throws, never returns a body that fails validation', () => {
    const rng = new Rng(11);
    const packets = makePackets(500, 30, rng);
    const d = decoder();
    for (const p of packets.slice(0, 20)) d.addMedia(0, p.flowSeq, p.body, 0);
    for (let i = 0; i < 2000; i++) {
      const parity = new Uint8Array(Math.floor(rng.next() * 1500));
      for (let j = 0; j < parity.length; j++) parity[j] = (rng.next() * 256) | 0;
      const mask = new Uint8Array(1 + Math.floor(rng.next() * 8)).map(() => (rng.next() * 256) | 0);
      const f: FecMessage = { streamId: 0, baseSeq: 480 + Math.floor(rng.next() * 60), mask, lengthXor: Math.floor(rng.next() * 2 ** 32), parity, protectsPath: Math.floor(rng.next() * 4), fecSeq: i };
      for (const r of d.addFec(f, i)) expect(bodyMatchesSeq(r.streamId, r.flowSeq, r.body)).toBe(true);
    }
  });

  it('is deterministic', () => {
    const packets = makePackets(9, 33, new Rng(5));
    const a = code.encode({ streamId: 1, packets, count: 5, mask: 'bursty', protectsPath: 0, firstFecSeq: 7 });
    const b = code.encode({ streamId: 1, packets, count: 5, mask: 'bursty', protectsPath: 0, firstFecSeq: 7 });
    expect(a).toEqual(b);
  });
});

/**
 * A repetition code (the simplest erasure code there is): each repair packet
 * is a copy of one protected packet, largest first. Registered here to show
 * the plug point: one entry, no change to the sender, receiver or wire.
 */
const repeatRecovered = { n: 0 };
const REPEAT: FecCodeEntry = {
  name: 'repeat',
  summary: 'test: repetition code',
  wireId: 201,
  encode(args) {
    const order = [...args.packets].sort((a, b) => b.body.length - a.body.length).slice(0, Math.max(0, Math.floor(args.count)));
    return order.map((p, i) => ({
      streamId: args.streamId,
      baseSeq: p.flowSeq,
      mask: new Uint8Array([1]),
      lengthXor: p.body.length,
      parity: p.body.slice(),
      protectsPath: args.protectsPath,
      fecSeq: (args.firstFecSeq + i) >>> 0,
    }));
  },
  createDecoder(opts): FecCodeDecoder {
    const have = new Map<number, Set<number>>();
    const st = { received: 0, recovered: 0, discarded: 0 };
    return {
      addMedia(streamId, flowSeq) {
        const s = have.get(streamId) ?? new Set<number>();
        have.set(streamId, s);
        s.add(flowSeq);
        if (s.size > 4096) s.delete(s.values().next().value as number);
        return [];
      },
      addFec(f) {
        st.received++;
        const s = have.get(f.streamId);
        if ((s?.has(f.baseSeq) ?? false) || f.parity.length !== f.lengthXor || (opts.validate && !opts.validate(f.streamId, f.baseSeq, f.parity))) {
          st.discarded++;
          return [];
        }
        st.recovered++;
        repeatRecovered.n++;
        this.addMedia(f.streamId, f.baseSeq, f.parity);
        return [{ streamId: f.streamId, flowSeq: f.baseSeq, body: f.parity, protectsPath: f.protectsPath }];
      },
      stats(): FecDecoderStats {
        return { ...sumFecDecoderStats([]), fecReceived: st.received, fecUsed: st.recovered, fecDiscarded: st.discarded, recovered: st.recovered };
      },
    };
  },
};

describe('FEC code registry', () => {
  it('refuses a taken name or wire id and a wire id outside 1..255', () => {
    expect(() => registerFecCode({ ...REPEAT, name: 'xor', wireId: 250 })).toThrow(FecError);
    expect(() => registerFecCode({ ...REPEAT, name: 'zero', wireId: 0 })).toThrow(/1, 255/);
    expect(() => registerFecCode({ ...REPEAT, name: 'big', wireId: 256 })).toThrow(FecError);
    expect(() => fecCode('nope')).toThrow(/unknown FEC code "nope"/);
  });

  it('carries a lossy call with a code registered by the app (sender option fecCode, receiver by wire id)', () => {
    registerFecCode(REPEAT);
    registerFecCode(REPEAT); // the same entry again: a no-op
    expect(() => registerFecCode({ ...REPEAT, name: 'repeat2' })).toThrow(/wire id/);
    expect(fecCodeByWireId(201)).toBe(REPEAT);
    const c = makeCall(
      [
        { rateMbps: 8, delayMs: 30, loss: 0.05 },
        { rateMbps: 8, delayMs: 30 },
      ],
      { seed: 3, extra: { qoeFeedback: false, fecCode: 'repeat' } },
    );
    c.run(10_000);
    const r = c.receiver.stats();
    expect(c.sender.stats().fecPacketsSent).toBeGreaterThan(0);
    expect(r.fecUnknownCode).toBe(0);
    expect(r.recoveredByFec).toBeGreaterThan(0);
    expect(repeatRecovered.n).toBeGreaterThan(0); // rebuilt by the registered code's decoder, not the XOR one
    expect(c.decoded.length / c.framesSent).toBeGreaterThanOrEqual(0.9);
  });

  it('a receiver counts and drops repair packets of a code it does not know, and keeps decoding', () => {
    const clock = new ManualClock(1_000_000);
    const rx = new ReceiverEngine({ clock });
    rx.addPath(0, { send: () => true, bufferedAmount: () => 0 });
    const fec = encodeFec({ streamId: 0, baseSeq: 1, mask: new Uint8Array([3]), lengthXor: 5, parity: new Uint8Array(8), protectsPath: 0, fecSeq: 0, code: 99 });
    expect(() => new Endpoint(rx).onDatagram(0, encodePacket({ pathId: 0, pathSeq: 1, sendTimeUs: 1 }, 'fec', fec))).not.toThrow();
    expect(rx.stats().fecUnknownCode).toBe(1);
    expect(rx.stats().fecPacketsReceived).toBe(1);
  });
});

describe('sumFecDecoderStats', () => {
  it('sums counters and merges per-path entries by path id', () => {
    const a = { ...sumFecDecoderStats([]), fecReceived: 2, perPath: [{ pathId: 1, fecReceived: 2, fecUsed: 1, fecDiscarded: 0, recovered: 1 }] };
    const b = {
      ...sumFecDecoderStats([]),
      fecReceived: 3,
      perPath: [
        { pathId: 1, fecReceived: 3, fecUsed: 0, fecDiscarded: 3, recovered: 0 },
        { pathId: 0, fecReceived: 1, fecUsed: 1, fecDiscarded: 0, recovered: 2 },
      ],
    };
    const s = sumFecDecoderStats([a, b]);
    expect(s.fecReceived).toBe(5);
    expect(s.perPath).toEqual([
      { pathId: 0, fecReceived: 1, fecUsed: 1, fecDiscarded: 0, recovered: 2 },
      { pathId: 1, fecReceived: 5, fecUsed: 1, fecDiscarded: 3, recovered: 1 },
    ]);
  });
});
