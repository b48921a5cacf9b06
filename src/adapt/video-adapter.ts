/**
 * Resolution and frame-rate adaptation of a video sender, after WebRTC's
 * degradation preferences: the sender walks the ladder of
 * {@link buildLadder} (src/adapt/ladder.ts) down when the target bitrate is
 * too low for the current step or the encoder is overused, and back up, one
 * step at a time and with hysteresis, when both allow it. Free of I/O: the
 * caller passes the time (µs, from its Clock) and the measurements.
 *
 * Triggers (libwebrtc has two adaptation resources; we follow both, with the
 * bitrate standing in for the QP):
 * - Bandwidth. libwebrtc's QualityScaler (modules/video_coding/utility/
 *   quality_scaler.cc) steps down when the encoder's QP stays high. WebCodecs
 *   does not expose the QP of an encoded frame, so the adapter uses the
 *   target bitrate instead: a step down when the smoothed target stays below
 *   `downFactor` x the step's needed bitrate (the resolution's min start
 *   bitrate of encoder_info_settings.cc, see ladder.ts) for `downHoldUs`, to
 *   the first step whose needed bitrate the target meets (the initial frame
 *   size is chosen the same way, like video_stream_encoder.cc's
 *   MaximumFrameSizeForBitrate: < 300 kbps 320x240, < 500 kbps 640x480). A
 *   step up only when the target reaches the higher step's needed bitrate
 *   (video/adaptation/bitrate_constraint.cc) and has stayed there for
 *   `upHoldUs`.
 * - Encoder load (video/adaptation/overuse_frame_detector.cc): the encode
 *   usage (encode time / frame interval, see {@link EncodeUsageMeter}) above
 *   `overuseThreshold` (0.85) for `cpuHoldUs` steps down once; a step taken
 *   for the load is given back only when the usage is below
 *   `underuseThreshold` (0.42).
 *
 * Key frames (OUR RULE, not libwebrtc's): a new size costs a key frame. When
 * one is due anyway (a receiver's request after a loss, a periodic one:
 * {@link AdapterInput.keyFrameDue}) and the target is falling (at or under
 * its smoothed value) below `downFactor` x the step's need, the step down to
 * the size the target carries is taken at once (`keyframeDownHoldUs`,
 * default 0), not after `downHoldUs`: after a collapse of the rate the
 * recovery key frame is made at a smaller size, sent sooner. Not below the
 * smallest regular size (the floor steps follow a lasting slow link, by the
 * regular rule): in an outage the target reads the engine's floor. The way
 * back is quick when the rate comes back whole: after `floorUpHoldUs` of a
 * target and a smoothed target that cover the step it left, straight back
 * there (a short outage costs a second or two of a smaller picture, not two
 * regular up holds); otherwise the regular rule. docs/results.md, stop 52.
 *
 * Start-up: until the first step down, steps up are immediate and may skip
 * steps (`rampUpHoldUs`), as the bandwidth estimate ramps up from its start.
 *
 * Hysteresis: no step up within `upHoldUs` of any change; a step up followed
 * by a step down within `failWindowUs` doubles `upHoldUs` (up to
 * `maxUpHoldUs`), and a step up that survives `failWindowUs` restores it
 * (libwebrtc likewise backs off repeated failed up-steps).
 *
 * The reason follows W3C webrtc-stats `qualityLimitationReason`: 'none' at
 * the top step, 'cpu' while a load step is held, else 'bandwidth'.
 */
import { buildLadder, DEFAULT_DEGRADATION_PREFERENCE, type DegradationPreference, type LadderOptions, type LadderSource, type LadderStep } from './ladder.js';

export type DegradationReason = 'none' | 'bandwidth' | 'cpu';

