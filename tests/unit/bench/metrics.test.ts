import { describe, expect, it } from 'vitest';
import { parseCompare } from '../../../bench/compare.js';
import { summarizeRun } from '../../../bench/browser/metrics.js';
import type { DisplayEntry } from '../../../bench/browser/metrics.js';
import { overloadedRuns, renderSummaryMd } from '../../../bench/browser/render.js';
import type { BenchResults } from '../../../bench/browser/render.js';

/** summarizeRun of a run that logged nothing. */
const emptyRun = (name: string, kind: 'native' | 'multipath', durationS: number, startMs: number) =>
  summarizeRun({ name, kind, codec: 'h264', durationS, startMs, draws: [], displays: [], quality: [], bytesReceived: [], framesSent: 0, framesDecoded: 0, keyframeRequests: 0 });

/** results.json around `results` (a synthetic source). */
const benchResults = (results: BenchResults['results'], durationS: number): BenchResults => ({
  version: 1,
  scenario: 's',
  source: { kind: 'synthetic', width: 640, height: 480, fps: 30, frames: 600, track: 'generator' },
  codec: 'h264',
  durationS,
  quality: { sampleEvery: 5, ssim: true },
  createdAt: '',
  notes: [],
  results,
});

describe('summarizeRun', () => {
  const startMs = 1_000_000;
  const draws = Array.from({ length: 90 }, (_, i) => ({ id: i, tMs: startMs + i * 33.3 }));
  // Frames 0..59 shown 50 ms after drawing, 10..14 never, one unreadable frame, one repeat.
  const displays: DisplayEntry[] = [];
  for (let i = 0; i < 60; i++) if (i < 10 || i >= 15) displays.push({ id: i, tMs: startMs + i * 33.3 + 50, w: 640, h: 480 });
  displays.push({ id: -1, tMs: startMs + 500, w: 640, h: 480 });
  displays.push({ id: 20, tMs: startMs + 20 * 33.3 + 60, w: 320, h: 240 });
  const r = summarizeRun({
    name: 'converge',
    kind: 'multipath',
    codec: 'h264',
    durationS: 3,
    startMs,
    draws,
    displays,
    quality: [
      { id: 0, psnr: 40, ssim: 0.99 },
      { id: 5, psnr: 30, ssim: 0.9 },
    ],
    bytesReceived: [
      { t: 1, bytes: 100_000 },
      { t: 2, bytes: 250_000 },
      { t: 3, bytes: 400_000 },
    ],
    framesSent: 80,
    framesDecoded: 70,
    keyframeRequests: 2,
  });

  it('counts frames, ids and latency from the logs', () => {
    expect(r.frames).toEqual({ drawn: 90, sent: 80, decoded: 70, dropped: 10, displayed: 55, notDisplayed: 5, unreadable: 1 });
    expect(r.latencyMs.p50).toBe(50);
    expect(r.latencyMs.mean).toBe(50);
    expect(r.firstFrameMs).toBe(50);
    expect(r.keyframeRequests).toBe(2);
    expect(r.resolutions).toEqual({ '640x480': 56, '320x240': 1 });
  });

  it('judges the gap of the 5 missing frames by the libwebrtc rule and reports quality and goodput', () => {
    // The 199.8 ms gap is the 10th interval: avg (9 x 33.3 + 199.8) / 10 = 49.95 ms, threshold 199.95 ms: not a
    // freeze (the gap enters the average). The rule itself is tested in tests/unit/feedback/qoe-metrics.test.ts.
    // The display stops at frame 59 (~2015 ms) of a 3 s run: the silence to the end is one freeze (~985 ms).
    expect(r.freezes.count).toBe(1);
    expect(r.freezes.totalMs).toBeCloseTo(3000 - (59 * 33.3 + 50), 0);
    expect(r.psnr).toEqual({ mean: 35, p5: 30.5, samples: 2 }); // type-7 percentile: 30 + 0.05 * 10
    expect(r.ssim?.mean).toBeCloseTo(0.945, 4);
    expect(r.goodputBps).toBe(Math.round((400_000 * 8) / 3));
    expect(r.perSecond.map((p) => p.goodputBps)).toEqual([800_000, 1_200_000, 1_200_000]);
    expect(r.perSecond[0].fps + r.perSecond[1].fps + r.perSecond[2].fps).toBe(55);
    expect(r.perSecond[0].psnrMean).toBe(35);
  });

  it('tolerates empty logs', () => {
    const e = emptyRun('x', 'native', 2, startMs);
    expect(e.fps).toBe(0);
    expect(e.latencyMs).toEqual({ mean: null, p50: null, p95: null });
    expect(e.psnr.mean).toBeNull();
    expect(e.ssim).toBeNull();
    const md = renderSummaryMd(benchResults([e, r], 2));
    expect(md).toContain('| x | 0.0 |');
    expect(md).toContain('| converge |');
    expect(md).not.toContain('overloaded machine');
  });

  it('flags the configurations measured on an overloaded machine', () => {
    const run = (name: string, start: number, end: number) => ({ ...emptyRun(name, 'multipath', 1, 0), extras: { loadAvg1m: { start, end, cores: 2 } } });
    const res = benchResults([run('quiet', 0.4, 4.8), run('busy', 4.9, 9.1), run('busy-at-start', 6, 3)], 1);
    expect(overloadedRuns(res)).toEqual(['busy (4.9 / 9.1 on 2 cores)', 'busy-at-start (6 / 3 on 2 cores)']);
    const md = renderSummaryMd(res);
    expect(md).toContain('**Measured on an overloaded machine**');
    expect(md).not.toContain('quiet (');
  });

  it("prints the microphone's Opus encoding of ours, and nothing for a run without it", () => {
    const withEnc = { ...emptyRun('converge', 'multipath', 1, 0), extras: { audio: { sender: { encoder: { targetBitrateBps: 12_000, frameDurationMs: 60, reconfigurations: 1 } } } } };
    const md = renderSummaryMd(benchResults([withEnc, emptyRun('native-webrtc:0', 'native', 1, 0)], 1));
    const line = md.split('\n').find((l) => l.startsWith('Microphone encoding')) ?? '';
    expect(line).toContain('converge 12 kbps / 60 ms, 1 change.');
    expect(line).not.toContain('native-webrtc');
    expect(renderSummaryMd(benchResults([emptyRun('x', 'multipath', 1, 0)], 1))).not.toContain('Microphone encoding');
  });
});

