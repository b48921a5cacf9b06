/**
 * LoLa Eq. 2-3 delay-budget encoder target (src/sched/delay-budget.ts) and
 * its two users: LoLa's encoder fraction (with the `encoderTarget: false`
 * ablation) and Converge's `delayBudgetMs` encoder cap.
 */
import { describe, expect, it } from 'vitest';
import { ConvergeScheduler } from '../../../src/sched/converge.js';
import { DelayBudgetCap, FrameIntervalMeter, MIN_ENCODER_FRACTION, delayBudgetWindow, targetFraction } from '../../../src/sched/delay-budget.js';
import { LolaScheduler } from '../../../src/sched/lola.js';
import { SchedError } from '../../../src/sched/errors.js';
import { media, path } from './helpers.js';

const MTU = 1200;

/** Feed `frames` 33 ms frames of 2 MTUs to `s` over `paths`, from `t0` (µs); returns the last time. */
function frames(s: { schedule: ConvergeScheduler['schedule'] }, paths: Parameters<ConvergeScheduler['schedule']>[1], from: number, count: number, t0: number): number {
  let t = t0;
  for (let f = from; f < from + count; f++) s.schedule(media(2, { frameId: f, sizeBytes: MTU }), paths, (t += 33_000));
  return t;
}

describe('delay budget (LoLa Eq. 2-3)', () => {
  it('Eq. 2: the window is (δ - min RTT / 2) / iat packets, never negative, 0 while iat is unknown', () => {
    expect(delayBudgetWindow(100, 40, 8)).toBe(10);
    expect(delayBudgetWindow(100, 300, 8)).toBe(0);
    expect(delayBudgetWindow(100, 40, 0)).toBe(0);
  });

  it('Eq. 3 fraction: frame bytes at the frame rate over the rate sum, clamped to [0.05, 1], 1 when unknown', () => {
    expect(targetFraction(1000, 0, 1e6)).toBe(1);
    expect(targetFraction(1000, 33, 0)).toBe(1);
    expect(targetFraction(1000, 40, 1e6)).toBeCloseTo(0.2, 9); // 200 kbps of 1 Mbps
    expect(targetFraction(1e6, 33, 1e6)).toBe(1);
    expect(targetFraction(0, 33, 1e6)).toBe(MIN_ENCODER_FRACTION);
  });

  it('the frame interval is timed from new frame ids only, pauses of 1 s or more ignored', () => {
    const m = new FrameIntervalMeter();
    m.note(media(1, { frameId: 1 }), 0);
    m.note(media(1, { frameId: 1 }), 10_000); // the same frame's FEC batch
    m.note(media(1, { frameId: 2 }), 40_000);
    expect(m.intervalMs).toBe(40);
    m.note(media(1, { frameId: 3 }), 2_040_000);
    expect(m.intervalMs).toBe(40);
  });

  it('the cap falls as the paths hold more than their delay budget and recovers when they drain', () => {
    const cap = new DelayBudgetCap(100, 0.8);
    const idle = [path(0, 1.2, 40), path(1, 1.2, 40)]; // cwnd 10 each
    let t = 0;
    for (let f = 0; f < 10; f++) cap.observe(media(2, { frameId: f }), idle, (t += 33_000), true);
    expect(cap.fraction()).toBe(1);
    const full = [path(0, 1.2, 40, { inflightBytes: 5 * MTU, queuedBytes: 4 * MTU }), path(1, 1.2, 40, { inflightBytes: 9 * MTU })];
    for (let f = 10; f < 20; f++) cap.observe(media(2, { frameId: f }), full, (t += 33_000), true);
    // (0.8 x 10 - 9) < 0 on both paths: the floor.
    expect(cap.fraction()).toBe(MIN_ENCODER_FRACTION);
    for (let f = 20; f < 30; f++) cap.observe(media(2, { frameId: f }), idle, (t += 33_000), true);
    expect(cap.fraction()).toBe(1);
  });

  it('queuedGoodputMs: a queued path is timed at its goodput, not at its stale rate; an unqueued one as before', () => {
    // A fading path: S = 2.4 Mbps (iat 4 ms, cwnd (200 - 15) / 4 = 46 MTU), it delivers 1.2 Mbps (iat 8 ms, cwnd 23 MTU),
    // SRTT 200 ms over a 30 ms min RTT, 25 MTU in flight.
    const fading = [path(0, 2.4, 200, { minRttMs: 30, goodputBps: 1.2e6, inflightBytes: 25 * MTU })];
    const run = (cap: DelayBudgetCap, paths: typeof fading): number => {
      let t = 0;
      for (let f = 0; f < 10; f++) cap.observe(media(2, { frameId: f }), paths, (t += 33_000), true);
      return cap.fraction();
    };
    expect(run(new DelayBudgetCap(200, 0.8), fading)).toBe(1); // 0.8 x 46 - 25 = 12 MTU of room per frame
    expect(run(new DelayBudgetCap(200, 0.8, -1, 60), fading)).toBe(MIN_ENCODER_FRACTION); // 0.8 x 23 - 25 < 0
    // App-limited, not queued (SRTT = min RTT): goodput says nothing about capacity, S times it either way.
    const idle = [path(0, 2.4, 30, { goodputBps: 0.6e6, inflightBytes: 25 * MTU })];
    expect(run(new DelayBudgetCap(200, 0.8, -1, 60), idle)).toBe(run(new DelayBudgetCap(200, 0.8), idle));
  });

  it('non-frame batches (FEC, retransmissions of old frames) do not time the frame interval', () => {
    const cap = new DelayBudgetCap(100, 0.8);
    const paths = [path(0, 1.2, 40, { inflightBytes: 7 * MTU })];
    cap.observe(media(2, { frameId: 1 }), paths, 0, true);
    cap.observe(media(2, { frameId: 0 }), paths, 1_000, false);
    cap.observe(media(2, { frameId: 2 }), paths, 33_000, true);
    // (0.8 x 10 - 7) = 1 MTU per 33 ms = 291 kbps of 1.2 Mbps.
    expect(cap.fraction()).toBeCloseTo((MTU * 8) / 0.033 / 1.2e6, 6);
  });
});

