/**
 * LoLa's multipath scheduler (LoLa, §3.2-3.4,
 * §3.6): per-subflow congestion window bounded by a delay budget (Eq. 2), a
 * frame target size for the encoder (Eq. 3), a min-max frame-arrival
 * allocation (Eq. 4-7) and adaptive probing (Eq. 8).
 *
 * - Eq. 2: cwnd_f = (δ - min_RTT_f / 2) / ewma_iat_f packets, δ = 100 ms.
 * - Eq. 4-7: allocate the frame's packets to minimise the arrival time of
 *   its last packet, y_f = owd_f + (N_f + x_f) · ewma_iat_f, subject to
 *   x_f <= cwnd_f - N_f. Solved greedily, packet by packet: the next packet
 *   goes to the subflow whose y_f after taking it is smallest among those
 *   with room; this is optimal for the min-max of sums of equal-size items.
 * - Eq. 3: target size = MTU · Σ_f (0.8 · cwnd_f - N_f) bytes per frame,
 *   reported to the sender as {@link encoderRateFraction}: that size at the
 *   measured frame rate, over the summed path rates.
 * - Eq. 8: a subflow that got no pair of packets for τ_f = min(1 s, 2 ·
 *   ewma_iat_f) gets two duplicates of this frame's packets as probes.
 *
 * Our reading, on the signals this library has:
 * - ewma_iat_f (the receiver's per-packet inter-arrival time minus the
 *   inter-frame gap, Eq. 1) is, for a backlogged subflow, the time the link
 *   takes to deliver one MTU packet. Our per-path reports carry rates, not
 *   per-packet inter-arrival times to the scheduler, so we use
 *   MTU · 8 / delivery rate, the delivery rate being max(min(goodput, GCC
 *   target), GCC target x (1 - loss)) (`deliveryRateBps`), smoothed by an
 *   EWMA (gain 1/8).
 * - owd_f = min RTT / 2 (the paper's own approximation of propagation delay).
 * - N_f = the path's bytes in flight and queued, in MTU packets. Our reports
 *   come every ~50 ms, not per packet, so N_f counts up to one report
 *   interval more than LoLa's per-packet ACKs would.
 * - LoLa's outstanding queue (packets that fit no window wait, sorted by
 *   frame deadline, dropped when late) is the sender's pacer and frame
 *   dropper here: a packet with no room goes to the subflow with the
 *   earliest y_f anyway (the {@link Scheduler} contract: never drop).
 */
import { MAX_PATHS, type Assignment, type OutgoingPacket, type PathId, type PathState } from '../core/types.js';
import { DELAY_BUDGET_MTU as MTU, FrameIntervalMeter, backlogPackets, delayBudgetWindow, minRttOf, targetFraction, updateIatMs } from './delay-budget.js';
import { firstUsable, nonNeg, packetBytes } from './path-util.js';
import type { Scheduler } from './types.js';

/** δ, the end-to-end network delay budget of Eq. 2 (ms). */
export const LOLA_DELAY_BUDGET_MS = 100;
/** Eq. 3's noise margin. */
const TARGET_MARGIN = 0.8;
/** Eq. 8's cap on the probing interval (ms). */
const MAX_PROBE_INTERVAL_MS = 1000;

/** Options of {@link LolaScheduler}. */
export interface LolaOptions {
  /**
   * Report Eq. 3's frame target as {@link LolaScheduler.encoderRateFraction}
   * (default true). false = the scheduler only splits (Eq. 2, 4-8) and the
   * encoder follows the summed path rates: the ablation that separates what
   * the encoder target buys from what the split buys.
   */
  encoderTarget?: boolean;
}

export class LolaScheduler implements Scheduler {
  readonly name = 'lola' as const;
  /** ewma_iat per path id (ms per MTU packet); 0 = not measured yet. */
  private readonly iat = new Float64Array(MAX_PATHS);
  /** Sender time (µs) a pair of packets last went to each path; -1 = never. */
  private readonly lastPairUs = new Float64Array(MAX_PATHS).fill(-1);
  private readonly seen = new Uint8Array(MAX_PATHS);
  // Per-batch scratch, indexed by entry.
  private readonly ids = new Int32Array(MAX_PATHS);
  private readonly owd = new Float64Array(MAX_PATHS);
  private readonly inflight = new Float64Array(MAX_PATHS);
  private readonly cwnd = new Float64Array(MAX_PATHS);
  private readonly given = new Float64Array(MAX_PATHS);
  private rateSumBps = 0;
  private targetBytes = 0;
  private readonly frames = new FrameIntervalMeter();
  private readonly encoderTarget: boolean;

