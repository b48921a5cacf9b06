/**
 * Byte-proportional packet splitter: smooth weighted round-robin (the nginx
 * "smooth WRR" rule) on bytes, with credits that persist across batches so the
 * long-run split matches the weights even for batches of one packet.
 *
 * Per packet of `s` bytes: every active path i gains `w_i * s` credit (w
 * normalised to sum 1), the path with the most credit is chosen and loses `s`.
 * The credits sum to zero, so each path's share of bytes converges to w_i and
 * packets of a path are interleaved rather than sent in blocks.
 *
 * Used by the M-TPUT and M-RTP baselines. Allocation-free after construction.
 */
import { MAX_PATHS } from '../core/types.js';
import type { Assignment, OutgoingPacket } from '../core/types.js';
import { packetBytes } from './path-util.js';

/** Credit bound (bytes): keeps a weight change from starving a path for long. */
const MAX_CREDIT_BYTES = 64 * 1024;

export class WeightedSplitter {
  private readonly credit = new Float64Array(MAX_PATHS);
  private readonly weight = new Float64Array(MAX_PATHS);
  private readonly active = new Uint8Array(MAX_PATHS);
  private activeCount = 0;

  /** Clear the set of active paths for a new batch. */
  begin(): void {
    this.active.fill(0);
    this.weight.fill(0);
    this.activeCount = 0;
  }

  /** Mark path `id` active with a non-negative weight (any unit). */
  add(id: number, weight: number): void {
    if (this.active[id] === 1) return;
    this.active[id] = 1;
    this.weight[id] = Number.isFinite(weight) && weight > 0 ? weight : 0;
    this.activeCount++;
  }

  /** Number of active paths. */
  get count(): number {
    return this.activeCount;
  }

  /**
   * Normalise weights (equal weights when all are 0) and forget the credit of
   * inactive paths. Call after the `add`s, before `pick`.
   */
  commit(): void {
    let sum = 0;
    for (let i = 0; i < MAX_PATHS; i++) if (this.active[i] === 1) sum += this.weight[i];
    for (let i = 0; i < MAX_PATHS; i++) {
      if (this.active[i] !== 1) {
        this.credit[i] = 0;
        continue;
      }
      this.weight[i] = sum > 0 ? this.weight[i] / sum : 1 / this.activeCount;
    }
  }

  /** Choose the path for a packet of `sizeBytes` bytes; -1 when no path is active. */
  pick(sizeBytes: number): number {
    const s = sizeBytes > 0 ? sizeBytes : 1;
    let best = -1;
    let bestCredit = -Infinity;
    for (let i = 0; i < MAX_PATHS; i++) {
      if (this.active[i] !== 1) continue;
      let c = this.credit[i] + this.weight[i] * s;
      if (c > MAX_CREDIT_BYTES) c = MAX_CREDIT_BYTES;
      this.credit[i] = c;
      if (c > bestCredit) {
        bestCredit = c;
        best = i;
      }
    }
    if (best >= 0) {
      const c = this.credit[best] - s;
      this.credit[best] = c < -MAX_CREDIT_BYTES ? -MAX_CREDIT_BYTES : c;
    }
    return best;
  }

  /** commit() the weights, then give each packet a path by {@link pick}. */
  assign(packets: readonly OutgoingPacket[]): Assignment[] {
    this.commit();
    const out: Assignment[] = new Array(packets.length);
    for (let k = 0; k < packets.length; k++) out[k] = { packet: packets[k], pathId: this.pick(packetBytes(packets[k])) };
    return out;
  }
}
