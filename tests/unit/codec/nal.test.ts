import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NalClass } from '../../../src/core/types.js';
import { classifyNal, classifyNalType, findNalUnits, isKeyAccessUnit, nalType, splitNalUnits } from '../../../src/codec/nal.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../../fixtures/h264/${name}`, import.meta.url));
const keyAu = new Uint8Array(readFileSync(fixture('key.264')));
const deltaAu = new Uint8Array(readFileSync(fixture('delta.264')));
const expected = JSON.parse(readFileSync(fixture('expected.json'), 'utf8')) as {
  key: { nalTypes: number[] };
  delta: { nalTypes: number[] };
};

function concat(units: ReturnType<typeof findNalUnits>, au: Uint8Array): number[] {
  return units.flatMap((u) => Array.from(au.subarray(u.start, u.end)));
}

describe('H.264 Annex B parsing (synthetic)', () => {
  const sps = [0x67, 0x42, 0xc0, 0x1f];
  const pps = [0x68, 0xce, 0x3c, 0x80];
  const idr = [0x65, 0x88, 0x84, 0x00, 0x00, 0x03, 0x00, 0x10];
  const au = Uint8Array.from([0, 0, 0, 1, ...sps, 0, 0, 1, ...pps, 0, 0, 0, 1, ...idr]);

  it('splits on 3- and 4-byte start codes and classifies', () => {
    const units = findNalUnits(au);
    expect(units.map((u) => u.type)).toEqual([7, 8, 5]);
    expect(units[0]).toEqual({ start: 0, headerStart: 4, end: 8, type: 7 });
    expect(units[1]).toEqual({ start: 8, headerStart: 11, end: 15, type: 8 });
    expect(units[2].start).toBe(15); // 4-byte start code: the zero_byte belongs to it
    expect(concat(units, au)).toEqual(Array.from(au));
    const nals = splitNalUnits(au);
    expect(nals.map((n) => Array.from(n))).toEqual([sps, pps, idr]);
    expect(nals.map(classifyNal)).toEqual([NalClass.Sps, NalClass.Pps, NalClass.Idr]);
    expect(isKeyAccessUnit(au)).toBe(true);
    expect(isKeyAccessUnit(Uint8Array.from([0, 0, 1, 0x41, 0x9a]))).toBe(false);
  });

  it('classification table', () => {
    expect(classifyNalType(7)).toBe(NalClass.Sps);
    expect(classifyNalType(8)).toBe(NalClass.Pps);
    expect(classifyNalType(5)).toBe(NalClass.Idr);
    expect(classifyNalType(1)).toBe(NalClass.NonIdr);
    for (const t of [0, 2, 6, 9, 12, 31, -1]) expect(classifyNalType(t)).toBe(NalClass.Other);
    expect(nalType(Uint8Array.from([0x65]))).toBe(5);
    expect(nalType(new Uint8Array(0))).toBe(-1);
  });

  it('garbage: no start code, leading bytes, truncated, empty NALs, empty input', () => {
    expect(findNalUnits(new Uint8Array(0))).toEqual([]);
    expect(splitNalUnits(new Uint8Array(0))).toEqual([]);
    expect(findNalUnits(Uint8Array.from([1, 2, 3, 4]))).toEqual([{ start: 0, headerStart: 0, end: 4, type: -1 }]);
    expect(findNalUnits(Uint8Array.from([0, 0]))).toEqual([{ start: 0, headerStart: 0, end: 2, type: -1 }]);
    // start code at the very end: empty unit
    expect(findNalUnits(Uint8Array.from([0, 0, 1]))).toEqual([{ start: 0, headerStart: 3, end: 3, type: -1 }]);
    // leading garbage kept as a type -1 unit
    const lead = Uint8Array.from([9, 9, 0, 0, 1, 0x41, 1]);
    expect(findNalUnits(lead).map((u) => u.type)).toEqual([-1, 1]);
    // back-to-back start codes: empty NAL between
    const empty = Uint8Array.from([0, 0, 1, 0, 0, 1, 0x65, 7]);
    expect(findNalUnits(empty).map((u) => u.type)).toEqual([-1, 5]);
    expect(splitNalUnits(empty).length).toBe(1);
    expect(isKeyAccessUnit(Uint8Array.from([0xff]))).toBe(false);
  });

  it('property: units tile any input exactly and never throw', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(0, 0, 0, 1), fc.integer({ min: 0, max: 255 })), { maxLength: 200 }), (arr) => {
        const au = Uint8Array.from(arr);
        const units = findNalUnits(au);
        expect(concat(units, au)).toEqual(arr);
        for (let i = 1; i < units.length; i++) expect(units[i].start).toBe(units[i - 1].end);
        for (const u of units) {
          expect(u.headerStart).toBeGreaterThanOrEqual(u.start);
          expect(u.end).toBeGreaterThanOrEqual(u.headerStart);
          expect(u.type).toBeGreaterThanOrEqual(-1);
          expect(u.type).toBeLessThan(32);
        }
        isKeyAccessUnit(au);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('H.264 Annex B parsing on real Chromium encoder output (tests/fixtures/h264)', () => {
  it('key AU has SPS, PPS and IDR; delta AU has non-IDR slices only', () => {
    const keyTypes = findNalUnits(keyAu).map((u) => u.type);
    const deltaTypes = findNalUnits(deltaAu).map((u) => u.type);
    expect(keyTypes).toEqual(expected.key.nalTypes);
    expect(deltaTypes).toEqual(expected.delta.nalTypes);
    const keyClasses = splitNalUnits(keyAu).map(classifyNal);
    expect(keyClasses).toContain(NalClass.Sps);
    expect(keyClasses).toContain(NalClass.Pps);
    expect(keyClasses).toContain(NalClass.Idr);
    expect(keyClasses.indexOf(NalClass.Sps)).toBeLessThan(keyClasses.indexOf(NalClass.Idr));
    const deltaClasses = splitNalUnits(deltaAu).map(classifyNal);
    expect(deltaClasses).toContain(NalClass.NonIdr);
    expect(deltaClasses).not.toContain(NalClass.Idr);
    expect(isKeyAccessUnit(keyAu)).toBe(true);
    expect(isKeyAccessUnit(deltaAu)).toBe(false);
    expect(concat(findNalUnits(keyAu), keyAu)).toEqual(Array.from(keyAu));
  });
});
