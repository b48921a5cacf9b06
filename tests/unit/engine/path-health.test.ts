/**
 * PathHealth (src/engine/path-health.ts): the silence threshold learned from
 * a path's own report gaps, failure gaps, and sustained random loss. Pure
 * unit: times are passed in (µs).
 */
import { describe, expect, it } from 'vitest';
import { PathHealth } from '../../../src/engine/path-health.js';

const MS = 1000;

/** Feed `n` reports every 50 ms from `t0Us` with the gap `gapMs(i)` and no loss; returns the end time (µs). */
function feed(h: PathHealth, id: number, t0Us: number, n: number, gapMs: (i: number) => number, srttMs = 40): number {
  let t = t0Us;
  for (let i = 0; i < n; i++) {
    t += 50 * MS;
    h.onReport(id, t, gapMs(i) * MS, 0, srttMs);
  }
  return t;
}

describe('PathHealth silence threshold', () => {
  it('is max(100 ms, 2 x SRTT) before the path has a history', () => {
    const h = new PathHealth();
    expect(h.silenceThresholdUs(0, 20)).toBe(100 * MS);
    expect(h.silenceThresholdUs(0, 150)).toBe(300 * MS);
    expect(h.gapQuantileMs(0)).toBeUndefined();
  });

  it('stays near 2 x SRTT on a steady path and grows well beyond it on a bursty one', () => {
    const h = new PathHealth();
    // Steady: every gap 50-70 ms.
    feed(h, 0, 0, 400, (i) => 50 + (i % 3) * 10);
    // Bursty (an LTE uplink): mostly 50 ms, one stall of 800 ms in every 40 reports.
    feed(h, 1, 0, 400, (i) => (i % 40 === 0 ? 800 : 50));
    const steady = h.silenceThresholdUs(0, 60) / MS;
    const bursty = h.silenceThresholdUs(1, 60) / MS;
    expect(steady).toBeGreaterThanOrEqual(120);
    expect(steady).toBeLessThan(200);
    expect(bursty).toBeGreaterThan(800);
    expect(bursty).toBeLessThan(2000);
  });

  it('detectsEarly: fast failover may act on a steady path, not on one whose stalls outlast the fixed suspicion rule', () => {
    const h = new PathHealth();
    feed(h, 0, 0, 400, (i) => 50 + (i % 3) * 10);
    feed(h, 1, 0, 400, (i) => (i % 40 === 0 ? 800 : 50));
    expect(h.detectsEarly(0, 60)).toBe(true);
    expect(h.detectsEarly(1, 60)).toBe(false);
    // A slow path: 2 x SRTT (300 ms) is beyond max(250, 2 x SRTT + 100 ms) only by the margin.
    expect(h.detectsEarly(2, 150)).toBe(true);
  });

  it('forgets old gaps: after a long steady stretch a path that stopped stalling is steady again', () => {
    const h = new PathHealth({ gapHalfLifeMs: 10_000 });
    let t = feed(h, 0, 0, 400, (i) => (i % 20 === 0 ? 900 : 50));
    expect(h.silenceThresholdUs(0, 40) / MS).toBeGreaterThan(900);
    t = feed(h, 0, t, 2400, () => 50); // 120 s steady, 12 half-lives
    expect(h.silenceThresholdUs(0, 40) / MS).toBeLessThan(200);
  });

  it('does not learn a gap that ended with most packets lost, and flags it as a failure once', () => {
    const h = new PathHealth();
    const t = feed(h, 0, 0, 100, () => 50);
    const before = h.silenceThresholdUs(0, 40);
    h.onReport(0, t + 1_000 * MS, 1_000 * MS, 0.95, 40); // a 1 s blackhole
    expect(h.takeFailure(0)).toBe(true);
    expect(h.takeFailure(0)).toBe(false);
    expect(h.silenceThresholdUs(0, 40)).toBe(before);
    expect(h.stats.failureGaps).toBe(1);
    // A short lossy gap (below the threshold) is no failure.
    h.onReport(0, t + 1_050 * MS, 60 * MS, 0.9, 40);
    expect(h.takeFailure(0)).toBe(false);
  });

  it('judges no failure before the path has a history (start-up probes)', () => {
    const h = new PathHealth();
    h.onReport(0, 500 * MS, 500 * MS, 0.9, 40);
    expect(h.takeFailure(0)).toBe(false);
  });

  it('ignores bad input and unknown paths', () => {
    const h = new PathHealth();
    h.onReport(-1, 0, 50 * MS, 0, 40);
    h.onReport(99, 0, 50 * MS, 0, 40);
    h.onReport(0, Number.NaN, 50 * MS, 0, 40);
    h.onReport(0, 0, -5, 0, 40);
    h.onReport(0, 0, undefined, 0, 40);
    h.onLossWindow(0, Number.NaN, 40, 40);
    h.onLossWindow(0, 2, 40, 40);
    expect(h.stats.gapsLearned).toBe(0);
    expect(h.sustainedLoss(0)).toBe(0);
    expect(h.silenceThresholdUs(0, Number.NaN)).toBe(100 * MS);
    expect(h.takeFailure(99)).toBe(false);
    expect(() => new PathHealth({ gapQuantile: 1.5 })).toThrow(RangeError);
    expect(() => new PathHealth({ gapMargin: 0.5 })).toThrow(RangeError);
    expect(() => new PathHealth({ sustainedLossWindows: 0 })).toThrow(RangeError);
  });
});

