import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { ClockSync } from '../../../src/feedback/clock-sync.js';

/**
 * One exchange between a local clock and a remote clock `offsetUs` ahead,
 * with legs of `upUs` (local -> remote) and `downUs` (remote -> local) and a
 * hold of `holdUs` at the remote. `atUs`: local send time.
 */
function exchange(cs: ClockSync, pathId: number, atUs: number, offsetUs: number, upUs: number, downUs: number, holdUs = 0): boolean {
  const t1 = atUs;
  const t2 = atUs + upUs + offsetUs;
  const t3 = t2 + holdUs;
  const t4 = t3 - offsetUs + downUs;
  return cs.addExchange(pathId, t1, t2, t3, t4);
}

describe('ClockSync (RFC 5905 §8 offset / RTT)', () => {
  it('is exact with symmetric legs, whatever the offset and hold', () => {
    for (const off of [3_468_000, -3_427_000, 0, 1]) {
      const cs = new ClockSync();
      expect(cs.offsetUs()).toBeUndefined();
      expect(exchange(cs, 0, 1_000_000, off, 20_000, 20_000, 7_000)).toBe(true);
      expect(cs.offsetUs()).toBe(off);
      expect(cs.rttMs(0)).toBe(40);
      expect(cs.stats().offsetErrorBoundMs).toBe(20);
    }
  });

  it('with asymmetric legs the error is half the asymmetry, within the RTT/2 bound', () => {
    const cs = new ClockSync();
    exchange(cs, 0, 1_000_000, 2_000_000, 50_000, 10_000);
    const err = cs.offsetUs()! - 2_000_000;
    expect(err).toBe(20_000); // (50 - 10) / 2 ms
    expect(Math.abs(err)).toBeLessThanOrEqual(cs.stats().offsetErrorBoundMs! * 1000);
  });

  it('selects the least-queued sample: queueing jitter on the legs does not move the estimate far', () => {
    const rng = new Rng(7);
    const cs = new ClockSync();
    const off = -3_427_000;
    let worst = 0;
    let worstRaw = 0;
    let sum = 0;
    for (let i = 0; i < 400; i++) {
      // 15 ms / 25 ms base legs plus 0-200 ms of one-sided queueing on either leg
      const q = rng.next() * 200_000;
      const up = 15_000 + (i % 2 === 0 ? q : 0);
      const down = 25_000 + (i % 2 === 1 ? q : 0);
      exchange(cs, i % 3, 1_000_000 + i * 100_000, off, up, down);
      worstRaw = Math.max(worstRaw, Math.abs((up - down) / 2));
      if (i >= 20) {
        worst = Math.max(worst, Math.abs(cs.offsetUs()! - off));
        sum += Math.abs(cs.offsetUs()! - off);
      }
    }
    // One raw sample can be off by up to 100 ms (half of 200 ms one-sided queueing);
    // the min-RTT pick over 16 samples keeps the estimate near the 5 ms base asymmetry.
    expect(worstRaw).toBeGreaterThan(80_000);
    expect(worst).toBeLessThan(30_000);
    expect(sum / 380).toBeLessThan(12_000);
    expect(cs.stats().samples).toBe(400);
    expect(cs.minRttMs()).toBeGreaterThan(40);
  });

  it('follows a clock that drifts (old samples age out of the selection)', () => {
    const cs = new ClockSync({ maxAgeMs: 5000 });
    // remote runs 100 ppm fast: +100 µs per second
    for (let i = 0; i < 600; i++) {
      const at = 1_000_000 + i * 200_000;
      exchange(cs, 0, at, 500_000 + Math.round(at * 1e-4), i === 0 ? 5_000 : 10_000, i === 0 ? 5_000 : 10_000);
    }
    const trueNow = 500_000 + Math.round((1_000_000 + 599 * 200_000) * 1e-4);
    expect(Math.abs(cs.offsetUs()! - trueNow)).toBeLessThan(1_000);
  });

  it('rejects impossible samples and keeps its estimate', () => {
    const cs = new ClockSync();
    exchange(cs, 0, 1_000_000, 1_000_000, 10_000, 10_000);
    const before = cs.offsetUs();
    expect(cs.addExchange(0, 2_000_000, 3_000_000, 3_000_000, 1_990_000)).toBe(false); // negative RTT
    expect(cs.addExchange(0, 2_000_000, 3_000_000, 2_999_000, 2_100_000)).toBe(false); // t3 before t2
    expect(cs.addExchange(0, 0, 0, 0, 60_000_000)).toBe(false); // RTT above maxRttMs
    expect(cs.addExchange(0, Number.NaN, 0, 0, 1)).toBe(false);
    expect(cs.offsetUs()).toBe(before);
    expect(cs.stats()).toMatchObject({ samples: 1, rejected: 4 });
  });

  it('validates its options', () => {
    expect(() => new ClockSync({ window: 0 })).toThrow(RangeError);
    expect(() => new ClockSync({ gain: 0 })).toThrow(RangeError);
    expect(() => new ClockSync({ maxAgeMs: -1 })).toThrow(RangeError);
  });
});
