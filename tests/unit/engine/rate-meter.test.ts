import { describe, expect, it } from 'vitest';
import { RateMeter } from '../../../src/engine/rate-meter.js';

describe('RateMeter', () => {
  it('measures bytes over its window (bps)', () => {
    const m = new RateMeter(1_000_000);
    for (let t = 0; t < 2_000_000; t += 10_000) m.add(t, 1250); // 1250 bytes per 10 ms = 1 Mbps
    expect(m.rateBps(1_999_999)).toBeCloseTo(1_000_000, -3);
    expect(m.rateBps(3_500_000)).toBe(0); // nothing in the last second
  });

  it('reads the same at the same time since its origin whatever the clock epoch (the buckets follow the origin)', () => {
    const read = (epochUs: number) => {
      const m = new RateMeter(1_000_000, epochUs);
      for (let k = 0; k < 300; k++) m.add(epochUs + k * 7_000, 100 + k);
      return [m.rateBps(epochUs + 1_234_567), m.rateBps(epochUs + 1_500_001)];
    };
    const ref = read(0);
    for (const epoch of [3_468_123, 1_003, 987_654_321]) expect(read(epoch), String(epoch)).toEqual(ref);
    // Without the origin the bucket phase follows the epoch, and so do the rates.
    const unaligned = (epochUs: number) => {
      const m = new RateMeter(1_000_000);
      for (let k = 0; k < 300; k++) m.add(epochUs + k * 7_000, 100 + k);
      return [m.rateBps(epochUs + 1_234_567), m.rateBps(epochUs + 1_500_001)];
    };
    expect(unaligned(3_468_123)).not.toEqual(unaligned(0));
  });

  it('drops a time older than the bucket its slot holds (an old arrival listed again) instead of wiping that bucket', () => {
    const m = new RateMeter(200_000);
    for (let t = 500_000; t < 700_000; t += 10_000) m.add(t, 12_000); // 9.6 Mbps over the last 200 ms
    const before = m.rateBps(699_999);
    expect(before).toBeCloseTo(9_600_000, -4);
    for (let t = 0; t < 500_000; t += 10_000) m.add(t, 0); // old times map onto the same ring slots
    expect(m.rateBps(699_999)).toBe(before);
  });

  it('refuses a window that is not > 0', () => {
    for (const bad of [0, -1, Number.NaN]) expect(() => new RateMeter(bad), String(bad)).toThrow(RangeError);
  });
});
