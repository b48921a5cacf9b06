import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { Endpoint } from '../../../src/engine/endpoint.js';
import { ReceiverEngine } from '../../../src/engine/receiver.js';
import { KeyframeRequester } from '../../../src/feedback/keyframe-requester.js';
import { decodePacket } from '../../../src/wire/decode.js';
import { encodeMedia, encodePacket } from '../../../src/wire/encode.js';

const MS = 1000;
/** One-packet frame `frameId` (flow seq = frameId; frame 0 a key frame), or the first of two fragments when `half`. */
const media = (frameId: number, captureUs: number, half = false) =>
  encodePacket(
    { pathId: 0, pathSeq: frameId, sendTimeUs: captureUs },
    'media',
    encodeMedia({
      streamId: 0,
      flowSeq: frameId,
      frameId,
      fragIndex: 0,
      fragCount: half ? 2 : 1,
      keyFrame: frameId === 0,
      nalClass: 0,
      priority: 6,
      captureUs,
      retransmission: false,
      payload: new Uint8Array(100),
    }),
  );

/**
 * The stream of keyframe-give-up.test.ts: frames 10-20 lost, half of frame
 * 21 at 400 ms, and no key frame ever comes (the sender coalesced the
 * request). Returns the times (ms) of the key frame requests sent by 2 s.
 */
function requestTimesMs(keyframeRepeat: boolean): number[] {
  const clock = new ManualClock(0);
  const rx = new ReceiverEngine({ clock, keyframeRepeat });
  const at: number[] = [];
  rx.addPath(0, {
    send(bytes: Uint8Array): boolean {
      const r = decodePacket(bytes);
      if (r.ok && r.packet.body.kind === 'keyframeRequest') at.push(clock.nowUs() / MS);
      return true;
    },
    bufferedAmount: () => 0,
  });
  const ep = new Endpoint(rx);
  for (let t = 0; t <= 2000 * MS; t += MS) {
    clock.setUs(t);
    if (t % (33 * MS) === 0 && t / (33 * MS) < 10) ep.onDatagram(0, media(t / (33 * MS), t));
    if (t === 400 * MS) ep.onDatagram(0, media(21, 400 * MS, true));
    ep.tick();
  }
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
