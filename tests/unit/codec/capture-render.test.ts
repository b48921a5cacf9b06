/**
 * Capture and render modes chosen by feature detection (src/codec/frame-source.ts,
 * frame-sink.ts, capabilities.ts) against stand-in browser objects (Node has no
 * DOM or WebCodecs): the video-element reader's one-frame slot, duplicate
 * suppression, end and cancel; the canvas sink; the errors naming what is missing;
 * and the explicit-L1T1 fallback Firefox needs for VP9 and AV1.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MultipathCall } from '../../../src/call/multipath-call.js';
import { callCapabilities } from '../../../src/codec/capabilities-probe.js';
import {
  CameraEncoder,
  CodecError,
  FrameDecoder,
  createFrameSink,
  detectCaptureMode,
  detectRenderMode,
  isCallSupported,
  openFrameReader,
  supportedEncoderConfig,
} from '../../../src/codec/webcodecs.js';
import { ManualClock } from '../../../src/core/clock.js';

class FakeFrame {
  closed = false;
  readonly timestamp: number;
  readonly displayWidth: number;
  readonly displayHeight: number;
  constructor(src: { videoWidth?: number; videoHeight?: number; width?: number; height?: number; throwOnFrame?: boolean }, init: { timestamp: number }) {
    if (src.throwOnFrame) throw new Error('not a frame source here');
    this.timestamp = init.timestamp;
    this.displayWidth = src.videoWidth ?? src.width ?? 0;
    this.displayHeight = src.videoHeight ?? src.height ?? 0;
  }
  close(): void {
    this.closed = true;
  }
}

type FrameCb = (nowMs: number, md: { presentedFrames?: number }) => void;

class FakeVideo {
  muted = false;
  playsInline = false;
  autoplay = false;
  srcObject: unknown = null;
  readyState = 4;
  videoWidth = 640;
  videoHeight = 480;
  throwOnFrame = false;
  paused = true;
  cb: FrameCb | undefined;
  cancelled = 0;
  play(): Promise<void> {
    this.paused = false;
    return Promise.resolve();
  }
  pause(): void {
    this.paused = true;
  }
  requestVideoFrameCallback(cb: FrameCb): number {
    this.cb = cb;
    return 1;
  }
  cancelVideoFrameCallback(): void {
    this.cancelled++;
    this.cb = undefined;
  }
  /** Present a frame: the browser calls the callback once. */
  present(nowMs: number, presentedFrames: number): void {
    const cb = this.cb;
    this.cb = undefined;
    cb?.(nowMs, { presentedFrames });
  }
}

class FakeCanvas {
  width = 300;
  height = 150;
  draws: Array<[number, number]> = [];
  readonly track = {
    kind: 'video',
    stopped: false,
    stop() {
      this.stopped = true;
    },
  };
  getContext() {
    return {
      drawImage: (_f: unknown, _x: number, _y: number, w: number, h: number) => this.draws.push([w, h]),
    };
  }
  captureStream() {
    return { getVideoTracks: () => [this.track] };
  }
}

class FakeTrack {
  kind = 'video';
  private readonly listeners = new Set<() => void>();
  getSettings() {
    return { width: 640, height: 480, frameRate: 30 };
  }
  addEventListener(_t: string, fn: () => void) {
    this.listeners.add(fn);
  }
  removeEventListener(_t: string, fn: () => void) {
    this.listeners.delete(fn);
  }
  end() {
    for (const fn of [...this.listeners]) fn();
  }
}

