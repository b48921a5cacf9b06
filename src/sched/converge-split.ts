/**
 * The batch steps of the Converge scheduler (see src/sched/converge.ts for
 * the algorithm): the enabled set and Eq. 1 shares, Eq. 2 (QoE feedback),
 * temporal layers, the best-path floor, the encoder-rate fraction, Eq. 3
 * re-enabling and probes of idle paths. Each operates on a
 * {@link ConvergeState}; none allocates.
 */
import type { Assignment, OutgoingPacket } from '../core/types.js';
import { MAX_PATHS } from '../core/types.js';
import { type ConvergeState, EPS, clamp } from './converge-state.js';

/** Bound of a path's base-layer debt, in typical frame batches. */
const MAX_LAYER_DEBT_BATCHES = 4;

/**
 * Build E (up and enabled), disable paths whose alpha drove P_i to 0 (never
 * the last one), compute the Eq. 1 shares and the cpt order of E.
 */
export function buildEnabledSet(s: ConvergeState, ref: number, _nowUs: number): void {
  const inE = s.inE;
  let e = 0;
  for (let i = 0; i < MAX_PATHS; i++) {
    inE[i] = s.up[i] === 1 && s.disabled[i] !== 1 ? 1 : 0;
    e += inE[i];
  }
  if (e > 0 && s.config.fastReenable) e += fastReenable(s);
  if (e === 0) {
    // Every up path is disabled: force-enable the one with the lowest cpt.
    let best = -1;
    for (let i = 0; i < MAX_PATHS; i++) {
      if (s.up[i] === 1 && (best < 0 || s.cpt[i] < s.cpt[best])) best = i;
    }
    s.enable(best);
    s.counters.forcedEnables++;
    inE[best] = 1;
    e = 1;
  }
  // Disable loop: removing a path changes the others' shares, so repeat.
  for (;;) {
    computeShares(s, e);
    if (e <= 1) break;
    let victim = -1;
    for (let i = 0; i < MAX_PATHS; i++) {
      if (inE[i] !== 1 || s.alphaShare[i] >= 0) continue;
      if ((s.share[i] + s.alphaShare[i]) * ref < 0.5) {
        victim = i;
        break;
      }
    }
    if (victim < 0) break;
    s.disable(victim);
    inE[victim] = 0;
    e--;
  }
  // Clamp the accumulated alpha to what Eq. 2 can realise: [-share, share*(maxBoost-1)].
  const boost = s.config.maxBoost - 1;
  for (let i = 0; i < MAX_PATHS; i++) {
    if (inE[i] !== 1) continue;
    s.alphaShare[i] = clamp(s.alphaShare[i], -s.share[i], s.share[i] * boost);
  }
  // Order E by completion time (insertion sort, ties by id).
  const order = s.order;
  let n = 0;
  for (let i = 0; i < MAX_PATHS; i++) {
    if (inE[i] !== 1) continue;
    let j = n++;
    while (j > 0 && s.cpt[order[j - 1]] > s.cpt[i]) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = i;
  }
  s.eCount = e;
}

/**
 * {@link ConvergeConfig.fastReenable}: enable every disabled up path whose
 * completion time beats the best enabled path's by more than the frame
 * construction delay (max(newest FCD, `reenableMinFcdMs`)). Returns the
 * number of paths enabled (they join `inE`).
 */
export function fastReenable(s: ConvergeState): number {
  let best = Infinity;
  for (let i = 0; i < MAX_PATHS; i++) if (s.inE[i] === 1 && s.cpt[i] < best) best = s.cpt[i];
  const margin = Math.max(s.lastFcdMs, s.config.reenableMinFcdMs);
  let n = 0;
  for (let i = 0; i < MAX_PATHS; i++) {
    if (s.up[i] !== 1 || s.disabled[i] !== 1 || !(s.cpt[i] + margin < best)) continue;
    s.enable(i);
    s.counters.fastReenables++;
    s.inE[i] = 1;
    n++;
  }
  return n;
}

