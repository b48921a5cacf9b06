import { describe, expect, it } from 'vitest';
import { DCSCTP_DEFAULTS, SctpChannel, type SctpPacket } from '../../../sim/datachannel-model.js';

const MTU = DCSCTP_DEFAULTS.mtuBytes;

/** A channel whose packets are collected (no network): the test plays the network. */
function harness(opts: Partial<typeof DCSCTP_DEFAULTS> = {}) {
  const data: SctpPacket<number>[] = [];
  const sacks: SctpPacket<number>[] = [];
  const ch = new SctpChannel<number>(
    (p) => data.push(p),
    (p) => sacks.push(p),
    opts,
  );
  return { ch, data, sacks };
}

/** Deliver all pending DATA to the receiving end and all SACKs back, at `now`; returns delivered messages. */
function roundTrip(h: ReturnType<typeof harness>, now: number, drop: (tsn: number) => boolean = () => false): number[] {
  const pkts = h.data.splice(0);
  const out: number[] = [];
  for (const p of pkts) {
    if (p.kind === 'data' && p.chunks.some((c) => drop(c.tsn))) continue;
    out.push(...h.ch.onData(now, p));
  }
  h.ch.onTimer(now + 200_000); // flush a delayed SACK
  for (const s of h.sacks.splice(0)) h.ch.onSack(now, s);
  return out;
}

