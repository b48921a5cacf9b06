import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Rng } from '../../../src/core/rng.js';
import { seqAdd, seqDiff } from '../../../src/core/seq.js';
import { FecError } from '../../../src/fec/errors.js';
import { makeFecPackets, maskOffsets, xorInto } from '../../../src/fec/xor.js';
import { makePackets, maskBits } from './helpers.js';

function covered(fecs: ReturnType<typeof makeFecPackets>): number[][] {
  return fecs.map((f) => maskBits(f.mask).map((b) => seqAdd(f.baseSeq, b)));
}

describe('xorInto', () => {
  it('matches a byte loop for aligned, unaligned and short inputs', () => {
    const rng = new Rng(1);
    for (const [dOff, sOff, len] of [
      [0, 0, 1000],
      [0, 1, 1001],
      [0, 3, 37],
      [4, 2, 64],
      [1, 0, 999],
      [0, 0, 5],
    ]) {
      const dBuf = new Uint8Array(len + 8);
      const sBuf = new Uint8Array(len + 8);
      for (let i = 0; i < dBuf.length; i++) {
        dBuf[i] = (rng.next() * 256) | 0;
        sBuf[i] = (rng.next() * 256) | 0;
      }
      const dst = dBuf.subarray(dOff, dOff + len + 2);
      const src = sBuf.subarray(sOff, sOff + len);
      const want = Uint8Array.from(dst);
      for (let i = 0; i < len; i++) want[i] ^= src[i];
      xorInto(dst, src);
      expect(Array.from(dst)).toEqual(Array.from(want));
    }
  });

  it('throws a FecError when src is longer than dst', () => {
    expect(() => xorInto(new Uint8Array(2), new Uint8Array(3))).toThrow(FecError);
  });
});