export interface VideoAdapterOptions extends LadderOptions {
  /** Default {@link DEFAULT_DEGRADATION_PREFERENCE} ('maintain-framerate', as libwebrtc for camera video). */
  degradationPreference?: DegradationPreference;
  /**
   * Step down when the smoothed target < downFactor x the step's needed
   * bitrate (default 1: the needed bitrates match where Chromium's H.264
   * encoder stops meeting its target, ~380 kbps at 640x480 and ~290 kbps at
   * 480x360, see sim/encoder-model.ts; 0.75 froze 29.2 s vs 22.7 s per
   * 120 s with 'balanced' on the ATT LTE uplink in the simulator).
   */
  downFactor?: number;
  /** ... for this long (µs, default 1 s). */
  downHoldUs?: number;
  /** Time constant of the target's smoothing for the down decision (µs, default 0.5 s). */
  smoothingUs?: number;
  /** Conditions for a step up must hold this long, and no change may be younger (µs, default 5 s). */
  upHoldUs?: number;
  /**
   * Start-up: until the first step down after the start, a step up needs the
   * target to hold only this long (µs, default 0) and goes straight to the
   * highest step the target meets, as the estimate ramps up from its start
   * value (libwebrtc's quality_scaler.cc likewise ramps up fast until its
   * first adaptation down).
   */
  rampUpHoldUs?: number;
  /**
   * Up hold from a floor step (below the smallest regular size, see
   * src/adapt/ladder.ts), µs, default 1 s: the encoder overshoots a target
   * under its floor, so a floor step is left as soon as the target covers the
   * step above; failed up-steps lengthen it as they lengthen `upHoldUs`,
   * and it is never longer than the regular up hold.
   */
  floorUpHoldUs?: number;
  /** Longest `upHoldUs` after repeated failed up-steps (µs, default 60 s). */
  maxUpHoldUs?: number;
  /** A step down this soon after a step up makes the up-step a failure (µs, default 10 s). */
  failWindowUs?: number;
  /**
   * With a key frame due anyway ({@link AdapterInput.keyFrameDue}), a step
   * down to the size the target carries (not below the smallest regular
   * size: floor steps keep the regular rule) needs the target falling (at or
   * under its smoothed value) below `downFactor` x the current step's need
   * only this long (µs, default 0) instead of the smoothed target for
   * `downHoldUs`: a new size costs a key frame, and this one is paid already
   * (frame-rate steps, which cost none, keep the regular rule). Such a step
   * is undone, straight back to the step it left, after `floorUpHoldUs` of
   * a target and a smoothed target that cover that step again. A value
   * longer than any call (e.g. `Number.MAX_SAFE_INTEGER`) turns the rule off.
   */
  keyframeDownHoldUs?: number;
  /** Encode usage above which the encoder is overused (fraction, default 0.85). */
  overuseThreshold?: number;
  /** Encode usage below which a load step may be given back (fraction, default 0.42). */
  underuseThreshold?: number;
  /** Overuse must last this long before a step down (µs, default 3 s). */
  cpuHoldUs?: number;
}

/** What {@link VideoAdapter.update} is told. */
export interface AdapterInput {
  /** Now (µs, the caller's Clock). */
  nowUs: number;
  /** The encoder's target bitrate (bps). Not finite or <= 0: ignored. */
  targetBitrateBps: number;
  /** Encode time / frame interval (fraction, e.g. 0.3), if measured; undefined = unknown (no load adaptation). */
  encodeUsage?: number;
  /**
   * The next encoded frame is a key frame whatever the adapter decides (a
   * receiver's request, a periodic one): see `keyframeDownHoldUs`. Default false.
   */
  keyFrameDue?: boolean;
}

/** What the encoder should produce now. */
export interface AdaptationDecision {
  /** Encoded size (px, even). */
  width: number;
  height: number;
  /** Frame-rate cap (fps). */
  maxFps: number;
  reason: DegradationReason;
  /** Ladder step (0 = unadapted). */
  step: number;
  /** The ladder has this many steps. */
  steps: number;
  /** True when this update changed the step. */
  changed: boolean;
}

const DEFAULTS = {
  downFactor: 1,
  downHoldUs: 1_000_000,
  smoothingUs: 500_000,
  upHoldUs: 5_000_000,
  floorUpHoldUs: 1_000_000,
  rampUpHoldUs: 0,
  maxUpHoldUs: 60_000_000,
  failWindowUs: 10_000_000,
  keyframeDownHoldUs: 0,
  overuseThreshold: 0.85,
  underuseThreshold: 0.42,
  cpuHoldUs: 3_000_000,
};

