/**
 * The Multipath Rate Control Module (MRCM) and the transient bitrate of the
 * Multipath Packet Processing Module (MPPM) of "Multipath Rate Control for
 * Real-Time Media" (Kreith and Drozdy; MPRTP): the coupling between the
 * per-subflow FRACTaL estimators of one sender (src/cc/fractal.ts).
 *
 * - {@link fractionalDistribution}: §IV-B Algorithm 1 (fractional
 *   distribution of the ramp-up) with the principles of §III-B.
 * - {@link transientOffset} / {@link transientBitrate}: §IV-C Eq. 1 and the
 *   `target` line of Algorithm 2 (the transient bitrate against traffic
 *   fading).
 * - {@link FractalCoupler}: the shared state of one sender's subflows
 *   (estimated, stable, allocated rates, path state, RTT), re-running
 *   Algorithm 1 whenever a Subflow Monitor reports, as §III-B says.
 *
 * I/O-free: time only enters as `nowUs` arguments (µs, sender clock).
 * Rates are in bps.
 */

/** Path state a Subflow Monitor reports (MPRTP §III-A). */
export type SubflowPathState = 'congested' | 'stable' | 'underused';

/** One subflow as Algorithm 1 sees it (rates in bps, RTT in ms). */
export interface SubflowRates {
  /** SR_estimated: the subflow's congestion controller's estimate (bps). */
  estimatedBps: number;
  /** SR_stable: the bitrate the encoder achieved and kept on the subflow (bps). */
  stableBps: number;
  /** SR_allocated from the previous run, undefined before the first (bps). */
  allocatedBps: number | undefined;
  /** Smoothed RTT (ms, > 0); the ramp-up weight is ΔSR / RTT. */
  rttMs: number;
  /**
   * The subflow holds less than a fair share of its path (FractalConfig.fairShare):
   * it ramps as a single-path flow, outside the shared ramp-up (not in the paper).
   */
  belowFairShare?: boolean;
}

/**
 * MPRTP §IV-B Algorithm 1 (fractional distribution) for every subflow.
 *
 * Per §III-B and §IV-B: a subflow with SR_estimated <= SR_stable is assumed
 * congested and gets SR_allocated = SR_estimated. The others ramp up: with
 * ΔSR_j = SR_estimated_j - SR_stable_j, the total ramp-up is the largest
 * ΔSR (what one single-path flow would grow by: MPTCP's fairness principle,
 * Wischik et al. NSDI 2011), shared by the weights w_j = ΔSR_j / RTT_j:
 * SR_allocated_j = SR_stable_j + min(ΔSR_j, total · w_j / Σw). When the
 * ramp-ups overlap (the encoder has not reached the previous allocation)
 * a smaller new allocation than the previous one wins; a larger one is taken
 * only once the previous allocation is at or below SR_stable again
 * (the subflow settled on it).
 *
 * Not in the paper: a subflow flagged {@link SubflowRates.belowFairShare}
 * (FractalConfig.fairShare: under its fair share of its path) is left out of
 * the shared ramp-up: it is allocated its estimate, and the others share the
 * largest ΔSR among themselves.
 *
 * @returns SR_allocated per subflow (bps), same order as `subflows`
 */
export function fractionalDistribution(subflows: readonly SubflowRates[]): number[] {
  const out = new Array<number>(subflows.length);
  let total = 0;
  let totalWeight = 0;
  const weights = new Array<number>(subflows.length).fill(0);
  subflows.forEach((s, j) => {
    const d = s.estimatedBps - s.stableBps;
    if (d <= 0 || s.belowFairShare) return;
    total = Math.max(total, d);
    weights[j] = d / Math.max(1, s.rttMs);
    totalWeight += weights[j];
  });
  subflows.forEach((s, j) => {
    const d = s.estimatedBps - s.stableBps;
    if (d <= 0) {
      out[j] = s.estimatedBps; // principle 1: congestion, follow the estimate at once
      return;
    }
    if (s.belowFairShare) {
      out[j] = s.estimatedBps; // under a fair share of its path: ramps as a single-path flow
      return;
    }
    const rampUp = Math.min(d, (total * weights[j]) / totalWeight);
    const fresh = s.stableBps + rampUp;
    const prev = s.allocatedBps;
    // Overlapping ramp-ups: keep the smaller of the previous and the new allocation (§IV-B).
    out[j] = prev !== undefined && prev > s.stableBps ? Math.min(prev, fresh) : fresh;
  });
  return out;
}

