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
    // well under the receiver's learned cross-path reorder wait (up to 100 ms) plus its NACK round.
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
