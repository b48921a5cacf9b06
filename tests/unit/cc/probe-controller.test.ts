import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { GccEstimator } from '../../../src/cc/gcc.js';
import { GccProber, ProbeController } from '../../../src/cc/probe-controller.js';
import type { PathProber } from '../../../src/cc/types.js';

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

  it('reprobe: a second round at 3x and 6x, only when not waiting for a result', () => {
    const pc = new ProbeController();
    expect(pc.reprobe(0, 1_000_000)).toEqual([]); // before onStart
    pc.onStart(0, 1_000_000);
    expect(pc.reprobe(100_000, 1_000_000)).toEqual([]); // waiting
    pc.onEstimate(1_200_000, 1_000_000); // > 1 s: complete
    expect(pc.state()).toBe('complete');
    expect(pc.reprobe(1_200_000, Number.NaN)).toEqual([]);
    expect(pc.reprobe(1_200_000, 1_100_000).map((c) => c.targetBps)).toEqual([3_300_000, 6_600_000]);
    expect(pc.state()).toBe('waiting');
    expect(pc.onEstimate(1_400_000, 4_700_000).map((c) => c.targetBps)).toEqual([9_400_000]); // probing further
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

describe('GccProber start-up re-probe', () => {
  interface DriveOptions {
    /** Path start rate (bps). */
    startBps: number;
    /** What the sender puts on the path (bps), given the target. */
    sendBps: (targetBps: number) => number;
    /** Every n-th packet is lost. */
    lossEvery?: number;
    /** Queueing delay added to a packet sent at `tUs` (µs). */
    queueUs?: (tUs: number) => number;
    /** Called every 5 ms before sending. */
    at?: (tUs: number, g: GccEstimator) => void;
    /**
     * When set, the start clusters' packets are written at 0 with the transport's send buffer at this
     * many bytes after each write (their reports never come).
     */
    startBufferedBytes?: number;
    /** Use the estimator's own prober (GccEstimator.createProber), whose re-probes show in its stats. */
    viaEstimator?: boolean;
  }

  /**
   * A path with a 30 ms one-way delay, fed for 5 s: 1200-byte packets, a
   * report every 100 ms. The start clusters' result never comes (as in a
   * browser whose SCTP window held them back); they are written only with
   * `startBufferedBytes`.
   * Returns the clusters the prober asked for after the start, with when.
   */
  function drive(o: DriveOptions): { atUs: number; targetsBps: number[] }[] {
    const g = new GccEstimator({ startBps: o.startBps });
    const own = new GccProber();
    const facade = o.viaEstimator ? g.createProber({ maxBps: 1e9, alrIntervalMs: 0 }) : undefined;
    const p: Pick<PathProber, 'start' | 'onPacketSent' | 'onReport'> = facade ?? {
      start: (t, bps) => own.start(t, bps),
      onPacketSent: (id, seq, size, t, buffered) => own.onPacketSent(id, seq, size, t, buffered),
      onReport: (r, t) => own.onReport(r, t, g),
    };
    const start = p.start(0, g.targetRateBps());
    expect(start).toHaveLength(2);
    if (o.startBufferedBytes !== undefined) {
      let probeSeq = 1_000_000;
      for (const c of start) for (let k = 0; k < c.minPackets; k++) p.onPacketSent(c.id, probeSeq++, 1200, 0, o.startBufferedBytes);
    }
    const asked: { atUs: number; targetsBps: number[] }[] = [];
    const flight: { pathSeq: number; arrivalUs: number; lost: boolean }[] = [];
    let seq = 0;
    let reportedUpTo = 0;
    let credit = 0;
    for (let t = 0; t <= 5_000_000; t += 5000) {
      o.at?.(t, g);
      credit += (o.sendBps(g.targetRateBps()) * 0.005) / 8;
      while (credit >= 1200) {
        credit -= 1200;
        g.onPacketSent({ pathSeq: seq, sizeBytes: 1200, sendTimeUs: t });
        const lost = o.lossEvery !== undefined && seq % o.lossEvery === o.lossEvery - 1;
        flight.push({ pathSeq: seq, arrivalUs: t + 30_000 + (o.queueUs?.(t) ?? 0), lost });
        seq++;
      }
      if (t > 0 && t % 100_000 === 0) {
        let end = reportedUpTo;
        while (end < flight.length && flight[end].arrivalUs <= t) end++;
        if (end > reportedUpTo) {
          const got = flight.slice(reportedUpTo, end).filter((f) => !f.lost);
          const report = {
            pathId: 0,
            beginSeq: reportedUpTo,
            endSeq: end - 1,
            arrivals: got.map((f) => ({ pathSeq: f.pathSeq, arrivalUs: 9e12 + f.arrivalUs })),
            reportTimeUs: 9e12 + t,
          };
          reportedUpTo = end;
          g.onReport(report, t + 30_000);
          const out = p.onReport(report, t + 30_000);
          if (out.length > 0) asked.push({ atUs: t + 30_000, targetsBps: out.map((c) => c.targetBps) });
          if (!facade) expect(own.startReprobes).toBe(asked.length);
          expect(g.stats().startReprobes).toBe(facade ? asked.length : 0);
        }
      }
      g.onTick(t);
    }
    return asked;
  }

  it('probes again, once, 1 s in, at 3x and 6x the target when the start probes gave nothing', () => {
    expect(drive({ startBps: 1_000_000, sendBps: (tb) => tb, viaEstimator: true })).toHaveLength(1);
    const asked = drive({ startBps: 1_000_000, sendBps: (tb) => tb });
    expect(asked).toHaveLength(1);
    expect(asked[0].atUs).toBeGreaterThanOrEqual(1_000_000);
    expect(asked[0].atUs).toBeLessThanOrEqual(1_500_000);
    expect(asked[0].targetsBps[0]).toBeGreaterThan(2_900_000);
    expect(asked[0].targetsBps[0]).toBeLessThan(3_600_000);
    expect(asked[0].targetsBps[1]).toBeCloseTo(2 * asked[0].targetsBps[0], -3);
  });

  it('probes again when the start probes were held in the transport and read low (a result of 1.4x the start rate applied)', () => {
    const weak = (t: number, g: GccEstimator) => t === 200_000 && g.onProbeResult(1_400_000, t);
    // The 3x cluster's minBytes is 5625: 2813 bytes still buffered after a write count as held.
    const asked = drive({ startBps: 1_000_000, sendBps: (tb) => tb, at: weak, startBufferedBytes: 2813 });
    expect(asked).toHaveLength(1);
    expect(asked[0].targetsBps[0]).toBeGreaterThan(4_000_000);
    // The same result from start probes that left at their rate is the path's answer: not asked again.
    expect(drive({ startBps: 1_000_000, sendBps: (tb) => tb, at: weak, startBufferedBytes: 2800 })).toEqual([]);
    expect(drive({ startBps: 1_000_000, sendBps: (tb) => tb, at: weak, startBufferedBytes: 0 })).toEqual([]);
    expect(drive({ startBps: 1_000_000, sendBps: (tb) => tb, at: weak })).toEqual([]);
  });

  it('does not probe again once the start probes found headroom, after an over-use, on an application-limited path or under loss', () => {
    // A start probe measured 2 Mbps and was applied: the target is at 2x the start rate (held or not).
    const found = (t: number, g: GccEstimator) => t === 200_000 && g.onProbeResult(2_000_000, t);
    expect(drive({ startBps: 1_000_000, sendBps: (tb) => tb, at: found })).toEqual([]);
    expect(drive({ startBps: 1_000_000, sendBps: (tb) => tb, at: found, startBufferedBytes: 20_000 })).toEqual([]);
    // 1.6 Mbps sent; 500 ms in, the delay grows for 250 ms (over-use); the target stays above 0.9 x the start.
    let minTarget = Number.POSITIVE_INFINITY;
    expect(
      drive({
        startBps: 1_000_000,
        sendBps: (tb) => {
          if (tb < minTarget) minTarget = tb;
          return 1_600_000;
        },
        queueUs: (t) => (t < 500_000 ? 0 : Math.min(t - 500_000, 250_000) * 0.4),
      }),
    ).toEqual([]);
    expect(minTarget).toBeGreaterThan(900_000);
    // The app sends 330 kbps of a 1 Mbps target: nothing to learn from a probe.
    expect(drive({ startBps: 1_000_000, sendBps: () => 330_000 })).toEqual([]);
    // 10 % loss.
    expect(drive({ startBps: 1_000_000, sendBps: (tb) => tb, lossEvery: 10 })).toEqual([]);
  });
});
