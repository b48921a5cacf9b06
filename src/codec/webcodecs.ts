/**
 * WebCodecs glue (browser only): codec strings, codec choice with a real test
 * encode, a camera encoder fed by MediaStreamTrackProcessor, and a decoder that
 * renders through MediaStreamTrackGenerator (or hands VideoFrames to the app).
 *
 * Sources: W3C WebCodecs (VideoEncoderConfig, latencyMode 'realtime',
 * avc.format 'annexb'), w3c/webcodecs samples (capped encode queue, drop and
 * force a key frame when the encoder falls behind). Resolution and frame-rate
 * adaptation: src/adapt (WebRTC degradation preferences, libwebrtc
 * call/adaptation/video_stream_adapter.cc).
 */
import type { Clock } from '../core/clock.js';
import { MIN_ENCODER_BITRATE_BPS, type DegradationPreference } from '../adapt/ladder.js';
import { EncodeUsageMeter, FrameRateLimiter, VideoAdapter, type AdaptationDecision, type DegradationReason, type VideoAdapterOptions } from '../adapt/video-adapter.js';
import type { CodecName } from '../core/types.js';
import type { EncodedFrameInput } from '../wire/packetization.js';
import { DEFAULT_TEMPORAL_LAYERS, TemporalRefTracker, temporalPatternLayer } from './temporal-layers.js';

export { DEFAULT_TEMPORAL_LAYERS, TemporalRefTracker } from './temporal-layers.js';

/** WebCodecs codec string for a codec at a resolution. */
export function codecString(codec: CodecName, width: number, height: number): string {
  const pixels = width * height;
  switch (codec) {
    case 'h264':
      // Constrained Baseline; level 3.1 up to 1280x720, 4.0 up to 2048x1088, else 5.1.
      return pixels <= 1280 * 720 ? 'avc1.42e01f' : pixels <= 2048 * 1088 ? 'avc1.42e028' : 'avc1.42e033';
    case 'vp8':
      return 'vp8';
    case 'vp9':
      return 'vp09.00.31.08';
    case 'av1':
      return pixels <= 1280 * 720 ? 'av01.0.05M.08' : 'av01.0.08M.08';
    default:
      throw new CodecError('unknown-codec', `unknown codec ${String(codec)}`);
  }
}

export type CodecErrorCode = 'unknown-codec' | 'unsupported' | 'test-encode-failed' | 'no-webcodecs' | 'bad-track';

/** Errors of the codec layer, with a stable code. */
export class CodecError extends Error {
  constructor(
    readonly code: CodecErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'CodecError';
  }
}

/** W3C WebRTC-SVC scalabilityMode for `layers` temporal layers of one spatial layer: 'L1T1' | 'L1T2' | 'L1T3'. */
export function scalabilityModeFor(layers: number): string {
  return `L1T${layers}`;
}

/**
 * Encoder configuration for a codec (realtime, Annex B for H.264).
 * `temporalLayers` > 1 sets scalabilityMode L1T2/L1T3 (check support with
 * {@link pickTemporalLayers}); 1 keeps the codec's default (L1T1 for VP9/AV1).
 */
export function encoderConfig(codec: CodecName, width: number, height: number, bitrateBps: number, fps: number, temporalLayers = 1): VideoEncoderConfig {
  const cfg: VideoEncoderConfig = {
    codec: codecString(codec, width, height),
    width,
    height,
    bitrate: Math.max(MIN_ENCODER_BITRATE_BPS, Math.round(bitrateBps)),
    framerate: fps,
    latencyMode: 'realtime',
  };
  if (codec === 'h264') (cfg as VideoEncoderConfig & { avc: { format: 'annexb' } }).avc = { format: 'annexb' };
  if (temporalLayers > 1) (cfg as VideoEncoderConfig & { scalabilityMode: string }).scalabilityMode = scalabilityModeFor(temporalLayers);
  else if (codec === 'vp9' || codec === 'av1') (cfg as VideoEncoderConfig & { scalabilityMode: string }).scalabilityMode = 'L1T1';
  return cfg;
}

