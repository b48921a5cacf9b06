/**
 * FRACTaL + the MPRTP coupling (src/cc/fractal.ts, src/cc/fractal-mrcm.ts):
 * Algorithm 1 and Eq. 1 of "Multipath Rate Control for Real-Time Media"
 * (Kreith and Drozdy) on hand-computed numbers, and the coupled estimators on
 * the in-test link model. The paper gives no worked numeric example of
 * Algorithm 1 or Eq. 1 (its tables are measurements), so the numbers here are
 * computed by hand from the equations.
 */
import { describe, expect, it } from 'vitest';
import { FractalEstimator } from '../../../src/cc/fractal.js';
import { fractalEstimatorEntry } from '../../../src/cc/fractal-entry.js';
import { FractalCoupler, fractionalDistribution, transientBitrate, transientOffset } from '../../../src/cc/fractal-mrcm.js';
import { createEstimator, registerEstimator } from '../../../src/cc/registry.js';
import { fractal } from '../../../src/strategies.js';

registerEstimator(fractal);
import { runScenario } from './link-model.js';

describe('fractional distribution (MPRTP §IV-B Algorithm 1)', () => {
  it('a congested subflow (estimate <= stable) is allocated its estimate at once (§III-B principle 1)', () => {
    const ar = fractionalDistribution([
      { estimatedBps: 600_000, stableBps: 1_000_000, allocatedBps: 1_000_000, rttMs: 100 },
      { estimatedBps: 1_000_000, stableBps: 1_000_000, allocatedBps: 1_000_000, rttMs: 100 },
    ]);
    expect(ar).toEqual([600_000, 1_000_000]);
  });

  it('one subflow ramping up alone gets its whole estimate', () => {
    const ar = fractionalDistribution([
      { estimatedBps: 1_200_000, stableBps: 1_000_000, allocatedBps: 1_000_000, rttMs: 100 },
      { estimatedBps: 800_000, stableBps: 800_000, allocatedBps: 800_000, rttMs: 50 },
    ]);
    expect(ar).toEqual([1_200_000, 800_000]);
  });

  it('two subflows ramping up share the largest ΔSR by ΔSR/RTT weights (total growth = one flow)', () => {
    // ΔSR = 200 k and 100 k; RTT 100 and 50 ms -> weights 2000 and 2000 -> each gets 200 k / 2 = 100 k.
    const ar = fractionalDistribution([
      { estimatedBps: 1_200_000, stableBps: 1_000_000, allocatedBps: 1_000_000, rttMs: 100 },
      { estimatedBps: 900_000, stableBps: 800_000, allocatedBps: 800_000, rttMs: 50 },
    ]);
    expect(ar[0]).toBeCloseTo(1_100_000, 6);
    expect(ar[1]).toBeCloseTo(900_000, 6);
    expect(ar[0] - 1_000_000 + ar[1] - 800_000).toBeCloseTo(200_000, 6);
  });

  it('a lower RTT ramps up faster; no subflow gets more than its own ΔSR', () => {
    // Equal ΔSR 200 k, RTT 20 vs 180 ms -> weights 10000 vs 1111 -> 180 k and 20 k of the 200 k total.
    const ar = fractionalDistribution([
      { estimatedBps: 700_000, stableBps: 500_000, allocatedBps: 500_000, rttMs: 20 },
      { estimatedBps: 700_000, stableBps: 500_000, allocatedBps: 500_000, rttMs: 180 },
    ]);
    expect(ar[0]).toBeCloseTo(680_000, 6);
    expect(ar[1]).toBeCloseTo(520_000, 6);
  });

  it('a subflow under its fair share of its path (FractalConfig.fairShare) ramps outside the shared ramp-up', () => {
    // Without the flag both share the largest ΔSR (previous test); with it the first ramps alone and the second takes its own estimate.
    const ar = fractionalDistribution([
      { estimatedBps: 1_200_000, stableBps: 1_000_000, allocatedBps: 1_000_000, rttMs: 100 },
      { estimatedBps: 900_000, stableBps: 800_000, allocatedBps: 800_000, rttMs: 50, belowFairShare: true },
    ]);
    expect(ar).toEqual([1_200_000, 900_000]);
  });

  it('overlapping ramp-ups keep the smaller of the previous and the new allocation', () => {
    const ar = fractionalDistribution([
      { estimatedBps: 1_400_000, stableBps: 1_000_000, allocatedBps: 1_100_000, rttMs: 100 },
      { estimatedBps: 1_400_000, stableBps: 1_000_000, allocatedBps: 1_300_000, rttMs: 100 },
    ]);
    // New: 1.0 M + 400 k / 2 = 1.2 M each; previous 1.1 M wins on subflow 0, the new 1.2 M on subflow 1.
    expect(ar).toEqual([1_100_000, 1_200_000]);
  });
});

