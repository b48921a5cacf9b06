/**
 * The adaptation ladder: the ordered list of (resolution, frame rate) steps a
 * sender walks down when the network or the encoder cannot keep up, built
 * after WebRTC's degradation preferences (W3C webrtc-pc
 * `RTCRtpSendParameters.degradationPreference`; libwebrtc
 * call/adaptation/video_stream_adapter.cc).
 *
 * - Resolution steps (video_stream_adapter.cc GetLowerResolutionThan /
 *   GetHigherResolutionThan): one step down allows at most 3/5 of the pixels
 *   of the current step, one step up 5/3. The scaled size is the source times
 *   the largest fraction of the sequence 1, 3/4, 1/2, 3/8, 1/4, 3/16, ...
 *   (alternately x3/4 and x2/3, as media/base/video_adapter.cc picks its
 *   scale factors) whose pixel count fits, so 640x480 steps to 480x360 and
 *   320x240, and 1280x720 to 960x540, 640x360, 480x270 and 320x180. Never
 *   below {@link MIN_PIXELS_PER_FRAME} (libwebrtc's default 320x180), except
 *   for the floor steps of 'maintain-framerate' (below).
 * - Frame-rate steps (GetLowerFrameRateThan / GetHigherFrameRateThan): 2/3 of
 *   the rate down, 3/2 up, never below {@link MIN_FRAME_RATE_FPS}.
 * - 'balanced' (video_stream_adapter.cc, BALANCED: first the frame rate, then
 *   the resolution): a step down first lowers the frame rate to the minimum
 *   that rtc_base/experiments/balanced_degradation_settings.cc's default
 *   configuration gives for the current size (<= 320x240: 7 fps, <= 480x360:
 *   10 fps, <= 640x480: 15 fps, larger: no minimum), and lowers the
 *   resolution only when the frame rate is already there.
 *
 * - Floor steps (ours, 'maintain-framerate' only): after its smallest size
 *   the ladder goes on with smaller sizes at the same frame rate (640x480:
 *   240x180, 160x120), each needing the encoder's floor there, for a target
 *   under what the encoder can make at the smallest size (see withFloorSteps).
 *
 * Each step carries the target bitrate it needs ({@link requiredBitrateBps}):
 * the "min start bitrate" of the resolution (libwebrtc
 * rtc_base/experiments/encoder_info_settings.cc default singlecast limits;
 * video/adaptation/bitrate_constraint.cc allows a step up only when the target
 * reaches it), scaled down for a lower frame rate.
 */

/** W3C `RTCDegradationPreference`; 'maintain-framerate-and-resolution' (libwebrtc DISABLED) never adapts. */
export type DegradationPreference = 'maintain-framerate' | 'maintain-resolution' | 'balanced' | 'maintain-framerate-and-resolution';

/**
 * The preference used when the app sets none: 'maintain-framerate', as
 * libwebrtc does for camera video (media/engine/webrtc_video_engine.cc,
 * WebRtcVideoSendStream::GetDegradationPreference: MAINTAIN_FRAMERATE unless
 * the "WebRTC-Video-BalancedDegradation" field trial is on, because BALANCED
 * "needs to be tuned first"), so a call degrades like Chromium's own WebRTC.
 * The W3C default would be 'balanced'; in the simulator 'balanced' froze
 * longer (ATT LTE uplink, 120 s, 4 seeds: 22.7 s vs 20.8 s; wifi-cellular
 * 21_2 converge: 12.7 s vs 11.2 s). Re-measured with the single-path last
 * resort (src/engine/sender.ts), 3 seeds x 120 s, frozen s summed over seeds:
 * AT&T uplink alone 42.2 vs 25.4 (paired with T-Mobile) and 50.5 vs 26.1
 * (with Verizon), Verizon alone 16.7 vs 17.2: still the default.
 */
export const DEFAULT_DEGRADATION_PREFERENCE: DegradationPreference = 'maintain-framerate';

export const DEGRADATION_PREFERENCES: readonly DegradationPreference[] = ['balanced', 'maintain-framerate', 'maintain-resolution', 'maintain-framerate-and-resolution'];

/** Smallest frame a resolution step may produce (pixels): libwebrtc's default min pixels per frame, 320x180. */
export const MIN_PIXELS_PER_FRAME = 320 * 180;
/** Lowest frame rate a frame-rate step may produce (fps): libwebrtc video_stream_adapter.cc kMinFrameRateFps. */
export const MIN_FRAME_RATE_FPS = 2;

