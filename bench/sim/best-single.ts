/**
 * The rule both summary.md tables of the cellular suite pick a variant's best
 * single path by (bench/sim/report.ts comparePairs, bench/sim/report-freezes.ts
 * renderAlignedFreezes): the `single:i` that froze least, ties to the higher
 * goodput, each a mean over seeds.
 */

/** The entry of `singles` that froze least (ms), ties to the higher goodput (bps). `singles` must not be empty. */
export function bestSingle<T extends { freezeMs: number; goodputBps: number }>(singles: readonly T[]): T {
  return singles.reduce((b, a) => (a.freezeMs < b.freezeMs || (a.freezeMs === b.freezeMs && a.goodputBps > b.goodputBps) ? a : b));
}
