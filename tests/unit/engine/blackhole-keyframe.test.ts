import { describe, expect, it } from 'vitest';
import { makeCall } from './call-helper.js';
import { registerAllStrategies } from '../../../src/strategies.js';

registerAllStrategies();

interface Hole {
  blackholeKeyframe?: boolean;
  /** Silence length (ms), from 3 s. */
  downMs?: number;
  /** The receiver asks for a key frame over path 1 at this time (ms). */
  pliAtMs?: number;
  /** Which path goes silent: 0 (4 Mbps, carries the call) or 1 (1 Mbps). */
  path?: 0 | 1;
  /** Only the path's feedback direction is silent (its media arrives). */
  reverseOnly?: boolean;
  /** The receiver's own NACK defaults (the cases below pin its cap at 200 ms, see blackhole()). */
  defaultReceiver?: boolean;
}

/** Converge over a 4 Mbps and a 1 Mbps path, one of them silent for `downMs` from 3 s; the sender's key frame requests by reason. */
function blackhole(h: Hole = {}): string[] {
  return blackholeCall(h).reasons;
}

function blackholeCall(h: Hole): { reasons: string[]; decoded: number[] } {
  const downMs = h.downMs ?? 800;
  const hole: Array<[number, number]> = [[3000, 3000 + downMs]];
  const silence = h.reverseOnly ? { reverseDown: hole } : { down: hole };
  const c = makeCall(
    [
      { rateMbps: 4, delayMs: 30, ...(h.path !== 1 ? silence : {}) },
      { rateMbps: 1, delayMs: 40, ...(h.path === 1 ? silence : {}) },
    ],
    {
      scheduler: 'converge',
      fec: 'none',
      extra: h.blackholeKeyframe === undefined ? {} : { blackholeKeyframe: h.blackholeKeyframe },
      // The receiver NACKs at the reorder-wait cap it had when these cases were built (200 ms): with the
      // default 100 ms it gives up within the 800 ms silence and asks for a key frame over path 1 itself,
      // which by design makes the sender's 'outage' key frame unnecessary (the 'pli' cases below).
      ...(h.defaultReceiver ? {} : { receiver: { nack: { maxReorderWindowMs: 200 } } }),
    },
  );
  const reasons: string[] = [];
  c.run(2900);
  c.sender.on('keyframeNeeded', (reason) => reasons.push(reason));
  if (h.pliAtMs !== undefined) {
    c.run(h.pliAtMs - 2900);
    c.sender.onControl({ kind: 'keyframeRequest', keyframeRequest: { streamId: 0, requestId: 99 } }, 1);
    c.run(5000 - h.pliAtMs);
  } else c.run(2100);
  return { reasons, decoded: c.decoded };
}

describe('SenderEngineConfig.blackholeKeyframe', () => {
  it("asks for the 'outage' key frame when a path that carried media comes back from a blackhole", () => {
    expect(blackhole({ blackholeKeyframe: true })).toContain('outage');
  });

  it('is on by default; off, the outage key frame is a single-path rule', () => {
    expect(blackhole()).toContain('outage');
    expect(blackhole({ blackholeKeyframe: false })).not.toContain('outage');
  });

  it('not when a key frame went out since the silence began on another path (the receiver asked over it)', () => {
    const reasons = blackhole({ pliAtMs: 3300 });
    expect(reasons).toContain('pli');
    expect(reasons).not.toContain('outage');
  });

  it('still when that key frame went (partly) into the silence itself', () => {
    // 50 ms into the silence the path is not suspect yet: the key frame follows the call onto it.
    const reasons = blackhole({ pliAtMs: 3050 });
    expect(reasons).toContain('pli');
    expect(reasons).toContain('outage');
  });

  it('not for a silence of at most 500 ms', () => {
    expect(blackhole({ downMs: 300 })).not.toContain('outage');
  });

  it('not for a path that carried (almost) no media into its silence', () => {
    expect(blackhole({ path: 1 })).not.toContain('outage');
  });

  it('with every default, the receiver asks for the key frame itself in the silence: one key frame, no outage copy', () => {
    const { reasons, decoded } = blackholeCall({ defaultReceiver: true });
    expect(reasons).toContain('pli');
    expect(reasons).not.toContain('outage');
    expect(decoded.length).toBeGreaterThan(100); // frames decode again after the 800 ms silence (30 fps over 5 s)
  });

  it('not for a silence of the feedback only (the media arrived)', () => {
    expect(blackhole({ reverseOnly: true })).not.toContain('outage');
  });
});
