/**
 * Audio through the engines (sender -> emulated links -> receiver): best
 * path, duplication on a lossy best path, jitter buffer playout, stats, and
 * malformed audio as a counted drop.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { ReceiverEngine } from '../../../src/engine/receiver.js';
import { decodePacket } from '../../../src/wire/decode.js';
import { encodeAudio, encodeControl, encodePacket } from '../../../src/wire/encode.js';
import { makeCall } from './call-helper.js';

describe('audio through the engines', () => {
  it('plays a two-path call with audio on the faster path (hardly a copy on a path 130 ms slower)', () => {
    const call = makeCall(
      [
        { rateMbps: 3, delayMs: 20 },
        { rateMbps: 3, delayMs: 150 },
      ],
      { audio: true },
    );
    call.run(5000);
    const a = call.receiver.stats().audio;
    expect(a.packetsReceived).toBeGreaterThan(240);
    // Video shares path 0's 3 Mbps bottleneck (300 ms drop-tail queue): its bursts delay audio there; wide bound.
    expect(a.concealedPct).toBeLessThan(15);
    // Copies go out only while video bursts queue path 0 enough to bring path 1 within 60 ms: ~20 % here
    // (48-51 of 249 measured); the bound keeps a wide margin over that and far below a copy of every frame.
    expect(a.duplicates).toBeLessThan(0.35 * a.packetsReceived);
    // one-way 20 ms + queueing + the jitter buffer's target, within the 200 ms bound
    expect(a.mouthToEarP95Ms).toBeGreaterThan(20);
    expect(a.mouthToEarP95Ms).toBeLessThan(300);
    const per = call.sender.stats().audio.perPath;
    expect(per.find((p) => p.id === 0)?.packetsSent ?? 0).toBeGreaterThan(0.7 * call.sender.stats().audio.packetsSent);
    expect(call.audioPlayouts.filter((p) => p.kind === 'frame').length).toBeGreaterThan(200);
    // the audio packets count in the path's arrival reports (no phantom loss on path 0)
    expect(call.receiver.stats().paths.find((p) => p.id === 0)?.lossPct ?? 100).toBeLessThan(1);
  });

  it('duplicates audio on the second path when the best path loses 10 %, keeping concealment low', () => {
    const call = makeCall(
      [
        { rateMbps: 3, delayMs: 20, loss: 0.1 },
        { rateMbps: 3, delayMs: 100 },
      ],
      { audio: true, seed: 3 },
    );
    call.run(8000);
    const a = call.receiver.stats().audio;
    const s = call.sender.stats().audio;
    expect(s.duplicatesSent).toBeGreaterThan(100);
    expect(a.duplicates).toBeGreaterThan(50);
    // without the copy ~10 % would be concealed
    expect(a.concealedPct).toBeLessThan(4);
  });

  it('sends a copy on a second path about as fast as the first, even without loss', () => {
    const call = makeCall(
      [
        { rateMbps: 3, delayMs: 20 },
        { rateMbps: 3, delayMs: 30 },
      ],
      { audio: true },
    );
    call.run(4000);
    expect(call.sender.stats().audio.duplicatesSent).toBeGreaterThan(150);
    expect(call.receiver.stats().audio.duplicates).toBeGreaterThan(150);
  });

  it('counts malformed audio as a decoder drop and audio of a second stream as a receiver drop', () => {
    // payload over 1275 bytes: encodeAudio refuses, so build the bytes by hand from a valid one
    const good = encodeAudio({ streamId: 0, seq: 1, captureUs: 5, durationUs: 20_000, payload: new Uint8Array(10) });
    const pkt = encodePacket({ pathId: 0, pathSeq: 1, sendTimeUs: 1 }, 'audio', good);
    expect(decodePacket(pkt).ok).toBe(true);
    const bad = encodePacket({ pathId: 0, pathSeq: 1, sendTimeUs: 1 }, 'audio', new Uint8Array([0x20, 0])); // duration_us = 0
    const r = decodePacket(bad);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe('bad-field');
    const clock = new ManualClock(1000);
    const rx = new ReceiverEngine({ clock });
    for (const [sid, seq] of [
      [0, 1],
      [7, 1],
    ]) {
      const b = encodeControl({ pathId: 0, pathSeq: seq, sendTimeUs: 1 }, { kind: 'audio', audio: { streamId: sid, seq, captureUs: 1, durationUs: 20_000, payload: new Uint8Array(3) } });
      const d = decodePacket(b);
      if (d.ok) rx.onPacket(0, d.packet, d.bodyBytes, b.length);
    }
    expect(rx.stats().drops['audio-other-stream']).toBe(1);
    expect(rx.stats().audio.packetsReceived).toBe(1);
  });

  it('asks the audio encoder for 12 kbps / 60 ms frames on a 0.15 Mbps path, 32 kbps / 20 ms on a 3 Mbps one (SenderEngine.audioEncoding)', () => {
    // The app asks at every audio frame (OpusEncoderOptions.encoding); here every 100 ms.
    const ask = (call: ReturnType<typeof makeCall>) => {
      let e = call.sender.audioEncoding();
      for (let k = 0; k < 40; k++) {
        call.run(100);
        e = call.sender.audioEncoding();
      }
      return e;
    };
    expect(ask(makeCall([{ rateMbps: 0.15, delayMs: 40 }], { audio: true }))).toEqual({ bitrateBps: 12_000, frameDurationUs: 60_000 });
    expect(ask(makeCall([{ rateMbps: 3, delayMs: 40 }], { audio: true }))).toEqual({ bitrateBps: 32_000, frameDurationUs: 20_000 });
    expect(ask(makeCall([{ rateMbps: 0.15, delayMs: 40 }], { audio: true, extra: { audioRate: false } }))).toEqual({ bitrateBps: 32_000, frameDurationUs: 20_000 });
  });
});
