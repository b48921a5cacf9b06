/**
 * uint32 sequence-number arithmetic with wrap-around (RFC 1982 serial numbers).
 */
const MOD = 0x1_0000_0000;

/** Signed distance b - a in (-2^31, 2^31]: positive when b is newer than a. */
export function seqDiff(a: number, b: number): number {
  let d = (b - a) % MOD;
  if (d < 0) d += MOD;
  return d > 0x7fff_ffff ? d - MOD : d;
}

/** True when `b` is newer than `a`. */
export function seqNewer(b: number, a: number): boolean {
  return seqDiff(a, b) > 0;
}

/** (a + n) mod 2^32. */
export function seqAdd(a: number, n: number): number {
  let r = (a + n) % MOD;
  if (r < 0) r += MOD;
  return r;
}
