import { describe, expect, it } from 'vitest';
import { makeCall } from './call-helper.js';
import { registerAllStrategies } from '../../../src/strategies.js';
import { resolveSenderConfig } from '../../../src/engine/sender-config.js';
import { ManualClock } from '../../../src/core/clock.js';

registerAllStrategies();

/**
 * One 2 Mbps path whose reports are held for 250 ms at 4 s (an LTE downlink stall): the bytes in flight grow
 * past S x (SRTT + the accepted queue). The lowest pushback ratio (stats().pushbackRatio) in the next 800 ms.
 */
function lowestRatio(pushbackQueueMs: number | undefined): number {
  const c = makeCall([{ rateMbps: 2, delayMs: 20, reverseStall: [[4000, 4250]] }], {
    scheduler: 'converge',
    fec: 'none',
    extra: pushbackQueueMs === undefined ? {} : { pushbackQueueMs },
  });
  c.run(4000);
  let low = Infinity;
  for (let i = 0; i < 800; i += 5) {
    c.run(5);
    low = Math.min(low, c.sender.stats().pushbackRatio);
  }
  return low;
}

describe('SenderEngineConfig.pushbackQueueMs', () => {
  it('at 100 ms pushes the encoder back once more than 100 ms of data waits beyond the RTT; at 350 ms (libwebrtc, the default) not yet', () => {
    expect(lowestRatio(undefined)).toBe(1);
    expect(lowestRatio(350)).toBe(1);
    expect(lowestRatio(100)).toBeLessThan(0.8);
  });

  it('rejects a queue that is not a finite number of ms >= 0', () => {
    const clock = new ManualClock();
    expect(() => resolveSenderConfig({ clock, pushbackQueueMs: -1 })).toThrow(RangeError);
    expect(() => resolveSenderConfig({ clock, pushbackQueueMs: Number.NaN })).toThrow(RangeError);
    expect(resolveSenderConfig({ clock }).pushbackQueueMs).toBe(350);
    expect(resolveSenderConfig({ clock, pushbackQueueMs: 0 }).pushbackQueueMs).toBe(0);
    expect(() => resolveSenderConfig({ clock, pushbackQueueMs: Number.POSITIVE_INFINITY })).toThrow(RangeError);
  });
});
