import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { GccEstimator } from '../../../src/cc/gcc.js';
import { GccProber, ProbeController } from '../../../src/cc/probe-controller.js';

describe('ProbeController', () => {
  it('starts with clusters at 3x and 6x the start rate (5 packets, 15 ms of bytes), once', () => {
    const clock = new ManualClock();
    const pc = new ProbeController();
    expect(pc.state()).toBe('init');
    const cs = pc.onStart(clock.nowUs(), 1_000_000);
    expect(cs.map((c) => c.targetBps)).toEqual([3_000_000, 6_000_000]);
    expect(cs.map((c) => c.minPackets)).toEqual([5, 5]);
    expect(cs.map((c) => c.minBytes)).toEqual([5625, 11250]);
    expect(new Set(cs.map((c) => c.id)).size).toBe(2);
    expect(pc.state()).toBe('waiting');
    expect(pc.onStart(clock.nowUs(), 1_000_000)).toEqual([]);
  });

  it('probes further at 2x once the estimate exceeds 0.7 x the last probe, and stops at maxBps', () => {
    const clock = new ManualClock();
    const pc = new ProbeController({ maxBps: 30_000_000 });
    pc.onStart(clock.nowUs(), 1_000_000);
    clock.advanceMs(200);
    expect(pc.onEstimate(clock.nowUs(), 4_000_000)).toEqual([]); // 4 M < 0.7 x 6 M
    const f = pc.onEstimate(clock.nowUs(), 5_000_000);
    expect(f.map((c) => c.targetBps)).toEqual([10_000_000]);
    clock.advanceMs(200);
    expect(pc.onEstimate(clock.nowUs(), 9_000_000).map((c) => c.targetBps)).toEqual([18_000_000]);
    clock.advanceMs(200);
    expect(pc.onEstimate(clock.nowUs(), 17_000_000).map((c) => c.targetBps)).toEqual([30_000_000]); // capped
    expect(pc.state()).toBe('complete');
    clock.advanceMs(200);
    expect(pc.onEstimate(clock.nowUs(), 29_000_000)).toEqual([]);
  });

  it('stops waiting after 1 s without reaching the threshold', () => {
    const clock = new ManualClock();
    const pc = new ProbeController();
    pc.onStart(clock.nowUs(), 1_000_000);
    clock.advanceMs(1001);
    expect(pc.onEstimate(clock.nowUs(), 2_000_000)).toEqual([]);
    expect(pc.state()).toBe('complete');
    expect(pc.onEstimate(clock.nowUs(), 50_000_000)).toEqual([]);
  });

  it('a probe result clearly below its target ends probing further at once', () => {
    const pc = new ProbeController();
    pc.onStart(0, 1_000_000);
    pc.onProbeResult(100_000, 5_000_000); // 5 M >= 0.7 x 6 M: keep waiting
    expect(pc.state()).toBe('waiting');
    pc.onProbeResult(100_000, 2_400_000);
    expect(pc.state()).toBe('complete');
    expect(pc.onEstimate(200_000, 5_000_000)).toEqual([]);
  });

  it('is bounded: ever-growing estimates produce O(log(max/start)) clusters', () => {
    const clock = new ManualClock();
    const pc = new ProbeController({ maxBps: 50_000_000 });
    let n = pc.onStart(0, 100_000).length;
    let est = 100_000;
    for (let i = 0; i < 10_000; i++) {
      clock.advanceMs(10);
      est *= 1.5;
      n += pc.onEstimate(clock.nowUs(), Math.min(est, 1e9)).length;
    }
    expect(n).toBeLessThanOrEqual(2 + Math.ceil(Math.log(50_000_000 / 600_000) / Math.log(1.4)) + 1);
    expect(n).toBeGreaterThan(5);
    expect(pc.state()).toBe('complete');
  });

  it('caps initial probes at maxBps and does not duplicate capped clusters', () => {
    const pc = new ProbeController({ maxBps: 2_500_000 });
    expect(pc.onStart(0, 1_000_000).map((c) => c.targetBps)).toEqual([2_500_000]);
    expect(pc.state()).toBe('complete');
  });

  it('ALR probing (opt-in): every alrIntervalMs at 2x while application-limited', () => {
    const clock = new ManualClock();
    const pc = new ProbeController({ alrIntervalMs: 5000 });
    pc.onStart(0, 1_000_000);
    pc.onProbeResult(0, 1_000_000); // clearly below: complete
    clock.advanceMs(6000);
    expect(pc.onEstimate(clock.nowUs(), 1_000_000)).toEqual([]); // not application-limited
    pc.setApplicationLimited(true);
    expect(pc.onEstimate(clock.nowUs(), 1_000_000).map((c) => c.targetBps)).toEqual([2_000_000]);
    pc.onProbeResult(clock.nowUs(), 1_000_000);
    clock.advanceMs(1000);
    expect(pc.onEstimate(clock.nowUs(), 1_000_000)).toEqual([]);
    clock.advanceMs(4000);
    expect(pc.onEstimate(clock.nowUs(), 1_000_000)).toHaveLength(1);
  });

  it('ignores non-finite input and rejects bad configuration', () => {
    const pc = new ProbeController();
    expect(pc.onStart(0, Number.NaN)).toEqual([]);
    expect(pc.onStart(Number.NaN, 1e6)).toEqual([]);
    expect(pc.state()).toBe('init');
    expect(pc.onEstimate(0, -1)).toEqual([]);
    expect(() => new ProbeController({ initialScales: [] })).toThrow(RangeError);
    expect(() => new ProbeController({ initialScales: [0.5] })).toThrow(RangeError);
    expect(() => new ProbeController({ furtherThreshold: 1.5 })).toThrow(RangeError);
    expect(() => new ProbeController({ maxBps: Number.NaN })).toThrow(RangeError);
    expect(() => new ProbeController({ minPackets: 0 })).toThrow(RangeError);
    expect(() => new ProbeController({ alrIntervalMs: -1 })).toThrow(RangeError);
  });
});

