/**
 * Audio path choice (src/sched/audio-paths.ts) and audio's priority in the
 * sender (src/engine/audio-sender.ts): fastest path, a copy on a second path
 * when the fastest is lossy, ahead of queued video.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { SenderEngine } from '../../../src/engine/sender.js';
import { AudioPathSelector, expectedDeliveryMs, type AudioPathCandidate } from '../../../src/sched/audio-paths.js';
import { decodePacket } from '../../../src/wire/decode.js';

function cand(id: number, rttMs: number, o: Partial<AudioPathCandidate> = {}): AudioPathCandidate {
  return { id, up: true, rateBps: 2e6, goodputBps: 2e6, srttMs: rttMs, minRttMs: rttMs, lossRate: 0, inflightBytes: 0, queuedBytes: 0, aheadBytes: 0, ...o };
}

describe('AudioPathSelector', () => {
  it('picks the path with the lowest expected delivery time, counting the bytes queued ahead', () => {
    const s = new AudioPathSelector({ duplicateWithinMs: 0 });
    expect(s.choose([cand(0, 100), cand(1, 40)], 100)).toEqual([1]);
    // path 1 has 50 kB in its datachannel at 2 Mbps = 200 ms ahead: path 0 is faster now
    const t = new AudioPathSelector({ duplicateWithinMs: 0 });
    expect(t.choose([cand(0, 100), cand(1, 40, { aheadBytes: 50_000 })], 100)).toEqual([0]);
    expect(expectedDeliveryMs(cand(0, 100), 100)).toBeCloseTo(50 + 0.4, 5);
  });

  it('duplicates on the second-fastest path when the chosen path loses >= 2 %', () => {
    const s = new AudioPathSelector({ duplicateWithinMs: 0 });
    expect(s.choose([cand(0, 40, { lossRate: 0.019 }), cand(1, 80)], 100)).toEqual([0]);
    expect(s.choose([cand(0, 40, { lossRate: 0.05 }), cand(1, 80), cand(2, 60)], 100)).toEqual([0, 2]);
    expect(new AudioPathSelector({ duplicateLossRate: 0.1, duplicateWithinMs: 0 }).choose([cand(0, 40, { lossRate: 0.05 }), cand(1, 80)], 100)).toEqual([0]);
    // a lone lossy path: nothing to duplicate on
    expect(s.choose([cand(0, 40, { lossRate: 0.5 })], 100)).toEqual([0]);
  });

  it('duplicates on a second path whose expected delivery is within 60 ms of the chosen one', () => {
    const s = new AudioPathSelector();
    // RTT/2: 20 vs 70 ms -> within 60 ms: copy
    expect(s.choose([cand(0, 40), cand(1, 140)], 100)).toEqual([0, 1]);
    // 20 vs 100 ms: the copy would come too late to matter
    expect(s.choose([cand(0, 40), cand(1, 200)], 100)).toEqual([0]);
  });

  it('sticks to its path unless another is faster by more than the margin, and skips down paths', () => {
    const s = new AudioPathSelector({ switchMarginMs: 10, duplicateWithinMs: 0 });
    expect(s.choose([cand(0, 50), cand(1, 60)], 100)).toEqual([0]);
    expect(s.choose([cand(0, 50), cand(1, 40)], 100)).toEqual([0]); // 5 ms better: stay
    expect(s.choose([cand(0, 50), cand(1, 20)], 100)).toEqual([1]); // 15 ms better: switch
    expect(s.choose([cand(0, 50), cand(1, 20, { up: false })], 100)).toEqual([0]);
    expect(s.choose([cand(0, 50, { up: false })], 100)).toEqual([]);
    expect(() => new AudioPathSelector({ duplicateLossRate: 2 })).toThrow(RangeError);
  });
});

describe('SenderEngine.sendAudio', () => {
  it('writes audio at once, ahead of video the pacer still holds, on one path', () => {
    const clock = new ManualClock(1_000_000);
    // a slow start rate, so a big key frame stays queued in the pacer
    const sender = new SenderEngine({ clock, startBitrateBps: 100_000, probing: false, audio: { duplicateWithinMs: 0 } });
    const sent: Array<{ path: number; kind: string }> = [];
    for (const id of [0, 1]) {
      sender.addPath(id, {
        send: (b) => {
          const d = decodePacket(b);
          if (d.ok) sent.push({ path: id, kind: d.packet.body.kind });
          return true;
        },
        bufferedAmount: () => 0,
      });
    }
    sender.sendFrame({ streamId: 0, frameId: 1, keyFrame: true, captureUs: clock.nowUs(), data: new Uint8Array(60_000), codec: 'vp8' });
    const mediaBefore = sent.filter((s) => s.kind === 'media').length;
    const n = sender.sendAudio({ captureUs: clock.nowUs(), durationUs: 20_000, data: new Uint8Array(80) });
    expect(n).toBe(1);
    const audio = sent.filter((s) => s.kind === 'audio');
    expect(audio).toHaveLength(1);
    // the key frame is far from sent: audio did not wait for it
    expect(mediaBefore).toBeLessThan(50);
    expect(sent.filter((s) => s.kind === 'media').length).toBe(mediaBefore);
    const st = sender.stats().audio;
    expect(st.framesSent).toBe(1);
    expect(st.packetsSent).toBe(1);
    expect(st.duplicatesSent).toBe(0);
    // a frame the wire refuses throws before a sequence number is spent
    expect(() => sender.sendAudio({ captureUs: clock.nowUs(), durationUs: 20_000, data: new Uint8Array(2000) })).toThrow();
    expect(sender.stats().audio.framesSent).toBe(1);
  });
});
