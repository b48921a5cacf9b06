import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { Priority, type PathState } from '../../../src/core/types.js';
import { ConvergeScheduler } from '../../../src/sched/converge.js';
import { SchedError } from '../../../src/sched/errors.js';
import { deliveryRateBps } from '../../../src/sched/path-util.js';
import { counts, fec, media, path, pathOf, pkt, probes } from './helpers.js';

const MS = 1000;
/** The paper's Eq. 1 split, without our best-path floor (deadlineSlackMs -1). */
const PAPER = { deadlineSlackMs: -1 } as const;
const twoPaths = (): PathState[] => [path(0, 15, 30), path(1, 5, 60)];
const fb = (pathId: number, alpha: number, seq: number, fcdMs = 10) => ({ pathId, alpha, fcdMs, seq });

describe('Converge Table 2 priorities and Algorithm 1 fast path', () => {
  it('puts every retransmission/keyframe/SPS/PPS/FEC packet on the fast path when P_max allows', () => {
    const s = new ConvergeScheduler(PAPER);
    const prio = [
      pkt(Priority.Retransmission, { isRetransmission: true }),
      pkt(Priority.Retransmission, { isRetransmission: true }),
      ...Array.from({ length: 10 }, () => pkt(Priority.Keyframe)),
      pkt(Priority.Sps),
      pkt(Priority.Pps),
      fec(1),
      fec(1),
    ];
    const batch = [...media(12), ...prio, ...media(12)]; // N = 40
    const out = s.schedule(batch, twoPaths(), 0);
    for (const p of prio) expect(pathOf(out, p)).toBe(0);
    expect(counts(out).slice(0, 2)).toEqual([30, 10]);
  });

  it('chooses the fast path by completion time N*k/goodput + rtt/2, not by id or rate alone', () => {
    // A: 20 Mbps but 100 ms RTT; B: 2 Mbps, 10 ms RTT. k = 1200 B.
    const paths = [path(0, 20, 100), path(1, 2, 10)];
    const s = new ConvergeScheduler(PAPER);
    // N = 1: cpt_A = 0.48 + 50 ms, cpt_B = 4.8 + 5 ms -> B.
    const rt = pkt(Priority.Retransmission, { isRetransmission: true });
    expect(s.schedule([rt], paths, 0)[0].pathId).toBe(1);
    // N = 200: cpt_A = 96 + 50 ms, cpt_B = 960 + 5 ms -> A.
    const rt2 = pkt(Priority.Retransmission, { isRetransmission: true });
    const out = s.schedule([...media(199), rt2], paths, 1 * MS);
    expect(pathOf(out, rt2)).toBe(0);
  });

  it('uses rateBps when goodput is 0 (unknown) for the completion time', () => {
    const paths = [path(0, 20, 20, { goodputBps: 0 }), path(1, 1, 20)];
    const s = new ConvergeScheduler(PAPER);
    const rt = pkt(Priority.Retransmission, { isRetransmission: true });
    // With goodput 0 taken literally path 0 would look infinitely slow.
    expect(pathOf(s.schedule([rt, ...media(9)], paths, 0), rt)).toBe(0);
  });

  it('times a path whose target was cut below its stale goodput at the target, not at the goodput', () => {
    // wc:8_5 at 43 s: path 0 collapsed; GCC already cut S_0 to 0.1 Mbps, but its acknowledged
    // goodput still says 9.5 Mbps (nothing is acknowledged any more, so it holds). Path 1: 0.4 Mbps, idle.
    const paths = [path(0, 0.1, 80, { goodputBps: 9.5e6 }), path(1, 0.4, 30, { goodputBps: 0.02e6 })];
    const rt = pkt(Priority.Retransmission, { isRetransmission: true });
    // N = 10, k = 1200 B: cpt_0 = 960 ms + 40 ms at S_0 (10 + 40 ms at the stale goodput); cpt_1 = 240 + 15 ms.
    const out = new ConvergeScheduler(PAPER).schedule([rt, ...media(9)], paths, 0);
    expect(pathOf(out, rt)).toBe(1);
  });

  it('still times a lightly loaded path at its target, and a loaded one at a goodput above S x (1 - loss)', () => {
    expect(deliveryRateBps(path(0, 5, 20, { goodputBps: 0.2e6 }))).toBe(5e6);
    expect(deliveryRateBps(path(0, 5, 20, { goodputBps: 3e6, lossRate: 0.5 }))).toBe(3e6);
    expect(deliveryRateBps(path(0, 5, 20, { goodputBps: 8e6 }))).toBe(5e6);
    expect(deliveryRateBps(path(0, 0, 20, { goodputBps: 1e6 }))).toBe(1e6);
    expect(deliveryRateBps(path(0, Number.NaN, 20, { goodputBps: Number.NaN }))).toBe(0);
    expect(deliveryRateBps(path(0, Number.NaN, 20, { goodputBps: 2e6 }))).toBe(2e6);
    expect(deliveryRateBps(path(0, 5, 20, { goodputBps: 8e6, lossRate: 0.2 }))).toBe(5e6);
    expect(deliveryRateBps(path(0, 5, 20, { goodputBps: 1e6, lossRate: 1.5 }))).toBe(1e6);
  });

  it('overflows priority packets past P_max in Table 2 order to the next paths by completion time', () => {
    // Shares 10/5/5 Mbps of N = 12 -> P = 6/3/3; cpt order 0, 1, 2.
    const paths = [path(0, 10, 10), path(1, 5, 20), path(2, 5, 40)];
    const s = new ConvergeScheduler({ ...PAPER, priorityBudgetMs: 0 }); // P_max = the Eq. 1 share only
    const kf = Array.from({ length: 6 }, () => pkt(Priority.Keyframe));
    const rt = [pkt(Priority.Retransmission, { isRetransmission: true }), pkt(Priority.Retransmission, { isRetransmission: true })];
    const sps = pkt(Priority.Sps);
    const pps = pkt(Priority.Pps);
    const m = media(2);
    const batch = [m[0], kf[0], pps, kf[1], rt[0], kf[2], sps, kf[3], kf[4], rt[1], kf[5], m[1]];
    const out = s.schedule(batch, paths, 0);
    expect(out).toHaveLength(12);
    // Retransmissions first, then the first 4 keyframe packets fill P_max = 6 of the fast path.
    for (const p of [...rt, kf[0], kf[1], kf[2], kf[3]]) expect(pathOf(out, p)).toBe(0);
    // Overflow in priority order: keyframe (2) then SPS (3) to path 1 (P = 3) ...
    expect(pathOf(out, kf[4])).toBe(1);
    expect(pathOf(out, kf[5])).toBe(1);
    expect(pathOf(out, sps)).toBe(1);
    // ... then PPS (4) to path 2, and media take what is left (path 2).
    expect(pathOf(out, pps)).toBe(2);
    expect(pathOf(out, m[0])).toBe(2);
    expect(pathOf(out, m[1])).toBe(2);
  });

  it('lets priority packets fill the fast path up to one frame interval at its rate (P_max from S_i)', () => {
    // 10 Mbps carries ~34 packets of 1200 bytes in 33 ms: a 12-packet key frame stays whole on path 0,
    // although its Eq. 1 share of the batch would be 6.
    const paths = [path(0, 10, 10), path(1, 5, 20), path(2, 5, 40)];
    const s = new ConvergeScheduler(PAPER);
    const kf = Array.from({ length: 10 }, () => pkt(Priority.Keyframe));
    const out = s.schedule([pkt(Priority.Sps), pkt(Priority.Pps), ...kf], paths, 0);
    expect(out.every((a) => a.pathId === 0)).toBe(true);
    // A slow fast path (0.5 Mbps: ~1 packet per 33 ms) falls back to its share and overflows.
    const slow = [path(0, 0.5, 10), path(1, 0.25, 20)];
    const out2 = new ConvergeScheduler(PAPER).schedule(kf, slow, 0);
    expect(out2.filter((a) => a.pathId === 1).length).toBeGreaterThan(0);
  });

  it('keeps FEC that does not fit on the fast path on the path it protects', () => {
    const paths = [path(0, 10, 10), path(1, 5, 20), path(2, 5, 40)];
    const s = new ConvergeScheduler({ ...PAPER, priorityBudgetMs: 0 }); // P_max = the Eq. 1 share only
    const kf = Array.from({ length: 8 }, () => pkt(Priority.Keyframe));
    const f = [fec(2), fec(2), fec(2), fec(2)];
    const out = s.schedule([...kf, ...f], paths, 0);
    for (const p of kf.slice(0, 6)) expect(pathOf(out, p)).toBe(0);
    for (const p of kf.slice(6)) expect(pathOf(out, p)).toBe(1);
    // Path 1 still had a free slot and comes first by cpt, yet FEC stays on path 2.
    for (const p of f) expect(pathOf(out, p)).toBe(2);
  });

  it('overflows FEC by completion time when its protected path is not up', () => {
    const paths = [path(0, 10, 10), path(1, 5, 20), path(2, 5, 40)];
    const s = new ConvergeScheduler({ ...PAPER, priorityBudgetMs: 0 }); // P_max = the Eq. 1 share only
    const kf = Array.from({ length: 8 }, () => pkt(Priority.Keyframe));
    const f = [fec(5), fec(5), fec(5), fec(undefined)];
    const out = s.schedule([...kf, ...f], paths, 0);
    expect(f.map((p) => pathOf(out, p))).toEqual([1, 2, 2, 2]);
  });

  it('sends everything to the only up path, priorities included', () => {
    const s = new ConvergeScheduler(PAPER);
    const batch = [pkt(Priority.Keyframe), fec(1), ...media(20)];
    const out = s.schedule(batch, [path(0, 1, 30, { up: false }), path(1, 5, 60)], 0);
    expect(counts(out)[1]).toBe(22);
    expect(out.every((a) => a.pathId === 1)).toBe(true);
  });

  it('never uses a down path and returns [] when no path is up', () => {
    const s = new ConvergeScheduler(PAPER);
    const paths = [path(0, 15, 30, { up: false }), path(1, 5, 60), path(2, 5, 10, { up: false })];
    const out = s.schedule([pkt(Priority.Keyframe), fec(0), ...media(30)], paths, 0);
    expect(out.every((a) => a.pathId === 1)).toBe(true);
    expect(s.schedule(media(5), [path(0, 15, 30, { up: false })], 0)).toEqual([]);
    expect(s.schedule(media(5), [], 0)).toEqual([]);
  });
});