/** One resolution's bitrate limits (bps), libwebrtc encoder_info_settings.cc default singlecast limits. */
export interface ResolutionBitrateLimits {
  /** Frame size (pixels) the limits apply up to. */
  pixels: number;
  /** Target needed to start at (or step up to) this size (bps). */
  minStartBps: number;
  /** Lowest bitrate the encoder is configured with at this size (bps). */
  minBps: number;
  /** Highest useful bitrate at this size (bps). */
  maxBps: number;
}

/** libwebrtc's default singlecast resolution bitrate limits (encoder_info_settings.cc), smallest first. */
export const DEFAULT_BITRATE_LIMITS: readonly ResolutionBitrateLimits[] = [
  { pixels: 320 * 180, minStartBps: 0, minBps: 30_000, maxBps: 300_000 },
  { pixels: 480 * 270, minStartBps: 200_000, minBps: 30_000, maxBps: 500_000 },
  { pixels: 640 * 360, minStartBps: 300_000, minBps: 30_000, maxBps: 800_000 },
  { pixels: 960 * 540, minStartBps: 500_000, minBps: 30_000, maxBps: 1_500_000 },
  { pixels: 1280 * 720, minStartBps: 900_000, minBps: 30_000, maxBps: 2_500_000 },
];

/** The lowest bitrate (bps) any step is encoded with: the table's `minBps` (30 kbps). */
export const MIN_ENCODER_BITRATE_BPS = 30_000;

/**
 * Limits for a frame size: the entry of the smallest listed size that holds
 * `pixels` (as libwebrtc looks up the limits of a resolution); above the
 * largest entry its limits scale with the pixel count.
 * @param pixels width x height (> 0)
 */
export function bitrateLimitsFor(pixels: number, table: readonly ResolutionBitrateLimits[] = DEFAULT_BITRATE_LIMITS): ResolutionBitrateLimits {
  for (const e of table) if (pixels <= e.pixels) return e;
  const top = table[table.length - 1];
  const k = pixels / top.pixels;
  return { pixels, minStartBps: Math.round(top.minStartBps * k), minBps: top.minBps, maxBps: Math.round(top.maxBps * k) };
}

/**
 * balanced_degradation_settings.cc default configs: the minimum frame rate
 * (fps) 'balanced' keeps at a frame size (pixels), Infinity above 640x480.
 */
export function balancedMinFps(pixels: number): number {
  if (pixels <= 320 * 240) return 7;
  if (pixels <= 480 * 360) return 10;
  if (pixels <= 640 * 480) return 15;
  return Infinity;
}

/** One step of the ladder. */
export interface LadderStep {
  /** Encoded size (px), even, aspect ratio of the source. */
  width: number;
  height: number;
  /** Frame-rate cap (fps, integer, <= source fps). */
  maxFps: number;
  /** Scale of the source (1 = unscaled). */
  scale: number;
  /** Target bitrate this step needs (bps), non-increasing along the ladder. */
  requiredBps: number;
  /** A floor step (after the smallest regular size, see {@link buildLadder}): the adapter leaves it sooner (VideoAdapterOptions.floorUpHoldUs). */
  floor?: true;
}

export interface LadderSource {
  /** Camera size (px, > 0). */
  width: number;
  height: number;
  /** Camera frame rate (fps, > 0). */
  fps: number;
}

export interface LadderOptions {
  /** Bitrate limits per resolution (default {@link DEFAULT_BITRATE_LIMITS}). */
  limits?: readonly ResolutionBitrateLimits[];
  /**
   * How the needed bitrate falls with the frame rate: required(fps) =
   * required(30 fps) x (fps / 30)^exponent (default 0.6; an assumption of this
   * library, not a libwebrtc figure: inter-frame prediction makes the bits per
   * frame grow as frames get further apart).
   */
  fpsExponent?: number;
  /**
   * The lowest rate the encoder makes at 320x240@30 (bps, default
   * {@link DEFAULT_FLOOR_BITRATE_BPS}; 0 = no floor steps). At its smallest
   * size (320x240 from a 4:3 camera, 320x180 from 16:9: libwebrtc's 320x180
   * minimum) 'maintain-framerate' has nothing left to lower, and an
   * encoder under its floor overshoots its target; the ladder then goes on
   * with smaller sizes ("floor steps", see {@link buildLadder}).
   */
  floorBitrateBps?: number;
  /** Smallest frame of a floor step (pixels, >= {@link FLOOR_MIN_PIXELS_BOUND}, default {@link FLOOR_MIN_PIXELS}). */
  floorMinPixels?: number;
}

