/**
 * LoLa's delay-budget encoder target (LoLa §3.2 Eq. 2 and §3.3 Eq. 3), shared by the LoLa scheduler (src/sched/lola.ts)
 * and Converge's encoder cap (src/sched/converge.ts,
 * `ConvergeConfig.delayBudgetMs`).
 *
 * - Eq. 2: a path may hold cwnd_f = (δ - min_RTT_f / 2) / ewma_iat_f MTU
 *   packets, δ the end-to-end delay budget: a packet sent behind N_f others
 *   arrives at about owd_f + (N_f + 1) · ewma_iat_f, within δ while N_f < cwnd_f.
 * - Eq. 3: the next frame may be MTU · Σ_f (margin · cwnd_f - N_f) bytes
 *   (margin 0.8 for estimation noise), N_f the path's packets in flight and
 *   queued. At the frame rate that is a bit rate; over the summed path rates
 *   it is the fraction of the rate the encoder may use
 *   ({@link DelayBudgetCap.fraction}). Once the paths hold more than their
 *   delay budget, the encoder target collapses until the backlog drains: a
 *   delay-based pushback on the encoder, not on the paths.
 *
 * Signals (our reading, as in lola.ts): ewma_iat_f = MTU · 8 / delivery rate
 * (max(min(goodput, target), target x (1 - loss)), `deliveryRateBps`; for Converge the
 * goodput alone on a path whose SRTT exceeds its min RTT by more than
 * `queuedGoodputMs`, ConvergeConfig.budgetQueuedGoodputMs), EWMA gain 1/8 per
 * batch; owd_f = min RTT / 2; N_f = (inflight + queued bytes) / MTU for
 * LoLa. Converge reads N_f as the packets still ahead of a new one
 * (`pipeSlackMs` >= 0, {@link networkBacklogBytes}): our in-flight bytes
 * include a return trip and up to one report interval of packets already
 * delivered, which on 80-120 ms paths alone exceed the window of Eq. 2.
 */
import { MAX_PATHS, type OutgoingPacket, type PathState } from '../core/types.js';
import { deliveryRateBps, firstUsable, nonNeg, rttMs } from './path-util.js';

/** The MTU of LoLa Eq. 2-3 (bytes). */
export const DELAY_BUDGET_MTU = 1200;
/** EWMA gain of ewma_iat and of the frame interval. */
export const DELAY_BUDGET_EWMA_GAIN = 1 / 8;
/** Lowest fraction {@link DelayBudgetCap.fraction} returns (the encoder never stops). */
export const MIN_ENCODER_FRACTION = 0.05;

/**
 * Fold one delivery-rate sample of path `p` into `iat[p.id]` (ms per MTU
 * packet; 0 = not measured yet) and return the new value.
 */
export function updateIatMs(iat: Float64Array, p: PathState, rateBps: number = deliveryRateBps(p)): number {
  const rate = rateBps;
  const sample = rate > 0 ? ((DELAY_BUDGET_MTU * 8) / rate) * 1000 : 0;
  const prev = iat[p.id];
  if (sample > 0) iat[p.id] = prev > 0 ? prev + DELAY_BUDGET_EWMA_GAIN * (sample - prev) : sample;
  return iat[p.id];
}

/** min RTT (ms) of `p`, falling back to its SRTT. */
export function minRttOf(p: PathState): number {
  return Number.isFinite(p.minRttMs) && p.minRttMs > 0 ? p.minRttMs : rttMs(p);
}

/** LoLa Eq. 2: the path's window (MTU packets) within a delay budget `budgetMs`; 0 while `iatMs` is unknown. */
export function delayBudgetWindow(budgetMs: number, minRttMs: number, iatMs: number): number {
  return iatMs > 0 ? Math.max(0, (budgetMs - minRttMs / 2) / iatMs) : 0;
}

/** Packets (in MTUs) a path holds: in flight plus queued at the sender. */
export function backlogPackets(p: PathState): number {
  return (nonNeg(p.inflightBytes) + nonNeg(p.queuedBytes)) / DELAY_BUDGET_MTU;
}

/**
 * Bytes in flight on `p` beyond its pipe, delivery rate x (min RTT +
 * `slackMs`): the bytes still ahead of a new packet in the network queue.
 * In-flight bytes also count packets already delivered whose report is on
 * its way back (one return trip plus up to one report interval, `slackMs`).
 */
export function networkBacklogBytes(p: PathState, slackMs: number): number {
  const pipe = (deliveryRateBps(p) * (minRttOf(p) + slackMs)) / 8000;
  const inflight = nonNeg(p.inflightBytes);
  return inflight > pipe ? inflight - pipe : 0;
}

/**
 * EWMA of the interval between frames (ms), from the frame ids of the
 * batches a scheduler sees: a batch whose first packet has a new frame id
 * starts a frame. Gaps of 1 s or more (a paused source) are not counted.
 */
