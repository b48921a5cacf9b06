import { describe, expect, it } from 'vitest';
import { AckedBitrateEstimator } from '../../../src/cc/acked-bitrate.js';

/** 1200-byte packets at `bps` from t0 (µs) for `durUs`; returns the end time. */
function feed(e: AckedBitrateEstimator, bps: number, t0: number, durUs: number, offset = 0): number {
  const gap = (1200 * 8e6) / bps;
  let t = t0;
  for (; t < t0 + durUs; t += gap) e.update(t + offset, 1200);
  return t;
}

describe('AckedBitrateEstimator (bitrate_estimator.cc)', () => {
  it('undefined until the 500 ms initial window, then the received rate', () => {
    const e = new AckedBitrateEstimator();
    feed(e, 1_000_000, 0, 450_000);
    expect(e.bitrateBps()).toBeUndefined();
    feed(e, 1_000_000, 450_000, 1_000_000);
    expect(e.bitrateBps()).toBeGreaterThan(950_000);
    expect(e.bitrateBps()).toBeLessThan(1_050_000);
  });

  it('tracks a rate change within ~2 s and ignores the receiver clock offset', () => {
    const e = new AckedBitrateEstimator();
    const t = feed(e, 1_000_000, 0, 2_000_000, 5e12);
    feed(e, 2_000_000, t, 2_000_000, 5e12);
    expect(e.bitrateBps()).toBeGreaterThan(1_800_000);
    expect(e.bitrateBps()).toBeLessThan(2_200_000);
  });

  it('survives late (reordered) arrivals, clock jumps and garbage', () => {
    const e = new AckedBitrateEstimator();
    const t = feed(e, 1_000_000, 0, 1_000_000);
    e.update(t - 30_000, 1200); // late arrival
    e.update(t - 50_000_000, 1200); // clock jump back
    e.update(Number.NaN, 1200);
    e.update(t, -5);
    feed(e, 1_000_000, t, 1_000_000);
    const r = e.bitrateBps();
    expect(Number.isFinite(r)).toBe(true);
    expect(r).toBeGreaterThan(900_000);
  });
});
