import { describe, expect, it } from 'vitest';
import { RtcBbrEstimator } from '../../../src/cc/rtc-bbr.js';
import type { PathReport } from '../../../src/core/types.js';
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

/** A hand-driven path: packets of `size` bytes sent at `bps`, arriving after `owdMs`, reported every 50 ms after `owdMs` more. */
function drive(e: RtcBbrEstimator, o: { fromMs: number; toMs: number; bps: number; owdMs: number; seq: { n: number }; lost?: (tMs: number) => boolean }): void {
  const size = 1200;
  const stepMs = (size * 8000) / o.bps;
  const arrivals: Array<{ pathSeq: number; arrivalUs: number }> = [];
  let nextReportMs = Math.ceil(o.fromMs / 50) * 50;
  let begin = o.seq.n;
  const reports: Array<{ atUs: number; r: PathReport }> = [];
  for (let t = o.fromMs; t < o.toMs; t += stepMs) {
    const seq = o.seq.n++;
    e.onPacketSent({ pathSeq: seq, sizeBytes: size, sendTimeUs: Math.round(t * 1000) });
    if (!o.lost?.(t)) arrivals.push({ pathSeq: seq, arrivalUs: Math.round((t + o.owdMs) * 1000) });
    while (nextReportMs <= t + o.owdMs) {
      const covered = arrivals.filter((a) => a.arrivalUs <= nextReportMs * 1000);
      if (covered.length > 0) {
        const end = covered[covered.length - 1].pathSeq;
        reports.push({ atUs: (nextReportMs + o.owdMs) * 1000, r: { pathId: 0, beginSeq: begin, endSeq: end, arrivals: covered, reportTimeUs: nextReportMs * 1000 } });
        arrivals.splice(0, covered.length);
        begin = end + 1;
      }
      nextReportMs += 50;
    }
    while (reports.length > 0 && reports[0].atUs <= t * 1000) {
      const x = reports.shift();
      if (x) e.onReport(x.r, x.atUs);
    }
  }
}

describe('RtcBbrEstimator across a relay switch', () => {
  it('takes no sample from packets sent before the route change (they measured the old route)', () => {
    const e = new RtcBbrEstimator({ startBps: 1e6, maxBps: 8e6 });
    const seq = { n: 0 };
    drive(e, { fromMs: 0, toMs: 3000, bps: 2e6, owdMs: 50, seq });
    expect(e.bwBps()).toBeGreaterThan(1.5e6);
    // Packets sent up to 3 s are still reported after the change at 3 s: they say nothing about the new route.
    e.onRouteChange(3_000_000);
    const late: PathReport = { pathId: 0, beginSeq: seq.n - 20, endSeq: seq.n - 1, arrivals: [], reportTimeUs: 3_040_000 };
    for (let k = 20; k >= 1; k--) late.arrivals.push({ pathSeq: seq.n - k, arrivalUs: 3_040_000 - k * 4000 });
    e.onReport(late, 3_090_000);
    expect(e.bwBps()).toBe(0);
    expect(e.stats().minRttMs).not.toBeLessThan(0);
  });

  it('does not collapse its rate on the first thin samples of the new route (StartUp only grows)', () => {
    const e = new RtcBbrEstimator({ startBps: 1e6, maxBps: 8e6 });
    const r = runScenario(e, { durationMs: 3000, capacityBps: () => 3e6, reportIntervalMs: 50 });
    const seq = { n: r.sent };
    const before = e.targetRateBps();
    expect(before).toBeGreaterThan(2e6);
    e.onRouteChange(3_000_000);
    // The first 300 ms after the switch are lost (the switch gap), then the new route carries a trickle.
    drive(e, { fromMs: 3000, toMs: 3600, bps: 200_000, owdMs: 60, seq, lost: (t) => t < 3300 });
    expect(e.targetRateBps()).toBeGreaterThanOrEqual(before);
  });

  it('is paced as is (Eq. 3): pacing factor 1', () => {
    expect(new RtcBbrEstimator().pacingFactor).toBe(1);
  });

  it('rejects a bad routeChangeGain or cwndGain', () => {
    expect(() => new RtcBbrEstimator({ routeChangeGain: 0.5 })).toThrow(RangeError);
    expect(() => new RtcBbrEstimator({ routeChangeGain: 3 })).toThrow(RangeError);
    expect(() => new RtcBbrEstimator({ cwndGain: 0 })).toThrow(RangeError);
    expect(new RtcBbrEstimator({ routeChangeGain: 0 }).stats().state).toBe('startup');
  });
});

