/**
 * Picture-quality metrics on 8-bit luma planes: PSNR and a cheap SSIM, with
 * an excluded rectangle (the frame-id barcode), plus a bilinear resize for
 * frames the sender's WebRTC stack downscaled.
 *
 * PSNR = 10 log10(255^2 / MSE) over the included pixels; identical planes
 * give {@link PSNR_CAP_DB}. SSIM after Wang et al., "Image quality assessment:
 * from error visibility to structural similarity" (IEEE TIP 2004), eq. 13,
 * with C1 = (0.01*255)^2 and C2 = (0.03*255)^2, computed on non-overlapping
 * 8x8 windows of the planes after a 2x2 box downsample (cheap; values are
 * close to but not equal to the reference 11x11-Gaussian SSIM).
 */
import type { Rect } from './barcode.js';

/** PSNR reported for identical planes (dB). */
export const PSNR_CAP_DB = 100;

export interface PlaneOpts {
  /** Pixels to leave out (e.g. the barcode). */
  exclude?: Rect;
  /** Row strides (default: width). */
  strideA?: number;
  strideB?: number;
}

function inRect(r: Rect | undefined, x: number, y: number): boolean {
  return r !== undefined && x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
}

/**
 * Mean squared error of two luma planes of `width` x `height` px.
 * @returns NaN when no pixel is included.
 */
export function mseY(a: Uint8Array, b: Uint8Array, width: number, height: number, opts: PlaneOpts = {}): number {
  const sa = opts.strideA ?? width;
  const sb = opts.strideB ?? width;
  const ex = opts.exclude;
  let sum = 0;
  let n = 0;
  for (let y = 0; y < height; y++) {
    const rowA = y * sa;
    const rowB = y * sb;
    const exRow = ex !== undefined && y >= ex.y && y < ex.y + ex.h;
    const x0 = exRow ? Math.max(0, ex.x) : 0;
    const x1 = exRow ? Math.min(width, ex.x + ex.w) : 0;
    for (let x = 0; x < width; x++) {
      if (exRow && x >= x0 && x < x1) {
        x = x1 - 1;
        continue;
      }
      const d = a[rowA + x] - b[rowB + x];
      sum += d * d;
      n++;
    }
  }
  return n > 0 ? sum / n : NaN;
}

/** PSNR (dB) of two 8-bit luma planes; {@link PSNR_CAP_DB} when identical, NaN when nothing is compared. */
export function psnrY(a: Uint8Array, b: Uint8Array, width: number, height: number, opts: PlaneOpts = {}): number {
  const mse = mseY(a, b, width, height, opts);
  if (Number.isNaN(mse)) return NaN;
  if (mse === 0) return PSNR_CAP_DB;
  return Math.min(PSNR_CAP_DB, 10 * Math.log10((255 * 255) / mse));
}

/** 2x2 box downsample (floor of odd sizes). */
export function downsample2(src: Uint8Array, width: number, height: number, stride = width): { data: Uint8Array; width: number; height: number } {
  const w = width >> 1;
  const h = height >> 1;
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    const r0 = 2 * y * stride;
    const r1 = r0 + stride;
    for (let x = 0; x < w; x++) {
      const c = 2 * x;
      out[y * w + x] = (src[r0 + c] + src[r0 + c + 1] + src[r1 + c] + src[r1 + c + 1] + 2) >> 2;
    }
  }
  return { data: out, width: w, height: h };
}

const C1 = (0.01 * 255) ** 2;
const C2 = (0.03 * 255) ** 2;

/**
 * Mean SSIM of two luma planes on non-overlapping `win` x `win` windows
 * (default 8) after a 2x2 downsample (`downsample: false` to skip it).
 * Windows touching `exclude` are skipped. Returns NaN when no window fits.
 */
export function ssimY(a: Uint8Array, b: Uint8Array, width: number, height: number, opts: PlaneOpts & { downsample?: boolean; win?: number } = {}): number {
  const win = opts.win ?? 8;
  let A = a;
  let B = b;
  let w = width;
  let h = height;
  let ex = opts.exclude;
  let sa = opts.strideA ?? width;
  let sb = opts.strideB ?? width;
  if (opts.downsample !== false) {
    const da = downsample2(a, width, height, sa);
    const db = downsample2(b, width, height, sb);
    A = da.data;
    B = db.data;
    w = da.width;
    h = da.height;
    sa = w;
    sb = w;
    if (ex) ex = { x: Math.floor(ex.x / 2), y: Math.floor(ex.y / 2), w: Math.ceil((ex.x + ex.w) / 2) - Math.floor(ex.x / 2), h: Math.ceil((ex.y + ex.h) / 2) - Math.floor(ex.y / 2) };
  }
  const n = win * win;
  let total = 0;
  let count = 0;
  for (let wy = 0; wy + win <= h; wy += win) {
    for (let wx = 0; wx + win <= w; wx += win) {
      if (ex && wx < ex.x + ex.w && wx + win > ex.x && wy < ex.y + ex.h && wy + win > ex.y) continue;
      let sA = 0;
      let sB = 0;
      let sAA = 0;
      let sBB = 0;
      let sAB = 0;
      for (let y = wy; y < wy + win; y++) {
        for (let x = wx; x < wx + win; x++) {
          const p = A[y * sa + x];
          const q = B[y * sb + x];
          sA += p;
          sB += q;
          sAA += p * p;
          sBB += q * q;
          sAB += p * q;
        }
      }
      const mA = sA / n;
      const mB = sB / n;
      const vA = sAA / n - mA * mA;
      const vB = sBB / n - mB * mB;
      const cov = sAB / n - mA * mB;
      total += ((2 * mA * mB + C1) * (2 * cov + C2)) / ((mA * mA + mB * mB + C1) * (vA + vB + C2));
      count++;
    }
  }
  return count > 0 ? total / count : NaN;
}

