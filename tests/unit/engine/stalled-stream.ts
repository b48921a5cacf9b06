/**
 * The stalled stream of the key frame request tests (keyframe-give-up,
 * keyframe-repeat): a 30 fps stream whose frames 10-20 are lost (a path
 * dying with them in it) and whose next packet, at 400 ms, is the first half
 * of frame 21, so no later frame completes and the frame buffer's
 * missing-frame wait never starts; no key frame ever comes.
 */
import type { ManualClock } from '../../../src/core/clock.js';
import { Endpoint } from '../../../src/engine/endpoint.js';
import type { ReceiverEngine } from '../../../src/engine/receiver.js';
import { decodePacket } from '../../../src/wire/decode.js';
import { encodeMedia, encodePacket } from '../../../src/wire/encode.js';

export const MS = 1000;

/** One-packet frame `frameId` (flow seq = frameId; frame 0 a key frame), or the first of two fragments when `half`. */
export const media = (frameId: number, captureUs: number, half = false) =>
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
 * Feed `rx` (on path 0) the stalled stream, 1 ms ticks from 0 to `untilMs`;
 * `onKeyframeRequest` is called with the time (µs) of each key frame request it sends.
 */
export function runStalledStream(rx: ReceiverEngine, clock: ManualClock, untilMs: number, onKeyframeRequest: (atUs: number) => void): void {
  rx.addPath(0, {
    send(bytes: Uint8Array): boolean {
      const r = decodePacket(bytes);
      if (r.ok && r.packet.body.kind === 'keyframeRequest') onKeyframeRequest(clock.nowUs());
      return true;
    },
    bufferedAmount: () => 0,
  });
  const ep = new Endpoint(rx);
  for (let t = 0; t <= untilMs * MS; t += MS) {
    clock.setUs(t);
    if (t % (33 * MS) === 0 && t / (33 * MS) < 10) ep.onDatagram(0, media(t / (33 * MS), t));
    if (t === 400 * MS) ep.onDatagram(0, media(21, 400 * MS, true));
    ep.tick();
  }
}
