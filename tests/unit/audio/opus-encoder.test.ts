/**
 * OpusEncoder's capture times come from the microphone's own timeline: a
 * frame's capture time is the time of its first sample as read, even when
 * the reader missed input (a starved main thread: MediaStreamTrackProcessor
 * drops what is not read in time). Chromium's AudioEncoder stamps its output
 * from the first input's timestamp plus the samples encoded, so gaps vanish
 * from its timestamps: a sender reading 75 % of real time would fall 250 ms behind
 * per second, and the receiver's jitter buffer declared nearly every frame
 * late (three-participant demo on 2 cores: up to 99 % concealed). The fakes below stamp
 * output the way Chromium does (checked in Chromium 156: inputs with gaps,
 * outputs 20 ms apart from the first input's timestamp).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AudioFrameInput } from '../../../src/engine/audio-sender.js';
import { OpusEncoder, type OpusEncoding } from '../../../src/audio/opus-encoder.js';

interface FakeData {
  timestamp: number;
  numberOfFrames: number;
  numberOfChannels: number;
  sampleRate: number;
  close(): void;
  copyTo(dst: Float32Array): void;
}

class FakeAudioData implements FakeData {
  timestamp: number;
  numberOfFrames: number;
  numberOfChannels: number;
  sampleRate: number;
  constructor(init: { timestamp: number; numberOfFrames: number; numberOfChannels: number; sampleRate: number }) {
    this.timestamp = init.timestamp;
    this.numberOfFrames = init.numberOfFrames;
    this.numberOfChannels = init.numberOfChannels;
    this.sampleRate = init.sampleRate;
  }
  close(): void {}
  copyTo(dst: Float32Array): void {
    dst.fill(0.1);
  }
}

/** Frame indices the fake encoder leaves out (DTX): its timestamps advance over them all the same, as Chromium's do. */
let dtxFrames = new Set<number>();

/**
 * Emits a 20 ms chunk per 960 samples in, stamped first input timestamp +
 * 20 ms x n (Chromium's AudioOpusEncoder), asynchronously as WebCodecs does.
 */
class FakeAudioEncoder {
  state = 'unconfigured';
  private first: number | undefined;
  private buffered = 0;
  private n = 0;
  private frameUs = 20_000;
  /** Every configuration any fake encoder was given, in order. */
  static configs: Array<{ bitrate: number; frameDurationUs: number }> = [];
  constructor(private readonly init: { output: (c: { byteLength: number; timestamp: number; duration: number; copyTo(d: Uint8Array): void }) => void }) {}
  configure(cfg: { bitrate: number; opus?: { frameDuration?: number } }): void {
    this.state = 'configured';
    this.frameUs = cfg.opus?.frameDuration ?? 20_000;
    FakeAudioEncoder.configs.push({ bitrate: cfg.bitrate, frameDurationUs: this.frameUs });
  }
  encode(d: FakeData): void {
    this.first ??= d.timestamp;
    this.buffered += d.numberOfFrames;
    const per = (48 * this.frameUs) / 1000;
    while (this.buffered >= per) {
      this.buffered -= per;
      const k = this.n++;
      if (dtxFrames.has(k)) continue;
      const timestamp = this.first + this.frameUs * k;
      const duration = this.frameUs;
      queueMicrotask(() => this.init.output({ byteLength: 3, timestamp, duration, copyTo: (dst) => dst.fill(1) }));
    }
  }
  /** Pads what is buffered to a whole frame (as an encoder drains its last partial frame) and resolves after its output. */
  flush(): Promise<void> {
    if (this.buffered > 0) {
      const timestamp = (this.first ?? 0) + this.frameUs * this.n++;
      const duration = this.frameUs;
      this.buffered = 0;
      queueMicrotask(() => this.init.output({ byteLength: 3, timestamp, duration, copyTo: (dst) => dst.fill(1) }));
    }
    return new Promise((r) => queueMicrotask(() => queueMicrotask(r)));
  }
  close(): void {
    this.state = 'closed';
  }
}

