/**
 * Deterministic synthetic I420 source: a moving gradient, a textured
 * checkerboard band that scrolls, and a bright square bouncing across the
 * picture. Frame `index` is a pure function of (index, width, height), so the
 * receiver regenerates the exact reference of any frame id for PSNR.
 * Luma stays in the limited range 16..235.
 */
import type { I420Frame } from './y4m.js';

/** Frames in one loop of the pattern (ids are mapped modulo this). */
export const SYNTHETIC_PERIOD = 600;

/** Allocate an I420 frame (grey). */
export function allocI420(width: number, height: number): I420Frame {
  const cw = Math.ceil(width / 2);
  const ch = Math.ceil(height / 2);
  const y = new Uint8Array(width * height).fill(128);
  const u = new Uint8Array(cw * ch).fill(128);
  const v = new Uint8Array(cw * ch).fill(128);
  return { width, height, y, u, v };
}

/**
 * Fill `out` (or a new frame) with synthetic frame `index`.
 * @throws RangeError on a bad size or index.
 */
export function syntheticI420(index: number, width: number, height: number, out?: I420Frame): I420Frame {
  if (!Number.isInteger(index) || index < 0) throw new RangeError(`syntheticI420: bad index ${index}`);
  if (!(width >= 16 && height >= 16)) throw new RangeError(`syntheticI420: bad size ${width}x${height}`);
  const f = out ?? allocI420(width, height);
  const t = index % SYNTHETIC_PERIOD;
  const { y, u, v } = f;
  const band0 = Math.floor(height * 0.55);
  const band1 = Math.floor(height * 0.8);
  const shift = (t * 3) % 64;
  for (let r = 0; r < height; r++) {
    const row = r * width;
    const inBand = r >= band0 && r < band1;
    for (let c = 0; c < width; c++) {
      let val: number;
      if (inBand) {
        const cx = ((c + shift) >> 3) & 1;
        const cy = (r >> 3) & 1;
        val = cx ^ cy ? 200 : 50;
        val += ((c * 7 + r * 13) & 15) - 8; // fine texture
      } else {
        val = 40 + ((((c + r + t * 2) % 512) + 512) % 512) * (150 / 512);
      }
      y[row + c] = val;
    }
  }
  // Bouncing square.
  const size = Math.max(8, Math.floor(Math.min(width, height) / 6));
  const span = Math.max(1, width - size);
  const p = (t * 5) % (2 * span);
  const sx = p < span ? p : 2 * span - p;
  const sy = Math.floor(height * 0.25 + Math.sin((t / SYNTHETIC_PERIOD) * 2 * Math.PI * 4) * height * 0.1);
  for (let r = sy; r < sy + size && r < height; r++) y.fill(225, r * width + sx, r * width + Math.min(width, sx + size));
  const cw = Math.ceil(width / 2);
  const ch = Math.ceil(height / 2);
  for (let r = 0; r < ch; r++) {
    for (let c = 0; c < cw; c++) {
      u[r * cw + c] = 96 + ((c + t) % 64);
      v[r * cw + c] = 96 + ((r * 2 + t) % 64);
    }
  }
  return f;
}