/**
 * Bilinear resize of a luma plane (pixel centres aligned, as ffmpeg's
 * `bilinear` / libyuv's kFilterBilinear do).
 * @throws RangeError on a non-positive size.
 */
export function resizeBilinearY(src: Uint8Array, sw: number, sh: number, dw: number, dh: number, srcStride = sw): Uint8Array {
  if (!(sw > 0 && sh > 0 && dw > 0 && dh > 0)) throw new RangeError(`resizeBilinearY: bad sizes ${sw}x${sh} -> ${dw}x${dh}`);
  const out = new Uint8Array(dw * dh);
  if (sw === dw && sh === dh) {
    for (let y = 0; y < sh; y++) out.set(src.subarray(y * srcStride, y * srcStride + sw), y * dw);
    return out;
  }
  const fx = sw / dw;
  const fy = sh / dh;
  for (let y = 0; y < dh; y++) {
    let syf = (y + 0.5) * fy - 0.5;
    if (syf < 0) syf = 0;
    const y0 = Math.min(sh - 1, Math.floor(syf));
    const y1 = Math.min(sh - 1, y0 + 1);
    const wy = syf - y0;
    for (let x = 0; x < dw; x++) {
      let sxf = (x + 0.5) * fx - 0.5;
      if (sxf < 0) sxf = 0;
      const x0 = Math.min(sw - 1, Math.floor(sxf));
      const x1 = Math.min(sw - 1, x0 + 1);
      const wx = sxf - x0;
      const top = src[y0 * srcStride + x0] * (1 - wx) + src[y0 * srcStride + x1] * wx;
      const bot = src[y1 * srcStride + x0] * (1 - wx) + src[y1 * srcStride + x1] * wx;
      out[y * dw + x] = Math.round(top * (1 - wy) + bot * wy);
    }
  }
  return out;
}

/**
 * Compare a received luma plane with its reference: resizes the received one
 * to the reference size when they differ, leaves out `exclude` (reference
 * coordinates), returns PSNR (dB) and, when `withSsim`, SSIM.
 */
export function compareY(
  ref: { y: Uint8Array; width: number; height: number },
  got: { y: Uint8Array; width: number; height: number; stride?: number },
  exclude: Rect | undefined,
  withSsim = true,
): { psnr: number; ssim?: number } {
  const same = got.width === ref.width && got.height === ref.height;
  const plane = same ? got.y : resizeBilinearY(got.y, got.width, got.height, ref.width, ref.height, got.stride ?? got.width);
  const strideB = same ? (got.stride ?? got.width) : ref.width;
  const psnr = psnrY(ref.y, plane, ref.width, ref.height, { exclude, strideB });
  const out: { psnr: number; ssim?: number } = { psnr };
  if (withSsim) out.ssim = ssimY(ref.y, plane, ref.width, ref.height, { exclude, strideB });
  return out;
}

/**
 * Least-squares fit `got ≈ gain * ref + offset` over every 4th pixel (outside
 * `exclude`) of two same-size luma planes (a diagnostic: gain ≈ 1.164 and offset ≈ -18.6 show a
 * limited-range source coded as full range; gain 1, offset 0 means no
 * colour-range/matrix mismatch).
 */
export function lumaFit(ref: Uint8Array, got: Uint8Array, width: number, height: number, exclude?: Rect): { gain: number; offset: number } {
  let n = 0;
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < width * height; i += 4) {
    if (exclude && inRect(exclude, i % width, Math.floor(i / width))) continue;
    const x = ref[i];
    const y = got[i];
    n++;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const den = n * sxx - sx * sx;
  if (n === 0 || den === 0) return { gain: NaN, offset: NaN };
  const gain = (n * sxy - sx * sy) / den;
  return { gain, offset: (sy - gain * sx) / n };
}