describe('LoLa encoder target ablation', () => {
  it('encoderTarget: false reports 1 where the default follows Eq. 3; the split is the same', () => {
    const on = new LolaScheduler();
    const off = new LolaScheduler({ encoderTarget: false });
    const loaded = [path(0, 1.2, 40, { inflightBytes: 7 * MTU }), path(1, 1.2, 40, { inflightBytes: 7 * MTU })];
    frames(on, loaded, 0, 10, 0);
    frames(off, loaded, 0, 10, 0);
    expect(on.encoderRateFraction()).toBeLessThan(0.5);
    expect(off.encoderRateFraction()).toBe(1);
    const a = on.schedule(media(6, { frameId: 99, sizeBytes: MTU }), loaded, 400_000).map((x) => x.pathId);
    const b = off.schedule(media(6, { frameId: 99, sizeBytes: MTU }), loaded, 400_000).map((x) => x.pathId);
    expect(a).toEqual(b);
  });
});

describe('Converge delay-budget encoder cap (delayBudgetMs)', () => {
  const loaded = [path(0, 1.2, 40, { inflightBytes: 9 * MTU }), path(1, 1.2, 40, { inflightBytes: 9 * MTU })];
  const idle = [path(0, 1.2, 40), path(1, 1.2, 40)];

  it('off by 0: the encoder fraction ignores the backlog', () => {
    const s = new ConvergeScheduler({ delayBudgetMs: 0 });
    frames(s, loaded, 0, 20, 0);
    expect(s.encoderRateFraction()).toBe(1);
  });

  it('on, LoLa literal N_f (inflightSlackMs -1): the fraction drops while the paths hold more than the budget and comes back once they drain', () => {
    const s = new ConvergeScheduler({ delayBudgetMs: 100, inflightSlackMs: -1 });
    let t = frames(s, idle, 0, 20, 0);
    expect(s.encoderRateFraction()).toBe(1);
    t = frames(s, loaded, 20, 20, t);
    expect(s.encoderRateFraction()).toBe(MIN_ENCODER_FRACTION);
    frames(s, idle, 40, 20, t);
    expect(s.encoderRateFraction()).toBe(1);
  });

  it('never raises the fraction above Converge own (Eq. 2 moves, best-path floor), and the split is unchanged', () => {
    const a = new ConvergeScheduler({ delayBudgetMs: 0 });
    const b = new ConvergeScheduler({ delayBudgetMs: 1000 });
    const paths = [path(0, 4, 20), path(1, 0.5, 200)];
    let t = 0;
    for (let f = 0; f < 30; f++) {
      t += 33_000;
      const pa = a.schedule(media(8, { frameId: f, sizeBytes: MTU }), paths, t).map((x) => x.pathId);
      const pb = b.schedule(media(8, { frameId: f, sizeBytes: MTU }), paths, t).map((x) => x.pathId);
      expect(pb).toEqual(pa);
    }
    expect(b.encoderRateFraction()).toBeLessThanOrEqual(a.encoderRateFraction());
  });

  it('default N_f counts only the bytes beyond the pipe: a long pipe alone does not cut the encoder, a network backlog does', () => {
    // 1.2 Mbps, min RTT 40 ms: pipe = 1.2 Mbps x (40 + 50) ms = 13.5 kB (11.25 MTU); window (200 - 20) ms = 22.5 MTU.
    const s = new ConvergeScheduler({ delayBudgetMs: 200 });
    const pipeFull = [path(0, 1.2, 40, { inflightBytes: 11 * MTU }), path(1, 1.2, 40, { inflightBytes: 11 * MTU })];
    let t = frames(s, pipeFull, 0, 20, 0);
    expect(s.encoderRateFraction()).toBe(1);
    // 18 MTUs beyond the pipe (> 0.8 x 22.5) on each: the floor.
    const backlog = [path(0, 1.2, 40, { inflightBytes: 30 * MTU }), path(1, 1.2, 40, { inflightBytes: 11 * MTU, queuedBytes: 19 * MTU })];
    t = frames(s, backlog, 20, 20, t);
    expect(s.encoderRateFraction()).toBe(MIN_ENCODER_FRACTION);
    frames(s, pipeFull, 40, 20, t);
    expect(s.encoderRateFraction()).toBe(1);
  });

  it('budgetQueuedGoodputMs (opt-in) times a queued path at its goodput: a fading path cuts the encoder sooner', () => {
    // Stale S = 2.4 Mbps, goodput 1.2 Mbps, SRTT 200 ms over a 30 ms min RTT, 40 MTU in flight (20 beyond a pipe at S).
    const fading = (rateMbps: number) => [path(0, rateMbps, 200, { minRttMs: 30, goodputBps: 1.2e6, inflightBytes: 40 * MTU })];
    const off = new ConvergeScheduler({ delayBudgetMs: 200 });
    const on = new ConvergeScheduler({ delayBudgetMs: 200, budgetQueuedGoodputMs: 60 });
    frames(off, fading(2.4), 0, 20, 0);
    frames(on, fading(2.4), 0, 20, 0);
    expect(off.encoderRateFraction()).toBe(1);
    expect(on.encoderRateFraction()).toBe(MIN_ENCODER_FRACTION);
  });

  it('rejects a negative or non-finite budget and a non-positive margin', () => {
    expect(() => new ConvergeScheduler({ delayBudgetMs: -1 })).toThrow(SchedError);
    expect(() => new ConvergeScheduler({ delayBudgetMs: Number.NaN })).toThrow(SchedError);
    expect(() => new ConvergeScheduler({ delayBudgetMargin: 0 })).toThrow(SchedError);
    expect(() => new ConvergeScheduler({ budgetQueuedGoodputMs: -1 })).toThrow(SchedError);
  });
});

