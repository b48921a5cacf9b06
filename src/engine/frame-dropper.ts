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
  shouldDrop(keyFrame: boolean, fps: number, minDrainMs: () => number, temporalLayer?: number): boolean {
    if (keyFrame || this.cfg.dropQueueFrames <= 0) {
      this.consecutive = 0;
      return false;
    }
    const frames = this.cfg.dropQueueFrames * (temporalLayer !== undefined && temporalLayer > 0 ? this.cfg.upperLayerDropFactor : 1);
    const budgetMs = (frames * 1000) / Math.max(1, fps);
    const drainMs = minDrainMs();
    if (drainMs > budgetMs && Number.isFinite(drainMs) && this.consecutive < this.cfg.maxConsecutiveDrops) {
      this.consecutive++;
      this.dropped++;
      return true;
    }
    this.consecutive = 0;
    return false;
  }
}
