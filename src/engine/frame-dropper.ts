/**
 * Frame dropping before encoding: skip a camera frame when the sender's
 * queues are already longer than a few frame intervals, because the frame
 * would only be late and delay the ones after it (libwebrtc
 * modules/video_coding/utility/frame_dropper.cc drops on a leaky bucket of
 * encoded bytes vs target for the same reason). A key frame is never
 * dropped, nor more than `maxConsecutiveDrops` frames in a row.
 */

export interface FrameDropperConfig {
  /** Drop when the shortest queue drains in more than this many frame intervals; 0 = never drop. */
  dropQueueFrames: number;
  /** Longest run of frames dropped in a row before one is let through. */
  maxConsecutiveDrops: number;
  /** Upper temporal layer frames are dropped at this fraction of the budget (0..1). */
  upperLayerDropFactor: number;
}

export class FrameDropper {
  private consecutive = 0;
  /** Frames dropped so far. */
  dropped = 0;
  /** Encoder overshoot (SenderEngineConfig.overshootDrop): the leaky bucket (bits), its last leak (µs), the target then (bps), a key frame's spread (bps until µs). */
  private bucket = 0;
  private lastUs = Number.NaN;
  private targetBps = 0;
  private spreadBps = 0;
  private spreadUntilUs = 0;

  /** @throws RangeError for negative or non-finite counts, or a factor outside [0, 1]. */
  constructor(private readonly cfg: FrameDropperConfig) {
    for (const k of ['dropQueueFrames', 'maxConsecutiveDrops'] as const) {
      const v = cfg[k];
      if (!(Number.isFinite(v) && v >= 0)) throw new RangeError(`SenderEngine: ${k} must be a finite number >= 0, got ${v}`);
    }
    if (!(cfg.upperLayerDropFactor >= 0 && cfg.upperLayerDropFactor <= 1)) {
      throw new RangeError(`SenderEngine: upperLayerDropFactor must be in [0, 1], got ${cfg.upperLayerDropFactor}`);
    }
  }

  /** False when dropping is off: the caller can skip measuring its queues. */
  get enabled(): boolean {
    return this.cfg.dropQueueFrames > 0;
  }

  /**
   * Decide for one frame. `minDrainMs` is the shortest time (ms) any usable
   * path needs to drain its queue (Infinity when none is usable: no drop).
   * @param temporalLayer the frame's temporal layer, undefined = no layering
   */
  shouldDrop(keyFrame: boolean, fps: number, minDrainMs: () => number, temporalLayer?: number, over = false): boolean {
    if (keyFrame || this.cfg.dropQueueFrames <= 0) {
      this.consecutive = 0;
      return false;
    }
    const frames = this.cfg.dropQueueFrames * (temporalLayer !== undefined && temporalLayer > 0 ? this.cfg.upperLayerDropFactor : 1);
    const budgetMs = (frames * 1000) / Math.max(1, fps);
    const drainMs = minDrainMs();
    if ((over || (drainMs > budgetMs && Number.isFinite(drainMs))) && this.consecutive < this.cfg.maxConsecutiveDrops) {
      this.consecutive++;
      this.dropped++;
      return true;
    }
    this.consecutive = 0;
    return false;
  }

  /**
   * Encoder overshoot (SenderEngineConfig.overshootDrop): the encoded bits
   * not yet covered by the target, a leaky bucket drained at the target
   * rate; true while it holds more than half a second of the target (pass
   * it to {@link shouldDrop}). libwebrtc media_opt FrameDropper
   * (modules/video_coding/utility/frame_dropper.cc): kLeakyBucketSizeSeconds
   * 0.5, a key frame spread over 0.5 s, the bucket capped at 3 s of target
   * (kAccumulatorCapBufferSizeSecs) and scaled down with the target when a
   * lower target leaves it over the limit (SetRates); drops here are
   * bounded by maxConsecutiveDrops instead of its drop-ratio filter.
   * @param bytes the frame just sent (bytes), 0 to only ask
   */
  overshoot(nowUs: number, targetBps: number, bytes = 0, keyFrame = false): boolean {
    const dt = nowUs - this.lastUs;
    if (dt > 0) this.bucket = Math.max(0, this.bucket + (this.spreadBps * Math.max(0, Math.min(dt, this.spreadUntilUs - this.lastUs)) - targetBps * dt) / 1e6);
    if (targetBps < this.targetBps && this.bucket > targetBps / 2) this.bucket *= targetBps / this.targetBps;
    this.lastUs = nowUs;
    this.targetBps = targetBps;
    if (keyFrame) {
      this.spreadBps = bytes * 16;
      this.spreadUntilUs = nowUs + 500_000;
    } else this.bucket += bytes * 8;
    this.bucket = Math.min(this.bucket, 3 * targetBps);
    return this.bucket > targetBps / 2;
  }
}
