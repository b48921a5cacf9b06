import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Rng } from '../../../src/core/rng.js';
import { seqAdd } from '../../../src/core/seq.js';
import { FecDecoder } from '../../../src/fec/decoder.js';
import { FecError } from '../../../src/fec/errors.js';
import type { RecoveredPacket } from '../../../src/fec/types.js';
import { makeFecPackets } from '../../../src/fec/xor.js';
import type { FecMessage } from '../../../src/wire/types.js';
import { bodyMatchesSeq, makePackets, maskBits, sameBytes } from './helpers.js';

type Pkt = { flowSeq: number; body: Uint8Array };

/** Deliver media (minus `lost`) then FEC (minus `lostFec`), in the given order; return rebuilt packets. */
function deliver(dec: FecDecoder, stream: number, pkts: Pkt[], fecs: FecMessage[], lost: Set<number>, lostFec = new Set<number>(), fecFirst = false): RecoveredPacket[] {
  const out: RecoveredPacket[] = [];
  const media = () => {
    for (const p of pkts) if (!lost.has(p.flowSeq)) out.push(...dec.addMedia(stream, p.flowSeq, p.body));
  };
  const fec = () => {
    fecs.forEach((f, i) => {
      if (!lostFec.has(i)) out.push(...dec.addFec(f));
    });
  };
  if (fecFirst) {
    fec();
    media();
  } else {
    media();
    fec();
  }
  return out;
}

function checkRecovered(out: RecoveredPacket[], pkts: Pkt[]): void {
  const bySeq = new Map(pkts.map((p) => [p.flowSeq, p.body]));
  for (const r of out) {
    const orig = bySeq.get(r.flowSeq);
    expect(orig).toBeDefined();
    expect(sameBytes(r.body, orig as Uint8Array)).toBe(true);
  }
}

/** Which lost packets are recoverable by peeling (each FEC rebuilds its last missing one). */
function peelable(fecs: FecMessage[], lost: Set<number>, lostFec: Set<number>): Set<number> {
  const missing = new Set(lost);
  const got = new Set<number>();
  let progress = true;
  while (progress) {
    progress = false;
    fecs.forEach((f, i) => {
      if (lostFec.has(i)) return;
      const seqs = maskBits(f.mask).map((b) => seqAdd(f.baseSeq, b));
      const m = seqs.filter((s) => missing.has(s));
      if (m.length === 1) {
        missing.delete(m[0]);
        got.add(m[0]);
        progress = true;
      }
    });
  }
  return got;
}

