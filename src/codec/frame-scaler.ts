/**
 * Frame scaling for the resolution adaptation (browser only): the browser's
 * own 2D path (OffscreenCanvas `drawImage`).
 */
import { CodecError } from './codec-config.js';

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