describe('makeFecPackets', () => {
  const rng = new Rng(7);
  const pkts = makePackets(100, 12, rng);

  it('parity is the XOR of the padded bodies and lengthXor the XOR of lengths', () => {
    const [fec] = makeFecPackets({ streamId: 3, packets: pkts.slice(0, 5), count: 1, mask: 'random', protectsPath: 1, firstFecSeq: 9 });
    const maxLen = Math.max(...pkts.slice(0, 5).map((p) => p.body.length));
    expect(fec.parity.length).toBe(maxLen);
    const want = new Uint8Array(maxLen);
    let lx = 0;
    for (const p of pkts.slice(0, 5)) {
      for (let i = 0; i < p.body.length; i++) want[i] ^= p.body[i];
      lx ^= p.body.length;
    }
    expect(Array.from(fec.parity)).toEqual(Array.from(want));
    expect(fec.lengthXor).toBe(lx);
    expect(fec).toMatchObject({ streamId: 3, baseSeq: 100, protectsPath: 1, fecSeq: 9 });
    expect(Array.from(fec.mask)).toEqual([0b11111]);
  });

  it("'random' = consecutive blocks, 'bursty' = interleaved (j mod k); each packet in exactly one FEC", () => {
    const r = covered(makeFecPackets({ streamId: 0, packets: pkts, count: 3, mask: 'random', protectsPath: 0, firstFecSeq: 0 }));
    expect(r).toEqual([
      [100, 101, 102, 103],
      [104, 105, 106, 107],
      [108, 109, 110, 111],
    ]);
    const b = covered(makeFecPackets({ streamId: 0, packets: pkts, count: 3, mask: 'bursty', protectsPath: 0, firstFecSeq: 0 }));
    expect(b).toEqual([
      [100, 103, 106, 109],
      [101, 104, 107, 110],
      [102, 105, 108, 111],
    ]);
  });

  it('clamps count to [0, distinct packets], floors fractions, treats NaN as 0', () => {
    const mk = (count: number) => makeFecPackets({ streamId: 0, packets: pkts, count, mask: 'random', protectsPath: 0, firstFecSeq: 0 }).length;
    expect(mk(-3)).toBe(0);
    expect(mk(Number.NaN)).toBe(0);
    expect(mk(2.9)).toBe(2);
    expect(mk(100)).toBe(12);
    expect(makeFecPackets({ streamId: 0, packets: [], count: 3, mask: 'random', protectsPath: 0, firstFecSeq: 0 })).toEqual([]);
    const dup = [...pkts.slice(0, 3), pkts[1]];
    expect(makeFecPackets({ streamId: 0, packets: dup, count: 9, mask: 'random', protectsPath: 0, firstFecSeq: 0 }).length).toBe(3);
  });

  it('handles uint32 wrap-around of flow seqs and fec seqs, in any input order', () => {
    const wrapPkts = makePackets(0xffff_fffd, 6, new Rng(3)); // fffffffd..2
    const shuffled = [wrapPkts[3], wrapPkts[0], wrapPkts[5], wrapPkts[1], wrapPkts[4], wrapPkts[2]];
    const fecs = makeFecPackets({ streamId: 1, packets: shuffled, count: 2, mask: 'random', protectsPath: 0, firstFecSeq: 0xffff_ffff });
    expect(fecs.map((f) => f.fecSeq)).toEqual([0xffff_ffff, 0]);
    expect(covered(fecs)).toEqual([
      [0xffff_fffd, 0xffff_fffe, 0xffff_ffff],
      [0, 1, 2],
    ]);
  });

  it('splits packets spanning more than 64 seqs into groups, sharing FEC by size', () => {
    const rng2 = new Rng(5);
    // 40 packets at seqs 0..39 and 20 packets at 200..219 (another path took the seqs between).
    const a = makePackets(0, 40, rng2);
    const b = makePackets(200, 20, rng2);
    const fecs = makeFecPackets({ streamId: 0, packets: [...a, ...b], count: 3, mask: 'bursty', protectsPath: 0, firstFecSeq: 0 });
    expect(fecs.length).toBe(3);
    for (const f of fecs) {
      expect(f.mask.length).toBeLessThanOrEqual(8);
      const seqs = maskBits(f.mask).map((x) => seqAdd(f.baseSeq, x));
      expect(seqDiff(seqs[0], seqs[seqs.length - 1])).toBeLessThan(64);
    }
    const cov = covered(fecs).map((s) => s.length);
    expect(cov).toEqual([20, 20, 20]); // 2 FEC for the 40-packet group, 1 for the 20-packet group
  });

  it('a single group never spans more than 64 seqs even for 64 contiguous packets', () => {
    const p64 = makePackets(10, 65, new Rng(9));
    const fecs = makeFecPackets({ streamId: 0, packets: p64, count: 2, mask: 'random', protectsPath: 0, firstFecSeq: 0 });
    const all = covered(fecs)
      .flat()
      .sort((x, y) => x - y);
    expect(all.length).toBe(65);
    for (const f of fecs) expect(f.mask.length).toBeLessThanOrEqual(8);
  });

  it('property: every packet is covered exactly once when count >= number of 64-seq groups', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 80 }),
        fc.integer({ min: 0, max: 0xffff_ffff }),
        fc.integer({ min: 1, max: 80 }),
        fc.constantFrom('random' as const, 'bursty' as const),
        (offs, base, count, mask) => {
          const packets = offs.map((o, i) => ({ flowSeq: seqAdd(base, o), body: new Uint8Array(1 + (i % 50)) }));
          const sorted = [...offs].sort((x, y) => x - y);
          let groups = 0;
          let start = -Infinity;
          for (const o of sorted)
            if (o - start >= 64) {
              groups++;
              start = o;
            }
          const fecs = makeFecPackets({ streamId: 0, packets, count: Math.max(count, groups), mask, protectsPath: 0, firstFecSeq: 0 });
          expect(fecs.length).toBe(Math.min(Math.max(count, groups), packets.length));
          const cov = covered(fecs).flat();
          expect(new Set(cov).size).toBe(cov.length);
          expect(cov.length).toBe(packets.length);
          for (const f of fecs) expect(f.mask.length).toBeLessThanOrEqual(8);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('maskOffsets reads little-endian bit order', () => {
    const out = new Uint8Array(64);
    const n = maskOffsets(Uint8Array.from([0b1000_0001, 0, 0b10]), out);
    expect(Array.from(out.subarray(0, n))).toEqual([0, 7, 17]);
  });

  it('rejects programmer errors with FecError', () => {
    expect(() => makeFecPackets({ streamId: -1, packets: pkts, count: 1, mask: 'random', protectsPath: 0, firstFecSeq: 0 })).toThrow(FecError);
    expect(() => makeFecPackets({ streamId: 0, packets: [{ flowSeq: 2 ** 32, body: new Uint8Array(1) }], count: 1, mask: 'random', protectsPath: 0, firstFecSeq: 0 })).toThrow(FecError);
    expect(() => makeFecPackets({ streamId: 0, packets: pkts, count: 1, mask: 'x' as 'random', protectsPath: 0, firstFecSeq: 0 })).toThrow(FecError);
  });
});
