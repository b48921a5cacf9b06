import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { SenderEngine } from '../../../src/engine/sender.js';
import { makeCall } from './call-helper.js';
import { registerAllStrategies } from '../../../src/strategies.js';

// Every shipped strategy by name (the library registers only the defaults).
registerAllStrategies();

/** A sender on one path whose receiver never reports (its reverse link is dead); `buffered` is the datachannel's bufferedAmount. */
function silentSender(buffered: () => number, stalled?: () => boolean): { clock: ManualClock; sender: SenderEngine; sent: () => number } {
  const clock = new ManualClock(1_000_000);
  const sender = new SenderEngine({ clock, scheduler: 'single', singlePath: 0, fec: 'none' });
  let n = 0;
  sender.addPath(0, { send: () => (n++, true), bufferedAmount: buffered, ...(stalled ? { stalled } : {}) }, 'connected');
  sender.setStreamInfo({ codec: 'vp8', width: 640, height: 480, fps: 30 });
  return { clock, sender, sent: () => n };
}

/** Send 30 fps frames of `bytes` for `ms`, ticking every 5 ms. */
function run(s: { clock: ManualClock; sender: SenderEngine }, ms: number, firstId: number, bytes = 2_000): number {
  let id = firstId;
  for (let t = 0; t < ms; t += 5) {
    if (t % 35 === 0) s.sender.sendFrame({ streamId: 0, frameId: id++, keyFrame: id === 2, captureUs: s.clock.nowUs(), data: new Uint8Array(bytes), codec: 'vp8' });
    s.sender.tick();
    // One report (the first packet arrived) at 20 ms, then silence: the path was heard from.
    if (firstId === 1 && t === 20)
      s.sender.onControl({ kind: 'report', report: { pathId: 0, beginSeq: 0, endSeq: 0, arrivals: [{ pathSeq: 0, arrivalUs: s.clock.nowUs() }], reportTimeUs: s.clock.nowUs() } }, 0);
    s.clock.advanceMs(5);
  }
  return id;
}

describe('sender on a path whose receiver reports stopped', () => {
  it('keeps sending media on the only path when its reports stop (a feedback outage is not a media outage)', () => {
    const s = silentSender(() => 0);
    const id = run(s, 2_000, 1);
    // Silent for 2 s: the path is down for the path manager, yet it is the last resort.
    expect(s.sender.isPathUp(0)).toBe(false);
    expect(s.sender.hasUpPath()).toBe(true);
    const before = s.sent();
    run(s, 1_000, id);
    // ~30 frames of 2 kB in 1 s (~2 packets each); the rate is cut by the feedback timeout, not to nothing.
    expect(s.sent() - before).toBeGreaterThan(10);
  });

  it('does not count on a path it never heard from (a slow first report at the start of a call)', () => {
    const s = silentSender(() => 0);
    s.sender.sendFrame({ streamId: 0, frameId: 1, keyFrame: true, captureUs: s.clock.nowUs(), data: new Uint8Array(2_000), codec: 'vp8' });
    for (let t = 0; t < 2_000; t += 5) {
      s.sender.tick();
      s.clock.advanceMs(5);
    }
    expect(s.sender.hasUpPath()).toBe(false);
  });

  it("stops when that path's datachannel holds a backlog (a stalled SCTP association only backs off further)", () => {
    const s = silentSender(() => 50_000);
    const id = run(s, 2_000, 1);
    expect(s.sender.hasUpPath()).toBe(false);
    const before = s.sent();
    run(s, 1_000, id);
    // Keepalives only (one small packet per 100 ms).
    expect(s.sent() - before).toBeLessThan(15);
  });

  it('a sink that says it is not stalled (its second pipe works: PathSink.stalled) stays the last resort whatever its backlog', () => {
    // The same backlog as above, but the sink sends on an RTP carrier meanwhile (src/transport/stall-fallback.ts).
    const s = silentSender(
      () => 50_000,
      () => false,
    );
    const id = run(s, 2_000, 1);
    expect(s.sender.hasUpPath()).toBe(true);
    const before = s.sent();
    run(s, 1_000, id);
    expect(s.sent() - before).toBeGreaterThan(10);
    // And one that says it is stalled is refused even with an empty buffer.
    const t = silentSender(
      () => 0,
      () => true,
    );
    run(t, 2_000, 1);
    expect(t.sender.hasUpPath()).toBe(false);
  });
});

describe('a single-path call whose only path the app disabled', () => {
  it('sends no media on it (the last resort is for a silent path, not a disabled one)', () => {
    const c = makeCall([{ rateMbps: 3, delayMs: 30 }], { extra: { maxBitrateBps: 2_000_000 } });
    c.run(3000);
    c.sender.setPathEnabled(0, false);
    const m = c.sender.stats().paths[0].mediaPacketsSent;
    c.run(1000);
    expect(c.sender.stats().paths[0].mediaPacketsSent - m).toBe(0);
    expect(c.sender.hasUpPath()).toBe(false);
    c.sender.setPathEnabled(0, true);
    c.run(1000);
    expect(c.sender.stats().paths[0].mediaPacketsSent - m).toBeGreaterThan(50);
  });
});

describe('sender key frame requests while the last key frame is still queued', () => {
  it('does not answer a request while the key frame waits in the datachannel, and answers once it has left', () => {
    let buffered = 0;
    const s = silentSender(() => buffered);
    let asked = 0;
    s.sender.on('keyframeNeeded', () => asked++);
    s.sender.sendFrame({ streamId: 0, frameId: 1, keyFrame: true, captureUs: s.clock.nowUs(), data: new Uint8Array(8_000), codec: 'vp8' });
    for (let t = 0; t < 500; t += 5) {
      s.sender.tick();
      s.clock.advanceMs(5);
    }
    // The key frame went into the datachannel (~8 kB) and sits there; well past the time-based hold-off.
    buffered = 9_000;
    s.clock.advanceMs(4_000);
    s.sender.onControl({ kind: 'keyframeRequest', keyframeRequest: { streamId: 0, requestId: 1 } }, 0);
    expect(asked).toBe(0);
    expect(s.sender.stats().keyframeRequestsSuppressed).toBeGreaterThanOrEqual(1);
    buffered = 0;
    s.sender.onControl({ kind: 'keyframeRequest', keyframeRequest: { streamId: 0, requestId: 2 } }, 0);
    expect(asked).toBe(1);
  });
});

describe('single-path call through a blackhole (both directions)', () => {
  it('sends a key frame as soon as the first report shows that what it sent into the silence was lost', () => {
    const c = makeCall([{ rateMbps: 4, delayMs: 30, down: [[3000, 4200]] }], { scheduler: 'single', fec: 'none', extra: { singlePath: 0 } });
    c.run(3000);
    const keysBefore = c.sender.stats().keyframesSent;
    const requestsBefore = c.receiver.stats().keyframeRequestsSent;
    c.run(2000); // blackhole 3.0 - 4.2 s, then 0.8 s of a clean path
    // The sender kept sending through the silence (last resort) and answered the loss itself.
    expect(c.sender.stats().keyframesSent).toBeGreaterThan(keysBefore);
    expect(c.receiver.stats().keyframeRequestsSent).toBe(requestsBefore);
    const at = c.decoded.length;
    c.run(1000);
    expect(c.decoded.length - at).toBeGreaterThan(20);
  });
});