/**
 * MPRTP §IV-C Eq. 1: target^(off) = 1 - |(MR_demanded - MR_actual) / (MR_demanded - Σ SR_stable)|,
 * clamped to [0, 1]. 0 while the encoder still produces the old (stable)
 * rate, 1 once it produces the demanded one. (The paper's prose says the
 * opposite of the equation for 0; Algorithm 2's `target` line only makes
 * sense with the equation, which is what this follows.) With
 * MR_demanded = Σ SR_stable there is no transition: 1.
 *
 * @param demandedBps MR_demanded: the media rate asked of the encoder (Σ SR_allocated), bps
 * @param actualBps MR_actual: the media rate actually sent, bps
 * @param stableSumBps Σ SR_stable, bps
 */
export function transientOffset(demandedBps: number, actualBps: number, stableSumBps: number): number {
  const span = demandedBps - stableSumBps;
  if (!Number.isFinite(span) || Math.abs(span) < 1) return 1;
  const off = 1 - Math.abs((demandedBps - actualBps) / span);
  return Math.min(1, Math.max(0, Number.isFinite(off) ? off : 1));
}

/**
 * MPRTP §IV-C Algorithm 2, `target` line: SR_transient = SR_allocated · target^(off) + SR_stable · (1 - target^(off)).
 * @returns bps
 */
export function transientBitrate(allocatedBps: number, stableBps: number, offset: number): number {
  return allocatedBps * offset + stableBps * (1 - offset);
}

/** What a subflow's estimator tells the coupler (rates in bps). */
export interface SubflowUpdate {
  estimatedBps: number;
  stableBps: number;
  state: SubflowPathState;
  rttMs: number;
  /** SR_actual: measured send rate on the subflow (bps). */
  actualBps: number;
  /** See {@link SubflowRates.belowFairShare}. */
  belowFairShare?: boolean;
  /** Receive rate (bps) and the path's measured capacity (bps, 0: not measured) (FractalConfig.fairShare). */
  receiveBps?: number;
  capacityBps?: number;
}

interface Member extends SubflowUpdate {
  allocatedBps: number | undefined;
  lastSeenUs: number;
}

/** A member not heard from (no tick, no report) for this long is left out (µs): its path was removed. */
const MEMBER_TIMEOUT_US = 1_000_000;

/**
 * The MRCM of one sender (MPRTP §III-B): every subflow's FRACTaL estimator
 * joins it, reports SR_estimated, SR_stable, path state and RTT
 * ({@link update}), and reads back its share ({@link targetBps}). A subflow
 * whose estimator stops calling in (path removed) drops out after 1 s.
 */
export class FractalCoupler {
  private readonly members = new Map<number, Member>();
  private nextId = 0;
  private newestUs = Number.NEGATIVE_INFINITY;

  /** A new subflow; returns its handle. Its allocation starts at `startBps`. */
  join(startBps: number, nowUs: number): number {
    const id = this.nextId++;
    this.members.set(id, { estimatedBps: startBps, stableBps: startBps, state: 'stable', rttMs: 100, actualBps: 0, allocatedBps: startBps, lastSeenUs: nowUs });
    return id;
  }

  /** Subflow `id` is alive at `nowUs` (called from its onTick). */
  touch(id: number, nowUs: number): void {
    const m = this.members.get(id);
    if (!m) return;
    if (nowUs > m.lastSeenUs) m.lastSeenUs = nowUs;
    if (nowUs > this.newestUs) this.newestUs = nowUs;
  }

