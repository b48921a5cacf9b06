import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import type { PathReport } from '../../../src/core/types.js';
import { ProbeBitrateEstimator } from '../../../src/cc/probe-estimator.js';

const OFFSET = 5_000_000_000_000; // receiver clock offset (µs): only differences count

/**
 * Send `n` packets of `size` bytes for cluster `id` at `sendBps`, through a
 * bottleneck of `linkBps` (empty queue at start), one-way delay 20 ms.
 * Returns the arrival entries (receiver clock).
 */
function sendCluster(
  est: ProbeBitrateEstimator,
  clock: ManualClock,
  id: number,
  firstSeq: number,
  n: number,
  size: number,
  sendBps: number,
  linkBps: number,
): { pathSeq: number; arrivalUs: number }[] {
  const arrivals: { pathSeq: number; arrivalUs: number }[] = [];
  let departUs = 0;
  const spacingUs = (size * 8e6) / sendBps;
  const t0 = clock.nowUs();
  for (let i = 0; i < n; i++) {
    const t = t0 + i * spacingUs;
    est.onProbePacketSent(id, firstSeq + i, size, t);
    departUs = Math.max(departUs, t) + (size * 8e6) / linkBps;
    arrivals.push({ pathSeq: firstSeq + i, arrivalUs: departUs + 20_000 + OFFSET });
  }
  clock.setUs(t0 + n * spacingUs);
  return arrivals;
}

function report(arrivals: { pathSeq: number; arrivalUs: number }[]): PathReport {
  const seqs = arrivals.map((a) => a.pathSeq);
  return {
    pathId: 0,
    beginSeq: Math.min(...seqs),
    endSeq: Math.max(...seqs),
    arrivals,
    reportTimeUs: Math.max(...arrivals.map((a) => a.arrivalUs)),
  };
}

