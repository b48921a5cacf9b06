import { describe, expect, it } from 'vitest';
import { FecError } from '../../../src/fec/errors.js';
import { PathFecPolicy } from '../../../src/fec/path-policy.js';
import type { FecContext } from '../../../src/fec/types.js';
import { WebRtcTableFecPolicy } from '../../../src/fec/webrtc-table-policy.js';
import { simulatePath } from './sim.js';

const ctx = (o: Partial<FecContext> = {}): FecContext => ({
  pathId: 0,
  mediaCount: 20,
  isKeyframe: false,
  lossRate: 0.1,
  rttMs: 100,
  rateBps: 3_000_000,
  fps: 30,
  frameBytes: 20_000,
  ...o,
});

describe('PathFecPolicy: FEC_i = l_i * P_i * beta', () => {
  it('uses the formula with beta = 1 when there are no NACKs', () => {
    expect(new PathFecPolicy().fecCount(ctx({ lossRate: 0.1, mediaCount: 20 }), 0)).toBe(2);
    expect(new PathFecPolicy().fecCount(ctx({ lossRate: 0.05, mediaCount: 40 }), 0)).toBe(2);
    expect(new PathFecPolicy().fecCount(ctx({ lossRate: 0.25, mediaCount: 12 }), 0)).toBe(3);
  });

  it('is path-specific: a lossless path gets nothing while a lossy one gets FEC (Converge §3.3 example)', () => {
    const p = new PathFecPolicy();
    expect(p.fecCount(ctx({ pathId: 0, lossRate: 0, mediaCount: 30 }), 0)).toBe(0);
    expect(p.fecCount(ctx({ pathId: 1, lossRate: 0.1, mediaCount: 30 }), 0)).toBe(3);
  });

  it('carries fractional credit so small frames still get FEC over time (2 %, 5 packets -> 1 per 10 frames)', () => {
    const p = new PathFecPolicy();
    const counts: number[] = [];
    for (let f = 0; f < 100; f++) counts.push(p.fecCount(ctx({ lossRate: 0.02, mediaCount: 5 }), f * 33_333));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(10);
    expect(counts.slice(0, 9).every((c) => c === 0)).toBe(true);
    expect(counts[9]).toBe(1);
    expect(p.credit(0)).toBeLessThan(1);
  });

  it('gives no FEC and resets the credit when there is no loss and no NACK', () => {
    const p = new PathFecPolicy();
    p.fecCount(ctx({ lossRate: 0.02, mediaCount: 5 }), 0); // credit 0.1
    expect(p.credit(0)).toBeGreaterThan(0);
    for (let f = 1; f < 50; f++) expect(p.fecCount(ctx({ lossRate: 0, mediaCount: 20 }), f * 33_333)).toBe(0);
    expect(p.credit(0)).toBe(0);
  });

  it('uses the NACK rate when the reported loss is still 0', () => {
    const p = new PathFecPolicy();
    p.fecCount(ctx({ lossRate: 0, mediaCount: 100 }), 0);
    p.onNack(0, 10, 1000);
    expect(p.fecCount(ctx({ lossRate: 0, mediaCount: 100 }), 2000)).toBeGreaterThan(0);
  });

  it('protects keyframes more (x1.5 by default, + keyframeExtra)', () => {
    expect(new PathFecPolicy().fecCount(ctx({ isKeyframe: true, lossRate: 0.1, mediaCount: 20 }), 0)).toBe(3);
    expect(new PathFecPolicy({ keyframeExtra: 1 }).fecCount(ctx({ isKeyframe: true, lossRate: 0.1, mediaCount: 20 }), 0)).toBe(4);
    expect(new PathFecPolicy({ keyframeFactor: 1 }).fecCount(ctx({ isKeyframe: true, lossRate: 0.1, mediaCount: 20 }), 0)).toBe(2);
  });

  it('caps FEC at maxFecRatio of the media packets', () => {
    expect(new PathFecPolicy().fecCount(ctx({ lossRate: 1, mediaCount: 10 }), 0)).toBe(5);
    expect(new PathFecPolicy({ maxFecRatio: 0.2 }).fecCount(ctx({ lossRate: 0.9, mediaCount: 10 }), 0)).toBe(2);
  });

  it('returns 0 on bad context values instead of throwing', () => {
    const p = new PathFecPolicy();
    expect(p.fecCount(ctx({ pathId: 99 }), 0)).toBe(0);
    expect(p.fecCount(ctx({ pathId: -1 }), 0)).toBe(0);
    expect(p.fecCount(ctx({ mediaCount: Number.NaN }), 0)).toBe(0);
    expect(p.fecCount(ctx({ lossRate: Number.NaN }), 0)).toBe(0);
    expect(p.fecCount(ctx(), Number.NaN)).toBe(0);
    p.onNack(42, 3, 0);
    p.onNack(0, Number.NaN, 0);
    expect(p.beta(0)).toBe(1);
  });

  it('picks the bursty (interleaved) mask only for paths marked bursty', () => {
    const p = new PathFecPolicy();
    expect(p.maskKind(ctx({ pathId: 1 }))).toBe('random');
    p.setBursty(1, true);
    expect(p.maskKind(ctx({ pathId: 1 }))).toBe('bursty');
    expect(p.maskKind(ctx({ pathId: 0 }))).toBe('random');
  });

  it('rejects bad options', () => {
    expect(() => new PathFecPolicy({ keyframeFactor: 0.5 })).toThrow(FecError);
    expect(() => new PathFecPolicy({ maxFecRatio: 2 })).toThrow(FecError);
    expect(() => new PathFecPolicy({ windowUs: Number.NaN })).toThrow(FecError);
  });
});