/** See the module comment. One instance per encoded stream. */
export class VideoAdapter {
  private readonly o: typeof DEFAULTS;
  private readonly ladderOpts: LadderOptions;
  private pref: DegradationPreference;
  private src: LadderSource;
  private ladder: LadderStep[];
  private index = 0;
  private started = false;
  private lastNowUs = 0;
  private smoothedBps = 0;
  private belowSinceUs: number | undefined;
  /** Since when the target has been falling below the current step's need (the key frame rule, 2b). */
  private keyBelowSinceUs: number | undefined;
  /** The step the key frame rule left (2b), until any other change: its way back up is quick. */
  private keyDownFrom: number | undefined;
  private upOkSinceUs: number | undefined;
  private overuseSinceUs: number | undefined;
  private lastChangeUs = -Infinity;
  private lastUpUs: number | undefined;
  private upHoldUs: number;
  private cpuSteps = 0;
  private changes = 0;
  /** Start-up phase (no step down yet): fast, multi-step up-steps. */
  private rampUp = true;

  /**
   * @param source camera size (px) and rate (fps)
   * @throws RangeError for a bad source, preference or option
   */
  constructor(source: LadderSource, opts: VideoAdapterOptions = {}) {
    this.o = { ...DEFAULTS };
    for (const k of Object.keys(DEFAULTS) as Array<keyof typeof DEFAULTS>) {
      const v = opts[k];
      if (v === undefined) continue;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new RangeError(`VideoAdapter: ${k} must be a finite number >= 0, got ${String(v)}`);
      this.o[k] = v;
    }
    if (!(this.o.underuseThreshold < this.o.overuseThreshold)) throw new RangeError('VideoAdapter: underuseThreshold must be < overuseThreshold');
    this.ladderOpts = { limits: opts.limits, fpsExponent: opts.fpsExponent, floorBitrateBps: opts.floorBitrateBps, floorMinPixels: opts.floorMinPixels };
    this.pref = opts.degradationPreference ?? DEFAULT_DEGRADATION_PREFERENCE;
    this.src = { ...source };
    this.ladder = buildLadder(this.src, this.pref, this.ladderOpts);
    this.upHoldUs = this.o.upHoldUs;
  }

  /** The current preference. */
  get degradationPreference(): DegradationPreference {
    return this.pref;
  }

  /** The ladder in use (step 0 first). */
  steps(): readonly LadderStep[] {
    return this.ladder;
  }

  /** Number of step changes so far (either direction). */
  get adaptationChanges(): number {
    return this.changes;
  }

  /** The current decision without updating. */
  current(): AdaptationDecision {
    return this.decision(false);
  }

  /**
   * Change the preference (as `RTCRtpSender.setParameters` may) or the
   * source: the ladder is rebuilt and the step chosen again from the smoothed
   * target at the next update, as at the start.
   * @throws RangeError for a bad source or preference
   */
  reconfigure(change: { degradationPreference?: DegradationPreference; source?: LadderSource }): void {
    const pref = change.degradationPreference ?? this.pref;
    const src = change.source ? { ...change.source } : this.src;
    this.ladder = buildLadder(src, pref, this.ladderOpts);
    this.pref = pref;
    this.src = src;
    this.index = 0;
    this.keyDownFrom = undefined;
    this.cpuSteps = 0;
    this.started = false;
    this.rampUp = true;
    this.resetHolds();
  }

