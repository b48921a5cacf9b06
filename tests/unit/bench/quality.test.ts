import { describe, expect, it } from 'vitest';
import { PSNR_CAP_DB, compareY, downsample2, lumaFit, mseY, psnrY, resizeBilinearY, ssimY } from '../../../bench/browser/quality.js';

function plane(w: number, h: number, f: (x: number, y: number) => number): Uint8Array {
  const p = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) p[y * w + x] = f(x, y);
  return p;
}

describe('PSNR', () => {
  it('is the cap for identical planes and 10 log10(255^2 / MSE) otherwise', () => {
    const a = plane(16, 16, (x, y) => (x * 7 + y * 3) & 255);
    expect(psnrY(a, a, 16, 16)).toBe(PSNR_CAP_DB);
    // Every pixel off by 4: MSE 16.
    const b = a.map((v) => v + 4);
    expect(mseY(a, b, 16, 16)).toBe(16);
    expect(psnrY(a, b, 16, 16)).toBeCloseTo(10 * Math.log10((255 * 255) / 16), 10);
    // Half the pixels off by 10: MSE 50.
    const c = plane(16, 16, (x, y) => ((x * 7 + y * 3) & 255) + (x < 8 ? 10 : 0));
    expect(mseY(a, c, 16, 16)).toBe(50);
  });

  it('leaves out the excluded rectangle', () => {
    const a = new Uint8Array(8 * 8).fill(100);
    const b = a.slice();
    for (let y = 0; y < 2; y++) for (let x = 0; x < 4; x++) b[y * 8 + x] = 0; // damage only inside the rect
    expect(psnrY(a, b, 8, 8)).toBeLessThan(30);
    expect(psnrY(a, b, 8, 8, { exclude: { x: 0, y: 0, w: 4, h: 2 } })).toBe(PSNR_CAP_DB);
    // One damaged pixel outside: MSE = 100^2 / (64 - 8).
    b[63] = 0;
    expect(mseY(a, b, 8, 8, { exclude: { x: 0, y: 0, w: 4, h: 2 } })).toBeCloseTo(10000 / 56, 10);
    expect(Number.isNaN(psnrY(a, b, 8, 8, { exclude: { x: 0, y: 0, w: 8, h: 8 } }))).toBe(true);
  });

  it('honours strides', () => {
    const a = plane(4, 2, (x) => x * 10);
    const padded = new Uint8Array(6 * 2).fill(255);
    for (let y = 0; y < 2; y++) padded.set(a.subarray(y * 4, y * 4 + 4), y * 6);
    expect(psnrY(a, padded, 4, 2, { strideB: 6 })).toBe(PSNR_CAP_DB);
  });
});

describe('SSIM', () => {
  const a = plane(64, 64, (x, y) => 60 + ((x * 5 + y * 11) % 120));
  it('is 1 for identical planes and lower for a noisy copy, ordered by damage', () => {
    expect(ssimY(a, a, 64, 64)).toBeCloseTo(1, 12);
    const light = a.map((v, i) => v + ((i * 2654435761) % 7) - 3);
    const heavy = a.map((v, i) => Math.max(0, Math.min(255, v + ((i * 2654435761) % 61) - 30)));
    const sl = ssimY(a, light, 64, 64);
    const sh = ssimY(a, heavy, 64, 64);
    expect(sl).toBeLessThan(1);
    expect(sh).toBeLessThan(sl);
  });

  it('equals the closed form on one flat-vs-flat window', () => {
    const p = new Uint8Array(64).fill(100);
    const q = new Uint8Array(64).fill(120);
    const c1 = (0.01 * 255) ** 2;
    // Zero variances: SSIM = (2 mu_a mu_b + C1) / (mu_a^2 + mu_b^2 + C1).
    expect(ssimY(p, q, 8, 8, { downsample: false })).toBeCloseTo((2 * 100 * 120 + c1) / (100 * 100 + 120 * 120 + c1), 12);
  });

  it('skips windows touching the excluded area', () => {
    const b = a.slice();
    for (let y = 0; y < 16; y++) for (let x = 0; x < 16; x++) b[y * 64 + x] = 0;
    expect(ssimY(a, b, 64, 64)).toBeLessThan(0.99);
    expect(ssimY(a, b, 64, 64, { exclude: { x: 0, y: 0, w: 16, h: 16 } })).toBeCloseTo(1, 12);
  });
});

describe('resize and compare', () => {
  it('downsample2 averages 2x2 blocks', () => {
    const p = new Uint8Array([0, 4, 10, 10, 8, 4, 10, 10]);
    expect([...downsample2(p, 4, 2).data]).toEqual([4, 10]);
  });

  it('bilinear resize keeps flat planes flat, is identity at the same size, and doubles a gradient smoothly', () => {
    const flat = new Uint8Array(10 * 6).fill(77);
    expect(resizeBilinearY(flat, 10, 6, 7, 3).every((v) => v === 77)).toBe(true);
    const g = plane(8, 2, (x) => x * 10);
    expect(resizeBilinearY(g, 8, 2, 8, 2)).toEqual(g);
    const up = resizeBilinearY(
      plane(2, 1, (x) => x * 100),
      2,
      1,
      4,
      1,
    );
    expect([...up]).toEqual([0, 25, 75, 100]);
    expect(() => resizeBilinearY(g, 8, 2, 0, 2)).toThrow(RangeError);
  });

  it('compareY upscales a smaller received frame before comparing', () => {
    const ref = { y: new Uint8Array(64 * 48).fill(90), width: 64, height: 48 };
    const got = { y: new Uint8Array(32 * 24).fill(90), width: 32, height: 24 };
    const r = compareY(ref, got, undefined, true);
    expect(r.psnr).toBe(PSNR_CAP_DB);
    expect(r.ssim).toBeCloseTo(1, 12);
    expect(compareY(ref, got, undefined, false).ssim).toBeUndefined();
  });

  it('lumaFit recovers a linear range mapping', () => {
    const ref = plane(32, 32, (x, y) => 16 + ((x * 7 + y * 5) % 200));
    const got = ref.map((v) => Math.round(1.1 * v - 10));
    const f = lumaFit(ref, got, 32, 32);
    expect(f.gain).toBeCloseTo(1.1, 2);
    expect(f.offset).toBeCloseTo(-10, 0);
    // A patch that differs (the barcode) spoils the fit unless excluded.
    const patched = got.slice();
    for (let y = 0; y < 8; y++) patched.fill(y % 2 ? 16 : 235, y * 32, y * 32 + 16);
    expect(Math.abs(lumaFit(ref, patched, 32, 32).gain - 1.1)).toBeGreaterThan(0.01);
    expect(lumaFit(ref, patched, 32, 32, { x: 0, y: 0, w: 16, h: 8 }).gain).toBeCloseTo(1.1, 2);
  });
});
