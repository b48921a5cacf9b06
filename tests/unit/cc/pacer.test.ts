import { describe, expect, it } from 'vitest';
import { Pacer } from '../../../src/cc/pacer.js';
import { Priority } from '../../../src/core/types.js';

interface Item {
  priority: Priority;
  sizeBytes: number;
  id: number;
}
let nextId = 0;
const item = (priority: Priority, sizeBytes = 1200): Item => ({ priority, sizeBytes, id: nextId++ });

describe('Pacer', () => {
  it('spreads packets at pacingFactor x rate (1 ms polls)', () => {
    const p = new Pacer<Item>(1_000_000); // pacing 1.5 Mbps = 187.5 B/ms
    for (let i = 0; i < 200; i++) p.enqueue(item(Priority.Media), 0);
    let sent = 0;
    let maxPerPoll = 0;
    for (let t = 0; t <= 200_000; t += 1000) {
      const n = p.poll(t, 0).send.length;
      sent += n;
      maxPerPoll = Math.max(maxPerPoll, n);
    }
    const expected = (1_500_000 * 0.2) / 8 / 1200; // 31.25
    expect(sent).toBeGreaterThanOrEqual(Math.floor(expected) - 1);
    expect(sent).toBeLessThanOrEqual(Math.ceil(expected) + 1);
    expect(maxPerPoll).toBe(1);
  });

  it('polling at nextPollUs gives the same rate, and late polls catch up (up to maxBurstMs)', () => {
    const p = new Pacer<Item>(2_000_000, { pacingFactor: 1, maxQueueDelayMs: 10_000 });
    for (let i = 0; i < 500; i++) p.enqueue(item(Priority.Media), 0);
    let t = 0;
    let sent = 0;
    while (t < 1_000_000) {
      sent += p.poll(t, 0).send.length;
      const next = p.nextPollUs(t);
      expect(next).toBeDefined();
      expect(next!).toBeGreaterThanOrEqual(t);
      t = Math.max(next!, t + 1);
    }
    expect(Math.abs(sent - 2_000_000 / 8 / 1200)).toBeLessThanOrEqual(3);
    const q = new Pacer<Item>(2_000_000, { pacingFactor: 1, maxQueueDelayMs: 10_000 });
    for (let i = 0; i < 500; i++) q.enqueue(item(Priority.Media), 0);
    let sentLate = 0;
    for (let tt = 0; tt < 1_000_000; tt += 16_000) sentLate += q.poll(tt, 0).send.length; // 16 ms timer
    expect(sentLate).toBeGreaterThan(0.9 * (2_000_000 / 8 / 1200));
  });

  it('burstMs: a frame leaves at once while the debt drains within burstMs; the average rate is unchanged', () => {
    // 1 Mbps x 2.5 = 312.5 B/ms: a 40 ms burst is 12.5 kB, i.e. ~10 packets of 1200 bytes.
    const frame = (p: Pacer<Item>, n: number, t: number) => {
      for (let i = 0; i < n; i++) p.enqueue(item(Priority.Media), t);
    };
    const burst = new Pacer<Item>(1_000_000, { pacingFactor: 2.5, burstMs: 40 });
    const paced = new Pacer<Item>(1_000_000, { pacingFactor: 2.5 });
    burst.poll(0, 0);
    paced.poll(0, 0);
    frame(burst, 6, 1000);
    frame(paced, 6, 1000);
    expect(burst.poll(1000, 0).send.length).toBe(6);
    expect(paced.poll(1000, 0).send.length).toBeLessThanOrEqual(1);
    // A backlog (a key frame of 40 packets) still drains at the pacing rate after the burst.
    const p = new Pacer<Item>(1_000_000, { pacingFactor: 2.5, burstMs: 40, maxQueueDelayMs: 10_000 });
    p.poll(0, 0);
    frame(p, 400, 0);
    const first = p.poll(0, 0).send.length;
    expect(first).toBeGreaterThanOrEqual(9);
    expect(first).toBeLessThanOrEqual(12);
    let t = 0;
    let sent = first;
    while (t < 1_000_000) {
      t = Math.max(p.nextPollUs(t)!, t + 1);
      sent += p.poll(t, 0).send.length;
    }
    const expected = (2_500_000 / 8 / 1200) * 1 + first; // 1 s at the pacing rate after the first burst
    expect(sent).toBeGreaterThan(0.9 * expected);
    expect(sent).toBeLessThan(1.1 * expected);
    // Capped at 63,000 bytes whatever burstMs says.
    const big = new Pacer<Item>(50_000_000, { pacingFactor: 2.5, burstMs: 1000 });
    big.poll(0, 0);
    frame(big, 200, 0);
    expect(big.poll(0, 0).send.length * 1200).toBeLessThanOrEqual(63_000 + 2 * 1200);
  });

  it('sends in priority order, FIFO within a priority', () => {
    const p = new Pacer<Item>(100_000_000);
    const order = [Priority.Media, Priority.Fec, Priority.Media, Priority.Retransmission, Priority.Pps, Priority.Sps, Priority.Keyframe, Priority.Retransmission];
    const items = order.map((pr) => item(pr, 100));
    for (const it of items) p.enqueue(it, 0);
    p.poll(0, 0); // first poll: one packet
    const out = [...p.poll(0, 0).send, ...p.poll(20_000, 0).send];
    const all = [items[3], items[7], items[6], items[5], items[4], items[1], items[0], items[2]];
    expect(out.map((x) => x.id)).toEqual(all.slice(1).map((x) => x.id));
  });

  it('never lets bufferedAmount + sent exceed the buffer budget; holds and hints a recheck', () => {
    const p = new Pacer<Item>(10_000_000); // budget = 10 Mbps x 60 ms = 75 kB
    expect(p.bufferBudgetBytes()).toBe(75_000);
    for (let i = 0; i < 100; i++) p.enqueue(item(Priority.Media), 0);
    p.poll(0, 0);
    const r = p.poll(20_000, 70_000); // room for 4 packets of 1200 B
    expect(r.send.length).toBe(4);
    const held = p.poll(40_000, 75_000);
    expect(held.send.length).toBe(0);
    expect(p.nextPollUs(40_000)).toBe(45_000);
    expect(p.stats().heldByBuffer).toBeGreaterThanOrEqual(1);
    expect(new Pacer<Item>(100_000).bufferBudgetBytes()).toBe(15_000); // floor
  });

  it('drops media, FEC and retransmissions older than maxQueueDelayMs; key frame, SPS and PPS only after 4x', () => {
    const p = new Pacer<Item>(1000); // effectively nothing gets sent
    const first = item(Priority.Media);
    p.enqueue(first, 0);
    p.poll(0, 0); // the first poll lets one packet go
    const keep = [item(Priority.Keyframe), item(Priority.Sps), item(Priority.Pps)];
    const rtx = item(Priority.Retransmission);
    const media = item(Priority.Media);
    const fec = item(Priority.Fec);
    for (const it of [media, fec, rtx, ...keep]) p.enqueue(it, 0);
    expect(p.poll(300_000, 0).dropped).toEqual([]);
    const r = p.poll(300_001, 0);
    expect(r.dropped.map((x) => x.id).sort()).toEqual([media.id, fec.id, rtx.id].sort());
    expect(p.poll(1_200_000, 1e9).dropped).toEqual([]);
    expect(p.queuedPackets()).toBe(3);
    const late = p.poll(1_200_001, 1e9);
    expect(late.dropped.map((x) => x.id).sort()).toEqual(keep.map((k) => k.id).sort());
    const st = p.stats();
    expect(st.droppedExpired).toBe(6);
    expect(st.droppedByPriority[Priority.Media]).toBe(1);
    expect(st.droppedByPriority[Priority.Fec]).toBe(1);
    expect(st.droppedByPriority[Priority.Retransmission]).toBe(1);
    expect(st.droppedByPriority[Priority.Keyframe]).toBe(1);
  });

  it('queue bound: a more important item evicts the oldest least important one; otherwise refused', () => {
    const p = new Pacer<Item>(1000, { maxQueuePackets: 3 });
    const m = [item(Priority.Media), item(Priority.Media), item(Priority.Fec)];
    for (const it of m) expect(p.enqueue(it, 0)).toBe(true);
    expect(p.enqueue(item(Priority.Media), 0)).toBe(false); // same importance: refused
    const rtx = item(Priority.Retransmission);
    expect(p.enqueue(rtx, 0)).toBe(true); // evicts m[0]
    expect(p.enqueue(item(Priority.Keyframe), 0)).toBe(true); // evicts m[1]
    expect(p.enqueue(item(Priority.Sps), 0)).toBe(true); // evicts the FEC
    expect(p.enqueue(item(Priority.Pps), 0)).toBe(false); // only more important left
    expect(p.queuedPackets()).toBe(3);
    expect(p.queuedBytes()).toBe(3 * 1200);
    expect(p.nextPollUs(0)).toBe(0); // evicted items wait to be reported
    expect(p.poll(0, 0).dropped.map((x) => x.id)).toEqual([m[0].id, m[1].id, m[2].id]);
    expect(p.stats().droppedFull).toBe(5);
  });

  it('bytes/packets accounting, stats, invalid input', () => {
    const p = new Pacer<Item>(1_000_000);
    expect(p.enqueue(item(Priority.Media, Number.NaN), 0)).toBe(false);
    expect(p.enqueue(item(Priority.Media, -1), 0)).toBe(false);
    expect(p.enqueue({ priority: 42 as Priority, sizeBytes: 100, id: -1 }, 0)).toBe(true); // unknown priority = Media
    expect(p.queuedBytes()).toBe(100);
    expect(p.nextPollUs(0)).toBe(0);
    expect(p.poll(0, 0).send.length).toBe(1);
    expect(p.nextPollUs(0)).toBeUndefined();
    const st = p.stats();
    expect(st.droppedInvalid).toBe(2);
    expect(st.sentPackets).toBe(1);
    expect(st.sentByPriority[Priority.Media]).toBe(1);
    expect(st.pacingRateBps).toBe(1_500_000);
    expect(() => p.setRateBps(Number.NaN)).toThrow(RangeError);
    expect(() => p.setRateBps(-1)).toThrow(RangeError);
    expect(() => new Pacer<Item>(1e6, { pacingFactor: 0 })).toThrow(RangeError);
    expect(() => new Pacer<Item>(1e6, { maxQueuePackets: 0.5 })).toThrow(RangeError);
    p.setRateBps(0); // floored, never stalls
    p.enqueue(item(Priority.Media), 0);
    expect(p.nextPollUs(1000)).toBeDefined();
  });
});

