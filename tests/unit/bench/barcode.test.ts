import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { BARCODE_ID_MODULO, barcodeBits, barcodeLayout, crc4, drawBarcodeI420, readBarcodeY, unwrapBarcodeId } from '../../../bench/browser/barcode.js';
import { resizeBilinearY } from '../../../bench/browser/quality.js';
import { syntheticI420 } from '../../../bench/browser/synthetic.js';

function frameWithBarcode(id: number, w = 640, h = 480, index = 7) {
  const f = syntheticI420(index, w, h);
  drawBarcodeI420(f.y, w, h, id, { u: f.u, v: f.v });
  return f;
}

function boxBlur(y: Uint8Array, w: number, h: number, r: number): Uint8Array {
  const out = new Uint8Array(y.length);
  for (let row = 0; row < h; row++) {
    for (let col = 0; col < w; col++) {
      let s = 0;
      let n = 0;
      for (let dy = -r; dy <= r; dy++) {
        for (let dx = -r; dx <= r; dx++) {
          const yy = row + dy;
          const xx = col + dx;
          if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
          s += y[yy * w + xx];
          n++;
        }
      }
      out[row * w + col] = Math.round(s / n);
    }
  }
  return out;
}

function addNoise(y: Uint8Array, sigma: number, seed: number): Uint8Array {
  const rng = new Rng(seed);
  const out = new Uint8Array(y.length);
  for (let i = 0; i < y.length; i++) {
    // Sum of 4 uniforms: roughly Gaussian, std = sigma.
    const g = (rng.next() + rng.next() + rng.next() + rng.next() - 2) * Math.sqrt(3) * sigma;
    out[i] = Math.max(0, Math.min(255, Math.round(y[i] + g)));
  }
  return out;
}

describe('barcode', () => {
  it('crc4 matches a hand-computed value and detects any single-bit flip', () => {
    // 0b1 -> x^4 mod (x^4 + x + 1) = x + 1 = 0b0011.
    expect(crc4(1, 1)).toBe(0b0011);
    expect(crc4(0, 20)).toBe(0);
    for (const v of [1, 12345, 0xfffff, 0x80000]) {
      for (let b = 0; b < 20; b++) expect(crc4(v ^ (1 << b), 20)).not.toBe(crc4(v, 20));
    }
  });

  it('bits carry the reference blocks, the id MSB first and the CRC', () => {
    const bits = barcodeBits(5);
    expect(bits.length).toBe(26);
    expect(bits[0]).toBe(1);
    expect(bits[1]).toBe(0);
    expect([...bits.slice(2, 22)].join('')).toBe('00000000000000000101');
    expect(() => barcodeBits(-1)).toThrow(RangeError);
    expect(() => barcodeBits(1.5)).toThrow(RangeError);
  });

  it('round-trips ids on clean frames (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: BARCODE_ID_MODULO - 1 }), fc.integer({ min: 0, max: 599 }), (id, index) => {
        const f = frameWithBarcode(id, 320, 240, index);
        const r = readBarcodeY(f.y, 320, 240);
        expect(r).toMatchObject({ ok: true, id });
      }),
      { numRuns: 60 },
    );
  });

  it('reads ids modulo 2^20', () => {
    const f = frameWithBarcode(BARCODE_ID_MODULO + 42);
    expect(readBarcodeY(f.y, 640, 480)).toMatchObject({ ok: true, id: 42 });
  });

  it('survives blur, noise, brightness change and a strided plane', () => {
    for (const id of [0, 1, 777, 99_999, BARCODE_ID_MODULO - 1]) {
      const f = frameWithBarcode(id);
      const degraded = addNoise(boxBlur(f.y, 640, 480, 3), 12, id + 1);
      for (let i = 0; i < degraded.length; i++) degraded[i] = Math.min(255, Math.round(degraded[i] * 0.8 + 20));
      expect(readBarcodeY(degraded, 640, 480)).toMatchObject({ ok: true, id });
      // Same picture in a plane with row padding.
      const stride = 704;
      const padded = new Uint8Array(stride * 480).fill(3);
      for (let r = 0; r < 480; r++) padded.set(degraded.subarray(r * 640, r * 640 + 640), r * stride);
      expect(readBarcodeY(padded, 640, 480, { stride })).toMatchObject({ ok: true, id });
    }
  });

  it('survives the downscales WebRTC applies (3/4, 1/2, 1/4)', () => {
    const id = 123_456;
    const f = frameWithBarcode(id);
    for (const [w, h] of [
      [480, 360],
      [320, 240],
      [160, 120],
    ]) {
      const small = resizeBilinearY(f.y, 640, 480, w, h);
      expect(readBarcodeY(small, w, h)).toMatchObject({ ok: true, id });
    }
  });

  it('rejects a frame without a barcode and a corrupted block', () => {
    const plain = syntheticI420(3, 640, 480);
    const r = readBarcodeY(plain.y, 640, 480);
    expect(r.ok).toBe(false);
    // Flip one data block: CRC (or the margin check) must reject it, never a wrong id.
    const id = 4242;
    const f = frameWithBarcode(id);
    const l = barcodeLayout(640, 480);
    const col = 5;
    const x = Math.round(l.x0 + col * l.blockW);
    const y = Math.round(l.y0);
    const cur = f.y[(y + 12) * 640 + x + 12];
    for (let r2 = y; r2 < y + 24; r2++) f.y.fill(cur > 128 ? 16 : 235, r2 * 640 + x, r2 * 640 + x + 24);
    const bad = readBarcodeY(f.y, 640, 480);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.reason).toBe('crc');
  });

  it('rejects a block half way between black and white as ambiguous', () => {
    const f = frameWithBarcode(10);
    const l = barcodeLayout(640, 480);
    const x = Math.round(l.x0 + 3 * l.blockW);
    const y = Math.round(l.y0);
    for (let r = y; r < y + 24; r++) f.y.fill(126, r * 640 + x, r * 640 + x + 24);
    expect(readBarcodeY(f.y, 640, 480)).toMatchObject({ ok: false, reason: 'ambiguous' });
  });

  it('layout scales with the frame and refuses tiny frames', () => {
    expect(barcodeLayout(640, 480).exclude).toEqual({ x: 0, y: 0, w: 328, h: 64 });
    expect(barcodeLayout(320, 240).exclude).toEqual({ x: 0, y: 0, w: 164, h: 32 });
    expect(() => barcodeLayout(64, 48)).toThrow(RangeError);
    expect(() => barcodeLayout(NaN, 480)).toThrow(RangeError);
  });

  it('unwraps ids near the previous one', () => {
    expect(unwrapBarcodeId(5, 3)).toBe(5);
    expect(unwrapBarcodeId(2, BARCODE_ID_MODULO - 3)).toBe(BARCODE_ID_MODULO + 2);
    expect(unwrapBarcodeId(BARCODE_ID_MODULO - 2, BARCODE_ID_MODULO + 1)).toBe(BARCODE_ID_MODULO - 2);
  });
});