describe('transient bitrate (MPRTP §IV-C Eq. 1, Algorithm 2)', () => {
  it('target^(off) is 0 while the encoder still sends the stable sum and 1 once it sends the demanded rate', () => {
    expect(transientOffset(2_000_000, 1_500_000, 1_500_000)).toBe(0);
    expect(transientOffset(2_000_000, 2_000_000, 1_500_000)).toBe(1);
    expect(transientOffset(2_000_000, 1_750_000, 1_500_000)).toBeCloseTo(0.5, 9);
    // A reduction: demanded 1.0 M from a stable 1.6 M, the encoder at 1.3 M -> halfway.
    expect(transientOffset(1_000_000, 1_300_000, 1_600_000)).toBeCloseTo(0.5, 9);
    // Overshoot is clamped to [0, 1]; no transition -> 1.
    expect(transientOffset(2_000_000, 900_000, 1_500_000)).toBe(0);
    expect(transientOffset(1_500_000, 1_000_000, 1_500_000)).toBe(1);
  });

  it('SR_transient = SR_allocated · off + SR_stable · (1 - off)', () => {
    expect(transientBitrate(400_000, 1_000_000, 0.25)).toBeCloseTo(850_000, 6);
  });

  it('after a cut on one subflow the split follows the transient rates and the sum is MR_demanded (no traffic fading)', () => {
    const c = new FractalCoupler();
    const a = c.join(1_000_000, 0);
    const b = c.join(1_000_000, 0);
    c.update(b, { estimatedBps: 1_000_000, stableBps: 1_000_000, state: 'stable', rttMs: 100, actualBps: 1_000_000 }, 0);
    // Subflow a congested: estimate 400 k; the encoder still sends 2 M in total.
    c.update(a, { estimatedBps: 400_000, stableBps: 400_000, state: 'congested', rttMs: 100, actualBps: 1_000_000 }, 1000);
    // stable sum 1.4 M, demanded 1.4 M -> no transition by Eq. 1's guard: the allocations.
    expect(c.targetBps(a) + c.targetBps(b)).toBeCloseTo(1_400_000, 3);
    // Now with SR_stable of a still at its old 1 M (the SM has not settled yet): demanded 1.4 M, stable 2 M, actual 2 M -> off 0:
    c.update(a, { estimatedBps: 400_000, stableBps: 1_000_000, state: 'congested', rttMs: 100, actualBps: 1_000_000 }, 2000);
    // the split stays 1:1 (the stable rates), so b is not pushed past its 1 M while the encoder is still at 2 M.
    expect(c.targetBps(a)).toBeCloseTo(700_000, 3);
    expect(c.targetBps(b)).toBeCloseTo(700_000, 3);
  });
});

