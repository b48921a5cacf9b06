/**
 * Audio encoding that follows the rate the paths offer: the Opus bitrate and
 * frame duration the sender asks its audio encoder for, from the sum of the
 * usable paths' congestion-controller rates. I/O-free: the caller passes the
 * time (µs) and the available rate (bps).
 *
 * Why: on a slow link the audio's packet overhead, not its payload, is the
 * cost. A 20 ms Opus frame at 32 kbps is 80 bytes, and each datagram carries
 * ~110 bytes of IP, UDP, DTLS and SCTP headers plus ~16-30 of ours: ~85 kbps
 * on the wire, most of a 100 kbps uplink. 60 ms frames at 12 kbps cost ~30
 * kbps. libwebrtc's audio network adaptor (off unless an app configures it)
 * makes the same two moves (modules/audio_coding/audio_network_adaptor:
 * FrameLengthController goes from 20 to 60 ms frames when the uplink
 * bandwidth falls below a threshold and back above a higher one;
 * BitrateController sets the Opus target to the audio's allocated rate less
 * its per-packet overhead). The bitrates: RFC 7587 §3.1.1 recommends 8-12
 * kbps for narrowband and 16-20 kbps for wideband speech; 12 kbps is Opus'
 * SILK mode (RFC 6716 §2.1.1).
 *
 * Rule: each step has a wire rate (payload + `overheadBytes` per frame); the
 * controller takes the richest step whose wire rate is at most `maxShare` of
 * the available rate (`audioOnlyShare` while no video is sent). It steps down
 * once the step in use has not fitted for `downHoldMs`, and up one step once
 * the richer step has fitted for `upHoldMs` (a reconfiguration costs the
 * encoder a few ms of audio, so it must not flap with the estimate).
 */

/** An Opus encoding: target bitrate (bps) and frame duration (µs). */
export interface AudioEncoding {
  bitrateBps: number;
  frameDurationUs: number;
}

export interface AudioRateConfig {
  /** Steps, richest first (default {@link DEFAULT_AUDIO_STEPS}). */
  steps?: readonly AudioEncoding[];
  /** Bytes each frame costs on the wire besides its payload (default 128: IP + UDP + DTLS + SCTP ~112, our envelope ~16). */
  overheadBytes?: number;
  /** Largest fraction of the available rate audio may take on the wire (default 0.15). */
  maxShare?: number;
  /** How long (ms) a richer step must fit before the controller takes it (default 5000). */
  upHoldMs?: number;
  /**
   * How long (ms) the step in use must not fit before the controller leaves it (default 1000): a
   * congestion controller's dip on a fast path (an over-use back-off, recovered within a second or
   * two) is not a slow link. Cellular suite, converge, seeds 1-3: at once, +0.88 +- 0.99 s frozen per
   * seed set at the suite's rates; 1 s, -0.54 +- 0.44 (and -18.3 s instead of -17.7 at a tenth of them).
   */
  downHoldMs?: number;
  /**
   * The share while no video is sent (default 0.8): an audio-only call's
   * paths carry little else, and their congestion controllers, application-limited,
   * never estimate far above what audio sends (GCC: 1.5 x acknowledged + 10 kbps),
   * so the video share would hold it at the poorest step for good.
   */
  audioOnlyShare?: number;
}

/** Default steps: 32 kbps / 20 ms (the encoder's default), 24 kbps / 40 ms, 12 kbps / 60 ms. */
export const DEFAULT_AUDIO_STEPS: readonly AudioEncoding[] = [
  { bitrateBps: 32_000, frameDurationUs: 20_000 },
  { bitrateBps: 24_000, frameDurationUs: 40_000 },
  { bitrateBps: 12_000, frameDurationUs: 60_000 },
];

/** See the module comment. */
export class AudioRateController {
  private readonly steps: readonly AudioEncoding[];
  private readonly overhead: number;
  private readonly share: number;
  private readonly holdUs: number;
  private readonly audioOnlyShare: number;
  private cur = 0;
  private upSinceUs = -1;
  private downSinceUs = -1;
  private readonly downHoldUs: number;
  private lastUs = -Infinity;
  /** Step changes so far. */
  changes = 0;

