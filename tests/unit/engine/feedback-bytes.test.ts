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
    const one = run(false);
    const both = run(true);
    const sum = (ps: typeof one) => ps.reduce((a, p) => a + p.reportBytesSent, 0);
    // every report goes out on both paths: about twice the bytes
    expect(sum(both)).toBeGreaterThan(1.7 * sum(one));
    expect(sum(both)).toBeLessThan(2.3 * sum(one));
  });
});