/**
 * Chromium's H.264 (OpenH264) encoder cannot go below ~140 kbps at
 * 320x240@30: 139 / 140 / 145 / 166 kbps out at 30 / 50 / 80 / 150 kbps
 * targets, 502-625-byte delta frames (Chromium 156,
 * tools/capture-frame-sizes.ts; docs/results.md stop 50). Smaller frames have
 * lower floors: 87 kbps at 240x180, 47 kbps at 160x120 (30 kbps targets; mean
 * delta frames 309 and 172 bytes against 502 at 320x240), i.e. pixels^0.8
 * ({@link floorStepBitrateBps}). A lower frame rate is a poor lever there:
 * each delta frame covers more motion, 117 kbps at 320x240@20 and 91 kbps at
 * 320x240@10 (628 / 953-byte deltas), i.e. fps^0.4. Fixtures:
 * sim/fixtures/h264-floor-*.json.
 */
export const DEFAULT_FLOOR_BITRATE_BPS = 150_000;
/** Smallest floor step (pixels): 160x90, so a 4:3 camera ends at 160x120 (QQVGA) and a 16:9 one at 160x90. */
export const FLOOR_MIN_PIXELS = 160 * 90;
/** Lowest `floorMinPixels` accepted (pixels): 64x48. */
export const FLOOR_MIN_PIXELS_BOUND = 64 * 48;

/**
 * The min start bitrate (bps) a step is held to: the table's, except that an
 * entry without one (320x180: 0) takes half of the next larger entry's, so
 * the lowest steps still order by bitrate and a frame-rate step there can trigger.
 */
function startBitrate(pixels: number, limits: readonly ResolutionBitrateLimits[]): number {
  const l = bitrateLimitsFor(pixels, limits);
  if (l.minStartBps > 0) return l.minStartBps;
  const next = limits.find((e) => e.pixels > l.pixels && e.minStartBps > 0);
  return next ? next.minStartBps / 2 : l.minBps * 2;
}

/** The scale fractions of media/base/video_adapter.cc, largest first: 1, 3/4, 1/2, 3/8, 1/4, ... */
function nextScale(s: { num: number; den: number }): { num: number; den: number } {
  // Alternate x3/4 and x2/3: 1 -> 3/4 -> 1/2 -> 3/8 -> 1/4 -> 3/16 -> 1/8 ...
  return s.num % 3 === 0 ? { num: (s.num * 2) / 3, den: s.den } : { num: s.num * 3, den: s.den * 4 };
}

function scaled(src: LadderSource, s: { num: number; den: number }): { width: number; height: number } {
  const even = (v: number): number => Math.max(2, Math.floor((v * s.num) / s.den / 2) * 2);
  return { width: even(src.width), height: even(src.height) };
}

/** Resolution steps of a source, largest first, down to `minPixelsPerFrame` (see the module comment). */
export function resolutionSteps(src: LadderSource, minPixelsPerFrame = MIN_PIXELS_PER_FRAME): Array<{ width: number; height: number; scale: number }> {
  let s = { num: 1, den: 1 };
  const first = scaled(src, s);
  const out = [{ ...first, scale: 1 }];
  const minPixels = Math.min(minPixelsPerFrame, first.width * first.height);
  for (let guard = 0; guard < 32; guard++) {
    const cur = out[out.length - 1];
    const maxPixels = (cur.width * cur.height * 3) / 5; // GetLowerResolutionThan
    let next = scaled(src, s);
    while (next.width * next.height > maxPixels && next.width > 2 && next.height > 2) {
      s = nextScale(s);
      next = scaled(src, s);
    }
    if (next.width * next.height < minPixels || next.width * next.height > maxPixels) break;
    out.push({ ...next, scale: s.num / s.den });
  }
  return out;
}

/** Frame-rate steps from the source rate, highest first: x2/3 each (integer), down to {@link MIN_FRAME_RATE_FPS}. */
export function frameRateSteps(sourceFps: number): number[] {
  const out = [Math.max(1, Math.round(sourceFps))];
  for (;;) {
    const next = Math.floor((out[out.length - 1] * 2) / 3); // GetLowerFrameRateThan
    if (next < MIN_FRAME_RATE_FPS) break;
    out.push(next);
  }
  return out;
}

/**
 * Build the ladder of a source under a preference: step 0 is the unadapted
 * source; each later step is one adaptation down.
 * @throws RangeError for a non-positive source size or rate
 */