  /** Feed the latest target and load; returns what to encode. Call at least every frame or every ~100 ms. */
  update(input: AdapterInput): AdaptationDecision {
    const now = Number.isFinite(input.nowUs) ? Math.max(input.nowUs, this.lastNowUs) : this.lastNowUs;
    const dt = now - this.lastNowUs;
    this.lastNowUs = now;
    const target = input.targetBitrateBps;
    const haveTarget = Number.isFinite(target) && target > 0;
    const usage = input.encodeUsage !== undefined && Number.isFinite(input.encodeUsage) && input.encodeUsage >= 0 ? input.encodeUsage : undefined;
    const last = this.ladder.length - 1;

    if (!this.started) {
      if (!haveTarget) return this.decision(false);
      this.started = true;
      this.smoothedBps = target;
      const before = this.index;
      this.index = this.firstStepFor(target, 0);
      this.lastChangeUs = now;
      return this.decision(this.index !== before);
    }
    if (haveTarget) {
      const a = this.o.smoothingUs > 0 ? 1 - Math.exp(-dt / this.o.smoothingUs) : 1;
      this.smoothedBps += (target - this.smoothedBps) * a;
    }
    const step = this.ladder[this.index];

    // Failed or successful up-step bookkeeping.
    if (this.lastUpUs !== undefined && now - this.lastUpUs >= this.o.failWindowUs) {
      this.lastUpUs = undefined;
      this.upHoldUs = this.o.upHoldUs;
    }

    // 1. Encoder overuse: one step down after cpuHoldUs.
    if (usage !== undefined && usage > this.o.overuseThreshold) {
      this.overuseSinceUs ??= now;
      if (now - this.overuseSinceUs >= this.o.cpuHoldUs && this.index < last) {
        this.cpuSteps++;
        return this.stepTo(this.index + 1, now);
      }
    } else this.overuseSinceUs = undefined;

    // 2. Bandwidth: down to the first step the smoothed target can carry.
    if (this.smoothedBps < this.o.downFactor * step.requiredBps) {
      this.belowSinceUs ??= now;
      if (now - this.belowSinceUs >= this.o.downHoldUs && this.index < last) {
        return this.stepTo(Math.max(this.index + 1, this.firstStepFor(this.smoothedBps, this.index + 1)), now);
      }
    } else this.belowSinceUs = undefined;
    // 2b. A key frame is due anyway: while the target falls (at or under its smoothed value) below the step's need,
    // the step down to the size it carries is taken at once. After a collapse of the rate the receiver's recovery key
    // frame is then made at a smaller size, sent sooner (OUR RULE, not libwebrtc's). A rising target whose smoothed
    // value lags (a ramp-up step just taken) does not count.
    if (haveTarget && target <= this.smoothedBps && target < this.o.downFactor * step.requiredBps) {
      this.keyBelowSinceUs ??= now;
      if (input.keyFrameDue === true && now - this.keyBelowSinceUs >= this.o.keyframeDownHoldUs && this.index < last) {
        // To the step the target carries, but not into the floor steps (a lasting slow link's: the regular rule).
        let lowest = last;
        while (lowest > 0 && this.ladder[lowest].floor) lowest--;
        const to = Math.min(lowest, Math.max(this.index + 1, this.firstStepFor(target, this.index + 1)));
        // Only a new size rides on the key frame (a frame-rate step costs none: it keeps the regular rule).
        if (to > this.index && (this.ladder[to].width !== step.width || this.ladder[to].height !== step.height)) {
          const from = this.keyDownFrom ?? this.index;
          const d = this.stepTo(to, now);
          this.keyDownFrom = from;
          return d;
        }
      }
    } else this.keyBelowSinceUs = undefined;

    // 3. One step up when the target and the load have allowed it for upHoldUs.
    if (this.index > 0) {
      const up = this.ladder[this.index - 1];
      const bwOk = haveTarget && target >= up.requiredBps && (this.rampUp || this.smoothedBps >= up.requiredBps);
      const cpuOk = usage === undefined ? true : this.cpuSteps > 0 ? usage < this.o.underuseThreshold : usage <= this.o.overuseThreshold;
      if (bwOk && cpuOk) {
        this.upOkSinceUs ??= now;
        // From a floor step, or back to the step a key frame's step left (2b, taken on a short-term signal) once both
        // targets carry it again: floorUpHoldUs times the failed-up-step backoff, never longer than the regular hold.
        const kb = this.keyDownFrom;
        const back = kb !== undefined && target >= this.ladder[kb].requiredBps && this.smoothedBps >= this.ladder[kb].requiredBps ? kb : undefined;
        const backoff = this.o.upHoldUs > 0 ? this.upHoldUs / this.o.upHoldUs : 1;
        const hold = this.rampUp ? this.o.rampUpHoldUs : step.floor || back !== undefined ? Math.min(this.upHoldUs, this.o.floorUpHoldUs * backoff) : this.upHoldUs;
        if (now - this.upOkSinceUs >= hold && now - this.lastChangeUs >= hold) {
          if (this.cpuSteps > 0) this.cpuSteps--;
          this.lastUpUs = now;
          // Start-up: straight to the highest step the raw target meets (the load allowing); after a key frame's
          // step, straight back to the step it left.
          const to = this.rampUp && this.cpuSteps === 0 ? Math.min(this.index - 1, this.firstStepFor(target, 0)) : back !== undefined && this.cpuSteps === 0 ? back : this.index - 1;
          return this.stepTo(to, now);
        }
      } else this.upOkSinceUs = undefined;
    }
    return this.decision(false);
  }

  /** First step at or after `from` whose needed bitrate `bps` meets (the last step if none). */
  private firstStepFor(bps: number, from: number): number {
    for (let i = from; i < this.ladder.length; i++) if (bps >= this.ladder[i].requiredBps) return i;
    return this.ladder.length - 1;
  }

