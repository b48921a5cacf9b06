/**
 * Audio jitter buffer (src/audio/jitter-buffer.ts): in-order playout,
 * reordering, loss, duplicates, late packets, target delay adaptation and
 * acceleration, bounds.
 */
import { describe, expect, it } from 'vitest';
import { AudioJitterBuffer, type AudioJitterBufferOptions, type AudioPlayout } from '../../../src/audio/jitter-buffer.js';
import type { AudioMessage } from '../../../src/wire/types.js';

const F = 20_000; // frame duration (µs)

function frame(seq: number, captureUs = 1_000_000 + seq * F): AudioMessage {
  return { streamId: 0, seq: seq >>> 0, captureUs, durationUs: F, payload: new Uint8Array([seq & 0xff]) };
}

/**
 * Runs a stream of `n` frames captured every 20 ms whose one-way delay is
 * `delayMs(i)` (undefined = lost), pulling every 20 ms; returns the pulls.
 */
function run(n: number, delayMs: (i: number) => number | number[] | undefined, opts: AudioJitterBufferOptions = {}, extraPulls = 20): { jb: AudioJitterBuffer; out: AudioPlayout[]; played: number[] } {
  const jb = new AudioJitterBuffer(opts);
  const arrivals: Array<{ at: number; seq: number }> = [];
  for (let i = 0; i < n; i++) {
    const d = delayMs(i);
    if (d === undefined) continue;
    for (const x of Array.isArray(d) ? d : [d]) arrivals.push({ at: 1_000_000 + i * F + x * 1000, seq: i });
  }
  arrivals.sort((a, b) => a.at - b.at);
  const out: AudioPlayout[] = [];
  const played: number[] = [];
  let k = 0;
  // Pulls at 1 ms past each 20 ms boundary, from the first capture time.
  for (let t = 1_000_000 + 1000; t < 1_000_000 + (n + extraPulls) * F; t += F) {
    while (k < arrivals.length && arrivals[k].at <= t) jb.insert(frame(arrivals[k].seq), arrivals[k++].at);
    const p = jb.pull(t);
    out.push(p);
    if (p.kind === 'frame') played.push(p.frame.seq);
    // The stream ends with its last frame: later pulls would conceal the silence after it.
    if (p.kind === 'frame' && p.frame.seq === n - 1) break;
  }
  return { jb, out, played };
}