export function computeShares(s: ConvergeState, e: number): void {
  let sumS = 0;
  for (let i = 0; i < MAX_PATHS; i++) if (s.inE[i] === 1) sumS += s.rate[i];
  for (let i = 0; i < MAX_PATHS; i++) {
    s.share[i] = s.inE[i] !== 1 ? 0 : sumS > 0 ? s.rate[i] / sumS : 1 / e;
  }
}

/** Eq. 1 with largest-remainder rounding (+ carried remainders): sum(target) = N. */
export function splitEq1(s: ConvergeState, N: number): void {
  const { order, base, target, carry, extra, share } = s;
  const e = s.eCount;
  let sumFloor = 0;
  for (let o = 0; o < e; o++) {
    const j = order[o];
    base[j] = share[j] * N;
    const f = Math.floor(base[j] + EPS);
    target[j] = f > N ? N : f;
    sumFloor += target[j];
    extra[j] = 0;
  }
  let left = N - sumFloor;
  while (left > 0) {
    let best = -1;
    let bestKey = -Infinity;
    for (let o = 0; o < e; o++) {
      const j = order[o];
      if (extra[j] === 1) continue;
      const key = base[j] - target[j] + carry[j];
      if (key > bestKey + EPS) {
        bestKey = key;
        best = j;
      }
    }
    if (best < 0) {
      // More leftovers than paths can only come from float error: give them to the fast path.
      target[order[0]] += left;
      break;
    }
    target[best]++;
    extra[best] = 1;
    left--;
  }
  for (let o = 0; o < e; o++) {
    const j = order[o];
    carry[j] = clamp(carry[j] + base[j] - target[j], -1, 1);
  }
}

/** Eq. 2: shift round(alphaShare_i * N) packets between path i and its counterpart. */
export function applyAlpha(s: ConvergeState, N: number): void {
  const { order, target, base, alphaShare } = s;
  const e = s.eCount;
  if (e < 2) return;
  for (let o = 0; o < e; o++) {
    const i = order[o];
    const a = alphaShare[i];
    if (a === 0) continue;
    let d = Math.round(a * N);
    if (d === 0) continue;
    if (d < 0) {
      const give = -d < target[i] ? -d : target[i];
      if (give === 0) continue;
      target[i] -= give;
      target[order[o === 0 ? 1 : 0]] += give;
    } else {
      const pmax = Math.max(target[i], Math.ceil(s.config.maxBoost * base[i] - EPS));
      if (d > pmax - target[i]) d = pmax - target[i];
      let need = d;
      // Take from the fast path first (or the next by cpt when i is the fast path).
      for (let q = 0; q < e && need > 0; q++) {
        const j = order[q];
        if (j === i) continue;
        const take = target[j] < need ? target[j] : need;
        target[j] -= take;
        need -= take;
      }
      target[i] += d - need;
    }
  }
}

/**
 * {@link ConvergeConfig.baseLayerFastPath}: a base-layer frame's packets all
 * go to the fast path (each other path's target becomes its debt); an
 * upper-layer frame gives each other path up to its debt from the fast
 * path's target. Returns true when it moved a base-layer frame (the
 * deadline's encoder-rate EWMA then skips the batch: the other paths' share
 * was deferred, not refused).
 */
export function applyLayer(s: ConvergeState, layer: number | undefined, ref: number): boolean {
  const e = s.eCount;
  if (!s.config.baseLayerFastPath || layer === undefined || e < 2) return false;
  const { order, target, layerDebt, layerPaid } = s;
  layerPaid.fill(0);
  const fast = order[0];
  const cap = MAX_LAYER_DEBT_BATCHES * Math.max(1, ref);
  let moved = 0;
  for (let o = 1; o < e; o++) {
    const j = order[o];
    if (layer === 0) {
      if (target[j] === 0) continue;
      layerDebt[j] = Math.min(cap, layerDebt[j] + target[j]);
      moved += target[j];
      target[j] = 0;
    } else {
      const give = Math.min(Math.floor(layerDebt[j] + EPS), target[fast]);
      if (give <= 0) continue;
      target[j] += give;
      target[fast] -= give;
      layerDebt[j] -= give;
      layerPaid[j] = give;
    }
  }
  if (moved === 0) return false;
  target[fast] += moved;
  s.counters.baseLayerMovedPackets += moved;
  return true;
}

