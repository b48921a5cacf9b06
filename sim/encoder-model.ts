/**
 * Statistical model of a real-time H.264 encoder for the simulator: frame
 * sizes that follow the target bitrate with a realistic key/delta size ratio,
 * a rate-controller lag after a target change, per-frame jitter, and the debt
 * a key frame leaves that the following delta frames pay back. Or: replay of a
 * recorded frame-size log.
 *
 * CALIBRATION (sim/fixtures/h264-640x480-frame-sizes.json, recorded with
 * tools/capture-frame-sizes.ts from Chromium's WebCodecs VideoEncoder,
 * avc1.42e01f, realtime, 640x480@30, natural content):
 *
 * | target | key bytes | mean delta bytes | key/delta | delta CV |
 * | --- | --- | --- | --- | --- |
 * | 0.5 Mbps | 17 600 | 1 910 | 9.2 | 0.76 |
 * | 1 Mbps | 24 200 | 3 960 | 6.1 | 0.61 |
 * | 2 Mbps | 40 900 | 7 990 | 5.1 | 0.51 |
 * | 4 Mbps | 51 500 | 16 250 | 3.2 | 0.31 |
 *
 * Fits used here: key/delta = 6.0 x (Mbps)^-0.5 and delta CV = 0.6 x
 * (Mbps)^-0.3 (bitrate of the rate controller's current rate). After a 3x
 * step up or down, the 15-frame average reached +-20% of the new target in
 * ~0.23 s: a first-order lag with time constant 0.2 s (5% after ~0.6 s) is
 * the default. Key frames of the real encoder are followed by smaller delta
 * frames: modelled as a byte debt repaid over {@link EncoderModelOptions.debtPaybackS}.
 *
 * RESOLUTION AND FRAME RATE follow the library's own adaptation
 * (src/adapt/video-adapter.ts, the same ladder and triggers as the browser's
 * CameraEncoder; encoder load is not modelled, so only the bandwidth trigger
 * acts): frames the frame-rate cap drops are reported as `dropped` and take no
 * frame id; a resolution change makes the next frame a key frame, as the
 * browser's encoder reconfiguration does. The calibration fits above are in
 * bits per pixel: they are evaluated at the VGA30-equivalent rate
 * `rate x (640x480 / pixels) x (30 / fps)`, so a 320x240 stream at 250 kbps
 * has the key/delta ratio of a 640x480 one at 1 Mbps (the same bits per
 * pixel).
 *
 * LOW RATES AND OTHER SIZES (tools/capture-frame-sizes.ts --size WxH --rates
 * 0.15,0.25,0.4, same encoder and clip, 300 frames, key every 100):
 *
 * | size | target | achieved | mean key | mean delta | key/delta | delta CV |
 * | --- | --- | --- | --- | --- | --- | --- |
 * | 640x480 | 150 kbps | 376 kbps | 12 785 | 1 349 | 9.5 | 0.62 |
 * | 640x480 | 250 kbps | 378 kbps | 12 781 | 1 356 | 9.4 | 0.62 |
 * | 640x480 | 400 kbps | 448 kbps | 16 641 | 1 593 | 10.5 | 0.75 |
 * | 480x360 | 150 kbps | 286 kbps | 9 259 | 1 043 | 8.9 | 0.46 |
 * | 480x360 | 250 kbps | 322 kbps | 11 965 | 1 149 | 10.4 | 0.36 |
 * | 480x360 | 400 kbps | 405 kbps | 12 587 | 1 527 | 8.2 | 0.26 |
 * | 320x240 | 150 kbps | 166 kbps | 4 735 | 625 | 7.6 | 0.37 |
 * | 320x240 | 250 kbps | 250 kbps | 6 394 | 979 | 6.5 | 0.20 |
 * | 320x240 | 400 kbps | 399 kbps | 7 202 | 1 617 | 4.5 | 0.17 |
 *
 * The encoder cannot make a frame smaller than a size-dependent floor: at
 * 640x480@30 it overshoots any target below ~380 kbps (2.5x at 150 kbps),
 * at 480x360 below ~290 kbps, while 320x240 meets 150 kbps. Modelled as a
 * delta-frame floor of {@link EncoderModelOptions.minDeltaBytesAtRef} (1 350
 * bytes) x (pixels / 640x480)^0.6 per frame; the key/delta ratio is then
 * evaluated at the rate actually produced. The bits-per-pixel key/delta fit
 * matches 320x240 (predicted 7.7 / 6.0 / 4.7 vs measured 7.6 / 6.5 / 4.5);
 * the delta CV is lower at small sizes than the fit gives (0.2 vs 0.6 at
 * 320x240 250 kbps), so the model overstates the jitter there.
 *
 * Below 320x240 the floor falls faster with the size: 87 kbps at 240x180 and
 * 47 kbps at 160x120 at 30 fps (30 kbps targets; 60 / 100 kbps targets gave
 * 91 / 103 and 60 / 100 kbps; `--size 240x180|160x120 --rates 0.03,0.06,0.1`),
 * mean delta frames 309 / 172 bytes against 502 at 320x240, i.e. the 320x240
 * floor x (pixels / 320x240)^0.8 (fixtures: sim/fixtures/h264-floor-*.json)
 * ({@link EncoderModelOptions.minDeltaSmallPixelExponent}).
 *
 * At a lower frame rate a delta frame covers more motion and the floor grows
 * with the frame interval: 320x240 at 30 / 20 / 10 fps made at least 139 / 117
 * / 91 kbps (mean delta frames 502 / 628 / 953 bytes; `--size 320x240 --rates
 * 0.05,0.1,0.15 --fps 20|10`, Chromium 156: 132 / 114 kbps at 100 kbps, 157 /
 * 151 kbps at 150 kbps), i.e. the floor x (30 / fps)^0.6 per frame
 * ({@link EncoderModelOptions.minDeltaFpsExponent}).
 *
 * KEY FRAMES AFTER A RATE STEP (tools/capture-frame-sizes.ts --step-key
 * "4,0.15;1,0.15;2,0.3", same encoder and clip, 640x480; a key frame requested
 * 0, 1, 3 or 10 frames after `configure()` with the lower rate): the key frame
 * is sized by the new target at once, whatever the rate before:
 *
 * | step (Mbps) | key frame before the step | key at +0 / +1 / +3 / +10 frames |
 * | --- | --- | --- |
 * | 4 -> 0.15 | 48 900 | 18 152 / 19 063 / 18 851 / 17 519 |
 * | 1 -> 0.15 | 19 280 | 18 127 / 19 063 / 18 851 / 17 523 |
 * | 2 -> 0.3 | 34 420 | 23 532 / 24 575 / 24 249 / 22 758 |
 *
 * So after a step down the model sizes a key frame at the new target, not at
 * the lagged rate (with the lag a key frame 50 ms after a collapse from 8 Mbps
 * was 50-67 kB in the simulator where the encoder makes ~18 kB; docs/results.md
 * stop 31). Steps up were not measured: there key frames keep the lag.
 *
 * TEMPORAL LAYERS (`temporalLayers` 2 = L1T2, 3 = L1T3; default as the
 * library, DEFAULT_TEMPORAL_LAYERS of src/codec/temporal-layers.ts = 1, none): frames
 * follow the pattern 0 1 | 0 2 1 2, restarting at each key frame, and carry
 * the layer id and the reference distance the browser's CameraEncoder derives
 * (TemporalRefTracker). Delta frame budgets are scaled per layer, mean 1 over
 * the pattern, from Chromium's WebCodecs encoders (avc1.42e01f, 640x480@30,
 * 1 Mbps, 150 frames of mixed-content.webm, key frame first; mean delta bytes):
 *
 * | codec | L1T1 | L1T2 TL0 / TL1 | L1T3 TL0 / TL1 / TL2 |
 * | --- | --- | --- | --- |
 * | H.264 (OpenH264) | 3 756 | 4 371 / 2 998 | 5 346 / 3 923 / 2 223 |
 * | VP8 (libvpx) | 4 373 | 5 031 / 3 621 | 8 076 / 2 993 / 2 492 |
 * | VP9 (libvpx) | 4 116 | 4 717 / 3 465 | 7 510 / 3 047 / 2 298 |
 * | AV1 (libaom) | 3 814 | 4 660 / 3 500 | 7 846 / 4 779 / 3 430 |
 *
 * H.264 factors used: L1T2 1.19 / 0.81, L1T3 1.56 / 1.14 / 0.65 (not applied
 * to a replayed log, whose sizes stay as recorded). The rate
 * controller kept the mean rate (L1T2 3 685 vs L1T1 3 756 bytes per frame);
 * the quality cost of the layered prediction (longer reference distance) is
 * not modelled.
 *
 * The model emits an H.264 Annex B access unit of the chosen size whose NAL
 * units the packetizer classifies like the real thing: SPS + PPS + IDR for a
 * key frame, one non-IDR slice for a delta frame; the payload bytes never
 * contain a start code.
 */
