/**
 * The `fairness` named scenario (issue 16): the fairness tests of "Multipath
 * Rate Control for Real-Time Media" (Kreith and Drozdy; MPRTP) §V-B, on our
 * simulator's links, with the paper's environment (§V: drop-tail queues of
 * 300 ms, 100 ms one-way delay on the bottlenecks) and its 2000 kbit/s paths
 * and 120 s calls. Our multipath flow uses both paths; the competitors are
 * cross traffic (sim/cross-traffic.ts):
 *
 * | variant | half | what |
 * | --- | --- | --- |
 * | `rtp-shared` | tune | §V-B "two bottlenecks with two media sources" (Table VI): a single-path GCC video source (`gcc-video`) on path 0 |
 * | `rtp-both` | check | §V-B "two bottlenecks with three media sources" (Table VII): one single-path GCC video source on each path |
 * | `tcp-cubic` | tune | the issue's setup: a bulk CUBIC flow (RFC 9438) on path 0 |
 * | `tcp-reno` | check | the same with a bulk Reno flow (RFC 5681) |
 * | `fractal-shared` | tune | Table VI as the paper ran it: the single-path source is FRACTaL too (`fractal-video`) |
 * | `fractal-both` | check | Table VII as the paper ran it: a single-path FRACTaL source on each path |
 *
 * The paper's competing "RTP flow" is its own single-path sender (the
 * authors' test bed, gst-mprtp tests/tester, runs every RTP flow of a test
 * with the same congestion controller), so its 0.98 ± 0.03 (Table VI) and
 * 0.95 ± 0.03 (Table VII) are the `fractal-*` setups; the paper leaves
 * fairness to other single-path controllers out of scope (§IV-B: "fairness
 * across multiple paths depends on each congestion control algorithm being
 * fair on a single path"). The `rtp-*` setups (GCC as a browser's sender)
 * and the `tcp-*` setups (the issue's) are ours.
 *
 * The paper's §V-B one-bottleneck test (both subflows and the single-path
 * source behind ONE queue) has no equivalent here: our paths are disjoint
 * links. Tune on the `tune` variants, check on the others.
 */
import type { Scenario } from './net/scenario.js';

/** Paper §V-B: 2000 kbit/s paths, 120 s; §V: 300 ms drop-tail, 100 ms delay. */
export const FAIRNESS = { rateMbps: 2, delayMs: 100, queueMs: 300, durationS: 120 } as const;

/** A `fairness` variant: label, tune/check half, scenario JSON (validated by the caller). */
export interface FairnessVariantSpec {
  label: string;
  half: 'tune' | 'check';
  scenario: unknown;
}

function paths(): unknown[] {
  const up = { rateMbps: FAIRNESS.rateMbps, delayMs: FAIRNESS.delayMs, queue: { ms: FAIRNESS.queueMs } };
  return [
    { name: 'path0', up },
    { name: 'path1', up },
  ];
}

/** The variants of `fairness` as scenario JSON objects. */
export function fairnessVariants(): FairnessVariantSpec[] {
  const v = (label: string, half: 'tune' | 'check', crossTraffic: unknown[]): FairnessVariantSpec => ({
    label,
    half,
    scenario: { name: `fairness-${label}`, durationS: FAIRNESS.durationS, paths: paths(), crossTraffic } satisfies Partial<Record<keyof Scenario, unknown>>,
  });
  return [
    v('rtp-shared', 'tune', [{ path: 0, kind: 'gcc-video', startS: 0 }]),
    v('rtp-both', 'check', [
      { path: 0, kind: 'gcc-video', startS: 0 },
      { path: 1, kind: 'gcc-video', startS: 0 },
    ]),
    v('tcp-cubic', 'tune', [{ path: 0, kind: 'cubic', startS: 0 }]),
    v('tcp-reno', 'check', [{ path: 0, kind: 'reno', startS: 0 }]),
    v('fractal-shared', 'tune', [{ path: 0, kind: 'fractal-video', startS: 0 }]),
    v('fractal-both', 'check', [
      { path: 0, kind: 'fractal-video', startS: 0 },
      { path: 1, kind: 'fractal-video', startS: 0 },
    ]),
  ];
}
