import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { Link, type LinkConfig } from '../../../sim/net/link.js';
import { type CapacityTrace, bytesBetween, constantRate, loadMahimahi, parseMahimahi } from '../../../sim/net/traces.js';

const TRACES = join(__dirname, '../../../../shared/traces');
const HAVE_SHARED = existsSync(TRACES);

interface Delivery {
  item: number;
  atUs: number;
}

function mk(cfg: Partial<LinkConfig> & { capacity: CapacityTrace }, seed = 1): Link<number> {
  return new Link<number>({ delay: 0, ...cfg }, new Rng(seed));
}

/**
 * Drive a link with a periodic sender (one packet of `size` bytes every
 * `everyUs`) from 0 to `untilUs`, polling every `stepUs`.
 */
function drive(link: Link<number>, size: number, everyUs: number, untilUs: number, stepUs = 250): Delivery[] {
  const out: Delivery[] = [];
  let nextSend = 0;
  let id = 0;
  for (let t = 0; t <= untilUs; t += stepUs) {
    while (nextSend <= t) {
      link.send(id++, size, nextSend);
      nextSend += everyUs;
    }
    out.push(...link.poll(t));
  }
  return out;
}

function bytesIn(ds: Delivery[], size: number, fromUs: number, toUs: number): number {
  return ds.filter((d) => d.atUs >= fromUs && d.atUs < toUs).length * size;
}

describe('Link capacity', () => {
  it('a saturated 12 Mbps constant link delivers 12 Mbps (within 5%)', () => {
    const link = mk({ capacity: constantRate(12e6), delay: 20, queue: { packets: 1000 } });
    const ds = drive(link, 1200, (1200 * 8 * 1e6) / 14e6, 10e6); // offered 14 Mbps
    const rate = (bytesIn(ds, 1200, 1e6, 10e6) * 8) / 9;
    expect(Math.abs(rate / 12e6 - 1)).toBeLessThan(0.05);
    expect(link.stats().dropped.queue).toBeGreaterThan(0); // excess offered load was dropped
  });

  it('is byte-accurate: one opportunity may finish one packet and start the next', () => {
    const link = mk({ capacity: constantRate(12e6) }); // 1500 bytes at each ms
    for (let i = 0; i < 6; i++) expect(link.send(i, 1000, 0)).toBe(true);
    const ds = link.poll(10_000);
    // ms0: p0 + half p1; ms1: rest of p1 + p2; ms2: p3 + half p4; ms3: rest of p4 + p5
    expect(ds.map((d) => d.atUs)).toEqual([0, 1000, 1000, 2000, 3000, 3000]);
  });

  it('loses unused opportunities (no credit accumulates while idle)', () => {
    const link = mk({ capacity: constantRate(12e6) });
    link.send(0, 1500, 0);
    link.send(1, 1500, 5500);
    link.send(2, 1500, 5500);
    expect(link.poll(1e6).map((d) => d.atUs)).toEqual([0, 6000, 7000]);
  });

  it('a packet arriving mid-millisecond waits for the next opportunity', () => {
    const link = mk({ capacity: constantRate(12e6), delay: 30 });
    link.send(0, 1200, 1_000_300);
    expect(link.nextEventUs()).toBe(1_031_000);
  });

  it('loops the trace and honours the start offset', () => {
    const trace = parseMahimahi('3\n7\n10\n', 't'); // opportunities at ms = 0, 3, 7 (mod 10)
    const a = mk({ capacity: trace });
    for (let i = 0; i < 7; i++) a.send(i, 1500, 0);
    expect(a.poll(1e6).map((d) => d.atUs / 1000)).toEqual([0, 3, 7, 10, 13, 17, 20]);
    const b = mk({ capacity: trace, traceOffsetMs: 3 }); // link ms m = trace ms m+3
    for (let i = 0; i < 6; i++) b.send(i, 1500, 0);
    expect(b.poll(1e6).map((d) => d.atUs / 1000)).toEqual([0, 4, 7, 10, 14, 17]);
  });

  it('sends nothing during trace gaps and uses every opportunity around them', () => {
    // period 1000 ms; one 1500-byte opportunity at each ms 0..99, nothing in 100..999
    const stamps = Array.from({ length: 99 }, (_, i) => i + 1).concat([1000]);
    const trace = parseMahimahi(stamps.join('\n'), 'onoff');
    const link = mk({ capacity: trace, queue: { packets: 5000 } });
    const ds = drive(link, 1500, 5000, 5e6, 1000); // 200 packets/s offered vs 100/s capacity
    expect(ds.every((d) => (d.atUs / 1000) % 1000 < 100)).toBe(true);
    for (let s = 1; s < 5; s++) expect(bytesIn(ds, 1500, s * 1e6, (s + 1) * 1e6)).toBe(100 * 1500);
    // a packet arriving in a gap waits for the next on-period, exactly
    const one = mk({ capacity: trace });
    one.send(0, 1500, 5_300_000);
    expect(one.nextEventUs()).toBe(6_000_000);
  });

  function checkSaturatedTrace(trace: CapacityTrace, seconds: number): void {
    const link = mk({ capacity: trace, queue: { packets: 20_000 } });
    const size = 1000;
    const ds = drive(link, size, 1e3 / 3, seconds * 1e6, 1000); // 24 Mbps offered
    let checked = 0;
    for (let s = 1; s < seconds; s++) {
      const want = bytesBetween(trace, s * 1000, (s + 1) * 1000);
      if (want < 50_000) continue;
      const got = bytesIn(ds, size, s * 1e6, (s + 1) * 1e6);
      expect(Math.abs(got / want - 1), `second ${s}`).toBeLessThan(0.02);
      checked++;
    }
    expect(checked).toBeGreaterThan(seconds / 2);
    const total = bytesIn(ds, size, 0, seconds * 1e6);
    expect(Math.abs(total / bytesBetween(trace, 0, seconds * 1000) - 1)).toBeLessThan(0.01);
  }

  it('a saturated synthetic mahimahi trace delivers the trace bytes per second (within 2%)', () => {
    const rng = new Rng(7);
    const stamps: number[] = [];
    for (let ms = 1; ms <= 20_000; ms++) {
      const burst = Math.sin(ms / 900) > 0 ? 2 : 0;
      const n = Math.floor(rng.next() * (burst + 1.5));
      for (let k = 0; k < n; k++) stamps.push(ms);
    }
    checkSaturatedTrace(parseMahimahi(stamps.join('\n'), 'synthetic'), 20);
  });

  it.skipIf(!HAVE_SHARED)('a saturated Verizon-LTE-short.up delivers the trace bytes per second (within 2%)', () => {
    checkSaturatedTrace(loadMahimahi(join(TRACES, 'mahimahi/Verizon-LTE-short.up')), 30);
  });
});