import { readFileSync } from 'node:fs';
import { Rng } from '../src/core/rng.js';
import type { DegradationPreference } from '../src/adapt/ladder.js';
import { MIN_ENCODER_BITRATE_BPS } from '../src/adapt/ladder.js';
import { FrameRateLimiter, VideoAdapter, type AdaptationDecision, type VideoAdapterOptions } from '../src/adapt/video-adapter.js';
import { DEFAULT_TEMPORAL_LAYERS, TemporalRefTracker, temporalPatternLayer } from '../src/codec/temporal-layers.js';

/** Delta-frame budget factor per layer id (mean 1 over the pattern; H.264 calibration, see the module comment). */
const LAYER_SIZE_FACTORS: Record<number, number[]> = { 2: [1.19, 0.81], 3: [1.56, 1.14, 0.65] };

/** A recorded log: `[bytes, 1 = key | 0 = delta]` per frame. */
export type FrameSizeLog = Array<[number, number]>;

export interface EncoderModelOptions {
  /** Camera frame rate (frames/s, default 30). */
  fps?: number;
  /** Encoded size (px) announced in the stream info (default 640x480, as the calibration). */
  width?: number;
  height?: number;
  /** Key/delta size ratio at 1 Mbps (default 6.0) and its bitrate exponent (default -0.5). */
  keyDeltaRatioAt1M?: number;
  keyDeltaExponent?: number;
  /** CV of delta frame sizes at 1 Mbps (default 0.6) and its bitrate exponent (default -0.3). */
  deltaCvAt1M?: number;
  deltaCvExponent?: number;
  /** Time constant (s) of the rate controller's approach to a new target (default 0.2). */
  rateLagS?: number;
  /** Seconds over which a key frame's excess bytes are repaid by smaller deltas (default 0.5). */
  debtPaybackS?: number;
  /** Periodic key frame every N frames (0 = only on request, the default). */
  keyframeIntervalFrames?: number;
  /**
   * Smallest delta frame the encoder makes at 640x480 (bytes, default 1350,
   * measured: see the module comment); at other sizes it scales with
   * (pixels / 640x480)^minDeltaPixelExponent (default 0.6). 0 = no floor.
   */
  minDeltaBytesAtRef?: number;
  minDeltaPixelExponent?: number;
  /** Below 320x240 the floor scales with (pixels / 320x240)^minDeltaSmallPixelExponent from its value there (default 0.8, measured: see the module comment). */
  minDeltaSmallPixelExponent?: number;
  /** The delta-frame floor scales with (30 / fps)^minDeltaFpsExponent (default 0.6, measured at 10-30 fps: see the module comment; extrapolated above 30 fps). */
  minDeltaFpsExponent?: number;
  /** Smallest frame (bytes, default 60). */
  minFrameBytes?: number;
  /** Temporal layers (1 = none, 2 = L1T2, 3 = L1T3; default DEFAULT_TEMPORAL_LAYERS, as the library). */
  temporalLayers?: number;
  /** Encoder's own bitrate floor (bps, default 30 kbps, like src/codec/camera-encoder.ts and the adaptation ladder). */
  minBitrateBps?: number;
  /**
   * Resolution / frame-rate adaptation (src/adapt; default as the library:
   * DEFAULT_DEGRADATION_PREFERENCE, 'maintain-framerate'). 'maintain-framerate-and-resolution' keeps the camera's
   * size and rate (the behaviour before adaptation existed).
   */
  degradationPreference?: DegradationPreference;
  /** Adapter tuning (hold times, factors), as src/adapt/video-adapter.ts. */
  adapter?: Omit<VideoAdapterOptions, 'degradationPreference'>;
  /** Replay a recorded log instead of the statistical model: a fixture/log file or the log itself. */
  replay?: string | FrameSizeLog;
  /** With replay: the run name inside a fixture file with several runs (default the first). */
  replayRun?: string;
  /** With replay: scale logged sizes by target / logged bitrate (default false: sizes as logged). */
  replayFollowTarget?: boolean;
}

