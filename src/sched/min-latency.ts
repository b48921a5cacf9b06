/**
 * Minimum expected latency packet distribution of the overlay design
 * (registry name `overlay-ucb`), and its sender frame-drop rule.
 *
 * SOURCE: Zhang & Lei, "An Online Learning Based Path Selection for
 * Multipath Video Telephony Service in Overlay":
 * - §3.1.3 Eq. 4: the expected latency of a packet on subflow s is
 *   λ_s = SRTT_s / 2 + Q_s / bw_s, with Q_s the bytes already queued for s
 *   and bw_s its estimated bandwidth; each packet goes to the subflow with
 *   the smallest λ_s (and Q_s grows by the packet);
 * - §3.1.3 Eq. 5: SRTT = (1 - δ) SRTT + δ RTT with δ = 0.85 (the newest RTT
 *   sample weighs most), kept here per path from the engine's RTT;
 * - §3.3 Eq. 14-15 ({@link LatencyFrameDropper}): a raw frame is dropped
 *   before encoding when d = d_q + d̂_en + λ_min exceeds 400 ms, with d̂_en
 *   the encoding delay smoothed with α = 0.9.
 *
 * The relay choice per subflow (the paper's Eq. 8-13) is not the
 * scheduler's: see src/sched/relay-ucb.ts, driven by whoever owns the
 * routes (the simulator, MultipathCall's relay switch).
 *
 * I/O-free. Path ids outside the snapshot, down paths and paths with no
 * rate are skipped; with no path up `schedule` returns [].
 */
import type { Assignment, OutgoingPacket, PathId, PathState } from '../core/types.js';
import { isValidPathId, packetBytes } from './path-util.js';
import type { Scheduler } from './types.js';

/** δ of Eq. 5. */
export const SRTT_DELTA = 0.85;
/** Frame-drop threshold of Eq. 15 (ms). */
export const FRAME_DROP_DELAY_MS = 400;
/** α of Eq. 14 (the paper's "empirically 0.9", shared with Eq. 11). */
export const ENCODE_DELAY_ALPHA = 0.9;
/** Floor of bw_s in Eq. 4 (bps): a path with no estimate yet is slow, not infinitely fast. */
const MIN_BW_BPS = 50_000;

/** Eq. 4: expected latency (ms) of a packet put behind `queuedBytes` on a path with this SRTT (ms) and bandwidth (bps). */
export function expectedLatencyMs(srttMs: number, queuedBytes: number, bwBps: number): number {
  return srttMs / 2 + (queuedBytes * 8000) / Math.max(MIN_BW_BPS, bwBps);
}

/**
 * Q_s of Eq. 4 (bytes): the paper's "total length of scheduled packets" of
 * the subflow (our pacer + datachannel queue), plus (our extension) the
 * bytes in flight beyond the path's BDP at its rate and min RTT. The paper's
 * sender paces each subflow at exactly its pacing rate, so its queue holds
 * all the excess; ours paces at a margin above the target (src/cc/pacer.ts)
 * and the excess waits in the network's queue instead, where Eq. 4 must see it.
 */
export function queueBytes(p: PathState): number {
  const q = Number.isFinite(p.queuedBytes) ? Math.max(0, p.queuedBytes) : 0;
  const bdp = Number.isFinite(p.rateBps) && Number.isFinite(p.minRttMs) ? (Math.max(0, p.rateBps) * Math.max(0, p.minRttMs)) / 8000 : 0;
  const inflight = Number.isFinite(p.inflightBytes) ? Math.max(0, p.inflightBytes) : 0;
  return q + Math.max(0, inflight - bdp);
}

export class MinLatencyScheduler implements Scheduler {
  /** @param name its registry name ('overlay-ucb', or 'overlay-ucb-bbr' for the RTC-BBR variant). */
  constructor(readonly name: string = 'overlay-ucb') {}

  /** Eq. 5 SRTT per path (ms). */
  private readonly srtt = new Map<PathId, number>();

