import { describe, expect, it } from 'vitest';
import type { OutgoingPacket, PathState } from '../../../src/core/types.js';
import { LatencyFrameDropper, MinLatencyScheduler, expectedLatencyMs, queueBytes } from '../../../src/sched/min-latency.js';

const path = (id: number, over: Partial<PathState> = {}): PathState => ({
  id,
  up: true,
  rateBps: 2e6,
  goodputBps: 2e6,
  srttMs: 100,
  minRttMs: 100,
  lossRate: 0,
  inflightBytes: 0,
  queuedBytes: 0,
  ...over,
});
const pkt = (n: number): OutgoingPacket => ({ sizeBytes: 1000, priority: 6, streamId: 0, frameId: n }) as unknown as OutgoingPacket;

describe('overlay-ucb scheduler (Zhang & Lei §3.1.3 Eq. 4-5)', () => {
  it('Eq. 4: SRTT/2 + Q/bw', () => {
    expect(expectedLatencyMs(100, 25_000, 2e6)).toBeCloseTo(50 + 100, 6);
  });

  it('counts bytes in flight beyond the BDP as queue', () => {
    expect(queueBytes(path(0, { inflightBytes: 40_000, queuedBytes: 1000 }))).toBe(1000 + 40_000 - 25_000);
    expect(queueBytes(path(0, { inflightBytes: 10_000 }))).toBe(0);
  });

  it('sends to the lower-latency path until its queue makes the other one faster', () => {
    const s = new MinLatencyScheduler();
    const paths = [path(0, { srttMs: 40 }), path(1, { srttMs: 200 })];
    const out = s.schedule(
      Array.from({ length: 40 }, (_, i) => pkt(i)),
      paths,
      0,
    );
    const on1 = out.filter((a) => a.pathId === 1).length;
    // Path 0 takes packets until 20 ms + Q / 2 Mbps reaches 100 ms (Q = 20 KB = 20 packets), then they alternate.
    expect(out.length).toBe(40);
    expect(on1).toBeGreaterThanOrEqual(8);
    expect(on1).toBeLessThanOrEqual(12);
    expect(out.slice(0, 15).every((a) => a.pathId === 0)).toBe(true);
  });

  it('skips down paths and returns [] with none up', () => {
    const s = new MinLatencyScheduler();
    expect(s.schedule([pkt(0)], [path(0, { up: false })], 0)).toEqual([]);
    expect(s.schedule([pkt(0)], [path(0, { up: false, srttMs: 1 }), path(1)], 0)[0].pathId).toBe(1);
  });

  it('Eq. 14-15: drops a delta frame when d_q + d_en + lambda_min > 400 ms, never a key frame', () => {
    const d = new LatencyFrameDropper();
    d.onEncodeDelay(20);
    expect(d.encodeDelayMs()).toBe(20);
    d.onEncodeDelay(40);
    expect(d.encodeDelayMs()).toBeCloseTo(0.1 * 20 + 0.9 * 40, 6);
    expect(d.shouldDrop(0, 300, false)).toBe(false);
    expect(d.shouldDrop(50, 330, false)).toBe(true);
    expect(d.shouldDrop(50, 330, true)).toBe(false);
    expect(d.shouldDrop(0, Number.POSITIVE_INFINITY, false)).toBe(false);
    expect(d.dropped).toBe(1);
  });
});