describe('Converge Eq. 1 split', () => {
  it('matches S_i / sum(S) over many small batches (carried remainders)', () => {
    const rng = new Rng(7);
    for (const rates of [
      [15, 5],
      [6, 3, 1],
    ]) {
      const paths = rates.map((r, i) => path(i, r, 20 + i * 10));
      const s = new ConvergeScheduler(PAPER);
      const total = new Array(rates.length).fill(0);
      let n = 0;
      for (let b = 0; b < 500; b++) {
        const size = 1 + Math.floor(rng.next() * 40);
        n += size;
        const c = counts(s.schedule(media(size), paths, b * 33 * MS));
        for (let i = 0; i < rates.length; i++) total[i] += c[i];
      }
      const sumR = rates.reduce((a, b) => a + b, 0);
      for (const [i, r] of rates.entries()) expect(Math.abs(total[i] - (n * r) / sumR)).toBeLessThanOrEqual(2);
    }
  });

  it('preserves N exactly with largest-remainder rounding', () => {
    const s = new ConvergeScheduler(PAPER);
    const out = s.schedule(media(7), [path(0, 1, 10), path(1, 1, 10), path(2, 1, 10)], 0);
    const c = counts(out);
    expect(c[0] + c[1] + c[2]).toBe(7);
    expect(Math.max(c[0], c[1], c[2]) - Math.min(c[0], c[1], c[2])).toBeLessThanOrEqual(1);
  });

  it('splits equally when every S_i is 0', () => {
    const s = new ConvergeScheduler(PAPER);
    const c = counts(s.schedule(media(10), [path(0, 0, 10), path(1, 0, 20)], 0));
    expect(c.slice(0, 2)).toEqual([5, 5]);
  });
});

