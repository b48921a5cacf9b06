import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { Endpoint } from '../../../src/engine/endpoint.js';
import { ReceiverEngine } from '../../../src/engine/receiver.js';
import { MS, media } from './stalled-stream.js';

/**
 * A 30 fps stream whose frame 6 arrives 700 ms late (its retransmission,
 * after the frame buffer's missing-frame timeout) while frames 7-29 arrive
 * on time. Returns the frameIds decoded by 1.2 s and the key frame requests' reasons.
 */
function run(keepFramesOnTimeout?: boolean): { decoded: number[]; reasons: string[] } {
  const clock = new ManualClock(0);
  const rx = new ReceiverEngine({ clock, playout: { maxDelayMs: 0 }, ...(keepFramesOnTimeout !== undefined ? { keepFramesOnTimeout } : {}) });
  const decoded: number[] = [];
  const reasons: string[] = [];
  rx.on('frame', (f) => decoded.push(f.frameId));
  rx.on('keyframeRequest', (_id, reason) => reasons.push(reason));
  rx.addPath(0, { send: () => true, bufferedAmount: () => 0 });
  const ep = new Endpoint(rx);
  for (let t = 0; t <= 1200 * MS; t += MS) {
    clock.setUs(t);
    if (t % (33 * MS) === 0) {
      const id = t / (33 * MS);
      if (id < 30 && id !== 6) ep.onDatagram(0, media(id, t));
    }
    if (t === 900 * MS) ep.onDatagram(0, media(6, 6 * 33 * MS));
    ep.tick();
  }
  return { decoded, reasons };
}

describe('ReceiverEngineConfig.keepFramesOnTimeout', () => {
  it('on (default): the timeout asks for a key frame and a late retransmission continues decoding; off: the frames after the gap are lost', () => {
    const on = run(true);
    const off = run(false);
    expect(on.reasons).toContain('frame-buffer-timeout');
    expect(off.reasons).toContain('frame-buffer-timeout');
    expect(on.decoded).toEqual(Array.from({ length: 30 }, (_, i) => i));
    // Off: frames 0-5 only; 6 and what follows wait for a key frame that never comes.
    expect(off.decoded).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('is on by default: the late retransmission continues decoding', () => {
    expect(run().decoded).toEqual(Array.from({ length: 30 }, (_, i) => i));
  });
});
