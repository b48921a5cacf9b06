import { describe, expect, it } from 'vitest';
import { StreamQoeStats } from '../../../src/feedback/qoe-stats.js';

const F = 1e6 / 30; // 30 fps frame interval (µs)

describe('StreamQoeStats', () => {
  it('30 fps with one 500 ms gap gives exactly one freeze of ~500 ms', () => {
    const s = new StreamQoeStats();
    let t = 0;
    for (let i = 0; i < 60; i++) s.onFrameDecoded(i, t - 50_000, (t += F));
    t += 500_000 - F; // next frame 500 ms after the previous one
    for (let i = 60; i < 120; i++) s.onFrameDecoded(i, t - 50_000, (t += F));
    const snap = s.snapshot(t);
    expect(snap.freezeCount).toBe(1);
    expect(snap.totalFreezesDurationMs).toBeCloseTo(500, 3);
    expect(snap.framesDecoded).toBe(120);
  });

  it('gaps under the threshold are not freezes', () => {
    // avg over the last 30 intervals incl. the current one: (29 x 33.3 + 180) / 30 = 38.2 ms;
    // threshold max(3 x 38.2, 38.2 + 150) = 188.2 ms > 180 ms
    const s = new StreamQoeStats();
    let t = 0;
    for (let i = 0; i < 60; i++) s.onFrameDecoded(i, 0, (t += F));
    t += 180_000 - F;
    s.onFrameDecoded(60, 0, t);
    for (let i = 61; i < 90; i++) s.onFrameDecoded(i, 0, (t += F));
    t += 100_000 - F;
    s.onFrameDecoded(90, 0, t);
    expect(s.snapshot(t).freezeCount).toBe(0);
    // 200 ms is above it
    const s2 = new StreamQoeStats();
    t = 0;
    for (let i = 0; i < 60; i++) s2.onFrameDecoded(i, 0, (t += F));
    s2.onFrameDecoded(60, 0, (t += 200_000));
    expect(s2.snapshot(t).freezeCount).toBe(1);
  });

  it('needs 5 intervals before detecting freezes; 3x average rule at low fps', () => {
    const s = new StreamQoeStats();
    s.onFrameDecoded(0, 0, 0);
    s.onFrameDecoded(1, 0, 1_000_000); // long first interval: too few samples
    expect(s.snapshot(1_000_000).freezeCount).toBe(0);
    // 5 fps (200 ms): avg+150 = ~350 but 3 x avg rules once avg > 75 ms
    const l = new StreamQoeStats();
    let t = 0;
    for (let i = 0; i < 30; i++) l.onFrameDecoded(i, 0, (t += 200_000));
    l.onFrameDecoded(30, 0, (t += 650_000)); // avg = (29*200+650)/30 = 215 -> threshold 645
    expect(l.snapshot(t).freezeCount).toBe(1);
    l.onFrameDecoded(31, 0, (t += 200_000));
    l.onFrameDecoded(32, 0, (t += 600_000)); // avg ≈ 228 -> threshold 685 > 600
    expect(l.snapshot(t).freezeCount).toBe(1);
  });

  it('computes decoded fps, per-second series, drops, latency percentiles with a clock offset', () => {
    const s = new StreamQoeStats({ maxSeriesSeconds: 5 });
    let t = 1_000_000;
    const t0 = t;
    // 3 s at 30 fps, latency 40..69 ms cycling; receiver clock is 2 s ahead of the sender's
    // (sender clock - receiver clock = -2 s)
    const offset = 2_000_000;
    for (let i = 0; i < 90; i++) {
      const lat = 40_000 + (i % 30) * 1000;
      s.onFrameDecoded(i, t - offset - lat, t, -offset);
      if (i === 45) s.onFramesDropped(2, t);
      t = t0 + Math.round((i + 1) * F);
    }
    const snap = s.snapshot(t);
    expect(snap.decodedFps).toBeCloseTo(30, 1);
    expect(snap.series.map((x) => x.fps)).toEqual([30, 30, 30]);
    expect(snap.series[1].framesDropped).toBe(2);
    expect(snap.framesDropped).toBe(2);
    expect(snap.fpsLastSecond).toBe(30);
    expect(snap.latency.count).toBe(90);
    expect(snap.latency.minMs).toBeCloseTo(40, 6);
    expect(snap.latency.maxMs).toBeCloseTo(69, 6);
    expect(snap.latency.meanMs).toBeCloseTo(54.5, 6);
    expect(snap.latency.p50Ms).toBeCloseTo(54.5, 6);
    expect(snap.latency.p99Ms).toBeGreaterThan(68);
    expect(snap.series[0].meanLatencyMs).toBeCloseTo(54.5, 6);
    // a long silence adds empty seconds, bounded by maxSeriesSeconds
    const later = s.snapshot(t + 100e6);
    expect(later.series.length).toBe(5);
    expect(later.series.every((x) => x.fps === 0)).toBe(true);
    expect(later.series[4].tSec).toBeGreaterThan(100);
  });

  it('bounds the latency reservoir and ignores bad input', () => {
    const s = new StreamQoeStats({ latencyWindow: 10 });
    for (let i = 0; i < 100; i++) s.onFrameDecoded(i, 0, i * 1000 + 1000);
    s.onFrameDecoded(100, 0, NaN);
    s.onFrameDecoded(101, NaN, 200_000);
    s.onFrameDecoded(102, 0, 150_000); // decode time went backwards
    s.onFramesDropped(-3);
    s.onFramesDropped(1.5);
    const snap = s.snapshot(200_000);
    expect(snap.latency.count).toBe(101); // 100 + the backwards one (latency still defined)
    expect(snap.latency.p50Ms).toBeGreaterThan(90); // recent window only
    expect(snap.clockErrors).toBe(2);
    expect(snap.framesDropped).toBe(0);
    expect(() => new StreamQoeStats({ latencyWindow: 0 })).toThrow(RangeError);
  });
});

describe('StreamQoeStats goodput', () => {
  it('counts encoded bytes of decoded frames over the span from the first decode to now', () => {
    const s = new StreamQoeStats();
    for (let i = 0; i < 31; i++) s.onFrameDecoded(i, i * 33_333, 1_000_000 + i * 33_333, 0, 1250);
    const snap = s.snapshot(2_000_000);
    expect(snap.bytesDecoded).toBe(31 * 1250);
    // 31 x 1250 B x 8 over 1 s (first decode at 1 s, now 2 s).
    expect(snap.goodputBps).toBeCloseTo(310_000, 0);
    expect(new StreamQoeStats().snapshot(0).goodputBps).toBeUndefined();
  });
});
