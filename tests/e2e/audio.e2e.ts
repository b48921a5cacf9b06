/**
 * Audio end to end (issue 13): the browser benchmark's sender page sends
 * Chromium's fake microphone (a periodic beep) through
 * MultipathCall.sendTrack; the receiver decodes it and plays it into the
 * remote audio track. Behaviour only, no timed quality thresholds: audio
 * packets arrive, the decoded audio is not silence (RMS above -60 dBFS), the
 * remote audio track exists, the benchmark's audio checks find nothing.
 */
import { describe, expect, it } from 'vitest';
import { parseCompare } from '../../bench/compare.js';
import { AUDIO_RMS_FLOOR, runBench } from '../../bench/browser/run.js';
import { DEFAULT_SCENARIO } from '../../sim/net/scenario.js';
import { outDir } from './out-dir.js';

describe('audio through a multipath call', () => {
  it('the remote side decodes and plays the microphone: packets arrive, the sound is not silence', async () => {
    const { results } = await runBench({
      scenario: DEFAULT_SCENARIO,
      configs: parseCompare('converge', { numPaths: DEFAULT_SCENARIO.paths.length, defaultFec: 'path', native: true }),
      durationS: 10,
      synthetic: true,
      width: 320,
      height: 240,
      fps: 30,
      codec: 'vp8',
      maxBitrateBps: 2_000_000,
      track: 'generator',
      sampleEvery: 10,
      ssim: false,
      sourceCheck: false,
      audio: true,
      seed: 1,
      out: outDir('audio'),
      log: () => undefined,
    });
    const r = results.results[0];
    const detail = `${JSON.stringify(r.audio)}; errors: ${r.errors.slice(0, 3).join(' | ') || 'none'}`;
    expect(r.audio, detail).toBeTruthy();
    const a = r.audio!;
    // 10 s of 20 ms frames is 500; connecting takes some of it
    expect(a.framesSent, detail).toBeGreaterThan(100);
    expect(a.packetsReceived, detail).toBeGreaterThan(100);
    expect(a.maxRms, detail).toBeGreaterThan(AUDIO_RMS_FLOOR);
    expect(
      r.errors.filter((e) => e.startsWith('audio:')),
      detail,
    ).toEqual([]);
    const out = (r.extras.audio as { receiver?: { output?: { rendering: boolean; framesDecoded: number } } }).receiver?.output;
    expect(out?.rendering, detail).toBe(true); // the remote audio track (MediaStreamTrackGenerator) exists
    expect(out?.framesDecoded ?? 0, detail).toBeGreaterThan(100);
  });
});