/**
 * The most temporal layers, at most `wanted` (1..3), that the browser's
 * encoder accepts for `cfg` (`VideoEncoder.isConfigSupported` with
 * scalabilityMode L1T3, then L1T2); 1 when none is (or the check throws).
 * Debian's Chromium 156 (headless, software codecs): H.264 (OpenH264),
 * VP8/VP9 (libvpx) and AV1 (libaom) all accept L1T2 and L1T3 and report
 * `svc.temporalLayerId` in the patterns 0 1 and 0 2 1 2.
 */
export async function pickTemporalLayers(cfg: VideoEncoderConfig, wanted: number): Promise<number> {
  for (let n = Math.min(3, Math.floor(wanted)); n > 1; n--) {
    try {
      const sup = await VideoEncoder.isConfigSupported({ ...cfg, scalabilityMode: scalabilityModeFor(n) } as VideoEncoderConfig);
      if (sup.supported) return n;
    } catch {
      // An unknown mode may throw instead of answering: try fewer layers.
    }
  }
  return 1;
}

/**
 * Check that the browser really encodes and decodes `codec` at this size:
 * isConfigSupported first, then one real test encode (some browsers claim
 * support and then fail).
 * @throws CodecError 'no-webcodecs' | 'unsupported' | 'test-encode-failed'
 */
export async function probeCodec(codec: CodecName, width: number, height: number): Promise<VideoEncoderConfig> {
  if (typeof VideoEncoder === 'undefined' || typeof VideoDecoder === 'undefined') throw new CodecError('no-webcodecs', 'WebCodecs is not available in this browser');
  const cfg = encoderConfig(codec, width, height, 1_000_000, 30);
  const sup = await VideoEncoder.isConfigSupported(cfg);
  if (!sup.supported) throw new CodecError('unsupported', `encoder does not support ${cfg.codec} at ${width}x${height}`);
  const dsup = await VideoDecoder.isConfigSupported({ codec: cfg.codec });
  if (!dsup.supported) throw new CodecError('unsupported', `decoder does not support ${cfg.codec}`);
  const got = await new Promise<boolean>((resolve) => {
    let ok = false;
    const enc = new VideoEncoder({
      output: () => {
        ok = true;
      },
      error: () => resolve(false),
    });
    try {
      enc.configure(cfg);
      const canvas = new OffscreenCanvas(width, height);
      const ctx = canvas.getContext('2d');
      if (ctx) ctx.fillRect(0, 0, width / 2, height / 2);
      const frame = new VideoFrame(canvas, { timestamp: 0 });
      enc.encode(frame, { keyFrame: true });
      frame.close();
      enc.flush().then(
        () => {
          enc.close();
          resolve(ok);
        },
        () => resolve(false),
      );
    } catch {
      resolve(false);
    }
  });
  if (!got) throw new CodecError('test-encode-failed', `test encode with ${cfg.codec} produced no output`);
  return cfg;
}

