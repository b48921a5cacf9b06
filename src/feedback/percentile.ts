/**
 * Shared percentile helper for receiver and benchmark statistics.
 *
 * Definition: linear interpolation between the two closest ranks (the
 * "type 7" estimator of Hyndman & Fan 1996, NumPy's and R's default):
 * for sorted values `v[0..n-1]`, rank `h = (n - 1) * p / 100`,
 * result `v[floor(h)] + (h - floor(h)) * (v[floor(h)+1] - v[floor(h)])`.
 */

/**
 * Percentile `p` (0..100) of `values`.
 *
 * - The input is not modified (a copy is sorted): O(n log n).
 * - Non-finite entries (NaN, ±Infinity) are ignored.
 * - Returns `NaN` when there is no finite value.
 *
 * @param values samples in any unit; the result has the same unit.
 * @param p percentile in [0, 100] (50 = median).
 * @throws RangeError when `p` is not a finite number in [0, 100].
 */
export function percentile(values: ArrayLike<number>, p: number): number {
  checkP(p);
  const sorted: number[] = [];
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (Number.isFinite(v)) sorted.push(v);
  }
  sorted.sort((a, b) => a - b);
  return percentileOfSorted(sorted, p);
}

/**
 * Same as {@link percentile} but for an array the caller already sorted
 * ascending and that holds only finite numbers (no copy, O(1)).
 * @throws RangeError when `p` is not a finite number in [0, 100].
 */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  checkP(p);
  const n = sorted.length;
  if (n === 0) return NaN;
  if (n === 1) return sorted[0];
  const h = ((n - 1) * p) / 100;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, n - 1);
  const frac = h - lo;
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

/**
 * Several percentiles with a single sort, e.g. `percentiles(xs, [50, 95, 99])`.
 * @returns one value per requested `p`, in the same order (NaN when empty).
 * @throws RangeError when any `p` is not a finite number in [0, 100].
 */
export function percentiles(values: ArrayLike<number>, ps: readonly number[]): number[] {
  for (const p of ps) checkP(p);
  const sorted: number[] = [];
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (Number.isFinite(v)) sorted.push(v);
  }
  sorted.sort((a, b) => a - b);
  return ps.map((p) => percentileOfSorted(sorted, p));
}

function checkP(p: number): void {
  if (typeof p !== 'number' || !Number.isFinite(p) || p < 0 || p > 100) {
    throw new RangeError(`percentile: p must be a number in [0, 100], got ${String(p)}`);
  }
}