describe('Converge Eq. 2 QoE feedback (alpha)', () => {
  it('reproduces the paper example: 15/5 Mbps, N = 40 -> 30/10, alpha -5 on path 2 -> 35/5', () => {
    const s = new ConvergeScheduler(PAPER);
    expect(counts(s.schedule(media(40), twoPaths(), 0)).slice(0, 2)).toEqual([30, 10]);
    s.onQoeFeedback(fb(1, -5, 1), 10 * MS);
    expect(counts(s.schedule(media(40), twoPaths(), 33 * MS)).slice(0, 2)).toEqual([35, 5]);
    // The adjusted ratio persists for the next frames (Fig. 8: 4:2 becomes 5:1).
    expect(counts(s.schedule(media(40), twoPaths(), 66 * MS)).slice(0, 2)).toEqual([35, 5]);
    expect(s.isEnabled(1)).toBe(true);
  });

  it('applies feedback that arrives before the first batch with that batch size', () => {
    const s = new ConvergeScheduler(PAPER);
    s.schedule([], twoPaths(), 0); // learns the paths, no batch size yet
    s.onQoeFeedback(fb(1, -5, 1), 0);
    expect(counts(s.schedule(media(40), twoPaths(), MS)).slice(0, 2)).toEqual([35, 5]);
  });

  it('scales alpha to other batch sizes (alpha is per typical frame)', () => {
    const s = new ConvergeScheduler(PAPER);
    s.schedule(media(40), twoPaths(), 0);
    s.onQoeFeedback(fb(1, -5, 1), 0);
    // 8-packet batch: Eq. 1 gives 6/2; 5/40 of 8 = 1 packet moves.
    expect(counts(s.schedule(media(8), twoPaths(), MS)).slice(0, 2)).toEqual([7, 1]);
  });

  it('accumulates alpha: -5 then +5 restores the Eq. 1 split', () => {
    const s = new ConvergeScheduler(PAPER);
    s.schedule(media(40), twoPaths(), 0);
    s.onQoeFeedback(fb(1, -3, 1), 0);
    s.onQoeFeedback(fb(1, -2, 2), 0);
    expect(counts(s.schedule(media(40), twoPaths(), MS)).slice(0, 2)).toEqual([35, 5]);
    s.onQoeFeedback(fb(1, 5, 3), 0);
    expect(counts(s.schedule(media(40), twoPaths(), 2 * MS)).slice(0, 2)).toEqual([30, 10]);
  });

  it('caps positive feedback at P_max = ceil(maxBoost * Eq. 1 share)', () => {
    const s = new ConvergeScheduler({ ...PAPER, maxBoost: 1.25 });
    s.schedule(media(40), twoPaths(), 0);
    s.onQoeFeedback(fb(1, 20, 1), 0);
    expect(counts(s.schedule(media(40), twoPaths(), MS)).slice(0, 2)).toEqual([27, 13]);
  });

  it('moves packets off the fast path itself to the next path for negative alpha on it', () => {
    const s = new ConvergeScheduler(PAPER);
    s.schedule(media(40), twoPaths(), 0);
    s.onQoeFeedback(fb(0, -5, 1), 0);
    expect(counts(s.schedule(media(40), twoPaths(), MS)).slice(0, 2)).toEqual([25, 15]);
  });

  it('lowers the encoder rate fraction so the path that takes moved packets stays within its S_i', () => {
    const s = new ConvergeScheduler(PAPER);
    s.schedule(media(40), twoPaths(), 0);
    expect(s.encoderRateFraction()).toBe(1);
    s.onQoeFeedback(fb(1, -5, 1), 0);
    s.schedule(media(40), twoPaths(), 0);
    // Path 0 carries 35 of 40 packets with a 30/40 share of the rate: at most 30/35 of sum(S).
    expect(s.encoderRateFraction()).toBeCloseTo(30 / 35, 6);
    // Positive feedback uses the early path's headroom: no reduction.
    const t = new ConvergeScheduler(PAPER);
    t.schedule(media(40), twoPaths(), 0);
    t.onQoeFeedback(fb(1, 3, 1), 0);
    t.schedule(media(40), twoPaths(), 0);
    expect(t.encoderRateFraction()).toBe(1);
    // One enabled path: nothing to shift.
    const u = new ConvergeScheduler(PAPER);
    u.schedule(media(40), [path(0, 15, 30)], 0);
    expect(u.encoderRateFraction()).toBe(1);
  });

  it('encoderExcludesDisabled: a disabled path carries no media, so its S_i leaves the encoder target until it is re-enabled', () => {
    // Off: one enabled path, nothing to shift, fraction 1 although path 1 is disabled.
    const d = new ConvergeScheduler({ reenableMinFcdMs: 0, encoderExcludesDisabled: false });
    d.schedule(media(40), twoPaths(), 0);
    d.onQoeFeedback(fb(1, -40, 1, 10), 0);
    d.schedule(media(40), twoPaths(), 33 * MS);
    expect(d.isEnabled(1)).toBe(false);
    expect(d.encoderRateFraction()).toBe(1);
    // On (the default): path 1 (5 of 20 Mbps) disabled by alpha, the encoder may use path 0's 15 Mbps only (the sender sums S over the up paths).
    const s = new ConvergeScheduler({ reenableMinFcdMs: 0 });
    let t = 0;
    s.schedule(media(40), twoPaths(), t);
    s.onQoeFeedback(fb(1, -40, 1, 10), t);
    s.schedule(media(40), twoPaths(), (t += 33 * MS));
    expect(s.isEnabled(1)).toBe(false);
    expect(s.encoderRateFraction()).toBeCloseTo(15 / 20, 6);
    // While it stays disabled ((60 - 30) / 2 > FCD 10 ms) the fraction stays there, on a virtual clock.
    for (let k = 0; k < 30; k++) s.schedule(media(10), twoPaths(), (t += 33 * MS));
    expect(s.isEnabled(1)).toBe(false);
    expect(s.encoderRateFraction()).toBeCloseTo(15 / 20, 6);
    // Once its RTT gap fits the FCD, Eq. 3 re-enables it and its S_i counts again.
    const near = (): PathState[] => [path(0, 15, 30), path(1, 5, 40)];
    for (let k = 0; k < 30; k++) s.schedule(media(10), near(), (t += 33 * MS));
    expect(s.isEnabled(1)).toBe(true);
    expect(s.encoderRateFraction()).toBeGreaterThan(15 / 20);
  });

  it('fastReenable: a disabled path comes back at once when its completion time beats the enabled path by more than the FCD', () => {
    // Path 1 (12 Mbps, 90 ms; a 30-packet frame in 69 ms vs 116 ms on path 0, within FCD 60 ms) is disabled by
    // QoE feedback; path 0 (3 Mbps, 40 ms) then collapses:
    // 150 kB pile up in its queue, so a 30-packet frame completes after ~500 ms there and ~50 ms on path 1.
    const ok = (): PathState[] => [path(0, 3, 40), path(1, 12, 90)];
    const collapsed = (): PathState[] => [path(0, 3, 40, { queuedBytes: 150_000 }), path(1, 12, 90)];
    const run = (fastReenable: boolean) => {
      const s = new ConvergeScheduler({ fastReenable }); // default true
      let t = 0;
      s.schedule(media(30), ok(), t);
      s.onQoeFeedback(fb(1, -40, 1, 60), t);
      s.schedule(media(30), ok(), (t += 33 * MS));
      expect(s.isEnabled(1)).toBe(false);
      // While the enabled path is not slower by more than the FCD, path 1 stays disabled (Eq. 2 holds).
      s.schedule(media(30), ok(), (t += 33 * MS));
      expect(s.isEnabled(1)).toBe(false);
      const out = s.schedule(media(30), collapsed(), (t += 33 * MS));
      return { s, out };
    };
    const off = run(false);
    expect(off.s.isEnabled(1)).toBe(false);
    expect(counts(off.out)[1]).toBe(0);
    const on = run(true);
    expect(on.s.isEnabled(1)).toBe(true);
    expect(on.s.stats.fastReenables).toBe(1);
    expect(counts(on.out)[1]).toBe(30);
  });

  it('ignores duplicate feedback (same seq, sent on every path) and accepts late distinct seqs', () => {
    const s = new ConvergeScheduler(PAPER);
    s.schedule(media(40), twoPaths(), 0);
    s.onQoeFeedback(fb(1, -5, 7), 0);
    s.onQoeFeedback(fb(1, -5, 7), 0);
    expect(counts(s.schedule(media(40), twoPaths(), MS)).slice(0, 2)).toEqual([35, 5]);
    expect(s.stats.feedbackDuplicate).toBe(1);
    s.onQoeFeedback(fb(1, 2, 6), 0); // older seq, never seen: a real late feedback
    expect(s.stats.feedbackAccepted).toBe(2);
    s.onQoeFeedback(fb(1, 2, 6), 0);
    expect(s.stats.feedbackDuplicate).toBe(2);
    s.onQoeFeedback(fb(1, 2, 7 + 1000), 0);
    s.onQoeFeedback(fb(1, 2, 7 + 1000 - 500), 0); // far older than the dedup window
    expect(s.stats.feedbackDuplicate).toBe(3);
  });

  it('counts and ignores feedback for unknown paths and malformed feedback', () => {
    const s = new ConvergeScheduler(PAPER);
    s.schedule(media(40), twoPaths(), 0);
    s.onQoeFeedback(fb(4, -40, 1), 0);
    s.onQoeFeedback(fb(1, Number.NaN, 2), 0);
    s.onQoeFeedback(fb(1, -5, 3, Number.POSITIVE_INFINITY), 0);
    s.onQoeFeedback(fb(99, -5, 4), 0);
    s.onQoeFeedback(null as never, 0);
    expect(s.stats.feedbackUnknownPath).toBe(1);
    expect(s.stats.feedbackInvalid).toBe(4);
    expect(counts(s.schedule(media(40), twoPaths(), MS)).slice(0, 2)).toEqual([30, 10]);
  });
});