/** One frame the model produced. */
export interface ModelFrame {
  keyFrame: boolean;
  sizeBytes: number;
  /** True when the frame-rate cap dropped this camera frame: nothing to send, no frame id used. */
  dropped?: boolean;
  /** With temporal layers: the frame's layer id (0 = base). */
  temporalLayer?: number;
  /** With temporal layers, delta frames: frames back to the referenced frame (see MediaMessage.refDistance). */
  refDistance?: number;
}

/** One adaptation change the model made. */
export interface AdaptationChange {
  /** When (s of simulated time). */
  atS: number;
  width: number;
  height: number;
  maxFps: number;
  reason: string;
}

/** Resolution and frame rate over a run (see {@link EncoderModel.adaptationStats}). */
export interface AdaptationStats {
  degradationPreference: DegradationPreference;
  /** Every change, the first entry being the start (at most 200). */
  changes: AdaptationChange[];
  adaptationChanges: number;
  /** Share of encoded frames per size, e.g. {'640x480': 0.7, '320x240': 0.3}. */
  framesBySize: Record<string, number>;
  /** Encoded frames per second of camera time (fps). */
  encodedFps: number;
  /** Camera frames the frame-rate cap dropped. */
  framesDroppedByFpsCap: number;
}

const DEFAULTS = {
  fps: 30,
  width: 640,
  height: 480,
  keyDeltaRatioAt1M: 6.0,
  keyDeltaExponent: -0.5,
  deltaCvAt1M: 0.6,
  deltaCvExponent: -0.3,
  rateLagS: 0.2,
  debtPaybackS: 0.5,
  keyframeIntervalFrames: 0,
  minFrameBytes: 60,
  minDeltaBytesAtRef: 1350,
  minDeltaPixelExponent: 0.6,
  minDeltaFpsExponent: 0.6,
  minDeltaSmallPixelExponent: 0.8,
  minBitrateBps: MIN_ENCODER_BITRATE_BPS,
  temporalLayers: DEFAULT_TEMPORAL_LAYERS,
};

