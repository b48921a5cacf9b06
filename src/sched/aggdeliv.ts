/**
 * AggDeliv's packet scheduler (AggDeliv, §III-B,
 * with §III-C Eq. 3's RTT limiting): each path's *periodical* congestion
 * window (Eq. 1) sets its routing probability (Eq. 2), and every packet is
 * drawn independently onto a path with that probability.
 *
 * - Eq. 1: the periodical window is a harmonic mean of the windows the path
 *   had over the affecting period T_a (burst errors pull an arithmetic mean
 *   around; the harmonic mean follows the lows).
 * - Eq. 2: p_j = cwnd~_j / Σ_u cwnd~_u; a packet goes to the path whose
 *   cumulative interval holds a uniform draw x in (0, 1).
 * - Eq. 3: a path whose RTT is more than θ_γ times the least RTT across paths
 *   (γ_j = RTT_j / RTT_min > θ_γ) has its window decayed toward cwnd / γ_j:
 *   cwnd ← β·cwnd + (1 - β)·cwnd/γ_j, β = 0.2 (AggDeliv §IV-A).
 *
 * Our reading, on the signals this library has:
 * - cwnd_j is the window MPTCP schedulers read, from {@link WindowSnapshot}
 *   (2 x BDP at the GCC target rate). Each scheduling call is one window
 *   "adjustment" sample.
 * - Eq. 1 as printed, n_a / Σ_k (t_c - t_k) / cwnd_k, is not a mean (its
 *   value scales with n_a and with time, and the newest window weighs 0).
 *   We read "the time from each adjustment as its weight" as the time each
 *   window was in effect and normalise: Σ_k w_k / Σ_k (w_k / cwnd_k), a
 *   time-weighted harmonic mean over T_a = {@link AGGDELIV_PERIOD_MS}.
 * - Eq. 3 belongs to AggDeliv's congestion controller (OLIA-based, Eq. 3-7);
 *   our paths keep GCC, so Eq. 3 acts on the window the scheduler weighs,
 *   once per least RTT across paths (a window controller updates with each
 *   acknowledgement; a path whose RTT balloons must not also slow its own
 *   correction). θ_γ was grid-searched in the paper (value not given): we
 *   use 2.
 * - The draw uses a seeded generator, so a run is reproducible.
 * - §III-D's deadline-based drop is the sender's frame dropper and pacer
 *   here (a scheduler never drops: the {@link Scheduler} contract).
 */
import { MAX_PATHS, type Assignment, type OutgoingPacket, type PathId, type PathState } from '../core/types.js';
import { Rng } from '../core/rng.js';
import type { Scheduler } from './types.js';
import { WindowSnapshot } from './window-snapshot.js';

/** T_a, the window affecting period of Eq. 1 (ms). */
export const AGGDELIV_PERIOD_MS = 1000;
/** θ_γ of Eq. 3. */
export const AGGDELIV_RTT_LIMIT = 2;
/** β of Eq. 3 (AggDeliv §IV-A). */
const BETA = 0.2;
/** Floor of Eq. 3's multiplier (a window controller keeps a minimum window too). */
const MIN_LIMIT = 0.05;
/** Window samples kept per path (bounds memory whatever the call rate). */
const MAX_SAMPLES = 64;

export class AggDelivScheduler implements Scheduler {
  readonly name = 'aggdeliv' as const;
  private readonly snap = new WindowSnapshot();
  private readonly rng: Rng;
  /** Ring of (time µs, window bytes) samples per path id. */
  private readonly sampleUs: Float64Array[] = [];
  private readonly sampleWin: Float64Array[] = [];
  private readonly head = new Int32Array(MAX_PATHS);
  private readonly count = new Int32Array(MAX_PATHS);
  /** Eq. 3's multiplier of each path's window (1 = no limiting). */
  private readonly limit = new Float64Array(MAX_PATHS).fill(1);
  private readonly lastLimitUs = new Float64Array(MAX_PATHS).fill(-1);
  private readonly cum = new Float64Array(MAX_PATHS);

