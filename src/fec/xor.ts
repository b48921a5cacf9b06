/**
 * XOR parity FEC over encoded `Media` message bodies, in the spirit of
 * ULPFEC (RFC 5109 §7-8) and FlexFEC (RFC 8627 §1.1, §7): each FEC packet
 * carries the XOR of the protected bodies (zero-padded to the longest) and the
 * XOR of their lengths; a receiver holding all but one of the protected
 * packets rebuilds the missing one. Our own layout, not RTP: the wire message
 * is `Fec` in src/wire/multipath.proto (`FecMessage` in src/wire/types.ts).
 *
 * Mask: bit i (bit i&7 of byte i>>3, little-endian bit order) set means the
 * packet with flow_seq `baseSeq + i` (mod 2^32) is protected; at most 8 bytes,
 * so one FEC packet spans at most 64 consecutive flow sequence numbers.
 */
import type { PathId } from '../core/types.js';
import { seqAdd, seqDiff } from '../core/seq.js';
import type { FecMessage } from '../wire/types.js';
import { FecError } from './errors.js';
import type { FecMaskKind } from './types.js';

/** Largest span of flow sequence numbers one FEC packet can protect (8 mask bytes). */
export const FEC_MAX_MASK_BITS = 64;

let scratch = new Uint8Array(2048);

/**
 * `dst[i] ^= src[i]` for i < src.length (`dst` must be at least as long).
 * Works on 32-bit words when `dst` is 4-byte aligned; an unaligned `src` is
 * first copied (native memcpy) into an aligned scratch buffer.
 * @throws FecError when `src` is longer than `dst`.
 */
export function xorInto(dst: Uint8Array, src: Uint8Array): void {
  const len = src.length;
  if (len > dst.length) throw FecError.invalidArgument('src.length', len, `<= dst.length (${dst.length})`);
  let i = 0;
  if (len >= 32 && (dst.byteOffset & 3) === 0) {
    let s = src;
    if ((src.byteOffset & 3) !== 0) {
      if (scratch.length < len) scratch = new Uint8Array(Math.max(len, scratch.length * 2));
      scratch.set(src);
      s = scratch;
    }
    const words = len >>> 2;
    const d32 = new Uint32Array(dst.buffer, dst.byteOffset, words);
    const s32 = new Uint32Array(s.buffer, s.byteOffset, words);
    for (let w = 0; w < words; w++) d32[w] ^= s32[w];
    i = words << 2;
  }
  for (; i < len; i++) dst[i] ^= src[i];
}

/** Arguments of {@link makeFecPackets}. */
export interface MakeFecArgs {
  /** uint32 stream id copied into every FEC packet. */
  streamId: number;
  /** Media packets to protect: flow_seq (uint32, may wrap) and encoded `Media` bytes. Duplicated seqs are protected once. */
  packets: ReadonlyArray<{ flowSeq: number; body: Uint8Array }>;
  /** FEC packets wanted; clamped to [0, number of distinct packets], fractions floored, NaN = 0. */
  count: number;
  /** See {@link FecMaskKind}. */
  mask: FecMaskKind;
  /** Path whose packets these are (copied into `protectsPath`). */
  protectsPath: PathId;
  /** fec_seq of the first FEC packet; the next ones are +1 (mod 2^32). */
  firstFecSeq: number;
}

function isU32(v: number): boolean {
  return Number.isInteger(v) && v >= 0 && v <= 0xffff_ffff;
}

/**
 * Build `count` XOR FEC packets over `packets`.
 *
 * Packets are ordered by flow_seq (wrap-aware, relative to the first one) and
 * cut into groups spanning at most 64 sequence numbers; the FEC packets are
 * shared out among the groups in proportion to their sizes (largest
 * remainder, every group getting at least one when count >= groups), and
 * inside a group of n packets with k FEC packets:
 * - `'random'`: FEC f protects the consecutive block [⌊f·n/k⌋, ⌊(f+1)·n/k⌋)
 *   (RFC 8627 §1.1.2 row FEC). Under independent loss every equal-size
 *   partition recovers equally well; blocks give the shortest masks.
 * - `'bursty'`: FEC f protects packets j with j mod k = f (RFC 8627 §1.1.3
 *   column FEC): any burst of up to k consecutive losses in the group hits k
 *   different FEC packets and is fully recovered.
 * Every packet is protected by exactly one FEC packet of its group (only when
 * count < number of groups do some groups stay unprotected), so "one loss per FEC packet" is always
 * recoverable.
 *
 * @returns FEC messages in fec_seq order (empty when count is 0 or no packets).
 * @throws FecError on a non-uint32 streamId / flowSeq / firstFecSeq, a bad path id, or a body that is not a Uint8Array.
 */