export interface CameraEncoderOptions {
  codec: CodecName;
  streamId?: number;
  clock: Clock;
  /** Initial bitrate (bps). */
  bitrateBps: number;
  /** Frames waiting in the encoder beyond which input frames are dropped (default 2). */
  maxEncodeQueue?: number;
  /**
   * Asked for every camera frame: false skips it without encoding (e.g. no
   * path is up yet); the first frame encoded afterwards is a key frame.
   */
  shouldEncode?: () => boolean;
  /**
   * Asked for every camera frame that would be encoded, with whether it
   * would be a key frame: true drops it (no reference breaks, no key frame
   * forced), e.g. `(key, layer) => sender.shouldDropFrame(key, layer)` when the path
   * queues hold more than the frame budget (issue 10 item 2). `temporalLayer`:
   * with temporal layers, the layer the frame would be encoded in (the L1T2 /
   * L1T3 pattern position since the last key frame), else undefined.
   */
  dropBeforeEncode?: (keyFrame: boolean, temporalLayer?: number) => boolean;
  /** Force a key frame at least this often (ms); default: only when asked. */
  keyframeIntervalMs?: number;
  /**
   * Temporal layers (1..3; default {@link DEFAULT_TEMPORAL_LAYERS} = 1, none): 2 asks
   * the encoder for scalabilityMode L1T2, 3 for L1T3, each only when
   * `VideoEncoder.isConfigSupported` accepts it (else fewer, down to 1 = no
   * layering, the behaviour before). With layers, a lost upper-layer frame
   * needs no key frame (the receiver skips it) and the sender can give the
   * base layer the better path and drop upper-layer frames first.
   */
  temporalLayers?: number;
  /**
   * What to give up when the bitrate or the encoder cannot keep up (W3C
   * `RTCRtpSendParameters.degradationPreference`; default 'maintain-framerate'
   * as libwebrtc for camera video, see DEFAULT_DEGRADATION_PREFERENCE):
   * 'maintain-framerate' lowers the resolution, 'maintain-resolution' the
   * frame rate, 'balanced' both (frame rate first), and
   * 'maintain-framerate-and-resolution' neither. See src/adapt.
   */
  degradationPreference?: DegradationPreference;
  /** Tuning of the adaptation (hold times, thresholds; src/adapt/video-adapter.ts). */
  adaptation?: Omit<VideoAdapterOptions, 'degradationPreference'>;
  onFrame: (frame: EncodedFrameInput) => void;
  onError?: (err: Error) => void;
}

export interface CameraEncoderStats {
  framesIn: number;
  framesEncoded: number;
  framesDroppedBeforeEncode: number;
  /** Camera frames not encoded because `shouldEncode` said no. */
  framesSkipped: number;
  keyFrames: number;
  /** Bitrate the encoder is configured with (bps). */
  bitrateBps: number;
  /** Size of the encoded frames (px), after adaptation. */
  width: number;
  height: number;
  /** Frames encoded per second, measured over the last second (fps). */
  frameRate: number;
  /** Camera frame rate as the track reports it (fps). */
  fps: number;
  /** Frame-rate cap of the adaptation (fps). */
  maxFps: number;
  /** Why the video is degraded now (W3C qualityLimitationReason): 'none' | 'bandwidth' | 'cpu'. */
  degradationReason: DegradationReason;
  /** Adaptation steps taken so far (resolution or frame rate, either direction). */
  adaptationChanges: number;
  degradationPreference: DegradationPreference;
  /** Camera frames dropped to meet the frame-rate cap. */
  framesDroppedByFpsCap: number;
  /** Camera frames dropped because `dropBeforeEncode` said so (path queues too long). */
  framesDroppedByPushback: number;
  /** Encode time / frame interval (fraction; overuse_frame_detector.cc), undefined until measured. */
  encodeUsage: number | undefined;
  /** Temporal layers in use (1 = none; 2 = L1T2, 3 = L1T3), after the support check. */
  temporalLayers: number;
  /** Encoded frames per temporal layer id (index = layer). */
  framesPerLayer: number[];
}

/**
 * Reads a camera MediaStreamTrack with MediaStreamTrackProcessor and encodes it.
 * Frame ids start at 1 and increase by one per encoded frame.
 */
export class CameraEncoder {
  private encoder: VideoEncoder | undefined;
  private reader: ReadableStreamDefaultReader<VideoFrame> | undefined;
  private running = false;
  private forceKey = true;
  private lastKeyUs = -Infinity;
  private frameId = 0;
  private readonly refs = new TemporalRefTracker();
  /** Frames submitted since the last key frame submitted (the temporal pattern position of the next one). */
  private layerSlot = 0;
  private cfg: VideoEncoderConfig | undefined;
  private readonly captureTimes = new Map<number, number>();
  private readonly s: CameraEncoderStats;
  /** Camera size (px), from the track settings, then from the first frame. */
  private camera: { width: number; height: number; fps: number };
  private readonly adapter: VideoAdapter;
  private readonly limiter = new FrameRateLimiter();
  private readonly usage = new EncodeUsageMeter();
  private targetBps: number;
  private adapt: AdaptationDecision;
  private sawFrame = false;
  private scaler: FrameScaler | undefined;
  /** Output times (µs) of the last second's encoded frames, for `frameRate`. */
  private readonly outTimes: number[] = [];

