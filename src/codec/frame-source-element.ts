/**
 * The video element capture modes of ./frame-source.ts ('video-frame-callback'
 * and 'video-timer'), for browsers without MediaStreamTrackProcessor
 * (Firefox, Safari). Loaded with `import()` by `openFrameReader` only there.
 * It imports nothing at run time (its errors come from the caller's
 * `noCapture`), so a bundler makes it one chunk without splitting a shared one
 * out of the page's main chunk.
 */
import type { FrameReader } from './frame-source.js';

/** Without a presented frame for this many frame intervals, requestVideoFrameCallback counts as stalled and the timer captures. */
const STALL_INTERVALS = 3;

/**
 * Reads a track through a muted, detached video element: one VideoFrame per
 * presented frame (requestVideoFrameCallback) or per frame interval (timer).
 * Holds at most one unread frame: a newer one replaces it (the older is
 * closed), so a slow reader gets the latest picture and memory stays bounded.
 * In 'video-frame-callback' mode the timer still runs as a backstop and
 * captures while no frame was presented for {@link STALL_INTERVALS} intervals
 * (rendering paused, e.g. a hidden page).
 */
export class VideoElementFrameReader implements FrameReader {
  private readonly video: HTMLVideoElement;
  private running = true;
  private pending: VideoFrame | undefined;
  private waiter: ((r: ReadableStreamReadResult<VideoFrame>) => void) | undefined;
  private failure: Error | undefined;
  private failWaiter: ((e: Error) => void) | undefined;
  private rvfcHandle: number | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private lastPresented = -1;
  private lastCaptureMs = 0;
  private lastTimestampUs = 0;
  private readonly intervalMs: number;
  private copyCanvas: OffscreenCanvas | undefined;
  private readonly onEnded = () => this.finish();

  /**
   * @param noCapture builds the error a failed capture rejects `read()` with
   *   (./frame-source.ts passes CodecError 'no-capture').
   */
  constructor(
    private readonly track: MediaStreamTrack,
    readonly mode: 'video-frame-callback' | 'video-timer',
    private readonly noCapture: (message: string) => Error,
  ) {
    const fps = track.getSettings().frameRate;
    this.intervalMs = 1000 / Math.min(60, Math.max(1, fps !== undefined && Number.isFinite(fps) ? fps : 30));
    const video = document.createElement('video');
    video.muted = true;
    video.playsInline = true;
    video.autoplay = true;
    video.srcObject = new MediaStream([track]);
    this.video = video;
    track.addEventListener('ended', this.onEnded);
    video.play().catch((e: unknown) => this.fail(this.noCapture(`capture mode ${mode}: the video element does not play the track: ${String((e as Error)?.message ?? e)}`)));
    this.lastCaptureMs = performance.now();
    if (mode === 'video-frame-callback') {
      const onFrame = (nowMs: number, metadata: VideoFrameCallbackMetadata) => {
        if (!this.running) return;
        // The callback can repeat a frame already presented: one VideoFrame per new frame.
        const n = metadata.presentedFrames ?? this.lastPresented + 1;
        if (n !== this.lastPresented) {
          this.lastPresented = n;
          this.capture(nowMs);
        }
        this.rvfcHandle = video.requestVideoFrameCallback(onFrame);
      };
      this.rvfcHandle = video.requestVideoFrameCallback(onFrame);
    }
    this.timer = setInterval(() => {
      const now = performance.now();
      if (this.mode === 'video-timer' || now - this.lastCaptureMs >= STALL_INTERVALS * this.intervalMs) this.capture(now);
    }, this.intervalMs);
  }

  private capture(nowMs: number): void {
    const v = this.video;
    if (!this.running || v.readyState < 2 || v.videoWidth === 0 || v.videoHeight === 0) return;
    this.lastCaptureMs = nowMs;
    // Strictly increasing µs timestamps: the encoder keys its capture times and frame-rate cap on them.
    const ts = Math.max(this.lastTimestampUs + 1, Math.round((performance.timeOrigin + nowMs) * 1000));
    this.lastTimestampUs = ts;
    let frame: VideoFrame;
    try {
      frame = new VideoFrame(v, { timestamp: ts });
    } catch {
      try {
        frame = this.copyThroughCanvas(ts);
      } catch (e) {
        this.fail(this.noCapture(`capture mode ${this.mode}: no VideoFrame from the video element: ${String((e as Error)?.message ?? e)}`));
        return;
      }
    }
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      this.failWaiter = undefined;
      w({ done: false, value: frame });
      return;
    }
    this.pending?.close();
    this.pending = frame;
  }

  private copyThroughCanvas(ts: number): VideoFrame {
    const { videoWidth: w, videoHeight: h } = this.video;
    if (!this.copyCanvas || this.copyCanvas.width !== w || this.copyCanvas.height !== h) this.copyCanvas = new OffscreenCanvas(w, h);
    const ctx = this.copyCanvas.getContext('2d');
    if (!ctx) throw new Error('no 2D context');
    ctx.drawImage(this.video, 0, 0, w, h);
    return new VideoFrame(this.copyCanvas, { timestamp: ts });
  }

  read(): Promise<ReadableStreamReadResult<VideoFrame>> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.pending) {
      const value = this.pending;
      this.pending = undefined;
      return Promise.resolve({ done: false, value });
    }
    if (!this.running) return Promise.resolve({ done: true, value: undefined });
    if (this.waiter) return Promise.reject(new Error('FrameReader: one read() at a time'));
    return new Promise((resolve, reject) => {
      this.waiter = resolve;
      this.failWaiter = reject;
    });
  }

  private fail(e: Error): void {
    if (!this.running) return;
    this.failure = e;
    const f = this.failWaiter;
    this.waiter = undefined;
    this.failWaiter = undefined;
    this.finish();
    f?.(e);
  }

  private finish(): void {
    if (!this.running) return;
    this.running = false;
    if (this.rvfcHandle !== undefined) this.video.cancelVideoFrameCallback(this.rvfcHandle);
    if (this.timer !== undefined) clearInterval(this.timer);
    this.track.removeEventListener('ended', this.onEnded);
    this.video.pause();
    this.video.srcObject = null;
    this.pending?.close();
    this.pending = undefined;
    const w = this.waiter;
    this.waiter = undefined;
    this.failWaiter = undefined;
    w?.({ done: true, value: undefined });
  }

  cancel(): Promise<void> {
    this.finish();
    return Promise.resolve();
  }
}
