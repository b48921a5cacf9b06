import { describe, expect, it } from 'vitest';
import { KeyframeRequester } from '../../../src/feedback/keyframe-requester.js';
import { ManualClock } from '../../../src/core/clock.js';

describe('KeyframeRequester', () => {
  it('allows the first request, then at most one per max(1.5 RTT, 300 ms)', () => {
    const k = new KeyframeRequester({ streamId: 3 });
    const c = new ManualClock(1_000_000);
    expect(k.request(c.nowUs(), 50, 'frame-buffer-timeout')).toBe(true);
    expect(k.requestId).toBe(1);
    c.advanceMs(299);
    expect(k.request(c.nowUs(), 50, 'frame-buffer-timeout')).toBe(false);
    c.advanceMs(1);
    expect(k.request(c.nowUs(), 50, 'decoder-error')).toBe(true);
    expect(k.requestId).toBe(2);
    // RTT 400 ms -> 600 ms spacing
    c.advanceMs(500);
    expect(k.request(c.nowUs(), 400)).toBe(false);
    c.advanceMs(100);
    expect(k.request(c.nowUs(), 400)).toBe(true);
    const st = k.stats();
    expect(st.requests).toBe(3);
    expect(st.suppressed).toBe(2);
    expect(st.byReason).toEqual({ 'frame-buffer-timeout': 1, 'decoder-error': 1, unspecified: 1 });
    expect(st.lastRequestId).toBe(3);
    expect(k.streamId).toBe(3);
  });

  it('treats a bad RTT as unknown and a bad time as suppressed', () => {
    const k = new KeyframeRequester({ minIntervalMs: 300 });
    expect(k.intervalMs(NaN)).toBe(300);
    expect(k.request(NaN, 10)).toBe(false);
    expect(k.request(0, NaN)).toBe(true);
    expect(k.request(299_000, Infinity)).toBe(false);
    expect(k.request(300_000, -5)).toBe(true);
    expect(() => new KeyframeRequester({ minIntervalMs: -1 })).toThrow(RangeError);
  });

  it('bounds the per-reason table', () => {
    const k = new KeyframeRequester({ minIntervalMs: 0, rttFactor: 0 });
    for (let i = 0; i < 100; i++) k.request(i, 0, `r${i}`);
    expect(Object.keys(k.stats().byReason).length).toBeLessThanOrEqual(17);
    expect(k.stats().requests).toBe(100);
  });
});

describe('KeyframeRequester outstanding requests (keyframe economy)', () => {
  it('waits for the measured response time while a request is unanswered, and only the min interval once answered', () => {
    const k = new KeyframeRequester();
    const MS = 1000;
    expect(k.request(0, 50)).toBe(true);
    k.onKeyframe(1200 * MS); // a slow path: the key frame took 1.2 s
    expect(k.stats().responseMs).toBe(1200);
    expect(k.stats().outstanding).toBe(false);
    expect(k.request(1500 * MS, 50)).toBe(true); // answered: 300 ms spacing only
    expect(k.request(1900 * MS, 50)).toBe(false); // outstanding, 400 ms < 1.2 s
    expect(k.request(2600 * MS, 50)).toBe(false);
    expect(k.request(2800 * MS, 50)).toBe(true); // 1.3 s > response time
    k.onKeyframe(2700 * MS); // earlier than the request: ignored
    expect(k.stats().outstanding).toBe(true);
  });
});