  constructor(
    private readonly track: MediaStreamTrack,
    private readonly opts: CameraEncoderOptions,
  ) {
    const tl = opts.temporalLayers;
    if (tl !== undefined && !(Number.isInteger(tl) && tl >= 1 && tl <= 3)) throw new RangeError(`CameraEncoder: temporalLayers must be 1, 2 or 3, got ${String(tl)}`);
    const st = track.getSettings();
    this.camera = { width: (st.width ?? 640) & ~1, height: (st.height ?? 480) & ~1, fps: st.frameRate ?? 30 };
    this.targetBps = opts.bitrateBps;
    this.adapter = new VideoAdapter(this.camera, { ...opts.adaptation, degradationPreference: opts.degradationPreference });
    this.adapt = this.adapter.current();
    this.s = {
      framesIn: 0,
      framesEncoded: 0,
      framesDroppedBeforeEncode: 0,
      framesSkipped: 0,
      keyFrames: 0,
      bitrateBps: opts.bitrateBps,
      width: this.camera.width,
      height: this.camera.height,
      frameRate: 0,
      fps: this.camera.fps,
      maxFps: this.camera.fps,
      degradationReason: 'none',
      adaptationChanges: 0,
      degradationPreference: this.adapter.degradationPreference,
      framesDroppedByFpsCap: 0,
      framesDroppedByPushback: 0,
      encodeUsage: undefined,
      temporalLayers: 1,
      framesPerLayer: [],
    };
  }

  /** Camera size and frame rate (as the track reports them; the encoded size may be smaller, see stats()). */
  get settings(): { width: number; height: number; fps: number } {
    return { ...this.camera };
  }

  get codecString(): string {
    return this.cfg?.codec ?? codecString(this.opts.codec, this.camera.width, this.camera.height);
  }

  /**
   * Start reading and encoding (with temporal layers when asked for and supported).
   * @throws CodecError when the track is not video or the codec is unusable.
   */
  async start(): Promise<void> {
    if (this.track.kind !== 'video') throw new CodecError('bad-track', 'CameraEncoder needs a video track');
    const Processor = (globalThis as unknown as { MediaStreamTrackProcessor?: new (o: { track: MediaStreamTrack }) => { readable: ReadableStream<VideoFrame> } })
      .MediaStreamTrackProcessor;
    if (!Processor) throw new CodecError('no-webcodecs', 'MediaStreamTrackProcessor is not available');
    this.cfg = await probeCodec(this.opts.codec, this.camera.width, this.camera.height);
    this.cfg = encoderConfig(this.opts.codec, this.camera.width, this.camera.height, this.s.bitrateBps, this.camera.fps);
    const wanted = this.opts.temporalLayers ?? DEFAULT_TEMPORAL_LAYERS;
    if (wanted > 1) {
      this.s.temporalLayers = await pickTemporalLayers(this.cfg, wanted);
      if (this.s.temporalLayers > 1) {
        this.cfg = encoderConfig(this.opts.codec, this.camera.width, this.camera.height, this.s.bitrateBps, this.camera.fps, this.s.temporalLayers);
      }
    }
    this.encoder = new VideoEncoder({
      output: (chunk, meta) => this.onChunk(chunk, meta),
      error: (e) => this.opts.onError?.(e instanceof Error ? e : new Error(String(e))),
    });
    this.encoder.configure(this.cfg);
    this.reader = new Processor({ track: this.track }).readable.getReader();
    this.running = true;
    void this.pump();
  }