  /** A Subflow Monitor report: store it and re-run Algorithm 1 over the live subflows (§III-B). */
  update(id: number, u: SubflowUpdate, nowUs: number): void {
    const m = this.members.get(id);
    if (!m) return;
    Object.assign(m, u);
    this.touch(id, nowUs);
    this.redistribute();
  }

  /** Only the measured send rate changed (cheap; no redistribution). */
  setActual(id: number, actualBps: number): void {
    const m = this.members.get(id);
    if (m) m.actualBps = actualBps;
  }

  /** SR_allocated of subflow `id` (bps). */
  allocatedBps(id: number): number {
    const m = this.members.get(id);
    return m?.allocatedBps ?? m?.estimatedBps ?? 0;
  }

  /** Live subflows (heard from within 1 s of the newest). */
  private live(): Member[] {
    const out: Member[] = [];
    for (const m of this.members.values()) if (m.lastSeenUs >= this.newestUs - MEMBER_TIMEOUT_US) out.push(m);
    return out;
  }

  private redistribute(): void {
    const live = this.live();
    const ar = fractionalDistribution(live);
    live.forEach((m, j) => {
      m.allocatedBps = ar[j];
    });
  }

  /**
   * The rate the sender should use for subflow `id` (bps): its transient
   * bitrate (Eq. 1, Algorithm 2), scaled so that the subflows' rates sum to
   * MR_demanded = Σ SR_allocated. The sum is the encoder's target, the
   * ratios are the scheduler's split: the split follows SR_transient while
   * the encoder moves to the new allocation (§III-C), so no subflow gets
   * more than its share of what the encoder still produces (traffic fading,
   * §II-A Fig. 1).
   */
  targetBps(id: number): number {
    const me = this.members.get(id);
    if (!me) return 0;
    const live = this.live();
    if (live.length <= 1 || !live.includes(me)) return this.allocatedBps(id);
    let demanded = 0;
    let actual = 0;
    let stable = 0;
    for (const m of live) {
      demanded += m.allocatedBps ?? m.estimatedBps;
      actual += m.actualBps;
      stable += m.stableBps;
    }
    const off = transientOffset(demanded, actual, stable);
    let transientSum = 0;
    for (const m of live) transientSum += transientBitrate(m.allocatedBps ?? m.estimatedBps, m.stableBps, off);
    const mine = transientBitrate(me.allocatedBps ?? me.estimatedBps, me.stableBps, off);
    if (!(transientSum > 0)) return this.allocatedBps(id);
    return (demanded * mine) / transientSum;
  }

  /**
   * Subflow `id`'s share of the sender's rate: share = its SR_stable / Σ
   * SR_stable over the live subflows, maxShare the largest share, n the
   * number of live subflows (1 and share 1 when it is alone or unknown).
   */
  shareOf(id: number): { share: number; maxShare: number; n: number } {
    const me = this.members.get(id);
    const live = this.live();
    if (!me || live.length <= 1 || !live.includes(me)) return { share: 1, maxShare: 1, n: 1 };
    let sum = 0;
    let max = 0;
    for (const m of live) {
      sum += m.stableBps;
      if (m.stableBps > max) max = m.stableBps;
    }
    if (!(sum > 0)) return { share: 1 / live.length, maxShare: 1 / live.length, n: live.length };
    return { share: me.stableBps / sum, maxShare: max / sum, n: live.length };
  }

  /**
   * The sender's receive rate and capacity summed over its live subflows
   * (bps); undefined while a subflow has no capacity measured.
   */
  aggregate(): { receiveBps: number; capacityBps: number } | undefined {
    let rr = 0;
    let cap = 0;
    for (const m of this.live()) {
      if (!(m.capacityBps !== undefined && m.capacityBps > 0)) return undefined;
      rr += m.receiveBps ?? 0;
      cap += m.capacityBps;
    }
    return cap > 0 ? { receiveBps: rr, capacityBps: cap } : undefined;
  }

  /** Number of live subflows. */
  size(): number {
    return this.live().length;
  }
}
