import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { KeyFrameDelivery } from '../../../src/engine/keyframe-gate.js';
import { SenderEngine } from '../../../src/engine/sender.js';
import { registerAllStrategies } from '../../../src/strategies.js';
import { decodePacket } from '../../../src/wire/decode.js';

// Every shipped strategy by name (the library registers only the defaults).
registerAllStrategies();

describe('KeyFrameDelivery', () => {
  it('knows the receiver time the key frame was complete once every fragment was reported', () => {
    const d = new KeyFrameDelivery();
    d.onKeyFrame([10, 11, 12]);
    d.onDelivered(10, 5_000);
    d.onDelivered(12, 7_000);
    expect(d.deliveredAtUs).toBeUndefined();
    expect(d.askedAfter(9_000)).toBe(false);
    d.onDelivered(99, 8_000); // not a fragment of the key frame
    d.onDelivered(11, 6_000);
    expect(d.deliveredAtUs).toBe(7_000);
    expect(d.askedAfter(7_001)).toBe(true);
    expect(d.askedAfter(7_000)).toBe(false);
    expect(d.askedAfter(undefined)).toBe(false);
    expect(d.askedAfter(Number.NaN)).toBe(false);
    // A new key frame: nothing known about it yet.
    d.onKeyFrame([13]);
    expect(d.askedAfter(9_000)).toBe(false);
  });

  it('a fragment reported without an arrival time leaves the key frame unknown', () => {
    const d = new KeyFrameDelivery();
    d.onKeyFrame([1, 2]);
    d.onDelivered(1, Number.NaN);
    d.onDelivered(2, 5_000);
    expect(d.deliveredAtUs).toBeUndefined();
    expect(d.askedAfter(9_000)).toBe(false);
  });
});

/** A single-path sender whose sink records the pathSeqs of the media datagrams it writes. */
function keySender(): { clock: ManualClock; sender: SenderEngine; mediaSeqs: number[]; asked: () => number } {
  const clock = new ManualClock(1_000_000);
  const sender = new SenderEngine({ clock, scheduler: 'single', singlePath: 0, fec: 'none' });
  const mediaSeqs: number[] = [];
  sender.addPath(
    0,
    {
      send: (bytes: Uint8Array) => {
        const r = decodePacket(bytes);
        if (r.ok && r.packet.body.kind === 'media') mediaSeqs.push(r.packet.pathSeq);
        return true;
      },
      bufferedAmount: () => 0,
    },
    'connected',
  );
  sender.setStreamInfo({ codec: 'vp8', width: 640, height: 480, fps: 30 });
  let n = 0;
  sender.on('keyframeNeeded', () => n++);
  sender.sendFrame({ streamId: 0, frameId: 1, keyFrame: true, captureUs: clock.nowUs(), data: new Uint8Array(6_000), codec: 'vp8' });
  for (let t = 0; t < 100; t += 5) {
    sender.tick();
    clock.advanceMs(5);
  }
  return { clock, sender, mediaSeqs, asked: () => n };
}

/** The receiver's report listing `seqs` as arrived at receiver time `atUs`. */
function report(x: ReturnType<typeof keySender>, seqs: number[], atUs: number): void {
  const arrivals = seqs.map((pathSeq) => ({ pathSeq, arrivalUs: atUs }));
  x.sender.onControl({ kind: 'report', report: { pathId: 0, beginSeq: Math.min(...seqs), endSeq: Math.max(...seqs), arrivals, reportTimeUs: atUs + 1_000 } }, 0);
}

describe('sender: a key frame request sent after the last key frame was complete at the receiver', () => {
  const RX_US = 50_000_000; // the receiver's clock: any origin, only compared with itself

  it('is forwarded to the encoder within the coalescing window (the last key frame cannot answer it)', () => {
    const x = keySender();
    expect(x.mediaSeqs.length).toBeGreaterThan(1);
    report(x, x.mediaSeqs, RX_US);
    x.sender.onControl({ kind: 'keyframeRequest', keyframeRequest: { streamId: 0, requestId: 1 } }, 0, RX_US + 20_000);
    expect(x.asked()).toBe(1);
    expect(x.sender.stats().keyframeRequestsAfterKeyFrame).toBe(1);
  });

  it('is coalesced when it left before the key frame was complete, when its send time is unknown, or while a fragment is unreported', () => {
    const x = keySender();
    report(x, x.mediaSeqs, RX_US);
    x.sender.onControl({ kind: 'keyframeRequest', keyframeRequest: { streamId: 0, requestId: 1 } }, 0, RX_US - 20_000);
    x.sender.onControl({ kind: 'keyframeRequest', keyframeRequest: { streamId: 0, requestId: 2 } }, 0);
    expect(x.asked()).toBe(0);
    expect(x.sender.stats().keyframeRequestsSuppressed).toBe(2);

    const y = keySender();
    report(y, y.mediaSeqs.slice(1), RX_US);
    y.sender.onControl({ kind: 'keyframeRequest', keyframeRequest: { streamId: 0, requestId: 1 } }, 0, RX_US + 20_000);
    expect(y.asked()).toBe(0);
    expect(y.sender.stats().keyframeRequestsAfterKeyFrame).toBe(0);
  });
});
