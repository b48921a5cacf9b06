/**
 * The receiver's clock exchange end to end through two Endpoints whose
 * clocks differ by seconds, over links with asymmetric one-way delays.
 */
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/core/clock.js';
import { ManualClock } from '../../../src/core/clock.js';
import { Rng } from '../../../src/core/rng.js';
import { Endpoint } from '../../../src/engine/endpoint.js';
import { ReceiverEngine } from '../../../src/engine/receiver.js';
import { SenderEngine } from '../../../src/engine/sender.js';
import { Link } from '../../../sim/net/link.js';
import { constantRate } from '../../../sim/net/traces.js';

interface Result {
  offsetMs: number;
  errorBoundMs: number;
  rttMs: number;
  pathRttMs: number[];
  latencyMeanMs: number;
  /** Mean capture -> decoded latency on the virtual clock (the truth the estimate is judged by), same frames. */
  trueLatencyMeanMs: number;
  nacksAnswered: number;
  firstRttAtMs: number;
}

/** sender clock = virtual + skewUs (both clocks start well above 0). */
function run(skewUs: number, upMs: number[], downMs: number[], durationMs: number): Result {
  const virt = new ManualClock(0);
  const base = 10_000_000;
  const rxClock: Clock = { nowUs: () => virt.nowUs() + base };
  const txClock: Clock = { nowUs: () => virt.nowUs() + base + skewUs };
  const rng = new Rng(3);
  const sender = new SenderEngine({ clock: txClock, scheduler: 'converge', fec: 'none' });
  const senderEp = new Endpoint(new ReceiverEngine({ clock: txClock }), sender);
  const receiver = new ReceiverEngine({ clock: rxClock });
  const receiverEp = new Endpoint(receiver);
  const link = (ms: number, mbps: number) => new Link<Uint8Array>({ capacity: constantRate(mbps * 1e6), delay: ms, loss: { kind: 'none' }, queue: { ms: 300 } }, rng);
  const ups = upMs.map((ms) => link(ms, 5));
  const downs = downMs.map((ms) => link(ms, 5));
  ups.forEach((_, id) => {
    sender.addPath(id, { send: (b) => (ups[id].send(b, b.length + 28, virt.nowUs()), true), bufferedAmount: () => 0 }, 'connected');
    senderEp.receiver.addPath(id, { send: (b) => (ups[id].send(b, b.length + 28, virt.nowUs()), true), bufferedAmount: () => 0 });
    receiver.addPath(id, { send: (b) => (downs[id].send(b, b.length + 28, virt.nowUs()), true), bufferedAmount: () => 0 });
  });
  sender.setStreamInfo({ codec: 'vp8', width: 640, height: 480, fps: 30 });
  const trueLat: number[] = [];
  receiver.on('frame', (f) => {
    const synced = receiver.stats().clock.samples > 0;
    receiver.onFrameDecoded(f.streamId, f.frameId, f.captureUs);
    if (synced) trueLat.push((rxClock.nowUs() - (f.captureUs - skewUs)) / 1000);
  });
  let frames = 0;
  let firstRttAtMs = -1;
  for (let ms = 1; ms <= durationMs; ms++) {
    virt.advanceUs(1000);
    const now = virt.nowUs();
    for (let id = 0; id < ups.length; id++) {
      for (const d of ups[id].poll(now)) receiverEp.onDatagram(id, d.item);
      for (const d of downs[id].poll(now)) senderEp.onDatagram(id, d.item);
    }
    if (ms % 33 === 0) {
      frames++;
      sender.sendFrame({ streamId: 0, frameId: frames, keyFrame: frames === 1, captureUs: txClock.nowUs(), data: new Uint8Array(frames === 1 ? 8000 : 2000).fill(frames & 0xff), codec: 'vp8' });
    }
    if (ms % 5 === 0) {
      senderEp.tick();
      receiverEp.tick();
    }
    if (firstRttAtMs < 0 && receiver.stats().clock.samples > 0) firstRttAtMs = ms;
  }
  const st = receiver.stats();
  return {
    offsetMs: st.clock.offsetMs,
    errorBoundMs: st.clock.errorBoundMs,
    rttMs: st.rttMs,
    pathRttMs: st.paths.map((p) => p.rttMs),
    latencyMeanMs: st.latencyMs.mean,
    trueLatencyMeanMs: trueLat.reduce((a, b) => a + b, 0) / trueLat.length,
    nacksAnswered: st.retransmissionsReceived,
    firstRttAtMs,
  };
}

describe('receiver clock offset (PathReport -> ClockEcho, RFC 5905 §8)', () => {
  // Path 0: 40 ms down (sender -> receiver), 10 ms up: asymmetry 30 ms -> 15 ms offset error at most.
  // Path 1: 25 ms both ways.
  const up = [40, 25];
  const down = [10, 25];
  const ref = run(0, up, down, 3000);

  for (const skewMs of [3468, -3427]) {
    it(`estimates a sender clock ${skewMs > 0 ? 'ahead' : 'behind'} by ${Math.abs(skewMs)} ms within the asymmetry bound`, () => {
      const r = run(skewMs * 1000, up, down, 3000);
      const err = r.offsetMs - skewMs;
      expect(Math.abs(err)).toBeLessThanOrEqual(15 + 1);
      expect(Math.abs(err)).toBeLessThanOrEqual(r.errorBoundMs + 1e-9);
      // the latency metric is the true one up to the offset error, and the same as with one shared clock
      expect(r.trueLatencyMeanMs).toBeGreaterThan(20);
      expect(Math.abs(r.latencyMeanMs - r.trueLatencyMeanMs)).toBeLessThanOrEqual(15 + 1);
      expect(Math.abs(r.latencyMeanMs - ref.latencyMeanMs)).toBeLessThanOrEqual(1);
    });
  }

  it('knows the RTT after the first report round trip, per path, without any NACK', () => {
    expect(ref.nacksAnswered).toBe(0);
    // reports every 50 ms: the first exchange completes within report interval + RTT + margin
    expect(ref.firstRttAtMs).toBeGreaterThan(0);
    expect(ref.firstRttAtMs).toBeLessThan(250);
    expect(ref.pathRttMs[0]).toBeGreaterThanOrEqual(50);
    expect(ref.pathRttMs[0]).toBeLessThan(80);
    expect(ref.pathRttMs[1]).toBeGreaterThanOrEqual(50);
    expect(ref.pathRttMs[1]).toBeLessThan(80);
    expect(ref.rttMs).toBe(Math.min(...ref.pathRttMs));
    expect(ref.rttMs).not.toBe(100); // not the placeholder
  });
});