/** The calibration's frame size (px) and rate (fps): the bits-per-pixel reference. */
const REF_PIXELS = 640 * 480;
const REF_FPS = 30;
/** Below this size (320x240) the delta-frame floor falls with minDeltaSmallPixelExponent. */
const SMALL_PIXELS = 320 * 240;
const MAX_CHANGES_KEPT = 200;

/** Read a frame-size log: a fixture (`{runs: [{name, frames}]}`) or `{frames}` or a bare array. @throws Error naming the file */
export function loadFrameSizeLog(file: string, run?: string): { frames: FrameSizeLog; bitrateBps: number | undefined } {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`encoder replay: cannot read ${file}: ${(e as Error).message}`);
  }
  let frames: unknown;
  let bitrateBps: number | undefined;
  if (Array.isArray(json)) frames = json;
  else if (json && typeof json === 'object') {
    const o = json as { frames?: unknown; runs?: Array<{ name: string; frames: unknown; bitrates?: Array<{ bps: number }> }> };
    if (o.runs) {
      const r = run === undefined ? o.runs[0] : o.runs.find((x) => x.name === run);
      if (!r) throw new Error(`encoder replay: run ${run} not in ${file} (have ${o.runs.map((x) => x.name).join(', ')})`);
      frames = r.frames;
      bitrateBps = r.bitrates?.[0]?.bps;
    } else frames = o.frames;
  }
  if (!Array.isArray(frames) || frames.length === 0) throw new Error(`encoder replay: no frames in ${file}`);
  frames.forEach((f, i) => {
    if (!Array.isArray(f) || typeof f[0] !== 'number' || !(f[0] > 0) || (f[1] !== 0 && f[1] !== 1)) {
      throw new Error(`encoder replay: ${file}: frame ${i} must be [bytes > 0, 0|1]`);
    }
  });
  return { frames: frames as FrameSizeLog, bitrateBps };
}