  private async pump(): Promise<void> {
    const maxQueue = this.opts.maxEncodeQueue ?? 2;
    while (this.running && this.reader) {
      let res: ReadableStreamReadResult<VideoFrame>;
      try {
        res = await this.reader.read();
      } catch (e) {
        this.opts.onError?.(e as Error);
        return;
      }
      if (res.done) return;
      const frame = res.value;
      this.s.framesIn++;
      const enc = this.encoder;
      if (this.opts.shouldEncode && !this.opts.shouldEncode()) {
        this.s.framesSkipped++;
        this.forceKey = true;
        frame.close();
        continue;
      }
      const nowUs = this.opts.clock.nowUs();
      this.adaptTo(frame, nowUs);
      if (!this.limiter.keep(frame.timestamp)) {
        // Over the frame-rate cap of the adaptation: not encoded (no reference breaks).
        this.s.framesDroppedByFpsCap++;
        frame.close();
        continue;
      }
      if (!enc || enc.state !== 'configured' || enc.encodeQueueSize > maxQueue) {
        // The encoder fell behind: drop this input frame (no reference breaks).
        this.s.framesDroppedBeforeEncode++;
        frame.close();
        continue;
      }
      if (this.opts.dropBeforeEncode) {
        const iv = this.opts.keyframeIntervalMs;
        const wouldKey = this.forceKey || (iv !== undefined && iv > 0 && nowUs - this.lastKeyUs >= iv * 1000);
        const n = this.s.temporalLayers;
        const nextLayer = n > 1 ? (wouldKey ? 0 : temporalPatternLayer(n, this.layerSlot)) : undefined;
        if (this.opts.dropBeforeEncode(wouldKey, nextLayer)) {
          // The path queues hold more than the frame budget: the frame would only be late.
          this.s.framesDroppedByPushback++;
          frame.close();
          continue;
        }
      }
      let input = frame;
      if (frame.displayWidth !== this.adapt.width || frame.displayHeight !== this.adapt.height) {
        try {
          this.scaler ??= new FrameScaler();
          input = this.scaler.scale(frame, this.adapt.width, this.adapt.height);
        } catch (e) {
          // No scaling path: send this frame unscaled at the configured size (the encoder scales or errs) and report.
          this.opts.onError?.(e as Error);
          input = frame;
        }
      }
      if (this.captureTimes.size > 64) this.captureTimes.clear();
      this.captureTimes.set(frame.timestamp, nowUs);
      const interval = this.opts.keyframeIntervalMs;
      const keyFrame = this.forceKey || (interval !== undefined && interval > 0 && nowUs - this.lastKeyUs >= interval * 1000);
      this.forceKey = false;
      if (keyFrame) this.lastKeyUs = nowUs;
      this.layerSlot = keyFrame ? 1 : this.layerSlot + 1;
      try {
        enc.encode(input, { keyFrame });
      } catch (e) {
        this.opts.onError?.(e as Error);
      }
      if (input !== frame) input.close();
      frame.close();
    }
  }