describe('Converge disable, probing and Eq. 3 re-enable', () => {
  /** Scheduler with path 1 disabled at t = 0 (alpha -10 of 40 -> P_2 = 0), FCD 10 ms; the paper's Eq. 3 (no FCD floor). */
  function disabledSetup(cfg = {}) {
    const s = new ConvergeScheduler({ ...PAPER, reenableMinFcdMs: 0, ...cfg });
    s.schedule(media(40), twoPaths(), 0);
    s.onQoeFeedback(fb(1, -10, 1, 10), 0);
    const out = s.schedule(media(40), twoPaths(), 0);
    return { s, out };
  }

  it('disables a path when alpha drives P_i to 0 and sends it only probe duplicates', () => {
    const { s, out } = disabledSetup();
    expect(s.isEnabled(1)).toBe(false);
    expect(s.stats.pathsDisabled).toBe(1);
    expect(counts(out).slice(0, 2)).toEqual([40, 0]);
    const pr = probes(out);
    expect(pr).toHaveLength(1);
    expect(pr[0].pathId).toBe(1);
    // The probe duplicates a packet that was sent on the fast path.
    expect(pathOf(out, pr[0].packet)).toBe(0);
    expect(out).toHaveLength(41);
  });

  it('does not disable while P_i stays >= 1 packet', () => {
    const s = new ConvergeScheduler(PAPER);
    s.schedule(media(40), twoPaths(), 0);
    s.onQoeFeedback(fb(1, -9, 1), 0);
    expect(counts(s.schedule(media(40), twoPaths(), MS)).slice(0, 2)).toEqual([39, 1]);
    expect(s.isEnabled(1)).toBe(true);
  });

  it('never disables the last enabled path', () => {
    const s = new ConvergeScheduler(PAPER);
    const one = [path(0, 10, 20)];
    s.schedule(media(10), one, 0);
    s.onQoeFeedback(fb(0, -100, 1), 0);
    expect(counts(s.schedule(media(10), one, MS))[0]).toBe(10);
    expect(s.isEnabled(0)).toBe(true);
  });

  it('probes a disabled path at most once per batch and per 100 ms', () => {
    const { s } = disabledSetup();
    const probeTimes: number[] = [];
    for (let t = 10; t <= 1000; t += 10) {
      const out = s.schedule(media(10), twoPaths(), t * MS);
      const pr = probes(out);
      expect(pr.length).toBeLessThanOrEqual(1);
      if (pr.length === 1) probeTimes.push(t);
      expect(counts(out)[1]).toBe(0);
    }
    expect(probeTimes.length).toBeGreaterThanOrEqual(9);
    for (let i = 1; i < probeTimes.length; i++) expect(probeTimes[i] - probeTimes[i - 1]).toBeGreaterThanOrEqual(100);
  });

  it('stays disabled while (rtt_i - rtt_fast)/2 > FCD (the printed sign would re-enable at once)', () => {
    const { s } = disabledSetup();
    for (let t = 20; t <= 3000; t += 20) s.schedule(media(10), twoPaths(), t * MS); // (60-30)/2 = 15 > 10
    expect(s.isEnabled(1)).toBe(false);
  });

  it('floors the Eq. 3 FCD (reenableMinFcdMs): a 15 ms gap comes back although FCD is 10 ms, a 60 ms gap does not', () => {
    const { s } = disabledSetup({ reenableMinFcdMs: 33 });
    for (let t = 20; t <= 3000; t += 20) s.schedule(media(10), twoPaths(), t * MS); // 15 <= max(10, 33)
    expect(s.isEnabled(1)).toBe(true);
    const far = (): PathState[] => [path(0, 15, 30), path(1, 5, 150)];
    const t = new ConvergeScheduler({ ...PAPER, reenableMinFcdMs: 33 });
    t.schedule(media(40), far(), 0);
    t.onQoeFeedback(fb(1, -10, 1, 10), 0);
    for (let ms = 0; ms <= 3000; ms += 20) t.schedule(media(10), far(), ms * MS); // (150-30)/2 = 60 > 33
    expect(t.isEnabled(1)).toBe(false);
  });

  it('re-enables per Eq. 3 only after several consecutive checks and the hold time', () => {
    const { s } = disabledSetup();
    let t = 0;
    for (; t <= 1000; t += 20) s.schedule(media(10), twoPaths(), t * MS);
    expect(s.isEnabled(1)).toBe(false);
    // Path 1 improves to 40 ms: (40-30)/2 = 5 <= FCD 10, but its RTT EWMA lags.
    const better = [path(0, 15, 30), path(1, 5, 40)];
    const changeAt = t;
    let enabledAt = -1;
    for (; t <= changeAt + 2000; t += 20) {
      s.schedule(media(10), better, t * MS);
      if (enabledAt < 0 && s.isEnabled(1)) enabledAt = t;
    }
    expect(enabledAt).toBeGreaterThanOrEqual(changeAt + 300);
    expect(enabledAt).toBeLessThanOrEqual(changeAt + 1000);
    expect(s.stats.pathsEnabled).toBe(1);
    // Back at its Eq. 1 share (alpha reset), no more probes.
    const out = s.schedule(media(40), better, (t + 20) * MS);
    expect(counts(out).slice(0, 2)).toEqual([30, 10]);
    expect(probes(out)).toHaveLength(0);
  });

  it('ignores a one-check RTT dip (EWMA) and alternating conditions (streak)', () => {
    const { s } = disabledSetup();
    let t = 20;
    const dip = [path(0, 15, 30), path(1, 5, 30)];
    for (let i = 0; i < 60; i++, t += 100) {
      // One dip to 30 ms every 4th check: EWMA 60 -> 52.5 > 50, never satisfies Eq. 3.
      s.schedule(media(10), i % 4 === 0 ? dip : twoPaths(), t * MS);
    }
    expect(s.isEnabled(1)).toBe(false);

    const raw = disabledSetup({ rttEwmaGain: 1 }).s; // no smoothing: test the streak alone
    t = 20;
    for (let i = 0; i < 60; i++, t += 100) {
      raw.schedule(media(10), i % 2 === 0 ? dip : twoPaths(), t * MS);
    }
    expect(raw.isEnabled(1)).toBe(false);
  });

  it('uses the FCD of the latest feedback in Eq. 3', () => {
    const { s } = disabledSetup();
    s.onQoeFeedback(fb(0, 0, 2, 30), 0); // FCD 30 ms: (60-30)/2 = 15 <= 30
    expect(s.latestFcdMs).toBe(30);
    let t = 20;
    for (; t <= 1000 && !s.isEnabled(1); t += 20) s.schedule(media(10), twoPaths(), t * MS);
    expect(s.isEnabled(1)).toBe(true);
    expect(t).toBeGreaterThanOrEqual(250);
  });

  it('ignores alpha for a disabled path', () => {
    const { s } = disabledSetup();
    s.onQoeFeedback(fb(1, 10, 2), 0);
    expect(s.stats.feedbackIgnoredDisabled).toBe(1);
    expect(s.isEnabled(1)).toBe(false);
  });

  it('force-enables a disabled path when it is the only one up', () => {
    const { s } = disabledSetup();
    const out = s.schedule([pkt(Priority.Keyframe), ...media(9)], [path(0, 15, 30, { up: false }), path(1, 5, 60)], 50 * MS);
    expect(counts(out)[1]).toBe(10);
    expect(s.isEnabled(1)).toBe(true);
    expect(s.stats.forcedEnables).toBe(1);
  });

  it('honours the optional loss guard on re-enable', () => {
    const { s } = disabledSetup({ reenableMaxLossRate: 0.1 });
    s.onQoeFeedback(fb(0, 0, 2, 30), 0);
    const lossy = [path(0, 15, 30), path(1, 5, 60, { lossRate: 0.5 })];
    for (let t = 20; t <= 2000; t += 20) s.schedule(media(10), lossy, t * MS);
    expect(s.isEnabled(1)).toBe(false);
  });
});

