import { describe, expect, it } from 'vitest';
import { FecError } from '../../../src/fec/errors.js';
import { createFecPolicy } from '../../../src/fec/factory.js';
import { NoneFecPolicy } from '../../../src/fec/none-policy.js';
import { PathFecPolicy } from '../../../src/fec/path-policy.js';
import type { FecContext, FecPolicyName } from '../../../src/fec/types.js';
import { WebRtcTableFecPolicy } from '../../../src/fec/webrtc-table-policy.js';
import { FecProtectionWindow } from '../../../src/fec/window.js';
import { registerAllStrategies } from '../../../src/strategies.js';

// Every shipped strategy by name (the library registers only the defaults).
registerAllStrategies();

const ctx: FecContext = { pathId: 0, mediaCount: 20, isKeyframe: false, lossRate: 0.1, rttMs: 100, rateBps: 3e6, fps: 30, frameBytes: 20000 };

describe('createFecPolicy', () => {
  it('builds each policy by name', () => {
    expect(createFecPolicy('path')).toBeInstanceOf(PathFecPolicy);
    expect(createFecPolicy('webrtc-table', { method: 'fec' })).toBeInstanceOf(WebRtcTableFecPolicy);
    expect(createFecPolicy('none')).toBeInstanceOf(NoneFecPolicy);
    for (const n of ['path', 'webrtc-table', 'none'] as FecPolicyName[]) expect(createFecPolicy(n).name).toBe(n);
  });

  it('none never adds FEC', () => {
    const p = createFecPolicy('none');
    p.onNack(0, 100, 0);
    expect(p.fecCount({ ...ctx, lossRate: 0.5 }, 0)).toBe(0);
  });

  it('throws FecError unknown-policy for other names, invalid-option for bad options', () => {
    try {
      createFecPolicy('reed-solomon' as FecPolicyName);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(FecError);
      expect((e as FecError).code).toBe('unknown-policy');
    }
    expect(() => createFecPolicy('path', { maxBeta: 0 })).toThrow(FecError);
  });
});

describe('FecProtectionWindow', () => {
  const b = new Uint8Array(10);
  it('returns the packets since the last take, per path, then empties', () => {
    const w = new FecProtectionWindow();
    for (let s = 0; s < 5; s++) w.push(0, s, b, 0);
    w.push(1, 100, b, 0);
    expect(w.take(0, 1000).map((p) => p.flowSeq)).toEqual([0, 1, 2, 3, 4]);
    expect(w.take(0, 1000)).toEqual([]);
    expect(w.take(1, 1000).map((p) => p.flowSeq)).toEqual([100]);
    expect(w.take(7, 0)).toEqual([]);
    expect(w.take(99, 0)).toEqual([]);
  });

  it('bounds packets, age and seq span (counted as unprotected)', () => {
    const w = new FecProtectionWindow({ maxPackets: 10, maxAgeUs: 100_000 });
    for (let s = 0; s < 15; s++) w.push(0, s, b, 0);
    expect(w.unprotected()).toBe(5);
    expect(w.take(0, 50_000).length).toBe(10);
    for (let s = 0; s < 5; s++) w.push(0, s, b, 0);
    for (let s = 5; s < 8; s++) w.push(0, s, b, 150_000);
    expect(w.take(0, 160_000).map((p) => p.flowSeq)).toEqual([5, 6, 7]);
    w.push(0, 0xffff_fff0, b, 0);
    w.push(0, 100, b, 0); // 116 seqs later across the wrap: too far for one mask
    expect(w.take(0, 0).map((p) => p.flowSeq)).toEqual([100]);
    expect(w.unprotected()).toBe(5 + 5 + 1);
    expect(() => new FecProtectionWindow({ maxPackets: 65 })).toThrow(FecError);
  });
});