/** See the module comment. Deterministic for a given {@link Rng}. */
export class EncoderModel {
  readonly fps: number;
  readonly width: number;
  readonly height: number;
  private readonly o: typeof DEFAULTS;
  private targetBps: number;
  private rateBps: number;
  private debtBytes = 0;
  private keyPending = true; // the first frame is a key frame
  private frameCount = 0;
  private readonly log: FrameSizeLog | undefined;
  private readonly logBitrateBps: number | undefined;
  private readonly logMeanKey: number;
  private readonly logMeanDelta: number;
  private logIndex = 0;
  private readonly adapter: VideoAdapter;
  private readonly limiter = new FrameRateLimiter();
  private adapt: AdaptationDecision;
  private readonly changes: AdaptationChange[] = [];
  private readonly bySize = new Map<string, number>();
  private cameraFrames = 0;
  private encodedFrames = 0;
  private droppedByCap = 0;
  private lastNowUs = 0;
  /** The engine has set a target (the start value is only the engine's floor before any path is up). */
  private targetSet = false;
  /** Temporal layering: position in the pattern since the last key frame, reference tracking. */
  private layerIndex = 0;
  private readonly refs = new TemporalRefTracker();
  /** Seed of the per-frame noise (see the constructor), and the capture index (camera time x fps) of the frame being made. */
  private readonly noiseSeed: number;
  private captureIndex = 0;
  /** Frame ids the model gives its encoded frames (+1 each, as CameraEncoder), for the reference tracking. */
  private modelFrameId = 0;

  /**
   * @param startBitrateBps initial target (bps)
   * @param rng the run's seed: one draw at construction seeds the per-frame noise, which is then a function of
   *   the frame's capture index (common random numbers: two configurations of one seed see the same noise for the
   *   same camera frame whatever each skipped before; a sequential stream shifted every later frame's size after
   *   one skip, so paired comparisons carried the full seed-to-seed spread: docs/results.md, stop 55)
   * @throws RangeError for non-positive fps / bitrate; Error for an unreadable replay log
   */
  constructor(opts: EncoderModelOptions, startBitrateBps: number, rng: Rng) {
    this.noiseSeed = Math.floor(rng.next() * 0x1_0000_0000);
    this.o = { ...DEFAULTS };
    for (const k of Object.keys(DEFAULTS) as Array<keyof typeof DEFAULTS>) {
      const v = opts[k];
      if (v !== undefined) {
        if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new RangeError(`EncoderModel: ${k} must be a finite number >= 0, got ${String(v)}`);
        this.o[k] = v;
      }
    }
    if (!(this.o.fps > 0)) throw new RangeError('EncoderModel: fps must be > 0');
    if (![1, 2, 3].includes(this.o.temporalLayers)) throw new RangeError(`EncoderModel: temporalLayers must be 1, 2 or 3, got ${this.o.temporalLayers}`);
    if (!(startBitrateBps > 0)) throw new RangeError(`EncoderModel: start bitrate must be > 0, got ${startBitrateBps}`);
    this.fps = this.o.fps;
    this.width = this.o.width;
    this.height = this.o.height;
    this.targetBps = Math.max(this.o.minBitrateBps, startBitrateBps);
    this.rateBps = this.targetBps;
    this.adapter = new VideoAdapter({ width: this.width, height: this.height, fps: this.fps }, { ...opts.adapter, degradationPreference: opts.degradationPreference });
    // The start step is picked from the first target the engine sets (see nextFrame).
    this.adapt = this.adapter.current();
    this.noteChange(0);
    if (opts.replay !== undefined) {
      const l = typeof opts.replay === 'string' ? loadFrameSizeLog(opts.replay, opts.replayRun) : { frames: opts.replay, bitrateBps: undefined };
      this.log = l.frames;
      let total = 0;
      for (const f of l.frames) total += f[0];
      this.logBitrateBps = opts.replayFollowTarget ? (l.bitrateBps ?? (total * 8 * this.fps) / l.frames.length) : undefined;
      const keys = l.frames.filter((f) => f[1] === 1).map((f) => f[0]);
      const deltas = l.frames.filter((f) => f[1] === 0).map((f) => f[0]);
      this.logMeanDelta = deltas.length ? deltas.reduce((a, b) => a + b, 0) / deltas.length : total / l.frames.length;
      this.logMeanKey = keys.length ? keys.reduce((a, b) => a + b, 0) / keys.length : 6 * this.logMeanDelta;
    } else {
      this.logMeanKey = 0;
      this.logMeanDelta = 0;
    }
  }

