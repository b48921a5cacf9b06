import { describe, expect, it } from 'vitest';
import { overlapS, renderAlignedFreezes, unionS } from '../../../bench/sim/report-freezes.js';
import type { BenchEntry } from '../../../bench/sim/report.js';
import type { SimResult } from '../../../sim/simulator.js';

const run = (variant: string, config: string, seed: number, spans: Array<[number, number]>, goodputBps = 1e6): BenchEntry => ({
  variant,
  config,
  wallMs: 0,
  result: {
    seed,
    scheduler: config.startsWith('single') ? 'single' : config,
    goodputBps,
    freezes: { count: spans.length, totalMs: spans.reduce((s, [, ms]) => s + ms, 0), maxMs: Math.max(0, ...spans.map(([, ms]) => ms)) },
    freezeSpans: spans,
  } as unknown as SimResult,
});

describe('freezes against the best single path, in time', () => {
  it('measures unions and overlaps of spans exactly', () => {
    expect(unionS([])).toBe(0);
    expect(
      unionS([
        [1, 2],
        [1.5, 3],
        [5, 6],
        [5.2, 5.4],
      ]),
    ).toBeCloseTo(3, 9);
    expect(unionS([[2, 1]])).toBe(0);
    expect(overlapS([[0, 2]], [[1, 3]])).toBeCloseTo(1, 9);
    expect(overlapS([[0, 1]], [[2, 3]])).toBe(0);
    expect(
      overlapS(
        [
          [0, 1],
          [2, 4],
        ],
        [[0.5, 3]],
      ),
    ).toBeCloseTo(1.5, 9);
  });

  it('splits frozen time into together / alone / rescued against the best single path of each seed', () => {
    const entries = [
      // single:1 freezes 1.5 s in total, single:0 4 s: single:1 is the best.
      run('p', 'single:0', 1, [[10, 4000]]),
      run('p', 'single:1', 1, [[10, 1000]]),
      run('p', 'single:1', 2, [[20, 500]]),
      // seed 1: 10.5-11.5 overlaps single:1's 10-11 for 0.5 s, then 0.5 s alone; 30-30.2 alone.
      run('p', 'converge', 1, [
        [10.5, 1000],
        [30, 200],
      ]),
      // seed 2: converge plays through single:1's freeze.
      run('p', 'converge', 2, []),
    ];
    const md = renderAlignedFreezes(entries).join('\n');
    expect(md).toContain('### converge: freezes against the best single path, in time');
    // per seed: together (0.5 + 0) / 2, alone (0.7 + 0) / 2, rescued (0.5 + 0.5) / 2
    expect(md).toContain('| p | single:1 | 0.25 | 0.35 | 0.50 |');
    expect(md).toContain('| all (1 pair) | | 0.25 | 0.35 | 0.50 |');
  });

  it('picks the best single path by its mean over seeds, as the per-pair table does, and breaks ties by goodput', () => {
    // single:0 one seed at 1.0 s; single:1 two seeds at 0.6 s: the sum picks single:0, the mean single:1.
    const entries = [run('p', 'single:0', 1, [[10, 1000]]), run('p', 'single:1', 1, [[10, 600]]), run('p', 'single:1', 2, [[20, 600]]), run('p', 'converge', 1, []), run('p', 'converge', 2, [])];
    expect(renderAlignedFreezes(entries).join('\n')).toContain('| p | single:1 | 0.00 | 0.00 | 0.60 |');
    const tie = [run('q', 'single:0', 1, [], 1e6), run('q', 'single:1', 1, [], 2e6), run('q', 'converge', 1, [[5, 300]])];
    expect(renderAlignedFreezes(tie).join('\n')).toContain('| q | single:1 | 0.00 | 0.30 | 0.00 |');
  });

  it('falls back to the explained freezes and renders nothing without single paths or spans to compare', () => {
    const e = run('p', 'converge', 1, [[1, 300]]);
    expect(renderAlignedFreezes([e])).toEqual([]);
    const s = run('p', 'single:0', 1, []);
    const { freezeSpans: _, ...rest } = e.result as SimResult & { freezeSpans?: unknown };
    const old = { ...e, result: { ...rest, freezeCauses: [{ atS: 1, ms: 300 }] } as unknown as SimResult };
    expect(renderAlignedFreezes([old, s]).join('\n')).toContain('| p | single:0 | 0.00 | 0.30 | 0.00 |');
  });
});
