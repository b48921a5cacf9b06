/**
 * Heap measurement for long simulator runs (`soak`): V8's used heap after a
 * full garbage collection, so samples show what the engines hold, not
 * garbage not yet collected. Node only (the simulator and benchmarks).
 *
 * A worker thread cannot be started with `--expose-gc`; the flag is set at
 * run time and `gc` taken from a fresh context (the usual Node idiom). If
 * that fails, samples are taken without a collection (noisier) and
 * {@link heapSampler} says so.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface HeapSampler {
  /** Used heap (bytes) after a full GC when {@link HeapSampler.collected}. */
  sample(): number;
  /** True when each sample follows a forced full GC. */
  readonly collected: boolean;
}

/** A sampler of V8's used heap (bytes). */
export function heapSampler(): HeapSampler {
  let gc: (() => void) | undefined = (globalThis as { gc?: () => void }).gc;
  if (!gc) {
    try {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as () => void;
    } catch {
      gc = undefined;
    }
  }
  return {
    collected: gc !== undefined,
    sample(): number {
      gc?.();
      return process.memoryUsage().heapUsed;
    },
  };
}

/**
 * Growth of a heap series (bytes per simulated minute): least-squares slope
 * over the samples after `warmupS` (the engines fill their bounded windows
 * and histories first). 0 with fewer than 3 samples.
 */
export function heapSlopeBytesPerMin(samples: ReadonlyArray<{ atS: number; usedBytes: number }>, warmupS: number): number {
  const s = samples.filter((x) => x.atS >= warmupS);
  if (s.length < 3) return 0;
  const mx = s.reduce((a, x) => a + x.atS, 0) / s.length;
  const my = s.reduce((a, x) => a + x.usedBytes, 0) / s.length;
  let num = 0;
  let den = 0;
  for (const x of s) {
    num += (x.atS - mx) * (x.usedBytes - my);
    den += (x.atS - mx) ** 2;
  }
  return den > 0 ? (num / den) * 60 : 0;
}