describe('SctpChannel (dcSCTP sender model)', () => {
  it('starts with 10 MTUs of cwnd and keeps the rest in bufferedAmount', () => {
    const h = harness();
    for (let i = 0; i < 100; i++) expect(h.ch.send(0, i, 1000)).toBe(true);
    expect(h.ch.cwndBytes()).toBe(10 * MTU);
    expect(h.ch.flightBytes()).toBeLessThanOrEqual(10 * MTU + MTU);
    expect(h.ch.bufferedAmount()).toBeGreaterThan(80_000);
    // Max burst: one send opportunity puts at most 4 packets on the wire.
    expect(h.data.length).toBeGreaterThan(0);
  });

  it('slow start grows cwnd per RTT and drains bufferedAmount as SACKs return', () => {
    const h = harness();
    for (let i = 0; i < 400; i++) h.ch.send(0, i, 1100);
    const b0 = h.ch.bufferedAmount();
    const cw0 = h.ch.cwndBytes();
    const delivered: number[] = [];
    for (let r = 1; r <= 6; r++) delivered.push(...roundTrip(h, r * 50_000));
    expect(h.ch.cwndBytes()).toBeGreaterThan(2 * cw0);
    expect(h.ch.bufferedAmount()).toBeLessThan(b0);
    // Messages arrive whole and in order here (no loss).
    expect(delivered.slice(0, 20)).toEqual([...Array(20).keys()]);
  });

  it('fragments a 1200-byte message into two chunks and reassembles it', () => {
    const h = harness();
    h.ch.send(0, 7, 1200);
    const chunks = h.data.flatMap((p) => (p.kind === 'data' ? p.chunks : []));
    expect(chunks.length).toBe(2);
    expect(roundTrip(h, 10_000)).toEqual([7]);
  });

  it('a loss detected by SACK gap reports halves cwnd (floor 4 MTUs) and abandons the message', () => {
    const h = harness();
    for (let i = 0; i < 300; i++) h.ch.send(0, i, 1100);
    for (let r = 1; r <= 4; r++) roundTrip(h, r * 50_000);
    const before = h.ch.cwndBytes();
    const lostTsn = (h.data[0] as { chunks: Array<{ tsn: number }> }).chunks[0].tsn;
    // Drop one packet, deliver the rest over a few rounds: 3 miss indications.
    for (let r = 5; r <= 8; r++) roundTrip(h, r * 50_000, (t) => t === lostTsn);
    const st = h.ch.stats();
    expect(st.fastRetransmitCuts).toBe(1);
    expect(st.messagesAbandoned).toBeGreaterThanOrEqual(1);
    expect(h.ch.cwndBytes()).toBeLessThan(before);
    expect(h.ch.cwndBytes()).toBeGreaterThanOrEqual(4 * MTU);
  });

  it('keeps its timers on whole microseconds (the simulator clock follows them)', () => {
    const h = harness();
    let now = 0;
    let checked = 0;
    for (let r = 0; r < 8; r++) {
      for (let i = 0; i < 5; i++) h.ch.send(now, r * 10 + i, 1000);
      // RTTs above rtoMinMs and uneven: SRTT + 4 RTTVAR (the RTO) turns fractional.
      now += 450_000 + r * 77_777;
      roundTrip(h, now);
      for (let i = 5; i < 10; i++) h.ch.send(now, r * 10 + i, 1000);
      const due = h.ch.nextTimerUs();
      if (due === undefined) continue;
      expect(Number.isInteger(due)).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThan(4);
    expect(h.ch.stats().rtoMs).toBeGreaterThan(DCSCTP_DEFAULTS.rtoMinMs);
  });

  it('T3-rtx timeout with no SACKs: cwnd 1 MTU, RTO backs off, outstanding abandoned', () => {
    const h = harness();
    for (let i = 0; i < 50; i++) h.ch.send(0, i, 1000);
    const due = h.ch.nextTimerUs();
    expect(due).toBe(DCSCTP_DEFAULTS.rtoInitialMs * 1000);
    h.ch.onTimer(due!);
    const st = h.ch.stats();
    expect(st.t3Timeouts).toBe(1);
    expect(st.rtoMs).toBe(2 * DCSCTP_DEFAULTS.rtoInitialMs);
    expect(h.ch.cwndBytes()).toBe(MTU);
    // After the timeout only about one MTU is in flight again.
    expect(h.ch.flightBytes()).toBeLessThanOrEqual(MTU);
    // The receiver moves past the abandoned TSNs (FORWARD-TSN) and still delivers later messages.
    const late = h.data.splice(0).filter((p) => p.kind === 'data');
    const got = late.flatMap((p) => h.ch.onData(due! + 10_000, p));
    expect(got.length).toBeGreaterThan(0);
  });

  it("T3-rtx backoff stops at Chromium's 3 s cap through a long outage and resets once a SACK advances", () => {
    // A 20 s outage in both directions: nothing is delivered, the timer keeps expiring.
    const run = (opts: Partial<typeof DCSCTP_DEFAULTS>) => {
      const h = harness(opts);
      let now = 0;
      let seq = 0;
      const gaps: number[] = [];
      for (let i = 0; i < 10; i++) h.ch.send(now, seq++, 1000);
      while (now < 20_000_000) {
        const due = h.ch.nextTimerUs()!;
        gaps.push(h.ch.stats().rtoMs);
        now = due;
        h.ch.onTimer(now);
        h.data.splice(0);
        h.sacks.splice(0);
        h.ch.send(now, seq++, 1000); // the app keeps sending: new chunks restart the timer
      }
      return { h, now, seq, gaps };
    };
    const capped = run({});
    expect(Math.max(...capped.gaps)).toBe(3000);
    expect(capped.h.ch.stats().t3Timeouts).toBeGreaterThan(6);
    // RFC 4960 alone (no cap) backs off far beyond: the model recovers that much later.
    const rfc = run({ maxTimerBackoffMs: Infinity });
    expect(Math.max(...rfc.gaps)).toBeGreaterThanOrEqual(8000);
    // The path comes back: the first SACK that advances the cumulative TSN resets the backoff.
    const { h } = capped;
    let now = capped.now;
    for (let i = 0; i < 4; i++) h.ch.send(now, capped.seq + i, 1000);
    roundTrip(h, now + 50_000);
    now += 100_000;
    h.ch.send(now, capped.seq + 10, 1000);
    expect(h.ch.stats().rtoMs).toBeLessThan(3000);
    expect(h.ch.stats().rtoMs).toBeGreaterThanOrEqual(DCSCTP_DEFAULTS.rtoMinMs);
  });

  it('rejects a backoff cap that is not > 0', () => {
    expect(() => harness({ maxTimerBackoffMs: 0 })).toThrow(RangeError);
    expect(() => harness({ maxTimerBackoffMs: Number.NaN })).toThrow(RangeError);
  });

  it('refuses a message the send buffer cannot hold', () => {
    const h = harness({ sendBufferBytes: 50_000 });
    let refused = 0;
    for (let i = 0; i < 100; i++) if (!h.ch.send(0, i, 1000)) refused++;
    expect(refused).toBeGreaterThan(0);
    expect(h.ch.bufferedAmount()).toBeLessThanOrEqual(50_000);
    expect(h.ch.stats().messagesRefused).toBe(refused);
  });

  it('delays a lone SACK until min(200 ms, RTO/2)', () => {
    const h = harness();
    h.ch.send(0, 1, 100);
    h.ch.onData(1000, h.data.shift()!);
    expect(h.sacks.length).toBe(0);
    expect(h.ch.nextTimerUs()).toBe(1000 + 200_000);
  });
});
