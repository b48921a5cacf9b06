import { describe, expect, it } from 'vitest';
import { FecError } from '../../../src/fec/errors.js';
import { FEC_RATE_TABLE, FEC_TABLE_SIZE } from '../../../src/fec/fec-rate-table.js';
import { PathFecPolicy } from '../../../src/fec/path-policy.js';
import type { FecContext } from '../../../src/fec/types.js';
import { WebRtcTableFecPolicy, convertFecRate } from '../../../src/fec/webrtc-table-policy.js';

const ctx = (o: Partial<FecContext> = {}): FecContext => ({
  pathId: 0,
  mediaCount: 15,
  isKeyframe: false,
  lossRate: 0.01,
  rttMs: 100,
  rateBps: 3_600_000,
  fps: 30,
  frameBytes: 15_000,
  ...o,
});

describe('kFecRateTable data', () => {
  it('has libwebrtc size and known entries (transcription regression)', () => {
    expect(FEC_TABLE_SIZE).toBe(6450);
    expect(FEC_RATE_TABLE.length).toBe(6450);
    let sum = 0;
    let h = 0;
    for (const v of FEC_RATE_TABLE) {
      sum += v;
      h = (Math.imul(h, 31) + v) >>> 0;
    }
    expect(sum).toBe(709156);
    expect(h).toBe(2129411428);
    // Row 0 starts with 33 zeros then 11; row 49 = 0, 13, 27, 40, 54, 54, 67, 76, ...
    expect(Array.from(FEC_RATE_TABLE.subarray(32, 35))).toEqual([0, 11, 11]);
    expect(Array.from(FEC_RATE_TABLE.subarray(49 * 129, 49 * 129 + 8))).toEqual([0, 13, 27, 40, 54, 54, 67, 76]);
    expect(FEC_RATE_TABLE[4 * 129 + 128]).toBe(115);
    expect(Math.max(...FEC_RATE_TABLE)).toBe(127);
  });
});

