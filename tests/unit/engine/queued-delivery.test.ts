import { describe, expect, it } from 'vitest';
import { Pacer } from '../../../src/cc/pacer.js';
import type { BandwidthEstimator } from '../../../src/cc/types.js';
import { SenderPath, type QueuedItem } from '../../../src/engine/sender-path.js';

/** An estimator with a fixed target and RTTs / bytes in flight the test sets. */
function estimator(st: { srtt: number; min: number; inflight: number }, targetBps: number): BandwidthEstimator {
  return {
    onPacketSent: () => {},
    onReport: () => {},
    onTick: () => {},
    targetRateBps: () => targetBps,
    ackedRateBps: () => undefined,
    srttMs: () => st.srtt,
    minRttMs: () => st.min,
    lossRate: () => 0,
    inflightBytes: () => st.inflight,
    lastReportUs: () => undefined,
    stats: () => ({ targetRateBps: targetBps }),
  } as unknown as BandwidthEstimator;
}

/** A path with a 4 Mbps estimate and a standing queue (SRTT 200 ms over a 30 ms min, 30 kB in flight) unless the test changes `st`. */
function path(queuedMs: number) {
  const st = { srtt: 200, min: 30, inflight: 30_000 };
  const p = new SenderPath(0, { send: () => true, bufferedAmount: () => 0 }, estimator(st, 4_000_000), new Pacer<QueuedItem>(4_000_000), undefined, 'connected', 0);
  p.queuedMs = queuedMs;
  let seq = 0;
  /** Send `n` datagrams of 1000 bytes, then report them arriving `gapUs` apart from `atUs`. */
  const deliver = (n: number, atUs: number, gapUs: number): void => {
    const first = seq;
    for (let k = 0; k < n; k++) p.send(() => new Uint8Array(1000), atUs);
    seq += n;
    p.onArrivals(Array.from({ length: n }, (_, k) => ({ pathSeq: first + k, arrivalUs: atUs + gapUs * k })));
  };
  return { p, st, deliver, report: (a: Array<{ pathSeq: number; arrivalUs: number }>) => p.onArrivals(a) };
}

describe('SenderPath delivery cap (SenderEngineConfig.queuedDeliveryMs)', () => {
  it('with a standing queue, caps the rate at what arrived over the last 200 ms of receiver time, each datagram once', () => {
    const { p, deliver, report } = path(60);
    expect(p.deliveryCapBps()).toBe(Number.POSITIVE_INFINITY); // nothing delivered yet
    deliver(100, 1_000_000, 2000); // 1000 bytes every 2 ms: 4 Mbps
    const fast = p.deliveryCapBps();
    expect(fast).toBeGreaterThan(3_000_000);
    expect(fast).toBeLessThan(5_000_000);
    // The same arrivals listed again (a report copy) do not count twice.
    report(Array.from({ length: 100 }, (_, k) => ({ pathSeq: k, arrivalUs: 1_000_000 + 2000 * k })));
    expect(p.deliveryCapBps()).toBe(fast);
    // The link fades: 1000 bytes every 20 ms (0.4 Mbps); within one window the cap follows.
    deliver(20, 1_300_000, 20_000);
    expect(p.deliveryCapBps()).toBeLessThan(600_000);
    expect(p.rateBps()).toBeLessThan(600_000);
  });

  it('leaves the rate alone without a standing queue of ours, or when off', () => {
    const q = path(60);
    q.deliver(20, 100_000, 10_000); // 0.8 Mbps
    expect(q.p.rateBps()).toBeLessThan(1_000_000);
    q.st.srtt = 50; // no queue (SRTT within 60 ms of min)
    expect(q.p.deliveryCapBps()).toBe(Number.POSITIVE_INFINITY);
    expect(q.p.rateBps()).toBe(4_000_000);
    const off = path(0);
    off.deliver(20, 100_000, 10_000);
    expect(off.p.deliveryCapBps()).toBe(Number.POSITIVE_INFINITY);
    expect(off.p.rateBps()).toBe(4_000_000);
  });

  describe('with queuedDeliveryRatio (the link test)', () => {
    /** A path with a standing queue and queuedDeliveryRatio 0.9; `send` / `arrive` 1000-byte datagrams `gapUs` apart. */
    function linkTested() {
      const st = { srtt: 200, min: 30, inflight: 30_000 };
      const p = new SenderPath(0, { send: () => true, bufferedAmount: () => 0 }, estimator(st, 4_000_000), new Pacer<QueuedItem>(4_000_000), undefined, 'connected', 0);
      p.queuedMs = 60;
      p.queuedRatio = 0.9;
      let next = 0;
      const send = (n: number, atUs: number, gapUs: number): number => {
        const first = next;
        for (let k = 0; k < n; k++) p.send(() => new Uint8Array(1000), atUs + gapUs * k);
        next += n;
        return first;
      };
      const arrive = (first: number, n: number, atUs: number, gapUs: number) => p.onArrivals(Array.from({ length: n }, (_, k) => ({ pathSeq: first + k, arrivalUs: atUs + gapUs * k })));
      return { p, st, send, arrive };
    }

    it('leaves a path that delivers what it was sent alone (app-limited or ramping), whatever its SRTT', () => {
      const { p, send, arrive } = linkTested();
      const first = send(40, 0, 10_000); // 0.8 Mbps for 400 ms
      arrive(first, 40, 150_000, 10_000); // all of it, 150 ms later, at the same pace
      expect(p.deliveryCapBps()).toBe(Number.POSITIVE_INFINITY);
      expect(p.rateBps()).toBe(4_000_000);
    });

    it('caps a link that delivers far less than was sent, and holds the cap until the standing queue is gone', () => {
      const { p, st, send, arrive } = linkTested();
      const first = send(200, 0, 2_000); // 4 Mbps for 400 ms
      arrive(first + 100, 20, 1_000_000, 10_000); // 0.8 Mbps arrives
      const cap = p.deliveryCapBps();
      expect(cap).toBeGreaterThan(500_000);
      expect(cap).toBeLessThan(1_200_000);
      expect(p.rateBps()).toBeLessThan(1_200_000);
      // Paced at the cap, the link now delivers what it is sent: the cap holds while the queue stands.
      const more = send(20, 1_300_000, 10_000);
      arrive(more, 20, 1_500_000, 10_000);
      expect(p.deliveryCapBps()).toBeLessThan(1_200_000);
      // The queue is gone: no cap; a new standing queue on a path that delivers what it is sent: still none.
      st.srtt = 50;
      expect(p.deliveryCapBps()).toBe(Number.POSITIVE_INFINITY);
      st.srtt = 200;
      const again = send(20, 2_000_000, 10_000);
      arrive(again, 20, 2_200_000, 10_000);
      expect(p.deliveryCapBps()).toBe(Number.POSITIVE_INFINITY);
      expect(p.rateBps()).toBe(4_000_000);
    });

    it('drops the cap while what is delivered was sent right after the path was silent', () => {
      const { p, send, arrive } = linkTested();
      const first = send(200, 0, 2_000);
      arrive(first + 100, 20, 1_000_000, 10_000);
      expect(p.deliveryCapBps()).toBeLessThan(1_200_000);
      p.lastGoneUs = 1_250_000; // a silence (PathRecovery: suspect or down)
      const after = send(5, 1_300_000, 10_000); // the first sends after it, delivered
      arrive(after, 5, 1_400_000, 10_000);
      expect(p.deliveryCapBps()).toBe(Number.POSITIVE_INFINITY);
      expect(p.rateBps()).toBe(4_000_000);
    });
  });
});
