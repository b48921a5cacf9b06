import { describe, expect, it } from 'vitest';
import { GccEstimator } from '../../../src/cc/gcc.js';
import { Pacer } from '../../../src/cc/pacer.js';
import { SentPacketHistory } from '../../../src/cc/sent-history.js';
import type { BandwidthEstimator, SentPacketInfo } from '../../../src/cc/types.js';
import type { PathReport } from '../../../src/core/types.js';
import { SenderPath, type QueuedItem } from '../../../src/engine/sender-path.js';

describe('SentPacketHistory.delaySend', () => {
  it('moves an unreported send later, never earlier, and not once a report covered it', () => {
    const h = new SentPacketHistory(64);
    for (let s = 0; s < 4; s++) h.add(s, s * 1000, 100);
    expect(h.delaySend(1, 5000)).toBe(true);
    expect(h.sendUs[1]).toBe(5000);
    expect(h.delaySend(1, 4000)).toBe(false); // earlier: kept
    expect(h.sendUs[1]).toBe(5000);
    expect(h.delaySend(9, 9000)).toBe(false); // never sent
    h.applyReport({ pathId: 0, beginSeq: 0, endSeq: 2, arrivals: [{ pathSeq: 2, arrivalUs: 50_000 }], reportTimeUs: 0 });
    expect(h.delaySend(2, 60_000)).toBe(false); // reported
    expect(h.delaySend(3, 60_000)).toBe(true); // not covered yet
  });
});

/** Records what SenderPath tells the estimator. */
class RecordingEstimator {
  sent: SentPacketInfo[] = [];
  departed: { seq: number; atUs: number }[] = [];
  onPacketSent(p: SentPacketInfo): void {
    this.sent.push(p);
  }
  onPacketDeparted(seq: number, atUs: number): void {
    this.departed.push({ seq, atUs });
  }
  onReport(): void {}
  onTick(): void {}
  targetRateBps(): number {
    return 1_000_000;
  }
  ackedRateBps(): undefined {
    return undefined;
  }
  srttMs(): number {
    return 100;
  }
  minRttMs(): number {
    return 100;
  }
  lossRate(): number {
    return 0;
  }
  inflightBytes(): number {
    return 0;
  }
  lastReportUs(): undefined {
    return undefined;
  }
  stats(): { targetRateBps: number } {
    return { targetRateBps: 1_000_000 };
  }
}

/** A path whose sink is a FIFO datachannel: written bytes stay buffered until `drain` takes them. */
function pathWithChannel(departureTimes: boolean) {
  const ch = { buffered: 0 };
  const est = new RecordingEstimator();
  const p = new SenderPath(
    0,
    { send: (b) => ((ch.buffered += b.length), true), bufferedAmount: () => ch.buffered },
    est as unknown as BandwidthEstimator,
    new Pacer<QueuedItem>(1_000_000),
    undefined,
    'connected',
    0,
  );
  p.departureTimes = departureTimes;
  const write = (n: number, atUs: number) => {
    for (let k = 0; k < n; k++) p.send(() => new Uint8Array(1000), atUs);
  };
  return { ch, est, p, write };
}

describe('SenderPath departure times (SenderEngineConfig.departureTimes)', () => {
  it('times packets queued behind a backlog when the channel lets them go, in order, between the looks', () => {
    const { ch, est, p, write } = pathWithChannel(true);
    p.observeDepartures(0);
    write(10, 0); // the first three find <= 2 kB ahead: sent at once; packets 3..9 wait
    p.observeDepartures(0);
    expect(est.departed).toHaveLength(0);
    ch.buffered -= 4000; // packets 0..3 leave
    p.observeDepartures(10_000);
    expect(est.departed).toEqual([{ seq: 3, atUs: 10_000 }]);
    ch.buffered -= 6000; // the rest leave between 10 and 30 ms
    p.observeDepartures(30_000);
    const later = est.departed.slice(1);
    expect(later.map((d) => d.seq)).toEqual([4, 5, 6, 7, 8, 9]);
    for (let k = 0; k < later.length; k++) {
      expect(later[k].atUs).toBeGreaterThan(10_000);
      expect(later[k].atUs).toBeLessThanOrEqual(30_000);
      if (k > 0) expect(later[k].atUs).toBeGreaterThan(later[k - 1].atUs);
    }
    expect(later[later.length - 1].atUs).toBe(30_000);
  });

  it('changes nothing when off, or when the channel holds no backlog', () => {
    const off = pathWithChannel(false);
    off.write(10, 0);
    off.ch.buffered = 0;
    off.p.observeDepartures(20_000);
    expect(off.est.departed).toHaveLength(0);
    const idle = pathWithChannel(true);
    for (let k = 0; k < 10; k++) {
      idle.write(1, k * 1000);
      idle.ch.buffered = 0; // gone at once, as on the simulator's ideal datachannel
      idle.p.observeDepartures(k * 1000 + 500);
    }
    expect(idle.est.departed).toHaveLength(0);
  });
});

