import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import type { DatagramCarrier } from '../../../src/transport/carrier.js';
import { StallFallbackSink } from '../../../src/transport/stall-fallback.js';

/** A datachannel whose buffer drains only when told (drain = SACKs arriving). */
class FakeDc {
  buffered = 0;
  sent = 0;
  refuse = false;
  send(b: Uint8Array): boolean {
    if (this.refuse) return false;
    this.buffered += b.length;
    this.sent++;
    return true;
  }
  bufferedAmount(): number {
    return this.buffered;
  }
  drain(bytes: number): void {
    this.buffered = Math.max(0, this.buffered - bytes);
  }
}

class FakeCarrier implements DatagramCarrier {
  open = true;
  queue = 0;
  maxQueue = 1e9;
  ceiling: number | undefined = undefined;
  got: Uint8Array[] = [];
  send(b: Uint8Array): boolean {
    if (!this.open || this.queue + b.length > this.maxQueue) return false;
    this.queue += b.length;
    this.got.push(b);
    return true;
  }
  queuedBytes(): number {
    return this.queue;
  }
  rateCeilingBps(): number | undefined {
    return this.ceiling;
  }
  /** Calls of wake(). */
  wakes = 0;
  wake(): void {
    this.wakes++;
  }
  on(): () => void {
    return () => {};
  }
  close(): void {
    this.open = false;
  }
}

const dg = (n = 1000) => new Uint8Array(n);

function setup(opts: { rtt?: number; stallMs?: number; drainProgresses?: 1 | 2 } = {}) {
  const clock = new ManualClock(1_000_000);
  const dc = new FakeDc();
  const carrier = new FakeCarrier();
  const sink = new StallFallbackSink({
    datachannel: dc,
    carrier,
    clock,
    ...(opts.drainProgresses !== undefined ? { drainProgresses: opts.drainProgresses } : {}),
    ...(opts.rtt !== undefined ? { rttMs: () => opts.rtt } : {}),
    ...(opts.stallMs !== undefined ? { stallMs: opts.stallMs } : {}),
  });
  return { clock, dc, carrier, sink };
}

/** Build a stalled backlog: write 10 datagrams, then advance `ms` without any drain. */
function stall(s: ReturnType<typeof setup>, ms: number): void {
  for (let i = 0; i < 10; i++) s.sink.send(dg());
  s.clock.advanceMs(ms);
}

/** SACKs flow again: a first one frees part of the backlog (one progress), the next one the rest (a second progress). */
function sacksBack(dc: FakeDc, sink: StallFallbackSink): void {
  dc.drain(1200);
  sink.bufferedAmount();
  dc.drain(1e9);
}

