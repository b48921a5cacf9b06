import { describe, expect, it } from 'vitest';
import { JitterEstimator } from '../../../src/feedback/jitter-estimator.js';
import { Rng } from '../../../src/core/rng.js';

describe('JitterEstimator', () => {
  it('is 0 before samples and small for a steady stream', () => {
    const j = new JitterEstimator();
    expect(j.jitterMs()).toBe(0);
    for (let i = 0; i < 300; i++) j.update(0, 5000);
    // noise term floor (1 ms) + OS jitter (10 ms)
    expect(j.jitterMs()).toBeGreaterThanOrEqual(10);
    expect(j.jitterMs()).toBeLessThan(15);
  });

  it('grows with frame delay variation and shrinks again when it stops', () => {
    const rng = new Rng(7);
    const steady = new JitterEstimator();
    const noisy = new JitterEstimator();
    for (let i = 0; i < 400; i++) {
      steady.update(rng.normal() * 2, 5000);
      noisy.update(rng.normal() * 40, 5000);
    }
    expect(noisy.jitterMs()).toBeGreaterThan(steady.jitterMs() + 40);
    // 2.33 * 40 - 30 + 10 ≈ 73 ms expected for sigma = 40 ms
    expect(noisy.jitterMs()).toBeGreaterThan(50);
    expect(noisy.jitterMs()).toBeLessThan(110);
    const high = noisy.jitterMs();
    for (let i = 0; i < 2000; i++) noisy.update(rng.normal() * 2, 5000);
    expect(noisy.jitterMs()).toBeLessThan(high / 2);
  });

  it('learns the size term: big frames that take longer raise the estimate', () => {
    const j = new JitterEstimator();
    const rng = new Rng(3);
    // delay proportional to size change: 1 ms per 1000 bytes, plus small noise
    let prev = 5000;
    for (let i = 0; i < 600; i++) {
      const size = i % 10 === 0 ? 40_000 : 5000 + Math.round(rng.next() * 1000);
      j.update((size - prev) / 1000 + rng.normal(), size);
      prev = size;
    }
    const s = j.stats();
    expect(s.theta0).toBeGreaterThan(0.0005);
    expect(s.maxFrameSizeBytes).toBeGreaterThan(30_000);
    expect(j.jitterMs()).toBeGreaterThan(20);
  });

  it('updateFromFrame computes (arrival delta) - (capture delta) and skips reordered frames', () => {
    const a = new JitterEstimator();
    const b = new JitterEstimator();
    const rng = new Rng(11);
    let arrival = 0;
    for (let i = 0; i < 200; i++) {
      const cap = i * 33_333;
      const d = rng.normal() * 30;
      arrival = cap + 50_000 + d * 1000;
      a.updateFromFrame(cap, arrival, 4000);
      b.update(0, 4000); // reference: no variation
      a.updateFromFrame(cap - 10, arrival, 4000); // reordered older frame: ignored
    }
    expect(a.stats().samples).toBe(199);
    expect(a.jitterMs()).toBeGreaterThan(b.jitterMs() + 20);
  });

  it('ignores bad samples', () => {
    const j = new JitterEstimator();
    j.update(NaN, 100);
    j.update(1, 0);
    j.update(1, Infinity);
    expect(j.stats().invalid).toBe(3);
    expect(j.jitterMs()).toBe(0);
    expect(() => new JitterEstimator({ noiseStdDevs: -1 })).toThrow(RangeError);
  });
});
