import { describe, expect, it } from 'vitest';
import { QoeMonitor } from '../../../src/feedback/qoe-monitor.js';
import { mkFrame } from './helpers.js';

const FRAME_US = 33_333;

/** Frame i: 4 fragments on path 0 (20 ms + k ms), 2 on path 1 (d1 ms + k ms). */
function twoPathFrame(i: number, d1Ms: number, d0Ms = 20) {
  const cap = i * FRAME_US;
  const arrivals: Array<[number, number]> = [];
  for (let k = 0; k < 4; k++) arrivals.push([0, cap + (d0Ms + k) * 1000]);
  for (let k = 0; k < 2; k++) arrivals.push([1, cap + (d1Ms + k) * 1000]);
  arrivals.sort((a, b) => a[1] - b[1]);
  return mkFrame(i, { captureUs: cap, arrivals });
}

describe('QoeMonitor', () => {
  it('computes FCD and IFD', () => {
    const m = new QoeMonitor();
    m.setExpectedFps(30);
    const f0 = mkFrame(0, {
      captureUs: 0,
      arrivals: [
        [0, 10_000],
        [0, 14_000],
        [0, 17_000],
      ],
    });
    const q0 = m.onFrame(f0, f0.lastArrivalUs);
    expect(q0.fcdMs).toBe(7);
    expect(q0.ifdMs).toBeUndefined();
    expect(q0.referencePathId).toBeUndefined(); // a single path has no reference
    const f1 = mkFrame(1, {
      captureUs: FRAME_US,
      arrivals: [
        [0, 45_000],
        [0, 50_000],
      ],
    });
    const q1 = m.onFrame(f1, f1.lastArrivalUs);
    expect(q1.fcdMs).toBe(5);
    expect(q1.ifdMs).toBe(33);
    expect(q1.expectedIfdMs).toBeCloseTo(33.333, 2);
    expect(q1.qoeDrop).toBe(false);
  });

  it('attributes late packets to the slow path and early packets to a fast one', () => {
    const m = new QoeMonitor();
    const slow = m.onFrame(twoPathFrame(0, 170), 0);
    expect(slow.referencePathId).toBe(0);
    expect(slow.paths).toEqual([
      { pathId: 0, packets: 4, late: 0, early: 0, lastArrivalUs: 23_000 },
      { pathId: 1, packets: 2, late: 2, early: 0, lastArrivalUs: 171_000 },
    ]);
    const fast = m.onFrame(twoPathFrame(1, 5), 0);
    expect(fast.paths[1]).toMatchObject({ pathId: 1, late: 0, early: 2 });
    const mixed = m.onFrame(twoPathFrame(2, 22), 0); // path 1 arrives between path 0's first and last
    expect(mixed.paths[1]).toMatchObject({ late: 0, early: 0 });
    expect(m.stats().latePackets[1]).toBe(2);
    expect(m.stats().earlyPackets[1]).toBe(2);
  });

  it('sends no feedback while IFD stays at IFD_exp', () => {
    const m = new QoeMonitor();
    m.setExpectedFps(30);
    for (let i = 0; i < 100; i++) {
      // path 1 is 2-3 ms behind path 0: some late packets, but the frame rate is fine
      const f = twoPathFrame(i, 23);
      m.onFrame(f, f.lastArrivalUs);
      expect(m.maybeFeedback(f.lastArrivalUs)).toBeUndefined();
    }
    expect(m.stats().qoeDrops).toBe(0);
    expect(m.stats().latePackets[1]).toBeGreaterThan(0);
  });

  it('alpha is negative for a path that adds 150 ms; feedback is rate-limited and seq increases', () => {
    const m = new QoeMonitor({ minFeedbackIntervalMs: 100 });
    m.setExpectedFps(30);
    const feedbacks = [];
    for (let i = 0; i < 60; i++) {
      // path 1 jumps from 22 ms to +150 ms at frame 10, and again at frame 13 (another +150 ms)
      const d1 = i < 10 ? 22 : i < 13 ? 170 : 320;
      const f = twoPathFrame(i, d1);
      const q = m.onFrame(f, f.lastArrivalUs);
      if (i === 10 || i === 13) expect(q.qoeDrop).toBe(true);
      const fb = m.maybeFeedback(f.lastArrivalUs);
      if (fb) feedbacks.push(fb);
    }
    expect(feedbacks.length).toBe(2);
    // fcdMs: the frame's FCD without the blamed path's tail (path 0's 4 fragments span 3 ms; the whole frame 151 ms).
    expect(feedbacks[0]).toEqual({ pathId: 1, alpha: -2, fcdMs: 3, seq: 1 });
    expect(feedbacks[1].pathId).toBe(1);
    expect(feedbacks[1].alpha).toBeLessThan(0);
    expect(feedbacks[1].seq).toBe(2);
    expect(feedbacks[1].fcdMs).toBe(3);
  });

  it('does not blame a path for the lag its longer one-way delay explains, even when it makes IFD uneven', () => {
    const m = new QoeMonitor();
    m.setExpectedFps(30);
    m.setPathDelay(0, 20);
    m.setPathDelay(1, 50);
    for (let i = 0; i < 60; i++) {
      // Every other frame also uses path 1, whose packets come its 30 ms delay difference later.
      const cap = i * FRAME_US;
      const f =
        i % 2 === 0
          ? twoPathFrame(i, 50)
          : mkFrame(i, {
              captureUs: cap,
              arrivals: [
                [0, cap + 20_000],
                [0, cap + 23_000],
              ],
            });
      m.onFrame(f, f.lastArrivalUs);
      expect(m.maybeFeedback(f.lastArrivalUs)).toBeUndefined();
    }
    const st = m.stats();
    expect(st.qoeDrops).toBeGreaterThan(20); // IFD alternates 61 / 5 ms
    expect(st.latePackets[1]).toBeGreaterThan(0);
    expect(st.lateNotBlamed).toBe(st.latePackets[1] - 2); // all but frame 0's (no IFD yet)
  });

  it('blames the part of a lag its one-way delay does not explain (packets queued behind its rate)', () => {
    const m = new QoeMonitor();
    m.setExpectedFps(30);
    m.setPathDelay(0, 20);
    m.setPathDelay(1, 50);
    const feedbacks = [];
    for (let i = 0; i < 20; i++) {
      const f = twoPathFrame(i, i === 10 ? 150 : 50); // frame 10: path 1 100 ms beyond its delay
      m.onFrame(f, f.lastArrivalUs);
      const fb = m.maybeFeedback(f.lastArrivalUs);
      if (fb) feedbacks.push({ i, ...fb });
    }
    expect(feedbacks).toEqual([{ i: 10, pathId: 1, alpha: -2, fcdMs: 3, seq: 1 }]);
  });

  it("without path delays, compares a lag with the path's usual lag", () => {
    const m = new QoeMonitor();
    m.setExpectedFps(30);
    let feedbacks = 0;
    for (let i = 0; i < 60; i++) {
      // Path 1 always 30 ms behind path 0; every 5th frame both come 40 ms later (not path 1's doing).
      const shift = i % 5 === 4 ? 40 : 0;
      const f = twoPathFrame(i, 53 + shift, 20 + shift);
      m.onFrame(f, f.lastArrivalUs);
      if (m.maybeFeedback(f.lastArrivalUs)) feedbacks++;
    }
    expect(m.stats().qoeDrops).toBeGreaterThan(5);
    expect(feedbacks).toBe(0);
    // A jump of path 1's lag itself is blamed.
    const f = twoPathFrame(60, 200);
    m.onFrame(f, f.lastArrivalUs);
    expect(m.maybeFeedback(f.lastArrivalUs)).toMatchObject({ pathId: 1, alpha: -2 });
  });

  it('rate-limits: a second drop within the interval waits, then is reported', () => {
    const m = new QoeMonitor({ minFeedbackIntervalMs: 100 });
    m.setExpectedFps(30);
    let t = 0;
    const frame = (i: number, d1: number) => {
      const f = twoPathFrame(i, d1);
      t = f.lastArrivalUs;
      return m.onFrame(f, t);
    };
    frame(0, 22);
    frame(1, 200);
    const a = m.maybeFeedback(t)!;
    expect(a.seq).toBe(1);
    const t1 = t;
    expect(frame(2, 250).qoeDrop).toBe(true); // another drop 83 ms after the first feedback
    expect(t - t1).toBeLessThan(100_000);
    expect(m.maybeFeedback(t)).toBeUndefined();
    expect(m.stats().rateLimited).toBe(1);
    const b = m.maybeFeedback(t1 + 100_000)!;
    expect(b.seq).toBe(2);
    expect(b.pathId).toBe(1);
    expect(b.alpha).toBe(-2);
  });

  it('alpha is positive when the other path was early and the reference path made the frame late', () => {
    const m = new QoeMonitor();
    m.setExpectedFps(30);
    let f = twoPathFrame(0, 5, 20);
    m.onFrame(f, f.lastArrivalUs);
    f = twoPathFrame(1, 5, 200); // the reference path (4 packets) is now slow, path 1 is early
    const q = m.onFrame(f, f.lastArrivalUs);
    expect(q.qoeDrop).toBe(true);
    const fb = m.maybeFeedback(f.lastArrivalUs)!;
    expect(fb.pathId).toBe(1);
    expect(fb.alpha).toBe(2);
  });

  it('a sender-side pause (capture gap) is not a QoE drop; expectation falls back to the capture interval', () => {
    const m = new QoeMonitor();
    m.setExpectedFps(30);
    const a = mkFrame(0, {
      captureUs: 0,
      arrivals: [
        [0, 20_000],
        [1, 30_000],
      ],
    });
    m.onFrame(a, a.lastArrivalUs);
    const b = mkFrame(1, {
      captureUs: 500_000,
      arrivals: [
        [0, 520_000],
        [1, 530_000],
      ],
    });
    const q = m.onFrame(b, b.lastArrivalUs);
    expect(q.expectedIfdMs).toBe(500);
    expect(q.qoeDrop).toBe(false);
    // no fps announced: capture interval alone
    const n = new QoeMonitor();
    n.onFrame(twoPathFrame(0, 22), 22_000);
    const q2 = n.onFrame(twoPathFrame(1, 22), 22_000 + 200_000);
    expect(q2.expectedIfdMs).toBeCloseTo(33.333, 2);
    expect(q2.qoeDrop).toBe(true);
  });

  it('excludes retransmitted fragments, ignores unknown paths and bad input, expires old drops', () => {
    const m = new QoeMonitor({ pathIds: [0, 1], maxFeedbackAgeMs: 500 });
    m.setExpectedFps(30);
    m.setExpectedFps(NaN);
    m.setExpectedFps(0);
    const cap = FRAME_US;
    const f = mkFrame(1, {
      captureUs: cap,
      arrivals: [
        [0, cap + 20_000],
        [0, cap + 21_000],
        [1, cap + 300_000],
        [5, cap + 400_000],
      ],
      rtx: [2],
    });
    const q = m.onFrame(f, cap + 400_000);
    expect(q.paths.map((p) => p.pathId)).toEqual([0]);
    expect(m.stats().excludedFragments).toBe(1);
    expect(m.stats().unknownPathFragments).toBe(1);
    expect(m.stats().invalid).toBe(2);
    expect(m.onFrame(null as never, 0).qoeDrop).toBe(false);
    // a drop with no late/early packets cannot be attributed
    const m2 = new QoeMonitor({ maxFeedbackAgeMs: 500 });
    m2.setExpectedFps(30);
    m2.onFrame(mkFrame(0, { captureUs: 0, arrivals: [[0, 10_000]] }), 10_000);
    m2.onFrame(mkFrame(1, { captureUs: FRAME_US, arrivals: [[0, 300_000]] }), 300_000);
    expect(m2.maybeFeedback(300_000)).toBeUndefined();
    expect(m2.stats().unattributed).toBe(1);
    // an old drop is not reported
    m2.onFrame(twoPathFrame(2, 22), 320_000);
    m2.onFrame(twoPathFrame(3, 400), 800_000);
    expect(m2.maybeFeedback(800_000 + 600_000)).toBeUndefined();
    expect(m2.stats().expired).toBe(1);
    expect(() => new QoeMonitor({ pathIds: [9] })).toThrow(RangeError);
  });
});

