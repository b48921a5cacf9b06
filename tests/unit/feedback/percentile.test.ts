import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { percentile, percentileOfSorted, percentiles } from '../../../src/feedback/percentile.js';

describe('percentile', () => {
  it('interpolates linearly between ranks (type 7)', () => {
    const xs = [15, 20, 35, 40, 50];
    expect(percentile(xs, 0)).toBe(15);
    expect(percentile(xs, 100)).toBe(50);
    expect(percentile(xs, 50)).toBe(35);
    expect(percentile(xs, 40)).toBeCloseTo(29, 10); // h = 1.6 -> 20 + 0.6*15
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
    expect(percentile([1, 2, 3, 4], 95)).toBeCloseTo(3.85, 10);
  });
  it('does not care about order, ignores NaN, does not mutate', () => {
    const xs = [5, NaN, 1, 3, Infinity];
    expect(percentile(xs, 50)).toBe(3);
    expect(Number.isNaN(xs[1])).toBe(true);
    expect(xs[0]).toBe(5);
  });
  it('returns NaN when empty, a single value when one', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(percentile([7], 99)).toBe(7);
    expect(percentileOfSorted(new Float64Array([1, 2]), 50)).toBe(1.5);
  });
  it('throws on a bad p', () => {
    expect(() => percentile([1], -1)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], NaN)).toThrow(RangeError);
  });
  it('several at once match single calls', () => {
    const xs = [9, 1, 8, 2, 7, 3];
    expect(percentiles(xs, [10, 50, 90])).toEqual([percentile(xs, 10), percentile(xs, 50), percentile(xs, 90)]);
  });
  it('property: between min and max, monotone in p', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ noNaN: true, min: -1e6, max: 1e6 }), { minLength: 1, maxLength: 50 }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        (xs, a, b) => {
          const lo = Math.min(a, b);
          const hi = Math.max(a, b);
          const pl = percentile(xs, lo);
          const ph = percentile(xs, hi);
          expect(pl).toBeGreaterThanOrEqual(Math.min(...xs));
          expect(ph).toBeLessThanOrEqual(Math.max(...xs));
          expect(pl).toBeLessThanOrEqual(ph + 1e-9);
        },
      ),
    );
  });
});