export function buildLadder(src: LadderSource, pref: DegradationPreference, opts: LadderOptions = {}): LadderStep[] {
  if (!(src.width > 0 && src.height > 0 && src.fps > 0)) throw new RangeError(`buildLadder: bad source ${src.width}x${src.height}@${src.fps}`);
  const floorBps = opts.floorBitrateBps ?? DEFAULT_FLOOR_BITRATE_BPS;
  const floorMinPixels = opts.floorMinPixels ?? FLOOR_MIN_PIXELS;
  if (!(floorBps >= 0 && floorBps < Infinity && floorMinPixels >= FLOOR_MIN_PIXELS_BOUND)) throw new RangeError(`buildLadder: bad floorBitrateBps ${floorBps} or floorMinPixels ${floorMinPixels}`);
  const limits = opts.limits ?? DEFAULT_BITRATE_LIMITS;
  const exp = opts.fpsExponent ?? 0.6;
  const res = resolutionSteps(src);
  const fpsSteps = frameRateSteps(src.fps);
  const top = fpsSteps[0];
  const step = (r: { width: number; height: number; scale: number }, fps: number): LadderStep => ({
    width: r.width,
    height: r.height,
    maxFps: fps,
    scale: r.scale,
    requiredBps: Math.round(startBitrate(r.width * r.height, limits) * Math.pow(Math.min(fps, 30) / Math.min(top, 30), exp)),
  });
  switch (pref) {
    case 'maintain-framerate-and-resolution':
      return [step(res[0], top)];
    case 'maintain-framerate':
      return withFloorSteps(
        res.map((r) => step(r, top)),
        src,
        floorBps,
        floorMinPixels,
      );
    case 'maintain-resolution':
      return fpsSteps.map((f) => step(res[0], f));
    case 'balanced': {
      const out: LadderStep[] = [];
      let fps = top;
      for (let i = 0; i < res.length; ) {
        out.push(step(res[i], fps));
        const min = balancedMinFps(res[i].width * res[i].height);
        if (fps > min) fps = Math.floor(min);
        else i++;
        // Keep the frame rate of the last size when moving to the next size.
      }
      return dedupe(out);
    }
    default:
      throw new RangeError(`buildLadder: unknown degradation preference ${String(pref)}`);
  }
}

/**
 * Floor steps (ours): libwebrtc stops at 320x180 (kDefaultMinPixelsPerFrame)
 * and meets a target under the encoder's floor there with its frame dropper
 * (modules/video_coding/utility/frame_dropper.cc), frame by frame through
 * every rate-control lag (docs/results.md stop 50); a lower frame rate saves
 * little (fps^0.4, see {@link DEFAULT_FLOOR_BITRATE_BPS}). So after the
 * smallest size the ladder goes on with smaller sizes at the same frame rate
 * (the same scale fractions: 240x180, 160x120 from 640x480), down to
 * `floorMinPixels`. Each needs the encoder's floor at its size
 * ({@link floorStepBitrateBps}), and so does the smallest regular size (where
 * the ladder returns once the target covers its floor). The adapter leaves a
 * floor step sooner than a regular one (VideoAdapterOptions.floorUpHoldUs).
 * Each step needs no more than the one before it (a custom `limits` table or
 * `floorBitrateBps` could otherwise order them the other way). Encoder
 * overuse steps down into them too (a smaller picture costs less to encode).
 */
function withFloorSteps(steps: LadderStep[], src: LadderSource, floorBps: number, minPixels: number): LadderStep[] {
  const last = steps[steps.length - 1];
  if (floorBps === 0) return steps;
  const floorAt = (r: { width: number; height: number }): number => floorStepBitrateBps(floorBps, r.width * r.height, last.maxFps);
  let need = Math.min(steps.length > 1 ? steps[steps.length - 2].requiredBps : Infinity, floorAt(last));
  last.requiredBps = need;
  const out = [...steps];
  for (const r of resolutionSteps(src, minPixels)) {
    if (r.width * r.height >= last.width * last.height) continue;
    need = Math.min(need, floorAt(r));
    out.push({ ...r, maxFps: last.maxFps, requiredBps: need, floor: true });
  }
  return out;
}

/**
 * The encoder's floor (bps) at `pixels` and `fps`, from its floor at
 * 320x240@30: x (pixels / 320x240)^0.8 below that size, ^0.6 above it
 * (sim/encoder-model.ts' delta-frame floor), x (fps / 30)^0.4 (Chromium's
 * H.264, measured at 10-30 fps: see {@link DEFAULT_FLOOR_BITRATE_BPS};
 * extrapolated above 30 fps).
 */
export function floorStepBitrateBps(floorBps: number, pixels: number, fps: number): number {
  const r = pixels / (320 * 240);
  return Math.round(floorBps * r ** (r < 1 ? 0.8 : 0.6) * (fps / 30) ** 0.4);
}

/** Drop consecutive equal steps (a resolution step that does not change the frame rate after a frame-rate step). */
function dedupe(steps: LadderStep[]): LadderStep[] {
  return steps.filter((s, i) => i === 0 || s.width !== steps[i - 1].width || s.maxFps !== steps[i - 1].maxFps);
}
