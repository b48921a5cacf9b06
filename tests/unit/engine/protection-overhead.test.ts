import { describe, expect, it } from 'vitest';
import { Pacer } from '../../../src/cc/pacer.js';
import type { BandwidthEstimator } from '../../../src/cc/types.js';
import { SenderPath, type QueuedItem } from '../../../src/engine/sender-path.js';
import { makeCall } from './call-helper.js';

/** An estimator with a fixed 4 Mbps target. */
function estimator(): BandwidthEstimator {
  return {
    onPacketSent: () => {},
    onReport: () => {},
    onTick: () => {},
    targetRateBps: () => 4_000_000,
    ackedRateBps: () => undefined,
    srttMs: () => 50,
    minRttMs: () => 40,
    lossRate: () => 0,
    inflightBytes: () => 0,
    lastReportUs: () => undefined,
    stats: () => ({ targetRateBps: 4_000_000 }),
  } as unknown as BandwidthEstimator;
}

/** A path sending 1000-byte datagrams every 10 ms over [0, 1 s), `protectedEvery` of them counted as retransmissions / FEC. */
function pathWithOverhead(overheadMax: number, protectedEvery: number): SenderPath {
  const p = new SenderPath(0, { send: () => true, bufferedAmount: () => 0 }, estimator(), new Pacer<QueuedItem>(4_000_000), undefined, 'connected', 0);
  p.overheadMax = overheadMax;
  for (let k = 0; k < 100; k++) {
    const t = k * 10_000;
    p.send(() => new Uint8Array(1000), t);
    if (protectedEvery > 0 && k % protectedEvery === 0) p.protection.add(t, 1000);
  }
  return p;
}

describe('protection overhead (SenderEngineConfig.protectionOverheadMax)', () => {
  it("takes the path's share of retransmissions and FEC over the last second off its part of the encoder target", () => {
    const p = pathWithOverhead(0.5, 4); // a quarter of the bytes
    expect(p.rateBps()).toBe(4_000_000); // pacing follows the estimate
    const r = p.mediaRateBps(990_000);
    expect(r).toBeGreaterThan(0.65 * 4_000_000);
    expect(r).toBeLessThan(0.85 * 4_000_000);
    // A second later the window holds nothing: the whole estimate again.
    expect(p.mediaRateBps(2_500_000)).toBe(4_000_000);
  });

  it('caps the share at protectionOverheadMax, and is off at 0', () => {
    expect(pathWithOverhead(0.5, 1).mediaRateBps(990_000)).toBeCloseTo(2_000_000, -3); // every byte protection: capped at half
    expect(pathWithOverhead(0.2, 1).mediaRateBps(990_000)).toBeCloseTo(3_200_000, -3);
    expect(pathWithOverhead(0, 1).mediaRateBps(990_000)).toBe(4_000_000);
  });

  it("lowers the engine's encoder target below the path estimate on a lossy path (NACK retransmissions and FEC counted)", () => {
    const run = (overheadMax: number) => {
      const c = makeCall([{ rateMbps: 3, delayMs: 30, loss: 0.08 }], { extra: { protectionOverheadMax: overheadMax } });
      c.run(4000);
      const st = c.sender.stats();
      expect(st.retransmissionsSent + st.fecPacketsSent).toBeGreaterThan(20);
      return c.sender.targetBitrateBps() / Math.max(1, st.paths[0].rateBps * st.pushbackRatio);
    };
    expect(run(0)).toBeGreaterThan(0.97); // off: the estimate (no audio in this call)
    const on = run(0.5);
    expect(on).toBeLessThan(0.95);
    expect(on).toBeGreaterThanOrEqual(0.5);
  });
});
