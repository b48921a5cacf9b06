import { describe, expect, it } from 'vitest';
import { OveruseDetector } from '../../../src/cc/overuse-detector.js';

describe('OveruseDetector (trendline_estimator.cc Detect/UpdateThreshold)', () => {
  it('starts at 12.5 ms and adapts up with k_up = 0.0087 (dt capped at 100 ms)', () => {
    const d = new OveruseDetector();
    expect(d.threshold).toBe(12.5);
    d.detect(20, 0.1, 10, 5, 0); // first call only anchors the time
    expect(d.threshold).toBe(12.5);
    d.detect(20, 0.1, 10, 5, 500); // dt capped to 100 ms
    expect(d.threshold).toBeCloseTo(12.5 + 0.0087 * (20 - 12.5) * 100, 9);
  });

  it('adapts down with k_down = 0.039 and clamps at 6 ms', () => {
    const d = new OveruseDetector();
    d.detect(0, 0, 10, 5, 0);
    d.detect(0, 0, 10, 5, 10);
    expect(d.threshold).toBeCloseTo(12.5 - 0.039 * 12.5 * 10, 9);
    for (let t = 20; t < 5000; t += 10) d.detect(0, 0, 10, 5, t);
    expect(d.threshold).toBe(6);
  });

  it('does not adapt to spikes above threshold + 15 ms, and clamps at 600 ms', () => {
    const d = new OveruseDetector();
    d.detect(0, 0, 10, 5, 0);
    d.detect(100, 1, 10, 5, 100);
    expect(d.threshold).toBe(12.5);
    const e = new OveruseDetector();
    for (let t = 0, m = 20; t < 100_000; t += 100, m = e.threshold + 14) e.detect(m, 1, 10, 5, t);
    expect(e.threshold).toBe(600);
  });

  it('declares over-use only after > 10 ms and >= 2 consecutive samples above the threshold', () => {
    const d = new OveruseDetector();
    expect(d.detect(30, 0.2, 10, 5, 0)).toBe('normal'); // 2.5 ms
    expect(d.detect(30, 0.2, 10, 5, 5)).toBe('normal'); // 7.5 ms
    expect(d.detect(30, 0.2, 10, 5, 10)).toBe('overusing'); // 12.5 ms, 3 samples
    const e = new OveruseDetector();
    expect(e.detect(30, 0.2, 10, 40, 0)).toBe('normal'); // 20 ms but only 1 sample
    expect(e.detect(30, 0.2, 10, 40, 40)).toBe('overusing');
  });

  it('needs a non-decreasing trend to declare over-use', () => {
    const d = new OveruseDetector();
    d.detect(30, 0.3, 10, 40, 0);
    expect(d.detect(30, 0.2, 10, 40, 40)).toBe('normal');
  });

  it('underusing below -threshold, normal in between, normal with < 2 deltas', () => {
    const d = new OveruseDetector();
    expect(d.detect(-20, -0.1, 10, 5, 0)).toBe('underusing');
    expect(d.detect(1, 0.01, 10, 5, 5)).toBe('normal');
    expect(d.detect(-100, -1, 1, 5, 10)).toBe('normal');
  });

  it('rejects a bad config', () => {
    expect(() => new OveruseDetector({ minThresholdMs: 10, maxThresholdMs: 5 })).toThrow(RangeError);
    expect(() => new OveruseDetector({ kUp: 0 })).toThrow(RangeError);
  });
});

describe('OveruseDetector.overuseOnsets', () => {
  it('counts each turn to over-use once, not each over-using sample', () => {
    const d = new OveruseDetector();
    let t = 0;
    const step = (m: number, trend: number) => d.detect(m, trend, 60, 5, (t += 5));
    for (let i = 0; i < 10; i++) step(30, 0.2 + i * 0.01); // one long over-use
    expect(d.state).toBe('overusing');
    expect(d.overuseOnsets).toBe(1);
    for (let i = 0; i < 5; i++) step(0, 0);
    expect(d.state).toBe('normal');
    for (let i = 0; i < 5; i++) step(30, 0.5 + i * 0.01); // a second one
    expect(d.overuseOnsets).toBe(2);
  });
});
