import type { Rng } from '../../../src/core/rng.js';
import { seqAdd } from '../../../src/core/seq.js';

/** A fake encoded Media body: 4-byte LE flow seq then `len - 4` pseudo-random bytes (len >= 4). */
export function fakeBody(seq: number, len: number, rng: Rng): Uint8Array {
  const b = new Uint8Array(Math.max(4, len));
  new DataView(b.buffer).setUint32(0, seq >>> 0, true);
  for (let i = 4; i < b.length; i++) b[i] = (rng.next() * 256) | 0;
  return b;
}

/** Validator matching {@link fakeBody}: the first 4 bytes are the flow seq. */
export function bodyMatchesSeq(_stream: number, seq: number, body: Uint8Array): boolean {
  return body.length >= 4 && new DataView(body.buffer, body.byteOffset, body.byteLength).getUint32(0, true) === seq;
}

export function makePackets(firstSeq: number, n: number, rng: Rng, minLen = 20, maxLen = 1200): Array<{ flowSeq: number; body: Uint8Array }> {
  const out = [];
  for (let i = 0; i < n; i++) {
    const seq = seqAdd(firstSeq, i);
    out.push({ flowSeq: seq, body: fakeBody(seq, minLen + Math.floor(rng.next() * (maxLen - minLen + 1)), rng) });
  }
  return out;
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Offsets set in a mask (bit i of byte i>>3). */
export function maskBits(mask: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < mask.length * 8; i++) if (mask[i >> 3] & (1 << (i & 7))) out.push(i);
  return out;
}
