import { describe, expect, it } from 'vitest';
import { type Agg, type BenchEntry, comparePairs, renderPairSuite, renderPaperMetrics, renderSummary } from '../../../bench/sim/report.js';
import type { SimResult } from '../../../sim/simulator.js';

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

/** A run with only the fields the summary reads. */
function entry(variant: string, config: string, freezeMs: number, goodputBps: number): BenchEntry {
  const result = {
    seed: 1,
    scheduler: config.startsWith('single') ? 'single' : config,
    durationS: 120,
    streams: 1,
    frames: { sent: 3600, dropped: 0 },
    freezes: { count: freezeMs > 0 ? 1 : 0, totalMs: freezeMs, maxMs: freezeMs },
    fps: 30,
    latencyMs: { p95: 100 },
    goodputBps,
    fec: { overheadPct: 0, utilizationPct: 0 },
    keyframeRequests: 0,
    retransmissions: 0,
    decoderViolations: 0,
    paths: [],
    packetTransmissionMs: { mean: 30, p95: 50, max: 80 },
  } as unknown as SimResult;
  return { variant, half: 'tune', config, wallMs: 0, result };
}

describe('simulator summary at another capacity scale (--rate-scale)', () => {
  const runs = [entry('wc:7_1', 'converge', 1000, 5e6), entry('wc:7_1', 'single:0', 3000, 3e6), entry('wc:7_1', 'single:1', 800, 4e6)];
  const info = { seeds: 1, streams: 1, wallS: 0, fec: ['path'] };

  it("keeps the cellular suite's per-pair acceptance (it is relative to the same run) and names the scale", () => {
    const plain = renderSummary('cellular', runs, info);
    const slow = renderSummary('cellular', runs, { ...info, rateScale: 0.1 });
    expect(plain).toContain('# Simulator benchmark: cellular\n');
    expect(slow).toContain('# Simulator benchmark: cellular (every capacity x 0.1)');
    for (const md of [plain, slow]) {
      expect(md).toContain('## Acceptance per half (issue 10)');
      expect(md).toContain('| wc:7_1 | tune | 1.0 | single:1 | 0.8 |');
      // Per-pair rows replace the per-variant tables.
      expect(md).not.toContain('## wc:7_1');
    }
    expect(slow).toContain('not checked at x 0.1');
    expect(plain).not.toContain('not checked');
  });

  it("does not judge a scaled run against the named scenarios' absolute targets", () => {
    const carriers = [entry('carriers', 'converge', 300, 4.5e6), entry('carriers', 'single:0', 2000, 3e6), entry('carriers', 'single:1', 1900, 3.2e6)];
    expect(renderSummary('carriers', carriers, info)).toContain('## Targets');
    expect(renderSummary('carriers', carriers, { ...info, rateScale: 0.1 })).not.toContain('## Targets');
    expect(renderSummary('carriers', carriers, { ...info, rateScale: 1 })).toContain('## Targets');
  });
});