describe('Converge network backlog in completion times (inflightSlackMs)', () => {
  // Path 0 is faster but holds 200 kB in flight, 130 kB beyond its pipe at min RTT + 50 ms (70 kB): 130 ms of backlog.
  const paths = [path(0, 8, 20, { inflightBytes: 200_000 }), path(1, 4, 40)];

  it('a path whose in-flight bytes exceed its pipe is not the fast path; the frame goes where it arrives first', () => {
    const out = new ConvergeScheduler().schedule(media(10, { sizeBytes: MTU }), paths, 0);
    expect(out.filter((a) => !a.probe).every((a) => a.pathId === 1)).toBe(true);
  });

  it('-1 counts the sender queue only (the frame goes to path 0, as before)', () => {
    const out = new ConvergeScheduler({ inflightSlackMs: -1 }).schedule(media(10, { sizeBytes: MTU }), paths, 0);
    expect(out.filter((a) => !a.probe).every((a) => a.pathId === 0)).toBe(true);
  });

  it('in-flight bytes within the pipe change nothing', () => {
    const normal = [path(0, 8, 20, { inflightBytes: 60_000 }), path(1, 4, 40)];
    const a = new ConvergeScheduler().schedule(media(10, { sizeBytes: MTU }), normal, 0).map((x) => x.pathId);
    const b = new ConvergeScheduler({ inflightSlackMs: -1 }).schedule(media(10, { sizeBytes: MTU }), normal, 0).map((x) => x.pathId);
    expect(a).toEqual(b);
  });

  it('rejects a slack below -1 or non-finite', () => {
    expect(() => new ConvergeScheduler({ inflightSlackMs: -2 })).toThrow(SchedError);
    expect(() => new ConvergeScheduler({ inflightSlackMs: Number.POSITIVE_INFINITY })).toThrow(SchedError);
  });
});
