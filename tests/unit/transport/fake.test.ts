import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { createFakePathPair } from '../../../src/transport/fake.js';
import type { PathTransportState } from '../../../src/transport/types.js';

const bytes = (...v: number[]) => new Uint8Array(v);

describe('createFakePathPair', () => {
  it('delivers both ways on microtasks and copies the bytes', async () => {
    const { a, b } = createFakePathPair(2);
    const atB: number[][] = [];
    const atA: number[][] = [];
    b.on('message', (m) => atB.push([...m]));
    a.on('message', (m) => atA.push([...m]));
    const buf = bytes(1, 2, 3);
    expect(a.send(buf)).toBe(true);
    buf[0] = 99; // sender reuses its buffer
    expect(b.send(bytes(4))).toBe(true);
    expect(atB).toEqual([]); // not synchronous
    await Promise.resolve();
    expect(atB).toEqual([[1, 2, 3]]);
    expect(atA).toEqual([[4]]);
    expect(a.pathId).toBe(2);
    expect(await a.selectedPair()).toEqual({
      id: 'fake-2-a',
      local: { address: '10.0.2.1', port: 5002, protocol: 'udp', type: 'host' },
      remote: { address: '10.0.2.2', port: 6002, protocol: 'udp', type: 'host' },
    });
  });

  it('applies delay on the manual clock and flushes in order', () => {
    const clock = new ManualClock();
    const p = createFakePathPair(0, { clock, delayMs: 20 });
    const got: number[] = [];
    p.b.on('message', (m) => got.push(m[0]!));
    p.a.send(bytes(1));
    clock.advanceMs(5);
    p.a.send(bytes(2));
    expect(p.flush(clock.nowUs() + 14_999)).toBe(0);
    clock.advanceMs(15);
    expect(p.flush()).toBe(1);
    expect(got).toEqual([1]);
    clock.advanceMs(5);
    expect(p.flush()).toBe(1);
    expect(got).toEqual([1, 2]);
    expect(p.inFlight()).toEqual({ ab: 0, ba: 0 });
  });

  it('loses about the configured fraction, reproducibly by seed', () => {
    const run = (seed: number) => {
      const clock = new ManualClock();
      const p = createFakePathPair(0, { clock, loss: 0.3, seed });
      let n = 0;
      p.b.on('message', () => n++);
      for (let i = 0; i < 2000; i++) p.a.send(bytes(i & 255));
      p.flush();
      return { n, st: p.stats().ab };
    };
    const r1 = run(7);
    expect(r1.n).toBeGreaterThan(1250);
    expect(r1.n).toBeLessThan(1550);
    expect(r1.st.lost + r1.st.delivered).toBe(2000);
    expect(run(7).n).toBe(r1.n);
    expect(run(8).n).not.toBe(r1.n);
  });

  it('bounds the in-flight queue by dropping the oldest', () => {
    const clock = new ManualClock();
    const p = createFakePathPair(0, { clock, delayMs: 10, maxQueue: 3 });
    const got: number[] = [];
    p.b.on('message', (m) => got.push(m[0]!));
    for (let i = 0; i < 5; i++) p.a.send(bytes(i));
    clock.advanceMs(10);
    p.flush();
    expect(got).toEqual([2, 3, 4]);
    expect(p.stats().ab.queueDrops).toBe(2);
  });

  it('models a bottleneck rate with bufferedAmount', () => {
    const clock = new ManualClock();
    const p = createFakePathPair(0, { clock, rateBps: 8_000_000 }); // 1 byte per µs
    for (let i = 0; i < 3; i++) p.a.send(new Uint8Array(1000));
    expect(p.a.bufferedAmount()).toBe(3000);
    clock.advanceUs(1000);
    expect(p.a.bufferedAmount()).toBe(2000);
    expect(p.flush()).toBe(1);
    clock.advanceUs(2000);
    expect(p.flush()).toBe(2);
    expect(p.a.bufferedAmount()).toBe(0);
  });

  it('state changes: new -> connected, close and fail propagate; send refused when not connected', async () => {
    const p = createFakePathPair(1, { connected: false });
    const states: PathTransportState[] = [];
    p.b.on('state', (s) => states.push(s));
    expect(p.a.state).toBe('new');
    expect(p.a.send(bytes(1))).toBe(false);
    expect(await p.a.selectedPair()).toBeUndefined();
    p.connect();
    expect(states).toEqual(['connecting', 'connected']);
    p.a.close();
    expect(p.b.state).toBe('closed');
    expect(p.b.send(bytes(1))).toBe(false);

    const q = createFakePathPair(1);
    const errs: string[] = [];
    q.a.on('error', (e) => errs.push(e.code));
    q.fail('ERR_ICE_CONNECTION_FAILURE');
    expect(q.a.state).toBe('failed');
    expect(errs).toEqual(['ERR_ICE_CONNECTION_FAILURE']);
    q.a.close(); // no effect after failure
    expect(q.a.state).toBe('failed');
  });

  it('drops messages for a receiver that closed meanwhile; listener errors are caught', () => {
    const clock = new ManualClock();
    const p = createFakePathPair(0, { clock, delayMs: 1 });
    let n = 0;
    p.b.on('message', () => {
      n++;
      throw new Error('app bug');
    });
    p.a.send(bytes(1));
    clock.advanceMs(1);
    p.flush();
    expect(n).toBe(1);
    expect(p.b.listenerErrors).toBe(1);
    p.a.send(bytes(2));
    p.b.close();
    clock.advanceMs(1);
    p.flush();
    expect(n).toBe(1);
    expect(p.stats().ab.deadDrops).toBe(1); // in flight when b closed
    expect(p.a.send(bytes(3))).toBe(false); // closing b closed a too
  });

  it('rejects bad options', () => {
    expect(() => createFakePathPair(0, { delayMs: 5 })).toThrow(RangeError);
    expect(() => createFakePathPair(0, { clock: new ManualClock(), loss: 2 })).toThrow(RangeError);
    expect(() => createFakePathPair(0, { clock: new ManualClock(), delayMs: -1 })).toThrow(RangeError);
    expect(() => createFakePathPair(-1)).toThrow(RangeError);
    expect(() => createFakePathPair(0, { delivery: 'manual' })).toThrow(RangeError);
  });
});
