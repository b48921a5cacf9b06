import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { SenderEngine, type SenderEngineConfig } from '../../../src/engine/sender.js';
import { registerAllStrategies } from '../../../src/strategies.js';

// Every shipped strategy by name (the library registers only the defaults).
registerAllStrategies();

/** A sender on two connected paths whose datachannels report `buffered[i]` bytes (virtual clock). */
function sender(extra: Partial<SenderEngineConfig>, buffered: number[]): { clock: ManualClock; s: SenderEngine } {
  const clock = new ManualClock(1_000_000);
  const s = new SenderEngine({ clock, fec: 'none', ...extra });
  for (const id of [0, 1]) s.addPath(id, { send: () => true, bufferedAmount: () => buffered[id] }, 'connected');
  s.setStreamInfo({ codec: 'vp8', width: 640, height: 480, fps: 30 });
  return { clock, s };
}

/** Send a key frame of `bytes` and tick until the pacers have handed it to the datachannels. */
function sendKeyFrame(x: { clock: ManualClock; s: SenderEngine }, frameId: number, bytes: number): void {
  x.s.sendFrame({ streamId: 0, frameId, keyFrame: true, captureUs: x.clock.nowUs(), data: new Uint8Array(bytes), codec: 'vp8' });
  for (let t = 0; t < 400; t += 5) {
    x.s.tick();
    x.clock.advanceMs(5);
  }
}

describe('key frame held back while the last one waits in the datachannel (holdKeyFrameWhileBuffered)', () => {
  it('single path: drops a new key frame while the last one is still buffered, lets it through once it has left', () => {
    const buffered = [0, 0];
    const x = sender({ scheduler: 'single', singlePath: 0, holdKeyFrameWhileBuffered: true }, buffered);
    sendKeyFrame(x, 1, 8_000);
    expect(x.s.stats().keyframesSent).toBe(1);
    // SCTP stalls: everything written is still in the send buffer. Path 1 carries no media (single:0) and does not count.
    buffered[0] = 9_000;
    expect(x.s.shouldDropFrame(true)).toBe(true);
    expect(x.s.shouldDropFrame(true)).toBe(true);
    expect(x.s.stats().keyFramesHeldBack).toBe(2);
    // A delta frame is judged by the frame dropper as before, not by this rule.
    expect(x.s.stats().framesDroppedBeforeEncode).toBeGreaterThanOrEqual(2);
    // The association drains: the key frame's tail has left the buffer.
    buffered[0] = 0;
    expect(x.s.shouldDropFrame(true)).toBe(false);
    expect(x.s.stats().keyFramesHeldBack).toBe(2);
  });

  it('is on by default', () => {
    const buffered = [0, 0];
    const x = sender({ scheduler: 'single', singlePath: 0 }, buffered);
    sendKeyFrame(x, 1, 8_000);
    buffered[0] = 9_000;
    expect(x.s.shouldDropFrame(true)).toBe(true);
  });

  it('turned off, the key frame is never dropped', () => {
    const buffered = [9_000, 0];
    const x = sender({ scheduler: 'single', singlePath: 0, holdKeyFrameWhileBuffered: false }, buffered);
    buffered[0] = 0;
    sendKeyFrame(x, 1, 8_000);
    buffered[0] = 9_000;
    expect(x.s.shouldDropFrame(true)).toBe(false);
    expect(x.s.stats().keyFramesHeldBack).toBe(0);
  });

  it('multipath: held only while every connected path that took media still buffers the key frame', () => {
    const buffered = [0, 0];
    const x = sender({ scheduler: 'minrtt', holdKeyFrameWhileBuffered: true }, buffered);
    sendKeyFrame(x, 1, 8_000);
    const carried = x.s
      .stats()
      .paths.filter((p) => p.mediaPacketsSent > 0)
      .map((p) => p.id);
    expect(carried.length).toBeGreaterThan(0);
    // Stall every path that carried the key frame.
    for (const id of carried) buffered[id] = 20_000;
    // A connected path that took none of it is free to carry a fresh key frame.
    expect(x.s.shouldDropFrame(true)).toBe(carried.length === 2);
    // Once every path holds it, the new key frame waits; once one drains, it goes.
    buffered[0] = 20_000;
    buffered[1] = 20_000;
    if (carried.length === 2) {
      expect(x.s.shouldDropFrame(true)).toBe(true);
      buffered[carried[0]] = 0;
    }
    expect(x.s.shouldDropFrame(true)).toBe(false);
  });

  it('before any key frame was sent, nothing is held', () => {
    const x = sender({ scheduler: 'single', singlePath: 0, holdKeyFrameWhileBuffered: true }, [50_000, 0]);
    expect(x.s.shouldDropFrame(true)).toBe(false);
  });
});
