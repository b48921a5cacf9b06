import { describe, expect, it } from 'vitest';
import { AimdRateControl } from '../../../src/cc/aimd.js';
import { LinkCapacityEstimator } from '../../../src/cc/link-capacity.js';

const rates = { startBps: 1_000_000, minBps: 100_000, maxBps: 50_000_000 };

describe('AimdRateControl (aimd_rate_control.cc)', () => {
  it('multiplicative increase of ~8 % per second far from any capacity estimate', () => {
    const a = new AimdRateControl(rates);
    for (let t = 0; t <= 1_000_000; t += 50_000) a.update('normal', a.latestBps(), t);
    // 1.08^(0.95 s) after the first update only switched hold -> increase (+1 kbps).
    expect(a.latestBps()).toBeGreaterThan(1_070_000);
    expect(a.latestBps()).toBeLessThan(1_085_000);
    expect(a.state).toBe('increase');
  });

  it('decreases to beta 0.85 x acked bitrate on over-use, then holds', () => {
    const a = new AimdRateControl(rates);
    a.update('overusing', 800_000, 0);
    expect(a.latestBps()).toBeCloseTo(680_000, 6);
    expect(a.state).toBe('hold');
    expect(a.link.estimateBps()).toBe(800_000);
  });

  it('never increases on over-use even if beta x acked > current', () => {
    const a = new AimdRateControl(rates);
    a.update('overusing', 2_000_000, 0);
    expect(a.latestBps()).toBe(1_000_000);
  });

  it('additive increase near the link capacity estimate: ~ one packet per response time', () => {
    const a = new AimdRateControl(rates);
    a.setRtt(100);
    a.update('overusing', 1_000_000, 0); // -> 850 kbps, capacity estimate 1 Mbps
    const start = a.latestBps();
    const perSecond = a.nearMaxIncreaseBpsPerSecond();
    // 850 kbps / 30 fps = 3542 B/frame -> 3 packets of 1181 B; response (100+100)x2 = 400 ms.
    expect(perSecond).toBeCloseTo(((3541.6667 / 3) * 8) / 0.4, 0);
    for (let t = 50_000; t <= 1_050_000; t += 50_000) a.update('normal', 860_000, t);
    const gained = a.latestBps() - start;
    expect(gained).toBeGreaterThan(0.8 * perSecond);
    expect(gained).toBeLessThan(1.2 * perSecond);
  });

  it('holds on under-use', () => {
    const a = new AimdRateControl(rates);
    a.update('normal', 1_000_000, 0);
    const r = a.latestBps();
    for (let t = 50_000; t < 2_000_000; t += 50_000) a.update('underusing', 1_000_000, t);
    expect(a.latestBps()).toBe(r);
    expect(a.state).toBe('hold');
  });

  it('increase never exceeds 1.5 x acked + 10 kbps', () => {
    const a = new AimdRateControl({ ...rates, startBps: 150_000 });
    for (let t = 0; t < 20_000_000; t += 50_000) a.update('normal', 100_000, t);
    expect(a.latestBps()).toBeCloseTo(160_000, 6);
    const b = new AimdRateControl(rates);
    for (let t = 0; t < 5_000_000; t += 50_000) b.update('normal', 100_000, t);
    expect(b.latestBps()).toBe(1_000_000); // already above the limit: no increase, no cut
  });

  it('throughput above the capacity upper bound resets it (back to multiplicative)', () => {
    const a = new AimdRateControl(rates);
    a.update('overusing', 1_000_000, 0);
    expect(a.link.hasEstimate()).toBe(true);
    a.update('normal', 1_500_000, 100_000);
    a.update('normal', 1_500_000, 150_000);
    expect(a.link.hasEstimate()).toBe(false);
  });

  it('timeToReduceFurther: after one RTT (10..200 ms) or when throughput < half the estimate', () => {
    const a = new AimdRateControl(rates);
    a.setRtt(50);
    a.update('overusing', 1_000_000, 1_000_000); // change at t = 1 s, estimate 850k
    expect(a.timeToReduceFurther(1_020_000, 800_000)).toBe(false);
    expect(a.timeToReduceFurther(1_050_000, 800_000)).toBe(true);
    expect(a.timeToReduceFurther(1_020_000, 400_000)).toBe(true);
  });

  it('one overuse at most halves the estimate; repeated overuse reaches the floor, never below', () => {
    const a = new AimdRateControl(rates);
    const start = a.latestBps();
    a.update('overusing', 10_000, 0); // throughput far below the estimate (app-limited path)
    expect(a.latestBps()).toBe(Math.max(100_000, start / 2));
    for (let t = 1; t < 40; t++) a.update('overusing', 10_000, t * 300_000);
    expect(a.latestBps()).toBe(100_000);
  });

  it('an app-limited decrease (held at half) lets the next wait an RTT and does not set the link capacity', () => {
    const a = new AimdRateControl({ ...rates, startBps: 1_400_000 });
    a.setRtt(100);
    a.update('overusing', 200_000, 1_000_000); // 0.85 x 200k far below half of 1.4M: app-limited
    expect(a.latestBps()).toBe(700_000);
    expect(a.appLimitedDecreases).toBe(1);
    expect(a.link.hasEstimate()).toBe(false); // 200k is our share, not the link's capacity
    // libwebrtc's shortcut (throughput < half the estimate) would allow another cut now; it waits an RTT.
    expect(a.timeToReduceFurther(1_050_000, 200_000)).toBe(false);
    expect(a.timeToReduceFurther(1_100_000, 200_000)).toBe(true);
    // The next decrease, one RTT on, is app-limited again: halved again, still no capacity estimate.
    a.update('overusing', 200_000, 1_100_000);
    expect(a.latestBps()).toBe(350_000);
    expect(a.appLimitedDecreases).toBe(2);
    expect(a.link.hasEstimate()).toBe(false);
  });

  it('a decrease that is not app-limited keeps the shortcut and sets the link capacity', () => {
    const a = new AimdRateControl(rates);
    a.setRtt(100);
    a.update('overusing', 900_000, 1_000_000);
    expect(a.latestBps()).toBeCloseTo(765_000, 6);
    expect(a.appLimitedDecreases).toBe(0);
    expect(a.link.estimateBps()).toBe(900_000);
    expect(a.timeToReduceFurther(1_050_000, 300_000)).toBe(true);
  });

  it('rejects bad config', () => {
    expect(() => new AimdRateControl({ ...rates, minBps: 0 })).toThrow(RangeError);
    expect(() => new AimdRateControl({ ...rates, beta: 1 })).toThrow(RangeError);
  });
});

describe('LinkCapacityEstimator (link_capacity_estimator.cc)', () => {
  it('EWMA 0.05 of over-use samples, bounds at +/- 3 std dev with deviation in [0.4, 2.5]', () => {
    const l = new LinkCapacityEstimator();
    expect(l.upperBoundBps()).toBe(Number.POSITIVE_INFINITY);
    expect(l.lowerBoundBps()).toBe(0);
    l.onOveruseDetected(500_000);
    expect(l.estimateBps()).toBe(500_000);
    // deviation clamped to 0.4 -> std = sqrt(0.4 x 500) = 14.1 kbps
    expect(l.upperBoundBps()).toBeCloseTo(500_000 + 3 * Math.sqrt(0.4 * 500) * 1000, 3);
    l.onOveruseDetected(600_000);
    expect(l.estimateBps()).toBeCloseTo(505_000, 6);
    l.reset();
    expect(l.hasEstimate()).toBe(false);
  });
});
