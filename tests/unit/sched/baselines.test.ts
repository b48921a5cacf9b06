import { describe, expect, it } from 'vitest';
import { Priority } from '../../../src/core/types.js';
import { MinRttScheduler } from '../../../src/sched/minrtt.js';
import { MRtpScheduler } from '../../../src/sched/mrtp.js';
import { MTputScheduler } from '../../../src/sched/mtput.js';
import { RoundRobinScheduler } from '../../../src/sched/roundrobin.js';
import { SinglePathScheduler } from '../../../src/sched/single.js';
import { SchedError } from '../../../src/sched/errors.js';
import { counts, media, path, pkt } from './helpers.js';
import { registerAllStrategies } from '../../../src/strategies.js';

// Every shipped strategy by name (the library registers only the defaults).
registerAllStrategies();

describe('single', () => {
  it('uses only its path, nothing when that path is down', () => {
    const s = new SinglePathScheduler(1);
    const paths = [path(0, 50, 5), path(1, 1, 200), path(2, 50, 5)];
    const out = s.schedule([pkt(Priority.Keyframe), ...media(9)], paths, 0);
    expect(out.map((a) => a.pathId)).toEqual(new Array(10).fill(1));
    expect(s.schedule(media(3), [path(0, 50, 5), path(1, 1, 200, { up: false })], 0)).toEqual([]);
    expect(s.schedule(media(3), [path(0, 50, 5)], 0)).toEqual([]);
  });

  it('rejects an invalid path id', () => {
    expect(() => new SinglePathScheduler(8)).toThrow(SchedError);
    expect(() => new SinglePathScheduler(-1)).toThrow(/invalid path id/);
  });
});

describe('roundrobin', () => {
  it('cycles over up paths per packet and keeps its cursor across batches', () => {
    const s = new RoundRobinScheduler();
    const paths = [path(0, 1, 10), path(1, 1, 10), path(2, 1, 10, { up: false }), path(3, 1, 10)];
    expect(s.schedule(media(4), paths, 0).map((a) => a.pathId)).toEqual([0, 1, 3, 0]);
    expect(s.schedule(media(3), paths, 0).map((a) => a.pathId)).toEqual([1, 3, 0]);
    // Priorities are not special.
    expect(s.schedule([pkt(Priority.Keyframe), pkt(Priority.Keyframe)], paths, 0).map((a) => a.pathId)).toEqual([1, 3]);
  });
});

describe('minrtt (SRTT)', () => {
  // window = rate * max(srtt, 20 ms) / 8 * 2: path 0 = 1 Mbps * 20 ms / 8 * 2 = 5000 bytes.
  const paths = () => [path(0, 1, 10), path(1, 10, 50)];

  it('prefers the lowest SRTT until its window fills, then the next', () => {
    const s = new MinRttScheduler();
    const batch = media(10, { sizeBytes: 1000 });
    const ids = s.schedule(batch, paths(), 0).map((a) => a.pathId);
    expect(ids).toEqual([0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
  });

  it('counts in-flight and queued bytes against the window', () => {
    const s = new MinRttScheduler();
    const p = [path(0, 1, 10, { inflightBytes: 3000, queuedBytes: 1500 }), path(1, 10, 50)];
    expect(s.schedule(media(3, { sizeBytes: 1000 }), p, 0).map((a) => a.pathId)).toEqual([0, 1, 1]);
  });

  it('falls back to the lowest SRTT when every window is full', () => {
    const s = new MinRttScheduler();
    const p = [path(0, 1, 30, { inflightBytes: 1e6 }), path(1, 1, 10, { inflightBytes: 1e6 })];
    expect(s.schedule(media(3), p, 0).map((a) => a.pathId)).toEqual([1, 1, 1]);
  });

  it('ignores priorities', () => {
    const s = new MinRttScheduler();
    const p = [path(0, 1, 10, { inflightBytes: 1e6 }), path(1, 10, 50)];
    expect(s.schedule([pkt(Priority.Keyframe)], p, 0)[0].pathId).toBe(1);
  });
});

describe('mtput (M-TPUT)', () => {
  it('splits in proportion to goodput, falling back to rate, also for 1-packet batches', () => {
    const s = new MTputScheduler();
    const p = [path(0, 1, 10, { goodputBps: 6e6 }), path(1, 50, 10, { goodputBps: 2e6 }), path(2, 2, 10, { goodputBps: 0 })];
    // Weights 6 : 2 : 2 (path 2 has no goodput yet: its rate 2 Mbps is used).
    const total = [0, 0, 0];
    for (let i = 0; i < 1000; i++) {
      const c = counts(s.schedule(media(1), p, i));
      for (let j = 0; j < 3; j++) total[j] += c[j];
    }
    expect(total[0]).toBeGreaterThanOrEqual(598);
    expect(total[0]).toBeLessThanOrEqual(602);
    expect(Math.abs(total[1] - 200)).toBeLessThanOrEqual(2);
    expect(Math.abs(total[2] - 200)).toBeLessThanOrEqual(2);
  });

  it('interleaves rather than sending blocks', () => {
    const s = new MTputScheduler();
    const ids = s.schedule(media(4), [path(0, 1, 10), path(1, 1, 10)], 0).map((a) => a.pathId);
    expect(ids).toEqual([0, 1, 0, 1]);
  });
});

describe('mrtp (M-RTP)', () => {
  it('weights paths by rate * (1 - loss)', () => {
    const s = new MRtpScheduler();
    const p = [path(0, 10, 10, { lossRate: 0 }), path(1, 10, 10, { lossRate: 0.05 }), path(2, 20, 10, { lossRate: 0.5 })];
    // Path 2 is congested (loss > 10 %) and avoided; 10 : 9.5 on the others.
    const total = [0, 0, 0];
    for (let i = 0; i < 390; i++) {
      const c = counts(s.schedule(media(1), p, i));
      for (let j = 0; j < 3; j++) total[j] += c[j];
    }
    expect(total[2]).toBe(0);
    expect(Math.abs(total[0] - 200)).toBeLessThanOrEqual(2);
    expect(Math.abs(total[1] - 190)).toBeLessThanOrEqual(2);
  });

  it('uses the loss-discounted weights when every path is congested', () => {
    const s = new MRtpScheduler();
    const p = [path(0, 10, 10, { lossRate: 0.2 }), path(1, 10, 10, { lossRate: 0.6 })];
    const c = counts(s.schedule(media(120), p, 0));
    // 8 : 4
    expect(Math.abs(c[0] - 80)).toBeLessThanOrEqual(1);
    expect(Math.abs(c[1] - 40)).toBeLessThanOrEqual(1);
  });
});
