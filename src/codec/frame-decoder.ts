/**
 * WebCodecs decoder (browser only): decodes frames in decode order, renders
 * them into a MediaStreamTrack (./frame-sink.ts: MediaStreamTrackGenerator,
 * else a canvas' captureStream()) and hands VideoFrames to the app, and asks
 * for a key frame when it cannot go on.
 *
 * Source: W3C WebCodecs (VideoDecoder, optimizeForLatency; a decoder error
 * closes the decoder, the next key frame re-creates it).
 */
import { createFrameSink } from './frame-sink.js';
import type { FrameSink, RenderMode } from './frame-sink.js';

/** One encoded frame handed to {@link FrameDecoder.decode}, in decode order. */
export interface EncodedFrameIn {
  streamId: number;
  frameId: number;
  keyFrame: boolean;
  /** Capture time (µs, sender clock). */
  captureUs: number;
  data: Uint8Array;
}

/** {@link FrameDecoder.stats}: counts since the decoder was made. */
export interface FrameDecoderStats {
  /** Frames out of the decoder. */
  decoded: number;
  /** Decoder errors (each recovered at the next key frame). */
  errors: number;
  /** The decoder's decodeQueueSize now (frames). */
  queue: number;
  /** Frames held until the stream's codec was known. */
  held: number;
  /** How frames reach the remote track: 'track-generator' | 'canvas-capture' | 'none' (see {@link FrameDecoder.renderMode}). */
  renderMode: RenderMode | 'none';
  /** Decoded frames the render sink could not draw. */
  renderErrors: number;
  /** Display size of the last decoded frame (px); undefined before the first. */
  frameWidth: number | undefined;
  frameHeight: number | undefined;
}

export interface DecodedFrameInfo {
  streamId: number;
  frameId: number;
  captureUs: number;
  /** Encoded size of the frame (bytes), for goodput. */
  bytes: number;
}

/**
 * Decodes frames in decode order and renders them into a MediaStreamTrack
 * (render mode 'track-generator' or 'canvas-capture', whichever the browser
 * has; ./frame-sink.ts), else hands them only to `onFrame`. The app gets
 * the track from {@link FrameDecoder.track}.
 */
export class FrameDecoder {
  private decoder: VideoDecoder | undefined;
  private configuredCodec: string | undefined;
  private needKey = true;
  /** Last codec asked for, kept across decoder errors. */
  private codec: string | undefined;
  private readonly meta = new Map<number, DecodedFrameInfo>();
  /** Display size of the last decoded frame (px). */
  private lastSize: { width: number; height: number } | undefined;
  private readonly sink: FrameSink | undefined;
  private renderErrors = 0;
  private decodedCount = 0;
  private errors = 0;
  /**
   * Frames that arrived before the stream's codec was known (the stream-info
   * message travels separately from the media and can come second): held from
   * the newest key frame on, at most {@link FrameDecoder.MAX_PENDING} frames, and
   * decoded as soon as `configure` names the codec.
   */
  private pending: EncodedFrameIn[] = [];
  private heldFrames = 0;
  /** Frames held before the codec was known, at most (about 3 s at 30 fps). */
  static readonly MAX_PENDING = 90;

  constructor(
    private readonly opts: {
      onDecoded: (info: DecodedFrameInfo) => void;
      /** The decoder needs a key frame (error or a delta before any key). */
      onNeedKeyframe: (reason: string) => void;
      /** A decoder error (it recovers by itself at the next key frame). */
      onError?: (err: Error) => void;
      /** Optional: gets each VideoFrame before it is rendered; must not close it. */
      onFrame?: (frame: VideoFrame, info: DecodedFrameInfo) => void;
      /**
       * Render mode (default: the best the browser has, ./frame-sink.ts, or
       * none); 'none' renders nothing (frames only reach `onFrame`). A mode
       * given here and not available throws Error from the constructor.
       */
      renderMode?: RenderMode | 'none';
    },
  ) {
    // No render mode in this browser: decoding still works, frames reach only onFrame.
    if (opts.renderMode === 'none') this.sink = undefined;
    else if (opts.renderMode !== undefined) this.sink = createFrameSink(opts.renderMode);
    else {
      try {
        this.sink = createFrameSink();
      } catch {
        // The detected mode failed to start (e.g. no 2D context): no rendering, decoding goes on.
        this.sink = undefined;
      }
    }
  }