describe('Link delay', () => {
  it('adds exactly the propagation delay', () => {
    const link = mk({ capacity: constantRate(100e6), delay: 50 });
    link.send(1, 1200, 1_000_000);
    expect(link.poll(1_049_999)).toEqual([]);
    expect(link.nextEventUs()).toBe(1_050_000);
    expect(link.poll(1_050_000)).toEqual([{ item: 1, atUs: 1_050_000 }]);
    expect(link.nextEventUs()).toBeUndefined();
  });

  it('follows a delay trace and never reorders', () => {
    const delay = { name: 'd', stepMs: 100, delayMs: Float64Array.of(10, 80, 5) };
    const link = mk({ capacity: constantRate(100e6), delay });
    link.send(0, 100, 50_000); // delay 10 -> 60 ms
    link.send(1, 100, 150_000); // delay 80 -> 230 ms
    link.send(2, 100, 210_000); // delay 5 -> 215 ms, held behind #1 -> 230 ms
    link.send(3, 100, 450_000); // loops (period 300 ms): 450 = 150 -> delay 80 -> 530 ms
    expect(link.poll(1e6)).toEqual([
      { item: 0, atUs: 60_000 },
      { item: 1, atUs: 230_000 },
      { item: 2, atUs: 230_000 },
      { item: 3, atUs: 530_000 },
    ]);
  });
});

