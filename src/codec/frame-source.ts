/**
 * Camera capture (browser only): raw VideoFrames from a video
 * MediaStreamTrack, through the best mechanism the browser has, chosen by
 * feature detection ({@link detectCaptureMode}):
 * - 'track-processor': `MediaStreamTrackProcessor` (W3C MediaStreamTrack
 *   Insertable Streams; Chromium), every camera frame as the camera made it;
 * - 'video-frame-callback': the track plays in a muted, detached
 *   `HTMLVideoElement` and each newly presented frame becomes a `VideoFrame`
 *   (`new VideoFrame(video)`, W3C WebCodecs §9.4) from
 *   `requestVideoFrameCallback` (WICG video-rvfc; Firefox 132+, Safari);
 * - 'video-timer': the same element read on a timer at the track's frame
 *   rate, where requestVideoFrameCallback is missing.
 * When the browser will not make a VideoFrame from the element, the frame is
 * copied through a canvas first.
 *
 * The two element modes live in ./frame-source-element.ts, loaded with
 * `import()` only where MediaStreamTrackProcessor is missing (Firefox,
 * Safari): a Chromium page does not download them (issue 14, bundle size).
 */
import { CodecError } from './codec-config.js';

/** How camera frames are read, best first (see the module comment). */
export type CaptureMode = 'track-processor' | 'video-frame-callback' | 'video-timer';

/** The subset of a ReadableStreamDefaultReader<VideoFrame> the encoder uses; one read() at a time. */
export interface FrameReader {
  readonly mode: CaptureMode;
  /** The next frame (the caller closes it), or done once the track ended or cancel() was called. */
  read(): Promise<ReadableStreamReadResult<VideoFrame>>;
  /** Stop reading; a pending read() resolves done; frames not yet read are closed. Idempotent. */
  cancel(): Promise<void>;
}

type ProcessorCtor = new (o: { track: MediaStreamTrack }) => { readable: ReadableStream<VideoFrame> };

function trackProcessor(): ProcessorCtor | undefined {
  return (globalThis as unknown as { MediaStreamTrackProcessor?: ProcessorCtor }).MediaStreamTrackProcessor;
}

/**
 * The capture mode this browser supports, or undefined with the names of
 * what is missing. Synchronous and side-effect free.
 */
export function detectCaptureMode(): { mode: CaptureMode; missing: [] } | { mode: undefined; missing: string[] } {
  if (trackProcessor()) return { mode: 'track-processor', missing: [] };
  const missing: string[] = [];
  if (typeof VideoFrame === 'undefined') missing.push('VideoFrame (WebCodecs)');
  if (typeof document === 'undefined' || typeof HTMLVideoElement === 'undefined') missing.push('HTMLVideoElement (a window document)');
  if (typeof MediaStream === 'undefined') missing.push('MediaStream');
  if (missing.length > 0) return { mode: undefined, missing: ['MediaStreamTrackProcessor', ...missing] };
  return { mode: 'requestVideoFrameCallback' in HTMLVideoElement.prototype ? 'video-frame-callback' : 'video-timer', missing: [] };
}

/**
 * Open a reader of `track`'s frames with the best capture mode (or `mode`
 * when given, for tests and apps that want a specific one). Asynchronous
 * because the video element modes are loaded on demand.
 * @throws CodecError 'no-capture' (as a rejection) naming what is missing
 *   when no mode works here, or when the requested `mode` is not available.
 */
export async function openFrameReader(track: MediaStreamTrack, mode?: CaptureMode): Promise<FrameReader> {
  const detected = detectCaptureMode();
  if (!detected.mode) throw new CodecError('no-capture', `cannot read camera frames in this browser: missing ${detected.missing.join(', ')}`);
  const want = mode ?? detected.mode;
  if (want === 'track-processor') {
    const Processor = trackProcessor();
    if (!Processor) throw new CodecError('no-capture', 'capture mode track-processor: MediaStreamTrackProcessor is not available');
    const reader = new Processor({ track }).readable.getReader();
    return {
      mode: want,
      read: () => reader.read(),
      cancel: () => reader.cancel().catch(() => undefined),
    };
  }
  if (want === 'video-frame-callback' && !('requestVideoFrameCallback' in HTMLVideoElement.prototype)) {
    throw new CodecError('no-capture', 'capture mode video-frame-callback: HTMLVideoElement.requestVideoFrameCallback is not available');
  }
  const { VideoElementFrameReader } = await import('./frame-source-element.js');
  return new VideoElementFrameReader(track, want, (message) => new CodecError('no-capture', message));
}