describe('FractalEstimator', () => {
  it('reports the SM path states: underused while increasing, congested after a capacity drop', () => {
    const e = new FractalEstimator({ startBps: 500_000, maxBps: 8_000_000 });
    const seen = new Set<string>();
    const orig = e.onReport.bind(e);
    e.onReport = (r, now) => {
      orig(r, now);
      seen.add(e.pathState());
    };
    runScenario(e, { durationMs: 16_000, capacityBps: (t) => (t < 8_000 ? 3_000_000 : 800_000) });
    expect(seen).toEqual(new Set(['stable', 'underused', 'congested']));
    expect(e.stats().congestions).toBeGreaterThan(0);
  });

  it('rejects bad configuration and survives garbage input', () => {
    expect(() => new FractalEstimator({ startBps: Number.NaN })).toThrow(RangeError);
    expect(() => new FractalEstimator({ minBps: 2e6, maxBps: 1e6 })).toThrow(RangeError);
    const e = new FractalEstimator();
    e.onPacketSent({ pathSeq: -1, sizeBytes: 1200, sendTimeUs: 0 });
    e.onReport(null as never, 1000);
    e.onReport({ pathId: 0, beginSeq: 0, endSeq: 3, arrivals: [{ pathSeq: 'x', arrivalUs: 1 } as never], reportTimeUs: 5 }, 2000);
    e.onTick(Number.NaN);
    expect(e.stats().sentInvalid).toBe(1);
    expect(e.stats().reportsInvalid).toBe(1);
    expect(Number.isFinite(e.targetRateBps())).toBe(true);
  });

  it('a subflow whose group partner does not ramp up grows like a single-path FRACTaL (Algorithm 1: alone -> its whole ΔSR)', () => {
    // The paper's coupling only: the default linked increase (coupledIncrease 'lia') would scale a's steps by its share.
    const paper = fractalEstimatorEntry({ coupledIncrease: 'off' });
    const single = paper.create({ startBps: 300_000, maxBps: 8_000_000 });
    const rs = runScenario(single, { durationMs: 6_000, capacityBps: () => 6_000_000 });
    const group = new Map<string, unknown>();
    const a = paper.create({ startBps: 300_000, maxBps: 8_000_000, group });
    const b = paper.create({ startBps: 300_000, maxBps: 8_000_000, group });
    expect(group.size).toBe(1);
    const ra = runScenario(a, { durationMs: 6_000, capacityBps: () => 6_000_000 });
    expect(rs.at(5_900) - 300_000).toBeGreaterThan(500_000);
    // b never reports (its estimate stays at its stable rate): a is the only subflow ramping up.
    expect(ra.at(5_900)).toBeCloseTo(rs.at(5_900), -4);
    expect(b.targetRateBps()).toBeGreaterThan(0);
  });

  it('splitStart: the subflows of one sender share the start rate, so the multipath flow starts like one single-path flow (MPTCP "do no harm", MPRTP §II-B)', () => {
    const coupler = new FractalCoupler();
    const a = new FractalEstimator({ startBps: 1_000_000, splitStart: true }, coupler);
    const b = new FractalEstimator({ startBps: 1_000_000, splitStart: true }, coupler);
    a.onTick(1000);
    b.onTick(1000);
    expect(a.targetRateBps()).toBeCloseTo(500_000, -3);
    expect(b.targetRateBps()).toBeCloseTo(500_000, -3);
    const alone = new FractalEstimator({ startBps: 1_000_000, splitStart: true });
    alone.onTick(1000);
    expect(alone.targetRateBps()).toBe(1_000_000);
    // Default (off): every subflow starts at the whole start rate.
    const group = new Map<string, unknown>();
    const c = createEstimator('fractal', { startBps: 1_000_000, maxBps: 8_000_000, group });
    const d = createEstimator('fractal', { startBps: 1_000_000, maxBps: 8_000_000, group });
    c.onTick(1000);
    d.onTick(1000);
    expect(c.targetRateBps() + d.targetRateBps()).toBeCloseTo(2_000_000, -3);
  });

  it('splitStart: once a subflow has measured its path, a later subflow does not reset its rate', () => {
    const coupler = new FractalCoupler();
    const a = new FractalEstimator({ startBps: 1_000_000, maxBps: 8_000_000, splitStart: true }, coupler);
    runScenario(a, { durationMs: 3_000, capacityBps: () => 4_000_000 });
    const before = a.stats().estimatedBps;
    const b = new FractalEstimator({ startBps: 1_000_000, maxBps: 8_000_000, splitStart: true }, coupler);
    b.onTick(3_000_000);
    a.onTick(3_000_000);
    expect(a.stats().estimatedBps).toBe(before);
    expect(b.targetRateBps()).toBeLessThan(1_000_000);
  });

  it('distortionMarginMs: a lower distortion floor withdraws the steps that raise the queue by 15+ ms, so alone on a link the queue stays short and no congestion is reached', () => {
    const run = (distortionMarginMs?: number) => {
      const e = new FractalEstimator({ startBps: 500_000, maxBps: 8_000_000, ...(distortionMarginMs !== undefined ? { distortionMarginMs } : {}) });
      const r = runScenario(e, { durationMs: 30_000, capacityBps: () => 2_000_000, oneWayDelayMs: 50, queueLimitBytes: 75_000 });
      return { maxQueueMs: r.maxQueue(10_000, 30_000), meanBps: r.mean(10_000, 30_000), st: e.stats() };
    };
    const def = run();
    const low = run(15);
    // Default (30 ms floor): steps push the queue to ~150 ms and end in a congestion (REDUCE).
    expect(def.maxQueueMs).toBeGreaterThan(100);
    expect(def.st.congestions).toBeGreaterThan(0);
    // 15 ms: the same link, the queue stays under 80 ms, distortions instead of congestion, no less throughput.
    expect(low.maxQueueMs).toBeLessThan(80);
    expect(low.st.congestions).toBe(0);
    expect(low.st.distortions).toBeGreaterThan(def.st.distortions);
    expect(low.meanBps).toBeGreaterThan(0.9 * def.meanBps);
    expect(() => new FractalEstimator({ distortionMarginMs: -1 })).toThrow(RangeError);
    expect(() => new FractalEstimator({ distortionMarginMs: Number.NaN })).toThrow(RangeError);
  });

  it('distortionMarginScales: the distortion floor is distortionMarginMs x slack, so near its bottleneck point the threshold is higher than with the flat floor', () => {
    const run = (distortionMarginScales: boolean) => {
      const e = new FractalEstimator({ startBps: 500_000, maxBps: 8_000_000, distortionMarginMs: 15, distortionMarginScales });
      // 2 Mbps, then 1 Mbps from 10 s: the drop ends in a congestion, which sets the bottleneck point near 1 Mbps.
      runScenario(e, { durationMs: 60_000, capacityBps: (t) => (t < 10_000 ? 2_000_000 : 1_000_000), oneWayDelayMs: 50, queueLimitBytes: 75_000 });
      return e.stats();
    };
    const flat = run(false);
    const scaled = run(true);
    expect(flat.congestions).toBeGreaterThan(0);
    expect(scaled.congestions).toBeGreaterThan(0);
    // Both end near their bottleneck point (slack ~2): the scaled floor is ~30 ms there, the flat one 15 ms.
    expect(scaled.bottleneckBps).toBeGreaterThan(0);
    expect(scaled.threshold).toBeGreaterThan(flat.threshold + 10);
    // Far from any bottleneck point (before the first report: slack 1) the two floors are the same.
    const opts = { startBps: 1_000_000, maxBps: 8_000_000 };
    expect(new FractalEstimator({ ...opts, distortionMarginMs: 15, distortionMarginScales: true }).stats().threshold).toBe(15);
    expect(new FractalEstimator({ ...opts, distortionMarginScales: true }).stats().threshold).toBe(30);
  });

  it("coupledIncrease: a subflow holding a small share of its sender's rate takes smaller increase steps (RFC 6356 linked increase); alone it is plain FRACTaL", () => {
    const run = (coupledIncrease: 'off' | 'share' | 'lia', partnerBps?: number, coupledIncreaseMaxLoss?: number, lossRate = 0) => {
      const c = new FractalCoupler();
      const e = new FractalEstimator({ startBps: 300_000, maxBps: 8_000_000, coupledIncrease, coupledIncreaseMaxLoss }, c);
      if (partnerBps !== undefined) {
        // A partner subflow that stays at partnerBps (stable, sending it): it holds most of the sender's rate.
        const pid = c.join(partnerBps, 0);
        const tick = e.onTick.bind(e);
        e.onTick = (now) => {
          c.update(pid, { estimatedBps: partnerBps, stableBps: partnerBps, state: 'stable', rttMs: 100, actualBps: partnerBps }, now);
          tick(now);
        };
      }
      runScenario(e, { durationMs: 8_000, capacityBps: () => 6_000_000, lossRate, seed: 7 });
      return e.stats();
    };
    const off = run('off', 4_000_000);
    const share = run('share', 4_000_000);
    const lia = run('lia', 4_000_000);
    expect(off.increases).toBeGreaterThan(2);
    // Each step a fraction of the uncoupled one (share: 2 x its share; lia: its share x the partner's): less growth in 8 s.
    expect(share.estimatedBps).toBeLessThan(0.85 * off.estimatedBps);
    expect(lia.estimatedBps).toBeLessThan(0.85 * share.estimatedBps);
    expect(lia.estimatedBps).toBeGreaterThan(300_000);
    // The loss gate: on a loss-free path it changes nothing; on a path that loses packets the steps are uncoupled.
    expect(run('share', 4_000_000, 0).estimatedBps).toBe(share.estimatedBps);
    const lossyOff = run('off', 4_000_000, undefined, 0.02);
    const lossyShare = run('share', 4_000_000, undefined, 0.02);
    const lossyGated = run('share', 4_000_000, 0, 0.02);
    expect(lossyShare.estimatedBps).toBeLessThan(lossyGated.estimatedBps);
    expect(lossyGated.estimatedBps).toBe(lossyOff.estimatedBps);
    expect(() => new FractalEstimator({ coupledIncreaseMaxLoss: 2 })).toThrow(RangeError);
    // Alone (single-path FRACTaL) the coupled increase changes nothing.
    expect(run('share').estimatedBps).toBe(run('off').estimatedBps);
    expect(run('lia').estimatedBps).toBe(run('off').estimatedBps);
    expect(() => new FractalEstimator({ coupledIncrease: 'x' as never })).toThrow(RangeError);
  });

  it('fairShare: the path capacity comes from packet dispersion (bursts queued behind each other), with cross traffic in the queue too', () => {
    const cap = (crossBps: number) => {
      const e = new FractalEstimator({ startBps: 600_000, maxBps: 8_000_000 });
      expect(e.stats().pathCapacityBps).toBe(0);
      runScenario(e, { durationMs: 6_000, capacityBps: () => 3_000_000, burstPackets: 6, crossBps, seed: 3 });
      return e.stats().pathCapacityBps;
    };
    for (const crossBps of [0, 1_500_000]) {
      expect(cap(crossBps)).toBeGreaterThan(2_700_000);
      expect(cap(crossBps)).toBeLessThan(3_300_000);
    }
    // Off: not measured.
    const off = new FractalEstimator({ startBps: 600_000, maxBps: 8_000_000, fairShare: false });
    runScenario(off, { durationMs: 3_000, capacityBps: () => 3_000_000, burstPackets: 6, seed: 3 });
    expect(off.stats().pathCapacityBps).toBe(0);
    expect(() => new FractalEstimator({ fairShareMarginMs: -1 })).toThrow(RangeError);
  });

  it('fairShare: a subflow under its fair share of a path held by cross traffic ramps uncoupled; alone (single path) nothing changes', () => {
    const run = (fairShare: boolean, partner: boolean, coupledIncrease: 'off' | 'lia' = 'lia') => {
      const c = new FractalCoupler();
      const e = new FractalEstimator({ startBps: 300_000, maxBps: 8_000_000, coupledIncrease, fairShare }, c);
      if (partner) {
        // A partner subflow alone on a full 2 Mbps path: it holds most of the sender's rate.
        const P = 2_000_000;
        const pid = c.join(P, 0);
        const tick = e.onTick.bind(e);
        e.onTick = (now) => {
          c.update(pid, { estimatedBps: P, stableBps: P, state: 'stable', rttMs: 100, actualBps: P, receiveBps: P, capacityBps: P }, now);
          tick(now);
        };
      }
      // Our path: 3 Mbps, 2 Mbps of it taken by constant-rate cross traffic in the same queue.
      runScenario(e, { durationMs: 10_000, capacityBps: () => 3_000_000, burstPackets: 6, crossBps: 2_000_000, seed: 5 });
      return e.stats();
    };
    const lia = run(false, true);
    const gated = run(true, true);
    expect(gated.pathCapacityBps).toBeGreaterThan(2_700_000);
    // The LIA factor (its share x the partner's, ~0.1) keeps it near its start; under its fair share it is not applied.
    expect(gated.estimatedBps).toBeGreaterThan(1.3 * lia.estimatedBps);
    // Single path: the gate has no effect at all.
    expect(run(true, false, 'off').estimatedBps).toBe(run(false, false, 'off').estimatedBps);
  });

  it('fractalEstimatorEntry passes its config to every estimator it creates (the threshold floor shows before any report)', () => {
    const opts = { startBps: 1_000_000, maxBps: 8_000_000 };
    expect(fractalEstimatorEntry({ distortionMarginMs: 12 }).create(opts).stats().threshold).toBe(12);
    expect(fractalEstimatorEntry().create(opts).stats().threshold).toBe(30);
    expect(createEstimator('fractal', opts).stats().threshold).toBe(30);
  });
});