describe('RtcBbrEstimator inflight cap (cwndGain)', () => {
  // Capacity falls 4 -> 3.4 -> 2.9 -> 2.5 Mbps at 4, 5 and 6 s (a relay's load grows): the max filter runs
  // ahead of the capacity and the queue is held by the inflight cap alone.
  const cap = (t: number) => (t < 4000 ? 4e6 : t < 5000 ? 3.4e6 : t < 6000 ? 2.9e6 : 2.5e6);
  const run = (cwndGain?: number) =>
    runScenario(new RtcBbrEstimator({ startBps: 1e6, maxBps: 8e6, ...(cwndGain !== undefined ? { cwndGain } : {}) }), {
      durationMs: 12_000,
      capacityBps: cap,
      oneWayDelayMs: 60,
      queueLimitBytes: 200_000,
    });

  it('keeps the standing queue well under a BDP once the capacity settled (default 1.25; BBR 2 holds ~a BDP)', () => {
    const def = run();
    const bbr = run(2);
    expect(def.maxQueue(7000, 12_000)).toBeLessThan(80); // min RTT 120 ms
    expect(bbr.maxQueue(7000, 12_000)).toBeGreaterThan(120);
    // ... without giving up throughput.
    expect(def.mean(7000, 12_000)).toBeGreaterThan(0.9 * bbr.mean(7000, 12_000));
  });
});

describe('RtcBbrEstimator StartUp after a route change', () => {
  it('ends when the RTT grows (RFC 9406 §4.2 threshold): no queue left standing on a smaller route', () => {
    const run = (routeChangeDelayExit?: boolean) => {
      // The full-pipe sample exit is off here so that only the RTT growth ends StartUp.
      const e = new RtcBbrEstimator({ startBps: 1e6, maxBps: 8e6, routeChangeFullPipeRatio: 0, ...(routeChangeDelayExit !== undefined ? { routeChangeDelayExit } : {}) });
      const r1 = runScenario(e, { durationMs: 4000, capacityBps: () => 3e6, oneWayDelayMs: 50 });
      // The new route's clock restarts at 0 in the link model: the change is at 0 (every packet after it is the new route's).
      e.onRouteChange(0);
      return runScenario(e, { durationMs: 4000, capacityBps: () => 2.5e6, oneWayDelayMs: 60, firstSeq: r1.sent + 10, queueLimitBytes: 200_000 });
    };
    const def = run();
    expect(def.maxQueue(2000, 4000)).toBeLessThan(100);
    expect(def.mean(2000, 4000)).toBeGreaterThan(2e6);
    expect(run(false).maxQueue(2000, 4000)).toBeGreaterThan(300);
  });
});

describe('RtcBbrEstimator StartUp after a route change: full pipe on one sample (routeChangeFullPipeRatio)', () => {
  // The RTT-growth exit is off here so that only the full-pipe sample ends StartUp.
  const run = (fromBps: number, toBps: number, routeChangeFullPipeRatio?: number) => {
    const e = new RtcBbrEstimator({ startBps: 1e6, maxBps: 8e6, routeChangeDelayExit: false, ...(routeChangeFullPipeRatio !== undefined ? { routeChangeFullPipeRatio } : {}) });
    const r1 = runScenario(e, { durationMs: 4000, capacityBps: () => fromBps, oneWayDelayMs: 50 });
    e.onRouteChange(0);
    return { e, r: runScenario(e, { durationMs: 4000, capacityBps: () => toBps, oneWayDelayMs: 60, firstSeq: r1.sent + 10, queueLimitBytes: 400_000 }) };
  };

  it('ends StartUp when the smaller new route limits a sample: no flood of its queue', () => {
    const on = run(4e6, 1.5e6);
    const off = run(4e6, 1.5e6, 0);
    expect(on.r.maxQueue(0, 2000)).toBeLessThan(0.6 * off.r.maxQueue(0, 2000));
    expect(on.r.maxQueue(2000, 4000)).toBeLessThan(100);
    expect(on.r.mean(2000, 4000)).toBeGreaterThan(1.1e6);
  });

  it('lets StartUp grow onto a larger new route as before', () => {
    const on = run(2e6, 5e6);
    const off = run(2e6, 5e6, 0);
    expect(on.r.at(2000)).toBeGreaterThan(3.5e6);
    expect(on.r.mean(1000, 4000)).toBeGreaterThan(0.9 * off.r.mean(1000, 4000));
  });

  it('rejects a ratio that is neither 0 nor > 1', () => {
    expect(() => new RtcBbrEstimator({ routeChangeFullPipeRatio: 1 })).toThrow(RangeError);
    expect(() => new RtcBbrEstimator({ routeChangeFullPipeRatio: Number.NaN })).toThrow(RangeError);
    expect(new RtcBbrEstimator({ routeChangeFullPipeRatio: 0 }).stats().state).toBe('startup');
  });
});
