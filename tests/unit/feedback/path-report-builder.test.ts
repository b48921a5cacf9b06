import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MAX_RELIST_ARRIVALS, PathReportBuilder } from '../../../src/feedback/path-report-builder.js';
import { seqAdd, seqDiff } from '../../../src/core/seq.js';
import { SentPacketHistory } from '../../../src/cc/sent-history.js';
import { GccEstimator } from '../../../src/cc/gcc.js';

describe('PathReportBuilder', () => {
  it('reports nothing before any arrival', () => {
    const b = new PathReportBuilder(1);
    expect(b.makeReport(1000)).toBeUndefined();
  });

  it('covers [first, newest], lists arrivals in arrival order, gaps are implied lost', () => {
    const b = new PathReportBuilder(2);
    b.onPacket(10, 1000);
    b.onPacket(12, 1100);
    b.onPacket(11, 1200); // reordered inside the batch
    b.onPacket(15, 1300);
    const r = b.makeReport(5000)!;
    expect(r.pathId).toBe(2);
    expect(r.beginSeq).toBe(10);
    expect(r.endSeq).toBe(15);
    expect(r.reportTimeUs).toBe(5000);
    expect(r.arrivals.map((a) => a.pathSeq)).toEqual([10, 12, 11, 15]);
    expect(r.arrivals.map((a) => a.arrivalUs)).toEqual([1000, 1100, 1200, 1300]);
    // the next report starts right after the previous end
    b.onPacket(17, 1400);
    const r2 = b.makeReport(6000)!;
    expect(r2.beginSeq).toBe(16);
    expect(r2.endSeq).toBe(17);
    expect(r2.arrivals).toEqual([{ pathSeq: 17, arrivalUs: 1400 }]);
    expect(b.makeReport(7000)).toBeUndefined();
  });

  it('ignores duplicates, within and across reports', () => {
    const b = new PathReportBuilder(0);
    b.onPacket(1, 10);
    b.onPacket(1, 20);
    b.onPacket(2, 30);
    const r = b.makeReport(100)!;
    expect(r.arrivals.map((a) => a.pathSeq)).toEqual([1, 2]);
    b.onPacket(2, 40);
    b.onPacket(1, 50);
    expect(b.makeReport(200)).toBeUndefined();
    expect(b.stats().duplicates).toBe(3);
  });

  it('still reports a late packet from an earlier range, extending the range back to it', () => {
    const b = new PathReportBuilder(0);
    for (const s of [1, 2, 4, 5]) b.onPacket(s, s * 100);
    const r1 = b.makeReport(1000)!;
    expect([r1.beginSeq, r1.endSeq]).toEqual([1, 5]); // 3 implied lost
    b.onPacket(3, 1100); // late
    b.onPacket(6, 1200);
    const r2 = b.makeReport(2000)!;
    expect([r2.beginSeq, r2.endSeq]).toEqual([3, 6]);
    // 4 and 5 (re-covered, received) are listed again with their arrival times, in arrival order
    expect(r2.arrivals).toEqual([
      { pathSeq: 4, arrivalUs: 400 },
      { pathSeq: 5, arrivalUs: 500 },
      { pathSeq: 3, arrivalUs: 1100 },
      { pathSeq: 6, arrivalUs: 1200 },
    ]);
    expect(b.stats().late).toBe(1);
    expect(b.stats().relisted).toBe(2);
    // the next report still starts after the newest end
    b.onPacket(7, 1300);
    expect(b.makeReport(2100)!.beginSeq).toBe(7);
    // only late packets: the range spans just them
    const b2 = new PathReportBuilder(0);
    b2.onPacket(1, 1);
    b2.onPacket(4, 2);
    b2.makeReport(10);
    b2.onPacket(3, 20);
    b2.onPacket(2, 21);
    const r3 = b2.makeReport(30)!;
    expect([r3.beginSeq, r3.endSeq]).toEqual([2, 3]);
    expect(r3.arrivals.map((a) => a.pathSeq)).toEqual([3, 2]);
    b2.onPacket(5, 40);
    expect(b2.makeReport(50)!.beginSeq).toBe(5);
  });

  it('a lost report followed by a late packet: the seqs that report listed are not implied lost at the sender', () => {
    const b = new PathReportBuilder(0);
    const h = new SentPacketHistory();
    for (let s = 0; s < 30; s++) h.add(s, s * 1000, 1000);
    for (let s = 0; s < 10; s++) b.onPacket(s, 50_000 + s * 1000);
    h.applyReport(b.makeReport(60_000)!);
    for (let s = 10; s < 20; s++) if (s !== 12) b.onPacket(s, 60_000 + s * 1000);
    b.makeReport(80_000); // LOST on a dead downlink: the sender never sees 10, 11, 13..19 received
    for (let s = 20; s < 25; s++) b.onPacket(s, 80_000 + s * 1000);
    h.applyReport(b.makeReport(110_000)!);
    b.onPacket(12, 111_000); // late
    b.onPacket(25, 112_000);
    const r = b.makeReport(120_000)!;
    expect([r.beginSeq, r.endSeq]).toEqual([12, 25]);
    // 13..24 (the re-covered part [12, 24], received) listed again with their original
    // arrival times, before the newer arrivals
    expect(r.arrivals.map((a) => a.pathSeq)).toEqual([13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 12, 25]);
    expect(r.arrivals[0].arrivalUs).toBe(73_000);
    h.applyReport(r);
    expect(h.outcome.newlyLost).toBe(0); // was 7: all of 13..19 read as lost
    expect(h.outcome.newlyReceived).toBe(9); // 13..19, 12, 25
    expect(h.outcome.duplicates).toBe(5); // 20..24: already received
  });

  it('a re-listed seq the sender already has as received is a duplicate: no new delay sample, no loss change', () => {
    const b = new PathReportBuilder(0);
    const h = new SentPacketHistory();
    for (let s = 0; s < 20; s++) h.add(s, s * 1000, 1000);
    for (let s = 0; s < 10; s++) if (s !== 3) b.onPacket(s, 50_000 + s * 1000);
    h.applyReport(b.makeReport(60_000)!); // 3 implied lost
    expect(h.outcome.newlyLost).toBe(1);
    b.onPacket(3, 61_000); // late
    b.onPacket(10, 62_000);
    const r = b.makeReport(70_000)!;
    expect(r.arrivals.length).toBe(8); // 4..9 re-listed, 3, 10
    h.applyReport(r);
    expect(h.outcome.duplicates).toBe(6);
    expect(h.outcome.recovered).toBe(1);
    expect(h.outcome.newlyReceived).toBe(1);
    expect(h.outcome.newlyLost).toBe(0);
    expect(h.newIdx.map((i) => h.arrivalUs[i])).toEqual([61_000, 62_000]); // only 3 and 10 feed the delay estimator
  });

  it('GCC: re-listed old arrivals the sender never heard about count as received, without a loss report or an inter-arrival reset', () => {
    const run = (dropReport: boolean) => {
      const b = new PathReportBuilder(0);
      const g = new GccEstimator({ startBps: 500_000, minBps: 100_000, maxBps: 5_000_000 });
      let seq = 0;
      // 2 s at 50 packets/s, one report per 100 ms; report k=12 is lost and seq 600 arrives only at the end
      for (let k = 0; k < 20; k++) {
        for (let j = 0; j < 5; j++) {
          const sendUs = k * 100_000 + j * 20_000;
          g.onPacketSent({ pathSeq: seq, sendTimeUs: sendUs, sizeBytes: 1000 });
          if (!(k === 12 && j === 0)) b.onPacket(seq, sendUs + 30_000);
          seq++;
        }
        if (k === 19) b.onPacket(60, k * 100_000 + 95_000); // late
        const r = b.makeReport(k * 100_000 + 99_000);
        if (r && !(dropReport && k === 12)) g.onReport(r, k * 100_000 + 99_000 + 30_000);
      }
      return g;
    };
    const st = run(true).stats();
    expect(st.packetsLost).toBe(0); // on the old builder: 4 (61..64, received, read as lost)
    expect(st.lossRate).toBe(0);
    expect(st.packetsReceived).toBe(100);
    expect(st.interArrivalResets).toBe(0);
    // the old arrivals (sent before the current inter-arrival group) are skipped by the
    // delay-based detector: same hypothesis as the call with every report delivered
    const ref = run(false).stats();
    expect(st.bandwidthUsage).toBe(ref.bandwidthUsage);
    expect(st.delayBasedBps).toBeGreaterThan(0.8 * ref.delayBasedBps);
  });

  it('the re-list is bounded by MAX_RELIST_ARRIVALS and maxReportRange, and reaches back no further than the late packet', () => {
    const b = new PathReportBuilder(0, { maxEntries: 2048 }); // window 8192 seqs
    for (let s = 0; s < 7000; s++) {
      if (s !== 500) b.onPacket(s, s * 10);
      if (s % 100 === 99) b.makeReport(s * 10 + 5);
    }
    b.onPacket(500, 80_000); // late: re-covers [500, 6999]
    b.onPacket(7000, 80_010);
    const r = b.makeReport(90_000)!;
    expect([r.beginSeq, r.endSeq]).toEqual([500, 7000]);
    expect(r.arrivals.length).toBe(MAX_RELIST_ARRIVALS);
    expect(new Set(r.arrivals.map((a) => a.pathSeq)).size).toBe(MAX_RELIST_ARRIVALS);
    for (const a of r.arrivals) expect(a.pathSeq >= 500 && a.pathSeq <= 7000).toBe(true);
    expect(r.arrivals.slice(-2).map((a) => a.pathSeq)).toEqual([500, 7000]); // the pending ones are never left out
    expect(b.stats().relisted).toBe(MAX_RELIST_ARRIVALS - 2);
    expect(b.stats().rangeClamped).toBe(6499 - (MAX_RELIST_ARRIVALS - 2));
    // maxReportRange clamps the re-covered part to the newest seqs
    const c = new PathReportBuilder(0, { maxReportRange: 50 });
    for (let s = 0; s < 300; s++) {
      if (s !== 10) c.onPacket(s, s);
      if (s % 10 === 9) c.makeReport(s + 0.5);
    }
    c.onPacket(10, 2000);
    c.onPacket(300, 2001);
    const rc = c.makeReport(3000)!;
    expect([rc.beginSeq, rc.endSeq]).toEqual([250, 300]);
    expect(rc.arrivals.map((a) => a.pathSeq)).toEqual([...Array.from({ length: 50 }, (_, k) => 250 + k), 300]);
    expect(c.stats().rangeClamped).toBe(1); // the late packet itself
  });

  it('the re-list reaches back no further than the duplicate window', () => {
    const b = new PathReportBuilder(0, { maxEntries: 256 }); // window 4096 seqs
    for (let s = 0; s < 6000; s++) {
      if (s % 8 === 0 && s !== 2000) b.onPacket(s, s); // 7 of 8 lost (1990 too)
      if (s % 10 === 9) b.makeReport(s + 0.5);
    }
    b.onPacket(1000, 7000); // 4999 behind the newest: outside the window, dropped
    expect(b.stats().tooOld).toBe(1);
    b.onPacket(1990, 7100); // 4009 behind: accepted
    for (let s = 6000; s <= 6100; s++) b.onPacket(s, 7200 + s); // the window now starts at 2005
    const r = b.makeReport(20_000)!;
    expect([r.beginSeq, r.endSeq]).toEqual([1990, 6100]);
    const listed = new Set(r.arrivals.map((a) => a.pathSeq));
    for (let s = 1991; s < 2005; s++) expect(listed.has(s)).toBe(false); // 1992 was received, but the window now starts at 2005
    for (let s = 2005; s < 6000; s++) expect(listed.has(s)).toBe(s % 8 === 0);
    expect(b.stats().relisted).toBe((5992 - 2008) / 8 + 1);
    expect(r.arrivals.length).toBe((5992 - 2008) / 8 + 1 + 1 + 101); // + 1990 and 6000..6100
  });

  it('rounds times to integer µs and clamps an over-wide range (counted)', () => {
    const b = new PathReportBuilder(0, { maxSeqJump: 1000, maxReportRange: 1500 });
    b.onPacket(0, 10.4);
    b.onPacket(900, 11.6);
    b.onPacket(1800, 12);
    const r = b.makeReport(99.7)!;
    expect(r.reportTimeUs).toBe(100);
    expect(r.arrivals).toEqual([
      { pathSeq: 900, arrivalUs: 12 },
      { pathSeq: 1800, arrivalUs: 12 },
    ]);
    expect([r.beginSeq, r.endSeq]).toEqual([300, 1800]);
    expect(b.stats().rangeClamped).toBe(1);
  });

  it('handles uint32 wrap-around', () => {
    const b = new PathReportBuilder(0);
    b.onPacket(0xffff_fffe, 1);
    b.onPacket(0xffff_ffff, 2);
    b.onPacket(1, 3); // 0 missing
    const r = b.makeReport(10)!;
    expect(r.beginSeq).toBe(0xffff_fffe);
    expect(r.endSeq).toBe(1);
    b.onPacket(0, 20); // late, across the wrap
    b.onPacket(2, 21);
    const r2 = b.makeReport(30)!;
    expect([r2.beginSeq, r2.endSeq]).toEqual([0, 2]);
    expect(r2.arrivals.map((a) => a.pathSeq)).toEqual([1, 0, 2]); // 1 re-listed
  });

  it('drops bogus jumps, too-old and invalid packets (counted)', () => {
    const b = new PathReportBuilder(0, { maxSeqJump: 1000 });
    b.onPacket(100, 1);
    b.onPacket(100 + 5000, 2); // lying jump
    b.onPacket(NaN, 3);
    b.onPacket(1.5, 3);
    b.onPacket(-1, 3);
    b.onPacket(101, NaN);
    b.onPacket(101, 4);
    for (let s = 102; s < 102 + 900; s++) b.onPacket(s, 5);
    const r = b.makeReport(10)!;
    expect(r.endSeq).toBe(1001);
    const st = b.stats();
    expect(st.jumpDropped).toBe(1);
    expect(st.invalid).toBe(4);
    // far-behind packets are refused
    const c = new PathReportBuilder(0, { maxSeqJump: 1 << 20 });
    c.onPacket(0, 1);
    c.onPacket(100_000, 2);
    c.onPacket(5, 3);
    expect(c.stats().tooOld).toBe(1);
  });

  it('is bounded: overflow drops the oldest pending entry and asks for an early report', () => {
    const b = new PathReportBuilder(0, { maxEntries: 8 });
    for (let s = 0; s < 6; s++) b.onPacket(s, s);
    expect(b.shouldReportEarly()).toBe(true);
    for (let s = 6; s < 20; s++) b.onPacket(s, s);
    expect(b.pendingCount()).toBe(8);
    const r = b.makeReport(100)!;
    expect(r.arrivals.length).toBe(8);
    expect(r.arrivals[0].pathSeq).toBe(12);
    expect(b.stats().overflowDropped).toBe(12);
    expect(b.pendingCount()).toBe(0);
  });

  it('rejects a bad config', () => {
    expect(() => new PathReportBuilder(-1)).toThrow(RangeError);
    expect(() => new PathReportBuilder(0, { maxEntries: 0 })).toThrow(RangeError);
  });

  it('property: every received seq is reported, each report lists exactly the received seqs of its range once, in arrival order; wire-valid', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffff_ffff }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 300 }), fc.boolean(), fc.double({ min: 0, max: 5000, noNaN: true })), { minLength: 1, maxLength: 300 }),
        (base, ops) => {
          const b = new PathReportBuilder(3, { maxEntries: 1024 });
          const got = new Map<number, number>();
          let t = 0;
          let newestEnd: number | undefined;
          const received = new Set<number>();
          const firstAt = new Map<number, number>();
          const collect = () => {
            const r = b.makeReport(t);
            if (!r) return;
            const span = seqDiff(r.beginSeq, r.endSeq);
            expect(span).toBeGreaterThanOrEqual(0);
            expect(span).toBeLessThanOrEqual(65535);
            expect(Number.isInteger(r.reportTimeUs)).toBe(true);
            const listed = new Set<number>();
            let prevAt = Number.NEGATIVE_INFINITY;
            for (const a of r.arrivals) {
              const off = seqDiff(r.beginSeq, a.pathSeq);
              expect(off >= 0 && off <= span).toBe(true);
              expect(Number.isInteger(a.arrivalUs)).toBe(true);
              expect(a.arrivalUs).toBeGreaterThanOrEqual(prevAt); // arrival order
              prevAt = a.arrivalUs;
              expect(listed.has(a.pathSeq)).toBe(false); // once per report
              listed.add(a.pathSeq);
              expect(received.has(a.pathSeq)).toBe(true);
              expect(a.arrivalUs).toBe(firstAt.get(a.pathSeq)); // its original arrival time
              got.set(a.pathSeq, (got.get(a.pathSeq) ?? 0) + 1);
            }
            // the truth: nothing received inside the range is implied lost (no overflow here)
            for (let k = 0; k <= span; k++) {
              const s = seqAdd(r.beginSeq, k);
              if (received.has(s)) expect(listed.has(s)).toBe(true);
            }
            // new seqs continue right after the newest end reported so far
            if (newestEnd !== undefined && seqDiff(newestEnd, r.endSeq) > 0) {
              expect(seqDiff(r.beginSeq, seqAdd(newestEnd, 1))).toBeGreaterThanOrEqual(0);
            }
            if (newestEnd === undefined || seqDiff(newestEnd, r.endSeq) > 0) newestEnd = r.endSeq;
          };
          for (const [off, report, dt] of ops) {
            const s = seqAdd(base, off);
            received.add(s);
            t += dt;
            if (!firstAt.has(s)) firstAt.set(s, Math.round(t));
            b.onPacket(s, t);
            if (report) collect();
          }
          collect();
          expect(new Set(got.keys())).toEqual(received);
        },
      ),
    );
  });
});