/**
 * Best-path floor (our extension of Converge §4.1). The frame's deadline D = cpt of the fast path for the
 * WHOLE batch (its queue + N packets at its delivery rate + SRTT/2: what
 * sending the frame on the best path alone would achieve) +
 * `deadlineSlackMs`. Every other enabled path j keeps at most the packets
 * that arrive by D, n_j = floor(((D - SRTT_j/2) x rate_j - queued_j) / k);
 * the rest of its target goes to the fast path. The frame therefore
 * completes no later (by the estimates) than on the best path alone, a
 * path whose queue or delay misses every deadline carries no media (it is
 * probed, {@link maybeProbe}), and takes packets again as soon as it
 * would deliver them in time. Frames that the fast path serialises slower
 * than the other paths' delay gap still use every path (Eq. 1).
 * `mediaBatch`: only frame batches update the encoder-rate EWMA.
 */
export function applyDeadline(s: ConvergeState, N: number, kBits: number, mediaBatch: boolean, upperLayer = false): void {
  const { order, target } = s;
  const e = s.eCount;
  if (e < 2 || kBits <= 0) return;
  const fast = order[0];
  const deadlineMs = s.cpt[fast] + s.config.deadlineSlackMs + (upperLayer ? s.config.upperLayerSlackMs : 0);
  const g = s.config.deadlineEwmaGain;
  for (let o = 1; o < e; o++) {
    const j = order[o];
    const want = target[j];
    const r = s.gput[j] > 0 ? s.gput[j] : 1e-3;
    const budgetBits = ((deadlineMs - s.rtt[j] / 2) / 1000) * r - s.queued[j] * 8;
    const cap = budgetBits > 0 ? Math.floor(budgetBits / kBits + EPS) : 0;
    let keep = want;
    if (want > cap) {
      keep = cap;
      target[fast] += want - cap;
      target[j] = cap;
      s.counters.deadlineMovedPackets += want - cap;
    }
    if (mediaBatch) {
      // Fraction of the path's Eq. 1 share (not N; plus the base-layer debt paid back in this batch) kept:
      // an unused share lowers the encoder target.
      const ref = s.share[j] * N + (upperLayer ? s.layerPaid[j] : 0);
      const f = ref > EPS ? Math.min(1, keep / ref) : 1;
      s.keptFrac[j] += g * (f - s.keptFrac[j]);
    }
  }
  if (mediaBatch) s.keptFrac[fast] += g * (1 - s.keptFrac[fast]);
}

/**
 * {@link Scheduler.encoderRateFraction}: Eq. 2 with a negative alpha moves
 * a fraction of path i's share onto its counterpart (the fast path, or the
 * next by cpt when i is the fast path), which then carries more than its
 * own S_i whenever the encoder produces sum(S). The encoder can produce at
 * most sum(S) / max_j(load_j / share_j) without overloading any path.
 * Positive alpha (an "early" path takes up to maxBoost x its share from the
 * fast path) does not lower it: it uses headroom the receiver saw.
 * With `encoderExcludesDisabled`, a path Converge has disabled does not count
 * at all ({@link enabledRateShare}): the sender sums S over every up path, and
 * otherwise the encoder keeps producing sum(S) onto the one enabled path
 * after QoE feedback disabled the other (cellular suite wc:8_2 at 51 s: 8
 * Mbps onto a 3.2 Mbps path for 350 ms).
 * Computed from the shares and alpha of the last `schedule` call.
 */
export function encoderRateFraction(s: ConvergeState): number {
  const e = s.eCount;
  const enabled = s.config.encoderExcludesDisabled ? enabledRateShare(s) : 1;
  if (e < 2) return enabled;
  const { order, share, alphaShare } = s;
  const load = s.load;
  for (let o = 0; o < e; o++) load[order[o]] = share[order[o]];
  for (let o = 0; o < e; o++) {
    const i = order[o];
    const a = alphaShare[i];
    if (!(a < 0)) continue;
    const give = -a < load[i] ? -a : load[i];
    load[i] -= give;
    load[order[o === 0 ? 1 : 0]] += give;
  }
  let worst = 1;
  for (let o = 0; o < e; o++) {
    const j = order[o];
    if (share[j] > 0 && load[j] / share[j] > worst) worst = load[j] / share[j];
  }
  if (s.config.deadlineSlackMs < 0) return enabled / worst;
  // Best-path floor: the shares the deadline keeps cutting are not usable
  // rate; the encoder targets the fast path's S plus what the others carry.
  let usable = 0;
  for (let o = 0; o < e; o++) usable += share[order[o]] * (o === 0 ? 1 : s.keptFrac[order[o]]);
  return enabled * Math.min(1 / worst, usable);
}

