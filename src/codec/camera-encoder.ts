/**
 * WebCodecs camera encoder (browser only): reads a camera track (with
 * MediaStreamTrackProcessor, else through a video element: ./frame-source.ts), adapts resolution and frame rate (src/adapt),
 * drops frames before encoding when asked, and encodes in realtime mode.
 *
 * Sources: W3C WebCodecs, w3c/webcodecs samples (capped encode queue, drop and
 * force a key frame when the encoder falls behind). Resolution and frame-rate
 * adaptation: src/adapt (WebRTC degradation preferences, libwebrtc
 * call/adaptation/video_stream_adapter.cc).
 */
import type { Clock } from '../core/clock.js';
import { MIN_ENCODER_BITRATE_BPS, type DegradationPreference } from '../adapt/ladder.js';
import { EncodeUsageMeter, FrameRateLimiter, VideoAdapter, type AdaptationDecision, type DegradationReason, type VideoAdapterOptions } from '../adapt/video-adapter.js';
import type { CodecName } from '../core/types.js';
import type { EncodedFrameInput } from '../wire/packetization.js';
import { CodecError, codecString, encoderConfig, pickTemporalLayers, probeCodec } from './codec-config.js';
import { FrameScaler } from './frame-scaler.js';
import { detectCaptureMode, openFrameReader, type CaptureMode, type FrameReader } from './frame-source.js';
import { DEFAULT_TEMPORAL_LAYERS, TemporalRefTracker, temporalPatternLayer } from './temporal-layers.js';

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
   * queues hold more than the frame budget. `temporalLayer`:
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
  /** How camera frames are read (default: the best the browser has; see ./frame-source.ts). */
  captureMode?: CaptureMode;
  /**
   * Asked for every camera frame that is encoded: true replaces it by a
   * black one of the encoded size, same timestamp and cadence (mute; W3C
   * mediacapture-main: a disabled video track renders black frames, and
   * WebRTC sends them). The stream goes on at a tiny bitrate, so receivers
   * count no freeze and need no key frame on unmute.
   */
  isMuted?: () => boolean;
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
  /** How camera frames are read ('track-processor' | 'video-frame-callback' | 'video-timer'), undefined before start(). */
  captureMode: CaptureMode | undefined;
  /** Camera frames encoded as black because the camera was muted (`isMuted`). */
  mutedFrames: number;
}

/**
 * Reads a camera MediaStreamTrack (capture mode: ./frame-source.ts) and encodes it.
 * Frame ids start at 1 and increase by one per encoded frame.
 */
export class CameraEncoder {
  private encoder: VideoEncoder | undefined;
  private reader: FrameReader | undefined;
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
  /** An I420 black picture, reused while muted and the size does not change. */
  private black: { width: number; height: number; data: Uint8Array } | undefined;

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
      captureMode: undefined,
      mutedFrames: 0,
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
   * @throws CodecError 'bad-track' when the track is not video; 'no-webcodecs'
   *   without VideoEncoder/VideoDecoder; 'no-capture' (naming what is missing)
   *   when no capture mode works here; 'unsupported' | 'test-encode-failed'
   *   when the codec is unusable.
   */
  async start(): Promise<void> {
    if (this.track.kind !== 'video') throw new CodecError('bad-track', 'CameraEncoder needs a video track');
    if (typeof VideoEncoder === 'undefined') throw new CodecError('no-webcodecs', 'WebCodecs VideoEncoder is not available in this browser');
    const capture = detectCaptureMode();
    if (!capture.mode) throw new CodecError('no-capture', `cannot read camera frames in this browser: missing ${capture.missing.join(', ')}`);
    // The probed configuration (it may lack the explicit L1T1 a browser refused) at the call's bitrate and frame rate.
    const probed = await probeCodec(this.opts.codec, this.camera.width, this.camera.height);
    this.cfg = { ...probed, bitrate: encoderConfig(this.opts.codec, this.camera.width, this.camera.height, this.s.bitrateBps, this.camera.fps).bitrate, framerate: this.camera.fps };
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
    const reader = await openFrameReader(this.track, this.opts.captureMode);
    if (this.encoder.state === 'closed') {
      // stop() came while the capture module loaded.
      void reader.cancel();
      return;
    }
    this.reader = reader;
    this.s.captureMode = this.reader.mode;
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
      if (enc?.state !== 'configured' || enc.encodeQueueSize > maxQueue) {
        // The encoder fell behind: drop this input frame (no reference breaks).
        this.s.framesDroppedBeforeEncode++;
        frame.close();
        continue;
      }
      if (this.opts.dropBeforeEncode) {
        const wouldKey = this.keyDue(nowUs);
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
      if (this.opts.isMuted?.()) {
        try {
          input = this.blackFrame(frame.timestamp, frame.duration);
          this.s.mutedFrames++;
        } catch (e) {
          // Cannot make a black frame here: drop the camera frame rather than send the muted picture.
          this.opts.onError?.(e as Error);
          frame.close();
          continue;
        }
      } else if (frame.displayWidth !== this.adapt.width || frame.displayHeight !== this.adapt.height) {
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
      const keyFrame = this.keyDue(nowUs);
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
    const d = this.adapter.update({ nowUs, targetBitrateBps: this.targetBps, encodeUsage: this.usage.usage(), keyFrameDue: this.keyDue(nowUs) });
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

  /** A black I420 frame of the adapted size (even dimensions), video range (Y 16, U/V 128: ITU-R BT.601). */
  private blackFrame(timestamp: number, duration: number | null): VideoFrame {
    const width = Math.max(2, this.adapt.width & ~1);
    const height = Math.max(2, this.adapt.height & ~1);
    let b = this.black;
    if (!b || b.width !== width || b.height !== height) {
      const ySize = width * height;
      const data = new Uint8Array(ySize + ySize / 2);
      data.fill(16, 0, ySize);
      data.fill(128, ySize);
      b = { width, height, data };
      this.black = b;
    }
    return new VideoFrame(b.data, { format: 'I420', codedWidth: width, codedHeight: height, timestamp, ...(duration ? { duration } : {}) });
  }

  /** True when the next frame encoded at `nowUs` (µs) is a key frame: asked for, or the periodic one (`keyframeIntervalMs`). */
  private keyDue(nowUs: number): boolean {
    const iv = this.opts.keyframeIntervalMs;
    return this.forceKey || (iv !== undefined && iv > 0 && nowUs - this.lastKeyUs >= iv * 1000);
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