describe('PathFecPolicy: beta dynamics', () => {
  it('NACKs raise beta to 1 + NACK_i / (P_i - FEC_i) over the window', () => {
    const p = new PathFecPolicy();
    // 5 frames of 20 packets at 10 %: P = 100, FEC = 10.
    for (let f = 0; f < 5; f++) expect(p.fecCount(ctx({ lossRate: 0.1, mediaCount: 20 }), f * 10_000)).toBe(2);
    p.onNack(0, 9, 50_000);
    expect(p.beta(0)).toBeCloseTo(1 + 9 / 90, 6);
    // The next frame is scaled by beta: 0.1 * 100 * 1.1 = 11 (decay over 10 ms is negligible).
    expect(p.fecCount(ctx({ lossRate: 0.1, mediaCount: 100 }), 60_000)).toBe(10); // 10.99.. floored, credit kept
    expect(p.credit(0)).toBeGreaterThan(0.9);
  });

  it('more NACKs give a larger beta, capped by maxBeta', () => {
    const p = new PathFecPolicy({ maxBeta: 2 });
    p.fecCount(ctx({ lossRate: 0.1, mediaCount: 100 }), 0);
    p.onNack(0, 30, 1000);
    const b1 = p.beta(0);
    p.onNack(0, 30, 2000);
    const b2 = p.beta(0);
    expect(b2).toBeGreaterThan(b1);
    p.onNack(0, 1000, 3000);
    expect(p.beta(0)).toBe(2);
  });

  it('decays back toward 1 with time constant betaDecayTauUs when no NACK comes', () => {
    const p = new PathFecPolicy({ betaDecayTauUs: 2_000_000 });
    p.fecCount(ctx({ lossRate: 0.1, mediaCount: 100 }), 0);
    p.onNack(0, 45, 0); // beta = 1 + 45/90 = 1.5
    expect(p.beta(0, 0)).toBeCloseTo(1.5, 6);
    expect(p.beta(0, 2_000_000)).toBeCloseTo(1 + 0.5 * Math.exp(-1), 4);
    expect(p.beta(0, 20_000_000)).toBeLessThan(1.0001);
    // FEC follows: back to l * P.
    expect(p.fecCount(ctx({ lossRate: 0.1, mediaCount: 20 }), 20_000_000)).toBe(2);
  });

  it('old NACKs leave the window: a later NACK is measured against recent packets only', () => {
    const p = new PathFecPolicy({ windowUs: 1_000_000 });
    p.fecCount(ctx({ lossRate: 0.1, mediaCount: 100 }), 0);
    p.onNack(0, 45, 0);
    // 5 s later (window rolled, beta decayed): P = 100, FEC = 10, 1 NACK -> 1 + 1/90.
    p.fecCount(ctx({ lossRate: 0.1, mediaCount: 100 }), 5_000_000);
    p.onNack(0, 1, 5_000_000);
    expect(p.beta(0)).toBeLessThan(1.5 * Math.exp(-2.5) + 1 / 90 + 1);
    expect(p.beta(0)).toBeGreaterThanOrEqual(1 + 1 / 90 - 1e-9);
  });
});

describe('PathFecPolicy vs Bernoulli loss (Converge Table 5 / Fig. 12 claim)', () => {
  // FEC over the packets sent since the previous FEC packet (FecProtectionWindow),
  // frames of 10-20 packets, NACK feedback for what FEC did not rebuild.
  for (const loss of [0.01, 0.05, 0.1]) {
    it(`loss ${loss * 100} %: overhead ~ loss, utilization near the XOR bound`, () => {
      const r = simulatePath(new PathFecPolicy(), loss, { seed: 7 });
      expect(r.overhead).toBeLessThanOrEqual(loss * 1.5 + 0.01);
      expect(r.overhead).toBeGreaterThanOrEqual(loss * 0.8);
      // Strict (rebuilt >= 1 packet): single-parity XOR over m packets is used with
      // probability m*l*(1-l)^(m-1) <= ~1/e, so ~37-40 % is the ceiling.
      expect(r.strictUtil).toBeGreaterThanOrEqual(0.3);
      // Chrome-style (not discarded on arrival): >= 50 % once the 64-seq mask can
      // span ~1/l packets; at 1 % a 48..64-packet block sees a loss only 38-47 % of the time.
      expect(r.chromeUtil).toBeGreaterThanOrEqual(loss >= 0.05 ? 0.5 : 0.35);
      expect(r.recovered).toBeGreaterThan(r.lost * 0.3);
    });
  }

  it('webrtc-table sends several times more FEC and wastes most of it (Fig. 12)', () => {
    for (const loss of [0.01, 0.05, 0.1]) {
      const path = simulatePath(new PathFecPolicy(), loss, { seed: 9 });
      const table = simulatePath(new WebRtcTableFecPolicy(), loss, { seed: 9 });
      expect(table.overhead).toBeGreaterThan(path.overhead * 5);
      expect(table.overhead).toBeGreaterThan(0.2);
      expect(table.strictUtil).toBeLessThan(path.strictUtil / 2);
    }
  });

  it('no loss: no FEC at all', () => {
    const r = simulatePath(new PathFecPolicy(), 0, { seed: 1, frames: 300 });
    expect(r.fecSent).toBe(0);
  });
});