/** A window with a video element (requestVideoFrameCallback when `rvfc`), canvases, VideoFrame and MediaStream. */
function stubWindow(opts: { rvfc?: boolean } = {}) {
  const videos: FakeVideo[] = [];
  const canvases: FakeCanvas[] = [];
  class VideoEl {}
  if (opts.rvfc ?? true) (VideoEl.prototype as unknown as Record<string, unknown>).requestVideoFrameCallback = () => 0;
  class CanvasEl {}
  (CanvasEl.prototype as unknown as Record<string, unknown>).captureStream = () => undefined;
  vi.stubGlobal('HTMLVideoElement', VideoEl);
  vi.stubGlobal('HTMLCanvasElement', CanvasEl);
  vi.stubGlobal('VideoFrame', FakeFrame);
  vi.stubGlobal(
    'MediaStream',
    class {
      constructor(readonly tracks: unknown[]) {}
    },
  );
  vi.stubGlobal('document', {
    createElement: (tag: string) => {
      if (tag === 'video') {
        const v = new FakeVideo();
        videos.push(v);
        return v;
      }
      const c = new FakeCanvas();
      canvases.push(c);
      return c;
    },
  });
  return { videos, canvases };
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('capture mode detection', () => {
  it('names what is missing where nothing can capture (Node)', async () => {
    const d = detectCaptureMode();
    expect(d.mode).toBeUndefined();
    expect(d.missing).toContain('MediaStreamTrackProcessor');
    expect(d.missing.join()).toMatch(/VideoFrame/);
    await expect(openFrameReader(new FakeTrack() as never)).rejects.toThrow(/cannot read camera frames.*MediaStreamTrackProcessor/);
  });

  it('prefers MediaStreamTrackProcessor, then requestVideoFrameCallback, then a timer', async () => {
    stubWindow({ rvfc: true });
    expect(detectCaptureMode().mode).toBe('video-frame-callback');
    vi.stubGlobal('MediaStreamTrackProcessor', class {});
    expect(detectCaptureMode().mode).toBe('track-processor');
    vi.unstubAllGlobals();
    stubWindow({ rvfc: false });
    expect(detectCaptureMode().mode).toBe('video-timer');
    // Asking for a mode the browser lacks is an error, not a silent substitute.
    await expect(openFrameReader(new FakeTrack() as never, 'video-frame-callback')).rejects.toThrow(CodecError);
    await expect(openFrameReader(new FakeTrack() as never, 'track-processor')).rejects.toThrow(/MediaStreamTrackProcessor/);
  });
});

describe('video element capture (video-frame-callback)', () => {
  it('gives one frame per newly presented frame, increasing timestamps, the latest when the reader is slow', async () => {
    const { videos } = stubWindow();
    const track = new FakeTrack();
    const reader = await openFrameReader(track as never);
    expect(reader.mode).toBe('video-frame-callback');
    const v = videos[0];
    expect(v.muted).toBe(true);
    expect(v.paused).toBe(false);
    const pending = reader.read();
    v.present(1000, 1);
    const a = await pending;
    expect(a.done).toBe(false);
    // The same presented frame again: no new VideoFrame.
    v.present(1001, 1);
    v.present(1033, 2);
    v.present(1066, 3); // replaces frame 2, unread
    const b = await reader.read();
    const frames = [a.value, b.value] as unknown as FakeFrame[];
    expect(frames[1].displayWidth).toBe(640);
    expect(frames[1].timestamp).toBeGreaterThan(frames[0].timestamp);
    // Three presented frames, two read: the middle one was closed when the third replaced it.
    await reader.cancel();
    expect(v.srcObject).toBeNull();
    expect(v.cancelled).toBe(1);
    expect((await reader.read()).done).toBe(true);
  });

  it('ends when the track ends, also for a read already waiting', async () => {
    stubWindow();
    const track = new FakeTrack();
    const reader = await openFrameReader(track as never);
    const pending = reader.read();
    track.end();
    expect((await pending).done).toBe(true);
  });

  it('closes the frame it holds on cancel (bounded: one unread frame)', async () => {
    const { videos } = stubWindow();
    const made: FakeFrame[] = [];
    vi.stubGlobal(
      'VideoFrame',
      class extends FakeFrame {
        constructor(src: never, init: { timestamp: number }) {
          super(src, init);
          made.push(this);
        }
      },
    );
    const reader = await openFrameReader(new FakeTrack() as never);
    for (let i = 1; i <= 5; i++) {
      videos[0].present(1000 + 33 * i, i);
      videos[0].present(1001 + 33 * i, i); // the same presented frame again: no new VideoFrame
    }
    expect(made).toHaveLength(5);
    expect(made.slice(0, 4).every((f) => f.closed)).toBe(true);
    expect(made[4].closed).toBe(false);
    await reader.cancel();
    expect(made[4].closed).toBe(true);
  });

  it('copies through a canvas when the element is no frame source', async () => {
    const { videos } = stubWindow();
    vi.stubGlobal(
      'OffscreenCanvas',
      class {
        constructor(
          readonly width: number,
          readonly height: number,
        ) {}
        getContext() {
          return { drawImage: () => undefined };
        }
      },
    );
    const reader = await openFrameReader(new FakeTrack() as never);
    videos[0].throwOnFrame = true;
    const pending = reader.read();
    videos[0].present(1000, 1);
    const f = (await pending).value as unknown as FakeFrame;
    expect([f.displayWidth, f.displayHeight]).toEqual([640, 480]);
    await reader.cancel();
  });
});

describe('video element capture (video-timer)', () => {
  it('captures at the track frame rate without requestVideoFrameCallback, none before the video has data', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { videos } = stubWindow({ rvfc: false });
    const reader = await openFrameReader(new FakeTrack() as never);
    expect(reader.mode).toBe('video-timer');
    videos[0].readyState = 1;
    vi.advanceTimersByTime(200);
    const pending = reader.read();
    videos[0].readyState = 4;
    vi.advanceTimersByTime(34);
    expect((await pending).done).toBe(false);
    await reader.cancel();
    vi.advanceTimersByTime(1000);
    expect((await reader.read()).done).toBe(true);
  });
});

