import { describe, expect, it } from 'vitest';
import { GccEstimator } from '../../../src/cc/gcc.js';
import { GccLossV2Estimator } from '../../../src/cc/gcc-lossv2.js';
import type { PathReport } from '../../../src/core/types.js';

/**
 * A path at `rateBps` (1200-byte packets), 40 ms one way, a report every
 * 50 ms covering what was sent since the last one; `lost(seq)` drops a packet.
 */
function drive(g: GccEstimator, opts: { rateBps: number; fromUs: number; toUs: number; seq0: number; lost: (seq: number) => boolean }): number {
  const gapUs = (1200 * 8 * 1e6) / opts.rateBps;
  let seq = opts.seq0;
  let begin = seq;
  let t = opts.fromUs;
  let nextReport = t + 50_000;
  let arrivals: PathReport['arrivals'] = [];
  while (t < opts.toUs) {
    g.onPacketSent({ pathSeq: seq, sizeBytes: 1200, sendTimeUs: t });
    if (!opts.lost(seq)) arrivals.push({ pathSeq: seq, arrivalUs: t + 40_000 });
    seq++;
    t += gapUs;
    if (t >= nextReport) {
      g.onReport({ pathId: 0, beginSeq: begin, endSeq: seq - 1, arrivals, reportTimeUs: t + 40_000 }, t + 80_000);
      g.onTick(t + 80_000);
      begin = seq;
      arrivals = [];
      nextReport += 50_000;
    }
  }
  return seq;
}

