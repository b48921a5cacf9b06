import { describe, expect, it } from 'vitest';
import { InterArrival } from '../../../src/cc/inter-arrival.js';

/** Feed packets (send ms, arrival ms) and collect the completed-group deltas. */
function feed(ia: InterArrival, pkts: [number, number][], offsetUs = 0, systemUs?: (i: number) => number) {
  const out: { send: number; arrival: number; dv: number }[] = [];
  pkts.forEach(([s, a], i) => {
    if (ia.compute(s * 1000, a * 1000 + offsetUs, systemUs ? systemUs(i) : a * 1000, 1200)) {
      out.push({ send: ia.sendDeltaMs, arrival: ia.arrivalDeltaMs, dv: ia.delayVariationMs });
    }
  });
  return out;
}

describe('InterArrival (inter_arrival_delta.cc)', () => {
  it('groups packets sent within 5 ms and reports deltas between completed groups', () => {
    // Packets every 2 ms: groups {0,2,4}, {6,8,10}, {12,14,16}, {18,...}
    const pkts: [number, number][] = [];
    for (let t = 0; t <= 24; t += 2) pkts.push([t, t + 40]);
    const out = feed(new InterArrival(), pkts);
    // Group k's send time is its last packet: 4, 10, 16, 22 -> deltas of 6 ms.
    expect(out.length).toBe(3);
    for (const d of out) {
      expect(d.send).toBeCloseTo(6, 9);
      expect(d.arrival).toBeCloseTo(6, 9);
      expect(d.dv).toBeCloseTo(0, 9);
    }
  });

  it('positive delay variation when a queue builds, negative when it drains', () => {
    const grow: [number, number][] = [];
    for (let i = 0; i < 10; i++) grow.push([i * 10, 50 + i * 12]); // each packet its own group
    const g = feed(new InterArrival(), grow);
    expect(g.length).toBe(8);
    for (const d of g) expect(d.dv).toBeCloseTo(2, 9);
    const drain: [number, number][] = [];
    for (let i = 0; i < 10; i++) drain.push([i * 10, 500 + i * 9]);
    for (const d of feed(new InterArrival(), drain)) expect(d.dv).toBeCloseTo(-1, 9);
  });

  it('a huge receiver clock offset changes nothing (only deltas matter)', () => {
    const pkts: [number, number][] = [];
    for (let i = 0; i < 30; i++) pkts.push([i * 7, 30 + i * 8]);
    const a = feed(new InterArrival(), pkts, 0);
    const b = feed(new InterArrival(), pkts, 3e15, (i) => pkts[i][1] * 1000);
    expect(b).toEqual(a);
    expect(a.length).toBeGreaterThan(20);
  });

  it('ignores a packet sent before the current group (reordered) and counts it', () => {
    const ia = new InterArrival();
    const out = feed(ia, [
      [0, 50],
      [10, 60],
      [3, 61], // sent before the group that started at 10
      [20, 70],
      [30, 80],
    ]);
    expect(ia.reorderedPackets).toBe(1);
    expect(out.map((d) => d.send)).toEqual([10, 10]);
  });

  it('merges a burst: packets arriving together after a delay belong to the same group', () => {
    // Sent 6 ms apart (would be separate groups) but arrive 1 ms apart after a stall.
    const ia = new InterArrival();
    const out = feed(ia, [
      [0, 100],
      [20, 200],
      [26, 201],
      [32, 202],
      [60, 240],
      [80, 260],
    ]);
    // Groups: {0}, {20,26,32} (burst), {60}, {80}
    expect(out.map((d) => d.send)).toEqual([32, 28]);
    expect(out.map((d) => d.arrival)).toEqual([102, 38]);
  });

  it('resets on a receiver clock jump larger than 3 s relative to the local clock', () => {
    const ia = new InterArrival();
    const pkts: [number, number][] = [];
    for (let i = 0; i < 10; i++) pkts.push([i * 10, 50 + i * 10 + (i >= 5 ? 10_000 : 0)]);
    feed(ia, pkts, 0, (i) => (50 + i * 10) * 1000);
    expect(ia.resets).toBe(1);
  });

  it('resets after 3 consecutive reordered groups (negative arrival delta)', () => {
    const ia = new InterArrival();
    // The second packet of each group arrives before the previous group's last one.
    feed(ia, [
      [0, 1000],
      [20, 1200],
      [21, 900],
      [40, 1300],
      [41, 800],
      [60, 1400],
      [61, 700],
      [80, 1500],
    ]);
    expect(ia.resets).toBe(1);
  });

  it('rejects a non-positive group length', () => {
    expect(() => new InterArrival(0)).toThrow(RangeError);
  });
});
