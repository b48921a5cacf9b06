import { describe, expect, it } from 'vitest';
import { makeCall } from './call-helper.js';

describe('protection overhead (SenderEngineConfig.protectionOverheadMax)', () => {
  it("lowers the engine's encoder target below the path estimate on a lossy path (NACK retransmissions and FEC counted)", () => {
    const run = (overheadMax: number) => {
      const c = makeCall([{ rateMbps: 3, delayMs: 30, loss: 0.08 }], { extra: { protectionOverheadMax: overheadMax } });
      c.run(4000);
      const st = c.sender.stats();
      expect(st.retransmissionsSent + st.fecPacketsSent).toBeGreaterThan(20);
      return c.sender.targetBitrateBps() / Math.max(1, st.paths[0].rateBps * st.pushbackRatio);
    };
    expect(run(0)).toBeGreaterThan(0.97); // off: the estimate (no audio in this call)
    const on = run(0.5);
    expect(on).toBeLessThan(0.95);
    expect(on).toBeGreaterThanOrEqual(0.5);
    // The share (~16 % here) is capped: at 0.1 the target keeps 0.9 of the estimate.
    expect(run(0.1)).toBeCloseTo(0.9, 2);
  });

  it('is on by default, capped at 0.5 (libwebrtc kProtectionOverheadRateThreshold)', () => {
    const ratio = (extra: Record<string, number>) => {
      const c = makeCall([{ rateMbps: 3, delayMs: 30, loss: 0.08 }], { extra });
      c.run(4000);
      const st = c.sender.stats();
      expect(st.retransmissionsSent + st.fecPacketsSent).toBeGreaterThan(20);
      return c.sender.targetBitrateBps() / Math.max(1, st.paths[0].rateBps * st.pushbackRatio);
    };
    const byDefault = ratio({});
    expect(byDefault).toBeLessThan(0.95);
    expect(byDefault).toBeGreaterThanOrEqual(0.5);
    expect(byDefault).toBeCloseTo(ratio({ protectionOverheadMax: 0.5 }), 6);
  });

  it('refuses a value outside [0, 1] (NaN made the target NaN, -1 doubled it)', () => {
    for (const bad of [Number.NaN, -1, 1.5]) {
      expect(() => makeCall([{ rateMbps: 3, delayMs: 30 }], { extra: { protectionOverheadMax: bad } }), String(bad)).toThrow(RangeError);
    }
  });
});
