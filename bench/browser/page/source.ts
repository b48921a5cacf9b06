/**
 * Bench page, sender side: the source frames (a Y4M file read by HTTP range
 * requests from the bench server, or the synthetic pattern) and the video
 * track built from them with a frame-id barcode drawn into every frame.
 * The receiver page uses the same sources to get reference frames for PSNR.
 */
import { drawBarcodeI420 } from '../barcode.js';
import { SYNTHETIC_PERIOD, allocI420, syntheticI420 } from '../synthetic.js';
import { parseY4mHeader, readY4mFrameAt, y4mFrameCount, y4mFrameOffset } from '../y4m.js';
import type { I420Frame, Y4mHeader } from '../y4m.js';

/** Random access to source frames; frame ids map to index `id % frameCount`. */
export interface FrameSource {
  readonly width: number;
  readonly height: number;
  readonly frameCount: number;
  /** The frame if already loaded (starts loading it otherwise). May reuse one buffer: copy before the next call. */
  peek(index: number): I420Frame | undefined;
  /** Start loading a frame that will be needed soon (no-op for generated sources). */
  prefetch(index: number): void;
  /** Load a whole frame. */
  load(index: number): Promise<I420Frame>;
  /** Load only the luma plane. */
  loadY(index: number): Promise<Uint8Array>;
}

async function fetchRange(url: string, start: number, end: number): Promise<{ bytes: Uint8Array; total: number }> {
  const res = await fetch(url, { headers: { Range: `bytes=${start}-${end}` } });
  if (res.status !== 206 && res.status !== 200) throw new Error(`fetch ${url} bytes ${start}-${end}: HTTP ${res.status}`);
  const total = Number(/\/(\d+)$/.exec(res.headers.get('Content-Range') ?? '')?.[1] ?? res.headers.get('Content-Length') ?? 0);
  let bytes = new Uint8Array(await res.arrayBuffer());
  if (res.status === 200) bytes = bytes.subarray(start, end + 1);
  return { bytes, total };
}

const CHUNK_FRAMES = 8;
const MAX_CHUNKS = 6;

/** A Y4M file served with range support; caches a few chunks of 8 frames. */
export class Y4mRemoteSource implements FrameSource {
  private readonly chunks = new Map<number, Promise<Uint8Array>>();
  private readonly ready = new Map<number, Uint8Array>();
  private constructor(
    private readonly url: string,
    readonly header: Y4mHeader,
    readonly frameCount: number,
  ) {}

  get width(): number {
    return this.header.width;
  }
  get height(): number {
    return this.header.height;
  }

  /** @throws Error when the file cannot be fetched or parsed, or holds no frame. */
  static async open(url: string): Promise<Y4mRemoteSource> {
    const { bytes, total } = await fetchRange(url, 0, 4095);
    const header = parseY4mHeader(bytes);
    const count = y4mFrameCount(header, total);
    if (count < 1) throw new Error(`${url}: no whole frame`);
    return new Y4mRemoteSource(url, header, count);
  }

  private chunk(c: number): Promise<Uint8Array> {
    let p = this.chunks.get(c);
    if (!p) {
      const first = c * CHUNK_FRAMES;
      const last = Math.min(this.frameCount, first + CHUNK_FRAMES);
      const start = y4mFrameOffset(this.header, first);
      const end = y4mFrameOffset(this.header, last) - 1;
      p = fetchRange(this.url, start, end).then(({ bytes }) => {
        this.ready.set(c, bytes);
        return bytes;
      });
      p.catch(() => this.chunks.delete(c));
      this.chunks.set(c, p);
      while (this.chunks.size > MAX_CHUNKS) {
        const oldest = this.chunks.keys().next().value as number;
        this.chunks.delete(oldest);
        this.ready.delete(oldest);
      }
    }
    return p;
  }

  private frameIn(bytes: Uint8Array, index: number): I420Frame {
    const c = Math.floor(index / CHUNK_FRAMES);
    const off = y4mFrameOffset(this.header, index) - y4mFrameOffset(this.header, c * CHUNK_FRAMES);
    return readY4mFrameAt(bytes, this.header, off).frame;
  }

  peek(index: number): I420Frame | undefined {
    const i = index % this.frameCount;
    const c = Math.floor(i / CHUNK_FRAMES);
    const bytes = this.ready.get(c);
    if (bytes) return this.frameIn(bytes, i);
    void this.chunk(c).catch(() => undefined);
    return undefined;
  }

  prefetch(index: number): void {
    const i = index % this.frameCount;
    const c = Math.floor(i / CHUNK_FRAMES);
    if (!this.chunks.has(c)) void this.chunk(c).catch(() => undefined);
  }

  async load(index: number): Promise<I420Frame> {
    const i = index % this.frameCount;
    return this.frameIn(await this.chunk(Math.floor(i / CHUNK_FRAMES)), i);
  }

  async loadY(index: number): Promise<Uint8Array> {
    const i = index % this.frameCount;
    const start = y4mFrameOffset(this.header, i) + 6; // "FRAME\n"
    const { bytes } = await fetchRange(this.url, start, start + this.header.ySize - 1);
    if (bytes.length !== this.header.ySize) throw new Error(`Y plane of frame ${i}: got ${bytes.length} bytes`);
    return bytes;
  }
}

