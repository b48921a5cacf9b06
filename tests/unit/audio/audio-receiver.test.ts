/**
 * AudioReceiver's playout clock with frames of changing duration: a sender's
 * Opus encoder may go from 60 ms to 20 ms frames mid-call (src/engine/audio-rate.ts).
 * Each pull is due when what the previous one played has played, not one
 * interval of the newest frame that arrived.
 */
import { describe, expect, it } from 'vitest';
import { AudioReceiver } from '../../../src/audio/audio-receiver.js';
import type { AudioMessage } from '../../../src/wire/types.js';

function frame(seq: number, captureUs: number, durationUs: number): AudioMessage {
  return { streamId: 0, seq, captureUs, durationUs, payload: new Uint8Array(40) };
}

/** Frames given as durations (µs) back to back from capture 0, each arriving 50 ms after capture; polled every 5 ms. */
function play(durations: number[]) {
  const rx = new AudioReceiver();
  const frames: AudioMessage[] = [];
  let t = 0;
  durations.forEach((d, seq) => {
    frames.push(frame(seq, t, d));
    t += d;
  });
  const played: Array<{ kind: string; atUs: number; seq?: number; skipped?: number[] }> = [];
  let next = 0;
  for (let now = 0; now <= t + 400_000; now += 5_000) {
    while (next < frames.length && frames[next].captureUs + 50_000 <= now) rx.onPacket(frames[next++], now);
    for (const ev of rx.poll(now))
      played.push({ kind: ev.playout.kind, atUs: ev.atUs, ...(ev.playout.kind === 'frame' ? { seq: ev.playout.frame.seq, skipped: ev.playout.skipped.map((f) => f.seq) } : {}) });
  }
  // What played up to the last frame (past it the stream has ended and the buffer conceals).
  let last = played.length - 1;
  while (last >= 0 && played[last].kind !== 'frame') last--;
  return { played: played.slice(0, last + 1), stats: rx.stats() };
}

describe('AudioReceiver with frames of changing duration', () => {
  it('plays 60 ms frames then 20 ms frames without concealment, at a steady delay', () => {
    const { played, stats } = play([...Array(15).fill(60_000), ...Array(45).fill(20_000)]);
    // Every frame played, or dropped by the jitter buffer's acceleration (the delay it held for 60 ms frames is one frame too many at 20 ms).
    const seqs = played.flatMap((p) => [...(p.skipped ?? []), ...(p.seq !== undefined ? [p.seq] : [])]);
    expect(seqs).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect(seqs.length - played.filter((p) => p.kind === 'frame').length).toBeLessThanOrEqual(5);
    expect(played.filter((p) => p.kind !== 'frame')).toEqual([]);
    expect(stats.mouthToEarMs.p95 - stats.mouthToEarMs.p50).toBeLessThan(25);
  });

  it('plays 20 ms frames then 60 ms frames without concealment', () => {
    const { played, stats } = play([...Array(45).fill(20_000), ...Array(15).fill(60_000)]);
    expect(played.flatMap((p) => [...(p.skipped ?? []), ...(p.seq !== undefined ? [p.seq] : [])])).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect(played.filter((p) => p.kind !== 'frame')).toEqual([]);
    expect(stats.mouthToEarMs.p95 - stats.mouthToEarMs.p50).toBeLessThan(25);
  });
});