describe('Link loss', () => {
  it('Bernoulli loss rate matches p over many packets and is seed-deterministic', () => {
    const run = (seed: number): boolean[] => {
      const link = mk({ capacity: constantRate(1e9), loss: { kind: 'bernoulli', p: 0.1 }, queue: { packets: 1e6 } }, seed);
      const r: boolean[] = [];
      for (let i = 0; i < 100_000; i++) r.push(link.send(i, 100, i * 10));
      const st = link.stats();
      expect(st.dropped.loss).toBe(r.filter((x) => !x).length);
      return r;
    };
    const a = run(42);
    const lossRate = a.filter((x) => !x).length / a.length;
    expect(Math.abs(lossRate - 0.1)).toBeLessThan(0.005);
    expect(run(42)).toEqual(a);
    expect(run(43)).not.toEqual(a);
  });

  function meanBurst(drops: boolean[]): number {
    let bursts = 0;
    let lost = 0;
    for (let i = 0; i < drops.length; i++) {
      if (drops[i]) {
        lost++;
        if (i === 0 || !drops[i - 1]) bursts++;
      }
    }
    return lost / bursts;
  }

  it('Gilbert-Elliott losses come in bursts of mean length 1/pBadToGood', () => {
    const link = mk({ capacity: constantRate(1e9), loss: { kind: 'gilbertElliott', pGoodToBad: 0.01, pBadToGood: 0.1 }, queue: { packets: 1e6 } }, 9);
    const drops: boolean[] = [];
    for (let i = 0; i < 200_000; i++) drops.push(!link.send(i, 100, i * 10));
    const rate = drops.filter(Boolean).length / drops.length;
    expect(Math.abs(rate - 0.01 / 0.11)).toBeLessThan(0.015); // stationary P(Bad) = 0.0909
    expect(meanBurst(drops)).toBeGreaterThan(7); // ~10; Bernoulli at this rate gives ~1.1
    expect(meanBurst(drops)).toBeLessThan(13);

    const bern = mk({ capacity: constantRate(1e9), loss: { kind: 'bernoulli', p: rate }, queue: { packets: 1e6 } }, 9);
    const bd: boolean[] = [];
    for (let i = 0; i < 200_000; i++) bd.push(!bern.send(i, 100, i * 10));
    expect(meanBurst(bd)).toBeLessThan(1.3);
  });

  it('rejects invalid loss configs', () => {
    expect(() => mk({ capacity: constantRate(1e6), loss: { kind: 'bernoulli', p: 1.5 } })).toThrow(RangeError);
    expect(() => mk({ capacity: constantRate(1e6), loss: { kind: 'gilbertElliott', pGoodToBad: -0.1, pBadToGood: 0.5 } })).toThrow(/pGoodToBad/);
  });
});

describe('Link drop-tail queue', () => {
  // 1 Mbps = 125 bytes/ms: a 1250-byte packet needs 10 ms; packet k sent at 0 departs at 10k+9 ms.
  const slow = constantRate(1e6);

  it('limits packets', () => {
    const link = mk({ capacity: slow, queue: { packets: 10 } });
    const ok = Array.from({ length: 20 }, (_, i) => link.send(i, 1250, 0));
    expect(ok.filter(Boolean).length).toBe(10);
    expect(ok.slice(0, 10).every(Boolean)).toBe(true);
    expect(link.stats().dropped.queue).toBe(10);
    expect(link.stats().queuedPackets).toBe(10);
    // after 2 departures (ms 9 and 19) there is room for 2 more
    expect(link.send(100, 1250, 19_000)).toBe(true);
    expect(link.send(101, 1250, 19_000)).toBe(true);
    expect(link.send(102, 1250, 19_000)).toBe(false);
  });

  it('limits bytes', () => {
    const link = mk({ capacity: slow, queue: { bytes: 5000 } });
    const ok = Array.from({ length: 10 }, (_, i) => link.send(i, 1250, 0));
    expect(ok.filter(Boolean).length).toBe(4);
    expect(link.stats().queuedBytes).toBe(5000);
  });

  it('limits queueing delay (ms); an empty queue always accepts', () => {
    const link = mk({ capacity: slow, queue: { ms: 50 } });
    const ok = Array.from({ length: 10 }, (_, i) => link.send(i, 1250, 0));
    expect(ok.filter(Boolean).length).toBe(5); // waits 9, 19, 29, 39, 49 ms; the 6th would wait 59
    const big = mk({ capacity: slow, queue: { ms: 5 } });
    expect(big.send(0, 1250, 0)).toBe(true); // alone, it needs 9 ms > 5 ms but the queue was empty
    const st = link.stats();
    expect(st.queueDelay.count).toBe(5);
    expect(st.queueDelay.maxMs).toBe(49);
    expect(st.queueDelay.recentMs).toEqual([9, 19, 29, 39, 49]);
  });
});