  constructor(seed = 1) {
    this.rng = new Rng(seed);
    for (let i = 0; i < MAX_PATHS; i++) {
      this.sampleUs.push(new Float64Array(MAX_SAMPLES));
      this.sampleWin.push(new Float64Array(MAX_SAMPLES));
    }
  }

  schedule(packets: readonly OutgoingPacket[], paths: readonly PathState[], nowUs: number): Assignment[] {
    const s = this.snap;
    const n = s.load(paths);
    if (n === 0) return [];
    let minRtt = Infinity;
    for (let j = 0; j < n; j++) minRtt = Math.min(minRtt, s.srtt[j]);
    let total = 0;
    for (let j = 0; j < n; j++) {
      const id = s.ids[j];
      this.rttLimit(id, s.srtt[j] / minRtt, minRtt, nowUs);
      this.record(id, nowUs, s.window[j] * this.limit[id]);
      total += this.periodical(id, nowUs);
      this.cum[j] = total;
    }
    const out: Assignment[] = new Array(packets.length);
    for (let k = 0; k < packets.length; k++) {
      let j = 0;
      if (total > 0) {
        const x = this.rng.next() * total;
        while (j < n - 1 && x >= this.cum[j]) j++;
      } else {
        j = Math.min(n - 1, Math.floor(this.rng.next() * n));
      }
      out[k] = { packet: packets[k], pathId: s.ids[j] };
    }
    return out;
  }

  /**
   * Eq. 3, at most once per least RTT across paths (the round in which a
   * window controller would see an acknowledgement); the limit relaxes back
   * (×1/β per round, up to 1) once γ <= θ_γ.
   */
  private rttLimit(id: number, gamma: number, roundMs: number, nowUs: number): void {
    const last = this.lastLimitUs[id];
    if (last >= 0 && nowUs - last < roundMs * 1000) return;
    this.lastLimitUs[id] = nowUs;
    if (gamma > AGGDELIV_RTT_LIMIT) this.limit[id] = Math.max(MIN_LIMIT, BETA * this.limit[id] + ((1 - BETA) * this.limit[id]) / gamma);
    else this.limit[id] = Math.min(1, this.limit[id] / BETA);
  }

  private record(id: number, nowUs: number, win: number): void {
    const h = (this.head[id] + this.count[id]) % MAX_SAMPLES;
    this.sampleUs[id][h] = nowUs;
    this.sampleWin[id][h] = win;
    if (this.count[id] < MAX_SAMPLES) this.count[id]++;
    else this.head[id] = (this.head[id] + 1) % MAX_SAMPLES;
  }

  /** Eq. 1 (time-weighted harmonic mean over T_a) of path `id`'s windows, in bytes. */
  private periodical(id: number, nowUs: number): number {
    const from = nowUs - AGGDELIV_PERIOD_MS * 1000;
    let wSum = 0;
    let invSum = 0;
    let newest = 0;
    for (let c = this.count[id] - 1; c >= 0; c--) {
      const i = (this.head[id] + c) % MAX_SAMPLES;
      const t = this.sampleUs[id][i];
      const win = this.sampleWin[id][i];
      if (c === this.count[id] - 1) newest = win;
      const end = c === this.count[id] - 1 ? nowUs : this.sampleUs[id][(i + 1) % MAX_SAMPLES];
      const start = Math.max(t, from);
      const w = end - start;
      if (w > 0 && win > 0) {
        wSum += w;
        invSum += w / win;
      }
      if (t <= from) break;
    }
    return invSum > 0 ? wSum / invSum : newest;
  }

  /** Ignored (AggDeliv has no application QoE feedback). */
  onQoeFeedback(): void {}

  /** Always true. */
  isEnabled(_pathId: PathId): boolean {
    return true;
  }
}
