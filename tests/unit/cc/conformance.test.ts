/**
 * Conformance suite: every registered bandwidth estimator
 * (src/cc/registry.ts), built as the sender builds it, against the in-test
 * link model (tests/unit/cc/link-model.ts):
 * - starts at its start rate and never leaves [0, maxBps], never NaN;
 * - backs off when the capacity drops below its rate (within a few RTTs:
 *   the RTT here is 100 ms) and keeps the queue bounded;
 * - grows toward the capacity when it is well below it;
 * - is deterministic under a seeded link;
 * - survives a report silence (no reports at all) without NaN or growth.
 */
import { describe, expect, it } from 'vitest';
import { createEstimator, estimatorNames } from '../../../src/cc/registry.js';
import { runScenario } from './link-model.js';
import { registerAllStrategies } from '../../../src/strategies.js';

// Every shipped strategy by name (the library registers only the defaults).
registerAllStrategies();

const opts = { startBps: 1_000_000, maxBps: 8_000_000 };

describe.each(estimatorNames())('estimator %s', (name) => {
  it('starts at its start rate and stays finite and in [0, maxBps]', () => {
    const e = createEstimator(name, opts);
    expect(e.targetRateBps()).toBe(opts.startBps);
    const r = runScenario(e, { durationMs: 20_000, capacityBps: (t) => (t < 10_000 ? 3_000_000 : 600_000), lossRate: 0.02 });
    for (const s of r.samples) {
      expect(Number.isFinite(s.targetBps)).toBe(true);
      expect(s.targetBps).toBeGreaterThan(0);
      expect(s.targetBps).toBeLessThanOrEqual(opts.maxBps);
    }
  });

  it('backs off when the capacity drops below its rate, keeping the queue bounded', () => {
    const e = createEstimator(name, opts);
    const r = runScenario(e, { durationMs: 20_000, capacityBps: (t) => (t < 10_000 ? 3_000_000 : 1_000_000) });
    expect(r.mean(8_000, 10_000)).toBeGreaterThan(1_500_000);
    // Within 2 s (20 RTTs) of the drop the target is at or below the new capacity.
    expect(r.at(12_000)).toBeLessThanOrEqual(1_100_000);
    expect(r.maxQueue(15_000, 20_000)).toBeLessThan(300);
  });

  it('grows toward a capacity well above its rate', () => {
    const e = createEstimator(name, { startBps: 300_000, maxBps: 8_000_000 });
    const r = runScenario(e, { durationMs: 20_000, capacityBps: () => 2_000_000 });
    expect(r.mean(15_000, 20_000)).toBeGreaterThan(1_000_000);
  });

  it('is deterministic under a seeded link', () => {
    const run = () => runScenario(createEstimator(name, opts), { durationMs: 8_000, capacityBps: () => 1_500_000, lossRate: 0.05, seed: 4 }).samples.map((s) => s.targetBps);
    expect(run()).toEqual(run());
  });

  it('holds without reports: no NaN, no growth', () => {
    const e = createEstimator(name, opts);
    const r = runScenario(e, { durationMs: 10_000, capacityBps: () => 2_000_000, noReports: true });
    for (const s of r.samples) {
      expect(Number.isFinite(s.targetBps)).toBe(true);
      expect(s.targetBps).toBeLessThanOrEqual(opts.startBps);
    }
  });
});