describe('ProbeBitrateEstimator', () => {
  it('a 4 Mbps cluster through a 2.5 Mbps bottleneck measures ~2.5 Mbps (0.95 x receive rate: saturated)', () => {
    const clock = new ManualClock(1_000_000);
    const est = new ProbeBitrateEstimator();
    est.addCluster({ id: 1, targetBps: 4e6, minPackets: 5, minBytes: 7500 }, clock.nowUs());
    const arr = sendCluster(est, clock, 1, 100, 10, 1200, 4e6, 2.5e6);
    clock.advanceMs(50);
    const r = est.onReport(report(arr), clock.nowUs());
    expect(r).toBeDefined();
    expect(r!).toBeCloseTo(0.95 * 2.5e6, -2);
    expect(est.stats().results).toBe(1);
  });

  it('a 4 Mbps cluster through a 10 Mbps link measures ~4 Mbps (min of send and receive rate)', () => {
    const clock = new ManualClock();
    const est = new ProbeBitrateEstimator();
    est.addCluster({ id: 7, targetBps: 4e6, minPackets: 5, minBytes: 7500 }, 0);
    const arr = sendCluster(est, clock, 7, 0xffff_fffb, 10, 1200, 4e6, 10e6).map((a) => ({ ...a, pathSeq: a.pathSeq >>> 0 }));
    const r = est.onReport(report(arr), clock.nowUs() + 50_000);
    expect(r).toBeDefined();
    expect(r!).toBeCloseTo(4e6, -2);
  });

  it('excludes the last-sent packet from the send interval and the first-received one from the receive interval', () => {
    const est = new ProbeBitrateEstimator();
    // Sizes 500, 1000, 1000, 1500 sent 1 ms apart; packet 1 (1000 B) arrives first (reordered).
    const sizes = [500, 1000, 1000, 1500];
    for (const [i, s] of sizes.entries()) est.onProbePacketSent(3, i, s, i * 1000);
    const arrivals = [
      { pathSeq: 1, arrivalUs: 10_000 },
      { pathSeq: 0, arrivalUs: 11_000 },
      { pathSeq: 2, arrivalUs: 12_000 },
      { pathSeq: 3, arrivalUs: 13_900 },
    ];
    // Unregistered cluster: 5 packets minimum, so 4 packets (>= 0.8 x 5) suffice.
    const r = est.onReport({ pathId: 0, beginSeq: 0, endSeq: 3, arrivals, reportTimeUs: 15_000 }, 60_000);
    const sendBps = ((4000 - 1500) * 8e6) / 3000; // 6.67 Mbps
    const recvBps = ((4000 - 1000) * 8e6) / 3900; // 6.15 Mbps
    expect(recvBps).toBeGreaterThan(0.9 * sendBps);
    expect(r).toBeCloseTo(Math.min(sendBps, recvBps), 3);
  });

  it('gives no result until >= 80 % of the cluster packets and bytes are reported', () => {
    const clock = new ManualClock();
    const est = new ProbeBitrateEstimator();
    est.addCluster({ id: 2, targetBps: 3e6, minPackets: 10, minBytes: 12_000 }, 0);
    const arr = sendCluster(est, clock, 2, 0, 10, 1200, 3e6, 10e6);
    expect(est.onReport(report(arr.slice(0, 7)), clock.nowUs())).toBeUndefined(); // 7 < 8
    expect(est.onReport(report(arr.slice(7, 8)), clock.nowUs())).toBeCloseTo(3e6, -3); // 8 packets, 9600 bytes
  });

  it('the byte threshold applies too', () => {
    const est = new ProbeBitrateEstimator();
    est.addCluster({ id: 1, targetBps: 3e6, minPackets: 5, minBytes: 100_000 }, 0);
    for (let i = 0; i < 10; i++) est.onProbePacketSent(1, i, 1200, i * 3200);
    const arrivals = Array.from({ length: 10 }, (_, i) => ({ pathSeq: i, arrivalUs: 50_000 + i * 3200 }));
    expect(est.onReport({ pathId: 0, beginSeq: 0, endSeq: 9, arrivals, reportTimeUs: 90_000 }, 100_000)).toBeUndefined();
  });

  it('lost probe packets: too few received -> no result', () => {
    const clock = new ManualClock();
    const est = new ProbeBitrateEstimator();
    est.addCluster({ id: 1, targetBps: 3e6, minPackets: 5, minBytes: 5625 }, 0);
    const arr = sendCluster(est, clock, 1, 0, 5, 1200, 3e6, 2e6);
    expect(est.onReport(report([arr[0], arr[2], arr[4]]), clock.nowUs())).toBeUndefined();
  });

  it('the result of the newest cluster in a report wins', () => {
    const clock = new ManualClock();
    const est = new ProbeBitrateEstimator();
    est.addCluster({ id: 1, targetBps: 3e6, minPackets: 5, minBytes: 5625 }, 0);
    est.addCluster({ id: 2, targetBps: 6e6, minPackets: 5, minBytes: 11250 }, 0);
    const a = sendCluster(est, clock, 1, 0, 5, 1200, 3e6, 20e6);
    const b = sendCluster(est, clock, 2, 5, 10, 1200, 6e6, 20e6);
    expect(est.onReport(report([...a, ...b]), clock.nowUs())).toBeCloseTo(6e6, -3);
  });

  it('rejects a receive rate above 2x the send rate, and intervals over 1 s', () => {
    const est = new ProbeBitrateEstimator();
    for (let i = 0; i < 5; i++) est.onProbePacketSent(1, i, 1200, i * 10_000);
    const burst = Array.from({ length: 5 }, (_, i) => ({ pathSeq: i, arrivalUs: 100_000 + i * 100 }));
    expect(est.onReport({ pathId: 0, beginSeq: 0, endSeq: 4, arrivals: burst, reportTimeUs: 0 }, 100_000)).toBeUndefined();
    expect(est.stats().resultsInvalid).toBe(1);
    for (let i = 0; i < 5; i++) est.onProbePacketSent(2, 10 + i, 1200, 200_000 + i * 1000);
    const slow = Array.from({ length: 5 }, (_, i) => ({ pathSeq: 10 + i, arrivalUs: i * 400_000 }));
    expect(est.onReport({ pathId: 0, beginSeq: 10, endSeq: 14, arrivals: slow, reportTimeUs: 0 }, 300_000)).toBeUndefined();
    expect(est.stats().resultsInvalid).toBe(2);
  });

  it('forgets clusters 1 s after their last packet, and bounds pending packets', () => {
    const est = new ProbeBitrateEstimator({ maxPackets: 64, maxClusters: 4 });
    for (let i = 0; i < 5; i++) est.onProbePacketSent(1, i, 1200, i * 1000);
    est.onReport({ pathId: 0, beginSeq: 0, endSeq: 0, arrivals: [], reportTimeUs: 0 }, 1_100_000);
    expect(est.clusterCount()).toBe(0);
    expect(est.pendingPackets()).toBe(0);
    const late = Array.from({ length: 5 }, (_, i) => ({ pathSeq: i, arrivalUs: i * 1000 }));
    expect(est.onReport({ pathId: 0, beginSeq: 0, endSeq: 4, arrivals: late, reportTimeUs: 0 }, 1_200_000)).toBeUndefined();
    for (let i = 0; i < 1000; i++) est.onProbePacketSent(10 + (i % 20), 100 + i, 1200, 2_000_000 + i);
    expect(est.pendingPackets()).toBeLessThanOrEqual(64);
    expect(est.clusterCount()).toBeLessThanOrEqual(4);
    expect(est.stats().packetsDropped).toBeGreaterThan(0);
  });

  it('counts invalid sends and ignores garbage reports without throwing', () => {
    const est = new ProbeBitrateEstimator();
    est.onProbePacketSent(Number.NaN, 1, 1200, 0);
    est.onProbePacketSent(1, -1, 1200, 0);
    est.onProbePacketSent(1, 2, Number.POSITIVE_INFINITY, 0);
    est.onProbePacketSent(1, 3, 1200, Number.NaN);
    est.onProbePacketSent(1, 2 ** 32, 1200, 0);
    expect(est.stats().sentInvalid).toBe(5);
    for (let i = 0; i < 5; i++) est.onProbePacketSent(1, i, 1200, i * 3000);
    const garbage: unknown[] = [
      null,
      undefined,
      42,
      'x',
      {},
      { arrivals: null },
      { arrivals: 'abc' },
      { arrivals: [null, 1, 'a', { pathSeq: 'x', arrivalUs: 1 }, { pathSeq: 1, arrivalUs: Number.NaN }, { pathSeq: 2, arrivalUs: Infinity }] },
      {
        arrivals: [
          { pathSeq: 0, arrivalUs: 1e300 },
          { pathSeq: 1, arrivalUs: -1e300 },
          { pathSeq: 3, arrivalUs: 0 },
          { pathSeq: 4, arrivalUs: 0 },
        ],
      },
    ];
    for (const g of garbage) {
      expect(() => est.onReport(g as PathReport, 10_000)).not.toThrow();
      expect(est.onReport(g as PathReport, 10_000)).toBeUndefined();
    }
    expect(est.onReport(report([{ pathSeq: 0, arrivalUs: 0 }]), Number.NaN)).toBeUndefined();
    expect(est.stats().reportsInvalid).toBeGreaterThan(0);
  });

  it('property: any report sequence yields undefined or a finite positive rate', () => {
    const arrival = fc.record({
      pathSeq: fc.oneof(fc.integer({ min: -2, max: 40 }), fc.constant(Number.NaN), fc.double()),
      arrivalUs: fc.oneof(fc.double(), fc.integer({ min: 0, max: 2_000_000 })),
    });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 1500 }), fc.integer({ min: 0, max: 2_000_000 })), { maxLength: 60 }),
        fc.array(fc.array(arrival, { maxLength: 30 }), { maxLength: 8 }),
        (sends, reports) => {
          const est = new ProbeBitrateEstimator();
          for (const [c, s, b, t] of sends) est.onProbePacketSent(c, s, b, t);
          for (const arr of reports) {
            const r = est.onReport({ pathId: 0, beginSeq: 0, endSeq: 40, arrivals: arr, reportTimeUs: 0 } as PathReport, 500_000);
            if (r !== undefined && !(Number.isFinite(r) && r > 0)) return false;
          }
          return true;
        },
      ),
      { numRuns: 300 },
    );
  });

  it('rejects bad configuration', () => {
    expect(() => new ProbeBitrateEstimator({ clusterHistoryMs: 0 })).toThrow(RangeError);
    expect(() => new ProbeBitrateEstimator({ maxClusters: 0 })).toThrow(RangeError);
    expect(() => new ProbeBitrateEstimator({ maxPackets: 1.5 })).toThrow(RangeError);
  });
});
