import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { Link } from '../../../sim/net/link.js';
import { constantRate } from '../../../sim/net/traces.js';
import { type RtpCarrierOptions, type RtpFeedback, type RtpPacket, RtpCarrierModel } from '../../../sim/rtp-carrier-model.js';

type Item = { rtp: RtpPacket } | { fb: RtpFeedback };

/**
 * A carrier over a forward and a reverse link, run on a virtual clock with
 * a datagram source of `offerBps` (1000-byte datagrams). Returns per-second
 * delivered datagrams and the ceiling.
 */
function run(opts: { fwd?: { rateMbps?: number; lossPct?: number }; reverseDown?: [number, number]; seconds: number; offerBps: number; datagramBytes?: number; carrier?: Partial<RtpCarrierOptions> }) {
  let now = 0;
  const size = opts.datagramBytes ?? 1000;
  const fwd = new Link<Item>(
    { capacity: constantRate((opts.fwd?.rateMbps ?? 2) * 1e6), delay: 20, ...(opts.fwd?.lossPct ? { loss: { kind: 'bernoulli', p: opts.fwd.lossPct / 100 } } : {}) },
    new Rng(7),
  );
  const rev = new Link<Item>({ capacity: constantRate(2e6), delay: 20, ...(opts.reverseDown ? { downPeriods: [opts.reverseDown] } : {}) }, new Rng(8));
  const c = new RtpCarrierModel(
    (p, b) => void fwd.send({ rtp: p }, b + 28, now),
    (f, b) => void rev.send({ fb: f }, b + 28, now),
    () => now,
    opts.carrier ?? {},
  );
  const perSec: number[] = new Array(opts.seconds).fill(0);
  const ceil: number[] = [];
  const open: boolean[] = [];
  let nextOffer = 0;
  let seq = 0;
  let refused = 0;
  const got = new Set<number>();
  let dup = 0;
  while (now < opts.seconds * 1e6) {
    for (const d of fwd.poll(now)) {
      if ('rtp' in d.item)
        for (const g of c.onRtp(now, d.item.rtp)) {
          const id = g.bytes[0] | (g.bytes[1] << 8) | (g.bytes[2] << 16);
          if (got.has(id)) dup++;
          got.add(id);
          perSec[Math.floor(now / 1e6)]++;
        }
    }
    for (const d of rev.poll(now)) {
      c.onReverseArrival(now);
      if ('fb' in d.item) c.onFeedback(now, d.item.fb);
    }
    if ((c.nextTimerUs() ?? Infinity) <= now) c.onTimer(now);
    // Other traffic of the path on the reverse link (the sim: reports, SACKs; here 5 per second).
    if (now % 200_000 === 0) rev.send({ fb: { arrivals: [], reportUs: now } }, 60, now);
    if (now >= nextOffer) {
      const b = new Uint8Array(size);
      b[0] = seq & 0xff;
      b[1] = (seq >> 8) & 0xff;
      b[2] = (seq >> 16) & 0xff;
      seq++;
      // The offered rate respects the ceiling as StallFallbackSink does (here: simply skip above it).
      if (c.queuedBytes() < 20_000 && !c.send(b)) refused++;
      nextOffer += (size * 8e6) / opts.offerBps;
    }
    if (now % 1_000_000 === 0) {
      ceil.push(c.rateCeilingBps());
      open.push(c.open);
    }
    now += 500;
  }
  return { perSec, ceil, open, c, refused, sent: seq, delivered: got.size, dup };
}