describe('QoeMonitor reference path from one-way delays', () => {
  it('takes the lowest-delay path as the reference even when a slow path carries more fragments', () => {
    const m = new QoeMonitor();
    m.setExpectedFps(30);
    m.setPathDelay(0, 20);
    m.setPathDelay(1, 170);
    // path 0 (fast) carries 1 fragment, path 1 (slow, +150 ms) carries 3 that arrive after it.
    const mk = (id: number, t0: number) => ({
      streamId: 0,
      frameId: id,
      keyFrame: id === 0,
      captureUs: id * 33_333,
      data: new Uint8Array(4),
      firstArrivalUs: t0 + 20_000,
      lastArrivalUs: t0 + 172_000,
      arrivals: [
        { fragIndex: 0, pathId: 0, arrivalUs: t0 + 20_000, nalClass: 0, retransmission: false, recovered: false },
        { fragIndex: 1, pathId: 1, arrivalUs: t0 + 170_000, nalClass: 0, retransmission: false, recovered: false },
        { fragIndex: 2, pathId: 1, arrivalUs: t0 + 171_000, nalClass: 0, retransmission: false, recovered: false },
        { fragIndex: 3, pathId: 1, arrivalUs: t0 + 172_000, nalClass: 0, retransmission: false, recovered: false },
      ],
    });
    const q = m.onFrame(mk(0, 0), 172_000);
    expect(q.referencePathId).toBe(0);
    expect(q.paths.find((p) => p.pathId === 1)?.late).toBe(3);
    // Without delays the count rule would have picked path 1 and called path 0 early.
    const m2 = new QoeMonitor();
    expect(m2.onFrame(mk(0, 0), 172_000).referencePathId).toBe(1);
  });
});