const g = globalThis as Record<string, unknown>;
const saved: Record<string, unknown> = {};
let inputs: FakeData[] = [];
/** When the reader took its latest input (the track's clock, µs): each input is read at its own timestamp. */
let readAtUs = 0;

beforeEach(() => {
  dtxFrames = new Set();
  FakeAudioEncoder.configs = [];
  for (const k of ['MediaStreamTrackProcessor', 'AudioEncoder', 'AudioData']) saved[k] = g[k];
  g.AudioData = FakeAudioData;
  g.AudioEncoder = FakeAudioEncoder;
  g.MediaStreamTrackProcessor = class {
    readable = new ReadableStream<FakeData>({
      pull: (c) => {
        const d = inputs.shift();
        if (!d) return c.close();
        readAtUs = d.timestamp;
        c.enqueue(d);
      },
    });
  };
});
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete g[k];
    else g[k] = v;
  }
});

/**
 * Encode mono 48 kHz inputs given as [timestamp µs, samples] and return the
 * frames sent. The call's clock reads the track's clock + 5 ms, so the
 * read-latency floor maps capture times by +5 ms.
 */
async function encode(input: Array<[number, number]>, encoding?: (k: number) => OpusEncoding | undefined, bitrateBps?: number): Promise<AudioFrameInput[]> {
  inputs = input.map(([timestamp, numberOfFrames]) => new FakeAudioData({ timestamp, numberOfFrames, numberOfChannels: 1, sampleRate: 48_000 }));
  const frames: AudioFrameInput[] = [];
  const errors: Error[] = [];
  let inputCount = 0;
  const enc = new OpusEncoder({ kind: 'audio' } as MediaStreamTrack, {
    clock: { nowUs: () => readAtUs + 5_000 },
    ...(encoding ? { encoding: () => encoding(inputCount++) } : {}),
    ...(bitrateBps !== undefined ? { bitrateBps } : {}),
    onFrame: (f) => frames.push(f),
    onError: (e) => errors.push(e),
  });
  await enc.start();
  await new Promise((r) => setTimeout(r, 20));
  expect(errors).toEqual([]);
  expect(enc.stats().inputFrames).toBe(input.length);
  enc.stop();
  return frames;
}

const tenMs = (timestampsUs: number[]): Array<[number, number]> => timestampsUs.map((t) => [t, 480]);

describe('OpusEncoder capture times', () => {
  it('without gaps: 20 ms apart from the first sample, as the encoder stamps them', async () => {
    const frames = await encode(tenMs(Array.from({ length: 10 }, (_, k) => 1_000_000 + 10_000 * k)));
    expect(frames.map((f) => f.captureUs)).toEqual([1_005_000, 1_025_000, 1_045_000, 1_065_000, 1_085_000]);
  });

  it('a frame after inputs the reader missed carries the time of its first sample, not the time the encoder counts', async () => {
    // 20-30 ms and 60-90 ms were never read (dropped by the processor).
    const frames = await encode(tenMs([0, 10_000, 30_000, 40_000, 50_000, 90_000, 100_000, 110_000]));
    // Frame 0: inputs 0 and 10 ms; frame 1: 30 and 40 ms; frame 2: 50 and 90 ms (starts at 50); frame 3: 100 and 110 ms.
    expect(frames.map((f) => f.captureUs - 5_000)).toEqual([0, 30_000, 50_000, 100_000]);
  });

  it('frames DTX left out do not shift the capture times of the frames after them', async () => {
    // Frames 1 and 2 (20-60 ms) are silence the encoder does not send; 80-90 ms was never read.
    dtxFrames = new Set([1, 2]);
    const frames = await encode(tenMs([0, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000, 100_000, 110_000]));
    expect(frames.map((f) => f.captureUs - 5_000)).toEqual([0, 60_000, 100_000]);
  });

  it('a frame that starts inside an input takes the time of that sample', async () => {
    // 15 ms inputs (720 samples), the third one late: frame 1 starts 240 samples (5 ms) into the
    // input at 15 ms, frame 2 480 samples (10 ms) into the input at 40 ms.
    const frames = await encode([0, 15_000, 40_000, 55_000].map((t) => [t, 720]));
    expect(frames.map((f) => f.captureUs - 5_000)).toEqual([0, 20_000, 50_000]);
  });
});

