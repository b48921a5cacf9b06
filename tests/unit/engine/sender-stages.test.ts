/**
 * The sender's stages on their own (src/engine/sender.ts wires them):
 * NACK responder, feedback seq filter, key frame request gate, frame
 * dropper, congestion-window pushback, probe sender, path liveness.
 */
import { describe, expect, it } from 'vitest';
import { CongestionWindowPushback } from '../../../src/cc/congestion-window-pushback.js';
import { ProbeSender } from '../../../src/cc/probe-sender.js';
import type { BandwidthEstimator, PathProber, ProbeCluster } from '../../../src/cc/types.js';
import { Priority, type OutgoingPacket } from '../../../src/core/types.js';
import { FrameDropper } from '../../../src/engine/frame-dropper.js';
import { KeyframeRequestGate } from '../../../src/engine/keyframe-gate.js';
import { MAX_RTX_PER_PACKET, NackResponder } from '../../../src/feedback/nack-responder.js';
import { FeedbackSeqFilter } from '../../../src/sched/feedback-filter.js';
import { PathManager } from '../../../src/sched/path-manager.js';
import { completionTimeMs, fastestPath } from '../../../src/sched/path-util.js';

const MS = 1000;

function pkt(flowSeq: number, frameId: number): OutgoingPacket {
  return { streamId: 0, flowSeq, frameId, priority: Priority.Media, nalClass: 1, sizeBytes: 1000, body: new Uint8Array([flowSeq & 0xff]) };
}

describe('NackResponder', () => {
  it('answers a NACK once per guard interval, at most MAX_RTX_PER_PACKET times, with the same bytes', () => {
    const h = new NackResponder(16);
    h.record(pkt(5, 1), 0, 0);
    const first: number[] = [];
    const r1 = h.onNack([5], 10 * MS, 50 * MS, 0, 0, (p) => first.push(p));
    expect(r1).toHaveLength(1);
    expect(r1[0].isRetransmission).toBe(true);
    expect(r1[0].priority).toBe(Priority.Retransmission);
    expect(r1[0].body).toEqual(new Uint8Array([5]));
    expect(first).toEqual([0]);
    // the same NACK via the other path, inside the guard: not answered again
    expect(h.onNack([5], 20 * MS, 50 * MS, 0, 0, () => {})).toHaveLength(0);
    let sent = 1;
    for (let t = 100; t < 900; t += 100) sent += h.onNack([5], t * MS, 50 * MS, 0, 0, () => {}).length;
    expect(sent).toBe(MAX_RTX_PER_PACKET);
  });

  it('counts packets that left the ring, are too old, or precede the newest key frame', () => {
    const h = new NackResponder(4);
    for (let s = 0; s < 8; s++) h.record(pkt(s, s < 4 ? 1 : 3), 0, 0);
    expect(h.onNack([1], 10 * MS, 0, 0, 0, () => {})).toHaveLength(0); // overwritten by seq 5
    expect(h.onNack([6], 10 * MS, 0, 4, 0, () => {})).toHaveLength(0); // frame 3 < key frame 4
    expect(h.onNack([7], 2_000 * MS, 0, 0, 0, () => {})).toHaveLength(0); // older than 1 s
    expect(h.stats()).toEqual({ nacksReceived: 3, retransmissionsUnavailable: 1, retransmissionsTooOld: 2 });
  });

  it("does not answer NACKs of abandoned packets; lists a path's recent media oldest first", () => {
    const h = new NackResponder(64);
    for (let s = 10; s < 14; s++) h.record(pkt(s, 2), s % 2, s * MS);
    h.abandon(12);
    expect(h.onNack([12], 20 * MS, 0, 0, 0, () => {})).toHaveLength(0);
    expect(h.sentOnPathSince(1, 0, 0).map((r) => r.flowSeq)).toEqual([11, 13]);
    expect(h.sentOnPathSince(0, 0, 0).map((r) => r.flowSeq)).toEqual([10]); // 12 abandoned
    expect(() => new NackResponder(0)).toThrow(RangeError);
  });
});

describe('FeedbackSeqFilter', () => {
  it('passes the first copy of each seq in any order and rejects later copies and stale seqs', () => {
    const f = new FeedbackSeqFilter(4);
    expect(f.accept(10)).toBe('newest');
    expect(f.accept(11)).toBe('newest');
    expect(f.accept(10)).toBe('duplicate'); // late copy after a newer one
    expect(f.accept(9)).toBe('older');
    expect(f.accept(11)).toBe('duplicate');
    expect(f.accept(1)).toBe('duplicate'); // beyond the window: cannot tell
    expect(f.accept(0xffffffff + 13)).toBe('newest'); // uint32 wrap: 12
  });
});

