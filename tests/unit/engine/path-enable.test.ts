/**
 * Administrative path enable/disable (issue 13's path toggle,
 * `MultipathCall.setPathEnabled`): a path the app switches off and on again
 * carries media again at once (no fault penalty), while a path that failed
 * on its own keeps the hysteresis. Virtual clock, engines over emulated links.
 */
import { describe, expect, it } from 'vitest';
import { type Call, makeCall } from './call-helper.js';

/** Run in 50 ms steps until path `id` sent `n` more media packets; the time it took (ms), or Infinity after `maxMs`. */
function msUntilMedia(c: Call, id: number, n: number, maxMs: number): number {
  const m0 = c.sender.stats().paths[id].mediaPacketsSent;
  for (let t = 0; t <= maxMs; t += 50) {
    if (c.sender.stats().paths[id].mediaPacketsSent - m0 >= n) return t;
    c.run(50);
  }
  return Infinity;
}

describe('SenderEngine.setPathEnabled', () => {
  const paths = [
    { rateMbps: 4, delayMs: 20 },
    { rateMbps: 4, delayMs: 40 },
  ];

  it('a path the app re-enables carries media again within ~1 s', () => {
    const c = makeCall(paths, { extra: { maxBitrateBps: 4_000_000 } });
    c.run(5000);
    expect(c.sender.stats().paths[0].mediaPacketsSent).toBeGreaterThan(100);
    c.sender.setPathEnabled(0, false);
    c.run(200);
    const m0 = c.sender.stats().paths[0].mediaPacketsSent;
    c.run(3000);
    // Disabled: nothing of the call's media goes there.
    expect(c.sender.stats().paths[0].mediaPacketsSent - m0).toBe(0);
    expect(c.sender.pathStates().find((p) => p.id === 0)?.up).toBe(false);
    c.sender.setPathEnabled(0, true);
    const ms = msUntilMedia(c, 0, 50, 3000); // 150 ms here (3.2 s when the toggle was a transport close)
    expect(ms).toBeLessThanOrEqual(1000);
    expect(c.sender.stats().paths[0].demoted).toBe(false);
    expect(c.sender.isPathEnabled(0)).toBe(true);
  });

  it('toggling a path off and on again and again earns it no fault penalty', () => {
    const c = makeCall(paths, { extra: { maxBitrateBps: 4_000_000 } });
    c.run(4000);
    for (let k = 0; k < 4; k++) {
      c.sender.setPathEnabled(0, false);
      c.run(1000);
      c.sender.setPathEnabled(0, true);
      expect(msUntilMedia(c, 0, 20, 2000)).toBeLessThanOrEqual(1000);
      c.run(500);
    }
    expect(c.sender.stats().paths[0].demoted).toBe(false);
  });

  it('a path that flapped on its own and is then switched off and on still waits out its hysteresis', () => {
    // Path 0 blackholes twice (its own faults); the app turns it off and on again after the second.
    const c = makeCall(
      [
        {
          ...paths[0],
          down: [
            [3000, 4000],
            [5500, 6500],
          ],
        },
        paths[1],
      ],
      { extra: { maxBitrateBps: 4_000_000 } },
    );
    c.run(7000);
    expect(c.sender.stats().paths[0].demoted).toBe(true);
    c.sender.setPathEnabled(0, false);
    c.run(500);
    c.sender.setPathEnabled(0, true);
    const m0 = c.sender.stats().paths[0].mediaPacketsSent;
    c.run(1500);
    expect(c.sender.stats().paths[0].mediaPacketsSent - m0).toBeLessThan(5);
    expect(c.sender.stats().paths[0].demoted).toBe(true);
  });

  it('a path enabled while its transport is down comes up with the transport; unknown paths are ignored', () => {
    const c = makeCall(paths, { extra: { maxBitrateBps: 4_000_000 } });
    c.run(3000);
    c.sender.setPathState(0, 'failed');
    c.sender.setPathEnabled(0, false);
    c.run(500);
    c.sender.setPathEnabled(0, true);
    expect(c.sender.isPathUp(0)).toBe(false); // the transport is still down
    c.sender.setPathState(0, 'connected');
    expect(c.sender.isPathUp(0)).toBe(true);
    c.sender.setPathEnabled(7, false);
    expect(c.sender.isPathEnabled(7)).toBe(false);
    c.sender.setPathEnabled(0, false);
    c.sender.setPathState(0, 'connected'); // a transport event does not undo the app's switch
    expect(c.sender.isPathUp(0)).toBe(false);
  });
});
