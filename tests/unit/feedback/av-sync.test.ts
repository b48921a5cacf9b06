/**
 * Lip-sync controller (src/feedback/av-sync.ts) on a virtual clock, in a
 * closed loop: each stream's playout delay is its base delay (network +
 * jitter buffer) plus the extra delay the controller asked for, which the
 * receiver reaches gradually (audio by one stretched 20 ms frame per 80 ms,
 * i.e. 250 ms/s; video at the playout timing's 100 ms/s), plus noise.
 */
import { describe, expect, it } from 'vitest';
import { AvSync, type AvSyncOptions } from '../../../src/feedback/av-sync.js';

/** Deterministic noise in [-1, 1). */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 31 - 1;
  };
}

interface Loop {
  sync: AvSync;
  /** Run `s` seconds; `base(tS)` gives the base delays (ms) at time tS. */
  run(s: number, base: (tS: number) => { audio: number; video: number }): void;
  /** |video - audio| playout offset (ms) at each 100 ms of the last run, as played (applied extras, no noise). */
  offsets: number[];
  /** Every extra-delay pair the controller returned that differed from the one before. */
  changes: Array<{ audio: number; video: number }>;
  applied: { audio: number; video: number };
}

function loop(opts: AvSyncOptions = {}, noiseMs = 8, seed = 1): Loop {
  const sync = new AvSync(opts);
  const rnd = lcg(seed);
  const applied = { audio: 0, video: 0 };
  const changes: Loop['changes'] = [];
  let t = 0; // µs
  let last = { audio: 0, video: 0 };
  const l: Loop = {
    sync,
    offsets: [],
    changes,
    applied,
    run(s, base) {
      l.offsets = [];
      const end = t + s * 1e6;
      for (; t < end; t += 10_000) {
        const tS = t / 1e6;
        const b = base(tS);
        const want = sync.update(t);
        if (want.audioExtraDelayMs !== last.audio || want.videoExtraDelayMs !== last.video) {
          last = { audio: want.audioExtraDelayMs, video: want.videoExtraDelayMs };
          changes.push(last);
        }
        // The receiver moves toward what was asked: audio 2.5 ms per 10 ms, video 1 ms per 10 ms.
        applied.audio += Math.max(-2.5, Math.min(2.5, want.audioExtraDelayMs - applied.audio));
        applied.video += Math.max(-1, Math.min(1, want.videoExtraDelayMs - applied.video));
        const audio = b.audio + applied.audio;
        const video = b.video + applied.video;
        if (t % 20_000 === 0) sync.onAudioDelay(audio + noiseMs * rnd(), t);
        if (t % 30_000 === 0) sync.onVideoDelay(video + noiseMs * 2 * rnd(), t);
        if (t % 100_000 === 0) l.offsets.push(video - audio);
      }
    },
  };
  return l;
}

