import { describe, expect, it } from 'vitest';
import { AudioRateController, DEFAULT_AUDIO_STEPS } from '../../../src/engine/audio-rate.js';

const S = 1_000_000;

/** Updates every 100 ms from `fromS` to `toS` (inclusive) at `bps`, as a sender asks at each audio frame. */
function every(c: AudioRateController, fromS: number, toS: number, bps: number): void {
  for (let k = Math.round(fromS * 10); k <= Math.round(toS * 10); k++) c.update(k * 100_000, bps);
}

describe('AudioRateController', () => {
  it('keeps 32 kbps / 20 ms frames on a fast path and goes to 12 kbps / 60 ms on a 100 kbps one', () => {
    const c = new AudioRateController();
    expect(c.update(0, 2_000_000)).toEqual({ bitrateBps: 32_000, frameDurationUs: 20_000 });
    every(c, 0.1, 1.1, 100_000);
    expect(c.current).toEqual({ bitrateBps: 12_000, frameDurationUs: 60_000 });
  });

  it('prices a step with its packet overhead: a 20 ms frame costs three times the headers of a 60 ms one', () => {
    const c = new AudioRateController({ overheadBytes: 128 });
    expect(c.wireBps({ bitrateBps: 32_000, frameDurationUs: 20_000 })).toBeCloseTo(32_000 + 51_200);
    expect(c.wireBps({ bitrateBps: 12_000, frameDurationUs: 60_000 })).toBeCloseTo(12_000 + 17_067, 0);
  });

  it('steps down once the step in use has not fitted for downHoldMs, not on a shorter dip', () => {
    const c = new AudioRateController({ downHoldMs: 1000 });
    every(c, 0, 1, 2_000_000);
    every(c, 1.1, 1.9, 150_000); // a 0.9 s dip (an over-use back-off)
    every(c, 2, 3, 2_000_000);
    expect(c.current).toEqual(DEFAULT_AUDIO_STEPS[0]);
    every(c, 3.1, 4.0, 150_000);
    expect(c.current).toEqual(DEFAULT_AUDIO_STEPS[0]);
    every(c, 4.1, 4.1, 150_000);
    expect(c.current).toEqual(DEFAULT_AUDIO_STEPS[2]);
    expect(c.changes).toBe(1);
  });

  it('steps down at once with downHoldMs 0, and up only after the richer step has fitted for upHoldMs without a break', () => {
    const c = new AudioRateController({ upHoldMs: 5000, downHoldMs: 0 });
    c.update(0, 150_000);
    expect(c.current).toEqual(DEFAULT_AUDIO_STEPS[2]);
    // 400 kbps allows 24 kbps / 40 ms (wire ~49.6 kbps <= 15 %: 60 kbps), not 32 / 20 (~83 kbps).
    every(c, 0.1, 5.0, 400_000); // 4.9 s
    expect(c.current).toEqual(DEFAULT_AUDIO_STEPS[2]);
    c.update(5.05 * S, 150_000); // a dip restarts the hold
    every(c, 5.1, 10.0, 400_000);
    expect(c.current).toEqual(DEFAULT_AUDIO_STEPS[2]);
    every(c, 10.1, 10.2, 400_000);
    expect(c.current).toEqual(DEFAULT_AUDIO_STEPS[1]);
    // One step per hold: 32 kbps needs another 5 s at a rate that allows it.
    every(c, 10.3, 15.2, 5_000_000);
    expect(c.current).toEqual(DEFAULT_AUDIO_STEPS[1]);
    every(c, 15.3, 15.4, 5_000_000);
    expect(c.current).toEqual(DEFAULT_AUDIO_STEPS[0]);
    expect(c.changes).toBe(3);
  });

  it('leaves the encoding alone for a rate that says nothing (no usable path: 0, or not a number)', () => {
    const c = new AudioRateController({ downHoldMs: 0 });
    c.update(0, 2_000_000);
    for (const bad of [0, Number.NaN, -1, Number.POSITIVE_INFINITY]) expect(c.update(S, bad)).toEqual(DEFAULT_AUDIO_STEPS[0]);
    c.update(2 * S, 100_000);
    for (const bad of [0, Number.NaN]) expect(c.update(3 * S, bad)).toEqual(DEFAULT_AUDIO_STEPS[2]);
  });

  it('restarts the hold across an outage (no usable path) or a gap between updates', () => {
    const c = new AudioRateController({ upHoldMs: 5000, downHoldMs: 0 });
    c.update(0, 150_000);
    every(c, 1, 3, 400_000); // the hold for 24 kbps starts at 1 s
    c.update(3.1 * S, 0); // no usable path
    every(c, 3.2, 8.1, 400_000);
    expect(c.current).toEqual(DEFAULT_AUDIO_STEPS[2]);
    every(c, 8.2, 8.3, 400_000);
    expect(c.current).toEqual(DEFAULT_AUDIO_STEPS[1]);
    c.update(9 * S, 150_000);
    every(c, 9.1, 10, 5_000_000);
    every(c, 12, 15, 5_000_000); // 2 s without an update: the hold starts again at 12 s
    expect(c.current).toEqual(DEFAULT_AUDIO_STEPS[2]);
    every(c, 15.1, 17.1, 5_000_000);
    expect(c.current).toEqual(DEFAULT_AUDIO_STEPS[1]);
  });

  it('lets an audio-only call keep 32 kbps / 20 ms on what its application-limited paths estimate', () => {
    // Audio alone sends ~83 kbps; GCC then estimates at most 1.5 x that + 10 kbps (~135 kbps).
    const c = new AudioRateController({ downHoldMs: 0 });
    expect(c.update(0, 135_000, true)).toEqual(DEFAULT_AUDIO_STEPS[0]);
    expect(c.update(S, 135_000, false)).toEqual(DEFAULT_AUDIO_STEPS[2]);
  });

  it('rejects steps without a positive bitrate and duration or out of order, a share outside (0, 1], a hold that is not a number', () => {
    expect(() => new AudioRateController({ steps: [] })).toThrow(RangeError);
    expect(() => new AudioRateController({ steps: [{ bitrateBps: 0, frameDurationUs: 20_000 }] })).toThrow(RangeError);
    expect(() => new AudioRateController({ maxShare: 0 })).toThrow(RangeError);
    expect(() => new AudioRateController({ maxShare: 1.5 })).toThrow(RangeError);
    expect(() => new AudioRateController({ audioOnlyShare: 0 })).toThrow(RangeError);
    expect(() => new AudioRateController({ upHoldMs: Number.NaN })).toThrow(RangeError);
    expect(() => new AudioRateController({ downHoldMs: -1 })).toThrow(RangeError);
    expect(() => new AudioRateController({ steps: [...DEFAULT_AUDIO_STEPS].reverse() })).toThrow(RangeError);
  });
});