  constructor(opts: LolaOptions = {}) {
    this.encoderTarget = opts.encoderTarget !== false;
  }

  schedule(packets: readonly OutgoingPacket[], paths: readonly PathState[], nowUs: number): Assignment[] {
    this.seen.fill(0);
    let n = 0;
    this.rateSumBps = 0;
    for (let i = 0; i < paths.length; i++) {
      const p = firstUsable(paths, i, this.seen);
      if (p === undefined) continue;
      const iat = updateIatMs(this.iat, p);
      const minRtt = minRttOf(p);
      this.ids[n] = p.id;
      this.owd[n] = minRtt / 2;
      this.inflight[n] = backlogPackets(p);
      this.cwnd[n] = delayBudgetWindow(LOLA_DELAY_BUDGET_MS, minRtt, iat);
      this.given[n] = 0;
      this.rateSumBps += nonNeg(p.rateBps);
      n++;
    }
    if (n === 0) return [];
    this.frames.note(packets, nowUs);
    // Eq. 3 for the next frame.
    let target = 0;
    for (let j = 0; j < n; j++) target += Math.max(0, TARGET_MARGIN * this.cwnd[j] - this.inflight[j]);
    this.targetBytes = target * MTU;

    const out: Assignment[] = [];
    for (const pkt of packets) {
      const j = this.pick(n, packetBytes(pkt) / MTU);
      this.given[j] += packetBytes(pkt) / MTU;
      out.push({ packet: pkt, pathId: this.ids[j] });
    }
    for (let j = 0; j < n; j++) if (this.given[j] >= 2) this.lastPairUs[this.ids[j]] = nowUs;
    this.probe(n, packets, nowUs, out);
    return out;
  }

  /** Eq. 4-7, one packet of `units` MTUs: the entry with room whose last-packet arrival y_f is earliest after taking it. */
  private pick(n: number, units: number): number {
    let best = -1;
    let bestY = Infinity;
    let fallback = 0;
    let fallbackY = Infinity;
    for (let j = 0; j < n; j++) {
      const iat = this.iat[this.ids[j]] > 0 ? this.iat[this.ids[j]] : LOLA_DELAY_BUDGET_MS;
      const y = this.owd[j] + (this.inflight[j] + this.given[j] + units) * iat;
      if (y < fallbackY) {
        fallbackY = y;
        fallback = j;
      }
      if (this.inflight[j] + this.given[j] + units <= this.cwnd[j] && y < bestY) {
        bestY = y;
        best = j;
      }
    }
    return best >= 0 ? best : fallback;
  }

  /** Eq. 8: two duplicate packets to every up path that got no pair for τ_f. */
  private probe(n: number, packets: readonly OutgoingPacket[], nowUs: number, out: Assignment[]): void {
    if (packets.length < 2) return;
    for (let j = 0; j < n; j++) {
      const id = this.ids[j];
      if (this.given[j] >= 2) continue;
      const tauMs = Math.min(MAX_PROBE_INTERVAL_MS, 2 * (this.iat[id] > 0 ? this.iat[id] : MAX_PROBE_INTERVAL_MS));
      const last = this.lastPairUs[id];
      if (last >= 0 && nowUs - last < tauMs * 1000) continue;
      // Two packets of this frame that went elsewhere (never a duplicate on the original's path).
      let added = 0;
      for (let k = 0; k < packets.length && added < 2; k++) {
        if (out[k].pathId === id) continue;
        out.push({ packet: packets[k], pathId: id, probe: true });
        added++;
      }
      if (added > 0) this.lastPairUs[id] = nowUs;
    }
  }

  /**
   * Eq. 3's frame target size at the measured frame rate, as a fraction of
   * the summed path rates (1 until the frame rate and the rates are known,
   * and always 1 with `encoderTarget: false`).
   */
  encoderRateFraction(): number {
    if (!this.encoderTarget) return 1;
    return targetFraction(this.targetBytes, this.frames.intervalMs, this.rateSumBps);
  }

  /** Ignored (LoLa has no application QoE feedback). */
  onQoeFeedback(): void {}

  /** Always true. */
  isEnabled(_pathId: PathId): boolean {
    return true;
  }
}