import fc from 'fast-check';

describe('Pacer under random use (fast-check)', () => {
  it('never throws; every accepted item is sent, dropped or still queued exactly once; budget respected', () => {
    const size = fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.double(), fc.constant(Number.NaN));
    const op = fc.oneof(
      fc.record({ k: fc.constant('enq' as const), pr: fc.integer({ min: -2, max: 9 }), size, dt: fc.integer({ min: 0, max: 5000 }) }),
      fc.record({ k: fc.constant('poll' as const), buffered: fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.constant(Number.NaN)), dt: fc.integer({ min: 0, max: 400_000 }) }),
      fc.record({ k: fc.constant('rate' as const), bps: fc.integer({ min: 0, max: 50_000_000 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const p = new Pacer<Item>(500_000, { maxQueuePackets: 20 });
        const seen = new Map<number, string>();
        let accepted = 0;
        let now = 0;
        for (const o of ops) {
          if (o.k === 'enq') {
            now += o.dt;
            const it = { priority: o.pr as Priority, sizeBytes: o.size, id: nextId++ };
            if (p.enqueue(it, now)) {
              accepted++;
              seen.set(it.id, 'queued');
            }
          } else if (o.k === 'poll') {
            now += o.dt;
            const r = p.poll(now, o.buffered);
            let bytes = 0;
            for (const x of r.send) {
              expect(seen.get(x.id)).toBe('queued');
              seen.set(x.id, 'sent');
              bytes += x.sizeBytes;
            }
            for (const x of r.dropped) {
              expect(seen.get(x.id)).toBe('queued');
              seen.set(x.id, 'dropped');
            }
            const buffered = Number.isFinite(o.buffered) ? o.buffered : 0;
            // Only a lone item into an empty buffer may exceed the budget.
            if (r.send.length > 1 || (r.send.length === 1 && buffered > 0)) expect(buffered + bytes).toBeLessThanOrEqual(p.bufferBudgetBytes() + 1e-6);
            const next = p.nextPollUs(now);
            if (next !== undefined) expect(next).toBeGreaterThanOrEqual(now);
          } else {
            p.setRateBps(o.bps);
          }
          expect(p.queuedPackets()).toBeLessThanOrEqual(20);
          expect(p.queuedBytes()).toBeGreaterThanOrEqual(0);
        }
        const last = p.poll(now, 1e12); // reports pending evictions, sends nothing
        expect(last.send).toEqual([]);
        for (const x of last.dropped) seen.set(x.id, 'dropped');
        const queued = [...seen.values()].filter((v) => v === 'queued').length;
        expect(queued).toBe(p.queuedPackets());
        expect(accepted).toBe(seen.size);
      }),
      { numRuns: 200 },
    );
  });
});

describe('Pacer.purge (stale frames removed when a key frame is queued)', () => {
  it('removes only the matching items, keeps FIFO order of the rest, reports them as dropped and fixes the byte count', () => {
    const p = new Pacer<Item>(1_000_000);
    const a = item(Priority.Media, 1000);
    const b = item(Priority.Media, 500);
    const r = item(Priority.Retransmission, 700);
    const k = item(Priority.Keyframe, 1200);
    for (const x of [a, b, r, k]) expect(p.enqueue(x, 0)).toBe(true);
    expect(p.purge((x) => x === a || x === r)).toBe(2);
    expect(p.queuedBytes()).toBe(1700);
    expect(p.queuedPackets()).toBe(2);
    expect(p.stats().droppedStale).toBe(2);
    const first = p.poll(0, 0); // first poll: one packet, the key frame
    expect(first.dropped).toEqual([r, a]);
    expect(first.send).toEqual([k]);
    expect(p.poll(20_000, 0).send).toEqual([b]);
  });
});