describe('Link blackhole', () => {
  it('drops everything sent during a down period, and flushes packets that would still be queued', () => {
    const link = mk({ capacity: constantRate(8e6), delay: 10, downPeriods: [[1000, 2000]] }); // 1000 bytes/ms
    const sent: boolean[] = [];
    for (let ms = 0; ms < 3000; ms++) sent.push(link.send(ms, 1000, ms * 1000));
    expect(sent.slice(0, 1000).every(Boolean)).toBe(true);
    expect(sent.slice(1000, 2000).some(Boolean)).toBe(false);
    expect(sent.slice(2000).every(Boolean)).toBe(true);
    const ds = link.poll(10e6);
    expect(ds.length).toBe(2000);
    expect(ds.every((d) => d.atUs < 1_010_000 || d.atUs >= 2_010_000)).toBe(true);
    expect(link.stats().dropped.blackhole).toBe(1000);

    const q = mk({ capacity: constantRate(8e6), downPeriods: [[1000, 2000]] });
    const burst = Array.from({ length: 20 }, (_, i) => q.send(i, 1000, 990_000));
    expect(burst.filter(Boolean).length).toBe(10); // departs at 990..999 ms; the rest would meet the outage
  });

  it('manual setDown flushes the bottleneck queue, drops while down, and resumes', () => {
    const link = mk({ capacity: constantRate(1e6), delay: 5 }); // 1250 bytes take 10 ms
    for (let i = 0; i < 5; i++) link.send(i, 1250, 0); // depart 9, 19, 29, 39, 49 ms
    link.setDown(true, 25_000);
    expect(link.isDownAt(25_000)).toBe(true);
    expect(link.send(10, 1250, 30_000)).toBe(false);
    link.setDown(false, 40_000);
    expect(link.send(11, 1250, 40_000)).toBe(true); // fresh capacity from 40 ms -> departs 49 ms
    expect(link.poll(1e6)).toEqual([
      { item: 0, atUs: 14_000 },
      { item: 1, atUs: 24_000 },
      { item: 11, atUs: 54_000 },
    ]);
    expect(link.stats().dropped.blackhole).toBe(4);
  });
});

describe('Link schedule', () => {
  it('steps the capacity (8 -> 0.5 Mbps -> back to the base trace)', () => {
    const link = mk({
      capacity: constantRate(8e6),
      queue: { ms: 100 },
      schedule: [
        { atMs: 2000, rateBps: 0.5e6 },
        { atMs: 4000, rateBps: null },
      ],
    });
    expect(link.capacityAtMs(1999)).toBe(1000);
    expect(link.capacityAtMs(2000)).toBe(62.5);
    expect(link.capacityAtMs(4000)).toBe(1000);
    const ds = drive(link, 1000, 1e3 / 1.5, 6e6, 1000); // 12 Mbps offered
    const rate = (a: number, b: number): number => (bytesIn(ds, 1000, a * 1e6, b * 1e6) * 8) / (b - a);
    expect(Math.abs(rate(1, 2) / 8e6 - 1)).toBeLessThan(0.05);
    expect(Math.abs(rate(2.5, 4) / 0.5e6 - 1)).toBeLessThan(0.05);
    expect(Math.abs(rate(4.5, 6) / 8e6 - 1)).toBeLessThan(0.05);
  });

  it('steps the delay (+150 ms) keeping delivery order', () => {
    const link = mk({
      capacity: constantRate(100e6),
      delay: 30,
      schedule: [
        { atMs: 1000, delayMs: 180 },
        { atMs: 2000, delayMs: null },
      ],
    });
    link.send(0, 100, 500_000);
    link.send(1, 100, 1_500_000);
    link.send(2, 100, 1_999_000);
    link.send(3, 100, 2_001_000);
    link.send(4, 100, 2_500_000);
    expect(link.poll(1e7).map((d) => d.atUs / 1000)).toEqual([530, 1680, 2179, 2179, 2530]);
  });

  it('steps the loss model', () => {
    const link = mk({ capacity: constantRate(100e6), schedule: [{ atMs: 1000, loss: { kind: 'bernoulli', p: 1 } }] });
    expect(link.send(0, 100, 999_000)).toBe(true);
    expect(link.send(1, 100, 1_000_000)).toBe(false);
    expect(link.stats().dropped.loss).toBe(1);
  });
});