  /**
   * Ask the adapter what to encode (src/adapt) and apply a change: a new size
   * reconfigures the encoder and makes the next frame a key frame (the
   * receiver's decoder follows on it); a new frame rate only updates the
   * encoder's rate control and the frame-rate cap.
   */
  private adaptTo(frame: VideoFrame, nowUs: number): void {
    if (!this.sawFrame) {
      this.sawFrame = true;
      const w = frame.displayWidth & ~1;
      const h = frame.displayHeight & ~1;
      if (w > 0 && h > 0 && (w !== this.camera.width || h !== this.camera.height)) {
        // The track's settings were not the frames' real size.
        this.camera = { ...this.camera, width: w, height: h };
        this.adapter.reconfigure({ source: this.camera });
      }
    }
    const d = this.adapter.update({ nowUs, targetBitrateBps: this.targetBps, encodeUsage: this.usage.usage() });
    this.s.degradationReason = d.reason;
    this.s.adaptationChanges = this.adapter.adaptationChanges;
    this.s.encodeUsage = this.usage.usage();
    const cfg = this.cfg;
    if (!cfg || (d.width === cfg.width && d.height === cfg.height && d.maxFps === this.adapt.maxFps && !d.changed)) {
      this.adapt = d;
      return;
    }
    const resized = d.width !== cfg.width || d.height !== cfg.height;
    this.adapt = d;
    this.s.maxFps = d.maxFps;
    this.limiter.setMaxFps(d.maxFps < this.camera.fps ? d.maxFps : Infinity);
    this.cfg = { ...cfg, width: d.width, height: d.height, framerate: Math.min(this.camera.fps, d.maxFps) };
    if (resized) this.forceKey = true;
    if (this.encoder && this.encoder.state === 'configured') {
      try {
        this.encoder.configure(this.cfg);
      } catch (e) {
        this.opts.onError?.(e as Error);
      }
    }
  }

  private onChunk(chunk: EncodedVideoChunk, meta?: EncodedVideoChunkMetadata): void {
    const data = new Uint8Array(chunk.byteLength);
    chunk.copyTo(data);
    const nowUs = this.opts.clock.nowUs();
    const sentUs = this.captureTimes.get(chunk.timestamp);
    const captureUs = sentUs ?? nowUs;
    this.captureTimes.delete(chunk.timestamp);
    if (sentUs !== undefined) this.usage.addFrame(sentUs, nowUs - sentUs);
    this.outTimes.push(nowUs);
    while (this.outTimes.length > 0 && (this.outTimes[0] <= nowUs - 1_000_000 || this.outTimes.length > 240)) this.outTimes.shift();
    if (this.cfg?.width !== undefined) {
      this.s.width = this.cfg.width;
      this.s.height = this.cfg.height;
    }
    this.s.framesEncoded++;
    if (chunk.type === 'key') this.s.keyFrames++;
    this.frameId = (this.frameId + 1) >>> 0;
    const keyFrame = chunk.type === 'key';
    const frame: EncodedFrameInput = { streamId: this.opts.streamId ?? 0, frameId: this.frameId, keyFrame, captureUs, data, codec: this.opts.codec };
    if (this.s.temporalLayers > 1) {
      const layer = (meta as { svc?: { temporalLayerId?: number } } | undefined)?.svc?.temporalLayerId;
      const refDistance = this.refs.onFrame(this.frameId, keyFrame, layer);
      if (layer !== undefined && layer >= 0 && layer <= 7) {
        frame.temporalLayer = layer;
        this.s.framesPerLayer[layer] = (this.s.framesPerLayer[layer] ?? 0) + 1;
      }
      if (refDistance !== undefined) frame.refDistance = refDistance;
    }
    this.opts.onFrame(frame);
  }

  /** The next encoded frame will be a key frame. */
  requestKeyframe(): void {
    this.forceKey = true;
  }

  /**
   * Apply a new target bitrate (bps) without forcing a key frame; the encoder
   * is reconfigured only for a change of 5% or more, the adaptation
   * (resolution / frame rate) sees every value. Floor 30 kbps (the ladder's min bitrate).
   */
  setBitrate(bps: number): void {
    if (Number.isFinite(bps) && bps > 0) this.targetBps = bps;
    if (!this.encoder || !this.cfg || this.encoder.state !== 'configured') return;
    const b = Math.max(MIN_ENCODER_BITRATE_BPS, Math.round(bps));
    if (Math.abs(b - this.s.bitrateBps) < 0.05 * this.s.bitrateBps) return;
    this.s.bitrateBps = b;
    this.cfg = { ...this.cfg, bitrate: b };
    try {
      this.encoder.configure(this.cfg);
    } catch (e) {
      this.opts.onError?.(e as Error);
    }
  }

