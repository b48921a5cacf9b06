import { describe, expect, it } from 'vitest';
import { PlayoutTiming } from '../../../src/feedback/playout.js';

const MS = 1000;

describe('PlayoutTiming', () => {
  it('plays at once when off (maxDelayMs 0) or before the first frame', () => {
    expect(new PlayoutTiming().playoutTimeUs(0)).toBe(-Infinity);
    const off = new PlayoutTiming({ maxDelayMs: 0 });
    off.onFrameComplete(0, 50 * MS);
    off.update(50 * MS, 80, 100);
    expect(off.enabled).toBe(false);
    expect(off.playoutTimeUs(33 * MS)).toBe(-Infinity);
  });

  it('schedules from the lowest arrival offset of the window plus the current delay', () => {
    const p = new PlayoutTiming({ renderDelayMs: 0 });
    p.onFrameComplete(0, 80 * MS); // offset 80 ms
    p.onFrameComplete(33 * MS, 83 * MS); // offset 50 ms: the new minimum
    p.onFrameComplete(66 * MS, 186 * MS); // offset 120 ms (late frame)
    expect(p.playoutTimeUs(100 * MS)).toBe(150 * MS); // current delay still 0
  });

  it('moves the current delay toward jitter + render delay at most 100 ms per second', () => {
    const p = new PlayoutTiming();
    p.onFrameComplete(0, 0);
    p.update(0, 90, 100);
    expect(p.stats().targetDelayMs).toBe(100); // 90 jitter + 10 render, no NACK term by default
    p.update(500 * MS, 90, 100);
    expect(p.stats().currentDelayMs).toBeCloseTo(50, 5);
    p.update(2000 * MS, 90, 100);
    expect(p.stats().currentDelayMs).toBe(100);
    p.update(2100 * MS, 0, 100); // jitter gone: down by 10 ms in 100 ms
    expect(p.stats().currentDelayMs).toBeCloseTo(90, 5);
  });

  it('adds one RTT while NACKs are recent when the NACK term is on, and respects the bounds', () => {
    const p = new PlayoutTiming({ nackHoldMs: 1000, maxDelayMs: 150, minDelayMs: 20 });
    p.update(0, 0, 100);
    expect(p.stats().targetDelayMs).toBe(20); // 10 render delay, raised to the minimum
    p.onNackSent(0);
    p.update(500 * MS, 30, 100);
    expect(p.stats().targetDelayMs).toBe(140);
    p.update(1000 * MS, 90, 100);
    expect(p.stats().targetDelayMs).toBe(150); // capped
    p.update(1600 * MS, 30, 100); // NACK 1.6 s ago: term off
    expect(p.stats().targetDelayMs).toBe(40);
  });

  it('adds one RTT only while NACK recoveries are steady (nackSteadyBins), and drops it when they stop', () => {
    const p = new PlayoutTiming({ nackSteadyBins: 5, nackSteadyWindowS: 10, maxChangeMsPerS: 1000 });
    // A burst: many recoveries within one second fill one bin only.
    for (let t = 0; t < 900; t += 30) p.onNackRecovered(t * MS);
    p.update(1000 * MS, 20, 200);
    expect(p.nackSteady(1000 * MS)).toBe(false);
    expect(p.stats().targetDelayMs).toBe(30); // jitter 20 + render 10
    // One recovery a second (random loss): on from the fifth second.
    for (let s = 1; s <= 3; s++) p.onNackRecovered(s * 1000 * MS + 500 * MS);
    p.update(4000 * MS, 20, 200);
    expect(p.stats().targetDelayMs).toBe(30);
    p.onNackRecovered(4500 * MS);
    p.update(4600 * MS, 20, 200);
    expect(p.nackSteady(4600 * MS)).toBe(true);
    expect(p.stats().targetDelayMs).toBe(230);
    // Recoveries stop: the window empties and the term goes.
    p.update(9500 * MS, 20, 200);
    expect(p.stats().targetDelayMs).toBe(230);
    p.update(15_000 * MS, 20, 200);
    expect(p.nackSteady(15_000 * MS)).toBe(false);
    expect(p.stats().targetDelayMs).toBe(30);
  });

  it('leaves the steady NACK term out while the RTT stands above its recent minimum (congestion loss)', () => {
    const p = new PlayoutTiming({ nackSteadyBins: 3, nackSteadyMaxQueueMs: 50 });
    for (let s = 0; s < 5; s++) p.onNackRecovered((s * 1000 + 500) * MS);
    p.update(1000 * MS, 20, 100); // base RTT 100 ms
    p.update(5000 * MS, 20, 300); // a queue: RTT 300 ms
    expect(p.nackSteady(5000 * MS)).toBe(true);
    expect(p.baseRttMs()).toBe(100);
    expect(p.stats().targetDelayMs).toBe(30);
    p.update(5100 * MS, 20, 140); // the queue drained
    expect(p.stats().targetDelayMs).toBe(170);
    // 30 s later the old minimum is forgotten: a path whose RTT grew for good gets the term.
    for (let s = 6; s < 40; s++) p.onNackRecovered(s * 1000 * MS);
    for (let s = 6; s <= 40; s++) p.update(s * 1000 * MS, 20, 300);
    expect(p.baseRttMs()).toBe(300);
    expect(p.stats().targetDelayMs).toBe(330);
  });

  it('learns no base RTT from an unmeasured default (pathRttMs NaN), so a long real RTT gets the steady term', () => {
    const p = new PlayoutTiming({ nackSteadyBins: 3, nackSteadyMaxQueueMs: 50 });
    for (let s = 0; s < 5; s++) p.onNackRecovered((s * 1000 + 500) * MS);
    p.update(500 * MS, 20, 100, Number.NaN); // the receiver's default RTT, nothing measured yet
    expect(p.baseRttMs()).toBe(Number.POSITIVE_INFINITY);
    p.update(5000 * MS, 20, 205, 200); // measured: 200 ms paths
    expect(p.baseRttMs()).toBe(200);
    expect(p.stats().targetDelayMs).toBe(235);
    // The old behaviour, a default learned as the base, would hold the term off (RTT 205 > 100 + 50).
    const q = new PlayoutTiming({ nackSteadyBins: 3, nackSteadyMaxQueueMs: 50 });
    for (let s = 0; s < 5; s++) q.onNackRecovered((s * 1000 + 500) * MS);
    q.update(500 * MS, 20, 100, 100);
    q.update(5000 * MS, 20, 205, 200);
    expect(q.stats().targetDelayMs).toBe(30);
  });

  it('forgets offsets older than the window, so a slower path change moves the schedule', () => {
    const p = new PlayoutTiming({ offsetWindowMs: 1000, renderDelayMs: 0 });
    p.onFrameComplete(0, 20 * MS);
    for (let t = 100; t <= 3000; t += 100) p.onFrameComplete(t * MS, (t + 70) * MS);
    expect(p.playoutTimeUs(3100 * MS)).toBe(3170 * MS);
  });

  it('rejects bad options', () => {
    expect(() => new PlayoutTiming({ maxDelayMs: -1 })).toThrow(RangeError);
    expect(() => new PlayoutTiming({ minDelayMs: 500, maxDelayMs: 100 })).toThrow(RangeError);
    expect(() => new PlayoutTiming({ renderDelayMs: Number.NaN })).toThrow(RangeError);
    expect(() => new PlayoutTiming({ nackSteadyWindowS: 0 })).toThrow(RangeError);
    expect(() => new PlayoutTiming({ nackSteadyWindowS: 2.5 })).toThrow(RangeError);
  });
});
