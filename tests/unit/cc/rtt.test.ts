import { describe, expect, it } from 'vitest';
import { RttEstimator, rttFromReport } from '../../../src/cc/rtt.js';

describe('rttFromReport', () => {
  it('removes the receiver hold time: rtt = now - send - (reportTime - arrival)', () => {
    const off = 5e12; // receiver clock offset: irrelevant
    // sent at 800 ms, arrived 850 ms (sender time), report 20 ms later, back at 1000 ms.
    expect(rttFromReport(1_000_000, 800_000, off + 850_000, off + 870_000)).toBe(180_000);
  });

  it('rejects a negative hold time, a non-positive or absurd RTT, NaN', () => {
    expect(rttFromReport(1_000_000, 800_000, 900_000, 850_000)).toBeUndefined();
    expect(rttFromReport(1_000_000, 1_100_000, 0, 0)).toBeUndefined();
    expect(rttFromReport(100_000_000, 0, 0, 0)).toBeUndefined();
    expect(rttFromReport(Number.NaN, 0, 0, 0)).toBeUndefined();
  });
});

describe('RttEstimator (RFC 6298 §2)', () => {
  it('SRTT: first sample, then 7/8 SRTT + 1/8 R', () => {
    const r = new RttEstimator();
    expect(r.hasSample()).toBe(false);
    expect(r.srttMs()).toBe(200); // initial
    r.onSample(100_000, 0);
    expect(r.srttMs()).toBe(100);
    expect(r.rttvarMs()).toBe(50);
    r.onSample(200_000, 1000);
    expect(r.srttMs()).toBe(112.5);
    expect(r.rttvarMs()).toBe(0.75 * 50 + 0.25 * 100);
    expect(r.latestRttMs()).toBe(200);
  });

  it('min RTT over a 10 s window', () => {
    const r = new RttEstimator();
    r.onSample(50_000, 0);
    for (let t = 1; t <= 9; t++) r.onSample(80_000 + t * 1000, t * 1_000_000);
    expect(r.minRttMs()).toBe(50);
    r.onSample(120_000, 10_500_000); // the 50 ms sample is now older than 10 s
    expect(r.minRttMs()).toBe(81);
    expect(r.minRttMs(30_000_000)).toBe(120); // all expired but the newest
  });

  it('ignores invalid samples and stays bounded', () => {
    const r = new RttEstimator({ maxSamples: 8 });
    expect(r.onSample(Number.NaN, 0)).toBe(false);
    expect(r.onSample(-1, 0)).toBe(false);
    expect(r.onSample(61_000_000, 0)).toBe(false);
    for (let i = 0; i < 100; i++) r.onSample(1000 + i, i); // increasing: deque would grow
    expect(r.minRttMs()).toBeGreaterThanOrEqual(1);
    expect(Number.isFinite(r.srttMs())).toBe(true);
  });
});