describe('OpusEncoder encoding (bitrate and frame duration from the sender)', () => {
  const slow: OpusEncoding = { bitrateBps: 12_000, frameDurationUs: 60_000 };
  const fast: OpusEncoding = { bitrateBps: 32_000, frameDurationUs: 20_000 };

  it('starts a new encoder at the input where the encoding changes; frames go on with the new duration and their own capture times', async () => {
    // 10 ms inputs for 200 ms: the first 6 inputs at 32 kbps / 20 ms, then 12 kbps / 60 ms.
    const frames = await encode(tenMs(Array.from({ length: 20 }, (_, k) => 10_000 * k)), (k) => (k < 6 ? fast : slow));
    expect(FakeAudioEncoder.configs).toEqual([
      { bitrate: 32_000, frameDurationUs: 20_000 },
      { bitrate: 12_000, frameDurationUs: 60_000 },
    ]);
    expect(frames.map((f) => [f.captureUs - 5_000, f.durationUs])).toEqual([
      [0, 20_000],
      [20_000, 20_000],
      [40_000, 20_000],
      [60_000, 60_000],
      [120_000, 60_000],
    ]);
  });

  it('a change asked in the middle of a frame waits for the frame to end, so the two encoders do not overlap', async () => {
    // Asked after 50 ms (2.5 frames of 20 ms): the old encoder takes one more input and ends its third frame at 60 ms.
    const frames = await encode(tenMs(Array.from({ length: 20 }, (_, k) => 10_000 * k)), (k) => (k < 5 ? fast : slow));
    expect(frames.map((f) => [f.captureUs - 5_000, f.durationUs])).toEqual([
      [0, 20_000],
      [20_000, 20_000],
      [40_000, 20_000],
      [60_000, 60_000],
      [120_000, 60_000],
    ]);
  });

  it("caps the bitrate at the app's `bitrateBps`, and takes an unknown frame duration as 20 ms", async () => {
    await encode(tenMs([0, 10_000, 20_000]), () => ({ bitrateBps: 48_000, frameDurationUs: 25_000 }), 24_000);
    expect(FakeAudioEncoder.configs).toEqual([{ bitrate: 24_000, frameDurationUs: 20_000 }]);
  });

  it('an app bitrate stands for the richest step and caps the poorer ones', async () => {
    await encode(tenMs(Array.from({ length: 12 }, (_, k) => 10_000 * k)), (k) => (k < 6 ? fast : slow), 64_000);
    expect(FakeAudioEncoder.configs).toEqual([
      { bitrate: 64_000, frameDurationUs: 20_000 },
      { bitrate: 12_000, frameDurationUs: 60_000 },
    ]);
  });

  it('keeps the encoding in use while nothing is asked (no participant has an up path)', async () => {
    await encode(tenMs(Array.from({ length: 12 }, (_, k) => 10_000 * k)), (k) => (k < 3 ? slow : undefined));
    expect(FakeAudioEncoder.configs).toEqual([{ bitrate: 12_000, frameDurationUs: 60_000 }]);
  });

  it('keeps one encoder while the encoding stays the same', async () => {
    await encode(tenMs(Array.from({ length: 12 }, (_, k) => 10_000 * k)), () => ({ ...slow }));
    expect(FakeAudioEncoder.configs).toEqual([{ bitrate: 12_000, frameDurationUs: 60_000 }]);
  });
});
