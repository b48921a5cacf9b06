import { describe, expect, it } from 'vitest';
import { decodePacket } from '../../../src/wire/decode.js';
import { makeCall } from './call-helper.js';
import type { PathSpec } from './call-helper.js';
import { registerAllStrategies } from '../../../src/strategies.js';

// The 'single' scheduler is opt-in.
registerAllStrategies();

/** A drop rule for the first media original (not a retransmission) sent on the path at or after `afterUs`; `dropped` gets its flowSeq. */
function dropOneMediaAfter(afterUs: number, dropped: { flowSeq: number }): NonNullable<PathSpec['drop']> {
  return (b, nowUs) => {
    if (dropped.flowSeq >= 0 || nowUs < afterUs) return false;
    const d = decodePacket(b);
    if (!d.ok || d.packet.body.kind !== 'media') return false;
    dropped.flowSeq = d.packet.body.media.flowSeq;
    return true;
  };
}

// Two paths with a 150 ms RTT difference (one-way 20 ms and 95 ms: RTT 40 / 190 ms).
const FAST = { rateMbps: 6, delayMs: 20 };
const SLOW = { rateMbps: 6, delayMs: 95 };
// makeCall's clock starts at 1 s; the receiver reports each path every 50 ms.
const START_US = 1_000_000;
const REPORT_INTERVAL_MS = 50;

describe('sender-side loss detection per path (RACK, RFC 8985 §6.2)', () => {
  it('resends a packet lost on the fast path within about one path RTT plus the report interval, and no other', () => {
    const dropped = { flowSeq: -1 };
    const call = makeCall([{ ...FAST, drop: dropOneMediaAfter(START_US + 3_000_000, dropped) }, SLOW], { fec: 'none', extra: { rack: true } });
    let resentUs = -1;
    for (let ms = 0; ms < 4_000; ms++) {
      call.run(1);
      if (resentUs < 0 && call.sender.stats().rackRetransmissionsSent > 0) resentUs = call.clock.nowUs();
    }
    expect(dropped.flowSeq).toBeGreaterThanOrEqual(0);
    expect(call.dropsUs).toHaveLength(1);
    const st = call.sender.stats();
    // Both paths carried media (so the receiver saw flowSeq reordering across them).
    expect(st.paths.every((p) => p.mediaPacketsSent > 50)).toBe(true);
    expect(resentUs).toBeGreaterThan(0);
    const afterMs = (resentUs - call.dropsUs[0]) / 1000;
    // Fast path RTT 40 ms + up to one report interval + reorder window (min RTT / 4) + frame spacing slack;
    // well under the receiver's learned cross-path reorder wait (up to 200 ms) plus its NACK round.
    expect(afterMs).toBeLessThan(40 + REPORT_INTERVAL_MS + 10 + 35);
    // Exactly the one lost packet: nothing merely delayed on the slow path was declared lost.
    expect(st.rackLost).toBe(1);
    expect(st.rackRetransmissionsSent).toBe(1);
    expect(st.rackSpurious).toBe(0);
    // The receiver's NACK for it (if any) found it answered: one retransmission in all.
    expect(st.retransmissionsSent).toBe(1);
  });

  it('does not resend packets merely delayed on the slower path (no spurious retransmission)', () => {
    // The slow path's one-way delay also steps up by 120 ms mid-call (a queueing episode).
    const call = makeCall([FAST, { ...SLOW, delaySteps: [[2_000, 215]] }], { fec: 'none', extra: { rack: true } });
    call.run(5_000);
    const st = call.sender.stats();
    expect(st.paths.every((p) => p.mediaPacketsSent > 50)).toBe(true);
    expect(st.rackLost).toBe(0);
    expect(st.rackSpurious).toBe(0);
    expect(st.rackRetransmissionsSent).toBe(0);
  });

  it('leaves a loss on a path with a long RTT to the receiver (RACK is no faster than its NACK there)', () => {
    const dropped = { flowSeq: -1 };
    // One-way 300 ms on path 1: RACK needs > 600 ms, more than the fast path's SRTT + 200 ms.
    // The video goes on path 1 alone; path 0 (up, probed) gives the lowest SRTT.
    const call = makeCall([FAST, { rateMbps: 6, delayMs: 300, drop: dropOneMediaAfter(START_US + 3_000_000, dropped) }], {
      scheduler: 'single',
      fec: 'none',
      extra: { rack: true, singlePath: 1 },
    });
    call.run(5_000);
    const st = call.sender.stats();
    expect(dropped.flowSeq).toBeGreaterThanOrEqual(0);
    expect(st.paths[1].mediaPacketsSent).toBeGreaterThan(100);
    expect(st.rackLost).toBe(1);
    expect(st.rackTooOld).toBe(1);
    expect(st.rackRetransmissionsSent).toBe(0);
  });

  it('counts its detections with the switch off but sends nothing on them', () => {
    const dropped = { flowSeq: -1 };
    const call = makeCall([{ ...FAST, drop: dropOneMediaAfter(START_US + 2_000_000, dropped) }, SLOW], { fec: 'none', extra: { rack: false } });
    call.run(3_000);
    const st = call.sender.stats();
    expect(st.rackLost).toBe(1);
    expect(st.rackRetransmissionsSent).toBe(0);
  });
});

