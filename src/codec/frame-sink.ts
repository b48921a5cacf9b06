/**
 * Rendering of decoded video (browser only): decoded VideoFrames become a
 * MediaStreamTrack the app can play (`video.srcObject = new MediaStream([track])`),
 * through the best mechanism the browser has, chosen by feature detection
 * ({@link detectRenderMode}):
 * - 'track-generator': `MediaStreamTrackGenerator` (Chromium's MediaStreamTrack
 *   Insertable Streams), each frame written as it is;
 * - 'canvas-capture': each frame drawn on a detached `<canvas>` (2D
 *   `drawImage(VideoFrame)`, W3C WebCodecs §9.4 CanvasImageSource) whose
 *   `captureStream()` track (W3C Media Capture from DOM Elements §3) is the
 *   remote track (Firefox, Safari); the canvas follows the frames' size.
 */

/** How decoded frames become the remote MediaStreamTrack (see the module comment). */
export type RenderMode = 'track-generator' | 'canvas-capture';

/** Turns decoded frames into a MediaStreamTrack. */
export interface FrameSink {
  readonly mode: RenderMode;
  /** The rendered video; it lives until close(). */
  readonly track: MediaStreamTrack;
  /** Render one frame; the sink owns it from here on (and closes it). */
  write(frame: VideoFrame): void;
  /** End the track; later writes only close their frame. Idempotent. */
  close(): void;
}

type GeneratorCtor = new (o: { kind: 'video' }) => MediaStreamTrack & { writable: WritableStream<VideoFrame> };

function trackGenerator(): GeneratorCtor | undefined {
  return (globalThis as unknown as { MediaStreamTrackGenerator?: GeneratorCtor }).MediaStreamTrackGenerator;
}

/**
 * The render mode this browser supports, or undefined with the names of what
 * is missing. Synchronous and side-effect free.
 */
export function detectRenderMode(): { mode: RenderMode; missing: [] } | { mode: undefined; missing: string[] } {
  if (trackGenerator()) return { mode: 'track-generator', missing: [] };
  if (typeof document !== 'undefined' && typeof HTMLCanvasElement !== 'undefined' && 'captureStream' in HTMLCanvasElement.prototype) {
    return { mode: 'canvas-capture', missing: [] };
  }
  return { mode: undefined, missing: ['MediaStreamTrackGenerator', 'HTMLCanvasElement.captureStream (a window document)'] };
}

/**
 * A sink with the best render mode (or `mode` when given), or undefined when
 * the browser has none (decoded frames then only reach `onFrame` handlers).
 * @throws Error when the requested `mode` is not available here.
 */
export function createFrameSink(mode?: RenderMode): FrameSink | undefined {
  const want = mode ?? detectRenderMode().mode;
  if (want === undefined) return undefined;
  if (want === 'track-generator') {
    const Gen = trackGenerator();
    if (!Gen) throw new Error('render mode track-generator: MediaStreamTrackGenerator is not available');
    return new GeneratorSink(new Gen({ kind: 'video' }));
  }
  if (detectRenderMode().mode === undefined) throw new Error('render mode canvas-capture: HTMLCanvasElement.captureStream is not available');
  return new CanvasCaptureSink();
}

class GeneratorSink implements FrameSink {
  readonly mode = 'track-generator' as const;
  private readonly writer: WritableStreamDefaultWriter<VideoFrame>;
  private closed = false;

  constructor(readonly track: MediaStreamTrack & { writable: WritableStream<VideoFrame> }) {
    this.writer = track.writable.getWriter();
  }

  write(frame: VideoFrame): void {
    if (this.closed) {
      frame.close();
      return;
    }
    this.writer.write(frame).catch(() => frame.close());
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    void this.writer.close().catch(() => undefined);
  }
}

class CanvasCaptureSink implements FrameSink {
  readonly mode = 'canvas-capture' as const;
  readonly track: MediaStreamTrack;
  private readonly canvas: HTMLCanvasElement;
  private readonly ctx: CanvasRenderingContext2D;
  private closed = false;

  constructor() {
    this.canvas = document.createElement('canvas');
    // A small black picture until the first frame sets the size.
    this.canvas.width = 2;
    this.canvas.height = 2;
    const ctx = this.canvas.getContext('2d', { alpha: false });
    if (!ctx) throw new Error('render mode canvas-capture: no 2D canvas context');
    this.ctx = ctx;
    const track = this.canvas.captureStream().getVideoTracks()[0];
    if (!track) throw new Error('render mode canvas-capture: captureStream() gave no video track');
    this.track = track;
  }

  write(frame: VideoFrame): void {
    try {
      if (this.closed) return;
      const w = frame.displayWidth;
      const h = frame.displayHeight;
      if (w > 0 && h > 0 && (this.canvas.width !== w || this.canvas.height !== h)) {
        this.canvas.width = w;
        this.canvas.height = h;
      }
      this.ctx.drawImage(frame, 0, 0, this.canvas.width, this.canvas.height);
    } finally {
      frame.close();
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.track.stop();
  }
}
