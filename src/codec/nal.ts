/**
 * H.264 Annex B byte-stream parsing (ITU-T H.264 Annex B.2 "byte stream NAL
 * unit decoding process"; NAL unit header §7.3.1, nal_unit_type Table 7-1).
 *
 * An access unit is a sequence of NAL units, each preceded by a start code
 * prefix 0x000001 (3 bytes) or 0x00000001 (4 bytes, with a leading
 * zero_byte). Emulation prevention (0x000003) guarantees 0x000001 never occurs
 * inside a NAL unit, so splitting on start codes is exact; the emulation bytes
 * need no removal to read the one-byte NAL header.
 *
 * Every function here is total: garbage (no start code, truncated start code,
 * empty NAL units, empty input) gives a defined result, never an exception.
 */
import { NalClass } from '../core/types.js';

/** nal_unit_type values used for classification (H.264 Table 7-1). */
export const NAL_TYPE_NON_IDR = 1;
export const NAL_TYPE_IDR = 5;
export const NAL_TYPE_SEI = 6;
export const NAL_TYPE_SPS = 7;
export const NAL_TYPE_PPS = 8;
export const NAL_TYPE_AUD = 9;

/**
 * One NAL unit located in an access unit, as byte offsets. The units returned
 * by {@link findNalUnits} tile the whole input: unit k's `end` is unit k+1's
 * `start`, the first `start` is 0 and the last `end` is the input length, so
 * concatenating `[start, end)` ranges reproduces the input byte for byte.
 */
export interface NalUnit {
  /** Offset of the first start-code byte (or 0 for leading bytes with no start code). */
  start: number;
  /** Offset of the NAL header byte (first byte after the start code). */
  headerStart: number;
  /** Exclusive end offset: the next start code, or the end of the input. */
  end: number;
  /** nal_unit_type 0..31, or -1 for an empty unit or bytes before any start code. */
  type: number;
}

/**
 * Locates the NAL units of an Annex B access unit. Bytes before the first
 * start code (not valid Annex B) become a unit of type -1 so that nothing is
 * lost. A 4-byte start code's leading zero belongs to the start code.
 * O(n), no copies.
 */
export function findNalUnits(au: Uint8Array): NalUnit[] {
  const units: NalUnit[] = [];
  const n = au.length;
  let prevHeader = -1; // headerStart of the unit being built, -1 before the first start code
  let prevStart = 0;
  let i = 0;
  while (i + 2 < n) {
    const b2 = au[i + 2];
    if (b2 > 1) {
      i += 3;
    } else if (b2 === 1 && au[i + 1] === 0 && au[i] === 0) {
      const scStart = i > 0 && au[i - 1] === 0 && i - 1 >= (prevHeader < 0 ? 0 : prevHeader) ? i - 1 : i;
      if (prevHeader >= 0) {
        units.push(unit(au, prevStart, prevHeader, scStart));
      } else if (scStart > 0) {
        units.push({ start: 0, headerStart: 0, end: scStart, type: -1 });
      }
      prevStart = scStart;
      prevHeader = i + 3;
      i += 3;
    } else {
      i++;
    }
  }
  if (prevHeader >= 0) units.push(unit(au, prevStart, prevHeader, n));
  else if (n > 0) units.push({ start: 0, headerStart: 0, end: n, type: -1 });
  return units;
}

function unit(au: Uint8Array, start: number, headerStart: number, end: number): NalUnit {
  return { start, headerStart, end, type: headerStart < end ? au[headerStart] & 0x1f : -1 };
}

/**
 * Splits an access unit into NAL unit views (header byte onwards, start codes
 * removed, emulation-prevention bytes kept). Units with no bytes and bytes
 * before the first start code are omitted.
 */
export function splitNalUnits(au: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const u of findNalUnits(au)) {
    if (u.type >= 0) out.push(au.subarray(u.headerStart, u.end));
  }
  return out;
}

/** nal_unit_type (low 5 bits of the NAL header byte) of a NAL unit view; -1 if empty. */
export function nalType(nal: Uint8Array): number {
  return nal.length > 0 ? nal[0] & 0x1f : -1;
}

/** Maps a nal_unit_type to the wire's NalClass (7 SPS, 8 PPS, 5 IDR, 1 non-IDR, else Other). */
export function classifyNalType(type: number): NalClass {
  switch (type) {
    case NAL_TYPE_SPS:
      return NalClass.Sps;
    case NAL_TYPE_PPS:
      return NalClass.Pps;
    case NAL_TYPE_IDR:
      return NalClass.Idr;
    case NAL_TYPE_NON_IDR:
      return NalClass.NonIdr;
    default:
      return NalClass.Other;
  }
}

/** NalClass of a NAL unit view (see {@link classifyNalType}). */
export function classifyNal(nal: Uint8Array): NalClass {
  return classifyNalType(nalType(nal));
}

/** True when the access unit contains an IDR slice (nal_unit_type 5): decodable alone. */
export function isKeyAccessUnit(au: Uint8Array): boolean {
  for (const u of findNalUnits(au)) if (u.type === NAL_TYPE_IDR) return true;
  return false;
}
