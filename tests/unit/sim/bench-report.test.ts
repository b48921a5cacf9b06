import { describe, expect, it } from 'vitest';
import { type Agg, comparePairs, renderPairSuite } from '../../../bench/sim/report.js';

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
