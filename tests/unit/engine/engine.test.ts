/**
 * The sender and receiver engines wired together over emulated links on a
 * fake clock: the whole core (packetizer, scheduler, GCC, pacer, FEC, wire,
 * depacketizer, frame buffer, NACK, QoE feedback) end to end, without a browser.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { Rng } from '../../../src/core/rng.js';
import { Endpoint } from '../../../src/engine/endpoint.js';
import { SenderEngine } from '../../../src/engine/sender.js';
import type { SenderEngineConfig } from '../../../src/engine/sender.js';
import { ConvergeScheduler } from '../../../src/sched/converge.js';
import { makeCall } from './call-helper.js';
import type { PlayoutOptions } from '../../../src/feedback/playout.js';
import { registerAllStrategies } from '../../../src/strategies.js';

// Every shipped strategy by name (the library registers only the defaults).
registerAllStrategies();

describe('sender + receiver engines over emulated paths', () => {
  it("scales the encoder target by the scheduler's encoderRateFraction (Eq. 2 moves must not overload a path)", () => {
    let frac = 1;
    class Scaled extends ConvergeScheduler {
      override encoderRateFraction(): number {
        return frac;
      }
    }
    const c = makeCall(
      [
        { rateMbps: 2, delayMs: 20 },
        { rateMbps: 2, delayMs: 25 },
      ],
      { extra: { scheduler: new Scaled() } },
    );
    c.run(2000);
    const full = c.sender.targetBitrateBps();
    expect(full).toBeGreaterThan(1_000_000);
    frac = 0.6;
    expect(c.sender.targetBitrateBps()).toBeCloseTo(0.6 * full, -2);
  });

  it('delivers every frame in order over two clean paths with different delays, using both', () => {
    const c = makeCall([
      { rateMbps: 8, delayMs: 20 },
      { rateMbps: 8, delayMs: 25 },
    ]);
    c.run(8000);
    expect(c.framesSent).toBeGreaterThan(230);
    expect(c.decoded.length).toBeGreaterThanOrEqual(c.framesSent - 3); // the last frames may be in flight
    for (let i = 1; i < c.decoded.length; i++) expect(c.decoded[i]).toBe(c.decoded[i - 1] + 1);
    const s = c.sender.stats();
    expect(s.paths.every((p) => p.up)).toBe(true);
    for (const p of s.paths) expect(p.mediaPacketsSent).toBeGreaterThan(0);
    // RTT from the per-path reports: 2 x one-way delay plus a little pacing/queueing.
    expect(s.paths[0].rttMs).toBeGreaterThanOrEqual(38);
    expect(s.paths[0].rttMs).toBeLessThan(90);
    expect(s.paths[1].rttMs).toBeGreaterThan(s.paths[0].rttMs);
    expect(c.receiver.stats().malformedPackets).toBe(0);
  });

  it('recovers 5% random loss on one path with FEC and NACK', () => {
    const c = makeCall(
      [
        { rateMbps: 8, delayMs: 30, loss: 0.05 },
        { rateMbps: 8, delayMs: 30 },
      ],
      { seed: 3, extra: { qoeFeedback: false } },
    );
    c.run(15_000);
    const r = c.receiver.stats();
    const s = c.sender.stats();
    expect(c.decoded.length / c.framesSent).toBeGreaterThanOrEqual(0.95);
    expect(r.recoveredByFec + r.retransmissionsReceived).toBeGreaterThan(0);
    expect(s.fecPacketsSent).toBeGreaterThan(0);
    expect(s.fecOverheadPct).toBeLessThanOrEqual(10);
    expect(s.paths[0].lossPct).toBeGreaterThan(2);
  });

  it('detects a blackholed path within 1 s, keeps video flowing on the other, and uses it again when it returns (path hysteresis: after its hold)', () => {
    // The app cap (4 Mbps) fits on one path: this checks the failover, not an overload.
    const c = makeCall(
      [
        { rateMbps: 8, delayMs: 20 },
        { rateMbps: 8, delayMs: 30, down: [[3000, 6000]] },
      ],
      {
        extra: { qoeFeedback: false, maxBitrateBps: 4_000_000, pathHysteresis: true },
      },
    );
    const events: Array<{ type: string; pathId: number; atUs: number }> = [];
    c.sender.on('pathEvent', (e) => events.push(e));
    c.run(3000);
    const before = c.decoded.length;
    c.run(1000); // until 4 s
    expect(c.sender.isPathUp(1)).toBe(false);
    const down = events.find((e) => e.type === 'path-down' && e.pathId === 1);
    expect(down).toBeDefined();
    expect(down!.atUs - 1_000_000 - 3_000_000).toBeLessThanOrEqual(1_000_000);
    c.run(2000); // until 6 s
    expect(c.decoded.length - before).toBeGreaterThan(80); // ~90 frames in 3 s kept coming
    // Packets lost in the blackhole came back by NACK/FEC on path 0: no frame was given up.
    expect(c.receiver.stats().framesDropped).toBeLessThanOrEqual(3);
    const media1 = c.sender.stats().paths[1].mediaPacketsSent;
    c.run(2000); // path back at 6 s: up, but demoted (path hysteresis) until it stayed clean 3 s
    expect(c.sender.isPathUp(1)).toBe(true);
    expect(c.sender.stats().paths[1].demoted).toBe(true);
    c.run(3000);
    expect(c.sender.stats().paths[1].demoted).toBe(false);
    expect(c.sender.stats().paths[1].mediaPacketsSent).toBeGreaterThan(media1);
  });

  it('asks for a key frame when a reference is lost for good, and recovers with it', () => {
    // 25% loss and no FEC: some frames cannot be completed in time.
    const c = makeCall([{ rateMbps: 8, delayMs: 20, loss: 0.25 }], { fec: 'none', seed: 5 });
    c.run(8000);
    expect(c.receiver.stats().keyframeRequestsSent).toBeGreaterThan(0);
    expect(c.keyframeRequests).toBeGreaterThan(0);
    // Video goes on after the key frames: most frames are still decoded.
    expect(c.decoded.length).toBeGreaterThan(c.framesSent / 2);
  });

  it('moves media off a path whose delay jumps by 150 ms before any QoE feedback (best-path floor)', () => {
    const c = makeCall(
      [
        { rateMbps: 8, delayMs: 20 },
        { rateMbps: 8, delayMs: 25, delaySteps: [[4000, 175]] },
      ],
      { frameBytes: 9000 },
    );
    c.run(4000);
    const share1Before = c.sender.stats().paths[1].sharePct;
    const media1Before = c.sender.stats().paths[1].mediaPacketsSent;
    const media0Before = c.sender.stats().paths[0].mediaPacketsSent;
    c.run(4000);
    const s = c.sender.stats();
    const media1 = s.paths[1].mediaPacketsSent - media1Before;
    const media0 = s.paths[0].mediaPacketsSent - media0Before;
    expect(share1Before).toBeGreaterThan(20);
    expect(media1 / (media0 + media1)).toBeLessThan(0.1);
    expect(s.paths[1].up).toBe(true);
  });

  it('sends negative QoE feedback for a path whose delay jumps by 150 ms, and Converge moves packets off it', () => {
    // The paper's Eq. 1 split (no best-path floor), so that the late path keeps media and feedback fires;
    // without the fault handling (hysteresis, fast failover), which would demote the path at once.
    const c = makeCall(
      [
        { rateMbps: 8, delayMs: 20 },
        { rateMbps: 8, delayMs: 25, delaySteps: [[4000, 175]] },
      ],
      {
        frameBytes: 9000,
        extra: { scheduler: new ConvergeScheduler({ deadlineSlackMs: -1 }), pathHysteresis: false, fastFailover: false },
      },
    );
    c.run(4000);
    const share1Before = c.sender.stats().paths[1].sharePct;
    const sentBefore = c.receiver.stats().qoeFeedbackSent;
    const media1Before = c.sender.stats().paths[1].mediaPacketsSent;
    const media0Before = c.sender.stats().paths[0].mediaPacketsSent;
    c.run(4000);
    const r = c.receiver.stats();
    expect(r.qoeFeedbackSent).toBeGreaterThan(sentBefore);
    expect(r.recentFeedback.some((f) => f.pathId === 1 && f.alpha < 0)).toBe(true);
    const s = c.sender.stats();
    const media1 = s.paths[1].mediaPacketsSent - media1Before;
    const media0 = s.paths[0].mediaPacketsSent - media0Before;
    expect(share1Before).toBeGreaterThan(20);
    // Feedback only fires while IFD is above 1/fps (Converge §4.2): during the transition.
    expect(media1 / (media0 + media1)).toBeLessThan(share1Before / 100 - 0.1);
  });

  it('counts malformed datagrams and keeps going', () => {
    const c = makeCall([{ rateMbps: 8, delayMs: 10 }]);
    const ep = new Endpoint(c.receiver);
    const rng = new Rng(9);
    for (let i = 0; i < 2000; i++) {
      const b = new Uint8Array(1 + Math.floor(rng.next() * 300));
      for (let j = 0; j < b.length; j++) b[j] = Math.floor(rng.next() * 256);
      expect(() => ep.onDatagram(0, b)).not.toThrow();
    }
    expect(Object.values(ep.malformed).reduce((a, b) => a + (b ?? 0), 0)).toBeGreaterThan(1000);
    c.run(2000);
    expect(c.decoded.length).toBeGreaterThan(50);
  });
});

describe('sender frame dropping and key frame priority (issue 10 item 2)', () => {
  function queuedSender(extra: Partial<SenderEngineConfig> = {}): SenderEngine {
    const clock = new ManualClock(1_000_000);
    const sender = new SenderEngine({ clock, scheduler: 'single', singlePath: 0, fec: 'none', ...extra });
    // A path that never drains (no poll of its link): everything stays in the pacer.
    sender.addPath(0, { send: () => true, bufferedAmount: () => 0 }, 'connected');
    sender.setStreamInfo({ codec: 'vp8', width: 640, height: 480, fps: 30 });
    return sender;
  }

  it('drops delta frames while the queue holds more than dropQueueFrames frame intervals, never a key frame, at most maxConsecutiveDrops in a row', () => {
    const s = queuedSender();
    expect(s.shouldDropFrame(false)).toBe(false); // empty queue
    // 1 Mbps start rate: 3 frame intervals = 100 ms = 12.5 kB. Queue ~60 kB.
    s.sendFrame({ streamId: 0, frameId: 1, keyFrame: true, captureUs: 1_000_000, data: new Uint8Array(60_000), codec: 'vp8' });
    expect(s.shouldDropFrame(true)).toBe(false);
    expect([s.shouldDropFrame(false), s.shouldDropFrame(false), s.shouldDropFrame(false), s.shouldDropFrame(false)]).toEqual([true, true, true, false]);
    expect(s.stats().framesDroppedBeforeEncode).toBe(3);
    expect(queuedSender({ dropQueueFrames: 0 }).shouldDropFrame(false)).toBe(false);
  });

  it('with upperLayerDropFactor < 1 an upper-layer frame is dropped at a smaller queue than a base-layer one', () => {
    const s = queuedSender({ upperLayerDropFactor: 0.25 });
    // 1 Mbps: 3 frame intervals = 12.5 kB, 0.25 of it ~3.1 kB. Queue ~6 kB: only the upper layer goes.
    s.sendFrame({ streamId: 0, frameId: 1, keyFrame: true, captureUs: 1_000_000, data: new Uint8Array(6_000), codec: 'vp8' });
    expect(s.shouldDropFrame(false, 0)).toBe(false);
    expect(s.shouldDropFrame(false, 1)).toBe(true);
    expect(s.shouldDropFrame(false)).toBe(false); // no layering: the full budget
    expect(queuedSender().shouldDropFrame(false, 1)).toBe(false); // default factor 1, empty queue
    expect(() => queuedSender({ upperLayerDropFactor: 2 })).toThrow(RangeError);
  });

  it('drops queued packets of older frames when a key frame is queued', () => {
    const s = queuedSender();
    s.sendFrame({ streamId: 0, frameId: 1, keyFrame: false, captureUs: 1_000_000, data: new Uint8Array(30_000), codec: 'vp8' });
    const before = s.stats().paths[0].queuedBytes;
    expect(before).toBeGreaterThan(25_000);
    s.sendFrame({ streamId: 0, frameId: 2, keyFrame: true, captureUs: 1_033_000, data: new Uint8Array(5_000), codec: 'vp8' });
    const st = s.stats();
    expect(st.stalePacketsPurged).toBeGreaterThan(20);
    expect(st.paths[0].queuedBytes).toBeLessThan(before / 2);
  });
});

describe('receiver playout timing', () => {
  it('playout timing turns delay spikes shorter than the playout delay into latency instead of freezes', () => {
    // One path whose one-way delay jumps by 200 ms for 300 ms every 2 s (a capacity dip's queue).
    const delaySteps: Array<[number, number]> = [];
    for (let t = 2000; t < 20_000; t += 2000) delaySteps.push([t, 220], [t + 300, 20]);
    const run = (playout: PlayoutOptions) => {
      const c = makeCall([{ rateMbps: 6, delayMs: 20, delaySteps }], { scheduler: 'converge', playout, frameBytes: 1000 });
      c.run(20_000);
      return c.receiver.stats();
    };
    const atOnce = run({ maxDelayMs: 0 });
    const timed = run({});
    expect(atOnce.playout.currentDelayMs).toBe(0);
    expect(atOnce.freezeCount).toBeGreaterThan(3);
    // The delay grows toward the jitter estimate and absorbs most spikes.
    expect(timed.playout.currentDelayMs).toBeGreaterThan(20);
    expect(timed.freezeTotalMs).toBeLessThan(0.7 * atOnce.freezeTotalMs);
    expect(timed.latencyMs.p50).toBeGreaterThan(atOnce.latencyMs.p50);
    expect(timed.framesDecoded).toBeGreaterThan(0.9 * atOnce.framesDecoded);
  });
});
