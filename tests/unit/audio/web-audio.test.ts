/**
 * src/audio/web-audio.ts with a fake AudioContext (the real one runs in
 * tests/e2e/demo-firefox.e2e.ts): the playout schedules blocks back to back,
 * restarts a lead ahead after an underrun, drops what would start too far
 * ahead or while the context is suspended; the microphone turns blocks into
 * AudioData with the context's timestamps, keeps at most MIC_MAX_QUEUED for
 * a slow reader, and ends the stream when the track ends or on cancel.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIC_MAX_QUEUED, openWebAudioMic, PLAYOUT_LEAD_S, PLAYOUT_MAX_AHEAD_S, WebAudioPlayout } from '../../../src/audio/web-audio.js';

let ctxs: FakeContext[] = [];

class FakeNode {
  connected: unknown[] = [];
  connect(n: unknown) {
    this.connected.push(n);
    return n;
  }
  disconnect() {}
}

class FakeContext {
  state: 'suspended' | 'running' | 'closed' = 'running';
  currentTime = 10;
  readonly sampleRate: number;
  starts: Array<{ at: number; n: number }> = [];
  processor: (FakeNode & { onaudioprocess: ((e: unknown) => void) | null }) | undefined;
  constructor(o?: { sampleRate?: number }) {
    this.sampleRate = o?.sampleRate ?? 44_100;
    ctxs.push(this);
  }
  async resume() {
    if (this.state === 'suspended') this.state = 'running';
  }
  async close() {
    this.state = 'closed';
  }
  createMediaStreamDestination() {
    return Object.assign(new FakeNode(), { stream: { getAudioTracks: () => [{ kind: 'audio', stop() {} }] } });
  }
  createMediaStreamSource() {
    return new FakeNode();
  }
  createScriptProcessor() {
    this.processor = Object.assign(new FakeNode(), { onaudioprocess: null });
    return this.processor;
  }
  createGain() {
    return Object.assign(new FakeNode(), { gain: { value: 1 } });
  }
  get destination() {
    return new FakeNode();
  }
  createBuffer(_ch: number, n: number, _sr: number) {
    return { n, copyToChannel() {} };
  }
  createBufferSource() {
    const ctx = this;
    return Object.assign(new FakeNode(), {
      buffer: undefined as { n: number } | undefined,
      start(at: number) {
        ctx.starts.push({ at, n: this.buffer?.n ?? 0 });
      },
    });
  }
  /** The script processor's next block: `n` samples at `playbackTime` s. */
  block(playbackTime: number, n = 1024) {
    this.processor?.onaudioprocess?.({ playbackTime, inputBuffer: { sampleRate: this.sampleRate, length: n, getChannelData: () => new Float32Array(n) } });
  }
}

class FakeAudioData {
  closed = false;
  constructor(readonly init: { timestamp: number; numberOfFrames: number; sampleRate: number }) {}
  get timestamp() {
    return this.init.timestamp;
  }
  close() {
    this.closed = true;
  }
}

const g = globalThis as Record<string, unknown>;
const saved: Record<string, unknown> = {};
beforeEach(() => {
  ctxs = [];
  for (const k of ['AudioContext', 'AudioData', 'MediaStream']) saved[k] = g[k];
  g.AudioContext = FakeContext;
  g.AudioData = FakeAudioData;
  g.MediaStream = class {};
});
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete g[k];
    else g[k] = v;
  }
});

function fakeTrack() {
  const listeners: Array<() => void> = [];
  return {
    track: { kind: 'audio', addEventListener: (_: string, f: () => void) => listeners.push(f), removeEventListener() {} } as unknown as MediaStreamTrack,
    end: () => {
      for (const f of listeners) f();
    },
  };
}

