import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { NackGenerator } from '../../../src/feedback/nack.js';

const seqsOf = (r: { streamId: number; flowSeqs: number[] }[]) => r.flatMap((x) => x.flowSeqs);

/** A media packet of stream 0 with `flowSeq` arriving on `path` with `pathSeq`, in the receiver's call order. */
function media(n: NackGenerator, path: number, pathSeq: number, flowSeq: number, nowUs: number): void {
  n.onPacket(0, flowSeq, nowUs);
  n.onPathPacket(path, pathSeq, nowUs, { streamId: 0, flowSeq });
}

describe('NackGenerator path-gap rule (per-path loss evidence)', () => {
  it('NACKs a seq lost on its path after the in-path allowance, not the reorder wait', () => {
    const n = new NackGenerator({ reorderWindowMs: 30, maxReorderWindowMs: 200, pathGapNack: true, pathGapAllowanceMs: 5 });
    const c = new ManualClock();
    // Path 0 carries flow 0, 1, (2 lost), 3; path seqs 0, 1, (2), 3.
    media(n, 0, 0, 0, c.nowUs());
    media(n, 0, 1, 1, c.nowUs());
    c.advanceMs(10);
    media(n, 0, 3, 3, c.nowUs());
    c.advanceMs(4);
    expect(n.poll(c.nowUs(), 100)).toEqual([]);
    c.advanceMs(1);
    expect(seqsOf(n.poll(c.nowUs(), 100))).toEqual([2]);
    expect(n.stats().pathGapNacks).toBe(1);
    expect(n.stats().pathGapMarked).toBe(1);
  });

  it('a seq in flight on a slower path (no gap on the fast one) still waits the reorder wait', () => {
    const n = new NackGenerator({ reorderWindowMs: 30, pathGapNack: true, pathGapAllowanceMs: 5 });
    const c = new ManualClock();
    // Flow 0, 2, 3 on path 0 (path seqs 0, 1, 2, no gap); flow 1 is on path 1, late.
    media(n, 0, 0, 0, c.nowUs());
    media(n, 0, 1, 2, c.nowUs());
    media(n, 0, 2, 3, c.nowUs());
    c.advanceMs(29);
    expect(n.poll(c.nowUs(), 100)).toEqual([]);
    c.advanceMs(1);
    expect(seqsOf(n.poll(c.nowUs(), 100))).toEqual([1]);
    expect(n.stats().pathGapNacks).toBe(0);
  });

  it('marks only the seqs between the path neighbours, not the rest of the flow gap', () => {
    const n = new NackGenerator({ reorderWindowMs: 50, pathGapNack: true, pathGapAllowanceMs: 0 });
    const c = new ManualClock();
    // Path 0 carries flow 0 (seq 0), 4 (seq 1, lost), 6 (seq 2, late), 8 (seq 3, later); path 1 the rest, faster.
    media(n, 0, 0, 0, c.nowUs());
    for (const [i, f] of [1, 2, 3, 5, 7, 9, 10].entries()) media(n, 1, i, f, c.nowUs());
    c.advanceMs(1);
    media(n, 0, 2, 6, c.nowUs()); // the gap before it on path 0 can only be flow 4; flow 8 may still be on path 0
    expect(seqsOf(n.poll(c.nowUs(), 100))).toEqual([4]);
    c.advanceMs(48);
    expect(seqsOf(n.poll(c.nowUs(), 100))).toEqual([]);
    c.advanceMs(1);
    expect(seqsOf(n.poll(c.nowUs(), 100))).toEqual([8]);
  });

  it('marks nothing when more seqs are missing between the path neighbours than datagrams were lost there', () => {
    const n = new NackGenerator({ reorderWindowMs: 50, pathGapNack: true, pathGapAllowanceMs: 0 });
    const c = new ManualClock();
    media(n, 0, 0, 0, c.nowUs());
    media(n, 1, 0, 10, c.nowUs()); // 1..9 missing, most on path 1 behind it or elsewhere
    c.advanceMs(1);
    media(n, 0, 2, 6, c.nowUs()); // one datagram lost on path 0, five seqs missing in (0, 6): which one is unknown
    expect(n.poll(c.nowUs(), 100)).toEqual([]);
    expect(n.stats().pathGapMarked).toBe(0);
  });

  it('FEC/padding that fill the path seqs between two media packets are no gap', () => {
    const n = new NackGenerator({ reorderWindowMs: 40, pathGapNack: true, pathGapAllowanceMs: 0 });
    const c = new ManualClock();
    media(n, 0, 0, 0, c.nowUs());
    n.onPathPacket(0, 1, c.nowUs()); // FEC
    media(n, 0, 2, 2, c.nowUs()); // flow 1 went on another path
    c.advanceMs(1);
    expect(n.poll(c.nowUs(), 100)).toEqual([]);
  });

  it('a datagram reordered within its path fills the gap (no early NACK)', () => {
    const n = new NackGenerator({ reorderWindowMs: 40, pathGapNack: true, pathGapAllowanceMs: 0 });
    const c = new ManualClock();
    media(n, 0, 0, 0, c.nowUs());
    n.onPathPacket(0, 2, c.nowUs()); // padding overtook path seq 1
    n.onPathPacket(0, 1, c.nowUs()); // FEC, late within the path
    media(n, 0, 3, 2, c.nowUs());
    c.advanceMs(1);
    expect(n.poll(c.nowUs(), 100)).toEqual([]);
  });

  it('off by default and with pathGapNack=false', () => {
    for (const opts of [{ reorderWindowMs: 30 }, { reorderWindowMs: 30, pathGapNack: false }]) {
      const n = new NackGenerator(opts);
      const c = new ManualClock();
      media(n, 0, 0, 0, c.nowUs());
      c.advanceMs(10);
      media(n, 0, 2, 2, c.nowUs());
      c.advanceMs(10);
      expect(n.poll(c.nowUs(), 100)).toEqual([]);
      c.advanceMs(20);
      expect(seqsOf(n.poll(c.nowUs(), 100))).toEqual([1]);
    }
  });

  it('rejects a negative allowance', () => {
    expect(() => new NackGenerator({ pathGapAllowanceMs: -1 })).toThrow(RangeError);
  });

  it('never throws and keeps its bounds on arbitrary path/flow sequences', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            path: fc.integer({ min: -2, max: 80 }),
            pathSeq: fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.constant(0xffff_ffff), fc.double()),
            flow: fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.constant(-1)),
            media: fc.boolean(),
            dt: fc.integer({ min: 0, max: 50_000 }),
          }),
          { maxLength: 200 },
        ),
        (ops) => {
          const n = new NackGenerator({ maxTracked: 100, pathGapNack: true });
          let t = 0;
          for (const o of ops) {
            t += o.dt;
            if (o.media) {
              n.onPacket(0, o.flow, t);
              n.onPathPacket(o.path, o.pathSeq, t, { streamId: 0, flowSeq: o.flow });
            } else n.onPathPacket(o.path, o.pathSeq, t);
            for (const r of n.poll(t, 50)) for (const s of r.flowSeqs) expect(s >>> 0).toBe(s);
          }
          expect(n.trackedCount()).toBeLessThanOrEqual(100);
        },
      ),
    );
  });
});