/** The synthetic pattern (bench/browser/synthetic.ts). */
export class SyntheticSource implements FrameSource {
  readonly frameCount = SYNTHETIC_PERIOD;
  private readonly scratch: I420Frame;
  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    this.scratch = allocI420(width, height);
  }
  peek(index: number): I420Frame {
    return syntheticI420(index % this.frameCount, this.width, this.height, this.scratch);
  }
  prefetch(): void {
    /* generated on demand */
  }
  async load(index: number): Promise<I420Frame> {
    return syntheticI420(index % this.frameCount, this.width, this.height);
  }
  async loadY(index: number): Promise<Uint8Array> {
    return syntheticI420(index % this.frameCount, this.width, this.height).y;
  }
}

export async function openSource(q: URLSearchParams): Promise<FrameSource> {
  const video = q.get('video');
  if (video) return Y4mRemoteSource.open(video);
  return new SyntheticSource(Number(q.get('width') ?? 640), Number(q.get('height') ?? 480));
}

/** Colour space of the frames we build (BT.601 limited range, what libyuv's I420<->RGB defaults use). */
const COLOR_SPACE: VideoColorSpaceInit = { primaries: 'smpte170m', transfer: 'smpte170m', matrix: 'smpte170m', fullRange: false };

export interface SourceTrack {
  track: MediaStreamTrack;
  /** Frames drawn and ticks skipped because the source frame was not loaded yet. */
  counters(): { drawn: number; starved: number };
  stop(): void;
}

/**
 * Start drawing source frames with their barcode at `fps` into a track.
 * `kind` 'generator' (the bench default): a MediaStreamTrackGenerator fed
 * I420 VideoFrames directly, so both encoders see the exact source pixels.
 * 'canvas': drawImage() into a canvas and canvas.captureStream(fps); Chromium
 * then converts RGB back to YUV inside each encoder's capture path, which on
 * our Chromium caps the measured luma PSNR near 26-27 dB (see the bench's
 * sourceCheck and lumaFit diagnostics), so PSNR is only meaningful with
 * 'generator'. `onDraw(id, tMs)` gets each frame id with its draw time
 * on the host epoch clock (performance.timeOrigin + performance.now()).
 */
export function startSourceTrack(source: FrameSource, opts: { fps: number; kind: 'canvas' | 'generator'; onDraw: (id: number, tMs: number) => void }): SourceTrack {
  const { width, height } = source;
  const cw = Math.ceil(width / 2);
  const ch = Math.ceil(height / 2);
  const buf = new Uint8Array(width * height + 2 * cw * ch);
  const y = buf.subarray(0, width * height);
  const u = buf.subarray(width * height, width * height + cw * ch);
  const v = buf.subarray(width * height + cw * ch);
  let track: MediaStreamTrack;
  let emit: (vf: VideoFrame) => void;
  if (opts.kind === 'generator') {
    const Gen = (globalThis as unknown as { MediaStreamTrackGenerator: new (o: { kind: 'video' }) => MediaStreamTrack & { writable: WritableStream<VideoFrame> } }).MediaStreamTrackGenerator;
    const gen = new Gen({ kind: 'video' });
    const writer = gen.writable.getWriter();
    track = gen;
    emit = (vf) => {
      writer.write(vf).catch(() => vf.close());
    };
  } else {
    const canvas = document.createElement('canvas');
    canvas.width = width;
    canvas.height = height;
    canvas.style.display = 'none';
    document.body.appendChild(canvas);
    const ctx = canvas.getContext('2d', { alpha: false })!;
    track = canvas.captureStream(opts.fps).getVideoTracks()[0];
    emit = (vf) => {
      ctx.drawImage(vf, 0, 0, width, height);
      vf.close();
    };
  }
  const intervalMs = 1000 / opts.fps;
  const t0 = performance.now();
  let tick = 0;
  let id = 0;
  let starved = 0;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const step = () => {
    if (stopped) return;
    const now = performance.now();
    // Never burst to catch up: skip ticks we are more than one interval late for.
    const due = Math.floor((now - t0) / intervalMs);
    if (due > tick + 1) tick = due;
    const f = source.peek(id);
    if (f) {
      y.set(f.y);
      u.set(f.u);
      v.set(f.v);
      drawBarcodeI420(y, width, height, id, { u, v, uvStride: cw });
      const tMs = performance.timeOrigin + performance.now();
      const vf = new VideoFrame(buf, {
        format: 'I420',
        codedWidth: width,
        codedHeight: height,
        timestamp: Math.round(tick * intervalMs * 1000),
        colorSpace: COLOR_SPACE,
      });
      emit(vf);
      opts.onDraw(id, tMs);
      id++;
    } else {
      starved++;
    }
    for (let k = 1; k <= 12; k++) source.prefetch(id + k);
    tick++;
    timer = setTimeout(step, Math.max(0, t0 + tick * intervalMs - performance.now()));
  };
  timer = setTimeout(step, 0);
  return {
    track,
    counters: () => ({ drawn: id, starved }),
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      track.stop();
    },
  };
}
