import { describe, expect, it } from 'vitest';
import { GccEstimator } from '../../../src/cc/gcc.js';
import type { PathReport } from '../../../src/core/types.js';

const OFF = 9e12; // receiver clock offset

function rep(begin: number, end: number, arrivals: [number, number][], reportTimeUs: number): PathReport {
  return { pathId: 0, beginSeq: begin, endSeq: end, arrivals: arrivals.map(([pathSeq, a]) => ({ pathSeq, arrivalUs: a + OFF })), reportTimeUs: reportTimeUs + OFF };
}

describe('GccEstimator: wiring', () => {
  it('starts at startBps and exposes defaults before any report', () => {
    const g = new GccEstimator();
    expect(g.targetRateBps()).toBe(1_000_000);
    expect(g.ackedRateBps()).toBeUndefined();
    expect(g.lastReportUs()).toBeUndefined();
    expect(g.srttMs()).toBe(200);
    expect(g.hasRttSample()).toBe(false);
    expect(g.stats().bandwidthUsage).toBe('normal');
  });

  it('RTT from a report removes the receiver hold time; SRTT is an EWMA 1/8', () => {
    const g = new GccEstimator();
    g.onPacketSent({ pathSeq: 0, sizeBytes: 1200, sendTimeUs: 1_000_000 });
    g.onPacketSent({ pathSeq: 1, sizeBytes: 1200, sendTimeUs: 1_010_000 });
    // one-way 40 ms; last arrival (seq 1) at 1_050_000, report sent 30 ms later, back 40 ms later.
    g.onReport(
      rep(
        0,
        1,
        [
          [0, 1_040_000],
          [1, 1_050_000],
        ],
        1_080_000,
      ),
      1_120_000,
    );
    expect(g.srttMs()).toBeCloseTo(80, 9); // 1120 - 1010 - 30
    expect(g.minRttMs()).toBeCloseTo(80, 9);
    g.onPacketSent({ pathSeq: 2, sizeBytes: 1200, sendTimeUs: 1_200_000 });
    g.onReport(rep(2, 2, [[2, 1_300_000]], 1_300_000), 1_400_000); // rtt 200
    expect(g.srttMs()).toBeCloseTo(0.875 * 80 + 0.125 * 200, 9);
    expect(g.minRttMs()).toBeCloseTo(80, 9);
    expect(g.stats().latestRttMs).toBeCloseTo(200, 9);
    expect(g.lastReportUs()).toBe(1_400_000);
  });

  it('loss rate from reports; a reordered packet counted lost then received is not double counted', () => {
    const g = new GccEstimator();
    for (let s = 0; s < 40; s++) g.onPacketSent({ pathSeq: s, sizeBytes: 1000, sendTimeUs: s * 1000 });
    const first: [number, number][] = [];
    for (let s = 0; s < 20; s++) if (s !== 5 && s !== 6) first.push([s, 50_000 + s * 1000]);
    g.onReport(rep(0, 19, first, 70_000), 120_000);
    expect(g.lossRate()).toBeCloseTo(2 / 20, 9);
    expect(g.stats().packetsLost).toBe(2);
    const second: [number, number][] = [[5, 71_000]];
    for (let s = 20; s < 40; s++) second.push([s, 72_000 + s * 1000]);
    g.onReport(rep(20, 39, second, 112_000), 160_000);
    const st = g.stats();
    expect(st.lossRecovered).toBe(1);
    expect(st.packetsLost).toBe(1);
    expect(st.packetsReceived).toBe(39);
    // 20 new + the recovered one: this window has no loss; lossRate() is an EWMA (gain 0.1) over windows.
    expect(g.lossRate()).toBeCloseTo(0.1 * 0.9, 9);
    // A duplicate report changes nothing.
    g.onReport(rep(20, 39, second, 112_000), 170_000);
    expect(g.stats().packetsReceived).toBe(39);
    expect(g.stats().arrivalsDuplicate).toBe(21);
  });

  it('inflightBytes = sent bytes not yet covered by any report', () => {
    const g = new GccEstimator();
    for (let s = 0; s < 10; s++) g.onPacketSent({ pathSeq: s, sizeBytes: 500, sendTimeUs: s * 1000 });
    expect(g.inflightBytes()).toBe(5000);
    g.onReport(
      rep(
        0,
        5,
        [
          [0, 10_000],
          [1, 11_000],
          [2, 12_000],
          [4, 13_000],
        ],
        20_000,
      ),
      60_000,
    );
    expect(g.inflightBytes()).toBe(2000);
  });

  it('counts invalid sends and reports instead of throwing', () => {
    const g = new GccEstimator();
    g.onPacketSent({ pathSeq: -1, sizeBytes: 10, sendTimeUs: 0 });
    g.onPacketSent({ pathSeq: 1, sizeBytes: Number.NaN, sendTimeUs: 0 });
    g.onPacketSent({ pathSeq: 1, sizeBytes: 10, sendTimeUs: Number.POSITIVE_INFINITY });
    g.onReport(null as unknown as PathReport, 0);
    g.onReport(rep(0, 0, [], 0), Number.NaN);
    const st = g.stats();
    expect(st.sentInvalid).toBe(3);
    expect(st.reportsInvalid).toBe(2);
  });

  it('config: clear RangeErrors; startBps clamped', () => {
    expect(() => new GccEstimator({ minBps: 0 })).toThrow(RangeError);
    expect(() => new GccEstimator({ minBps: 2e6, maxBps: 1e6 })).toThrow(RangeError);
    expect(() => new GccEstimator({ maxBps: Number.POSITIVE_INFINITY })).toThrow(RangeError);
    expect(() => new GccEstimator({ historyPackets: 3 })).toThrow(RangeError);
    expect(new GccEstimator({ startBps: 10 }).targetRateBps()).toBe(100_000);
  });
});