describe('GccProber + GccEstimator.onProbeResult', () => {
  it('a result above the estimate raises the target at once; never above maxBps', () => {
    const g = new GccEstimator({ startBps: 1_000_000, maxBps: 4_000_000 });
    g.onProbeResult(3_000_000, 100_000);
    expect(g.delayBasedBps()).toBe(3_000_000);
    expect(g.targetRateBps()).toBe(3_000_000);
    g.onProbeResult(9_000_000, 200_000);
    expect(g.targetRateBps()).toBe(4_000_000);
    expect(g.stats().probeResultsApplied).toBe(2);
  });

  it('a result below the estimate does not lower it (raise only: in a browser a low probe may measure SCTP, not the path)', () => {
    const g = new GccEstimator({ startBps: 2_000_000 });
    g.onProbeResult(475_000, 100_000);
    expect(g.delayBasedBps()).toBe(2_000_000);
    expect(g.targetRateBps()).toBe(2_000_000);
    g.onProbeResult(3_000_000, 200_000);
    expect(g.targetRateBps()).toBe(3_000_000);
  });

  it('ignores garbage results', () => {
    const g = new GccEstimator({ startBps: 1_000_000 });
    for (const v of [Number.NaN, -5, 0, Infinity]) g.onProbeResult(v, 0);
    g.onProbeResult(5_000_000, Number.NaN);
    expect(g.targetRateBps()).toBe(1_000_000);
    expect(g.stats().probeResults).toBe(0);
  });

  it('the facade registers clusters, measures them from reports and applies the result', () => {
    const clock = new ManualClock();
    const g = new GccEstimator({ startBps: 1_000_000 });
    const p = new GccProber();
    const cs = p.start(clock.nowUs(), g.targetRateBps());
    expect(cs).toHaveLength(2);
    // Send the 3 Mbps cluster through an 8 Mbps link; the 6 Mbps one is lost entirely.
    let seq = 0;
    const arrivals: { pathSeq: number; arrivalUs: number }[] = [];
    const c = cs[0];
    const n = Math.max(c.minPackets, Math.ceil(c.minBytes / 1200));
    for (let i = 0; i < n; i++) {
      const t = clock.nowUs();
      g.onPacketSent({ pathSeq: seq, sizeBytes: 1200, sendTimeUs: t });
      p.onPacketSent(c.id, seq, 1200, t);
      arrivals.push({ pathSeq: seq, arrivalUs: 9e12 + t + 30_000 });
      seq++;
      clock.advanceUs((1200 * 8e6) / c.targetBps);
    }
    clock.advanceMs(60);
    const report = { pathId: 0, beginSeq: 0, endSeq: seq - 1, arrivals, reportTimeUs: 9e12 + clock.nowUs() };
    g.onReport(report, clock.nowUs());
    p.onReport(report, clock.nowUs(), g);
    expect(p.lastResultBps()).toBeCloseTo(3_000_000, -3);
    expect(g.targetRateBps()).toBeCloseTo(3_000_000, -3);
    expect(() => p.onReport(null as never, clock.nowUs(), g)).not.toThrow();
  });
});
