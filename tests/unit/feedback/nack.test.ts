import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { NackGenerator } from '../../../src/feedback/nack.js';
import { ManualClock } from '../../../src/core/clock.js';

const seqsOf = (r: { streamId: number; flowSeqs: number[] }[]) => r.flatMap((x) => x.flowSeqs);

describe('NackGenerator', () => {
  it('NACKs a gap only after the reorder wait', () => {
    const n = new NackGenerator({ reorderWindowMs: 30 });
    const c = new ManualClock();
    n.onPacket(1, 10, c.nowUs());
    n.onPacket(1, 13, c.nowUs()); // 11, 12 missing
    expect(n.trackedCount(1)).toBe(2);
    c.advanceMs(29);
    expect(n.poll(c.nowUs(), 50)).toEqual([]);
    c.advanceMs(1);
    expect(n.poll(c.nowUs(), 50)).toEqual([{ streamId: 1, flowSeqs: [11, 12] }]);
  });

  it('a reordered packet arriving within the wait is never NACKed', () => {
    const n = new NackGenerator({ reorderWindowMs: 30 });
    n.onPacket(0, 1, 0);
    n.onPacket(0, 3, 0);
    n.onPacket(0, 2, 10_000);
    expect(n.poll(100_000, 50)).toEqual([]);
    expect(n.stats().reordered).toBe(1);
  });

  it('re-NACKs after about one RTT, at most maxRetries times, then gives up', () => {
    const n = new NackGenerator({ reorderWindowMs: 20, maxRetries: 3 });
    const c = new ManualClock();
    n.onPacket(0, 0, 0);
    n.onPacket(0, 2, 0);
    c.setUs(20_000);
    expect(seqsOf(n.poll(c.nowUs(), 80))).toEqual([1]);
    c.advanceMs(79);
    expect(n.poll(c.nowUs(), 80)).toEqual([]);
    c.advanceMs(1);
    expect(seqsOf(n.poll(c.nowUs(), 80))).toEqual([1]);
    c.advanceMs(80);
    expect(seqsOf(n.poll(c.nowUs(), 80))).toEqual([1]);
    c.advanceMs(80);
    expect(n.poll(c.nowUs(), 80)).toEqual([]); // 3 NACKs sent: give up
    expect(n.trackedCount()).toBe(0);
    const st = n.stats();
    expect(st.firstNacks).toBe(1);
    expect(st.retries).toBe(2);
    expect(st.exhausted).toBe(1);
  });

  it('a retransmission removes the entry', () => {
    const n = new NackGenerator({ reorderWindowMs: 20 });
    n.onPacket(0, 0, 0);
    n.onPacket(0, 2, 0);
    expect(seqsOf(n.poll(20_000, 50))).toEqual([1]);
    n.onPacket(0, 1, 60_000, true);
    expect(n.poll(200_000, 50)).toEqual([]);
    expect(n.stats().recovered).toBe(1);
  });

  it('gives up after maxNackAgeMs', () => {
    const n = new NackGenerator({ reorderWindowMs: 20, maxRetries: 100, maxNackAgeMs: 300 });
    n.onPacket(0, 0, 0);
    n.onPacket(0, 5, 0); // 1..4
    n.poll(20_000, 10);
    expect(seqsOf(n.poll(40_000, 10))).toEqual([1, 2, 3, 4]);
    expect(n.poll(301_000, 10)).toEqual([]);
    expect(n.trackedCount()).toBe(0);
    expect(n.stats().expired).toBe(4);
  });

  it('caps the adaptive reorder wait at 100 ms by default: a packet 150 ms behind is NACKed at 100 ms', () => {
    const n = new NackGenerator({ reorderWindowMs: 20 });
    let t = 0;
    for (let k = 0; k < 3; k++) {
      const base = k * 3;
      n.onPacket(0, base, t);
      n.onPacket(0, base + 2, t);
      n.poll(t + 25_000, 50);
      n.onPacket(0, base + 1, t + 150_000, false, t); // a slow path's original, 150 ms late
      t += 200_000;
    }
    expect(n.reorderWindowMs(t)).toBeGreaterThan(99); // 150 x 1.2 capped at 100, then decaying (10 s)
    expect(n.reorderWindowMs(t)).toBeLessThanOrEqual(100);
    n.onPacket(0, 9, t);
    n.onPacket(0, 11, t);
    expect(n.poll(t + 90_000, 50)).toEqual([]);
    expect(seqsOf(n.poll(t + 100_000, 50))).toEqual([10]);
  });

  it('adapts the reorder wait to observed path delay spread', () => {
    const n = new NackGenerator({ reorderWindowMs: 20, maxReorderWindowMs: 200 });
    // packets of a slow path arrive 100 ms after their neighbours, after being NACKed
    let t = 0;
    for (let k = 0; k < 5; k++) {
      const base = k * 3;
      n.onPacket(0, base, t);
      n.onPacket(0, base + 2, t);
      expect(seqsOf(n.poll(t + 25_000, 50))).toEqual(k === 0 ? [base + 1] : []);
      n.onPacket(0, base + 1, t + 100_000, false, t); // original (sent at t, before the NACK), not a retransmission
      t += 200_000;
    }
    expect(n.trackedCount()).toBe(0);
    expect(n.reorderWindowMs(t)).toBeGreaterThanOrEqual(100);
    expect(n.reorderWindowMs(t)).toBeLessThanOrEqual(200);
    // now a 90 ms reordering is not NACKed
    n.onPacket(0, 15, t);
    n.onPacket(0, 17, t);
    expect(n.poll(t + 90_000, 50)).toEqual([]);
  });

  it('a seq answered after its NACK is a reordering sample only when it was sent before the NACK (Karn)', () => {
    // The failover case: a dead path's packets are NACKed and their retransmissions cross a slower path.
    const n = new NackGenerator({ reorderWindowMs: 30, maxReorderWindowMs: 200 });
    let t = 0;
    for (let k = 0; k < 10; k++) {
      const base = k * 3;
      n.onPacket(0, base, t, false, t);
      n.onPacket(0, base + 2, t, false, t);
      expect(seqsOf(n.poll(t + 31_000, 60))).toEqual([base + 1]);
      // The retransmission: sent after the NACK reached the sender, back 150 ms later.
      n.onPacket(0, base + 1, t + 181_000, false, t + 100_000);
      t += 250_000;
    }
    expect(n.reorderWindowMs(t)).toBe(30);
    expect(n.stats().recovered).toBe(10);
    // Without a send time, an answer later than half an RTT after the NACK is no sample either ...
    n.onPacket(0, 30, t);
    n.onPacket(0, 32, t);
    expect(seqsOf(n.poll(t + 31_000, 60))).toEqual([31]);
    n.onPacket(0, 31, t + 100_000);
    expect(n.reorderWindowMs(t + 100_000)).toBe(30);
    // ... while one sooner than that is the original (a retransmission cannot be back yet).
    t += 200_000;
    n.onPacket(0, 33, t);
    n.onPacket(0, 35, t);
    expect(seqsOf(n.poll(t + 31_000, 60))).toEqual([34]);
    n.onPacket(0, 34, t + 50_000);
    expect(n.reorderWindowMs(t + 50_000)).toBeGreaterThanOrEqual(50);
    // A path whose delay jumped: the retransmission (over the fast path) answers the NACK first, and the
    // original, sent before the NACK, turns up later as a duplicate: it is the sample.
    t += 200_000;
    n.onPacket(0, 36, t, false, t);
    n.onPacket(0, 38, t, false, t);
    const wait = n.reorderWindowMs(t);
    expect(seqsOf(n.poll(t + wait * 1000 + 1000, 60))).toEqual([37]);
    n.onPacket(0, 37, t + 100_000, false, t + 70_000); // the retransmission
    expect(n.reorderWindowMs(t + 100_000)).toBeLessThan(120);
    n.onPacket(0, 37, t + 150_000, false, t - 5000); // the original
    expect(n.stats().lateOriginals).toBe(1);
    expect(n.reorderWindowMs(t + 150_000)).toBeGreaterThanOrEqual(150);
    // Retransmissions flagged as recovered never count.
    const m = new NackGenerator({ reorderWindowMs: 30 });
    m.onPacket(0, 0, 0);
    m.onPacket(0, 2, 0);
    m.onPacket(0, 1, 20_000, true);
    expect(m.reorderWindowMs(20_000)).toBe(30);
    expect(m.stats().reordered).toBe(1);
  });

  it('handles uint32 wrap-around', () => {
    const n = new NackGenerator({ reorderWindowMs: 0 });
    n.onPacket(0, 0xffff_fffe, 0);
    n.onPacket(0, 1, 0);
    expect(seqsOf(n.poll(1000, 50))).toEqual([0xffff_ffff, 0]);
  });

  it('a huge jump does not create millions of entries; a sustained one resynchronises', () => {
    const n = new NackGenerator({ maxTracked: 1000, maxSeqJump: 1 << 15, resyncAfterJumps: 4 });
    n.onPacket(0, 0, 0);
    expect(n.onPacket(0, 1_500_000_000, 0)).toBe(false); // lying packet
    expect(n.trackedCount()).toBe(0);
    expect(n.stats().bogusJumps).toBe(1);
    n.onPacket(0, 1, 0);
    n.onPacket(0, 500, 0); // 498 missing: inside the window
    expect(n.trackedCount(0)).toBe(498);
    // A gap beyond the NACK window clears the list and asks for a key frame (libwebrtc NackRequester).
    expect(n.onPacket(0, 30_000, 0)).toBe(true);
    expect(n.trackedCount(0)).toBe(0);
    expect(n.stats().windowResets).toBe(1);
    expect(n.stats().capped).toBe(498 + 30_000 - 500 - 1);
    for (let i = 0; i < 4; i++) n.onPacket(0, 2_000_000_000 + i, 0);
    expect(n.stats().resyncs).toBe(1);
    expect(n.trackedCount(0)).toBe(0);
    n.onPacket(0, 2_000_000_010, 0);
    expect(n.trackedCount(0)).toBe(6);
  });

  it('evicts the oldest missing seqs beyond maxTracked, across runs', () => {
    const n = new NackGenerator({ maxTracked: 10, reorderWindowMs: 0 });
    n.onPacket(0, 0, 0);
    n.onPacket(0, 7, 0); // 1..6
    n.onPacket(0, 14, 0); // 8..13: 12 tracked -> evict 1, 2
    expect(n.trackedCount(0)).toBe(10);
    expect(n.stats().capped).toBe(2);
    expect(seqsOf(n.poll(1, 50))).toEqual([3, 4, 5, 6, 8, 9, 10, 11, 12, 13]);
  });

  it('a late packet in the middle of a run splits it; each half keeps its NACK state', () => {
    const n = new NackGenerator({ reorderWindowMs: 10, maxRetries: 5 });
    n.onPacket(0, 0, 0);
    n.onPacket(0, 10, 0); // 1..9
    expect(seqsOf(n.poll(10_000, 50))).toHaveLength(9);
    n.onPacket(0, 5, 20_000, true);
    n.onPacket(0, 1, 20_000, true);
    n.onPacket(0, 9, 20_000, true);
    n.onPacket(0, 5, 20_000, true); // not tracked any more: no-op
    expect(n.trackedCount(0)).toBe(6);
    expect(n.stats().recovered).toBe(3);
    expect(seqsOf(n.poll(60_000, 50))).toEqual([2, 3, 4, 6, 7, 8]);
  });

  it('cost per packet stays bounded under flowSeq jumps inside and beyond the window', () => {
    const n = new NackGenerator();
    let seq = 0;
    let resets = 0;
    const t0 = performance.now();
    const N = 100_000;
    for (let i = 0; i < N; i++) {
      seq = (seq + 1000 + (i % 32_000)) >>> 0; // jumps of 1,000-32,999
      if (n.onPacket(0, seq, i * 100)) resets++;
      if (i % 3 === 0) n.onPacket(0, (seq - 3) >>> 0, i * 100); // a late one
    }
    const usPerPacket = ((performance.now() - t0) * 1000) / N;
    expect(n.trackedCount(0)).toBeLessThanOrEqual(1000);
    expect(resets).toBeGreaterThan(N / 2);
    // Old per-seq tracking cost ~500 µs per such packet; the bound here is loose for a loaded machine.
    expect(usPerPacket).toBeLessThan(100);
  });

  it('splits large requests and ignores invalid input', () => {
    const n = new NackGenerator({ reorderWindowMs: 0, maxSeqsPerNack: 100 });
    n.onPacket(0, 0, 0);
    n.onPacket(0, 251, 0);
    const r = n.poll(1, 50);
    expect(r.map((x) => x.flowSeqs.length)).toEqual([100, 100, 50]);
    n.onPacket(0, NaN, 0);
    n.onPacket(-1, 5, 0);
    n.onPacket(0, 5, NaN);
    expect(n.stats().invalid).toBe(3);
    expect(() => new NackGenerator({ maxTracked: 0 })).toThrow(RangeError);
  });

  it('property: bounded, and every seq never received is NACKed at least once unless given up', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1 << 20 }), { minLength: 1, maxLength: 300 }), fc.array(fc.boolean(), { maxLength: 300 }), (seqs, lose) => {
        const n = new NackGenerator({ maxTracked: 64, reorderWindowMs: 10 });
        let t = 0;
        for (const s of seqs) {
          n.onPacket(0, s, (t += 1000));
          n.poll(t, 20);
          expect(n.trackedCount()).toBeLessThanOrEqual(64);
        }
        // in-order stream with drops: every dropped seq is requested
        const m = new NackGenerator({ reorderWindowMs: 10 });
        const dropped: number[] = [];
        const nacked = new Set<number>();
        m.onPacket(0, 0, 0);
        lose.forEach((l, i) => {
          if (l) dropped.push(i + 1);
          else m.onPacket(0, i + 1, i * 1000);
        });
        m.onPacket(0, lose.length + 1, lose.length * 1000);
        for (let k = 0; k < 5; k++) for (const s of seqsOf(m.poll(lose.length * 1000 + 20_000 + k * 100_000, 50))) nacked.add(s);
        for (const d of dropped) expect(nacked.has(d)).toBe(true);
      }),
    );
  });
});