  /** New encoder target (bps), as the app's `targetBitrate` handler applies it. */
  setTargetBitrate(bps: number): void {
    if (Number.isFinite(bps) && bps > 0) {
      this.targetBps = Math.max(this.o.minBitrateBps, bps);
      this.targetSet = true;
    }
  }

  /** Current target (bps). */
  target(): number {
    return this.targetBps;
  }

  /** The rate the model's rate controller currently aims at (bps), lagging the target. */
  currentRateBps(): number {
    return this.rateBps;
  }

  /** Make the next frame a key frame (PLI, new path). */
  /** True when the next encoded frame will be a key frame (requested, or a new size). */
  get keyframePending(): boolean {
    return this.keyPending;
  }

  /** With temporal layers: the layer id the next encoded frame gets (undefined without layers). */
  get nextTemporalLayer(): number | undefined {
    const n = this.o.temporalLayers;
    if (n <= 1) return undefined;
    return this.keyPending ? 0 : temporalPatternLayer(n, this.layerIndex);
  }

  requestKeyframe(): void {
    this.keyPending = true;
  }

  /** Key/delta size ratio at a bitrate (bps) at the reference 640x480@30 (see {@link EncoderModel.refEquivalentBps} for other sizes). */
  keyDeltaRatio(bps: number): number {
    return Math.max(1.5, this.o.keyDeltaRatioAt1M * Math.pow(Math.max(bps, 1e5) / 1e6, this.o.keyDeltaExponent));
  }

  /** Coefficient of variation of delta sizes at a bitrate (bps) at the reference 640x480@30. */
  deltaCv(bps: number): number {
    return this.o.deltaCvAt1M * Math.pow(Math.max(bps, 1e5) / 1e6, this.o.deltaCvExponent);
  }

  /** The smallest delta frame (bytes) at the current size and frame-rate cap. */
  minDeltaBytes(): number {
    const a = this.adapt;
    const fps = Math.min(this.fps, a.maxFps);
    const px = a.width * a.height;
    const small = Math.min(1, px / SMALL_PIXELS);
    const atSize = this.o.minDeltaBytesAtRef * Math.pow(Math.max(px, SMALL_PIXELS) / REF_PIXELS, this.o.minDeltaPixelExponent) * Math.pow(small, this.o.minDeltaSmallPixelExponent);
    return atSize * Math.pow(REF_FPS / fps, this.o.minDeltaFpsExponent);
  }

  /** The bitrate (bps) with the same bits per pixel at 640x480@30 as `bps` at the current size and frame-rate cap. */
  refEquivalentBps(bps: number): number {
    const a = this.adapt;
    return bps * (REF_PIXELS / (a.width * a.height)) * (REF_FPS / Math.min(this.fps, a.maxFps));
  }