describe('WebRtcTableFecPolicy (libwebrtc media_opt_util.cc)', () => {
  it('ConvertFECRate maps code rate of total to factor of source', () => {
    expect(convertFecRate(0)).toBe(0);
    expect(convertFecRate(51)).toBe(64); // 255*51/204 = 63.75 -> 64
    expect(convertFecRate(127)).toBe(253);
    expect(convertFecRate(128)).toBe(255);
  });

  it('at 1 % loss the 20 % first-partition floor applies: factor 64 (25 % of media)', () => {
    const p = new WebRtcTableFecPolicy();
    const prot = p.protection(0.01, 3_600_000, 30, 100);
    expect(prot.codeRateDelta).toBe(51);
    expect(prot.factorDelta).toBe(64);
    expect(prot.codeRateKey).toBeGreaterThanOrEqual(102); // 2 x delta
    // NumFecPackets: (15*64 + 128) >> 8 = 4; small frames still get at least one.
    expect(p.fecCount(ctx({ mediaCount: 15 }), 0)).toBe(4);
    expect(p.fecCount(ctx({ mediaCount: 2 }), 0)).toBe(1);
    expect(p.fecCount(ctx({ mediaCount: 1 }), 0)).toBe(1);
  });

  it('reads the table at higher loss and caps the code rate at 128/255', () => {
    const p = new WebRtcTableFecPolicy();
    // 3.6 Mbps / 30 fps = 120 kbit/frame; VGA resolution factor (704*576/640/480)^0.3 = 1.087 -> 130 -> row 25.
    const prot = p.protection(0.05, 3_600_000, 30, 100);
    const row = Math.trunc((Math.trunc(120 * Math.pow((704 * 576) / (640 * 480), 0.3)) - 5) / 5);
    expect(row).toBe(25);
    expect(prot.codeRateDelta).toBe(Math.max(51, FEC_RATE_TABLE[row * 129 + Math.trunc(255 * 0.05)]));
    expect(p.protection(0.6, 3_600_000, 30, 100).codeRateDelta).toBeLessThanOrEqual(128);
  });

  it('no loss -> no FEC; keyframes get more FEC than delta frames', () => {
    const p = new WebRtcTableFecPolicy();
    expect(p.fecCount(ctx({ lossRate: 0 }), 0)).toBe(0);
    expect(p.fecCount(ctx({ lossRate: 0.001 }), 0)).toBe(0); // < 1/255
    const d = p.fecCount(ctx({ lossRate: 0.03, mediaCount: 40 }), 0);
    const k = p.fecCount(ctx({ lossRate: 0.03, mediaCount: 40, isKeyframe: true }), 1000);
    expect(k).toBeGreaterThan(d);
  });

  it('hybrid NACK/FEC: no delta FEC below lowRttNackMs, FEC at higher RTT', () => {
    const p = new WebRtcTableFecPolicy();
    expect(p.fecCount(ctx({ rttMs: 10 }), 0)).toBe(0);
    expect(p.fecCount(ctx({ rttMs: 100 }), 0)).toBeGreaterThan(0);
    // Keyframe protection survives at low RTT (libwebrtc only zeroes the delta factor).
    expect(p.fecCount(ctx({ rttMs: 10, isKeyframe: true, mediaCount: 60 }), 0)).toBeGreaterThan(0);
    // FEC-only method ignores RTT.
    expect(new WebRtcTableFecPolicy({ method: 'fec' }).fecCount(ctx({ rttMs: 10 }), 0)).toBe(4);
  });

  it('hybrid: FEC off when bytes/frame are below the resolution threshold and RTT < 200 ms', () => {
    const p = new WebRtcTableFecPolicy(); // VGA: 700 bytes/frame
    const low = ctx({ rateBps: 150_000, fps: 30, mediaCount: 2, lossRate: 0.2 }); // 5 kbit = 625 bytes/frame, table row 0 -> 39
    expect(p.fecCount(low, 0)).toBe(0);
    expect(p.fecCount({ ...low, isKeyframe: true }, 0)).toBe(0);
    expect(p.fecCount({ ...low, rttMs: 250 }, 0)).toBeGreaterThan(0);
    expect(new WebRtcTableFecPolicy({ widthPx: 352, heightPx: 288 }).fecCount(low, 0)).toBeGreaterThan(0); // CIF: 400 bytes
  });

  it('gives far more FEC than the path policy at the same loss (Converge Fig. 12)', () => {
    for (const loss of [0.01, 0.02, 0.05, 0.1]) {
      const table = new WebRtcTableFecPolicy();
      const path = new PathFecPolicy();
      let t = 0;
      let pp = 0;
      for (let f = 0; f < 300; f++) {
        const c = ctx({ lossRate: loss, mediaCount: 15 });
        t += table.fecCount(c, f * 33_333);
        pp += path.fecCount(c, f * 33_333);
      }
      expect(t).toBeGreaterThan(pp * 4);
    }
  });

  it('fewer FEC packets at low RTT than at high RTT over a run (hybrid)', () => {
    let low = 0;
    let high = 0;
    const a = new WebRtcTableFecPolicy();
    const b = new WebRtcTableFecPolicy();
    for (let f = 0; f < 300; f++) {
      const key = f % 100 === 0;
      low += a.fecCount(ctx({ rttMs: 5, isKeyframe: key, mediaCount: key ? 60 : 15 }), f * 33_333);
      high += b.fecCount(ctx({ rttMs: 150, isKeyframe: key, mediaCount: key ? 60 : 15 }), f * 33_333);
    }
    expect(low).toBeLessThan(high / 10);
  });

  it('bad input gives 0, bad options throw', () => {
    const p = new WebRtcTableFecPolicy();
    expect(p.fecCount(ctx({ pathId: 100 }), 0)).toBe(0);
    expect(p.fecCount(ctx({ mediaCount: Number.NaN }), 0)).toBe(0);
    expect(p.fecCount(ctx({ lossRate: Number.NaN }), 0)).toBe(0);
    expect(p.fecCount(ctx({ rateBps: Number.NaN, fps: Number.NaN }), 0)).toBeGreaterThanOrEqual(0);
    expect(() => new WebRtcTableFecPolicy({ method: 'x' as 'fec' })).toThrow(FecError);
    expect(() => new WebRtcTableFecPolicy({ lowRttNackMs: 100, highRttNackMs: 50 })).toThrow(FecError);
    expect(p.maskKind(ctx())).toBe('random');
  });
});
