/**
 * The rate floor of PathRecovery (src/engine/path-recovery.ts recentLoss): loss with a standing queue
 * is congestion control's business, not a fault for the path hysteresis, unless the path's congestion
 * controller has sat at its minimum rate (it cannot back off any further) and another usable path loses
 * less. Driven through the sender engine with stand-in estimators whose rate, RTTs and loss counters
 * the test sets.
 */
import { describe, expect, it } from 'vitest';
import type { BandwidthEstimator, EstimatorStats } from '../../../src/cc/types.js';
import { ManualClock } from '../../../src/core/clock.js';
import { SenderEngine } from '../../../src/engine/sender.js';

const MIN_BPS = 100_000;

/** A path's congestion controller as the hysteresis sees it: a target, SRTT over min RTT, loss counters. */
class StandInEstimator implements BandwidthEstimator {
  rateBps = 1_000_000;
  srtt = 300; // 200 ms over the min RTT: a standing queue
  lossPerTick = 0;
  lost = 0;
  received = 0;
  constructor(private readonly clock: ManualClock) {}
  onPacketSent(): void {}
  onReport(): void {}
  onTick(): void {}
  /** Advance the loss counters by one tick's 100 packets. */
  step(): void {
    this.lost += Math.round(100 * this.lossPerTick);
    this.received += 100 - Math.round(100 * this.lossPerTick);
  }
  targetRateBps(): number {
    return this.rateBps;
  }
  ackedRateBps(): number | undefined {
    return undefined;
  }
  srttMs(): number {
    return this.srtt;
  }
  minRttMs(): number {
    return 100;
  }
  lossRate(): number {
    return this.lossPerTick;
  }
  minRateBps(): number {
    return MIN_BPS;
  }
  inflightBytes(): number {
    return 0;
  }
  lastReportUs(): number | undefined {
    return this.clock.nowUs();
  }
  stats(): EstimatorStats & { packetsLost: number; packetsReceived: number } {
    const r = this.rateBps;
    return {
      targetRateBps: r,
      delayBasedBps: r,
      lossBasedBps: r,
      ackedRateBps: undefined,
      srttMs: this.srtt,
      minRttMs: 100,
      lossRate: this.lossPerTick,
      trend: 0,
      threshold: 0,
      bandwidthUsage: 'normal',
      rateControlState: 'hold',
      packetsLost: this.lost,
      packetsReceived: this.received,
    };
  }
}

/**
 * Two paths; path 1 loses 30 % with a standing queue, path 0 `path0Loss` (SRTT `path0SrttMs`). Path 1's
 * target follows `rate1(ms)` (ms since the start). Returns when path 1 was benched (ms since the
 * start of the run, in 50 ms ticks), or undefined.
 */
function firstDemotedMs(rate1: (ms: number) => number, path0Loss: number, path0SrttMs = 100, seconds = 8): number | undefined {
  const clock = new ManualClock(1_000_000);
  const est: StandInEstimator[] = [];
  const sender = new SenderEngine({
    clock,
    createEstimator: () => {
      const e = new StandInEstimator(clock);
      est.push(e);
      return e;
    },
  });
  for (let id = 0; id < 2; id++) sender.addPath(id, { send: () => true, bufferedAmount: () => 0 }, 'connected');
  est[0].srtt = path0SrttMs; // 100: at its base RTT; more: a standing queue (its own loss is then no fault, above its floor)
  est[0].lossPerTick = path0Loss;
  est[1].lossPerTick = 0.3;
  for (let ms = 50; ms <= seconds * 1000; ms += 50) {
    est[1].rateBps = rate1(ms);
    clock.advanceUs(50_000);
    for (const e of est) e.step();
    sender.tick();
    if (sender.stats().paths[1].demoted) return ms;
  }
  return undefined;
}

describe('path hysteresis at the rate floor', () => {
  it('counts the queue-time loss of a path that has sat at its congestion controller floor while a cleaner path carries the call', () => {
    const at = firstDemotedMs(() => MIN_BPS, 0);
    expect(at).toBeGreaterThanOrEqual(2000); // the hold: 2 s at the floor first
    expect(at).toBeLessThan(4000); // then its next three loss windows
  });

  it('leaves queue-time loss to congestion control above the floor', () => {
    expect(firstDemotedMs(() => 3 * MIN_BPS, 0)).toBeUndefined();
  });

  it('holds 2 s from reaching the floor, and again after each climb above it', () => {
    // 1 Mbps for 3 s, then at the floor: benched 2-4 s after the drop.
    const drop = firstDemotedMs((ms) => (ms < 3000 ? 1_000_000 : MIN_BPS), 0);
    expect(drop).toBeGreaterThanOrEqual(5000);
    expect(drop).toBeLessThan(7000);
    // A short climb every 1.5 s restarts the hold each time: never benched.
    expect(firstDemotedMs((ms) => (ms % 1500 < 100 ? 2 * MIN_BPS : MIN_BPS), 0)).toBeUndefined();
  });

  it('needs the other path to lose less than half as much', () => {
    // Path 0 queues (its own congestive loss is no fault at 1 Mbps); 0.5 x 30 % = 15 %.
    expect(firstDemotedMs(() => MIN_BPS, 0.2, 300)).toBeUndefined();
    expect(firstDemotedMs(() => MIN_BPS, 0.1, 300)).toBeDefined();
  });
});