describe('GccEstimator: the loss-queue bound (LossBasedBweV2 instant upper bound while a queue stands)', () => {
  /** 1200-byte packets at `rateBps` for `seconds`, a report every 50 ms; one-way delay `owdUs(t)`; every `lossEvery`-th packet lost. */
  function run(owdUs: (tUs: number) => number, lossEvery: number, seconds = 4): GccEstimator {
    const g = new GccEstimator({ startBps: 4_000_000 });
    const gapUs = (1200 * 8 * 1e6) / 4_000_000;
    let seq = 0;
    let begin = 0;
    let next = 50_000;
    let arrivals: PathReport['arrivals'] = [];
    for (let t = 0; t < seconds * 1e6; t += gapUs) {
      g.onPacketSent({ pathSeq: seq, sizeBytes: 1200, sendTimeUs: t });
      if (seq % lossEvery !== 0) arrivals.push({ pathSeq: seq, arrivalUs: t + owdUs(t) });
      seq++;
      if (t >= next) {
        const at = t + owdUs(t);
        g.onReport({ pathId: 0, beginSeq: begin, endSeq: seq - 1, arrivals, reportTimeUs: at }, at + 20_000);
        g.onTick(at + 20_000);
        begin = seq;
        arrivals = [];
        next += 50_000;
      }
    }
    return g;
  }
  const bound = 75_000 / (1 / 12 - 0.05); // 8.3 % loss: 2.25 Mbps
  const queued = (t: number) => (t < 1_000_000 ? 20_000 : 170_000); // one-way delay up 150 ms at 1 s

  it('with ~8 % loss and a standing queue (one-way delay up 150 ms) the target is at most 75 kbps / (recent loss - 0.05)', () => {
    const g = run(queued, 12);
    const st = g.stats();
    expect(g.srttMs() - g.minRttMs()).toBeGreaterThan(50);
    expect(st.recentLossRate).toBeGreaterThan(0.06);
    expect(st.recentLossRate).toBeLessThan(0.1);
    expect(g.targetRateBps()).toBeLessThanOrEqual(75_000 / (st.recentLossRate - 0.05) + 1);
    expect(g.targetRateBps()).toBeLessThan(Math.min(st.delayBasedBps, st.lossBasedBps)); // the bound, not the others, binds
  });

  it('forgets the loss when the path comes back from an outage or changes route', () => {
    for (const reset of [(g: GccEstimator) => g.onPathRestored(2_000_000, 4_000_000, 4_500_000), (g: GccEstimator) => g.onRouteChange(4_000_000)]) {
      const g = run(queued, 12);
      expect(g.stats().recentLossRate).toBeGreaterThan(0.06);
      reset(g);
      expect(g.stats().recentLossRate).toBe(0);
    }
  });

  it('the same loss without a queue (random loss on an idle link) is not capped: the classic rule holds at 2-10 %', () => {
    const g = run(() => 20_000, 12);
    expect(g.srttMs() - g.minRttMs()).toBeLessThan(10);
    expect(g.targetRateBps()).toBeGreaterThan(bound * 1.4);
    expect(g.stats().recentLossRate).toBeGreaterThan(0.06);
  });
});
