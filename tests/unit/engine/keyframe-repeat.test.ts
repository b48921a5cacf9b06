import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { ReceiverEngine } from '../../../src/engine/receiver.js';
import { KeyframeRequester } from '../../../src/feedback/keyframe-requester.js';
import { MS, runStalledStream } from './stalled-stream.js';

/**
 * The stalled stream (./stalled-stream.ts): frames 10-20 lost, half of frame
 * 21 at 400 ms, and no key frame ever comes (the sender coalesced the
 * request). Returns the times (ms) of the key frame requests sent by 2 s.
 */
function requestTimesMs(keyframeRepeat: boolean): number[] {
  const clock = new ManualClock(0);
  const rx = new ReceiverEngine({ clock, keyframeRepeat });
  const at: number[] = [];
  runStalledStream(rx, clock, 2000, (us) => at.push(us / MS));
  return at;
}

describe('ReceiverEngineConfig.keyframeRepeat', () => {
  it('repeats an unanswered key frame request while the picture stays stalled, at the requester spacing; off, the NACK give-up asks once', () => {
    const off = requestTimesMs(false);
    const on = requestTimesMs(true);
    expect(off.length).toBe(1);
    expect(on[0]).toBe(off[0]);
    // Every 300 ms (max(1.5 x RTT, 300 ms) without a measured response time) until 2 s.
    expect(on.length).toBeGreaterThanOrEqual(3);
    for (let k = 1; k < on.length; k++) expect(on[k] - on[k - 1]).toBeGreaterThanOrEqual(300);
  });
});

describe('KeyframeRequester.repeatDue', () => {
  it('is true only while a granted request is unanswered and its spacing has passed', () => {
    const kr = new KeyframeRequester();
    expect(kr.repeatDue(10_000 * MS, 50)).toBe(false); // nothing asked
    expect(kr.request(1000 * MS, 50)).toBe(true);
    expect(kr.repeatDue(1200 * MS, 50)).toBe(false); // 300 ms spacing
    expect(kr.repeatDue(1300 * MS, 50)).toBe(true);
    expect(kr.repeatDue(1300 * MS, 400)).toBe(false); // 1.5 x RTT = 600 ms
    kr.onKeyframe(1250 * MS);
    expect(kr.repeatDue(1400 * MS, 50)).toBe(false); // answered
    // Outstanding again: also waits for the measured response time (250 ms here, below the spacing).
    expect(kr.request(2000 * MS, 50)).toBe(true);
    expect(kr.repeatDue(2299 * MS, 50)).toBe(false);
    expect(kr.repeatDue(2300 * MS, 50)).toBe(true);
  });
});
