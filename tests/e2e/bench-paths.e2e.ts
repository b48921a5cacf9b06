/**
 * Issue 9 acceptance (instruments): the browser benchmark puts media on every
 * path. A 20 s trace-driven two-path call on the `carriers` traces through the
 * benchmark's own harness (where the second path was dead), real content;
 * then `single:1` on the second carrier alone. Behaviour only, wide margins:
 * both relays delivered media, and single:1 decodes frames.
 */
import { describe, expect, it } from 'vitest';
import { parseCompare } from '../../bench/compare.js';
import { runBench } from '../../bench/browser/run.js';
import type { BenchResult } from '../../bench/browser/metrics.js';
import { loadScenario } from '../../sim/net/scenario.js';
import { scenarioFile } from '../../sim/net/scenario-files.js';
import { outDir } from './out-dir.js';

const carriers = loadScenario(scenarioFile('carriers'));

const bench = async (compare: string, durationS: number, name: string): Promise<BenchResult> => {
  const { results } = await runBench({
    scenario: carriers,
    configs: parseCompare(compare, { numPaths: carriers.paths.length, defaultFec: 'path', native: true }),
    durationS,
    width: 640,
    height: 480,
    fps: 30,
    codec: 'h264',
    maxBitrateBps: 6_000_000,
    track: 'generator',
    sampleEvery: 10,
    ssim: false,
    sourceCheck: false,
    seed: 1,
    out: outDir(name),
    log: () => undefined,
  });
  expect(results.source.kind).toBe('y4m'); // real content, not the synthetic pattern
  return results.results[0];
};

const describeRun = (r: BenchResult): string =>
  `${r.name}: ${r.fps} fps, frames sent ${r.frames.sent} decoded ${r.frames.decoded}; relays ${(r.relay ?? [])
    .map((p) => `path ${p.pathId} ${p.up.deliveredPackets} pkts (${p.sharePct}%)`)
    .join(', ')}; errors: ${r.errors.slice(0, 3).join(' | ') || 'none'}`;

describe('browser benchmark uses every path (carriers traces)', () => {
  it('converge: both relays deliver media packets over a 20 s call', async () => {
    const r = await bench('converge', 20, 'bench-paths-converge');
    expect(r.relay, describeRun(r)).toHaveLength(2);
    for (const p of r.relay ?? []) expect(p.up.deliveredPackets, describeRun(r)).toBeGreaterThan(100);
    expect(r.pathUsage?.ok, r.pathUsage?.problems.join('; ')).toBe(true);
    expect(r.frames.displayed, describeRun(r)).toBeGreaterThan(100);
  });

  it('single:1: the second carrier alone decodes frames', async () => {
    const r = await bench('single:1', 12, 'bench-paths-single1');
    expect(r.frames.decoded, describeRun(r)).toBeGreaterThan(50);
    expect(r.relay?.[1]?.up.deliveredPackets, describeRun(r)).toBeGreaterThan(100);
    expect(r.pathUsage?.ok, r.pathUsage?.problems.join('; ')).toBe(true);
  });
});