describe('Link robustness', () => {
  it('counts invalid sizes as drops, clamps time going backwards, rejects NaN time', () => {
    const link = mk({ capacity: constantRate(12e6), delay: 10 });
    expect(link.send(0, 0, 0)).toBe(false);
    expect(link.send(0, Number.NaN, 0)).toBe(false);
    expect(link.send(0, -5, 0)).toBe(false);
    expect(link.stats().dropped.invalid).toBe(3);
    link.send(1, 100, 5000);
    link.send(2, 100, 1000); // treated as 5000 µs
    expect(link.poll(1e6).map((d) => d.atUs)).toEqual([15_000, 15_000]);
    expect(() => link.send(3, 100, Number.NaN)).toThrow(RangeError);
  });

  it('rejects invalid configs naming the field', () => {
    const c = constantRate(1e6);
    expect(() => mk({ capacity: c, delay: -1 })).toThrow(/delay/);
    expect(() => mk({ capacity: c, queue: { packets: 0 } })).toThrow(/queue\.packets/);
    expect(() => mk({ capacity: c, downPeriods: [[5, 5]] })).toThrow(/downPeriods\[0\]/);
    expect(() => mk({ capacity: c, schedule: [{ atMs: 0, rateBps: -1 }] })).toThrow(/schedule\[0\]\.rateBps/);
    expect(() => mk({ capacity: { name: 'x', periodMs: 2, bytesPerMs: new Float64Array(1) } })).toThrow(/capacity/);
  });

  it('drops (does not hang) when a trace offers nothing for longer than the wait bound', () => {
    const link = mk({ capacity: constantRate(1e6), schedule: [{ atMs: 0, rateBps: 0 }] });
    expect(link.send(0, 1000, 0)).toBe(false);
    expect(link.send(1, 1000, 1000)).toBe(false);
    expect(link.stats().dropped.queue).toBe(2);
  });

  it('invariants hold for random traffic (order, delay lower bound, conservation, determinism)', () => {
    fc.assert(
      fc.property(
        fc.record({
          rateMbps: fc.double({ min: 0.1, max: 50, noNaN: true }),
          delayMs: fc.integer({ min: 0, max: 200 }),
          p: fc.double({ min: 0, max: 0.3, noNaN: true }),
          qPackets: fc.integer({ min: 1, max: 200 }),
          seed: fc.integer({ min: 1, max: 1000 }),
          ops: fc.array(fc.tuple(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 1, max: 1500 })), { minLength: 1, maxLength: 300 }),
        }),
        ({ rateMbps, delayMs, p, qPackets, seed, ops }) => {
          const run = (): { ds: Delivery[]; sentAt: number[]; accepted: number; link: Link<number> } => {
            const link = mk({ capacity: constantRate(rateMbps * 1e6), delay: delayMs, loss: { kind: 'bernoulli', p }, queue: { packets: qPackets } }, seed);
            const ds: Delivery[] = [];
            const sentAt: number[] = [];
            let t = 0;
            let accepted = 0;
            ops.forEach(([dt, size], i) => {
              t += dt;
              sentAt.push(t);
              if (link.send(i, size, t)) accepted++;
              ds.push(...link.poll(t));
            });
            ds.push(...link.poll(t + 120e6));
            return { ds, sentAt, accepted, link };
          };
          const a = run();
          const st = a.link.stats();
          expect(a.ds.length).toBe(a.accepted);
          expect(st.sent).toBe(st.delivered + st.dropped.queue + st.dropped.loss + st.dropped.blackhole + st.dropped.invalid);
          for (let i = 1; i < a.ds.length; i++) {
            expect(a.ds[i].item).toBeGreaterThan(a.ds[i - 1].item);
            expect(a.ds[i].atUs).toBeGreaterThanOrEqual(a.ds[i - 1].atUs);
          }
          for (const d of a.ds) expect(d.atUs).toBeGreaterThanOrEqual(a.sentAt[d.item] + delayMs * 1000);
          expect(run().ds).toEqual(a.ds);
        },
      ),
      { numRuns: 100 },
    );
  });
});
