import { describe, expect, it } from 'vitest';
import { compareQoe, meanQoe, renderFidelityMd } from '../../../tools/fidelity/compare.js';

const base = { fps: 30, freezeTotalMs: 1000, goodputBps: 4e6, latencyP95Ms: 100 };

describe('fidelity comparison', () => {
  it('applies each tolerance relative to the browser', () => {
    const c = compareQoe({ fps: 25, freezeTotalMs: 1400, goodputBps: 4.7e6, latencyP95Ms: 126 }, base);
    const by = Object.fromEntries(c.map((x) => [x.metric, x]));
    expect(by.fps.within).toBe(false); // -16.7 %
    expect(by.fps.relDiff).toBeCloseTo(-1 / 6, 6);
    expect(by.freezeTotalMs.within).toBe(true); // +40 % but within 500 ms
    expect(by.goodputBps.within).toBe(false); // +17.5 %
    expect(by.latencyP95Ms.within).toBe(false); // +26 %
    expect(compareQoe(base, base).every((x) => x.within)).toBe(true);
  });

  it('freezes: 0 vs 0 is within, 0 vs 600 ms is not; NaN never is', () => {
    const z = { ...base, freezeTotalMs: 0 };
    expect(compareQoe(z, z).find((x) => x.metric === 'freezeTotalMs')?.within).toBe(true);
    expect(compareQoe({ ...base, freezeTotalMs: 600 }, z).find((x) => x.metric === 'freezeTotalMs')?.within).toBe(false);
    expect(compareQoe({ ...base, latencyP95Ms: NaN }, base).find((x) => x.metric === 'latencyP95Ms')?.within).toBe(false);
  });

  it('averages seeds and marks rows outside tolerance', () => {
    expect(meanQoe([base, { ...base, fps: 20 }]).fps).toBe(25);
    const md = renderFidelityMd([{ scenario: 'constant', durationS: 60, comparisons: compareQoe({ ...base, fps: 20 }, base) }]);
    expect(md).toContain('| constant | 60 | 20.0 / 30.0 (-33%) **OUT**');
  });
});
