/**
 * bench/sim/report-fairness.ts: the issue 16 acceptance lines of summary.md,
 * on hand-made entries (only `result.fairness` is read).
 */
import { describe, expect, it } from 'vitest';
import type { BenchEntry } from '../../../bench/sim/report.js';
import { renderFairness } from '../../../bench/sim/report-fairness.js';

const entry = (variant: string, config: string, jainIndex: number, broken: string[] = []): BenchEntry =>
  ({
    variant,
    config,
    wallMs: 0,
    result: {
      fairness: {
        fromS: 0,
        toS: 120,
        jainIndex,
        rateErrorPct: 10,
        flows: [
          { name: 'ours', kind: 'ours', paths: [0, 1], throughputBps: 2e6, capacityBps: 4e6, abuPct: 50, lossPct: 0 },
          { name: 'cross[0]:fractal-video@0', kind: 'fractal-video', paths: [0], throughputBps: 1e6, capacityBps: 2e6, abuPct: 50, lossPct: 0 },
        ],
        queueMedianDelayMs: [10, 10],
        broken,
      },
      seed: 1,
    },
  }) as unknown as BenchEntry;

describe('renderFairness acceptance (issue 16)', () => {
  it("judges every setup on the worst seed and on the mean over seeds, and the paper's own setups on the mean", () => {
    const es = [
      entry('rtp-shared', 'fractal', 0.8),
      entry('fractal-shared', 'fractal', 0.99),
      entry('fractal-shared', 'fractal', 0.97),
      entry('fractal-both', 'fractal', 0.96),
      entry('fractal-both', 'fractal', 0.94),
    ];
    const text = renderFairness('fairness', es).join('\n');
    expect(text).toMatch(/\| fractal: Jain >= 0.95 in every setup, every seed \| \*\*no\*\* \| rtp-shared 0.800/);
    expect(text).toMatch(/\| fractal: mean Jain over the seeds >= 0.95 in every setup[^|]*\| \*\*no\*\* \| rtp-shared 0.800; fractal-shared 0.980; fractal-both 0.950 \(mean\)/);
    // Every setup's mean at the bar while a seed is under it: the mean line says yes, the every-seed line no.
    const meanOk = renderFairness('fairness', [entry('rtp-shared', 'fractal', 0.99), entry('rtp-shared', 'fractal', 0.93), entry('tcp-cubic', 'fractal', 0.96)]).join('\n');
    expect(meanOk).toMatch(/every setup, every seed \| \*\*no\*\* \| rtp-shared 0.930; tcp-cubic 0.960/);
    expect(meanOk).toMatch(/mean Jain over the seeds >= 0.95 in every setup[^|]*\| yes \| rtp-shared 0.960; tcp-cubic 0.960 \(mean\)/);
    expect(text).toMatch(/paper's own setups[^|]*\| yes \| fractal-shared \(Table VI, 0.98 ± 0.03\) 0.980 \/ 0.970; fractal-both \(Table VII, 0.95 ± 0.03\) 0.950 \/ 0.940/);
    const low = renderFairness('fairness', [entry('fractal-both', 'fractal', 0.9), entry('fractal-both', 'fractal', 0.94)]).join('\n');
    expect(low).toMatch(/paper's own setups[^|]*\| \*\*no\*\* \| fractal-both \(Table VII, 0.95 ± 0.03\) 0.920 \/ 0.900/);
    // Without the paper's setups there is no such line.
    expect(renderFairness('fairness', [entry('rtp-shared', 'fractal', 0.97)]).join('\n')).not.toMatch(/paper's own setups/);
  });

  it('lists broken assumptions as BROKEN lines (the benchmark then fails), else says they hold', () => {
    const ok = renderFairness('fairness', [entry('rtp-shared', 'fractal', 0.97)]).join('\n');
    expect(ok).toMatch(/- all hold on 1 run\(s\)/);
    expect(ok).not.toMatch(/BROKEN/);
    const bad = renderFairness('fairness', [entry('rtp-shared', 'fractal', 0.97, ['cross[0] gcc-video@0 delivered nothing in 20-30 s'])]).join('\n');
    expect(bad).toMatch(/- BROKEN: rtp-shared fractal seed 1: cross\[0\] gcc-video@0 delivered nothing in 20-30 s/);
  });
});