describe('WebAudioPlayout', () => {
  it('plays blocks back to back from a lead ahead, restarts after an underrun, drops what runs too far ahead', () => {
    const p = new WebAudioPlayout();
    const ctx = ctxs[0];
    // The device's rate (the fake's default), so a page's own default-rate context can take the track in Firefox.
    expect(ctx.sampleRate).toBe(44_100);
    const block = new Float32Array(960);
    for (let i = 0; i < 3; i++) p.write(block, 48_000);
    expect(ctx.starts.map((s) => +s.at.toFixed(3))).toEqual([0, 0.02, 0.04].map((x) => +(10 + PLAYOUT_LEAD_S + x).toFixed(3)));
    expect(p.underruns).toBe(0);
    // The context's clock passes what was scheduled: the next block starts a lead ahead again.
    ctx.currentTime = 11;
    p.write(block, 48_000);
    expect(ctx.starts.at(-1)!.at).toBeCloseTo(11 + PLAYOUT_LEAD_S, 9);
    expect(p.underruns).toBe(1);
    // Written faster than the clock: past PLAYOUT_MAX_AHEAD_S the blocks are dropped, not queued.
    const before = ctx.starts.length;
    for (let i = 0; i < 40; i++) p.write(block, 48_000);
    const kept = ctx.starts.length - before;
    // Blocks from one block past the lead up to PLAYOUT_MAX_AHEAD_S, give or take one by floating point.
    const room = Math.floor((PLAYOUT_MAX_AHEAD_S - PLAYOUT_LEAD_S - 0.02) / 0.02);
    expect(kept).toBeGreaterThanOrEqual(room);
    expect(kept).toBeLessThanOrEqual(room + 1);
    for (const s of ctx.starts) expect(s.at - ctx.currentTime).toBeLessThanOrEqual(PLAYOUT_MAX_AHEAD_S + 1e-9);
    expect(p.dropped).toBe(40 - kept);
  });

  it('drops while the context is suspended (autoplay policy) and plays once it runs', () => {
    const p = new WebAudioPlayout();
    const ctx = ctxs[0];
    ctx.state = 'suspended';
    p.write(new Float32Array(960), 48_000);
    expect(ctx.starts).toEqual([]);
    expect(p.dropped).toBe(1);
    ctx.state = 'running';
    p.write(new Float32Array(960), 48_000);
    expect(ctx.starts).toHaveLength(1);
  });
});

describe('openWebAudioMic', () => {
  it('yields AudioData stamped from the first block time plus the samples before it (µs), in order, to a waiting and to a later reader', async () => {
    const { track } = fakeTrack();
    const mic = openWebAudioMic(track);
    const ctx = ctxs[0];
    const first = mic.read();
    ctx.block(1.5);
    ctx.block(1.53);
    const a = (await first).value as unknown as FakeAudioData;
    const b = (await mic.read()).value as unknown as FakeAudioData;
    // The second block follows the first by its 1024 samples (21.33 ms), whenever it was handed over.
    expect([a.timestamp, b.timestamp]).toEqual([1_500_000, Math.round((1.5 + 1024 / 48_000) * 1e6)]);
    expect(a.init.sampleRate).toBe(48_000);
  });

  it(`keeps at most ${MIC_MAX_QUEUED} blocks for a slow reader (the oldest dropped and closed), and ends on the track's end`, async () => {
    const { track, end } = fakeTrack();
    const mic = openWebAudioMic(track);
    const ctx = ctxs[0];
    const made: FakeAudioData[] = [];
    const Orig = g.AudioData as typeof FakeAudioData;
    g.AudioData = class extends Orig {
      constructor(init: ConstructorParameters<typeof FakeAudioData>[0]) {
        super(init);
        made.push(this);
      }
    };
    // Blocks of 1024 samples at 48 kHz, handed over late and unevenly: the timestamps count samples from the first.
    for (let i = 0; i < MIC_MAX_QUEUED + 5; i++) ctx.block(0.5 + i * 0.03, 1024);
    expect(mic.dropped).toBe(5);
    expect(made.slice(0, 5).every((d) => d.closed)).toBe(true);
    const r = await mic.read();
    expect((r.value as unknown as FakeAudioData).timestamp).toBe(Math.round((0.5 + (5 * 1024) / 48_000) * 1e6));
    end();
    expect(ctx.state).toBe('closed');
    expect(await mic.read()).toEqual({ value: undefined, done: true });
  });

  it('cancel() ends a pending read and closes the context', async () => {
    const mic = openWebAudioMic(fakeTrack().track);
    const pending = mic.read();
    await mic.cancel();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(ctxs[0].state).toBe('closed');
  });
});
