/**
 * Protocol Buffers base-128 varints for non-negative integers up to 2^53
 * (protobuf encoding spec, "Base 128 Varints"). Used to write the Packet
 * envelope by hand, to bound sizes, and by the generated body codec (pb.ts).
 */

const TWO_32 = 0x1_0000_0000;

/** Encoded size in bytes of the varint of `n` (0 <= n <= 2^53, integer). */
export function varintSize(n: number): number {
  if (n < 0x80) return 1;
  if (n < 0x4000) return 2;
  if (n < 0x20_0000) return 3;
  if (n < 0x1000_0000) return 4;
  if (n < 0x8_0000_0000) return 5;
  if (n < 0x400_0000_0000) return 6;
  if (n < 0x2_0000_0000_0000) return 7;
  if (n < 0x100_0000_0000_0000) return 8;
  return 9;
}

/**
 * Writes the varint of `n` (0 <= n <= 2^53, integer) at `pos`.
 * @returns the position after the last byte written.
 */
export function writeVarint(buf: Uint8Array, pos: number, n: number): number {
  if (n < TWO_32) {
    let v = n >>> 0;
    while (v > 0x7f) {
      buf[pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[pos++] = v;
    return pos;
  }
  // Above 2^32: peel 7 bits at a time with exact float arithmetic (n <= 2^53).
  let v = n;
  while (v > 0x7f) {
    const low = v % 128;
    buf[pos++] = low | 0x80;
    v = (v - low) / 128;
  }
  buf[pos++] = v;
  return pos;
}