describe('KeyframeRequestGate', () => {
  it('coalesces requests while the last key frame can answer them (coalesceTransmit: its transmit time at the target)', () => {
    const g = new KeyframeRequestGate(true);
    expect(g.admit(0, 50)).toBe(true);
    // 100 kB at 400 kbps: 2 s on the wire
    g.onKeyFrameSent(7, 100_000, 400_000, 1_000 * MS);
    expect(g.lastKeyFrameId).toBe(7);
    expect(g.admit(1_300 * MS, 50)).toBe(false);
    expect(g.admit(2_900 * MS, 50)).toBe(false); // still in flight
    expect(g.admit(3_100 * MS, 50)).toBe(true);
    // a small key frame: 500 ms or 2 x RTT
    g.onKeyFrameSent(8, 1_000, 4_000_000, 10_000 * MS);
    expect(g.admit(10_400 * MS, 50)).toBe(false);
    expect(g.admit(10_400 * MS, 10)).toBe(false);
    expect(g.admit(10_600 * MS, 10)).toBe(true);
    expect(g.admit(10_600 * MS, 400)).toBe(false); // 2 x RTT = 800 ms
  });
});

describe('FrameDropper', () => {
  const cfg = { dropQueueFrames: 3, maxConsecutiveDrops: 2, upperLayerDropFactor: 0.5 };
  it('drops delta frames behind a long queue, never a key frame, never more than maxConsecutiveDrops in a row', () => {
    const d = new FrameDropper(cfg);
    const long = (): number => 500; // ms, > 3 frames at 30 fps
    expect(d.shouldDrop(true, 30, long)).toBe(false);
    expect([d.shouldDrop(false, 30, long), d.shouldDrop(false, 30, long), d.shouldDrop(false, 30, long)]).toEqual([true, true, false]);
    expect(d.shouldDrop(false, 30, () => 20)).toBe(false);
    expect(d.shouldDrop(false, 30, () => Infinity)).toBe(false); // no usable path: nothing to measure
    expect(d.shouldDrop(false, 30, () => 60, 1)).toBe(true); // upper layer: half the budget (50 ms)
    expect(d.shouldDrop(false, 30, () => 60, 0)).toBe(false);
    expect(d.dropped).toBe(3);
  });
  it('is off at dropQueueFrames 0 and rejects bad settings', () => {
    expect(new FrameDropper({ ...cfg, dropQueueFrames: 0 }).shouldDrop(false, 30, () => 1e9)).toBe(false);
    expect(() => new FrameDropper({ ...cfg, maxConsecutiveDrops: -1 })).toThrow(RangeError);
    expect(() => new FrameDropper({ ...cfg, upperLayerDropFactor: 2 })).toThrow(RangeError);
  });
});

describe('CongestionWindowPushback', () => {
  it('lowers the ratio while the window is overfull and restores it when it drains', () => {
    const p = new CongestionWindowPushback();
    let t = 0;
    for (let i = 0; i < 20; i++, t += 25 * MS) if (p.due(t)) p.update(10_000, 20_000);
    expect(p.ratio).toBeLessThan(0.3);
    expect(p.due(t - 10 * MS)).toBe(false);
    p.update(10_000, 500);
    expect(p.ratio).toBe(1);
    for (let i = 0; i < 100; i++) p.update(10_000, 1e6);
    expect(p.ratio).toBeGreaterThanOrEqual(0.1);
    p.update(0, 1e6); // no usable path: unchanged
    expect(p.ratio).toBeCloseTo(0.1);
  });
});