describe('AudioJitterBuffer', () => {
  it('plays an in-order stream with constant delay in order, without concealment, at the minimum target', () => {
    const { jb, played } = run(100, () => 30, { startDelayMs: 20 });
    expect(played).toEqual([...Array(100).keys()]);
    const s = jb.stats();
    expect(s.concealedSamples).toBe(0);
    expect(s.packetsReceived).toBe(100);
    expect(s.packetsLost).toBe(0);
    expect(s.totalSamplesReceived).toBe(100 * 960);
    expect(s.targetDelayMs).toBe(20);
  });

  it('reorders: a frame that arrives after its successor but before its slot plays in order', () => {
    // frame 10 takes 15 ms longer than the others (arrives after 11)
    const { jb, played } = run(60, (i) => (i === 10 ? 45 : 30), { minDelayMs: 40, startDelayMs: 40 });
    expect(played).toEqual([...Array(60).keys()]);
    expect(jb.stats().concealedSamples).toBe(0);
    expect(jb.stats().latePackets).toBe(0);
  });

  it('conceals a lost frame once, skips it, and counts it lost', () => {
    const { jb, out, played } = run(60, (i) => (i === 20 ? undefined : 30), { startDelayMs: 20 });
    expect(played).toEqual([...Array(60).keys()].filter((i) => i !== 20));
    const s = jb.stats();
    expect(s.packetsLost).toBe(1);
    expect(s.concealedSamples).toBe(960);
    expect(s.concealmentEvents).toBe(1);
    expect(s.concealedPct).toBeCloseTo(100 / 60, 5);
    expect(out.filter((p) => p.kind === 'concealed' && p.lost)).toHaveLength(1);
  });

  it('drops duplicates by sequence number (a copy on a second path)', () => {
    const { jb, played } = run(50, (i) => (i % 2 === 0 ? [30, 35] : [30]), { startDelayMs: 20 });
    expect(played).toEqual([...Array(50).keys()]);
    const s = jb.stats();
    expect(s.duplicates).toBe(25);
    expect(s.packetsReceived).toBe(50);
    expect(s.concealedSamples).toBe(0);
  });

  it('counts a frame that arrives after its slot was given up as late, and does not play it', () => {
    // steady 30 ms; frame 30 takes 400 ms (beyond the 200 ms bound) while its successors arrive
    const { jb, played } = run(80, (i) => (i === 30 ? 400 : 30));
    expect(played).not.toContain(30);
    const s = jb.stats();
    expect(s.latePackets).toBe(1);
    expect(s.packetsLost).toBe(0); // it did arrive
    expect(s.concealedSamples).toBeGreaterThan(0);
  });

  it('plays a stream whose capture times jumped ahead of its seqs once its frames come, instead of dropping every later frame as late', () => {
    // 20 ms transit. The sender missed 400 ms of input after frame 9: frame 10 onwards is captured 400 ms
    // later than 20 ms per seq says. While the stream is silent the playout point gives up slots on
    // capture times extrapolated from frame 9; by the time frame 10 comes it is ~10 slots ahead.
    const jb = new AudioJitterBuffer();
    const cap = (i: number) => 1_000_000 + i * F + (i >= 10 ? 400_000 : 0);
    const played: number[] = [];
    let k = 0;
    for (let t = 1_001_000; t < 4_000_000; t += F) {
      while (cap(k) + 20_000 <= t) {
        jb.insert(frame(k, cap(k)), cap(k) + 20_000);
        k++;
      }
      const p = jb.pull(t);
      if (p.kind === 'frame') played.push(p.frame.seq);
    }
    // Frames 10 onwards (~130 sent) play from the first one that came after the gap.
    const after = played.filter((s) => s >= 10);
    expect(after.length).toBeGreaterThan(k - 10 - 10);
    expect(after[0]).toBeLessThanOrEqual(11);
    const s = jb.stats();
    expect(s.rewinds).toBeGreaterThanOrEqual(1);
    expect(s.latePackets).toBeLessThanOrEqual(2);
  });

  it('raises the target delay with arrival jitter and keeps it within [min, max]', () => {
    // delays alternate 20 and 100 ms: p95 of relative delay = 80 ms
    const jittery = run(200, (i) => (i % 3 === 0 ? 100 : 20));
    expect(jittery.jb.stats().targetDelayMs).toBeGreaterThanOrEqual(70);
    expect(jittery.jb.stats().targetDelayMs).toBeLessThanOrEqual(200);
    // after the first frames the adaptive buffer stops concealing
    const late = jittery.out.slice(60).filter((p) => p.kind === 'concealed');
    expect(late.length).toBe(0);
    const huge = run(200, (i) => (i % 3 === 0 ? 900 : 20));
    expect(huge.jb.stats().targetDelayMs).toBe(200);
  });

  it('grows the playout delay when the whole stream is delayed (expand), then accelerates back', () => {
    // a 120 ms delay spike for frames 50-59 (every frame late), then back to 20 ms
    const { jb, out, played } = run(300, (i) => (i >= 50 && i < 60 ? 140 : 20), { windowPackets: 50 });
    const s = jb.stats();
    // the spike frames are played (the buffer waits for them), not all lost
    for (let i = 50; i < 60; i++) expect(played).toContain(i);
    expect(s.concealedSamples).toBeGreaterThan(0);
    expect(s.removedSamplesForAcceleration).toBeGreaterThan(0);
    // in the end the delay is back down: the last frames play within one frame of their target
    const lastFrames = out.slice(-40, -25).filter((p) => p.kind === 'frame');
    expect(lastFrames.length).toBeGreaterThan(10);
    expect(s.bufferedPackets).toBeLessThanOrEqual(50);
  });

  it('starts at the 80 ms start delay, then lowers the target to what the jitter needs by dropping frames', () => {
    const { jb, out } = run(200, () => 30);
    const s = jb.stats();
    expect(s.targetDelayMs).toBe(20);
    expect(s.concealedSamples).toBe(0);
    // about (80 - 20) / 20 = 3 frames removed to bring the delay down
    expect(s.removedSamplesForAcceleration / 960).toBeGreaterThanOrEqual(2);
    expect(s.removedSamplesForAcceleration / 960).toBeLessThanOrEqual(4);
    expect(out.filter((p) => p.kind === 'frame' && p.skipped.length > 0).length).toBe(s.removedSamplesForAcceleration / 960);
  });

  it('keeps at most maxPackets frames and resyncs on a sender restart', () => {
    const jb = new AudioJitterBuffer({ maxPackets: 8 });
    for (let i = 0; i < 20; i++) jb.insert(frame(i), 1_000_000 + i * F);
    expect(jb.stats().bufferedPackets).toBe(8);
    expect(jb.stats().bufferOverflows).toBe(12);
    // start playing, then a restart far back in seq space
    let t = 1_000_000 + 21 * F;
    for (let k = 0; k < 3; k++, t += F) jb.pull(t);
    expect(jb.playing).toBe(true);
    expect(jb.insert(frame(5000, t), t)).toBe('resync');
    expect(jb.stats().resyncs).toBe(1);
    expect(jb.playing).toBe(false);
  });

  it('handles sequence number wrap-around', () => {
    const jb = new AudioJitterBuffer();
    const seqs = [0xfffffffe, 0xffffffff, 0, 1, 2];
    for (const [i, s] of seqs.entries()) jb.insert(frame(s, 1_000_000 + i * F), 1_000_000 + i * F + 30_000);
    const got: number[] = [];
    for (let t = 1_000_000 + 60_000; t < 1_000_000 + 10 * F + 60_000; t += F) {
      const p = jb.pull(t);
      if (p.kind === 'frame') got.push(p.frame.seq);
    }
    expect(got).toEqual(seqs);
    expect(jb.stats().packetsLost).toBe(0);
  });

  it('rejects invalid options', () => {
    expect(() => new AudioJitterBuffer({ minDelayMs: 100, maxDelayMs: 50 })).toThrow(RangeError);
    expect(() => new AudioJitterBuffer({ maxPackets: 0 })).toThrow(RangeError);
    expect(() => new AudioJitterBuffer({ percentile: 101 })).toThrow(RangeError);
  });
});

