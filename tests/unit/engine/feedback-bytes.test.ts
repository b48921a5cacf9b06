/**
 * The receiver counts the feedback it sends back on each path's reverse
 * direction (ReceiverPathStats.feedbackBytesSent / reportBytesSent): the
 * instrument behind the call report's and the simulator's `feedback` per path
 * (tools/harness/report.ts pathFeedback).
 */
import { describe, expect, it } from 'vitest';
import { pathFeedback } from '../../../tools/harness/report.js';
import { makeCall } from './call-helper.js';

describe('receiver feedback bytes per path', () => {
  const paths = [
    { rateMbps: 4, delayMs: 30 },
    { rateMbps: 4, delayMs: 50 },
  ];
  const run = (reportCopies: boolean) => {
    const c = makeCall(paths, { extra: { maxBitrateBps: 2_000_000 }, receiver: { reportCopies } });
    c.run(4000);
    return c.receiver.stats().paths;
  };

  it('counts every report, clock echo, NACK and QoE datagram it sends on a path; reports are most of it', () => {
    const ps = run(false);
    for (const p of ps) {
      expect(p.reportBytesSent).toBeGreaterThan(4 * 20 * 20); // >= 20 reports a second of >= 20 bytes
      expect(p.feedbackBytesSent).toBeGreaterThanOrEqual(p.reportBytesSent);
      expect(p.reportArrivalsRelisted).toBe(0); // no late packets here
    }
    const f = pathFeedback(ps[0], 4);
    expect(f.bps).toBe(Math.round((ps[0].feedbackBytesSent * 8) / 4));
    expect(f.reportBps).toBe(Math.round((ps[0].reportBytesSent * 8) / 4));
    expect(pathFeedback(undefined, 4)).toEqual({ bytes: 0, bps: 0, reportBytes: 0, reportBps: 0, relisted: 0 });
  });

  it('report copies count on the path that carries them', () => {
    // Path 1 carries no media (its forward direction is down), so every report it carries back is a copy of path 0's.
    const asym = [paths[0], { ...paths[1], down: [[0, 1e9]] as Array<[number, number]> }];
    const runAsym = (reportCopies: boolean) => {
      const c = makeCall(asym, { extra: { maxBitrateBps: 2_000_000 }, receiver: { reportCopies } });
      c.run(4000);
      return c.receiver.stats().paths;
    };
    const one = runAsym(false);
    const both = runAsym(true);
    expect(one[1]?.reportBytesSent ?? 0).toBe(0);
    expect(one[0].reportBytesSent).toBeGreaterThan(0);
    expect(both[1].reportBytesSent).toBeGreaterThan(0.8 * one[0].reportBytesSent);
    expect(both[0].reportBytesSent).toBeLessThan(1.2 * one[0].reportBytesSent);
  });
});
