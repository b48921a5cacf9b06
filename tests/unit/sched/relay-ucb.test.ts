import { describe, expect, it } from 'vitest';
import { RelayUcbError, RelayUcbSelector } from '../../../src/sched/relay-ucb.js';

describe('RelayUcbSelector (Zhang & Lei §3.2, Eq. 11-13, Alg. 2-4)', () => {
  it('tries every arm once first, in order', () => {
    const s = new RelayUcbSelector([3]);
    expect(s.decide(0)).toEqual([0]);
    s.onBandwidthSample(0, 0, 1e6, 1000);
    expect(s.decide(1000)).toEqual([1]);
    s.onBandwidthSample(0, 1, 3e6, 2000);
    expect(s.decide(2000)).toEqual([2]);
  });

  it('computes the Eq. 13 index: smoothed bw + Bw * sqrt(2 log(C T) / N)', () => {
    const s = new RelayUcbSelector([2, 2]);
    s.onBandwidthSample(0, 0, 2e6, 0);
    s.onBandwidthSample(0, 0, 1e6, 100);
    const a = s.arm(0, 0);
    // Eq. 11 with alpha 0.9: 0.1 * 2e6 + 0.9 * 1e6; Bw = max over 10 s = 2e6; N = 1, T = 1, C = 2.
    expect(a?.bwHat).toBeCloseTo(1.1e6, 0);
    expect(s.index(0, 0)).toBeCloseTo(1.1e6 + 2e6 * Math.sqrt((2 * Math.log(2)) / 1), 0);
    expect(s.index(0, 1)).toBe(Number.POSITIVE_INFINITY);
  });

  it('discounts: the mean follows recent samples, the window max expires after 10 s', () => {
    const s = new RelayUcbSelector([1]);
    s.onBandwidthSample(0, 0, 4e6, 0);
    for (let t = 1; t <= 12; t++) s.onBandwidthSample(0, 0, 1e6, t * 1000);
    expect(s.arm(0, 0)?.bwHat).toBeCloseTo(1e6, -3);
    expect(s.arm(0, 0)?.bwMax).toBe(1e6); // the 4 Mbps sample left the window
    expect(s.arm(0, 0)?.maxEver).toBe(4e6);
  });

  it('an arm not observed for 10 s gets its all-time max as Bw (explore it again)', () => {
    const s = new RelayUcbSelector([2]);
    s.onBandwidthSample(0, 1, 3e6, 0);
    s.decide(20_000);
    expect(s.arm(0, 1)?.bwMax).toBe(3e6);
  });

  it('exploits the best arm and moves off it after it degrades', () => {
    const caps = [1e6, 4e6, 2.5e6];
    const s = new RelayUcbSelector([3]);
    let arm = 0;
    const on: number[] = [];
    for (let t = 0; t < 120; t++) {
      if (t === 60) caps[1] = 0.8e6;
      if (t > 0) s.onBandwidthSample(0, arm, caps[arm], t * 1000);
      arm = s.decide(t * 1000)[0];
      on.push(arm);
    }
    const frac = (from: number, to: number, a: number) => on.slice(from, to).filter((x) => x === a).length / (to - from);
    expect(frac(20, 60, 1)).toBeGreaterThan(0.7);
    expect(frac(70, 120, 2)).toBeGreaterThan(0.7);
    // Settles within 10 slots of the change.
    expect(on.slice(60, 70).includes(2)).toBe(true);
  });

  it('explorationScale scales the exploration term (Eq. 10 B): fewer pulls of a worse arm', () => {
    const pullsOfWorse = (explorationScale: number) => {
      const s = new RelayUcbSelector([2], { explorationScale });
      let arm = 0;
      let worse = 0;
      for (let t = 0; t < 60; t++) {
        if (t > 0) s.onBandwidthSample(0, arm, arm === 0 ? 3e6 : 2e6, t * 1000);
        arm = s.decide(t * 1000)[0];
        if (t >= 2 && arm === 1) worse++;
      }
      return worse;
    };
    const s = new RelayUcbSelector([1], { explorationScale: 0.5 });
    s.onBandwidthSample(0, 0, 2e6, 0);
    expect(s.index(0, 0)).toBeCloseTo(2e6 + 0.5 * 2e6 * Math.sqrt(2 * Math.log(1)), 0);
    // Eq. 12 as written (scale 1) keeps pulling the 2 Mbps arm now and then; scale 0 is greedy on Eq. 11's mean.
    expect(pullsOfWorse(1)).toBeGreaterThan(3);
    expect(pullsOfWorse(0.5)).toBeLessThan(pullsOfWorse(1));
    expect(pullsOfWorse(0)).toBe(0);
    expect(() => new RelayUcbSelector([2], { explorationScale: -1 })).toThrow(RelayUcbError);
    expect(() => new RelayUcbSelector([2], { explorationScale: Number.NaN })).toThrow(RelayUcbError);
  });

  it('probe samples (our addition): Alg. 2 on the sample, a pull for an arm not in use', () => {
    const s = new RelayUcbSelector([3]);
    expect(s.decide(0)).toEqual([0]);
    s.onProbeSample(0, 0, 1e6, 900); // the arm in use: decide() already counted its pull
    s.onProbeSample(0, 1, 4e6, 900);
    s.onProbeSample(0, 2, 2e6, 900);
    expect(s.arm(0, 0)).toMatchObject({ pulls: 2, samples: 1, probes: 1, bwHat: 1e6 });
    expect(s.arm(0, 1)).toMatchObject({ pulls: 2, samples: 1, probes: 1, bwHat: 4e6 });
    // Every arm measured: no arm is tried just because it was never pulled; the best one wins.
    expect(s.decide(1000)).toEqual([1]);
    s.onProbeSample(0, 1, Number.NaN, 1900);
    s.onProbeSample(0, 7, 1e6, 1900);
    expect(s.invalidSamples).toBe(2);
    expect(s.arm(0, 1)?.probes).toBe(1);
  });

  it('with every arm probed each slot, the media never visits a worse arm and leaves a degraded one at once', () => {
    const caps = [1e6, 4e6, 2.5e6];
    const s = new RelayUcbSelector([3]);
    let arm = s.decide(0)[0];
    const on: number[] = [];
    for (let t = 1; t < 120; t++) {
      if (t === 60) caps[1] = 0.8e6;
      for (let j = 0; j < 3; j++) {
        if (j === arm) s.onBandwidthSample(0, j, caps[j], t * 1000);
        else s.onProbeSample(0, j, caps[j], t * 1000);
      }
      arm = s.decide(t * 1000)[0];
      on.push(arm);
    }
    expect(on.slice(0, 59).every((a) => a === 1)).toBe(true);
    expect(on.slice(59, 119).every((a) => a === 2)).toBe(true);
  });

  it('switchMargin (our addition) keeps the arm in use unless another index beats it by the margin', () => {
    const run = (switchMargin: number) => {
      const s = new RelayUcbSelector([2], { switchMargin, explorationScale: 0 });
      s.decide(0);
      s.onBandwidthSample(0, 0, 2e6, 500);
      s.onProbeSample(0, 1, 2.2e6, 500); // 10 % better
      return s.decide(1000)[0];
    };
    expect(run(0)).toBe(1);
    expect(run(0.05)).toBe(1);
    expect(run(0.2)).toBe(0);
    expect(() => new RelayUcbSelector([2], { switchMargin: -0.1 })).toThrow(RelayUcbError);
    expect(() => new RelayUcbSelector([2], { switchMargin: Number.POSITIVE_INFINITY })).toThrow(RelayUcbError);
  });

  it('rejects bad layouts and counts bad samples', () => {
    expect(() => new RelayUcbSelector([])).toThrow(RelayUcbError);
    expect(() => new RelayUcbSelector([0])).toThrow(RelayUcbError);
    expect(() => new RelayUcbSelector([2], { alpha: 0 })).toThrow(RelayUcbError);
    const s = new RelayUcbSelector([2]);
    s.onBandwidthSample(0, 5, 1, 0);
    s.onBandwidthSample(3, 0, 1, 0);
    s.onBandwidthSample(0, 0, Number.NaN, 0);
    s.onBandwidthSample(0, 0, -1, 0);
    expect(s.invalidSamples).toBe(4);
  });
});
