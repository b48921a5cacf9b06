import { describe, expect, it } from 'vitest';
import { TrendlineEstimator } from '../../../src/cc/trendline.js';

function run(recvDelta: number, sendDelta: number, n: number, t = new TrendlineEstimator()) {
  let arrival = 0;
  for (let i = 0; i < n; i++) {
    arrival += recvDelta;
    t.update(recvDelta, sendDelta, arrival);
  }
  return t;
}

describe('TrendlineEstimator (trendline_estimator.cc)', () => {
  it('slope 0 for constant delay', () => {
    const t = run(10, 10, 100);
    expect(t.trend).toBeCloseTo(0, 12);
    expect(t.modifiedTrend).toBeCloseTo(0, 12);
  });

  it('positive slope for a growing queue, converging to delay growth / arrival time', () => {
    const t = run(11, 10, 200); // +1 ms of delay every 11 ms of arrival
    expect(t.trend).toBeGreaterThan(0);
    expect(t.trend).toBeCloseTo(1 / 11, 3);
  });

  it('negative slope for a draining queue', () => {
    const t = run(9, 10, 200);
    expect(t.trend).toBeCloseTo(-1 / 9, 3);
  });

  it('holds the trend at 0 until the 20-point window is full', () => {
    const t = run(12, 10, 19);
    expect(t.trend).toBe(0);
    t.update(12, 10, 20 * 12);
    expect(t.trend).toBeGreaterThan(0);
  });

  it('modified trend = min(numDeltas, 60) x slope x gain 4', () => {
    const t = run(11, 10, 30);
    expect(t.modifiedTrend).toBeCloseTo(30 * t.trend * 4, 12);
    run(11, 10, 100, t);
    expect(t.numDeltas).toBe(130);
    expect(t.modifiedTrend).toBeCloseTo(60 * t.trend * 4, 12);
  });

  it('smoothing 0.9 of the accumulated delay', () => {
    const t = new TrendlineEstimator();
    t.update(15, 10, 15);
    expect(t.accumulatedDelayMs).toBe(5);
    expect(t.smoothedDelayMs).toBeCloseTo(0.5, 12);
    t.update(15, 10, 30);
    expect(t.smoothedDelayMs).toBeCloseTo(0.9 * 0.5 + 0.1 * 10, 12);
  });

  it('ignores non-finite input and rejects bad config', () => {
    const t = run(11, 10, 40);
    const before = t.trend;
    t.update(Number.NaN, 10, 1);
    t.update(10, 10, Number.POSITIVE_INFINITY);
    expect(t.trend).toBe(before);
    expect(() => new TrendlineEstimator({ windowSize: 1 })).toThrow(RangeError);
    expect(() => new TrendlineEstimator({ smoothingCoef: 1 })).toThrow(RangeError);
  });
});