  /** The rendered remote video, when the browser has a render mode (undefined otherwise). */
  get track(): MediaStreamTrack | undefined {
    return this.sink?.track;
  }

  /** How decoded frames reach {@link FrameDecoder.track}: 'track-generator' | 'canvas-capture' | 'none'. */
  get renderMode(): RenderMode | 'none' {
    return this.sink?.mode ?? 'none';
  }

  /**
   * (Re)configure for a codec string; a change resets the decoder and waits for
   * a key frame. The first call also decodes the frames held while the codec
   * was unknown.
   */
  configure(codec: string): void {
    const held = this.pending;
    this.pending = [];
    this.codec = codec;
    if (codec !== this.configuredCodec || this.decoder?.state !== 'configured') this.openDecoder(codec);
    for (const f of held) this.decode(f);
  }

  private openDecoder(codec: string): void {
    this.reset();
    this.decoder = new VideoDecoder({
      output: (f) => this.onOutput(f),
      error: (e) => {
        // The decoder is closed now; the next key frame re-creates it (see decode()).
        this.errors++;
        this.needKey = true;
        this.configuredCodec = undefined;
        this.opts.onError?.(e instanceof Error ? e : new Error(String(e)));
        this.opts.onNeedKeyframe('decoder-error');
      },
    });
    this.decoder.configure({ codec, optimizeForLatency: true });
    this.configuredCodec = codec;
    this.needKey = true;
  }

  private reset(): void {
    if (this.decoder && this.decoder.state !== 'closed') this.decoder.close();
    this.decoder = undefined;
    this.meta.clear();
  }

  /** Decode one frame (in decode order). Returns false when it was skipped (no decoder or waiting for a key frame). */
  decode(frame: EncodedFrameIn): boolean {
    if (this.codec === undefined) {
      // The codec is not known yet: hold the frame (from a key frame on) instead of losing it.
      if (frame.keyFrame) this.pending = [];
      if (this.pending.length > 0 || frame.keyFrame) {
        if (this.pending.length >= FrameDecoder.MAX_PENDING) this.pending = [];
        else {
          this.pending.push(frame);
          this.heldFrames++;
        }
      }
      return false;
    }
    // After a decoder error (the decoder closes itself), start again at the next key frame.
    if (this.decoder?.state !== 'configured' && this.codec && frame.keyFrame) this.configure(this.codec);
    const dec = this.decoder;
    if (dec?.state !== 'configured') {
      this.opts.onNeedKeyframe('decoder-not-ready');
      return false;
    }
    if (this.needKey && !frame.keyFrame) {
      // Without this the decoder would wait for a key frame nobody asked for.
      this.opts.onNeedKeyframe('decoder-waiting-for-key');
      return false;
    }
    this.needKey = false;
    if (this.meta.size > 256) this.meta.clear();
    this.meta.set(frame.frameId, { streamId: frame.streamId, frameId: frame.frameId, captureUs: frame.captureUs, bytes: frame.data.byteLength });
    try {
      dec.decode(new EncodedVideoChunk({ type: frame.keyFrame ? 'key' : 'delta', timestamp: frame.frameId, data: frame.data }));
      return true;
    } catch {
      this.errors++;
      this.needKey = true;
      this.opts.onNeedKeyframe('decode-threw');
      return false;
    }
  }

  private onOutput(frame: VideoFrame): void {
    const info = this.meta.get(frame.timestamp);
    this.meta.delete(frame.timestamp);
    if (info) {
      this.decodedCount++;
      this.lastSize = { width: frame.displayWidth, height: frame.displayHeight };
      this.opts.onDecoded(info);
      this.opts.onFrame?.(frame, info);
    }
    if (!this.sink) {
      frame.close();
      return;
    }
    try {
      this.sink.write(frame);
    } catch (e) {
      // A frame that cannot be drawn is not shown; decoding goes on.
      this.renderErrors++;
      if (this.renderErrors <= 3) this.opts.onError?.(new Error(`render (${this.sink.mode}): ${String((e as Error)?.message ?? e)}`));
    }
  }

  stats(): FrameDecoderStats {
    return {
      decoded: this.decodedCount,
      errors: this.errors,
      queue: this.decoder?.decodeQueueSize ?? 0,
      held: this.heldFrames,
      renderMode: this.renderMode,
      renderErrors: this.renderErrors,
      frameWidth: this.lastSize?.width,
      frameHeight: this.lastSize?.height,
    };
  }

  close(): void {
    this.reset();
    this.sink?.close();
  }
}