describe('Converge config', () => {
  it('rejects bad config with SchedError invalid-config', () => {
    expect(() => new ConvergeScheduler({ ...PAPER, rttEwmaGain: 0 })).toThrow(SchedError);
    try {
      new ConvergeScheduler({ ...PAPER, probeIntervalMs: Number.NaN });
    } catch (e) {
      expect((e as SchedError).code).toBe('invalid-config');
    }
    expect(() => new ConvergeScheduler({ ...PAPER, reenableChecks: 1.5 })).toThrow(/reenableChecks/);
    expect(() => new ConvergeScheduler({ ...PAPER, encoderExcludesDisabled: 1 as unknown as boolean })).toThrow(/encoderExcludesDisabled/);
    expect(() => new ConvergeScheduler({ ...PAPER, fastReenable: 1 as unknown as boolean })).toThrow(/fastReenable/);
  });
});

describe('Converge best-path floor (our extension: frame deadline = the best path alone)', () => {
  it('keeps the Eq. 1 split when every path delivers its share before the best path alone would', () => {
    // 15 / 5 Mbps, RTT 30 / 60 ms, N = 40 x 1200 B: alone on path 0 = 25.6 + 15 ms;
    // path 1's 10 packets take 19.2 + 30 ms -> misses by 8.6 ms, so the slack must allow it.
    const s = new ConvergeScheduler({ deadlineSlackMs: 10 });
    expect(counts(s.schedule(media(40), twoPaths(), 0)).slice(0, 2)).toEqual([30, 10]);
    expect(s.stats.deadlineMovedPackets).toBe(0);
  });

  it('moves to the best path only the packets a slower path would deliver after the deadline', () => {
    const s = new ConvergeScheduler();
    // Deadline = 40 packets on path 0 alone = 25.6 + 15 = 40.6 ms; path 1 (30 ms one way, 5 Mbps)
    // delivers floor(10.6 ms x 5 Mbps / 9600 bit) = 5 packets by then.
    const out = s.schedule(media(40), twoPaths(), 0);
    expect(counts(out).slice(0, 2)).toEqual([35, 5]);
    expect(s.stats.deadlineMovedPackets).toBe(5);
  });

  it('sends no media on a path whose sender queue misses every deadline, probes it, and takes it back when it drains', () => {
    const s = new ConvergeScheduler();
    const slow = (queuedBytes: number): PathState[] => [path(0, 10, 30), path(1, 10, 30, { queuedBytes })];
    let now = 0;
    let probed = 0;
    for (let f = 0; f < 30; f++, now += 33 * MS) {
      const out = s.schedule(media(20), slow(200_000), now); // 160 ms of queue on path 1
      expect(media20(out).every((a) => a.pathId === 0)).toBe(true);
      probed += probes(out).filter((a) => a.pathId === 1).length;
    }
    expect(probed).toBeGreaterThanOrEqual(5); // every probeIntervalMs (100 ms) of ~1 s
    expect(s.isEnabled(1)).toBe(true);
    // The encoder may not count on path 1's rate while the deadline keeps cutting it.
    expect(s.encoderRateFraction()).toBeLessThan(0.9);
    expect(s.encoderRateFraction()).toBeGreaterThanOrEqual(0.5);
    const back = s.schedule(media(20), slow(0), now);
    expect(counts(back)[1]).toBe(10);
  });
});

