import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { Endpoint } from '../../../src/engine/endpoint.js';
import { ReceiverEngine } from '../../../src/engine/receiver.js';
import type { ReceiverEngineConfig } from '../../../src/engine/receiver-config.js';
import { decodePacket } from '../../../src/wire/decode.js';
import { encodeMedia, encodePacket } from '../../../src/wire/encode.js';

const MS = 1000;
const media = (flowSeq: number, pathSeq: number, captureUs: number) =>
  encodePacket(
    { pathId: 0, pathSeq, sendTimeUs: captureUs },
    'media',
    encodeMedia({
      streamId: 0,
      flowSeq,
      frameId: flowSeq,
      fragIndex: 0,
      fragCount: 1,
      keyFrame: flowSeq === 0,
      nalClass: 0,
      priority: 6,
      captureUs,
      retransmission: false,
      payload: new Uint8Array(100),
    }),
  );

/** Time (ms after the gap is seen) of the receiver's first NACK for a packet missing between two arrivals. */
function firstNackAfterMs(nack: ReceiverEngineConfig['nack']): number {
  const clock = new ManualClock(0);
  const rx = new ReceiverEngine({ clock, ...(nack ? { nack } : {}) });
  let nackAt = -1;
  rx.addPath(0, {
    send(bytes: Uint8Array): boolean {
      const r = decodePacket(bytes);
      if (nackAt < 0 && r.ok && r.packet.body.kind === 'nack') nackAt = clock.nowUs();
      return true;
    },
    bufferedAmount: () => 0,
  });
  const ep = new Endpoint(rx);
  ep.onDatagram(0, media(0, 0, 0));
  clock.setUs(10 * MS);
  ep.onDatagram(0, media(2, 2, 10 * MS)); // flow seq 1 is missing
  for (let t = 10 * MS; t <= 400 * MS && nackAt < 0; t += MS) {
    clock.setUs(t);
    ep.tick();
  }
  return nackAt < 0 ? -1 : (nackAt - 10 * MS) / MS;
}

describe('ReceiverEngineConfig.nack (the NACK reorder wait)', () => {
  it('waits the minimum reorder window by default and the configured one when set', () => {
    const d = firstNackAfterMs(undefined);
    expect(d).toBeGreaterThanOrEqual(30);
    expect(d).toBeLessThan(60);
    const longer = firstNackAfterMs({ reorderWindowMs: 120 });
    expect(longer).toBeGreaterThanOrEqual(120);
    expect(longer).toBeLessThan(150);
  });

  it('rejects a negative wait', () => {
    expect(() => new ReceiverEngine({ clock: new ManualClock(0), nack: { maxReorderWindowMs: -1 } })).toThrow(/maxReorderWindowMs/);
  });
});