describe('AudioJitterBuffer extra delay (A/V sync) and deceleration', () => {
  /** Playout lag (ms, pull time - capture) of each played frame, with a constant 30 ms network delay; `extraAt(i)` sets the extra delay before pull i. */
  function lags(n: number, extraAt: (pull: number) => number | undefined, opts: AudioJitterBufferOptions = {}) {
    const jb = new AudioJitterBuffer({ startDelayMs: 20, minDelayMs: 20, ...opts });
    const out: Array<{ pull: number; p: AudioPlayout; lagMs?: number }> = [];
    let next = 0;
    for (let i = 0; i < n; i++) {
      const t = 1_000_000 + i * F + 1000;
      while (next < n && 1_000_000 + next * F + 30_000 <= t) jb.insert(frame(next), 1_000_000 + next++ * F + 30_000);
      const x = extraAt(i);
      if (x !== undefined) jb.setExtraDelayMs(x);
      const p = jb.pull(t);
      out.push({ pull: i, p, ...(p.kind === 'frame' ? { lagMs: (t - p.frame.captureUs) / 1000 } : {}) });
    }
    return { jb, out };
  }

  it('an extra delay moves the playout point later by stretching one frame interval at a time, without concealment or loss, and back by acceleration', () => {
    const { jb, out } = lags(400, (i) => (i === 100 ? 100 : i === 250 ? 0 : undefined));
    const lagAt = (from: number, to: number) => out.filter((o) => o.pull >= from && o.pull < to && o.lagMs !== undefined).map((o) => o.lagMs!);
    const before = lagAt(60, 100);
    const during = lagAt(200, 250);
    const after = lagAt(360, 400);
    // Steady: network 30 ms + target 20 ms; with 100 ms extra, 100 ms later (within a frame); back again after.
    expect(Math.max(...before) - Math.min(...before)).toBeLessThanOrEqual(1);
    expect(Math.min(...during) - Math.max(...before)).toBeGreaterThanOrEqual(100 - 20);
    expect(Math.max(...during) - Math.max(...before)).toBeLessThanOrEqual(100 + 20);
    expect(Math.abs(Math.max(...after) - Math.max(...before))).toBeLessThanOrEqual(20);
    const s = jb.stats();
    expect(s.concealedSamples).toBe(0);
    expect(s.packetsLost).toBe(0);
    // 100 ms is 5 frames; the playout point stops within a frame of its target (either side), so 4 or 5 stretched in, as many accelerated out.
    const stretched = out.filter((o) => o.p.kind === 'stretch').length;
    expect(stretched).toBeGreaterThanOrEqual(4);
    expect(stretched).toBeLessThanOrEqual(5);
    expect(s.insertedSamplesForDeceleration).toBe(stretched * 960);
    expect(Math.abs(s.removedSamplesForAcceleration - s.insertedSamplesForDeceleration)).toBeLessThanOrEqual(960);
    // Every frame played once, in order.
    const played = out.flatMap((o) => (o.p.kind === 'frame' ? [...o.p.skipped.map((f) => f.seq), o.p.frame.seq] : []));
    expect(played).toEqual([...Array(played.length).keys()]);
    expect(s.extraDelayMs).toBe(0);
  });

  it('stretches at most one frame per accelerateEveryFrames pulls', () => {
    const { out } = lags(200, (i) => (i === 50 ? 200 : undefined), { accelerateEveryFrames: 5 });
    const stretches = out.filter((o) => o.p.kind === 'stretch').map((o) => o.pull);
    expect(stretches.length).toBeGreaterThanOrEqual(9); // 200 ms, to within a frame
    expect(stretches.length).toBeLessThanOrEqual(10);
    for (let k = 1; k < stretches.length; k++) expect(stretches[k] - stretches[k - 1]).toBeGreaterThanOrEqual(5);
  });

  it('decelerate: false keeps the old behaviour (no stretch: the delay grows only through late frames)', () => {
    const { jb, out } = lags(200, (i) => (i === 50 ? 100 : undefined), { decelerate: false });
    expect(out.filter((o) => o.p.kind === 'stretch')).toHaveLength(0);
    expect(jb.stats().insertedSamplesForDeceleration).toBe(0);
  });

  it('rejects a negative or non-finite extra delay', () => {
    const jb = new AudioJitterBuffer();
    expect(() => jb.setExtraDelayMs(-1)).toThrow(RangeError);
    expect(() => jb.setExtraDelayMs(Number.NaN)).toThrow(RangeError);
  });
});
