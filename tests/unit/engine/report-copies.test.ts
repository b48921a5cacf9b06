/**
 * A path whose reverse direction stalls while its forward direction delivers
 * (an LTE downlink gap): with ReceiverEngineConfig.reportCopies its reports
 * reach the sender on the other path, so the sender keeps it up and keeps
 * sending on it; the copies are applied once (SenderPath.acceptReport).
 */
import { describe, expect, it } from 'vitest';
import { makeCall } from './call-helper.js';

describe('receiver report copies', () => {
  const paths = [
    { rateMbps: 6, delayMs: 40 },
    // Path 1's reverse direction (reports, NACKs) is dead from 3 to 7 s; its forward direction works.
    { rateMbps: 6, delayMs: 20, reverseDown: [[3000, 7000]] as Array<[number, number]> },
  ];
  const run = (reportCopies: boolean) => {
    const c = makeCall(paths, { extra: { maxBitrateBps: 3_000_000 }, receiver: { reportCopies } });
    c.run(3000);
    const m0 = c.sender.stats().paths[1].mediaPacketsSent;
    let downMs = 0;
    for (let t = 0; t < 4000; t += 50) {
      c.run(50);
      if (!c.sender.isPathUp(1)) downMs += 50;
    }
    const s = c.sender.stats();
    return { downMs, media1: s.paths[1].mediaPacketsSent - m0, copiesDropped: s.reportCopiesDropped, decoded: c.decoded.length, sent: c.framesSent };
  };

  it('without copies the path is declared down while only its reverse direction is dead', () => {
    const r = run(false);
    expect(r.downMs).toBeGreaterThan(2000);
    expect(r.copiesDropped).toBe(0);
  });

  it('with copies the path stays up and keeps carrying media; each report is applied once', () => {
    const r = run(true);
    const without = run(false);
    expect(r.downMs).toBe(0);
    expect(r.media1).toBeGreaterThan(3 * Math.max(1, without.media1));
    // Every report of both paths came twice (once per path), all but the first copy dropped.
    expect(r.copiesDropped).toBeGreaterThan(50);
    expect(r.decoded).toBeGreaterThan(0.9 * r.sent);
  });
});