describe('render mode detection and the canvas sink', () => {
  it('names what is missing where nothing can render (Node); FrameDecoder still decodes, renderMode none', () => {
    const d = detectRenderMode();
    expect(d.mode).toBeUndefined();
    expect(d.missing).toContain('MediaStreamTrackGenerator');
    expect(createFrameSink()).toBeUndefined();
    const dec = new FrameDecoder({ onDecoded: () => undefined, onNeedKeyframe: () => undefined });
    expect(dec.track).toBeUndefined();
    expect(dec.stats().renderMode).toBe('none');
  });

  it('prefers MediaStreamTrackGenerator, else canvas captureStream()', () => {
    stubWindow();
    expect(detectRenderMode().mode).toBe('canvas-capture');
    vi.stubGlobal('MediaStreamTrackGenerator', class {});
    expect(detectRenderMode().mode).toBe('track-generator');
  });

  it('canvas-capture: draws each frame at its size, closes it, and its track is the remote track', () => {
    const { canvases } = stubWindow();
    const dec = new FrameDecoder({ onDecoded: () => undefined, onNeedKeyframe: () => undefined });
    expect(dec.renderMode).toBe('canvas-capture');
    const c = canvases[0];
    expect(dec.track).toBe(c.track);
    const sink = createFrameSink('canvas-capture')!;
    const c2 = canvases[1];
    const f = new FakeFrame({ width: 320, height: 240 }, { timestamp: 1 });
    sink.write(f as never);
    expect([c2.width, c2.height]).toEqual([320, 240]);
    expect(c2.draws).toEqual([[320, 240]]);
    expect(f.closed).toBe(true);
    sink.close();
    expect(c2.track.stopped).toBe(true);
    const late = new FakeFrame({ width: 320, height: 240 }, { timestamp: 2 });
    sink.write(late as never);
    expect(late.closed).toBe(true);
    expect(c2.draws).toHaveLength(1);
  });
});

/** A VideoEncoder whose isConfigSupported refuses an explicit L1T1 (as Firefox 153 does for VP9 and AV1). */
function stubEncoder(opts: { refuseL1T1?: boolean; refuse?: string[]; throws?: boolean } = {}) {
  const seen: Array<Record<string, unknown>> = [];
  vi.stubGlobal(
    'VideoEncoder',
    class {
      configure(): void {}
      static async isConfigSupported(c: Record<string, unknown>) {
        seen.push(c);
        if (opts.throws) throw new TypeError('bad config');
        const refused = (opts.refuseL1T1 && c.scalabilityMode === 'L1T1') || (opts.refuse ?? []).some((p) => String(c.codec).startsWith(p));
        return { supported: !refused, config: c };
      }
    },
  );
  vi.stubGlobal(
    'VideoDecoder',
    class {
      configure(): void {}
      static async isConfigSupported(c: { codec: string }) {
        return { supported: !String(c.codec).startsWith('av01'), config: c };
      }
    },
  );
  vi.stubGlobal('EncodedVideoChunk', class {});
  return seen;
}

describe('encoder configuration support', () => {
  it('drops an explicit L1T1 the encoder refuses, keeps it where accepted', async () => {
    stubEncoder({ refuseL1T1: true });
    const vp9 = (await supportedEncoderConfig('vp9', 640, 480, 1e6, 30)) as unknown as Record<string, unknown>;
    expect(vp9.codec).toBe('vp09.00.31.08');
    expect(vp9.scalabilityMode).toBeUndefined();
    expect(vp9.latencyMode).toBe('realtime');
    vi.unstubAllGlobals();
    stubEncoder();
    expect(((await supportedEncoderConfig('av1', 640, 480, 1e6, 30)) as unknown as Record<string, unknown>).scalabilityMode).toBe('L1T1');
  });

  it('undefined when refused or when the check throws', async () => {
    stubEncoder({ refuse: ['vp8'] });
    expect(await supportedEncoderConfig('vp8', 640, 480, 1e6, 30)).toBeUndefined();
    vi.unstubAllGlobals();
    stubEncoder({ throws: true });
    expect(await supportedEncoderConfig('h264', 640, 480, 1e6, 30)).toBeUndefined();
  });
});