describe('FecDecoder: recovery', () => {
  it('rebuilds a single lost packet byte-for-byte, with its path', () => {
    const rng = new Rng(11);
    const pkts = makePackets(1000, 10, rng);
    const fecs = makeFecPackets({ streamId: 5, packets: pkts, count: 1, mask: 'random', protectsPath: 2, firstFecSeq: 0 });
    const dec = new FecDecoder();
    const out = deliver(dec, 5, pkts, fecs, new Set([1004]));
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ streamId: 5, flowSeq: 1004, protectsPath: 2 });
    expect(sameBytes(out[0].body, pkts[4].body)).toBe(true);
    const st = dec.stats();
    expect(st).toMatchObject({ fecReceived: 1, fecUsed: 1, recovered: 1, fecDiscarded: 0 });
    expect(st.perPath).toEqual([{ pathId: 2, fecReceived: 1, fecUsed: 1, fecDiscarded: 0, recovered: 1 }]);
  });

  it('recovers when the FEC packet arrives before the surviving media', () => {
    const rng = new Rng(12);
    const pkts = makePackets(50, 6, rng);
    const fecs = makeFecPackets({ streamId: 1, packets: pkts, count: 1, mask: 'bursty', protectsPath: 0, firstFecSeq: 0 });
    const dec = new FecDecoder();
    const out = deliver(dec, 1, pkts, fecs, new Set([50]), new Set(), true);
    expect(out.map((r) => r.flowSeq)).toEqual([50]);
    checkRecovered(out, pkts);
  });

  it('counts an FEC packet with nothing missing as discarded, and a later recovery-free FEC does not count as used', () => {
    const rng = new Rng(13);
    const pkts = makePackets(0, 8, rng);
    const fecs = makeFecPackets({ streamId: 0, packets: pkts, count: 2, mask: 'random', protectsPath: 1, firstFecSeq: 0 });
    const dec = new FecDecoder();
    expect(deliver(dec, 0, pkts, fecs, new Set())).toEqual([]);
    expect(dec.stats()).toMatchObject({ fecReceived: 2, fecUsed: 0, fecDiscarded: 2, recovered: 0 });
  });

  it('iterates: a rebuilt packet completes another (overlapping) FEC packet', () => {
    const rng = new Rng(14);
    const pkts = makePackets(0, 6, rng);
    // FEC A over 0..5, FEC B over 0..2 (built separately so they overlap).
    const [a] = makeFecPackets({ streamId: 0, packets: pkts, count: 1, mask: 'random', protectsPath: 0, firstFecSeq: 0 });
    const [b] = makeFecPackets({ streamId: 0, packets: pkts.slice(0, 3), count: 1, mask: 'random', protectsPath: 1, firstFecSeq: 1 });
    const dec = new FecDecoder();
    // Lose 1 and 4: A has 2 missing, B has 1 missing -> B rebuilds 1 -> A rebuilds 4.
    const out = deliver(dec, 0, pkts, [a, b], new Set([1, 4]));
    expect(out.map((r) => r.flowSeq)).toEqual([1, 4]);
    expect(out.map((r) => r.protectsPath)).toEqual([1, 0]);
    checkRecovered(out, pkts);
    expect(dec.stats()).toMatchObject({ fecUsed: 2, recovered: 2, pendingFec: 0 });
  });

  it('waits for a late media packet when an FEC packet has two missing', () => {
    const rng = new Rng(15);
    const pkts = makePackets(0, 5, rng);
    const fecs = makeFecPackets({ streamId: 0, packets: pkts, count: 1, mask: 'random', protectsPath: 0, firstFecSeq: 0 });
    const dec = new FecDecoder();
    expect(deliver(dec, 0, pkts, fecs, new Set([1, 3]))).toEqual([]);
    expect(dec.stats().pendingFec).toBe(1);
    const out = dec.addMedia(0, 3, pkts[3].body); // late arrival
    expect(out.map((r) => r.flowSeq)).toEqual([1]);
    checkRecovered(out, pkts);
  });

  for (const mask of ['random', 'bursty'] as const) {
    it(`${mask} mask: random loss 1-20% never yields a wrong packet and recovers every peelable loss`, () => {
      const rng = new Rng(mask === 'random' ? 21 : 22);
      for (const loss of [0.01, 0.05, 0.1, 0.2]) {
        const dec = new FecDecoder({ validate: bodyMatchesSeq });
        let seq = 0xffff_ff00; // crosses the uint32 wrap
        let lostTotal = 0;
        let recTotal = 0;
        for (let frame = 0; frame < 150; frame++) {
          const n = 5 + Math.floor(rng.next() * 20);
          const pkts = makePackets(seq, n, rng, 30, 1200);
          seq = seqAdd(seq, n);
          const fecs = makeFecPackets({ streamId: 9, packets: pkts, count: Math.max(1, Math.round(n * loss * 2)), mask, protectsPath: 0, firstFecSeq: frame * 100 });
          const lost = new Set(pkts.filter(() => rng.next() < loss).map((p) => p.flowSeq));
          const lostFec = new Set(fecs.map((_, i) => i).filter(() => rng.next() < loss));
          const out = deliver(dec, 9, pkts, fecs, lost, lostFec);
          checkRecovered(out, pkts);
          const expected = peelable(fecs, lost, lostFec);
          expect(new Set(out.map((r) => r.flowSeq))).toEqual(expected);
          lostTotal += lost.size;
          recTotal += out.length;
        }
        expect(dec.stats().dropped.recoveryRejected).toBe(0);
        if (loss >= 0.05) expect(recTotal).toBeGreaterThan(lostTotal * 0.3);
      }
    });
  }

  it("bursts: 'bursty' (interleaved) rebuilds a burst of up to count losses, 'random' (blocks) does not", () => {
    const rng = new Rng(23);
    const pkts = makePackets(500, 20, rng);
    for (const burst of [2, 3, 4]) {
      const lost = new Set([507, 508, 509, 510].slice(0, burst));
      const inter = makeFecPackets({ streamId: 0, packets: pkts, count: 4, mask: 'bursty', protectsPath: 0, firstFecSeq: 0 });
      const d1 = new FecDecoder();
      const o1 = deliver(d1, 0, pkts, inter, lost);
      expect(new Set(o1.map((r) => r.flowSeq))).toEqual(lost);
      checkRecovered(o1, pkts);
      const blocks = makeFecPackets({ streamId: 0, packets: pkts, count: 4, mask: 'random', protectsPath: 0, firstFecSeq: 0 });
      const d2 = new FecDecoder();
      const o2 = deliver(d2, 0, pkts, blocks, lost);
      expect(o2.length).toBeLessThan(burst); // consecutive losses share a block
    }
  });

  it('property: any single loss per FEC packet is rebuilt byte-for-byte (both masks, any order, wrap)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffff_ffff }),
        fc.array(fc.uint8Array({ minLength: 1, maxLength: 300 }), { minLength: 1, maxLength: 64 }),
        fc.integer({ min: 1, max: 64 }),
        fc.constantFrom('random' as const, 'bursty' as const),
        fc.infiniteStream(fc.nat()),
        fc.boolean(),
        (base, bodies, count, mask, picks, fecFirst) => {
          const pkts = bodies.map((body, i) => ({ flowSeq: seqAdd(base, i), body }));
          const fecs = makeFecPackets({ streamId: 4, packets: pkts, count, mask, protectsPath: 3, firstFecSeq: base });
          const it = picks[Symbol.iterator]();
          const lost = new Set<number>();
          for (const f of fecs) {
            const seqs = maskBits(f.mask).map((b) => seqAdd(f.baseSeq, b));
            lost.add(seqs[(it.next().value as number) % seqs.length]);
          }
          const dec = new FecDecoder();
          const out = deliver(dec, 4, pkts, fecs, lost, new Set(), fecFirst);
          expect(new Set(out.map((r) => r.flowSeq))).toEqual(lost);
          checkRecovered(out, pkts);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('FecDecoder: lying FEC packets', () => {
  const rng = new Rng(31);
  const pkts = makePackets(1000, 10, rng);
  const good = makeFecPackets({ streamId: 0, packets: pkts, count: 1, mask: 'random', protectsPath: 0, firstFecSeq: 7 })[0];
  const fresh = () => {
    const dec = new FecDecoder();
    for (const p of pkts) if (p.flowSeq !== 1003) dec.addMedia(0, p.flowSeq, p.body);
    return dec;
  };

  it('drops malformed fields without throwing', () => {
    const dec = fresh();
    const bad: unknown[] = [
      null,
      {},
      { ...good, mask: new Uint8Array(0) },
      { ...good, mask: new Uint8Array(9).fill(1) },
      { ...good, mask: new Uint8Array(2) },
      { ...good, protectsPath: 99 },
      { ...good, protectsPath: -1 },
      { ...good, streamId: -1 },
      { ...good, baseSeq: 2 ** 32 },
      { ...good, lengthXor: Number.NaN },
      { ...good, mask: [1, 2] },
    ];
    for (const b of bad) expect(dec.addFec(b as FecMessage)).toEqual([]);
    expect(dec.stats().dropped.malformedFec).toBe(bad.length);
    expect(dec.stats().fecReceived).toBe(bad.length);
    // The good one still works afterwards.
    const out = dec.addFec(good);
    expect(out.map((r) => r.flowSeq)).toEqual([1003]);
  });

  it('drops absurd parity sizes', () => {
    const dec = new FecDecoder({ maxParityBytes: 4096 });
    expect(dec.addFec({ ...good, parity: new Uint8Array(0) })).toEqual([]);
    expect(dec.addFec({ ...good, parity: new Uint8Array(5000) })).toEqual([]);
    expect(dec.addFec({ ...good, parity: 'x' as unknown as Uint8Array })).toEqual([]);
    expect(dec.stats().dropped.absurdParity).toBe(3);
  });

  it('drops masks pointing far away (huge seqs) from the newest media', () => {
    const dec = fresh();
    for (const base of [seqAdd(1000, 5000), seqAdd(1000, 0x8000_0000), seqAdd(1000, -5000)]) {
      expect(dec.addFec({ ...good, baseSeq: base, fecSeq: base })).toEqual([]);
    }
    expect(dec.stats().dropped.farAwayFec).toBe(3);
    expect(dec.stats().pendingFec).toBe(0);
  });

  it('rejects a recovered length beyond the parity, and a body longer than the parity', () => {
    const dec = fresh();
    expect(dec.addFec({ ...good, lengthXor: (good.lengthXor ^ 0xffff) >>> 0 })).toEqual([]);
    expect(dec.stats().dropped.recoveryRejected).toBe(1);
    const dec2 = fresh();
    expect(dec2.addFec({ ...good, parity: good.parity.slice(0, 10) })).toEqual([]);
    expect(dec2.stats().dropped.inconsistentFec).toBe(1);
  });

  it('rejects a wrong length whose padding is not zero (corrupted parity or wrong packets)', () => {
    const dec = fresh();
    const lenMissing = pkts[3].body.length;
    const maxLen = good.parity.length;
    // Claim the missing packet is shorter than it is: padding then holds its real bytes.
    const shorter = Math.max(1, lenMissing - 10);
    expect(shorter).toBeLessThan(maxLen);
    expect(dec.addFec({ ...good, lengthXor: (good.lengthXor ^ lenMissing ^ shorter) >>> 0 })).toEqual([]);
    expect(dec.stats().dropped.recoveryRejected).toBe(1);
  });

  it('drops duplicate FEC packets', () => {
    const dec = new FecDecoder();
    for (const p of pkts) if (p.flowSeq !== 1003 && p.flowSeq !== 1004) dec.addMedia(0, p.flowSeq, p.body);
    expect(dec.addFec(good)).toEqual([]); // two missing: pending
    expect(dec.addFec(good)).toEqual([]);
    expect(dec.stats().dropped.duplicateFec).toBe(1);
    expect(dec.stats().pendingFec).toBe(1);
  });

  it('a lie reusing the honest fec_seq and base does not shadow the honest FEC packet', () => {
    const dec = new FecDecoder({ validate: bodyMatchesSeq });
    for (const p of pkts) if (p.flowSeq !== 1003) dec.addMedia(0, p.flowSeq, p.body);
    const forged = { ...good, parity: good.parity.map((x, i) => (i === 0 ? x ^ 1 : x)) }; // same fields, wrong seq byte
    expect(dec.addFec(forged)).toEqual([]); // rebuilt seq bytes wrong -> validator refuses
    const out = dec.addFec(good);
    expect(out.map((r) => r.flowSeq)).toEqual([1003]);
    expect(sameBytes(out[0].body, pkts[3].body)).toBe(true);
  });

  it('random-byte FEC packets never throw and, with a validator, never produce a wrong packet', () => {
    fc.assert(
      fc.property(
        fc.record({
          streamId: fc.oneof(fc.constant(0), fc.integer({ min: -5, max: 2 ** 33 })),
          baseSeq: fc.oneof(fc.constant(1000), fc.integer({ min: 990, max: 1012 }), fc.integer({ min: -1, max: 2 ** 32 + 1 })),
          mask: fc.uint8Array({ minLength: 0, maxLength: 10 }),
          lengthXor: fc.oneof(fc.integer({ min: 0, max: 2000 }), fc.integer()),
          parity: fc.uint8Array({ minLength: 0, maxLength: 1300 }),
          protectsPath: fc.integer({ min: -1, max: 9 }),
          fecSeq: fc.oneof(fc.constant(7), fc.integer({ min: 0, max: 50 })),
        }),
        (lie) => {
          const dec = new FecDecoder({ validate: bodyMatchesSeq });
          for (const p of pkts) if (p.flowSeq !== 1003) dec.addMedia(0, p.flowSeq, p.body);
          const out = dec.addFec(lie as FecMessage);
          for (const r of out) expect(bodyMatchesSeq(r.streamId, r.flowSeq, r.body)).toBe(true);
          // Good data already received is never lost: the honest FEC still recovers 1003
          // unless the lie itself (validated) already did.
          const again = dec.addFec(good);
          const all = [...out, ...again].filter((r) => r.flowSeq === 1003 && r.streamId === 0);
          expect(all.length).toBe(1);
          expect(sameBytes(all[0].body, pkts[3].body)).toBe(true);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('without a validator, random parity is still rejected unless lengths and padding are consistent', () => {
    const r = new Rng(99);
    const dec = new FecDecoder();
    for (const p of pkts) if (p.flowSeq !== 1003) dec.addMedia(0, p.flowSeq, p.body);
    let accepted = 0;
    for (let i = 0; i < 200; i++) {
      const parity = new Uint8Array(1300);
      for (let j = 0; j < parity.length; j++) parity[j] = (r.next() * 256) | 0;
      const out = dec.addFec({ ...good, parity, lengthXor: (r.next() * 4000) | 0, fecSeq: 100 + i });
      accepted += out.length;
    }
    expect(accepted).toBe(0);
    expect(dec.stats().dropped.recoveryRejected).toBe(200);
  });

  it('addMedia ignores malformed input and duplicates', () => {
    const dec = new FecDecoder();
    expect(dec.addMedia(-1, 0, new Uint8Array(3))).toEqual([]);
    expect(dec.addMedia(0, 1.5, new Uint8Array(3))).toEqual([]);
    expect(dec.addMedia(0, 1, 'x' as unknown as Uint8Array)).toEqual([]);
    expect(dec.addMedia(0, 1, new Uint8Array(3))).toEqual([]);
    expect(dec.addMedia(0, 1, new Uint8Array(3))).toEqual([]);
    const d = dec.stats().dropped;
    expect(d.malformedMedia).toBe(3);
    expect(d.duplicateMedia).toBe(1);
  });

  it('a validator that throws counts as a rejection', () => {
    const dec = new FecDecoder({
      validate: () => {
        throw new Error('boom');
      },
    });
    for (const p of pkts) if (p.flowSeq !== 1003) dec.addMedia(0, p.flowSeq, p.body);
    expect(dec.addFec(good)).toEqual([]);
    expect(dec.stats().dropped.recoveryRejected).toBe(1);
  });
});

describe('FecDecoder: memory bounds', () => {
  it('keeps at most maxMediaPackets bodies per stream, evicting the oldest', () => {
    const dec = new FecDecoder({ maxMediaPackets: 100, maxAgeSeqs: 100000 });
    for (let s = 0; s < 1000; s++) dec.addMedia(1, s, new Uint8Array(10));
    const st = dec.stats();
    expect(st.storedMedia).toBe(100);
    expect(st.dropped.evictedMedia).toBe(900);
  });

  it('evicts media older than maxAgeSeqs and ignores stale media', () => {
    const dec = new FecDecoder({ maxAgeSeqs: 100 });
    for (let s = 0; s < 50; s++) dec.addMedia(1, s, new Uint8Array(10));
    dec.addMedia(1, 1000, new Uint8Array(10));
    expect(dec.stats().storedMedia).toBe(1);
    expect(dec.addMedia(1, 10, new Uint8Array(10))).toEqual([]);
    expect(dec.stats().dropped.staleMedia).toBe(1);
  });

  it('keeps at most maxFecPackets pending FEC packets per stream', () => {
    const rng = new Rng(41);
    const dec = new FecDecoder({ maxFecPackets: 10 });
    for (let g = 0; g < 50; g++) {
      const pkts = makePackets(g * 10, 10, rng, 10, 40);
      // lose two per group: FEC stays pending
      for (const p of pkts.slice(2)) dec.addMedia(0, p.flowSeq, p.body);
      dec.addFec(makeFecPackets({ streamId: 0, packets: pkts, count: 1, mask: 'random', protectsPath: 0, firstFecSeq: g })[0]);
    }
    const st = dec.stats();
    expect(st.pendingFec).toBeLessThanOrEqual(10);
    expect(st.dropped.evictedFec + st.dropped.expiredFec).toBe(40);
  });

  it('an FEC packet whose needed body was evicted fails cleanly (counted, no wrong packet)', () => {
    const rng = new Rng(42);
    const pkts = makePackets(0, 10, rng);
    const [fec] = makeFecPackets({ streamId: 0, packets: pkts, count: 1, mask: 'random', protectsPath: 0, firstFecSeq: 0 });
    const dec = new FecDecoder({ maxMediaPackets: 8, maxAgeSeqs: 100000 });
    for (const p of pkts) if (p.flowSeq !== 0 && p.flowSeq !== 4) dec.addMedia(0, p.flowSeq, p.body); // 8 stored
    expect(dec.addFec(fec)).toEqual([]); // 0 and 4 missing: pending
    // Storing 0 evicts 1, which rebuilding 4 needs.
    expect(dec.addMedia(0, 0, pkts[0].body)).toEqual([]);
    expect(dec.stats().dropped.expiredFec).toBe(1);
    expect(dec.stats().pendingFec).toBe(0);
  });

  it('bounds the number of streams (least recently used evicted)', () => {
    const dec = new FecDecoder({ maxStreams: 4 });
    for (let s = 0; s < 20; s++) dec.addMedia(s, 0, new Uint8Array(4));
    expect(dec.stats().dropped.evictedStreams).toBe(16);
    expect(dec.stats().storedMedia).toBe(4);
  });

  it('rejects bad options with FecError', () => {
    expect(() => new FecDecoder({ maxMediaPackets: 0 })).toThrow(FecError);
    expect(() => new FecDecoder({ maxAgeSeqs: 10 })).toThrow(FecError);
    expect(() => new FecDecoder({ maxFecPackets: Number.NaN })).toThrow(FecError);
  });

  describe('memory budget', () => {
    it('holds at most maxBytes over all streams, evicting the oldest of the largest stream', () => {
      const dec = new FecDecoder({ maxBytes: 64 * 1024 });
      const rng = new Rng(5);
      for (let s = 0; s < 4; s++) for (const p of makePackets(0, 200, rng, 1000, 1000)) dec.addMedia(s, p.flowSeq, p.body, 0);
      const st = dec.stats();
      expect(st.storedBytes).toBeLessThanOrEqual(64 * 1024);
      expect(st.dropped.evictedBudget).toBeGreaterThan(0);
      // Recent media is still usable for recovery.
      const pkts = makePackets(200, 4, rng, 100, 100);
      const [fec] = makeFecPackets({ streamId: 3, packets: pkts, mask: 'random', protectsPath: 0, firstFecSeq: 0, count: 1 });
      const out = deliver(dec, 3, pkts, [fec], new Set([pkts[0].flowSeq]));
      expect(out.map((r) => r.flowSeq)).toEqual([pkts[0].flowSeq]);
      expect(dec.stats().storedBytes).toBeLessThanOrEqual(64 * 1024);
    });

    it('keeps everything under budget; drops entries older than maxAgeMs when given the time', () => {
      const dec = new FecDecoder({ maxAgeMs: 500 });
      const rng = new Rng(6);
      const pkts = makePackets(0, 10, rng);
      for (const [i, p] of pkts.entries()) dec.addMedia(0, p.flowSeq, p.body, i * 100_000);
      expect(dec.stats().storedMedia).toBe(6); // arrived at 0.4..0.9 s; the ones before 0.4 s are over 500 ms old at 0.9 s
      expect(dec.stats().dropped.expiredByTime).toBe(4);
      expect(dec.stats().dropped.evictedBudget).toBe(0);
    });

    it('copies a body that is a small view of a large buffer', () => {
      const dec = new FecDecoder();
      const slab = new Uint8Array(64 * 1024);
      dec.addMedia(0, 1, slab.subarray(10, 110), 0);
      dec.addMedia(0, 2, new Uint8Array(100), 0);
      expect(dec.stats().copied).toBe(1);
      expect(dec.stats().storedBytes).toBeLessThan(1000);
    });
  });
});
