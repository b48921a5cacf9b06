import { describe, expect, it } from 'vitest';
import { type Agg, comparePairs, renderPairSuite, renderPaperMetrics } from '../../../bench/sim/report.js';

function agg(variant: string, config: string, o: Partial<Agg>): Agg {
  return {
    variant,
    config,
    half: 'tune',
    n: 3,
    framesSent: 3600,
    dropped: 0,
    freezeCount: 0,
    freezeMs: 0,
    maxFreezeMs: 0,
    fps: 30,
    p95: 80,
    goodputBps: 4e6,
    fecOverheadPct: 0,
    fecUtilizationPct: 0,
    keyframeRequests: 0,
    retransmissions: 0,
    violations: 0,
    sumCapacityBps: 0,
    ptMean: 0,
    ptP95: 0,
    ptMax: 0,
    wallMs: 0,
    ...o,
  };
}

describe('cellular suite pair comparison', () => {
  it('picks the least-freezing single path and applies the per-pair acceptance', () => {
    const [p] = comparePairs([
      agg('a', 'converge', { freezeMs: 1400, goodputBps: 5e6 }),
      agg('a', 'single:0', { freezeMs: 3000, goodputBps: 3e6 }),
      agg('a', 'single:1', { freezeMs: 800, goodputBps: 4e6 }),
    ]);
    expect(p.best.config).toBe('single:1');
    expect(p.freezeDeltaMs).toBe(600);
    expect(p.okFreeze).toBe(false); // 1.4 s > 0.8 s + 0.5 s
    expect(p.okGoodput).toBe(true);
    expect(p.lowFpsBest).toBe(false);
  });

  it('flags a best single path that freezes little only because it plays at a few fps', () => {
    const aggs = [
      agg('b', 'converge', { freezeMs: 6700, fps: 25.9, keyframeRequests: 11 }),
      agg('b', 'single:0', { freezeMs: 500, fps: 6.9, keyframeRequests: 72 }),
      agg('b', 'single:1', { freezeMs: 9000, fps: 20 }),
    ];
    const [p] = comparePairs(aggs);
    expect(p.best.config).toBe('single:0');
    expect(p.lowFpsBest).toBe(true);
    const row = renderPairSuite(aggs).find((l) => l.startsWith('| b |'));
    expect(row).toContain('25.9 / 6.9 ⚠');
    expect(row).toContain('11.0 / 72.0');
  });
});

describe("the papers' headline metrics", () => {
  it('gives goodput against the best single path of the same variant (mean and worst) and the packet transmission time', () => {
    const aggs = [
      agg('a', 'aggdeliv', { goodputBps: 6e6, ptMean: 40, ptP95: 90, ptMax: 300 }),
      agg('a', 'single:0', { goodputBps: 3e6 }),
      agg('a', 'single:1', { goodputBps: 4e6 }),
      agg('b', 'aggdeliv', { goodputBps: 1e6, ptMean: 60, ptP95: 110, ptMax: 500 }),
      agg('b', 'single:0', { goodputBps: 2e6 }),
    ];
    const row = renderPaperMetrics(aggs).find((l) => l.startsWith('| aggdeliv |'));
    // a: 6/4 = 1.5x, b: 1/2 = 0.5x -> mean 1.00x, worst 0.50x; transmission means over variants.
    expect(row).toBe('| aggdeliv | 80 | 1.00x / 0.50x | 50 / 100 / 400 |');
  });

  it('is left out with one configuration, and says "-" without a single path to compare', () => {
    expect(renderPaperMetrics([agg('a', 'converge', {})])).toEqual([]);
    const rows = renderPaperMetrics([agg('a', 'converge', {}), agg('a', 'lola', {})]);
    expect(rows.find((l) => l.startsWith('| lola |'))).toContain('| - |');
  });
});
