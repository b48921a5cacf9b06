/**
 * Frame-id barcode drawn into the luma (Y) plane of each source frame, so the
 * receiver can tell which source frame a decoded picture shows.
 *
 * Layout (given for a 640x480 frame; every size is scaled by width/640 and
 * height/480, so a frame the sender's WebRTC stack downscaled still decodes):
 * a block grid of {@link BARCODE_ROWS} x {@link BARCODE_COLS} squares of
 * 24x24 px whose top-left corner is at (8, 8). The 26 blocks, row-major:
 *
 *   0: white reference, 1: black reference,
 *   2..21: frame id (20 bits, most significant first),
 *   22..25: CRC-4 (x^4 + x + 1, ITU-T G.704) of the 20 id bits.
 *
 * White is Y = 235 and black Y = 16 (limited range, so the RGB round trip of
 * a canvas does not clip); chroma of the barcode area is set to 128 (grey).
 * The reader averages the central half of each block and thresholds it at
 * the midpoint of the two reference blocks, which survives blur, noise,
 * blocking artefacts and brightness shifts; the CRC rejects misreads.
 *
 * Pure functions, no DOM: used by the bench pages and the unit tests.
 */

/** Blocks per row / rows (26 blocks used). */
export const BARCODE_COLS = 13;
export const BARCODE_ROWS = 2;
/** Id bits carried (ids are taken modulo 2^20). */
export const BARCODE_ID_BITS = 20;
export const BARCODE_ID_MODULO = 1 << BARCODE_ID_BITS;
const CRC_BITS = 4;
const REF_W = 640;
const REF_H = 480;
const REF_BLOCK = 24;
const REF_MARGIN = 8;
export const BARCODE_WHITE = 235;
export const BARCODE_BLACK = 16;

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface BarcodeLayout {
  /** Top-left of the block grid (px). */
  x0: number;
  y0: number;
  /** Block size (px, fractional). */
  blockW: number;
  blockH: number;
  /** Area to exclude from quality metrics: the grid plus a margin on each side (px, integers). */
  exclude: Rect;
}

/**
 * Barcode geometry for a frame of `width` x `height` px.
 * @throws RangeError when the frame is too small to hold a readable barcode (blocks under 3 px).
 */
export function barcodeLayout(width: number, height: number): BarcodeLayout {
  if (!Number.isFinite(width) || !Number.isFinite(height) || width <= 0 || height <= 0) {
    throw new RangeError(`barcodeLayout: bad frame size ${width}x${height}`);
  }
  const sx = width / REF_W;
  const sy = height / REF_H;
  const blockW = REF_BLOCK * sx;
  const blockH = REF_BLOCK * sy;
  if (blockW < 3 || blockH < 3) throw new RangeError(`barcodeLayout: frame ${width}x${height} too small for the barcode`);
  const x0 = REF_MARGIN * sx;
  const y0 = REF_MARGIN * sy;
  const w = Math.min(width, Math.ceil(x0 + BARCODE_COLS * blockW + REF_MARGIN * sx));
  const h = Math.min(height, Math.ceil(y0 + BARCODE_ROWS * blockH + REF_MARGIN * sy));
  return { x0, y0, blockW, blockH, exclude: { x: 0, y: 0, w, h } };
}

/** CRC-4 (polynomial x^4 + x + 1, initial value 0) of the low `nBits` of `value`, MSB first. */
export function crc4(value: number, nBits: number): number {
  let crc = 0;
  for (let i = nBits - 1; i >= 0; i--) {
    const bit = (value >>> i) & 1;
    const top = (crc >>> 3) & 1;
    crc = (crc << 1) & 0xf;
    if (top ^ bit) crc ^= 0x3;
  }
  return crc;
}

/** The 26 block values (1 = white) for frame id `id` (taken modulo 2^20). */
export function barcodeBits(id: number): Uint8Array {
  if (!Number.isInteger(id) || id < 0) throw new RangeError(`barcodeBits: id must be a non-negative integer, got ${id}`);
  const v = id % BARCODE_ID_MODULO;
  const bits = new Uint8Array(2 + BARCODE_ID_BITS + CRC_BITS);
  bits[0] = 1;
  bits[1] = 0;
  for (let i = 0; i < BARCODE_ID_BITS; i++) bits[2 + i] = (v >>> (BARCODE_ID_BITS - 1 - i)) & 1;
  const c = crc4(v, BARCODE_ID_BITS);
  for (let i = 0; i < CRC_BITS; i++) bits[2 + BARCODE_ID_BITS + i] = (c >>> (CRC_BITS - 1 - i)) & 1;
  return bits;
}

function blockRect(l: BarcodeLayout, index: number): { x: number; y: number; x1: number; y1: number } {
  const col = index % BARCODE_COLS;
  const row = Math.floor(index / BARCODE_COLS);
  const x = Math.round(l.x0 + col * l.blockW);
  const y = Math.round(l.y0 + row * l.blockH);
  const x1 = Math.round(l.x0 + (col + 1) * l.blockW);
  const y1 = Math.round(l.y0 + (row + 1) * l.blockH);
  return { x, y, x1, y1 };
}