describe('capabilities', () => {
  it('Node: not supported, and says what is missing', async () => {
    expect(isCallSupported()).toBe(false);
    expect(MultipathCall.isSupported()).toBe(false);
    const c = await MultipathCall.capabilities();
    expect(c.supported).toBe(false);
    expect(c.send).toBe(false);
    expect(c.encode).toEqual([]);
    expect(c.capture).toBe('none');
    expect(c.render).toBe('none');
    expect(c.missing).toContain('VideoEncoder (WebCodecs)');
    expect(c.missing.join()).toMatch(/capture: MediaStreamTrackProcessor/);
    expect(c.audio).toEqual({ send: false, receive: false });
    expect(c.missing).toContain('audio send: AudioEncoder (WebCodecs)');
    expect(c.missing).toContain('audio receive: MediaStreamTrackGenerator or AudioContext');
  });

  it('a Firefox-like window: video-frame-callback capture, canvas-capture render, codecs as the encoder and decoder answer', async () => {
    stubWindow();
    stubEncoder({ refuseL1T1: true, refuse: ['vp09'] });
    opusCoders();
    vi.stubGlobal('AudioContext', class {});
    stubDataChannel();
    expect(isCallSupported()).toBe(true);
    const c = await callCapabilities();
    expect(c).toMatchObject({ supported: true, send: true, receive: true, capture: 'video-frame-callback', render: 'canvas-capture', datachannel: true });
    expect(c.encode).toEqual(['h264', 'vp8', 'av1']);
    expect(c.decode).toEqual(['h264', 'vp8', 'vp9']);
    // Firefox 153: Opus encodes and decodes; no processor for the microphone and no generator for playout, so Web Audio stands in.
    expect(c.audio).toEqual({ send: true, receive: true });
    expect(c.missing).toEqual(['codec: vp9 encoder', 'codec: av1 decoder']);
    // Without an AudioContext either, no audio, each direction named.
    vi.stubGlobal('AudioContext', undefined);
    const none = await callCapabilities();
    expect(none.audio).toEqual({ send: false, receive: false });
    expect(none.missing).toEqual(['codec: vp9 encoder', 'codec: av1 decoder', 'audio send: MediaStreamTrackProcessor or AudioContext', 'audio receive: MediaStreamTrackGenerator or AudioContext']);
  });

  it('a Chromium-like window: audio both ways when the processor, the generator and Opus are there; an Opus the coder refuses is named', async () => {
    stubWindow();
    stubEncoder();
    opusCoders();
    vi.stubGlobal('MediaStreamTrackProcessor', class {});
    vi.stubGlobal('MediaStreamTrackGenerator', class {});
    stubDataChannel();
    expect((await callCapabilities()).audio).toEqual({ send: true, receive: true });
    opusCoders({ decodes: false });
    const c = await callCapabilities();
    expect(c.audio).toEqual({ send: true, receive: false });
    expect(c.missing).toContain('codec: opus decoder');
  });
});

/** An RTCPeerConnection with createDataChannel (what the capability check looks for). */
function stubDataChannel() {
  vi.stubGlobal(
    'RTCPeerConnection',
    class {
      createDataChannel() {
        return {};
      }
    },
  );
}

/** AudioEncoder / AudioDecoder whose isConfigSupported answers for Opus (48 kHz mono) as told. */
function opusCoders(o: { encodes?: boolean; decodes?: boolean } = {}) {
  const coder = (ok: boolean) =>
    class {
      configure(): void {}
      static async isConfigSupported(c: { codec: string; sampleRate: number; numberOfChannels: number }) {
        return { supported: ok && c.codec === 'opus' && c.sampleRate === 48_000 && c.numberOfChannels === 1, config: c };
      }
    };
  vi.stubGlobal('AudioEncoder', coder(o.encodes ?? true));
  vi.stubGlobal('AudioDecoder', coder(o.decodes ?? true));
}

describe('CameraEncoder.start errors name what is missing', () => {
  it("no VideoEncoder: 'no-webcodecs'", async () => {
    const enc = new CameraEncoder(new FakeTrack() as never, { codec: 'h264', clock: new ManualClock(), bitrateBps: 1e6, onFrame: () => undefined });
    await expect(enc.start()).rejects.toMatchObject({ code: 'no-webcodecs' });
  });

  it("WebCodecs but no way to read the camera: 'no-capture', not a misleading no-webcodecs", async () => {
    stubEncoder();
    const enc = new CameraEncoder(new FakeTrack() as never, { codec: 'h264', clock: new ManualClock(), bitrateBps: 1e6, onFrame: () => undefined });
    const err = await enc.start().then(
      () => undefined,
      (e: unknown) => e as CodecError,
    );
    expect(err).toBeInstanceOf(CodecError);
    expect(err?.code).toBe('no-capture');
    expect(err?.message).toMatch(/MediaStreamTrackProcessor/);
    expect(err?.message).toMatch(/VideoFrame/);
  });
});