  /** Current encoded size (px) and frame-rate cap (fps) chosen by the adapter. */
  currentAdaptation(): AdaptationDecision {
    return this.adapt;
  }

  /** Resolution / frame rate over the run so far. */
  adaptationStats(): AdaptationStats {
    const sizes: Record<string, number> = {};
    for (const [k, n] of this.bySize) sizes[k] = Math.round((1000 * n) / Math.max(1, this.encodedFrames)) / 1000;
    const cameraS = this.cameraFrames / this.fps;
    return {
      degradationPreference: this.adapter.degradationPreference,
      changes: this.changes.slice(),
      adaptationChanges: this.adapter.adaptationChanges,
      framesBySize: sizes,
      encodedFps: cameraS > 0 ? Math.round((100 * this.encodedFrames) / cameraS) / 100 : 0,
      framesDroppedByFpsCap: this.droppedByCap,
    };
  }

  private noteChange(nowUs: number): void {
    if (this.changes.length >= MAX_CHANGES_KEPT) return;
    const a = this.adapt;
    this.changes.push({ atS: Math.round(nowUs / 1e4) / 100, width: a.width, height: a.height, maxFps: a.maxFps, reason: a.reason });
  }

  /**
   * Produce the next frame: call once per camera frame, 1/fps apart.
   * @param nowUs the camera frame's time (µs); default: frame count / fps
   */
  nextFrame(nowUs?: number): ModelFrame {
    const now = nowUs ?? Math.round((this.cameraFrames * 1e6) / this.fps);
    this.cameraFrames++;
    // Frames the engine skipped before encoding never reach the model: the capture index comes from the time.
    this.captureIndex = Math.round((now * this.fps) / 1e6);
    const dtUs = Math.max(0, now - this.lastNowUs);
    this.lastNowUs = now;
    // Adapt once the engine has given a target (or after 1 s without one): the
    // constructor's start value is the engine's floor before any path is up.
    const periodicDue = this.o.keyframeIntervalFrames > 0 && this.frameCount % this.o.keyframeIntervalFrames === 0;
    const d = this.targetSet || now >= 1_000_000 ? this.adapter.update({ nowUs: now, targetBitrateBps: this.targetBps, keyFrameDue: this.keyPending || periodicDue }) : this.adapt;
    if (d.changed) {
      if (d.width !== this.adapt.width || d.height !== this.adapt.height) this.keyPending = true; // a new size starts with a key frame
      this.adapt = d;
      this.noteChange(now);
    }
    this.limiter.setMaxFps(d.maxFps < this.fps ? d.maxFps : Infinity);
    // The rate controller follows the target whether or not this frame is encoded.
    const dt = nowUs === undefined ? 1 / this.fps : dtUs / 1e6;
    this.rateBps += (this.targetBps - this.rateBps) * (1 - Math.exp(-dt / Math.max(1e-3, this.o.rateLagS)));
    if (!this.limiter.keep(now)) {
      this.droppedByCap++;
      return { keyFrame: false, sizeBytes: 0, dropped: true };
    }
    this.encodedFrames++;
    const sizeKey = `${d.width}x${d.height}`;
    this.bySize.set(sizeKey, (this.bySize.get(sizeKey) ?? 0) + 1);
    const keyFrame = this.keyPending || periodicDue;
    this.keyPending = false;
    this.frameCount++;
    const n = this.o.temporalLayers;
    if (keyFrame) this.layerIndex = 0;
    const layer = n > 1 ? temporalPatternLayer(n, this.layerIndex) : 0;
    this.layerIndex++;
    const factor = n > 1 && !keyFrame ? LAYER_SIZE_FACTORS[n][layer] : 1;
    // A replayed log keeps its recorded sizes (layers only tag the frames); the model scales its budget per layer.
    const size = this.log ? this.replayFrame(keyFrame) : this.modelFrame(keyFrame, factor);
    const out: ModelFrame = { keyFrame, sizeBytes: Math.max(this.o.minFrameBytes, Math.round(size)) };
    if (n > 1) {
      this.modelFrameId++;
      out.temporalLayer = layer;
      const d = this.refs.onFrame(this.modelFrameId, keyFrame, layer);
      if (d !== undefined) out.refDistance = d;
    }
    return out;
  }