describe('GccLossV2Estimator (gcc-lossv2: GCC with LossBasedBweV2)', () => {
  it('without loss it follows the delay-based estimate like the classic GCC (v2 updates once per 250 ms observation, so it may lag a little)', () => {
    const a = new GccEstimator({ startBps: 1_000_000 });
    const b = new GccLossV2Estimator({ startBps: 1_000_000 });
    const none = () => false;
    drive(a, { rateBps: 1_000_000, fromUs: 0, toUs: 3_000_000, seq0: 0, lost: none });
    drive(b, { rateBps: 1_000_000, fromUs: 0, toUs: 3_000_000, seq0: 0, lost: none });
    expect(b.lossV2.isReady()).toBe(true);
    expect(b.lossV2.result().state).toBe('delay-based');
    expect(b.targetRateBps()).toBeLessThanOrEqual(a.targetRateBps());
    expect(b.targetRateBps()).toBeGreaterThan(0.95 * a.targetRateBps());
    expect(a.targetRateBps()).toBeGreaterThan(1_100_000); // it did ramp up
    expect(b.lossBasedBps()).toBe(b.lossV2.result().bandwidthEstimateBps);
  });

  it('under 30 % loss the target falls to about v2 instant upper bound (75 kbps / (loss - 0.05)), state decreasing', () => {
    const g = new GccLossV2Estimator({ startBps: 2_000_000 });
    drive(g, { rateBps: 2_000_000, fromUs: 0, toUs: 1_000_000, seq0: 0, lost: () => false });
    const before = g.targetRateBps();
    drive(g, { rateBps: 2_000_000, fromUs: 1_000_000, toUs: 6_000_000, seq0: 10_000, lost: (s) => s % 10 < 3 });
    expect(g.lossV2.result().state).toBe('decreasing');
    expect(g.targetRateBps()).toBeLessThan(before / 2);
    expect(g.targetRateBps()).toBeLessThan(1.3 * (75_000 / (0.3 - 0.05)));
    expect(g.stats().lossBasedBps).toBe(g.lossBasedBps());
    const st = g.stats().lossV2;
    expect(st.ready).toBe(true);
    expect(st.state).toBe('decreasing');
    expect(st.averageLoss).toBeGreaterThan(0.2);
    expect(st.estimateBps).toBe(g.lossBasedBps());
  });

  it('does not feed v2 the reports inside an outage grace window (their losses are the outage), and feeds it again after', () => {
    const g = new GccLossV2Estimator({ startBps: 1_000_000 });
    drive(g, { rateBps: 1_000_000, fromUs: 0, toUs: 2_000_000, seq0: 0, lost: () => false });
    const obs = g.lossV2.stats().observations;
    g.onPathRestored(1_000_000, 2_000_000, 3_000_000);
    drive(g, { rateBps: 1_000_000, fromUs: 2_000_000, toUs: 2_800_000, seq0: 5_000, lost: (s) => s % 2 === 0 });
    expect(g.lossV2.stats().observations).toBe(obs);
    expect(g.lossV2.averageLossRatio()).toBe(0);
    drive(g, { rateBps: 1_000_000, fromUs: 3_000_000, toUs: 4_000_000, seq0: 9_000, lost: (s) => s % 4 === 0 });
    expect(g.lossV2.stats().observations).toBeGreaterThan(obs + 2);
    expect(g.lossV2.averageLossRatio()).toBeGreaterThan(0.1);
  });

  it('uses the classic bound until v2 has its 3 observations', () => {
    const g = new GccLossV2Estimator({ startBps: 1_000_000 });
    const c = new GccEstimator({ startBps: 1_000_000 });
    drive(g, { rateBps: 1_000_000, fromUs: 0, toUs: 300_000, seq0: 0, lost: () => false });
    drive(c, { rateBps: 1_000_000, fromUs: 0, toUs: 300_000, seq0: 0, lost: () => false });
    expect(g.lossV2.isReady()).toBe(false);
    expect(g.lossBasedBps()).toBe(c.lossBasedBps());
    expect(g.targetRateBps()).toBe(c.targetRateBps());
  });

  it('a packet reported lost and then received while v2 observation is open reaches v2 as received', () => {
    const g = new GccLossV2Estimator({ startBps: 1_000_000 });
    for (let s = 0; s < 10; s++) g.onPacketSent({ pathSeq: s, sizeBytes: 1200, sendTimeUs: s * 10_000 });
    const arr = (seqs: number[]) => seqs.map((s) => ({ pathSeq: s, arrivalUs: s * 10_000 + 40_000 }));
    g.onReport({ pathId: 0, beginSeq: 0, endSeq: 4, arrivals: arr([0, 1, 3, 4]), reportTimeUs: 90_000 }, 130_000);
    expect(g.stats().lossV2.partialLostEntries).toBe(1); // seq 2
    g.onReport({ pathId: 0, beginSeq: 5, endSeq: 9, arrivals: arr([2, 5, 6, 7, 8, 9]), reportTimeUs: 140_000 }, 180_000);
    expect(g.stats().lossV2.partialLostEntries).toBe(0);
    expect(g.stats().lossRecovered).toBe(1);
  });

  it('a raising probe result leaves v2 alone (upstream SetSendBitrate does); the restore probe after an outage restarts it', () => {
    const g = new GccLossV2Estimator({ startBps: 500_000 });
    drive(g, { rateBps: 500_000, fromUs: 0, toUs: 2_000_000, seq0: 0, lost: (s) => s % 10 === 0 });
    expect(g.lossV2.isReady()).toBe(true);
    const before = g.lossV2.result();
    g.onProbeResult(5_000_000, 2_000_000);
    expect(g.lossV2.result()).toEqual(before);
    g.onPathRestored(3_000_000, 2_100_000, 2_200_000);
    g.onProbeResult(2_500_000, 2_150_000);
    expect(g.stats().probeRestores).toBe(1);
    expect(g.lossV2.result().bandwidthEstimateBps).toBe(g.stats().lossBasedBps);
    expect(g.lossV2.result().state).toBe('delay-based');
  });

  it('passes the ALR flag its prober gets on to v2 (no acked-rate candidate while application-limited)', () => {
    const g = new GccLossV2Estimator({ startBps: 1_000_000 });
    const p = g.createProber({ maxBps: 10_000_000, alrIntervalMs: 0 });
    const seen: boolean[] = [];
    const orig = g.lossV2.updateBandwidthEstimate.bind(g.lossV2);
    g.lossV2.updateBandwidthEstimate = (pk, d, inAlr) => {
      seen.push(inAlr);
      orig(pk, d, inAlr);
    };
    p.setApplicationLimited(true);
    drive(g, { rateBps: 1_000_000, fromUs: 0, toUs: 200_000, seq0: 0, lost: () => false });
    p.setApplicationLimited(false);
    drive(g, { rateBps: 1_000_000, fromUs: 200_000, toUs: 400_000, seq0: 1_000, lost: () => false });
    expect(seen.length).toBeGreaterThan(4);
    expect(seen.slice(0, 2)).toEqual([true, true]);
    expect(seen.at(-1)).toBe(false);
  });
});