describe('AvSync', () => {
  it('video 120 ms behind audio: delays the audio until the offset is within the dead band, never the video', () => {
    const l = loop();
    l.run(20, () => ({ audio: 60, video: 180 }));
    const lastOffsets = l.offsets.slice(-50); // the last 5 s
    expect(Math.max(...lastOffsets.map(Math.abs))).toBeLessThanOrEqual(45);
    expect(l.applied.video).toBe(0);
    expect(l.sync.stats().videoExtraDelayMs).toBe(0);
    // About the 120 ms it lacked (to within the dead band).
    expect(l.sync.stats().audioExtraDelayMs).toBeGreaterThan(120 - 45);
    expect(l.sync.stats().audioExtraDelayMs).toBeLessThan(120 + 45);
  });

  it('audio 100 ms behind video: delays the video, never the audio', () => {
    const l = loop();
    l.run(20, () => ({ audio: 250, video: 150 }));
    expect(Math.max(...l.offsets.slice(-50).map(Math.abs))).toBeLessThanOrEqual(45);
    expect(l.sync.stats().audioExtraDelayMs).toBe(0);
    expect(l.sync.stats().videoExtraDelayMs).toBeGreaterThan(100 - 45);
  });

  it('moves in steps of at most maxChangeMs per interval, at most once per interval', () => {
    const l = loop({ maxChangeMs: 80, intervalMs: 1000 });
    l.run(10, () => ({ audio: 0, video: 400 }));
    let prev = { audio: 0, video: 0 };
    for (const c of l.changes) {
      expect(Math.abs(c.audio - prev.audio)).toBeLessThanOrEqual(80);
      prev = c;
    }
    // 10 s, one update per second: at most 10 changes.
    expect(l.changes.length).toBeLessThanOrEqual(10);
    expect(l.sync.stats().adjustments).toBe(l.changes.length);
  });

  it('an offset inside the dead band changes nothing', () => {
    const l = loop({}, 5);
    l.run(20, () => ({ audio: 100, video: 120 }));
    expect(l.changes).toEqual([]);
    expect(l.sync.stats().adjustments).toBe(0);
    expect(l.sync.stats().offsetMs).toBeGreaterThan(0);
  });

  it('when the offset reverses, takes back the extra delay of the stream that has it before delaying the other', () => {
    const l = loop();
    l.run(20, () => ({ audio: 60, video: 180 })); // audio gets ~120 ms
    const audioExtra = l.sync.stats().audioExtraDelayMs;
    expect(audioExtra).toBeGreaterThan(60);
    l.run(30, () => ({ audio: 60, video: 20 })); // the video now comes 40 ms before the audio even without extra
    // First the audio extra goes (all of it), then the video gets some: never both at once.
    let sawAudioZero = false;
    for (const c of l.changes) {
      expect(c.audio === 0 || c.video === 0).toBe(true);
      if (c.audio === 0) sawAudioZero = true;
      if (c.video > 0) expect(sawAudioZero).toBe(true);
    }
    expect(l.sync.stats().audioExtraDelayMs).toBe(0);
    expect(Math.max(...l.offsets.slice(-50).map(Math.abs))).toBeLessThanOrEqual(45);
  });

  it('caps the extra delay at maxExtraDelayMs', () => {
    const l = loop({ maxExtraDelayMs: 150 });
    l.run(30, () => ({ audio: 0, video: 600 }));
    expect(l.sync.stats().audioExtraDelayMs).toBe(150);
  });

  it('a stream that stops releases the extra delay of the other', () => {
    const sync = new AvSync({ staleMs: 3000 });
    let t = 0;
    for (; t < 10e6; t += 20_000) {
      sync.onAudioDelay(50, t);
      sync.onVideoDelay(250, t);
      sync.update(t);
    }
    expect(sync.stats().audioExtraDelayMs).toBeGreaterThan(0);
    // The video stops (camera off); the audio goes on.
    for (; t < 16e6; t += 20_000) {
      sync.onAudioDelay(50, t);
      sync.update(t);
    }
    expect(sync.stats().audioExtraDelayMs).toBe(0);
  });

  it('canDelayVideo false: audio later than video is left alone (no wind-up)', () => {
    const l = loop({ canDelayVideo: false });
    l.run(20, () => ({ audio: 250, video: 100 }));
    expect(l.sync.stats()).toMatchObject({ audioExtraDelayMs: 0, videoExtraDelayMs: 0 });
  });

  it('ignores non-finite samples and rejects bad options', () => {
    const sync = new AvSync();
    sync.onAudioDelay(Number.NaN, 0);
    sync.onVideoDelay(Number.POSITIVE_INFINITY, 0);
    expect(sync.nextUpdateUs()).toBeUndefined();
    expect(() => new AvSync({ intervalMs: 0 })).toThrow(RangeError);
    expect(() => new AvSync({ filterLength: 0.5 })).toThrow(RangeError);
    expect(() => new AvSync({ maxChangeMs: Number.NaN })).toThrow(RangeError);
    expect(() => new AvSync({ minDeltaMs: -1 })).toThrow(RangeError);
  });
});
