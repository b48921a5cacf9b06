import { describe, expect, it } from 'vitest';
import { makeCall } from './call-helper.js';
import { registerAllStrategies } from '../../../src/strategies.js';

registerAllStrategies();

/** Converge over a 4 Mbps path that is a blackhole (both directions) for `downMs` from 3 s, next to a 1 Mbps path; the sender's key frame requests by reason. */
function blackhole(blackholeKeyframe: boolean | undefined, downMs = 800, pliAtMs?: number): string[] {
  const c = makeCall(
    [
      { rateMbps: 4, delayMs: 30, down: [[3000, 3000 + downMs]] },
      { rateMbps: 1, delayMs: 40 },
    ],
    { scheduler: 'converge', fec: 'none', extra: blackholeKeyframe === undefined ? {} : { blackholeKeyframe } },
  );
  const reasons: string[] = [];
  c.run(2900);
  c.sender.on('keyframeNeeded', (reason) => reasons.push(reason));
  if (pliAtMs !== undefined) {
    // The receiver asks for a key frame over the other path during the silence.
    c.run(pliAtMs - 2900);
    c.sender.onControl({ kind: 'keyframeRequest', keyframeRequest: { streamId: 0, requestId: 99 } }, 1);
    c.run(5000 - pliAtMs);
  } else c.run(2100);
  return reasons;
}

describe('SenderEngineConfig.blackholeKeyframe', () => {
  it("asks for the 'outage' key frame when a path that carried media comes back from a blackhole", () => {
    expect(blackhole(true)).toContain('outage');
  });

  it('is on by default; off, the outage key frame is a single-path rule', () => {
    expect(blackhole(undefined)).toContain('outage');
    expect(blackhole(false)).not.toContain('outage');
  });

  it('not when a key frame went out since the silence began (the receiver asked over the other path)', () => {
    const reasons = blackhole(true, 800, 3300);
    expect(reasons).toContain('pli');
    expect(reasons).not.toContain('outage');
  });

  it('not for a silence of at most 500 ms', () => {
    expect(blackhole(true, 300)).not.toContain('outage');
  });
});