describe('summarizeRun freeze list and split', () => {
  it('lists each freeze from the start of the run and splits it by the outages in scenario time', () => {
    const startMs = 500_000;
    // 30 fps for 10 s with a 2 s hole after 4 s of display; every frame shown 100 ms after drawing.
    const ids = Array.from({ length: 300 }, (_, i) => i).filter((i) => i < 120 || i >= 180);
    const r = summarizeRun({
      name: 'single:0',
      kind: 'multipath',
      codec: 'h264',
      durationS: 10,
      startMs,
      draws: ids.map((i) => ({ id: i, tMs: startMs + i * (1000 / 30) })),
      displays: ids.map((i) => ({ id: i, tMs: startMs + i * (1000 / 30) + 100, w: 640, h: 480 })),
      quality: [],
      bytesReceived: [],
      framesSent: 240,
      framesDecoded: 240,
      keyframeRequests: 0,
      scenarioAtStartMs: 3_000, // the run started 3 s into the scenario
      // Downlink out at scenario 6.5-8 s (display 6.6-8.1 s, run 3.6-5.1 s); uplink never.
      outages: { uplink: [], downlink: [[6_500, 8_000]] },
    });
    expect(r.freezes.count).toBe(1);
    expect(r.freezeList).toEqual([{ atMs: 4067, ms: 2033 }]);
    // Freeze at run 4.067-6.1 s = scenario 7.067-9.1 s; the outage moved by the 100 ms latency is 6.6-8.1 s.
    expect(r.freezeSplit?.inUplinkOutageMs).toBe(0);
    expect(r.freezeSplit?.inDownlinkOnlyOutageMs).toBe(1033);
    expect(r.freezeSplit?.outsideMs).toBe(1000);
    expect(r.freezeSplit?.shiftMs).toBe(100);
  });
});