export function makeFecPackets(args: MakeFecArgs): FecMessage[] {
  const { streamId, packets, mask, protectsPath, firstFecSeq } = args;
  if (!isU32(streamId)) throw FecError.invalidArgument('streamId', streamId, 'a uint32');
  if (!isU32(firstFecSeq)) throw FecError.invalidArgument('firstFecSeq', firstFecSeq, 'a uint32');
  if (!Number.isInteger(protectsPath) || protectsPath < 0) throw FecError.invalidArgument('protectsPath', protectsPath, 'a path id >= 0');
  if (mask !== 'random' && mask !== 'bursty') throw FecError.invalidArgument('mask', mask, "'random' or 'bursty'");
  const n = packets.length;
  if (n === 0) return [];
  const wanted = Number.isFinite(args.count) ? Math.floor(args.count) : 0;
  if (wanted <= 0) return [];

  // Order by offset from the first packet's seq (wrap-aware), drop duplicates.
  const ref = packets[0].flowSeq;
  const order: number[] = [];
  const offs = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const p = packets[i];
    if (!isU32(p.flowSeq)) throw FecError.invalidArgument(`packets[${i}].flowSeq`, p.flowSeq, 'a uint32');
    if (!(p.body instanceof Uint8Array)) throw FecError.invalidArgument(`packets[${i}].body`, typeof p.body, 'a Uint8Array');
    offs[i] = seqDiff(ref, p.flowSeq);
    order.push(i);
  }
  order.sort((a, b) => offs[a] - offs[b] || a - b);
  const uniq: number[] = [];
  for (const i of order) if (uniq.length === 0 || offs[uniq[uniq.length - 1]] !== offs[i]) uniq.push(i);

  // Groups spanning < 64 seqs: [start, end) ranges into `uniq`.
  const groupStart: number[] = [];
  for (let j = 0; j < uniq.length; j++) {
    if (groupStart.length === 0 || offs[uniq[j]] - offs[uniq[groupStart[groupStart.length - 1]]] >= FEC_MAX_MASK_BITS) groupStart.push(j);
  }
  const groups = groupStart.length;
  const total = uniq.length;
  const k = Math.min(wanted, total);

  // Share k FEC packets among groups in proportion to their sizes (largest remainder).
  const alloc = new Array<number>(groups).fill(0);
  const rem: Array<[number, number]> = [];
  let given = 0;
  for (let g = 0; g < groups; g++) {
    const size = (g + 1 < groups ? groupStart[g + 1] : total) - groupStart[g];
    const exact = (k * size) / total;
    alloc[g] = Math.min(size, Math.floor(exact));
    given += alloc[g];
    rem.push([exact - alloc[g], g]);
  }
  rem.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (let r = 0; given < k && r < rem.length; r++) {
    const g = rem[r][1];
    const size = (g + 1 < groups ? groupStart[g + 1] : total) - groupStart[g];
    if (alloc[g] < size) {
      alloc[g]++;
      given++;
    }
  }

  // When there are enough FEC packets, no group stays unprotected: move one
  // from the group holding the most FEC packets per media packet.
  if (k >= groups) {
    for (let g = 0; g < groups; g++) {
      if (alloc[g] > 0) continue;
      let donor = -1;
      let best = 0;
      for (let h = 0; h < groups; h++) {
        const size = (h + 1 < groups ? groupStart[h + 1] : total) - groupStart[h];
        if (alloc[h] > 1 && alloc[h] / size > best) {
          best = alloc[h] / size;
          donor = h;
        }
      }
      if (donor < 0) break;
      alloc[donor]--;
      alloc[g]++;
    }
  }

  const out: FecMessage[] = [];
  const members: number[] = [];
  for (let g = 0; g < groups; g++) {
    const gs = groupStart[g];
    const size = (g + 1 < groups ? groupStart[g + 1] : total) - gs;
    const kg = alloc[g];
    for (let f = 0; f < kg; f++) {
      members.length = 0;
      if (mask === 'random') {
        const a = Math.floor((f * size) / kg);
        const b = Math.floor(((f + 1) * size) / kg);
        for (let j = a; j < b; j++) members.push(uniq[gs + j]);
      } else {
        for (let j = f; j < size; j += kg) members.push(uniq[gs + j]);
      }
      out.push(buildOne(streamId, ref, offs, packets, members, protectsPath, seqAdd(firstFecSeq, out.length)));
    }
  }
  return out;
}

function buildOne(streamId: number, ref: number, offs: Float64Array, packets: MakeFecArgs['packets'], members: readonly number[], protectsPath: PathId, fecSeq: number): FecMessage {
  const first = offs[members[0]];
  const last = offs[members[members.length - 1]];
  const maskBytes = new Uint8Array(((last - first) >>> 3) + 1);
  let maxLen = 0;
  let lengthXor = 0;
  for (const i of members) {
    const bit = offs[i] - first;
    maskBytes[bit >>> 3] |= 1 << (bit & 7);
    const len = packets[i].body.length;
    if (len > maxLen) maxLen = len;
    lengthXor = (lengthXor ^ len) >>> 0;
  }
  const parity = new Uint8Array(maxLen);
  for (const i of members) xorInto(parity, packets[i].body);
  return { streamId, baseSeq: seqAdd(ref, first), mask: maskBytes, lengthXor, parity, protectsPath, fecSeq };
}

/**
 * Offsets (bit numbers) set in an FEC mask, ascending, into `out`; returns how
 * many. Bits past 64 are ignored (masks longer than 8 bytes are invalid).
 */
export function maskOffsets(mask: Uint8Array, out: Uint8Array): number {
  let n = 0;
  const bytes = Math.min(mask.length, FEC_MAX_MASK_BITS >>> 3);
  for (let b = 0; b < bytes; b++) {
    let v = mask[b];
    while (v !== 0) {
      const low = v & -v;
      out[n++] = (b << 3) + (31 - Math.clz32(low));
      v ^= low;
    }
  }
  return n;
}