  stats(): CameraEncoderStats {
    const now = this.opts.clock.nowUs();
    const recent = this.outTimes.filter((t) => t > now - 1_000_000).length;
    return { ...this.s, frameRate: recent, framesPerLayer: this.s.framesPerLayer.slice() };
  }

  stop(): void {
    this.running = false;
    void this.reader?.cancel().catch(() => undefined);
    if (this.encoder && this.encoder.state !== 'closed') this.encoder.close();
  }
}

/**
 * Scales VideoFrames with the browser's own 2D path: OffscreenCanvas
 * `drawImage` into a canvas of the target size, then a new VideoFrame with the
 * source's timestamp. The caller closes both frames.
 */
export class FrameScaler {
  private canvas: OffscreenCanvas | undefined;
  private ctx: OffscreenCanvasRenderingContext2D | undefined;

  /**
   * @param width target size (px, > 0)
   * @throws CodecError 'no-webcodecs' without OffscreenCanvas / 2D context
   */
  scale(frame: VideoFrame, width: number, height: number): VideoFrame {
    if (typeof OffscreenCanvas === 'undefined') throw new CodecError('no-webcodecs', 'OffscreenCanvas is not available to scale frames');
    if (!this.canvas || this.canvas.width !== width || this.canvas.height !== height) {
      this.canvas = new OffscreenCanvas(width, height);
      const ctx = this.canvas.getContext('2d', { alpha: false, desynchronized: true });
      if (!ctx) throw new CodecError('no-webcodecs', 'no 2D context to scale frames');
      this.ctx = ctx;
      this.ctx.imageSmoothingQuality = 'low';
    }
    (this.ctx as OffscreenCanvasRenderingContext2D).drawImage(frame, 0, 0, width, height);
    return new VideoFrame(this.canvas, { timestamp: frame.timestamp, ...(frame.duration !== null ? { duration: frame.duration } : {}) });
  }
}

/** One encoded frame handed to {@link FrameDecoder.decode}, in decode order. */
export interface EncodedFrameIn {
  streamId: number;
  frameId: number;
  keyFrame: boolean;
  /** Capture time (µs, sender clock). */
  captureUs: number;
  data: Uint8Array;
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
 * (MediaStreamTrackGenerator) when available, else only through `onFrame`.
 * The app gets the track from {@link FrameDecoder.track}.
 */
export class FrameDecoder {
  private decoder: VideoDecoder | undefined;
  private configuredCodec: string | undefined;
  private needKey = true;
  /** Last codec asked for, kept across decoder errors. */
  private codec: string | undefined;
  private readonly meta = new Map<number, DecodedFrameInfo>();
  private writer: WritableStreamDefaultWriter<VideoFrame> | undefined;
  readonly track: MediaStreamTrack | undefined;
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
    },
  ) {
    const Gen = (globalThis as unknown as { MediaStreamTrackGenerator?: new (o: { kind: 'video' }) => MediaStreamTrack & { writable: WritableStream<VideoFrame> } })
      .MediaStreamTrackGenerator;
    if (Gen) {
      const gen = new Gen({ kind: 'video' });
      this.track = gen;
      this.writer = gen.writable.getWriter();
    }
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
    if ((!this.decoder || this.decoder.state !== 'configured') && this.codec && frame.keyFrame) this.configure(this.codec);
    const dec = this.decoder;
    if (!dec || dec.state !== 'configured') {
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
      this.opts.onDecoded(info);
      this.opts.onFrame?.(frame, info);
    }
    if (this.writer) {
      this.writer.write(frame).catch(() => frame.close());
    } else {
      frame.close();
    }
  }

  /** decoded: frames out of the decoder; errors: decoder errors; queue: decodeQueueSize; held: frames held until the codec was known. */
  stats(): { decoded: number; errors: number; queue: number; held: number } {
    return { decoded: this.decodedCount, errors: this.errors, queue: this.decoder?.decodeQueueSize ?? 0, held: this.heldFrames };
  }

  close(): void {
    this.reset();
    void this.writer?.close().catch(() => undefined);
  }
}
