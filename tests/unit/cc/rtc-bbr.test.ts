import { describe, expect, it } from 'vitest';
import { RtcBbrEstimator } from '../../../src/cc/rtc-bbr.js';
import { runScenario } from './link-model.js';

describe('RtcBbrEstimator (Zhang & Lei §3.1.1 Alg. 1)', () => {
  it('reaches a 3 Mbps bottleneck within 2 s from 300 kbps (StartUp)', () => {
    const r = runScenario(new RtcBbrEstimator({ startBps: 300_000, maxBps: 8e6 }), { durationMs: 6000, capacityBps: () => 3e6 });
    expect(r.at(2000)).toBeGreaterThan(2e6);
  });

  it('cycles its gain in ProbeBW between 0.85, 1 and 1.1 with a 2-8 RTT cycle', () => {
    const e = new RtcBbrEstimator({ startBps: 1e6, maxBps: 8e6 });
    const gains = new Set<number>();
    const lens = new Set<number>();
    const orig = e.onReport.bind(e);
    e.onReport = (rep, now) => {
      orig(rep, now);
      const st = e.stats();
      if (st.state === 'probe-bw') {
        gains.add(st.pacingGain);
        lens.add(st.cycleLen);
      }
    };
    runScenario(e, { durationMs: 20_000, capacityBps: () => 2e6 });
    expect([...gains].sort()).toEqual([0.85, 1, 1.1]);
    for (const l of lens) expect(l >= 2 && l <= 8).toBe(true);
    expect(lens.size).toBeGreaterThan(1);
  });

  it('restarts its filters on a route change and measures the new route', () => {
    const e = new RtcBbrEstimator({ startBps: 1e6, maxBps: 8e6 });
    runScenario(e, { durationMs: 5000, capacityBps: () => 3e6 });
    expect(e.bwBps()).toBeGreaterThan(2e6);
    e.onRouteChange(5_000_000);
    expect(e.bwBps()).toBe(0);
    expect(e.stats().state).toBe('startup');
    expect(e.stats().routeChanges).toBe(1);
  });

  it('rejects bad configs', () => {
    expect(() => new RtcBbrEstimator({ minBps: 2e6, maxBps: 1e6 })).toThrow(RangeError);
    expect(() => new RtcBbrEstimator({ probeUpGain: 0 })).toThrow(RangeError);
    expect(() => new RtcBbrEstimator({ cycleRand: 8, gainCycleLen: 8 })).toThrow(RangeError);
  });
});