export class FrameIntervalMeter {
  private lastFrameId: number | undefined;
  private lastFrameUs: number | undefined;
  /** EWMA of the frame interval (ms); 0 = unknown. */
  intervalMs = 0;

  note(packets: readonly OutgoingPacket[], nowUs: number): void {
    if (packets.length === 0) return;
    const id = packets[0].frameId;
    if (id === this.lastFrameId) return;
    if (this.lastFrameUs !== undefined && nowUs > this.lastFrameUs) {
      const dt = (nowUs - this.lastFrameUs) / 1000;
      if (dt < 1000) this.intervalMs = this.intervalMs > 0 ? this.intervalMs + DELAY_BUDGET_EWMA_GAIN * (dt - this.intervalMs) : dt;
    }
    this.lastFrameId = id;
    this.lastFrameUs = nowUs;
  }
}

/**
 * LoLa Eq. 3 as a fraction of `rateSumBps`: a frame of `targetBytes` every
 * `frameIntervalMs`, clamped to [{@link MIN_ENCODER_FRACTION}, 1]; 1 while
 * the frame interval or the rates are unknown.
 */
export function targetFraction(targetBytes: number, frameIntervalMs: number, rateSumBps: number): number {
  if (!(frameIntervalMs > 0) || !(rateSumBps > 0)) return 1;
  const bps = (targetBytes * 8 * 1000) / frameIntervalMs;
  return Math.min(1, Math.max(MIN_ENCODER_FRACTION, bps / rateSumBps));
}

/**
 * LoLa's Eq. 2-3 encoder target on its own, for a scheduler that splits
 * packets its own way (Converge): call {@link observe} with every batch, read
 * {@link fraction}. Fixed-size state; allocates nothing per batch.
 */
export class DelayBudgetCap {
  private readonly iat = new Float64Array(MAX_PATHS);
  private readonly seen = new Uint8Array(MAX_PATHS);
  private readonly frames = new FrameIntervalMeter();
  private targetBytes = 0;
  private rateSumBps = 0;

  /**
   * @param budgetMs δ of Eq. 2 (ms, > 0; LoLa: 100).
   * @param margin the factor on cwnd of Eq. 3 (0 < margin; LoLa: 0.8).
   * @param pipeSlackMs how N_f reads the bytes in flight: -1 = all of them
   *   (LoLa's per-packet ACKs); >= 0 = only those beyond the pipe
   *   ({@link networkBacklogBytes} with this slack), i.e. the packets still
   *   ahead of a new one, which is what Eq. 4's arrival time counts when
   *   reports come every ~50 ms and the pipe is long.
   * @param queuedGoodputMs > 0: a path whose SRTT exceeds its min RTT by
   *   more than this (ms) is timed at its goodput alone (ConvergeConfig.budgetQueuedGoodputMs).
   */
  constructor(
    readonly budgetMs: number,
    readonly margin: number,
    readonly pipeSlackMs = -1,
    readonly queuedGoodputMs = 0,
  ) {}

  /**
   * Update the per-path packet times and the frame target from the up paths
   * of `paths`. `frameBatch`: the batch is a new encoded frame (not FEC nor
   * retransmissions), so it times the frame interval.
   */
  observe(packets: readonly OutgoingPacket[], paths: readonly PathState[], nowUs: number, frameBatch: boolean): void {
    this.seen.fill(0);
    let target = 0;
    let rateSum = 0;
    for (let i = 0; i < paths.length; i++) {
      const p = firstUsable(paths, i, this.seen);
      if (p === undefined) continue;
      const queued = this.queuedGoodputMs > 0 && nonNeg(p.goodputBps) > 0 && rttMs(p) - minRttOf(p) > this.queuedGoodputMs;
      const iat = updateIatMs(this.iat, p, queued ? p.goodputBps : deliveryRateBps(p));
      const cwnd = delayBudgetWindow(this.budgetMs, minRttOf(p), iat);
      const held = this.pipeSlackMs >= 0 ? (networkBacklogBytes(p, this.pipeSlackMs) + nonNeg(p.queuedBytes)) / DELAY_BUDGET_MTU : backlogPackets(p);
      target += Math.max(0, this.margin * cwnd - held);
      rateSum += nonNeg(p.rateBps);
    }
    this.targetBytes = target * DELAY_BUDGET_MTU;
    this.rateSumBps = rateSum;
    if (frameBatch) this.frames.note(packets, nowUs);
  }

  /** Eq. 3's frame target at the measured frame rate over the summed path rates, in [0.05, 1]; 1 until known. */
  fraction(): number {
    return targetFraction(this.targetBytes, this.frames.intervalMs, this.rateSumBps);
  }
}
