import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { Rng } from '../../../src/core/rng.js';
import { AppDataChannel, AppDataError, type AppDataOptions } from '../../../src/engine/app-data.js';
import { decodePacket } from '../../../src/wire/decode.js';
import { encodeControl } from '../../../src/wire/encode.js';
import { MAX_APP_DATA_BYTES } from '../../../src/wire/types.js';

interface InFlight {
  atUs: number;
  to: 'a' | 'b';
  pathId: number;
  bytes: Uint8Array;
}

/** Two channels over a fake two-path network: per-path one-way delay, loss, duplication and jitter (reordering). */
function pair(net: { delayMs?: number[]; loss?: number; dup?: number; jitterMs?: number; seed?: number } = {}, opts: Partial<AppDataOptions> = {}) {
  const clock = new ManualClock(1_000_000);
  const rng = new Rng(net.seed ?? 1);
  const delay = net.delayMs ?? [20, 50];
  const wire: InFlight[] = [];
  const got: { a: Array<{ data: Uint8Array | string; reliable: boolean; pathId: number }>; b: Array<{ data: Uint8Array | string; reliable: boolean; pathId: number }> } = { a: [], b: [] };
  const abandoned: number[] = [];
  const make = (self: 'a' | 'b') =>
    new AppDataChannel({
      clock,
      transmit: (pathId, bytes) => {
        const copies = rng.next() < (net.dup ?? 0) ? 2 : 1;
        for (let c = 0; c < copies; c++) {
          if (rng.next() < (net.loss ?? 0)) continue;
          const jitter = (net.jitterMs ?? 0) * rng.next();
          wire.push({ atUs: clock.nowUs() + (delay[pathId] + jitter) * 1000, to: self === 'a' ? 'b' : 'a', pathId, bytes });
        }
        return true;
      },
      deliver: (data, info) => got[self].push({ data, ...info }),
      onAbandon: (seq) => abandoned.push(seq),
      ...opts,
    });
  const a = make('a');
  const b = make('b');
  for (const ch of [a, b]) for (let p = 0; p < delay.length; p++) ch.setPathUp(p, true);
  const ep = { a, b };
  /** Advance the clock in 1 ms steps, delivering due datagrams and ticking both sides. */
  const run = (ms: number) => {
    for (let i = 0; i < ms; i++) {
      clock.advanceMs(1);
      const now = clock.nowUs();
      wire.sort((x, y) => x.atUs - y.atUs);
      while (wire.length > 0 && wire[0].atUs <= now) {
        const d = wire.shift() as InFlight;
        const res = decodePacket(d.bytes);
        if (!res.ok) throw new Error(res.detail);
        const body = res.packet.body;
        if (body.kind === 'appData' || body.kind === 'appDataAck') ep[d.to].onMessage(d.pathId, body);
      }
      a.tick();
      b.tick();
    }
  };
  return { clock, a, b, got, run, wire, abandoned };
}

