import { describe, expect, it } from 'vitest';
import { SentPacketHistory } from '../../../src/cc/sent-history.js';
import type { PathReport } from '../../../src/core/types.js';

function report(begin: number, end: number, seqs: number[], at = (s: number) => 1000 + s): PathReport {
  return { pathId: 0, beginSeq: begin, endSeq: end, arrivals: seqs.map((s) => ({ pathSeq: s, arrivalUs: at(s) })), reportTimeUs: 0 };
}

describe('SentPacketHistory', () => {
  it('marks listed packets received, unlisted ones lost; a late arrival recovers without double counting', () => {
    const h = new SentPacketHistory(64);
    for (let s = 0; s < 10; s++) h.add(s, s * 1000, 100);
    h.applyReport(report(0, 4, [0, 1, 3]));
    expect(h.outcome).toMatchObject({ newlyReceived: 3, newlyLost: 2, recovered: 0 });
    h.applyReport(report(5, 9, [2, 5, 6, 7, 8, 9]));
    expect(h.outcome).toMatchObject({ newlyReceived: 5, newlyLost: 0, recovered: 1 });
    h.applyReport(report(5, 9, [5, 6]));
    expect(h.outcome).toMatchObject({ newlyReceived: 0, duplicates: 2, newlyLost: 0 });
  });

  it('inflight = bytes not covered; a lost report is covered by the next range', () => {
    const h = new SentPacketHistory(64);
    for (let s = 0; s < 15; s++) h.add(s, 0, 1000);
    expect(h.inflightBytes()).toBe(15_000);
    h.applyReport(report(0, 4, [0, 1, 2, 3, 4]));
    expect(h.inflightBytes()).toBe(10_000);
    h.applyReport(report(10, 14, [10, 11, 12, 13, 14])); // report for 5..9 was lost
    expect(h.inflightBytes()).toBe(0);
    expect(h.outcome.newlyLost).toBe(0); // 5..9 unknown, not lost
    h.add(15, 0, 1000);
    expect(h.inflightBytes()).toBe(1000);
  });

  it('sorts newly received packets by arrival time and picks the latest for RTT', () => {
    const h = new SentPacketHistory(64);
    for (let s = 0; s < 4; s++) h.add(s, s * 10, 100);
    h.applyReport(report(0, 3, [3, 0, 2, 1], (s) => [500, 300, 400, 900][s]));
    expect(h.newIdx.map((i) => h.arrivalUs[i])).toEqual([300, 400, 500, 900]);
    expect(h.lastArrivalUs).toBe(900);
    expect(h.lastArrivalSendUs).toBe(30);
  });

  it('lists the slots first marked lost by a report (lostIdx), in seq order, and clears them on the next', () => {
    const h = new SentPacketHistory(64);
    for (let s = 0; s < 6; s++) h.add(s, s * 10, 100);
    h.applyReport(report(0, 5, [0, 2, 5]));
    expect(h.lostIdx.map((i) => h.seqs[i])).toEqual([1, 3, 4]);
    expect(h.outcome.newlyLost).toBe(3);
    h.applyReport(report(3, 3, [3])); // a late arrival: recovered, nothing newly lost
    expect(h.lostIdx).toEqual([]);
    expect(h.outcome.recovered).toBe(1);
    expect(h.newIdx.map((i) => h.seqs[i])).toEqual([3]);
  });

  it('handles seq wrap-around', () => {
    const h = new SentPacketHistory(64);
    const base = 0xffff_fffa;
    for (let k = 0; k < 12; k++) h.add((base + k) >>> 0, k, 100);
    h.applyReport(report(base, 5, [0xffff_fffa, 0xffff_ffff, 0, 1, 5]));
    expect(h.outcome).toMatchObject({ newlyReceived: 5, newlyLost: 7 });
    expect(h.inflightBytes()).toBe(0);
  });

  it('counts unknown, invalid and out-of-window seqs; clips absurd ranges', () => {
    const h = new SentPacketHistory(16);
    for (let s = 0; s < 40; s++) h.add(s, 0, 10);
    const r = report(0, 1_000_000, [1, 39, 1000]); // end far ahead of anything sent
    (r.arrivals as unknown[]).push(null, { pathSeq: -1, arrivalUs: 0 }, { pathSeq: 2.5, arrivalUs: 0 }, { pathSeq: 38, arrivalUs: Number.NaN });
    expect(h.applyReport(r)).toBe(true);
    expect(h.outcome.unknown).toBe(2); // 1 (evicted) and 1000 (never sent)
    expect(h.outcome.invalid).toBe(4);
    expect(h.outcome.newlyReceived).toBe(1);
    // Only the 16 packets still held can be declared lost: 24..39 minus 39.
    expect(h.outcome.newlyLost).toBe(15);
    h.applyReport(report(30, 20, [])); // inverted range: ignored
    expect(h.outcome.newlyLost).toBe(0);
    expect(h.applyReport(null as unknown as PathReport)).toBe(false);
  });

  it('a valid but far-away range (disjoint from the window) costs nothing and marks nothing', () => {
    const h = new SentPacketHistory(256);
    for (let s = 0; s < 42; s++) h.add(s, 0, 10);
    h.applyReport(report(1_005_294_509, 2_706_616_835, [])); // 1.7e9 seqs, none ours
    expect(h.outcome.newlyLost).toBe(0);
    expect(h.inflightBytes()).toBe(420);
    h.applyReport(report(0xffff_fff0, 10, [])); // straddles 0: covers 0..10 only
    expect(h.outcome.newlyLost).toBe(11);
    expect(h.inflightBytes()).toBe(310);
  });
});
