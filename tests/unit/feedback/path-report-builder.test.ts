import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { PathReportBuilder } from '../../../src/feedback/path-report-builder.js';
import { seqAdd, seqDiff } from '../../../src/core/seq.js';

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