/**
 * Draw the barcode of `id` into an I420 frame (in place). `u`/`v` (chroma
 * planes, half size) are optional; when given, the excluded area is made grey.
 * @param stride bytes per luma row (default `width`).
 */
export function drawBarcodeI420(y: Uint8Array, width: number, height: number, id: number, opts: { stride?: number; u?: Uint8Array; v?: Uint8Array; uvStride?: number } = {}): void {
  const stride = opts.stride ?? width;
  const l = barcodeLayout(width, height);
  const bits = barcodeBits(id);
  // Quiet zone: mid grey around the blocks.
  for (let r = l.exclude.y; r < l.exclude.y + l.exclude.h; r++) y.fill(128, r * stride + l.exclude.x, r * stride + l.exclude.x + l.exclude.w);
  for (let i = 0; i < bits.length; i++) {
    const b = blockRect(l, i);
    const val = bits[i] ? BARCODE_WHITE : BARCODE_BLACK;
    for (let r = b.y; r < b.y1 && r < height; r++) y.fill(val, r * stride + b.x, r * stride + Math.min(b.x1, width));
  }
  if (opts.u && opts.v) {
    const cs = opts.uvStride ?? Math.ceil(width / 2);
    const cx1 = Math.ceil((l.exclude.x + l.exclude.w) / 2);
    const cy1 = Math.ceil((l.exclude.y + l.exclude.h) / 2);
    for (let r = Math.floor(l.exclude.y / 2); r < cy1; r++) {
      opts.u.fill(128, r * cs + Math.floor(l.exclude.x / 2), r * cs + cx1);
      opts.v.fill(128, r * cs + Math.floor(l.exclude.x / 2), r * cs + cx1);
    }
  }
}

export type BarcodeRead =
  | { ok: true; id: number /** Smallest |block mean - threshold| / (white - black), 0..0.5. */; margin: number }
  | { ok: false; reason: 'contrast' | 'crc' | 'ambiguous'; margin: number };

/**
 * Read the frame id from a luma plane of `width` x `height` px.
 * Fails (ok false) when the reference blocks lack contrast (no barcode),
 * when a block is too close to the threshold (`minMargin`, default 0.1), or
 * when the CRC does not match.
 */
export function readBarcodeY(y: Uint8Array, width: number, height: number, opts: { stride?: number; minMargin?: number } = {}): BarcodeRead {
  const stride = opts.stride ?? width;
  const minMargin = opts.minMargin ?? 0.1;
  const l = barcodeLayout(width, height);
  const n = 2 + BARCODE_ID_BITS + CRC_BITS;
  const means = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const b = blockRect(l, i);
    const bw = b.x1 - b.x;
    const bh = b.y1 - b.y;
    const xa = b.x + Math.floor(bw / 4);
    const xb = Math.max(xa + 1, b.x1 - Math.floor(bw / 4));
    const ya = b.y + Math.floor(bh / 4);
    const yb = Math.max(ya + 1, b.y1 - Math.floor(bh / 4));
    let sum = 0;
    let cnt = 0;
    for (let r = ya; r < yb && r < height; r++) {
      const row = r * stride;
      for (let c = xa; c < xb && c < width; c++) {
        sum += y[row + c];
        cnt++;
      }
    }
    means[i] = cnt ? sum / cnt : 0;
  }
  const white = means[0];
  const black = means[1];
  const span = white - black;
  if (span < 40) return { ok: false, reason: 'contrast', margin: 0 };
  const thr = (white + black) / 2;
  let margin = 0.5;
  let id = 0;
  let crc = 0;
  for (let i = 2; i < n; i++) {
    const m = Math.abs(means[i] - thr) / span;
    if (m < margin) margin = m;
    const bit = means[i] > thr ? 1 : 0;
    if (i < 2 + BARCODE_ID_BITS) id = id * 2 + bit;
    else crc = crc * 2 + bit;
  }
  if (margin < minMargin) return { ok: false, reason: 'ambiguous', margin };
  if (crc4(id, BARCODE_ID_BITS) !== crc) return { ok: false, reason: 'crc', margin };
  return { ok: true, id, margin };
}

/**
 * Undo the modulo-2^20 wrap of a read id, given the id expected near it
 * (e.g. the last id read): returns the unwrapped id closest to `near`.
 */
export function unwrapBarcodeId(read: number, near: number): number {
  const base = near - (near % BARCODE_ID_MODULO);
  let best = base + read;
  for (const cand of [best - BARCODE_ID_MODULO, best + BARCODE_ID_MODULO]) if (cand >= 0 && Math.abs(cand - near) < Math.abs(best - near)) best = cand;
  return best;
}
