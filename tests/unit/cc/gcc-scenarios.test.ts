/**
 * GCC against the in-test link model (constant capacity, one-way delay 50 ms,
 * drop-tail queue of 60 kB, reports every 50 ms), sender at the target rate
 * in 1200-byte packets. Tolerances follow libwebrtc's goog_cc scenario tests
 * (e.g. 500 kbps link -> 450 +/- 100 kbps after 25 s).
 */
import { describe, expect, it } from 'vitest';
import { GccEstimator } from '../../../src/cc/gcc.js';
import { runScenario } from './link-model.js';

describe('GccEstimator on a simulated link', () => {
  it('converges on a constant 500 kbps link (450 +/- 100 kbps after 25 s)', () => {
    const g = new GccEstimator();
    const r = runScenario(g, { durationMs: 30_000, capacityBps: () => 500_000 });
    expect(Math.abs(r.at(25_000) - 450_000)).toBeLessThanOrEqual(100_000);
    expect(Math.abs(r.mean(20_000, 30_000) - 450_000)).toBeLessThanOrEqual(100_000);
    expect(r.maxQueue(10_000, 30_000)).toBeLessThan(150); // steady state keeps the queue short
  });

  it('converges on a constant 2.5 Mbps link', () => {
    const g = new GccEstimator();
    const r = runScenario(g, { durationMs: 30_000, capacityBps: () => 2_500_000 });
    expect(r.mean(20_000, 30_000)).toBeGreaterThan(2_000_000);
    expect(r.mean(20_000, 30_000)).toBeLessThan(2_800_000);
    expect(r.maxQueue(15_000, 30_000)).toBeLessThan(150);
  });

  it('tracks a step up 1 -> 3 Mbps (GCC ramp: additive near the old capacity, then 8 %/s)', () => {
    const g = new GccEstimator();
    const r = runScenario(g, { durationMs: 45_000, capacityBps: (t) => (t < 20_000 ? 1_000_000 : 3_000_000) });
    expect(r.mean(15_000, 20_000)).toBeLessThan(1_100_000);
    // Without probing GCC climbs at most ~8 %/s: 80 % of the new capacity within 20 s.
    const reached = r.samples.find((s) => s.tMs > 20_000 && s.targetBps >= 2_400_000);
    expect(reached).toBeDefined();
    expect(reached!.tMs - 20_000).toBeLessThan(20_000);
    expect(r.mean(40_000, 45_000)).toBeGreaterThan(2_300_000);
    expect(r.maxQueue(20_000, 45_000)).toBeLessThan(200);
  });

  it('tracks a step down 3 -> 1 Mbps within a few seconds with bounded queue delay', () => {
    const g = new GccEstimator();
    const r = runScenario(g, { durationMs: 40_000, capacityBps: (t) => (t < 25_000 ? 3_000_000 : 1_000_000) });
    expect(r.mean(20_000, 25_000)).toBeGreaterThan(2_300_000);
    expect(r.at(28_000)).toBeLessThan(1_100_000);
    expect(r.maxQueue(25_000, 40_000)).toBeLessThan(700);
    expect(r.maxQueue(33_000, 40_000)).toBeLessThan(100); // drained
    expect(r.min(28_000, 40_000)).toBeGreaterThan(700_000); // no collapse
  });

  it('backs off under a growing queue (capacity drops below the rate)', () => {
    const g = new GccEstimator();
    const r = runScenario(g, { durationMs: 35_000, capacityBps: (t) => (t < 20_000 ? 1_000_000 : 600_000), queueLimitBytes: 1_000_000 });
    expect(r.at(19_900)).toBeGreaterThan(800_000);
    expect(r.at(22_000)).toBeLessThan(600_000);
    expect(r.maxQueue(20_000, 35_000)).toBeLessThan(800);
    expect(r.maxQueue(28_000, 35_000)).toBeLessThan(150); // the standing queue drained
  });

  it('backs off from a start rate far above capacity, and the queue stops growing', () => {
    const g = new GccEstimator({ startBps: 2_000_000 });
    const r = runScenario(g, { durationMs: 10_000, capacityBps: () => 300_000, queueLimitBytes: 1_000_000 });
    expect(r.at(2_500)).toBeLessThan(300_000);
    expect(r.maxQueue(2_500, 10_000)).toBeLessThanOrEqual(r.maxQueue(0, 2_500));
    expect(r.at(9_900)).toBeGreaterThanOrEqual(100_000);
  });

  it('holds under 1-2 % random loss (no collapse below ~70 % of capacity)', () => {
    for (const [loss, seed] of [
      [0.01, 3],
      [0.02, 4],
    ] as const) {
      const g = new GccEstimator();
      const r = runScenario(g, { durationMs: 40_000, capacityBps: () => 1_000_000, lossRate: loss, seed });
      expect(r.min(15_000, 40_000)).toBeGreaterThan(700_000);
      expect(g.lossRate()).toBeLessThan(0.1);
    }
  });

  it('never goes below the floor at 50 % loss', () => {
    const g = new GccEstimator();
    const r = runScenario(g, { durationMs: 20_000, capacityBps: () => 1_000_000, lossRate: 0.5, seed: 9 });
    expect(r.min(0, 20_000)).toBeGreaterThanOrEqual(100_000);
    expect(r.at(15_000)).toBeLessThan(200_000); // it does go down
  });

  it('decays to, but never below, the floor with no reports while sending', () => {
    const g = new GccEstimator();
    const r = runScenario(g, { durationMs: 20_000, capacityBps: () => 5_000_000, noReports: true });
    expect(r.min(0, 20_000)).toBeGreaterThanOrEqual(100_000);
    expect(r.at(19_900)).toBe(100_000);
    expect(g.stats().feedbackTimeouts).toBeGreaterThan(5);
    expect(g.inflightBytes()).toBeGreaterThan(0);
  });

  it('works across pathSeq wrap-around and with a huge receiver clock offset', () => {
    const a = runScenario(new GccEstimator(), { durationMs: 20_000, capacityBps: () => 800_000 });
    const b = runScenario(new GccEstimator(), { durationMs: 20_000, capacityBps: () => 800_000, firstSeq: 0xffff_ff00, receiverClockOffsetUs: -4e15 });
    expect(b.samples.map((s) => s.targetBps)).toEqual(a.samples.map((s) => s.targetBps));
  });
});