describe('StallFallbackSink', () => {
  it('passes through to the datachannel while it drains, without a carrier too', () => {
    const s = setup();
    for (let t = 0; t < 50; t++) {
      expect(s.sink.send(dg())).toBe(true);
      s.clock.advanceMs(20);
      s.dc.drain(1500); // drains faster than 1000 B / 20 ms
    }
    expect(s.carrier.got.length).toBe(0);
    const st = s.sink.stats();
    expect(st.datachannelDatagrams).toBe(50);
    expect(st.toCarrier).toBe(0);
    expect(st.pipe).toBe('datachannel');
    // No carrier at all: a plain pass-through.
    const clock = new ManualClock();
    const dc = new FakeDc();
    const bare = new StallFallbackSink({ datachannel: dc, carrier: undefined, clock });
    for (let i = 0; i < 10; i++) bare.send(dg());
    clock.advanceMs(10_000);
    expect(bare.send(dg())).toBe(true);
    expect(dc.sent).toBe(11);
    expect(bare.bufferedAmount()).toBe(11_000);
  });

  it('derives the stall time from rto_min and the RTT', () => {
    expect(setup().sink.stallTimeMs()).toBe(400);
    expect(setup({ rtt: 50 }).sink.stallTimeMs()).toBe(400);
    expect(setup({ rtt: 500 }).sink.stallTimeMs()).toBe(700);
    expect(setup({ stallMs: 250, rtt: 500 }).sink.stallTimeMs()).toBe(250);
    expect(() => setup({ stallMs: 0 })).toThrow(RangeError);
  });

  it('moves to the carrier after the stall time without drain, and reports the carrier queue', () => {
    const s = setup();
    stall(s, 300);
    expect(s.sink.send(dg())).toBe(true);
    expect(s.carrier.got.length).toBe(0); // 300 ms < 400 ms: still the datachannel
    s.clock.advanceMs(150);
    expect(s.sink.bufferedAmount()).toBe(0); // now on the carrier: its (empty) queue, not the 11 kB backlog
    expect(s.sink.send(dg(700))).toBe(true);
    expect(s.carrier.got.length).toBe(1);
    expect(s.sink.bufferedAmount()).toBe(700);
    expect(s.dc.bufferedAmount()).toBe(11_000); // nothing more written into the stalled channel
    expect(s.sink.stalled()).toBe(false); // on the carrier: not stalled for the engine's last-resort rule
    const st = s.sink.stats();
    expect(st.pipe).toBe('carrier');
    expect(st.toCarrier).toBe(1);
    expect(st.carrierDatagrams).toBe(1);
    expect(st.carrierBytes).toBe(700);
    expect(st.datachannelDatagrams).toBe(11);
  });

  it('does not count one T3-rtx packet as progress, but counts a real drain', () => {
    const s = setup();
    stall(s, 350);
    s.dc.drain(1100); // one retransmission-timeout packet
    s.clock.advanceMs(100);
    expect(s.sink.stats().pipe).toBe('carrier');
    // A channel draining steadily (> one MTU per check) never stalls.
    const h = setup();
    for (let i = 0; i < 20; i++) h.sink.send(dg());
    for (let t = 0; t < 40; t++) {
      h.clock.advanceMs(200);
      h.dc.drain(1300);
      h.sink.send(dg(1000));
    }
    expect(h.sink.stats().toCarrier).toBe(0);
  });

  it('goes back to the datachannel once it drains, mid-burst', () => {
    const s = setup();
    stall(s, 500);
    const pipes: string[] = [];
    for (let i = 0; i < 6; i++) {
      if (i === 2) s.dc.drain(1200); // a first SACK: one progress is not yet a drain
      if (i === 3) s.dc.drain(1e9); // the next: SACKs are back, the backlog leaves
      s.sink.send(dg());
      pipes.push(s.sink.stats().pipe);
      s.clock.advanceMs(1);
    }
    expect(pipes).toEqual(['carrier', 'carrier', 'carrier', 'datachannel', 'datachannel', 'datachannel']);
    expect(s.sink.stalled()).toBe(false); // drained
    expect(s.carrier.got.length).toBe(3);
    const st = s.sink.stats();
    expect(st.toCarrier).toBe(1);
    expect(st.toDatachannel).toBe(1);
    expect(st.carrierLost).toBe(0);
    expect(st.carrierMs).toBeGreaterThan(0);
    expect(st.carrierMs).toBeLessThan(10);
  });

  it('with drainProgresses 2, does not go back on one lone SACK (a reverse direction passing ~1 packet/s): only when a second progress follows within the stall time', () => {
    const s = setup({ drainProgresses: 2 });
    stall(s, 500);
    s.sink.send(dg());
    expect(s.sink.stats().pipe).toBe('carrier');
    s.dc.drain(9000); // one SACK acks almost all outstanding: 1000 B left, below backlogBytes
    s.clock.advanceMs(100);
    s.sink.send(dg());
    expect(s.sink.stats().pipe).toBe('carrier');
    s.clock.advanceMs(350);
    s.sink.bufferedAmount();
    expect(s.sink.stats().pipe).toBe('carrier'); // still on it, 450 ms after that SACK, nothing since
    expect(s.dc.bufferedAmount()).toBe(1000);
    // SACKs flow: a second progress within the stall time of the last takes it back.
    const t = setup({ drainProgresses: 2 });
    stall(t, 500);
    t.sink.send(dg());
    t.dc.drain(3000);
    t.sink.bufferedAmount();
    t.clock.advanceMs(150);
    t.dc.drain(1e9);
    t.sink.send(dg());
    expect(t.sink.stats().pipe).toBe('datachannel');
    // By default (drainProgresses 1) the lone SACK takes it back.
    const clock = new ManualClock(1_000_000);
    const dc = new FakeDc();
    const one = new StallFallbackSink({ datachannel: dc, carrier: new FakeCarrier(), clock });
    for (let i = 0; i < 10; i++) one.send(dg());
    clock.advanceMs(500);
    one.send(dg());
    expect(one.stats().pipe).toBe('carrier');
    dc.drain(9000);
    clock.advanceMs(100);
    one.send(dg());
    expect(one.stats().pipe).toBe('datachannel');
    expect(() => new StallFallbackSink({ datachannel: dc, carrier: undefined, clock, drainProgresses: 3 as 1 })).toThrow(RangeError);
  });

  it('does not go back when a retransmission-timeout packet takes the last bytes: only on progress or an empty channel for the stall time', () => {
    const s = setup();
    s.sink.send(dg());
    s.sink.send(dg()); // 2000 B backlog
    s.clock.advanceMs(500);
    expect(s.sink.stats().pipe).toBe('carrier');
    s.clock.advanceMs(800);
    s.dc.drain(1100); // T3 packet: 900 B left, below backlogBytes, no SACK behind it
    s.sink.send(dg());
    expect(s.sink.stats().pipe).toBe('carrier');
    s.clock.advanceMs(1600);
    s.dc.drain(900); // the next T3 packet empties the buffer
    expect(s.sink.stats().pipe).toBe('carrier');
    s.clock.advanceMs(300);
    expect(s.sink.stats().pipe).toBe('carrier');
    s.clock.advanceMs(200); // empty for longer than the 400 ms stall time
    expect(s.sink.stats().pipe).toBe('datachannel');
  });

  it('falls back to the datachannel when the carrier closes, and refuses while the carrier refuses', () => {
    const s = setup();
    stall(s, 500);
    s.carrier.maxQueue = 1500;
    expect(s.sink.send(dg())).toBe(true);
    expect(s.sink.send(dg())).toBe(false); // carrier queue bound
    expect(s.sink.stats().carrierRefused).toBe(1);
    expect(s.dc.sent).toBe(10); // a refused datagram is not pushed into the stalled channel
    s.carrier.close();
    expect(s.sink.send(dg())).toBe(true);
    expect(s.dc.sent).toBe(11);
    const st = s.sink.stats();
    expect(st.pipe).toBe('datachannel');
    expect(st.carrierLost).toBe(1);
    expect(s.sink.bufferedAmount()).toBe(11_000);
    expect(s.sink.stalled()).toBe(true); // back on a stalled channel
    // A carrier that was never open is never used.
    const n = setup();
    n.carrier.open = false;
    stall(n, 2000);
    n.sink.send(dg());
    expect(n.sink.stats().toCarrier).toBe(0);
    // Datachannel refusal is counted.
    n.dc.refuse = true;
    expect(n.sink.send(dg())).toBe(false);
    expect(n.sink.stats().datachannelRefused).toBe(1);
  });

  it('wakes a carrier that is not open in a stall (not before), keeps writing into the datachannel, switches once it opens', () => {
    const s = setup();
    s.carrier.open = false;
    for (let i = 0; i < 10; i++) s.sink.send(dg());
    s.clock.advanceMs(300); // a backlog, not yet a stall
    s.sink.bufferedAmount();
    expect(s.carrier.wakes).toBe(0);
    s.clock.advanceMs(200);
    expect(s.sink.send(dg())).toBe(true);
    expect(s.carrier.wakes).toBeGreaterThanOrEqual(1);
    expect(s.dc.sent).toBe(11); // still the datachannel: the carrier is not open yet
    s.sink.bufferedAmount();
    s.clock.advanceMs(100);
    s.sink.bufferedAmount();
    let st = s.sink.stats();
    expect(st.stallsWithoutCarrier).toBe(1); // one stall, however many updates
    expect(st.toCarrier).toBe(0);
    expect(st.lastWakeToCarrierMs).toBeUndefined();
    s.clock.advanceMs(50);
    s.carrier.open = true; // negotiated
    expect(s.sink.send(dg())).toBe(true);
    expect(s.carrier.got.length).toBe(1);
    st = s.sink.stats();
    expect(st.toCarrier).toBe(1);
    expect(st.lastWakeToCarrierMs).toBe(150); // stall found at +500 ms, open at +650 ms
    expect(st.pipe).toBe('carrier');
    // A channel that drains steadily never wakes it.
    const d = setup();
    d.carrier.open = false;
    for (let t = 0; t < 50; t++) {
      d.sink.send(dg(3000));
      d.clock.advanceMs(100);
      d.dc.drain(2500); // a growing backlog, but > one MTU leaves per check: progress
    }
    expect(d.dc.bufferedAmount()).toBeGreaterThan(10_000);
    expect(d.carrier.wakes).toBe(0);
    expect(d.sink.stats().stallsWithoutCarrier).toBe(0);
  });

  it('paces the carrier at its ceiling from a bounded FIFO: counted refusals, whole bursts, reported as buffered', () => {
    const s = setup();
    s.carrier.ceiling = 240_000; // 30 kB/s: FIFO bound max(15 kB, 12 kB) = 15 kB
    stall(s, 500);
    // A 10 kB key frame at once: accepted whole (no refusal mid-frame), then paced out.
    let ok = 0;
    for (let i = 0; i < 10; i++) if (s.sink.send(dg())) ok++;
    expect(ok).toBe(10);
    expect(s.carrier.got.length).toBeLessThan(3); // a 20 ms burst at 30 kB/s
    expect(s.sink.bufferedAmount()).toBeGreaterThan(7000); // the engine sees what waits
    let refused = 0;
    for (let t = 0; t < 1000; t++) {
      if (!s.sink.send(dg())) refused++; // offer 8 Mbps
      s.carrier.queue = 0; // the fake carrier hands everything to the network at once
      expect(s.sink.bufferedAmount()).toBeLessThanOrEqual(16_000);
      s.clock.advanceMs(1);
    }
    // ~30 kB/s reached the carrier over ~1 s, the rest was refused (counted).
    const bytes = s.carrier.got.length * 1000;
    expect(bytes).toBeGreaterThan(25_000);
    expect(bytes).toBeLessThan(40_000);
    expect(refused).toBeGreaterThan(900);
    expect(s.sink.stats().ceilingRefused).toBe(refused);
  });

  describe('a stale ceiling', () => {
    /** A sink with the path's own rate known (600 kbps) and a carrier whose ceiling the test sets. */
    function staleSetup(pathRate: number | null = 600_000) {
      const clock = new ManualClock(1_000_000);
      const dc = new FakeDc();
      const carrier = new FakeCarrier();
      const sink = new StallFallbackSink({ datachannel: dc, carrier, clock, pathRateBps: () => pathRate ?? undefined });
      return { clock, dc, carrier, sink };
    }
    /** Offer 8 Mbps for `ms` (the fake carrier sends what it takes at once); the bytes that reached the carrier. */
    function offer(s: ReturnType<typeof staleSetup>, ms: number): number {
      const before = s.carrier.got.length;
      for (let t = 0; t < ms; t++) {
        s.sink.send(dg());
        s.carrier.queue = 0;
        s.clock.advanceMs(1);
      }
      return (s.carrier.got.length - before) * 1000;
    }
    /** SACKs are back: the channel drains and the sink goes back to it. */
    function recover(s: ReturnType<typeof staleSetup>): void {
      sacksBack(s.dc, s.sink);
      s.sink.send(dg());
      s.dc.drain(1e9);
      expect(s.sink.stats().pipe).toBe('datachannel');
    }

    it("after an outage left the idle carrier's ceiling low, paces up to min(path rate, 2.5 x ceiling), not at the ceiling", () => {
      const s = staleSetup();
      // First outage: the carrier's estimate is high (Chromium's start-up probes), then collapses in it.
      s.carrier.ceiling = 800_000;
      stall(s, 500);
      expect(s.sink.stats().pipe).toBe('carrier');
      offer(s, 200);
      s.carrier.ceiling = 50_000; // the uplink outage: GCC fell to 50 kbps
      offer(s, 300);
      recover(s);
      // Five seconds on the datachannel: the idle carrier gets no feedback, its ceiling stays at 50 kbps.
      for (let t = 0; t < 50; t++) {
        s.sink.send(dg());
        s.dc.drain(1e9);
        s.clock.advanceMs(100);
      }
      // Second outage.
      stall(s, 500);
      expect(s.sink.stats().pipe).toBe('carrier');
      const bytes = offer(s, 1000);
      // At the stale 50 kbps ceiling ~6.3 kB would go in 1 s; at min(600 kbps, 125 kbps) ~15.6 kB.
      expect(bytes).toBeGreaterThan(12_000);
      expect(bytes).toBeLessThan(20_000);
      const st = s.sink.stats();
      expect(st.staleSwitches).toBe(2); // the first use is stale too (the carrier never carried)
      expect(st.paceBps).toBe(125_000);
      expect(st.ceilingBps).toBe(50_000);
      expect(st.ceilingsAtSwitchBps).toEqual([800_000, 50_000]);
    });

    it('paces at the ceiling when the carrier carried within staleCeilingMs, when the path rate is lower, or unknown', () => {
      // A quick second stall: the carrier carried 0.5 s ago, its ceiling describes current traffic.
      const s = staleSetup();
      s.carrier.ceiling = 50_000;
      stall(s, 500);
      offer(s, 300);
      recover(s);
      stall(s, 500);
      expect(s.sink.stats().pipe).toBe('carrier');
      expect(s.sink.stats().staleSwitches).toBe(1); // only the first use
      const fresh = offer(s, 1000);
      expect(fresh).toBeGreaterThan(4000);
      expect(fresh).toBeLessThan(9000); // ~6.3 kB at 50 kbps
      expect(s.sink.stats().paceBps).toBe(50_000);
      // The path's own rate below the ceiling, or unknown: the ceiling.
      for (const rate of [30_000, null]) {
        const l = staleSetup(rate);
        l.carrier.ceiling = 50_000;
        stall(l, 500);
        expect(l.sink.stats().staleSwitches).toBe(1);
        const b = offer(l, 1000);
        expect(b).toBeLessThan(9000);
        expect(l.sink.stats().paceBps).toBe(50_000);
      }
      // Between the ceiling and 2.5x: the path's rate.
      const m = staleSetup(80_000);
      m.carrier.ceiling = 50_000;
      stall(m, 500);
      expect(m.sink.stats().paceBps).toBe(80_000);
    });

    it('rejects a staleCeilingFactor below 1', () => {
      const clock = new ManualClock(0);
      expect(() => new StallFallbackSink({ datachannel: new FakeDc(), carrier: undefined, clock, staleCeilingFactor: 0.5 })).toThrow(RangeError);
    });
  });

  it('keeps releasing its FIFO on bufferedAmount() while a T3 packet has left the backlog below backlogBytes', () => {
    const s = setup();
    s.carrier.ceiling = 500_000; // 62.5 kB/s
    s.sink.send(dg());
    s.sink.send(dg()); // 2000 B backlog
    s.clock.advanceMs(500);
    expect(s.sink.stats().pipe).toBe('carrier');
    for (let i = 0; i < 8; i++) s.sink.send(dg()); // 8 kB: a 20 ms burst goes, the rest waits in the FIFO
    s.dc.drain(1100); // a T3 packet: 900 B left, not drained
    // Only the engine's ticks call the sink now (its pacer holds everything while the sink reports > 6 kB).
    for (let t = 0; t < 300; t++) {
      s.sink.bufferedAmount();
      s.carrier.queue = 0;
      s.clock.advanceMs(1);
    }
    expect(s.sink.stats().pipe).toBe('carrier');
    expect(s.sink.stats().fifoBytes).toBe(0); // 8 kB at 62.5 kB/s: out within ~130 ms
    expect(s.carrier.got.length).toBe(8);
  });

  it('tells the owner about switches and moves what waits in its FIFO into the drained datachannel', () => {
    const clock = new ManualClock(0);
    const dc = new FakeDc();
    const carrier = new FakeCarrier();
    carrier.ceiling = 80_000; // 10 kB/s
    const seen: string[] = [];
    const sink = new StallFallbackSink({ datachannel: dc, carrier, clock, onSwitch: (p) => seen.push(p) });
    for (let i = 0; i < 10; i++) sink.send(dg());
    clock.advanceMs(500);
    for (let i = 0; i < 5; i++) sink.send(dg());
    expect(seen).toEqual(['carrier']);
    const onCarrier = carrier.got.length;
    expect(onCarrier).toBeLessThan(5);
    sacksBack(dc, sink);
    expect(sink.bufferedAmount()).toBe(5000 - onCarrier * 1000); // back on the datachannel: the FIFO went there
    expect(seen).toEqual(['carrier', 'datachannel']);
    const st = sink.stats();
    expect(st.requeuedToDatachannel).toBe(5 - onCarrier);
    expect(st.fifoBytes).toBe(0);
    expect(dc.sent).toBe(10 + 5 - onCarrier);
  });

  it('does not use (and leaves) a carrier whose ceiling is below minCeilingBps', () => {
    const clock = new ManualClock(0);
    const dc = new FakeDc();
    const carrier = new FakeCarrier();
    carrier.ceiling = 300_000;
    const sink = new StallFallbackSink({ datachannel: dc, carrier, clock, minCeilingBps: 150_000 });
    for (let i = 0; i < 10; i++) sink.send(dg());
    clock.advanceMs(500);
    expect(sink.stats().pipe).toBe('carrier');
    carrier.ceiling = 30_000; // GCC collapsed
    sink.send(dg());
    let st = sink.stats();
    expect(st.pipe).toBe('datachannel');
    expect(st.ceilingTooLow).toBe(1);
    clock.advanceMs(2000);
    expect(sink.stats().pipe).toBe('datachannel'); // still stalled, but the carrier is no use
    carrier.ceiling = 200_000;
    st = sink.stats();
    expect(st.pipe).toBe('carrier');
    expect(st.toCarrier).toBe(2);
  });

  it('with lastReverseUs, counts a stall only while the reverse direction is silent', () => {
    const clock = new ManualClock(0);
    const dc = new FakeDc();
    const carrier = new FakeCarrier();
    let rev: number | undefined = 0;
    const sink = new StallFallbackSink({ datachannel: dc, carrier, clock, lastReverseUs: () => rev });
    for (let i = 0; i < 10; i++) sink.send(dg());
    for (let t = 0; t < 20; t++) {
      clock.advanceMs(100);
      rev = clock.nowUs(); // reports keep arriving: a slow forward link, not a dead reverse one
    }
    expect(sink.stats().pipe).toBe('datachannel');
    clock.advanceMs(500); // now silent for longer than the stall time
    expect(sink.stats().pipe).toBe('carrier');
    rev = undefined; // never heard from counts as silent
    const s2 = new StallFallbackSink({ datachannel: new FakeDc(), carrier, clock, lastReverseUs: () => rev });
    for (let i = 0; i < 10; i++) s2.send(dg());
    clock.advanceMs(500);
    expect(s2.stats().pipe).toBe('carrier');
  });

  it('counts progress from the channel even when other writers add bytes', () => {
    const s = setup();
    stall(s, 100);
    for (let t = 0; t < 20; t++) {
      s.dc.buffered += 200; // another engine's reports into the same channel
      s.dc.drain(1500);
      s.clock.advanceMs(100);
      s.sink.bufferedAmount();
    }
    expect(s.sink.stats().toCarrier).toBe(0);
  });
});
