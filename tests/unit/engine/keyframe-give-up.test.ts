import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { Endpoint } from '../../../src/engine/endpoint.js';
import { KeyframeRequestGate } from '../../../src/engine/keyframe-gate.js';
import { ReceiverEngine } from '../../../src/engine/receiver.js';
import { KeyframeRequester } from '../../../src/feedback/keyframe-requester.js';
import { decodePacket } from '../../../src/wire/decode.js';
import { encodeMedia, encodePacket } from '../../../src/wire/encode.js';

const MS = 1000;
/** One-packet frame `frameId` (flow seq = frameId), or one fragment of a two-packet frame when `half`. */
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
 * A 30 fps stream whose frames 10-20 are lost (a path dying with them in
 * it) and whose next packet, at 400 ms, is the first half of frame 21: no
 * later frame completes, so the frame buffer's missing-frame wait never
 * starts. Returns the time (ms) of the first key frame request, -1 none by 1.5 s.
 */
function firstKeyframeRequestMs(keyframeOnNackGiveUp: boolean): number {
  const clock = new ManualClock(0);
  const rx = new ReceiverEngine({ clock, keyframeOnNackGiveUp });
  let at = -1;
  const reasons: string[] = [];
  rx.on('keyframeRequest', (_id, reason) => reasons.push(reason));
  rx.addPath(0, {
    send(bytes: Uint8Array): boolean {
      const r = decodePacket(bytes);
      if (at < 0 && r.ok && r.packet.body.kind === 'keyframeRequest') at = clock.nowUs();
      return true;
    },
    bufferedAmount: () => 0,
  });
  const ep = new Endpoint(rx);
  for (let t = 0; t <= 1500 * MS; t += MS) {
    clock.setUs(t);
    if (t % (33 * MS) === 0 && t / (33 * MS) < 10) ep.onDatagram(0, media(t / (33 * MS), t));
    if (t === 400 * MS) ep.onDatagram(0, media(21, 400 * MS, true));
    ep.tick();
  }
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