  /**
   * @throws RangeError for no steps, a step without a positive bitrate and
   *   duration, steps not ordered richest first (by wire rate), a share
   *   outside (0, 1], a negative overhead or a hold that is not a finite
   *   number of ms >= 0.
   */
  constructor(cfg: AudioRateConfig = {}) {
    this.steps = cfg.steps ?? DEFAULT_AUDIO_STEPS;
    this.overhead = cfg.overheadBytes ?? 128;
    this.share = cfg.maxShare ?? 0.15;
    this.audioOnlyShare = cfg.audioOnlyShare ?? 0.8;
    const hold = cfg.upHoldMs ?? 5000;
    if (this.steps.length === 0 || !this.steps.every((s) => s.bitrateBps > 0 && s.frameDurationUs > 0)) throw new RangeError('AudioRateController: steps need a positive bitrate and frame duration');
    for (const x of [this.share, this.audioOnlyShare]) if (!(x > 0 && x <= 1)) throw new RangeError(`AudioRateController: a share must be in (0, 1], got ${x}`);
    if (!(this.overhead >= 0)) throw new RangeError(`AudioRateController: overheadBytes must be >= 0, got ${this.overhead}`);
    if (!(Number.isFinite(hold) && hold >= 0)) throw new RangeError(`AudioRateController: upHoldMs must be a finite number of ms >= 0, got ${hold}`);
    for (let i = 1; i < this.steps.length; i++) {
      if (!(this.wireBps(this.steps[i]) < this.wireBps(this.steps[i - 1])))
        throw new RangeError('AudioRateController: steps must be ordered richest first (each costs less on the wire than the one before)');
    }
    this.holdUs = hold * 1000;
    const down = cfg.downHoldMs ?? 1000;
    if (!(Number.isFinite(down) && down >= 0)) throw new RangeError(`AudioRateController: downHoldMs must be a finite number of ms >= 0, got ${down}`);
    this.downHoldUs = down * 1000;
  }

  /** Wire rate (bps) of a step. */
  wireBps(s: AudioEncoding): number {
    return s.bitrateBps + (this.overhead * 8 * 1e6) / s.frameDurationUs;
  }

  /** The encoding to use now. */
  get current(): AudioEncoding {
    return this.steps[this.cur];
  }

  /**
   * Update with the rate the usable paths offer (bps, audio included); returns the encoding to use.
   * A rate that is not a finite number > 0 (no usable path: nothing is known) leaves the encoding as it
   * is and restarts the hold, as does a gap of over 1 s since the last update.
   * @param audioOnly no video is being sent: `audioOnlyShare` instead of `maxShare`
   */
  update(nowUs: number, availableBps: number, audioOnly = false): AudioEncoding {
    const gap = nowUs - this.lastUs > 1_000_000;
    this.lastUs = nowUs;
    const known = availableBps > 0 && Number.isFinite(availableBps);
    if (!known || gap) {
      this.upSinceUs = -1;
      this.downSinceUs = -1;
    }
    if (!known) return this.current;
    const budget = availableBps * (audioOnly ? this.audioOnlyShare : this.share);
    let fit = this.steps.length - 1;
    for (let i = 0; i < this.steps.length; i++) {
      if (this.wireBps(this.steps[i]) <= budget) {
        fit = i;
        break;
      }
    }
    if (fit > this.cur) {
      this.upSinceUs = -1;
      if (this.downSinceUs < 0) this.downSinceUs = nowUs;
      if (nowUs - this.downSinceUs >= this.downHoldUs) {
        this.cur = fit;
        this.changes++;
        this.downSinceUs = -1;
      }
    } else if (fit < this.cur) {
      this.downSinceUs = -1;
      if (this.upSinceUs < 0) this.upSinceUs = nowUs;
      else if (nowUs - this.upSinceUs >= this.holdUs) {
        this.cur--;
        this.changes++;
        this.upSinceUs = -1;
      }
    } else {
      this.upSinceUs = -1;
      this.downSinceUs = -1;
    }
    return this.current;
  }
}