/**
 * GCC over a path of constant 60 ms one-way delay with spare capacity: ~1
 * Mbps of 1200-byte packets written every 10 ms; from 3 s to 4 s the
 * datachannel lets a packet go only every 20 ms (SCTP waiting for SACKs on
 * a slow reverse link), then catches up at 2 ms per packet. Returns the
 * lowest target after 3 s and whether the detector over-used.
 */
function stalledChannel(withDepartures: boolean): { minTargetBps: number; overused: boolean } {
  const gcc = new GccEstimator({ startBps: 1_000_000 });
  const owdUs = 60_000;
  const pending: { seq: number; departUs: number }[] = [];
  const arrivals: { pathSeq: number; arrivalUs: number }[] = [];
  let seq = 0;
  let channelFreeUs = 0;
  let reportBegin = 0;
  let minTarget = Number.POSITIVE_INFINITY;
  let overused = false;
  for (let t = 0; t <= 6_000_000; t += 1000) {
    if (t % 10_000 === 0) {
      const slow = t >= 3_000_000 && t < 4_000_000;
      const departUs = Math.max(t, channelFreeUs + (slow ? 20_000 : 2000));
      channelFreeUs = departUs;
      gcc.onPacketSent({ pathSeq: seq, sizeBytes: 1200, sendTimeUs: t });
      pending.push({ seq, departUs });
      seq++;
    }
    // The sender sees packets leave the channel (as SenderPath.observeDepartures does).
    while (pending.length > 0 && pending[0].departUs <= t) {
      const d = pending.shift() as { seq: number; departUs: number };
      if (withDepartures) gcc.onPacketDeparted(d.seq, d.departUs);
      arrivals.push({ pathSeq: d.seq, arrivalUs: d.departUs + owdUs });
    }
    if (t % 50_000 === 0) {
      // Report what arrived by now; it reaches the sender one one-way delay later (applied at once here for simplicity).
      const due = arrivals.filter((a) => a.arrivalUs <= t);
      if (due.length > 0) {
        const end = Math.max(...due.map((a) => a.pathSeq));
        const report: PathReport = { pathId: 0, beginSeq: reportBegin, endSeq: end, arrivals: due, reportTimeUs: t };
        gcc.onReport(report, t + owdUs);
        reportBegin = end + 1;
        arrivals.splice(0, arrivals.length, ...arrivals.filter((a) => a.arrivalUs > t));
      }
      gcc.onTick(t);
      if (gcc.stats().bandwidthUsage === 'overusing') overused = true;
      if (t > 3_000_000) minTarget = Math.min(minTarget, gcc.targetRateBps());
    }
  }
  return { minTargetBps: minTarget, overused };
}

describe('GCC with send times at the datachannel departure', () => {
  it('a stall inside the datachannel is no network queue: no over-use, no cut (timed at the write it is both)', () => {
    const at = stalledChannel(true);
    const written = stalledChannel(false);
    expect(written.overused).toBe(true);
    expect(written.minTargetBps).toBeLessThan(0.9 * at.minTargetBps);
    expect(at.overused).toBe(false);
    expect(at.minTargetBps).toBeGreaterThan(900_000);
  });
});