describe('overdue reinjection (SenderEngineConfig.reinjectOverdueMs)', () => {
  /** Drops every media original sent on the path in [fromUs, toUs): a path that dies under a frame. */
  const dropMediaBetween = (fromUs: number, toUs: number, dropped: Set<number>): NonNullable<PathSpec['drop']> => {
    return (b, nowUs) => {
      if (nowUs < fromUs || nowUs >= toUs) return false;
      const d = decodePacket(b);
      if (!d.ok || d.packet.body.kind !== 'media' || d.packet.body.media.retransmission) return false;
      dropped.add(d.packet.body.media.flowSeq);
      return true;
    };
  };

  const run = (reinjectOverdueMs: number) => {
    const dropped = new Set<number>();
    const call = makeCall([{ ...FAST, drop: dropMediaBetween(START_US + 3_000_000, START_US + 3_030_000, dropped) }, SLOW], {
      fec: 'none',
      extra: { rack: false, fastFailover: false, reinjectOverdueMs },
    });
    call.run(4_000);
    return { st: call.sender.stats(), dropped };
  };

  it('duplicates packets a report of their path should have listed onto the other path, only those, only when switched on', () => {
    const on = run(30);
    expect(on.dropped.size).toBeGreaterThan(0);
    expect(on.st.paths.every((p) => p.mediaPacketsSent > 50)).toBe(true);
    // Dropped packets the receiver's NACK had not recovered yet went again on the slow path; packets
    // delivered in time never did (the reports listed them), so at most the dropped ones.
    expect(on.st.reinjected).toBeGreaterThan(0);
    expect(on.st.reinjected).toBeLessThanOrEqual(on.dropped.size);
    expect(on.st.paths[1].retransmissionsSent).toBeGreaterThanOrEqual(on.st.reinjected);
    const off = run(0);
    expect(off.dropped.size).toBeGreaterThan(0);
    expect(off.st.reinjected).toBe(0);
  });

  it('with the loss-burst gate (reinjectLossBurst), duplicates only while the path loses packets in a burst', () => {
    const gated = (lossyFromUs: number) => {
      const dropped = new Set<number>();
      const blackout = dropMediaBetween(START_US + 3_000_000, START_US + 3_300_000, dropped);
      let n = 0;
      // Every other media original lost from lossyFromUs to 3 s (a fading radio), then a 300 ms blackout (no later packet arrives: RACK cannot judge, the reports go on over the other path).
      const drop: NonNullable<PathSpec['drop']> = (b, nowUs) => {
        if (nowUs >= lossyFromUs && nowUs < START_US + 3_000_000) {
          const d = decodePacket(b);
          if (d.ok && d.packet.body.kind === 'media' && !d.packet.body.media.retransmission && n++ % 2 === 0) return true;
          return false;
        }
        return blackout(b, nowUs);
      };
      const call = makeCall([{ ...FAST, drop }, SLOW], { fec: 'none', extra: { rack: false, fastFailover: false, reinjectOverdueMs: 30, reinjectLossBurst: 4 } });
      call.run(4_000);
      return { st: call.sender.stats(), dropped };
    };
    const fading = gated(START_US + 2_700_000);
    expect(fading.dropped.size).toBeGreaterThan(0);
    expect(fading.st.rackLost).toBeGreaterThan(8);
    expect(fading.st.reinjected).toBeGreaterThan(0);
    // The same blackout on a path that lost nothing before it: the gate stays shut.
    const clean = gated(Number.POSITIVE_INFINITY);
    expect(clean.dropped.size).toBeGreaterThan(0);
    expect(clean.st.reinjected).toBe(0);
  });

  it('rejects a negative threshold', () => {
    expect(() => makeCall([FAST, SLOW], { extra: { reinjectOverdueMs: -1 } })).toThrow(RangeError);
  });
});