describe('ProbeSender', () => {
  function fakeProber(clusters: ProbeCluster[]): PathProber & { sent: number[]; buffered: (number | undefined)[] } {
    const sent: number[] = [];
    const buffered: (number | undefined)[] = [];
    return {
      sent,
      buffered,
      start: () => clusters.splice(0),
      onPacketSent: (id, _seq, _size, _t, bufferedBytes) => {
        sent.push(id);
        buffered.push(bufferedBytes);
      },
      onReport: () => [],
      requestProbe: (_n, bps) => ({ id: 99, targetBps: bps, minPackets: 2, minBytes: 0 }),
      setApplicationLimited: () => {},
    };
  }
  const est = { targetRateBps: () => 1_000_000 } as unknown as BandwidthEstimator;

  it('sends a cluster paced at its rate and stops when the path refuses a packet', () => {
    const pr = fakeProber([{ id: 1, targetBps: 1_200_000, minPackets: 5, minBytes: 0 }]);
    const ps = new ProbeSender(pr, est);
    let seq = 0;
    const send = () => ({ pathSeq: seq++, bytes: 1500 });
    ps.sendDue(0, () => 0, 0, send);
    expect(pr.sent).toEqual([1]); // next packet 10 ms later (1500 B at 1.2 Mbps)
    expect(ps.nextUs(0)).toBe(10 * MS);
    for (let t = 10; t <= 60; t += 10) ps.sendDue(t * MS, () => 0, 0, send);
    expect(pr.sent).toEqual([1, 1, 1, 1, 1]);
    expect(ps.nextUs(100 * MS)).toBeUndefined();
    // a failover probe waits for the queue to drain, then goes out
    ps.scheduleFailoverProbe(3_000_000, 200 * MS);
    ps.sendDue(200 * MS, () => 0, 50_000, send);
    expect(pr.sent).toHaveLength(5);
    ps.sendDue(220 * MS, () => 0, 0, send);
    expect(pr.sent.slice(5)).toEqual([99]);
    ps.sendDue(
      230 * MS,
      () => 0,
      0,
      () => undefined,
    ); // refused: cluster abandoned
    expect(ps.nextUs(230 * MS)).toBeUndefined();
  });

  it("tells the prober the transport's send buffer after each probe write (what GccProber's start-up re-probe reads)", () => {
    const pr = fakeProber([{ id: 1, targetBps: 12_000_000, minPackets: 3, minBytes: 0 }]);
    const ps = new ProbeSender(pr, est);
    let buffered = 4000; // the first key frame still in the datachannel
    let seq = 0;
    ps.sendDue(
      0,
      () => buffered,
      0,
      () => {
        buffered += 1200;
        return { pathSeq: seq++, bytes: 1200 };
      },
    );
    for (let t = 1; t <= 3; t++)
      ps.sendDue(
        t * MS,
        () => buffered,
        0,
        () => ({ pathSeq: seq++, bytes: 1200 }),
      );
    expect(pr.buffered).toEqual([5200, 5200, 5200]);
  });
});

describe('path liveness (PathManager)', () => {
  it('a path is suspect after max(250 ms, 2 x SRTT + 100 ms) of silence; fast failover only while another path reports', () => {
    const m = new PathManager({ downAfterMs: 500 });
    for (const id of [0, 1]) {
      m.addPath(id, 0);
      m.onTransportState(id, 'connected', 0);
    }
    const srtt = (): number => 40;
    const sched = { isEnabled: () => true, silenceThresholdUs: (_id: number, srttMs: number) => Math.max(100_000, 2 * srttMs * 1000) };
    m.onDataSent(0, 1_000 * MS);
    expect(m.unreportedSinceUs(0)).toBe(1_000 * MS);
    expect(m.isSuspect(0, 1_200 * MS, srtt)).toBe(false);
    expect(m.isSuspect(0, 1_260 * MS, srtt)).toBe(true);
    expect(m.isSuspect(0, 1_110 * MS, srtt, sched)).toBe(true); // path 1 has nothing unreported
    m.onDataSent(1, 900 * MS); // path 1 silent too
    expect(m.isSuspect(0, 1_110 * MS, srtt, sched)).toBe(false);
    m.onReport(0, 1_300 * MS);
    expect(m.unreportedSinceUs(0)).toBeUndefined();
    expect(m.isSuspect(0, 1_300 * MS, srtt)).toBe(false);
  });
});

describe('fastestPath', () => {
  it('picks the least completion time of a typical frame among up paths with a rate', () => {
    const base = { minRttMs: 0, lossRate: 0, inflightBytes: 0, queuedBytes: 0 };
    const paths = [
      { ...base, id: 0, up: true, rateBps: 1e6, goodputBps: 1e6, srttMs: 20 },
      { ...base, id: 1, up: true, rateBps: 8e6, goodputBps: 8e6, srttMs: 60 },
      { ...base, id: 2, up: false, rateBps: 50e6, goodputBps: 50e6, srttMs: 1 },
    ];
    expect(fastestPath(paths, 96_000)).toBe(1); // 12 + 30 ms vs 96 + 10 ms
    expect(fastestPath(paths, 8_000)).toBe(0); // 8 + 10 ms vs 1 + 30 ms
    expect(completionTimeMs(8_000, 1e6, 20)).toBe(18);
    expect(fastestPath([], 1)).toBeUndefined();
  });

  it('times a path without an SRTT sample by its min RTT (a NaN SRTT never made it the fastest)', () => {
    const base = { lossRate: 0, inflightBytes: 0, queuedBytes: 0, up: true, rateBps: 8e6, goodputBps: 8e6 };
    const paths = [
      { ...base, id: 0, srttMs: Number.NaN, minRttMs: 20 },
      { ...base, id: 1, srttMs: 100, minRttMs: 100 },
    ];
    expect(fastestPath(paths, 8_000)).toBe(0); // 1 + 10 ms vs 1 + 50 ms
  });
});