describe('AppDataChannel', () => {
  it('delivers reliable messages exactly once and in order despite loss, duplication and reordering', () => {
    const t = pair({ loss: 0.3, dup: 0.2, jitterMs: 80, seed: 7 });
    for (let i = 0; i < 200; i++) t.a.send(`m${i}`, true);
    t.run(20_000);
    expect(t.got.b.map((m) => m.data)).toEqual(Array.from({ length: 200 }, (_, i) => `m${i}`));
    expect(t.got.b.every((m) => m.reliable)).toBe(true);
    const s = t.a.stats();
    expect(s.retransmitted).toBeGreaterThan(0);
    expect(s.inFlight).toBe(0);
    expect(s.inFlightBytes).toBe(0);
    expect(t.b.stats().duplicates).toBeGreaterThan(0);
    expect(t.b.stats().reorderBuffered).toBe(0);
    expect(t.abandoned).toEqual([]);
  });

  it('property: any loss/dup/jitter pattern delivers every reliable message not abandoned once, in order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1e6 }),
        fc.double({ min: 0, max: 0.5, noNaN: true }),
        fc.double({ min: 0, max: 0.5, noNaN: true }),
        fc.integer({ min: 0, max: 200 }),
        fc.integer({ min: 1, max: 60 }),
        (seed, loss, dup, jitterMs, n) => {
          const t = pair({ loss, dup, jitterMs, seed }, { maxRtoMs: 2000 });
          const sent: Uint8Array[] = [];
          for (let i = 0; i < n; i++) {
            const m = new Uint8Array([i, i >> 8, seed & 0xff]);
            sent.push(m);
            t.a.send(m, true);
          }
          t.run(40_000);
          // An abandoned message leaves a skip marker in flight until the receiver acknowledges it
          // (it has no attempt limit: the receiver must learn to skip); at ~50 % loss on data and
          // acks that can outlast 40 s. Give it up to 60 s more to become quiescent.
          for (let k = 0; k < 60 && t.a.stats().inFlight > 0; k++) t.run(1000);
          // Exactly once, in order; a message may be missing only if its sender gave up on it (maxAttempts) and
          // said so (an abandoned message may still have arrived: only its acks were lost).
          const got = t.got.b.map((m) => (m.data as Uint8Array)[0] + ((m.data as Uint8Array)[1] << 8));
          const expected = sent.map((_, i) => i).filter((i) => !t.abandoned.includes(i) || got.includes(i));
          expect(got).toEqual(expected);
          expect(t.a.stats().inFlight).toBe(0);
          if (loss <= 0.1) expect(t.abandoned).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('sends unreliable messages once on the lowest-RTT path and delivers strings as strings', () => {
    const t = pair({ delayMs: [60, 10] });
    // Learn the RTTs from reliable traffic on each path first (path 1 is faster).
    t.a.setPathUp(0, false);
    t.a.send('warm1', true);
    t.run(300);
    t.a.setPathUp(0, true);
    t.a.setPathUp(1, false);
    t.a.send('warm0', true);
    t.run(300);
    t.a.setPathUp(1, true);
    expect(t.a.stats().srttMs[1]).toBeLessThan(t.a.stats().srttMs[0]);
    const before = t.wire.length;
    t.a.send('hello', false);
    expect(t.wire.length).toBe(before + 1);
    expect(t.wire[t.wire.length - 1].pathId).toBe(1);
    t.run(100);
    const last = t.got.b[t.got.b.length - 1];
    expect(last).toEqual({ data: 'hello', reliable: false, pathId: 1 });
    // Never retransmitted.
    expect(t.a.stats().retransmitted).toBe(0);
  });

  it('retransmits a reliable message on another path as soon as its path goes down', () => {
    const t = pair({ delayMs: [10, 30] });
    t.a.send('x', true);
    const sent0 = t.wire.splice(0); // lost in flight on path 0, which then goes down
    expect(sent0[0].pathId).toBe(0);
    t.a.setPathUp(0, false);
    t.run(100); // well before the 1 s initial RTO
    expect(t.got.b.map((m) => m.data)).toEqual(['x']);
    t.run(2000);
    expect(t.got.b.map((m) => m.data)).toEqual(['x']);
    expect(t.got.b[0].pathId).toBe(1);
    expect(t.a.stats().retransmitted).toBe(1);
  });

  it('retransmits on another up path than the one the last attempt was lost on', () => {
    const t = pair({ delayMs: [10, 30] });
    t.a.send('y', true);
    const first = t.wire.splice(0);
    expect(first.map((w) => w.pathId)).toEqual([0]); // both unmeasured: lowest id
    t.run(1500); // past the initial RTO (1 s): one retransmission, on path 1 though path 0 is still up
    expect(t.got.b.map((m) => [m.data, m.pathId])).toEqual([['y', 1]]);
    expect(t.a.stats().retransmitted).toBe(1);
  });

  it('reset() starts both directions over', () => {
    const t = pair();
    t.a.send('1', true);
    t.run(200);
    t.a.reset();
    t.b.reset();
    t.a.send('2', true);
    t.run(200);
    expect(t.got.b.map((m) => m.data)).toEqual(['1', '2']);
    expect(t.b.stats().duplicates).toBe(0);
  });

  it('queues reliable messages while no path is up and sends them when one comes up', () => {
    const t = pair();
    t.a.setPathUp(0, false);
    t.a.setPathUp(1, false);
    t.a.send('q', true);
    expect(t.wire.length).toBe(0);
    expect(() => t.a.send('u', false)).toThrow(AppDataError);
    t.run(500);
    expect(t.got.b).toEqual([]);
    t.a.setPathUp(1, true);
    t.run(500);
    expect(t.got.b.map((m) => m.data)).toEqual(['q']);
  });

  it('throws a typed error naming the limit for a too-large message and when the window is full', () => {
    const t = pair({}, { maxInFlightBytes: 40_000 });
    const e = (() => {
      try {
        t.a.send(new Uint8Array(MAX_APP_DATA_BYTES + 1), true);
      } catch (err) {
        return err as AppDataError;
      }
    })();
    expect(e?.code).toBe('too-large');
    expect(e?.message).toContain(String(MAX_APP_DATA_BYTES));
    t.a.send(new Uint8Array(MAX_APP_DATA_BYTES), true);
    t.a.send(new Uint8Array(MAX_APP_DATA_BYTES), true);
    expect(() => t.a.send(new Uint8Array(MAX_APP_DATA_BYTES), true)).toThrow(/40000 bytes/);
    try {
      t.a.send(new Uint8Array(MAX_APP_DATA_BYTES), true);
    } catch (err) {
      expect((err as AppDataError).code).toBe('window-full');
    }
    // Once acknowledged, the window opens again.
    t.run(500);
    expect(t.a.stats().inFlightBytes).toBe(0);
    t.a.send(new Uint8Array(MAX_APP_DATA_BYTES), true);
    expect(() => t.a.send(42 as unknown as string, true)).toThrow(/Uint8Array or a string/);
  });

  it('gives up after maxAttempts, tells the app, and the receiver skips the hole', () => {
    const t = pair({}, { maxAttempts: 3, maxRtoMs: 400 });
    t.a.send('lost', true);
    t.wire.splice(0);
    // Drop every transmission of seq 0 until it is abandoned.
    for (let i = 0; i < 5000 && t.abandoned.length === 0; i++) {
      t.run(1);
      for (let k = t.wire.length - 1; k >= 0; k--) {
        const r = decodePacket(t.wire[k].bytes);
        if (r.ok && r.packet.body.kind === 'appData' && !r.packet.body.appData.skip) t.wire.splice(k, 1);
      }
    }
    expect(t.abandoned).toEqual([0]);
    t.a.send('after', true);
    t.run(3000);
    expect(t.got.b.map((m) => m.data)).toEqual(['after']);
    expect(t.b.stats().skipped).toBe(1);
    expect(t.a.stats().abandoned).toBe(1);
    expect(t.a.stats().inFlight).toBe(0);
  });

  it('counts bad input instead of throwing: huge seq jumps, acks of unsent seqs', () => {
    const t = pair();
    t.b.onMessage(0, { kind: 'appData', appData: { seq: 0x7000_0000, reliable: true, text: false, payload: new Uint8Array(3), skip: false } });
    expect(t.b.stats().dropped.outOfWindow).toBe(1);
    expect(t.b.stats().reorderBuffered).toBe(0);
    t.a.onMessage(0, { kind: 'appDataAck', appDataAck: { cumulative: 5000, ranges: [], ackDelayUs: 0 } });
    t.a.onMessage(0, { kind: 'appDataAck', appDataAck: { cumulative: 0, ranges: [3, 9], ackDelayUs: 0 } });
    expect(t.a.stats().dropped.badAck).toBe(2);
    // A stale (older) ack is harmless.
    t.a.send('a', true);
    t.a.send('b', true);
    t.run(300);
    t.a.onMessage(0, { kind: 'appDataAck', appDataAck: { cumulative: 0, ranges: [], ackDelayUs: 0 } });
    expect(t.a.stats().inFlight).toBe(0);
    expect(t.got.b.map((m) => m.data)).toEqual(['a', 'b']);
  });

  it('bounds the reorder buffer: a message beyond it is dropped and later retransmitted', () => {
    const t = pair({}, { maxReorderBytes: MAX_APP_DATA_BYTES, reorderWindow: 4 });
    t.a.send('first', true);
    t.wire.splice(0); // lose seq 0 once
    for (let i = 1; i < 8; i++) t.a.send(new Uint8Array(4000), true);
    t.run(100);
    const s = t.b.stats();
    expect(s.dropped.outOfWindow + s.dropped.bufferFull).toBeGreaterThan(0);
    expect(s.reorderBufferedBytes).toBeLessThanOrEqual(MAX_APP_DATA_BYTES);
    t.run(10_000);
    expect(t.got.b.length).toBe(8);
    expect(t.got.b[0].data).toBe('first');
  });

  it('rejects bad options with a RangeError naming the option', () => {
    const clock = new ManualClock();
    expect(() => new AppDataChannel({ clock, transmit: () => true, deliver: () => {}, maxMessageBytes: MAX_APP_DATA_BYTES + 1 })).toThrow(/maxMessageBytes/);
    expect(() => new AppDataChannel({ clock, transmit: () => true, deliver: () => {}, minRtoMs: 500, maxRtoMs: 100 })).toThrow(/maxRtoMs/);
  });
});

describe('AppData wire messages', () => {
  it('round-trips AppData and AppDataAck', () => {
    const a = encodeControl(
      { pathId: 1, pathSeq: 0, sendTimeUs: 123 },
      { kind: 'appData', appData: { seq: 0xffff_ffff, reliable: true, text: true, payload: new Uint8Array([104, 105]), skip: false } },
    );
    const r = decodePacket(a);
    expect(r.ok && r.packet.body).toEqual({ kind: 'appData', appData: { seq: 0xffff_ffff, reliable: true, text: true, payload: new Uint8Array([104, 105]), skip: false } });
    const k = encodeControl({ pathId: 0, pathSeq: 0, sendTimeUs: 1 }, { kind: 'appDataAck', appDataAck: { cumulative: 0xffff_fffe, ranges: [0, 2, 5, 6], ackDelayUs: 400 } });
    const rk = decodePacket(k);
    expect(rk.ok && rk.packet.body).toEqual({ kind: 'appDataAck', appDataAck: { cumulative: 0xffff_fffe, ranges: [0, 2, 5, 6], ackDelayUs: 400 } });
  });

  it('rejects oversize payloads, bad skip markers and disordered ack ranges as bad-field', () => {
    expect(() =>
      encodeControl({ pathId: 0, pathSeq: 0, sendTimeUs: 0 }, { kind: 'appData', appData: { seq: 0, reliable: true, text: false, payload: new Uint8Array(MAX_APP_DATA_BYTES + 1), skip: false } }),
    ).toThrow(/16384/);
    expect(() => encodeControl({ pathId: 0, pathSeq: 0, sendTimeUs: 0 }, { kind: 'appData', appData: { seq: 0, reliable: false, text: false, payload: new Uint8Array(0), skip: true } })).toThrow(
      /skip/,
    );
    expect(() => encodeControl({ pathId: 0, pathSeq: 0, sendTimeUs: 0 }, { kind: 'appDataAck', appDataAck: { cumulative: 10, ranges: [20, 15], ackDelayUs: 0 } })).toThrow(/ascending/);
    expect(() => encodeControl({ pathId: 0, pathSeq: 0, sendTimeUs: 0 }, { kind: 'appDataAck', appDataAck: { cumulative: 10, ranges: [20], ackDelayUs: 0 } })).toThrow(/odd/);
    // Hand-built packet with a 20000-byte AppData payload: field 18, AppData.payload field 4.
    const payload = new Uint8Array(20_000);
    const inner = new Uint8Array([0x22, 0xa0, 0x9c, 0x01, ...payload]);
    const pkt = new Uint8Array([0x92, 0x01, 0xa4, 0x9c, 0x01, ...inner]);
    const r = decodePacket(pkt);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe('bad-field');
    const garbage = decodePacket(new Uint8Array([0x92, 0x01, 0x03, 0xff, 0xff, 0xff]));
    expect(garbage.ok).toBe(false);
  });
});