describe('RtpCarrierModel', () => {
  it('delivers offered datagrams intact through frames at <= 120 per second', () => {
    const r = run({ seconds: 5, offerBps: 200_000 });
    const st = r.c.stats();
    expect(r.delivered).toBeGreaterThan(0.9 * r.sent);
    expect(r.dup).toBe(0);
    expect(st.frames).toBeLessThanOrEqual(5 * 120 + 1);
    expect(st.framesDelivered).toBe(st.frames);
    expect(st.feedbackDelivered).toBeGreaterThan(20); // every ~100 ms
  });

  it('charges RTP/SRTP/VP8 overhead and splits a large bundle into <= 1200-byte packets', () => {
    let now = 0;
    const out: Array<{ p: RtpPacket; b: number }> = [];
    const c = new RtpCarrierModel(
      (p, b) => out.push({ p, b }),
      () => {},
      () => now,
    );
    for (let i = 0; i < 3; i++) expect(c.send(new Uint8Array(1200))).toBe(true);
    expect(c.queuedBytes()).toBe(3600);
    c.onTimer(now);
    // frame = 10 + 3 x (2 + 1200) = 3616 bytes; payload per packet 1200 - 12 - 8 - 4 = 1176 -> 4 packets
    while ((c.nextTimerUs() ?? Infinity) < 1e6) {
      // Whole microseconds: the simulator's clock follows this timer (a fractional time made a camera frame's capture time fractional).
      expect(Number.isInteger(c.nextTimerUs())).toBe(true);
      now = Math.max(now, c.nextTimerUs()!);
      c.onTimer(now);
    }
    expect(out.length).toBe(4);
    expect(out.every((o) => o.b <= 1200 + 10)).toBe(true);
    expect(out.reduce((a, o) => a + o.b, 0)).toBe(3616 + 4 * (12 + 8 + 4 + 10));
    expect(out.every((o) => o.p.frame === 0 && o.p.packets === 4)).toBe(true);
    expect(c.queuedBytes()).toBe(0);
    // The receiving end needs all four.
    const rx = new RtpCarrierModel(
      () => {},
      () => {},
      () => now,
    );
    expect(rx.onRtp(now, out[0].p)).toEqual([]);
    expect(rx.onRtp(now, out[1].p)).toEqual([]);
    expect(rx.onRtp(now, out[3].p)).toEqual([]); // packet 2 lost: the frame never completes
    expect(rx.stats().framesDelivered).toBe(0);
  });

  it('loses whole frames on packet loss (no NACK/RTX)', () => {
    const r = run({ seconds: 10, offerBps: 300_000, fwd: { lossPct: 5 } });
    const st = r.c.stats();
    expect(st.framesDelivered).toBeLessThan(st.frames);
    expect(st.framesDelivered).toBeGreaterThan(0.8 * st.frames);
    expect(r.delivered).toBeLessThan(r.sent);
  });

  it('GCC ceiling tracks the link while feedback arrives, holds ~3 s without it, then falls, and ICE stops the carrier', () => {
    // Offer above a 1 Mbps link: the ceiling grows from 300 kbps but stays near the link.
    const r = run({ seconds: 30, offerBps: 3_000_000, fwd: { rateMbps: 1 }, reverseDown: [15_000, 25_000] });
    expect(r.ceil[14]).toBeGreaterThan(350_000);
    expect(r.ceil[14]).toBeLessThan(1_500_000);
    // Reverse link dead at 15-25 s: held at 17 s, lower by 20 s, carrier closed after ~5.5 s, reopened after.
    expect(r.ceil[17]).toBeGreaterThan(0.9 * r.ceil[15]);
    expect(r.ceil[20]).toBeLessThan(0.9 * r.ceil[15]);
    expect(r.open[19]).toBe(true);
    expect(r.open[22]).toBe(false);
    expect(r.open[27]).toBe(true);
    expect(r.perSec[17]).toBeGreaterThan(0); // still delivers without feedback
    expect(r.perSec[23]).toBe(0); // stopped by ICE
    expect(r.c.stats().iceDisconnects).toBe(1);
  });

  it('refuses beyond its queue bound and when closed', () => {
    const now = 0;
    const c = new RtpCarrierModel(
      () => {},
      () => {},
      () => now,
      { maxQueueBytes: 2500 },
    );
    expect(c.send(new Uint8Array(1200))).toBe(true);
    expect(c.send(new Uint8Array(1200))).toBe(true);
    expect(c.send(new Uint8Array(1200))).toBe(false);
    expect(c.stats().datagramsRefused).toBe(1);
    c.close();
    expect(c.open).toBe(false);
    expect(c.send(new Uint8Array(10))).toBe(false);
    c.onReverseArrival(now); // closed by its owner: stays closed
    expect(c.open).toBe(false);
    for (const bad of [{ maxFps: 0 }, { rtpPacketBytes: 20 }]) {
      expect(
        () =>
          new RtpCarrierModel(
            () => {},
            () => {},
            () => 0,
            bad,
          ),
        JSON.stringify(bad),
      ).toThrow(RangeError);
    }
  });
});