function media20(out: ReturnType<ConvergeScheduler['schedule']>) {
  return out.filter((a) => a.probe !== true);
}

describe('Converge: temporal layers (baseLayerFastPath)', () => {
  // Two similar paths: path 0 is the faster (more rate, lower RTT), so Eq. 1 alone splits every frame.
  const paths = (): PathState[] => [path(0, 6, 30), path(1, 4, 40)];

  it('puts every base-layer (TL0) packet on the fast path and pays the other path back with TL1 frames', () => {
    const s = new ConvergeScheduler({});
    const sent = [0, 0];
    let tl0Elsewhere = 0;
    for (let f = 0; f < 40; f++) {
      const layer = f % 2;
      const out = s.schedule(media(10, { frameId: f, temporalLayer: layer }), paths(), f * 33 * MS);
      const c = counts(out);
      if (layer === 0) tl0Elsewhere += c[1];
      sent[0] += c[0];
      sent[1] += c[1];
    }
    expect(tl0Elsewhere).toBe(0);
    // The slower path still carries a real share (Eq. 1 says 40%) through the upper-layer frames.
    expect(sent[1] / (sent[0] + sent[1])).toBeGreaterThan(0.25);
    expect(s.stats.baseLayerMovedPackets).toBeGreaterThan(50);
  });

  it('without the option (or without layers) a base-layer frame is split by Eq. 1 as before', () => {
    const off = new ConvergeScheduler({ baseLayerFastPath: false });
    expect(counts(off.schedule(media(10, { temporalLayer: 0 }), paths(), 0))[1]).toBeGreaterThan(0);
    const plain = new ConvergeScheduler({});
    expect(counts(plain.schedule(media(10), paths(), 0))[1]).toBeGreaterThan(0);
  });
});