  schedule(packets: readonly OutgoingPacket[], paths: readonly PathState[], _nowUs: number): Assignment[] {
    const ids: PathId[] = [];
    const q: number[] = [];
    const srtt: number[] = [];
    const bw: number[] = [];
    const seen = new Set<PathId>();
    for (const p of paths) {
      // The first snapshot entry of an id decides (as src/sched/path-util.ts).
      if (p == null || !isValidPathId(p.id) || seen.has(p.id)) continue;
      seen.add(p.id);
      if (!p.up) continue;
      const sample = Number.isFinite(p.srttMs) && p.srttMs > 0 ? p.srttMs : 100;
      const prev = this.srtt.get(p.id);
      const s = prev === undefined ? sample : (1 - SRTT_DELTA) * prev + SRTT_DELTA * sample;
      this.srtt.set(p.id, s);
      ids.push(p.id);
      q.push(queueBytes(p));
      srtt.push(s);
      bw.push(Number.isFinite(p.rateBps) ? p.rateBps : 0);
    }
    if (ids.length === 0) return [];
    const out: Assignment[] = new Array(packets.length);
    for (let k = 0; k < packets.length; k++) {
      let best = 0;
      let bestLat = Number.POSITIVE_INFINITY;
      for (let j = 0; j < ids.length; j++) {
        const lat = expectedLatencyMs(srtt[j], q[j], bw[j]);
        if (lat < bestLat) {
          bestLat = lat;
          best = j;
        }
      }
      q[best] += packetBytes(packets[k]);
      out[k] = { packet: packets[k], pathId: ids[best] };
    }
    return out;
  }

  /**
   * λ_min of Eq. 15 (ms): the smallest Eq. 4 latency over the up paths of
   * `paths` now, with this scheduler's Eq. 5 SRTTs; +Infinity with no path up.
   */
  minExpectedLatencyMs(paths: readonly PathState[]): number {
    let m = Number.POSITIVE_INFINITY;
    for (const p of paths) {
      if (!p.up) continue;
      const s = this.srtt.get(p.id) ?? (Number.isFinite(p.srttMs) && p.srttMs > 0 ? p.srttMs : 100);
      m = Math.min(m, expectedLatencyMs(s, queueBytes(p), Number.isFinite(p.rateBps) ? p.rateBps : 0));
    }
    return m;
  }

  /** Ignored (the overlay design has no receiver QoE feedback). */
  onQoeFeedback(): void {}

  /** Always true: the scheduler never disables a path (a bad route is the relay selector's business). */
  isEnabled(_pathId: PathId): boolean {
    return true;
  }
}

/**
 * Eq. 14-15: drop a raw frame before encoding when its expected delivery
 * delay d = d_q + d̂_en + λ_min exceeds {@link FRAME_DROP_DELAY_MS}.
 */
export class LatencyFrameDropper {
  private encodeMs: number | undefined;
  /** Frames dropped so far. */
  dropped = 0;

  /** @throws RangeError when the threshold is not finite and > 0. */
  constructor(readonly thresholdMs = FRAME_DROP_DELAY_MS) {
    if (!(Number.isFinite(thresholdMs) && thresholdMs > 0)) throw new RangeError(`LatencyFrameDropper: thresholdMs must be > 0, got ${thresholdMs}`);
  }

  /** Eq. 14: an encoding-delay sample (ms); bad samples are ignored. */
  onEncodeDelay(ms: number): void {
    if (!(Number.isFinite(ms) && ms >= 0)) return;
    this.encodeMs = this.encodeMs === undefined ? ms : (1 - ENCODE_DELAY_ALPHA) * this.encodeMs + ENCODE_DELAY_ALPHA * ms;
  }

  /** d̂_en (ms), 0 before the first sample. */
  encodeDelayMs(): number {
    return this.encodeMs ?? 0;
  }

  /**
   * Eq. 15 for the frame at the head of the raw queue. A key frame is never
   * dropped (the receiver needs it to recover); an unknown λ_min (+Infinity:
   * nothing scheduled yet) drops nothing.
   */
  shouldDrop(queueDelayMs: number, lambdaMinMs: number, keyFrame: boolean): boolean {
    if (keyFrame || !Number.isFinite(lambdaMinMs)) return false;
    const d = Math.max(0, Number.isFinite(queueDelayMs) ? queueDelayMs : 0) + this.encodeDelayMs() + lambdaMinMs;
    const drop = d > this.thresholdMs;
    if (drop) this.dropped++;
    return drop;
  }
}
