/**
 * A datagram stamped off the main thread (Endpoint.onDatagram's ageUs, from
 * src/transport/datachannel-worker.ts) is reported to the sender with its
 * earlier arrival time; without an age the receiver's clock at the call is used.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import type { PathReport } from '../../../src/core/types.js';
import { Endpoint } from '../../../src/engine/endpoint.js';
import { ReceiverEngine } from '../../../src/engine/receiver.js';
import { SenderEngine } from '../../../src/engine/sender.js';
import { decodePacket } from '../../../src/wire/decode.js';

function arrivalsReported(ageUs: number | undefined): Map<number, number> {
  const clock = new ManualClock(1_000_000);
  const up: Uint8Array[] = [];
  const sender = new SenderEngine({ clock, scheduler: 'converge', fec: 'none' });
  sender.addPath(0, { send: (b) => (up.push(b.slice()), true), bufferedAmount: () => 0 }, 'connected');
  sender.setStreamInfo({ codec: 'vp8', width: 320, height: 240, fps: 30 });
  const receiver = new ReceiverEngine({ clock });
  const reports: PathReport[] = [];
  receiver.addPath(0, {
    send: (b) => {
      const r = decodePacket(b);
      if (r.ok && r.packet.body.kind === 'report') reports.push(r.packet.body.report);
      return true;
    },
    bufferedAmount: () => 0,
  });
  const ep = new Endpoint(receiver);
  const delivered = new Map<number, number>(); // pathSeq -> receiver clock at delivery
  for (let t = 0; t < 300; t += 5) {
    if (t % 33 === 0) sender.sendFrame({ streamId: 0, frameId: t / 33 + 1, keyFrame: t === 0, captureUs: clock.nowUs(), data: new Uint8Array(1500), codec: 'vp8' });
    sender.tick();
    for (const b of up.splice(0)) {
      const d = decodePacket(b);
      if (d.ok) delivered.set(d.packet.pathSeq, clock.nowUs());
      ep.onDatagram(0, b, ageUs);
    }
    receiver.tick();
    clock.advanceMs(5);
  }
  const offsets = new Map<number, number>();
  for (const r of reports) for (const a of r.arrivals) if (delivered.has(a.pathSeq)) offsets.set(a.pathSeq, delivered.get(a.pathSeq)! - a.arrivalUs);
  return offsets;
}

describe('arrival age of a datagram', () => {
  it('reports arrival = delivery time - age', () => {
    const none = arrivalsReported(undefined);
    const aged = arrivalsReported(25_000);
    expect(none.size).toBeGreaterThan(5);
    expect(aged.size).toBeGreaterThan(5);
    for (const v of none.values()) expect(v).toBe(0);
    for (const v of aged.values()) expect(v).toBe(25_000);
  });
});
