import { describe, expect, it } from 'vitest';
import { FreezeDetector, freezesOf, goodputBps, latencyOf, meanFps } from '../../../src/feedback/qoe-metrics.js';

/** Frame times (ms) from a list of intervals, starting at 0. */
const times = (intervals: number[]): number[] => {
  const out = [0];
  for (const d of intervals) out.push(out[out.length - 1] + d);
  return out;
};

describe('freezesOf (libwebrtc video_quality_observer2 rule)', () => {
  it('the current interval is in the average: 7 x 33 ms then a gap is a freeze only from ~205 ms', () => {
    // avg = (7*33 + g) / 8; freeze when g >= avg + 150  <=>  g >= 204.43 ms.
    expect(freezesOf(times([...new Array(7).fill(33), 204])).count).toBe(0);
    const f = freezesOf(times([...new Array(7).fill(33), 205]));
    expect(f).toEqual({ count: 1, totalMs: 205, maxMs: 205, list: [{ at: 231, ms: 205 }] });
  });

  it('needs 5 intervals before judging', () => {
    expect(freezesOf(times([33, 33, 33, 1000])).count).toBe(0);
    expect(freezesOf(times([33, 33, 33, 33, 1000])).count).toBe(1);
  });

  it('freezes stay in the average (a second long gap right after a first one is judged against a raised average)', () => {
    // 10 fps, then two 400 ms gaps. With 9 x 100 + 400: avg 130 -> threshold 390: freeze.
    // Then 9 x 100 + 400 + 400: avg 154.5 -> threshold 463.6: not a freeze (the old bench rule said yes).
    const f = freezesOf(times([...new Array(9).fill(100), 400, 400]));
    expect(f.count).toBe(1);
    expect(f.totalMs).toBe(400);
  });

  it('uses 3x the average at low frame rates', () => {
    // 5 fps: 200 ms intervals; a 700 ms gap: avg (5*200+700)/6 = 283.3 -> threshold max(850, 433) = 850: no freeze.
    expect(freezesOf(times([200, 200, 200, 200, 200, 700])).count).toBe(0);
    // 1000 ms: avg 333.3 -> threshold 1000: freeze.
    expect(freezesOf(times([200, 200, 200, 200, 200, 1000])).count).toBe(1);
  });

  it('skips times that go backwards or are not finite', () => {
    const t = times(new Array(10).fill(33));
    const f = freezesOf([...t.slice(0, 5), 10, NaN, ...t.slice(5)]);
    expect(f.count).toBe(0);
    expect(freezesOf([]).count).toBe(0);
  });

  it('with a span, a stream that stopped counts its silence and one that never started is frozen throughout', () => {
    const t = times(new Array(30).fill(33)); // 0 .. 990 ms
    // The measurement ends 100 ms after the last frame: within the rule, no freeze.
    expect(freezesOf(t, { startMs: 0, endMs: 1090 }).count).toBe(0);
    // It ends 2 s after the last frame: the gap is a freeze, listed at the last frame.
    const f = freezesOf(t, { startMs: 0, endMs: 2990 });
    expect(f).toEqual({ count: 1, totalMs: 2000, maxMs: 2000, list: [{ at: 990, ms: 2000 }] });
    // Without a span the same frames have no freeze (the live statistics' view).
    expect(freezesOf(t).count).toBe(0);
    // No frame at all: one freeze of the whole span.
    expect(freezesOf([], { startMs: 500, endMs: 120_500 })).toEqual({ count: 1, totalMs: 120_000, maxMs: 120_000, list: [{ at: 500, ms: 120_000 }] });
    // Fewer than 5 intervals known: the gap is judged against their mean (3 x 33 -> threshold 183 ms).
    expect(freezesOf([0, 33, 66], { startMs: 0, endMs: 66 + 180 }).count).toBe(0);
    expect(freezesOf([0, 33, 66], { startMs: 0, endMs: 66 + 190 }).totalMs).toBe(190);
    // One frame: any silence of 150 ms or more.
    expect(freezesOf([10], { startMs: 0, endMs: 150 }).count).toBe(0);
    expect(freezesOf([10], { startMs: 0, endMs: 170 }).totalMs).toBe(160);
    // An empty or inverted span changes nothing.
    expect(freezesOf([], { startMs: 5, endMs: 5 }).count).toBe(0);
  });

  it('FreezeDetector rejects bad options and ignores bad intervals', () => {
    expect(() => new FreezeDetector(0)).toThrow(RangeError);
    expect(() => new FreezeDetector(30, 1.5)).toThrow(RangeError);
    const d = new FreezeDetector();
    for (let i = 0; i < 10; i++) d.addInterval(33);
    expect(d.addInterval(-5)).toBe(0);
    expect(d.addInterval(Infinity)).toBe(0);
    expect(d.addInterval(500)).toBe(500);
    expect([d.count, d.totalMs, d.maxMs]).toEqual([1, 500, 500]);
  });
});

describe('fps, goodput, latency', () => {
  it('fps and goodput count from the first frame to the end', () => {
    expect(meanFps(30, 1000, 2000)).toBe(30);
    expect(meanFps(30, undefined, 2000)).toBe(0);
    expect(meanFps(30, 2000, 2000)).toBe(0);
    expect(goodputBps(125_000, 500, 1500)).toBe(1_000_000);
    expect(goodputBps(0, 500, 1500)).toBe(0);
  });

  it('latency: mean and type-7 percentiles, non-finite samples left out', () => {
    const l = latencyOf([10, 20, 30, 40, NaN]);
    expect(l.count).toBe(4);
    expect(l.mean).toBe(25);
    expect(l.p50).toBe(25);
    expect(l.p95).toBeCloseTo(38.5, 6);
    expect(latencyOf([]).mean).toBeUndefined();
  });
});
