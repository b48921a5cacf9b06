/**
 * The 'targetBitrate' event follows path changes at once, not at the next tick: at call start the
 * app's encoder takes its first frame as soon as a path is up (MultipathCall encodes nothing before),
 * and before this it read the floor of a call without paths (50 kbps): the browser's first frames were
 * 160x120, then a second key frame at the camera's size.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import type { PathSink } from '../../../src/engine/types.js';
import { SenderEngine } from '../../../src/engine/sender.js';

const sink = (): PathSink => ({ send: () => true, bufferedAmount: () => 0 });

/** An engine (800 kbps start, 50 kbps floor) and the targets it emits. */
function engine(): { clock: ManualClock; e: SenderEngine; seen: number[] } {
  const clock = new ManualClock();
  const e = new SenderEngine({ clock, startBitrateBps: 800_000, minBitrateBps: 50_000 });
  const seen: number[] = [];
  e.on('targetBitrate', (bps) => seen.push(bps));
  return { clock, e, seen };
}

describe("SenderEngine 'targetBitrate' event", () => {
  it('is emitted when a path connects, before any tick', () => {
    const { clock, e, seen } = engine();
    e.addPath(0, sink(), 'connecting');
    e.tick();
    // No usable path: the floor.
    expect(seen).toEqual([50_000]);
    expect(e.hasUpPath()).toBe(false);
    clock.advanceMs(300);
    e.setPathState(0, 'connected');
    // The encoder may read the target now (the path is up): it already follows the path's start rate.
    expect(e.hasUpPath()).toBe(true);
    expect(seen.length).toBe(2);
    expect(seen[1]).toBeGreaterThan(400_000);
    expect(seen[1]).toBe(e.targetBitrateBps());
  });

  it('is emitted when the app switches the only path off and on', () => {
    const { e, seen } = engine();
    e.addPath(0, sink(), 'connected');
    e.tick();
    expect(seen.length).toBe(1);
    expect(seen[0]).toBeGreaterThan(400_000);
    e.setPathEnabled(0, false);
    expect(seen.at(-1)).toBe(50_000);
    e.setPathEnabled(0, true);
    expect(seen.at(-1)).toBeGreaterThan(400_000);
    // No change, no event.
    const n = seen.length;
    e.tick();
    expect(seen.length).toBe(n);
  });
});