describe('PathHealth sustained loss', () => {
  it('is the lowest of the last N windows: one burst does not count, steady loss does', () => {
    const h = new PathHealth({ sustainedLossWindows: 3 });
    h.onLossWindow(0, 0.4, 40, 40);
    h.onLossWindow(0, 0.4, 40, 40);
    expect(h.sustainedLoss(0)).toBe(0); // fewer than 3 windows
    h.onLossWindow(0, 0.3, 40, 40);
    expect(h.sustainedLoss(0)).toBeCloseTo(0.3);
    h.onLossWindow(0, 0, 40, 40);
    expect(h.sustainedLoss(0)).toBe(0);
  });

  it('counts loss with a standing queue (congestion) as none', () => {
    const h = new PathHealth({ sustainedLossWindows: 2 });
    h.onLossWindow(0, 0.5, 400, 100); // 300 ms of queue: congestion
    h.onLossWindow(0, 0.5, 400, 100);
    expect(h.sustainedLoss(0)).toBe(0);
    h.onLossWindow(0, 0.3, 110, 100); // at base RTT: random loss
    h.onLossWindow(0, 0.3, 120, 100);
    expect(h.sustainedLoss(0)).toBeCloseTo(0.3);
  });

  it('counts loss with a standing queue when the path is at its rate floor (congestion control cannot back off further)', () => {
    const h = new PathHealth({ sustainedLossWindows: 2 });
    h.onLossWindow(0, 0.5, 400, 100, true);
    h.onLossWindow(0, 0.4, 400, 100, true);
    expect(h.sustainedLoss(0)).toBeCloseTo(0.4);
    h.onLossWindow(0, 0.4, 400, 100, false); // above the floor again: congestion
    expect(h.sustainedLoss(0)).toBe(0);
  });

  it('forgets a removed path', () => {
    const h = new PathHealth({ sustainedLossWindows: 1 });
    h.onLossWindow(1, 0.5, 40, 40);
    expect(h.sustainedLoss(1)).toBe(0.5);
    h.remove(1);
    expect(h.sustainedLoss(1)).toBe(0);
  });
});

describe('PathHealth false alarms', () => {
  it('a gap past the threshold whose packets arrived raises the threshold past it at once', () => {
    const h = new PathHealth();
    const t = feed(h, 0, 0, 400, () => 50);
    expect(h.silenceThresholdUs(0, 40) / MS).toBeLessThan(150);
    h.onReport(0, t + 400 * MS, 400 * MS, 0, 40); // a 400 ms delay stall, nothing lost
    expect(h.stats.falseAlarms).toBe(1);
    expect(h.takeFailure(0)).toBe(false);
    expect(h.silenceThresholdUs(0, 40) / MS).toBeGreaterThan(400);
  });
});