/**
 * Share of sum(S) over the up paths that the enabled set E holds: a path
 * Converge has disabled (P_i = 0) carries only probe copies, so its S_i is
 * no rate the encoder may use. 1 when every up path is enabled or no rate is
 * known.
 */
export function enabledRateShare(s: ConvergeState): number {
  let sumUp = 0;
  let sumE = 0;
  for (let i = 0; i < MAX_PATHS; i++) {
    if (s.up[i] !== 1) continue;
    sumUp += s.rate[i];
    if (s.disabled[i] !== 1) sumE += s.rate[i];
  }
  return sumUp > 0 && sumE < sumUp ? sumE / sumUp : 1;
}

/** Eq. 3 re-enable checks, every `reenableCheckIntervalMs`, with RTT EWMA and hold. */
export function checkReenable(s: ConvergeState, nowUs: number, fast: number): void {
  const cfg = s.config;
  if (nowUs - s.lastCheckUs < cfg.reenableCheckIntervalMs * 1000) return;
  s.lastCheckUs = nowUs;
  const g = cfg.rttEwmaGain;
  for (let i = 0; i < MAX_PATHS; i++) {
    if (s.up[i] !== 1) continue;
    const r = s.rtt[i];
    s.rttEwma[i] = s.rttEwma[i] === 0 ? r : s.rttEwma[i] + g * (r - s.rttEwma[i]);
  }
  for (let i = 0; i < MAX_PATHS; i++) {
    if (s.up[i] !== 1 || s.disabled[i] !== 1) continue;
    const ok = s.probedSinceDisable[i] === 1 && s.lastFcdMs >= 0 && (s.rttEwma[i] - s.rttEwma[fast]) / 2 <= Math.max(s.lastFcdMs, cfg.reenableMinFcdMs) && s.loss[i] <= cfg.reenableMaxLossRate;
    if (!ok) {
      s.streak[i] = 0;
      continue;
    }
    if (s.streak[i] === 0) s.streakSinceUs[i] = nowUs;
    s.streak[i]++;
    if (s.streak[i] >= cfg.reenableChecks && nowUs - s.streakSinceUs[i] >= cfg.reenableHoldMs * 1000) {
      s.enable(i);
    }
  }
}

/**
 * At most one probe per batch: the disabled up path probed least recently,
 * if due; with the best-path floor also an enabled up path that the
 * deadline has kept idle for `probeIntervalMs` (its RTT must stay measured
 * for it to be taken back when it recovers).
 */
export function maybeProbe(s: ConvergeState, out: Assignment[], packets: readonly OutgoingPacket[], dupIdx: number, nowUs: number): void {
  const intervalUs = s.config.probeIntervalMs * 1000;
  const floor = s.config.deadlineSlackMs >= 0;
  let best = -1;
  for (let i = 0; i < MAX_PATHS; i++) {
    if (s.up[i] !== 1) continue;
    // An enabled path is probed only when idle: not used for probeIntervalMs, nor by this batch (probeIntervalMs 0).
    if (s.disabled[i] !== 1 && !(floor && s.lastUsedUs[i] < nowUs && nowUs - s.lastUsedUs[i] >= intervalUs)) continue;
    if (nowUs - s.lastProbeUs[i] < intervalUs) continue;
    // Never a copy onto the path that carries the original.
    if (out[dupIdx]?.pathId === i) continue;
    if (best < 0 || s.lastProbeUs[i] < s.lastProbeUs[best]) best = i;
  }
  if (best < 0) return;
  out.push({ packet: packets[dupIdx], pathId: best, probe: true });
  s.lastProbeUs[best] = nowUs;
  s.probedSinceDisable[best] = 1;
  s.counters.probesSent++;
}