describe('resends avoid a path with a standing queue (SenderEngineConfig.rtxAvoidQueued)', () => {
  const run = (rtxAvoidQueued: boolean) => {
    // The video rides path 0 alone (single), which loses 2 % at random and whose one-way delay steps
    // up by 150 ms at 2 s (SRTT >> min RTT); path 1 is up, idle, probed: no queue.
    const call = makeCall([{ ...FAST, loss: 0.02, delaySteps: [[2_000, 170]] }, SLOW], { scheduler: 'single', fec: 'none', extra: { singlePath: 0, rtxAvoidQueued } });
    call.run(3_000);
    const at3 = call.sender.stats().paths.map((p) => p.retransmissionsSent);
    call.run(3_000);
    const st = call.sender.stats();
    return { d0: st.paths[0].retransmissionsSent - at3[0], d1: st.paths[1].retransmissionsSent - at3[1], st };
  };

  it('keeps resending on the queued path when the scheduler uses no other (single)', () => {
    const on = run(true);
    const off = run(false);
    expect(on.st.paths[0].mediaPacketsSent).toBeGreaterThan(100);
    expect(off.d0).toBeGreaterThan(5);
    expect(off.d1).toBe(0);
    expect(on.d0).toBeGreaterThan(5);
    expect(on.d1).toBe(0);
  });
});

describe('resends of a path losing in bursts go where they arrive first (SenderEngineConfig.rtxLossBurst)', () => {
  /** Drops `n` media originals in a row sent on the path from `afterUs` (a burst), or one when n = 1. */
  const dropBurst = (afterUs: number, n: number, dropped: Set<number>): NonNullable<PathSpec['drop']> => {
    return (b, nowUs) => {
      if (nowUs < afterUs || dropped.size >= n) return false;
      const d = decodePacket(b);
      if (!d.ok || d.packet.body.kind !== 'media' || d.packet.body.media.retransmission) return false;
      dropped.add(d.packet.body.media.flowSeq);
      return true;
    };
  };
  const run = (n: number, rtxLossBurst: number) => {
    const dropped = new Set<number>();
    // Path 0 (one-way 95 ms) loses the burst; path 1 (20 ms) is faster by far more than the 20 ms margin.
    const call = makeCall([{ ...SLOW, drop: dropBurst(START_US + 3_000_000, n, dropped) }, FAST], { fec: 'none', extra: { fastFailover: false, rtxLossBurst } });
    call.run(3_000);
    const at3 = call.sender.stats().paths.map((p) => p.retransmissionsSent);
    call.run(1_500);
    const st = call.sender.stats();
    return { d0: st.paths[0].retransmissionsSent - at3[0], d1: st.paths[1].retransmissionsSent - at3[1], dropped, st };
  };

  it('moves the resends of a burst off the losing path only when switched on', () => {
    const on = run(8, 4);
    expect(on.dropped.size).toBe(8);
    expect(on.st.paths.every((p) => p.mediaPacketsSent > 50)).toBe(true);
    expect(on.d0 + on.d1).toBeGreaterThanOrEqual(8);
    const off = run(8, 0);
    expect(off.d0 + off.d1).toBeGreaterThanOrEqual(8);
    // Switched on, the later resends of the burst (once RACK has counted 4 losses) leave path 0.
    expect(on.d1).toBeGreaterThan(off.d1);
  });

  it('changes nothing after a single loss (below the gate)', () => {
    const on = run(1, 4);
    const off = run(1, 0);
    expect(on.dropped.size).toBe(1);
    expect(on.d0 + on.d1).toBeGreaterThanOrEqual(1);
    expect(on.st).toEqual(off.st);
  });
});