  private stepTo(index: number, now: number): AdaptationDecision {
    const down = index > this.index;
    if (down) this.rampUp = false;
    if (down && this.lastUpUs !== undefined && now - this.lastUpUs < this.o.failWindowUs) {
      this.upHoldUs = Math.min(this.o.maxUpHoldUs, this.upHoldUs * 2);
      this.lastUpUs = undefined;
    }
    this.index = index;
    this.keyDownFrom = undefined;
    this.cpuSteps = Math.min(this.cpuSteps, index);
    this.lastChangeUs = now;
    this.changes++;
    this.resetHolds();
    return this.decision(true);
  }

  private resetHolds(): void {
    this.belowSinceUs = undefined;
    this.keyBelowSinceUs = undefined;
    this.upOkSinceUs = undefined;
    this.overuseSinceUs = undefined;
  }

  private decision(changed: boolean): AdaptationDecision {
    const s = this.ladder[this.index];
    const reason: DegradationReason = this.index === 0 ? 'none' : this.cpuSteps > 0 ? 'cpu' : 'bandwidth';
    return { width: s.width, height: s.height, maxFps: s.maxFps, reason, step: this.index, steps: this.ladder.length, changed };
  }
}

/**
 * Encode usage after video/adaptation/overuse_frame_detector.cc: the share of
 * the frame interval the encoder is busy, as the ratio of exponentially
 * smoothed encode times to smoothed frame intervals. Pure: the caller gives
 * the times.
 */
export class EncodeUsageMeter {
  private encodeUs = 0;
  private intervalUs = 0;
  private lastFrameUs: number | undefined;
  private n = 0;

  /** @param alpha smoothing weight of a new sample (0 < alpha <= 1, default 0.05: about 20 frames). */
  constructor(private readonly alpha = 0.05) {
    if (!(alpha > 0 && alpha <= 1)) throw new RangeError(`EncodeUsageMeter: alpha must be in (0, 1], got ${alpha}`);
  }

  /**
   * One encoded frame: when its input was captured/sent to the encoder and
   * how long the encoder took (µs). Bad values are ignored.
   */
  addFrame(frameUs: number, encodeDurationUs: number): void {
    if (!Number.isFinite(frameUs) || !Number.isFinite(encodeDurationUs) || encodeDurationUs < 0) return;
    if (this.lastFrameUs !== undefined) {
      const gap = frameUs - this.lastFrameUs;
      if (gap > 0 && gap < 1_000_000) this.intervalUs = this.n <= 1 ? gap : this.intervalUs + (gap - this.intervalUs) * this.alpha;
    }
    this.lastFrameUs = frameUs;
    this.encodeUs = this.n === 0 ? encodeDurationUs : this.encodeUs + (encodeDurationUs - this.encodeUs) * this.alpha;
    this.n++;
  }

  /** Smoothed encode time / smoothed frame interval (fraction), undefined before 5 frames. */
  usage(): number | undefined {
    if (this.n < 5 || !(this.intervalUs > 0)) return undefined;
    return this.encodeUs / this.intervalUs;
  }
}

/**
 * Drops input frames to meet a frame-rate cap: a frame is kept when its
 * timestamp reaches the next due time (with a tenth of an interval of slack
 * for capture jitter); the due time advances by one interval per kept frame
 * and restarts after a gap. Like media/base/video_adapter.cc's frame-rate
 * control, it works on the frames' own timestamps.
 */
export class FrameRateLimiter {
  private nextUs: number | undefined;
  private maxFps = Infinity;

  /** Set the cap (fps; Infinity or <= 0 = no cap). */
  setMaxFps(fps: number): void {
    const f = Number.isFinite(fps) && fps > 0 ? fps : Infinity;
    if (f !== this.maxFps) {
      this.maxFps = f;
      this.nextUs = undefined;
    }
  }

  /** True to encode the frame with this timestamp (µs, increasing); false to drop it. */
  keep(timestampUs: number): boolean {
    if (this.maxFps === Infinity) return true;
    const interval = 1e6 / this.maxFps;
    if (this.nextUs !== undefined && timestampUs < this.nextUs - interval / 10) return false;
    this.nextUs = this.nextUs === undefined || timestampUs - this.nextUs > interval ? timestampUs + interval : this.nextUs + interval;
    return true;
  }
}
