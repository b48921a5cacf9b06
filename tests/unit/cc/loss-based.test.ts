import { describe, expect, it } from 'vitest';
import { LossBasedBwe } from '../../../src/cc/loss-based.js';

const rates = { startBps: 1_000_000, minBps: 100_000, maxBps: 50_000_000 };

/** Past the 2 s start phase with a huge delay-based limit. */
function warmed(): LossBasedBwe {
  const l = new LossBasedBwe(rates);
  l.onLossReport(0.05, 0); // first report (2-10 %: hold), starts the start phase
  l.setDelayBasedLimit(1_000_000, 0);
  l.updateEstimate(2_100_000);
  l.setDelayBasedLimit(100_000_000, 2_100_000);
  return l;
}

describe('LossBasedBwe (send_side_bandwidth_estimation.cc)', () => {
  it('loss <= 2 %: +8 % (+1 kbps) over the minimum of the last second, at most about once a second', () => {
    const l = warmed();
    const start = l.targetBps();
    expect(start).toBe(1_000_000);
    const seen: number[] = [];
    for (let t = 2_100_000; t <= 7_100_000; t += 50_000) {
      l.onLossReport(0.01, t);
      seen.push(l.targetBps());
    }
    // 5 s of updates: between 4 and 6 steps of 8 %.
    expect(l.targetBps()).toBeGreaterThan(start * 1.08 ** 4);
    expect(l.targetBps()).toBeLessThan(start * 1.08 ** 6 + 10_000);
    // Never more than one step above the value 1 s (20 updates) earlier.
    for (let i = 20; i < seen.length; i++) expect(seen[i]).toBeLessThanOrEqual(seen[i - 20] * 1.08 + 1001);
  });

  it('2-10 % loss: hold', () => {
    const l = warmed();
    for (let t = 2_100_000; t < 8_000_000; t += 50_000) l.onLossReport(0.06, t);
    expect(l.targetBps()).toBe(1_000_000);
  });

  it('> 10 % loss: rate x (1 - 0.5 loss), at most once per 300 ms + RTT and once per loss report', () => {
    const l = warmed();
    l.setRtt(100);
    l.onLossReport(0.2, 3_000_000);
    expect(l.targetBps()).toBeCloseTo(900_000, 6);
    l.updateEstimate(3_500_000); // same report: no second decrease
    expect(l.targetBps()).toBeCloseTo(900_000, 6);
    l.onLossReport(0.2, 3_200_000); // new report but < 400 ms later
    expect(l.targetBps()).toBeCloseTo(900_000, 6);
    l.onLossReport(0.2, 3_400_000);
    expect(l.targetBps()).toBeCloseTo(810_000, 6);
  });

  it('capped by the delay-based limit and floored at minBps', () => {
    const l = warmed();
    l.setDelayBasedLimit(400_000, 2_200_000);
    expect(l.targetBps()).toBe(400_000);
    for (let t = 3_000_000; t < 60_000_000; t += 500_000) l.onLossReport(0.9, t);
    expect(l.targetBps()).toBe(100_000);
  });

  it('start phase: follows the delay-based estimate upward while no loss is seen', () => {
    const l = new LossBasedBwe(rates);
    l.onLossReport(0, 0);
    l.setDelayBasedLimit(1_500_000, 100_000);
    l.updateEstimate(100_000);
    expect(l.targetBps()).toBe(1_500_000);
  });

  it('feedback timeout cuts by 20 %', () => {
    const l = warmed();
    l.onFeedbackTimeout(3_000_000);
    expect(l.targetBps()).toBeCloseTo(800_000, 6);
  });

  it('rejects inconsistent thresholds', () => {
    expect(() => new LossBasedBwe({ ...rates, lowLossThreshold: 0.2, highLossThreshold: 0.1 })).toThrow(RangeError);
  });
});