describe('parseCompare', () => {
  const BROWSER = { numPaths: 2, defaultFec: 'path', native: true };
  it('parses schedulers, single paths, native paths and per-entry FEC', () => {
    expect(parseCompare('converge,minrtt@none,single:1,native-webrtc:0', BROWSER)).toEqual([
      { name: 'converge', kind: 'multipath', scheduler: 'converge', fec: 'path' },
      { name: 'minrtt@none', kind: 'multipath', scheduler: 'minrtt', fec: 'none' },
      { name: 'single:1', kind: 'multipath', scheduler: 'single', singlePath: 1, fec: 'path' },
      { name: 'native-webrtc:0', kind: 'native', path: 0 },
    ]);
  });
  it('rejects bad entries with a clear message', () => {
    expect(() => parseCompare('native-webrtc:2', BROWSER)).toThrow(/path must be 0..1/);
    expect(() => parseCompare('native-webrtc', BROWSER)).toThrow(/which path/);
    expect(() => parseCompare('bogus', BROWSER)).toThrow(/unknown configuration/);
    expect(() => parseCompare('converge@xor', BROWSER)).toThrow(/FEC policy/);
    expect(() => parseCompare('converge,converge', BROWSER)).toThrow(/twice/);
    expect(() => parseCompare(' , ', BROWSER)).toThrow(/empty/);
  });
  it('accepts only the entries the benchmark can run (simulator: converge-nofb, no native WebRTC, FEC left to --fec)', () => {
    const SIM = { noFeedback: true };
    expect(parseCompare('converge-nofb,single:7,mrtp@none', SIM)).toEqual([
      { name: 'converge-nofb', kind: 'multipath', scheduler: 'converge', qoeFeedback: false },
      { name: 'single:7', kind: 'multipath', scheduler: 'single', singlePath: 7 },
      { name: 'mrtp@none', kind: 'multipath', scheduler: 'mrtp', fec: 'none' },
    ]);
    expect(() => parseCompare('native-webrtc:0', SIM)).toThrow(/unknown configuration/);
    expect(() => parseCompare('single:8', SIM)).toThrow(/path must be 0..7/);
    expect(() => parseCompare('converge-nofb', BROWSER)).toThrow(/unknown configuration/);
    expect(() => parseCompare('single', SIM)).toThrow(/which path/);
  });
  it('takes estimator entries where the benchmark can run them: fractal = the MPRTP sender (mrtp + fractal), SCHED+EST pairs', () => {
    const SIM = { noFeedback: true, estimators: true };
    expect(parseCompare('fractal,converge+fractal,minrtt+gcc@none', SIM)).toEqual([
      { name: 'fractal', kind: 'multipath', scheduler: 'mrtp', estimator: 'fractal' },
      { name: 'converge+fractal', kind: 'multipath', scheduler: 'converge', estimator: 'fractal' },
      { name: 'minrtt+gcc@none', kind: 'multipath', scheduler: 'minrtt', estimator: 'gcc', fec: 'none' },
    ]);
    expect(() => parseCompare('fractal', BROWSER)).toThrow(/unknown configuration/);
    expect(() => parseCompare('converge+fractal', { noFeedback: true })).toThrow(/unknown configuration/);
    expect(() => parseCompare('single+fractal', SIM)).toThrow(/unknown multipath scheduler/);
    expect(() => parseCompare('converge+nope', SIM)).toThrow(/unknown estimator/);
  });
  it('takes single:N+EST (a single path with another estimator) only where estimators are accepted', () => {
    const WITH = { numPaths: 2, native: true, estimators: true };
    expect(parseCompare('single:1+gcc-lossv2@none,single:0', WITH)).toEqual([
      { name: 'single:1+gcc-lossv2@none', kind: 'multipath', scheduler: 'single', singlePath: 1, fec: 'none', estimator: 'gcc-lossv2' },
      { name: 'single:0', kind: 'multipath', scheduler: 'single', singlePath: 0 },
    ]);
    expect(() => parseCompare('single:1+nope', WITH)).toThrow(/unknown estimator/);
    expect(() => parseCompare('single:1+gcc+gcc', WITH)).toThrow(/one \+estimator at most/);
    expect(() => parseCompare('single:2+gcc', WITH)).toThrow(/path must be 0..1/);
    expect(() => parseCompare('single:1+gcc', BROWSER)).toThrow(/takes no \+estimator/);
  });
});