  /** `layerFactor`: the delta frame's temporal-layer budget factor (1 without layers). */
  private modelFrame(keyFrame: boolean, layerFactor = 1): number {
    const fps = Math.min(this.fps, this.adapt.maxFps);
    // Bytes per frame at the current rate, but never below the size's floor (the encoder overshoots low targets).
    // After a step down a key frame is sized at the new target at once (KEY FRAMES AFTER A RATE STEP in the module
    // comment; steps up were not measured, so there the lag stays); delta frames follow the lagged rate.
    const frameBudget = Math.max((keyFrame ? Math.min(this.targetBps, this.rateBps) : this.rateBps) / 8 / fps, this.minDeltaBytes());
    const budget = keyFrame ? frameBudget : frameBudget * layerFactor;
    const refBps = this.refEquivalentBps(frameBudget * 8 * fps);
    if (keyFrame) {
      const size = budget * this.keyDeltaRatio(refBps) * this.lognormal(0.15);
      this.debtBytes += size - budget;
      return size;
    }
    // Repay the key frame debt over debtPaybackS, never shrinking a delta below 25% of its budget.
    const repay = Math.min(this.debtBytes / Math.max(1, this.o.debtPaybackS * fps), 0.75 * budget);
    const size = Math.max(this.o.minFrameBytes, (budget - repay) * this.lognormal(this.deltaCv(refBps)));
    this.debtBytes = Math.max(0, this.debtBytes - repay);
    return size;
  }

  private replayFrame(keyFrame: boolean): number {
    const log = this.log as FrameSizeLog;
    const e = log[this.logIndex % log.length];
    this.logIndex++;
    // A requested key frame takes the log's mean key size; a logged key frame that was not asked for becomes a mean delta.
    let size = keyFrame ? (e[1] === 1 ? e[0] : this.logMeanKey) : e[1] === 1 ? this.logMeanDelta : e[0];
    if (this.logBitrateBps) size *= this.rateBps / this.logBitrateBps;
    return size;
  }

  /** Log-normal multiplier with mean 1 and coefficient of variation `cv`. */
  private lognormal(cv: number): number {
    if (!(cv > 0)) return 1;
    const s2 = Math.log(1 + cv * cv);
    // The camera frame being encoded: its own draw, whatever was encoded or skipped before.
    const z = new Rng((Math.imul(this.noiseSeed ^ 0x5bd1e995, 0x9e3779b1) + Math.imul(this.captureIndex, 0x85ebca6b)) >>> 0).normal();
    return Math.exp(Math.sqrt(s2) * z - s2 / 2);
  }
}

/**
 * An H.264 Annex B access unit of exactly `sizeBytes` bytes (>= 24): key =
 * SPS (type 7) + PPS (type 8) + IDR slice (type 5); delta = one non-IDR
 * slice (type 1). The filler is 0xAB so no start code appears inside.
 * `tag` (e.g. the frame id) is written after the slice header for checks.
 */
export function makeAnnexB(sizeBytes: number, keyFrame: boolean, tag = 0): Uint8Array {
  const n = Math.max(24, Math.round(sizeBytes));
  const out = new Uint8Array(n);
  out.fill(0xab);
  let o = 0;
  const nal = (type: number, len: number): void => {
    out[o] = 0;
    out[o + 1] = 0;
    out[o + 2] = 0;
    out[o + 3] = 1;
    out[o + 4] = (type === 1 ? 0x40 : 0x60) | type; // nal_ref_idc + type
    o += len;
  };
  if (keyFrame) {
    nal(7, 12); // SPS
    nal(8, 6); // PPS
    nal(5, n - 18);
  } else nal(1, n);
  // Tag after the slice NAL header: 4 bytes, each OR 0x80 so they are never 0.
  const at = keyFrame ? 18 + 5 : 5;
  for (let i = 0; i < 4 && at + i < n; i++) out[at + i] = 0x80 | ((tag >>> (7 * i)) & 0x7f);
  return out;
}
