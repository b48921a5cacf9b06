import { describe, expect, it } from 'vitest';
import { type Agg, cellularPairs } from '../../../sim/bench-report.js';
import { cellularHalf, cellularVariants } from '../../../sim/scenarios.js';

const agg = (variant: string, config: string, freezeMs: number, goodputBps: number, p95 = 100): Agg =>
  ({ variant, config, freezeMs, goodputBps, p95 }) as Agg;

describe('cellular suite', () => {
  it('draws every pair from the shared traces, each in a fixed half, both halves used', () => {
    const v = cellularVariants();
    const labels = v.map((x) => x.label);
    expect(labels).toContain('lte:Verizon+TMobile');
    expect(labels.filter((l) => l.startsWith('lte:'))).toHaveLength(3);
    expect(labels.some((l) => l.startsWith('wc:'))).toBe(true);
    expect(labels.some((l) => l.startsWith('5g:'))).toBe(true);
    expect(new Set(labels).size).toBe(labels.length);
    for (const x of v) expect(x.scenario.paths).toHaveLength(2);
    const halves = labels.map(cellularHalf);
    expect(halves.filter((h) => h === 'tune').length).toBeGreaterThan(labels.length / 4);
    expect(halves.filter((h) => h === 'check').length).toBeGreaterThan(labels.length / 4);
    expect(cellularHalf('lte:Verizon+TMobile')).toBe(cellularHalf('lte:Verizon+TMobile'));
  });

  it('compares converge with the best single path per metric: freeze + 0.5 s and 0.95x goodput', () => {
    const pairs = cellularPairs([
      agg('a', 'converge', 1400, 5e6),
      agg('a', 'single:0', 1000, 3e6),
      agg('a', 'single:1', 5000, 5.2e6),
      agg('b', 'converge', 1600, 5e6),
      agg('b', 'single:0', 1000, 3e6),
      agg('b', 'single:1', 5000, 5.2e6),
      agg('c', 'converge', 0, 4e6), // no single paths: skipped
    ]);
    expect(pairs.map((p) => p.pair)).toEqual(['a', 'b']);
    expect(pairs[0]).toMatchObject({ bestSingleFreezeMs: 1000, bestFreezePath: 'single:0', bestSingleGoodputBps: 5.2e6, ok: true }); // 1400 <= 1500, 5.0 >= 4.94
    expect(pairs[1].ok).toBe(false); // 1600 > 1500
    expect(cellularPairs([agg('d', 'converge', 0, 4e6), agg('d', 'single:0', 0, 3e6), agg('d', 'single:1', 0, 4.5e6)])[0].ok).toBe(false); // 4.0 < 0.95 x 4.5
  });
});
