import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { KeyframeRequestGate } from '../../../src/engine/keyframe-gate.js';
import { ReceiverEngine } from '../../../src/engine/receiver.js';
import { KeyframeRequester } from '../../../src/feedback/keyframe-requester.js';
import { MS, runStalledStream } from './stalled-stream.js';

/** The stalled stream (./stalled-stream.ts): the time (ms) of the first key frame request, -1 none by 1.5 s. */
function firstKeyframeRequestMs(keyframeOnNackGiveUp: boolean): number {
  const clock = new ManualClock(0);
  const rx = new ReceiverEngine({ clock, keyframeOnNackGiveUp });
  let at = -1;
  const reasons: string[] = [];
  rx.on('keyframeRequest', (_id, reason) => reasons.push(reason));
  runStalledStream(rx, clock, 1500, (us) => {
    if (at < 0) at = us;
  });
  if (at >= 0) expect(reasons[0]).toBe('nack-gave-up');
  return at < 0 ? -1 : at / MS;
}

describe('ReceiverEngineConfig.keyframeOnNackGiveUp', () => {
  it('asks for a key frame when the NACK gives up on a packet while the picture is stalled; off, nothing asks before the frame ages out', () => {
    const on = firstKeyframeRequestMs(true);
    // Gap seen at 400 ms, NACKed after the reorder wait, 3 tries one default RTT (100 ms) apart: given up by ~750 ms.
    expect(on).toBeGreaterThan(400);
    expect(on).toBeLessThan(900);
    expect(firstKeyframeRequestMs(false)).toBe(-1);
  });
});

describe('KeyframeRequester.stalled', () => {
  it('is false before the first frame and while frames flow, true after max(100 ms, 3 release intervals) without one', () => {
    const kr = new KeyframeRequester();
    expect(kr.stalled(5_000 * MS)).toBe(false);
    for (let t = 0; t <= 1000; t += 33) kr.onFrameReleased(t * MS);
    expect(kr.stalled(1050 * MS)).toBe(false);
    expect(kr.stalled(1089 * MS)).toBe(false);
    expect(kr.stalled(1090 * MS)).toBe(true); // 100 ms after the last frame (990 ms)
    // 5 fps: three intervals (600 ms), not 100 ms.
    const slow = new KeyframeRequester();
    for (let t = 0; t <= 4000; t += 200) slow.onFrameReleased(t * MS);
    expect(slow.stalled(4300 * MS)).toBe(false);
    expect(slow.stalled(4610 * MS)).toBe(true);
  });
});

describe('KeyframeRequestGate', () => {
  it('coalesces for max(500 ms, 2 RTT) by default, and for the transmit time at the target plus an RTT with coalesceTransmit', () => {
    const withTx = new KeyframeRequestGate(true);
    const noTx = new KeyframeRequestGate();
    // A 50 kB key frame at 200 kbps: 2 s to transmit.
    for (const g of [withTx, noTx]) g.onKeyFrameSent(7, 50_000, 200_000, 0);
    expect(withTx.admit(400 * MS, 50)).toBe(false);
    expect(noTx.admit(400 * MS, 50)).toBe(false);
    expect(withTx.admit(600 * MS, 50)).toBe(false);
    expect(noTx.admit(600 * MS, 50)).toBe(true);
    expect(noTx.admit(600 * MS, 400)).toBe(false); // 2 x RTT = 800 ms
    expect(withTx.admit(2100 * MS, 50)).toBe(true);
  });
});
