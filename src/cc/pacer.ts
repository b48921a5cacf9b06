/**
 * Per-path leaky-bucket pacer with priority queues, a bound on the
 * RTCDataChannel's bufferedAmount, and deadline drops of stale media.
 *
 * SOURCE: libwebrtc modules/pacing/pacing_controller.cc and
 * interval_budget.cc (media budget refilled at pacing rate = factor x target,
 * no credit built up while idle, debt carried; libwebrtc's pacing factor is
 * 2.5 for RTP video), pion/interceptor pkg/gcc/leaky_bucket_pacer.go;
 * Converge (SIGCOMM 2023) §4.1 Table 2 for the priority order; the
 * bufferedAmount budget follows livekit's LossyDataChannel advice (keep
 * ~100 ms of data at most in the SCTP buffer, drop rather than queue).
 */
import { Priority } from '../core/types.js';
import type { PacerConfig, PacerStats } from './types.js';

/** Defaults of {@link PacerConfig}. */
export const DEFAULT_PACER_CONFIG: Readonly<PacerConfig> = Object.freeze({
  pacingFactor: 1.5,
  maxQueuePackets: 2000,
  bufferBudgetMs: 60,
  minBufferBudgetBytes: 15_000,
  maxQueueDelayMs: 300,
  maxBurstMs: 20,
  bufferRecheckMs: 5,
  burstMs: 0,
});

/** Largest send burst (bytes); libwebrtc PacingController::kMaxBurstSize. */
const MAX_BURST_BYTES = 63_000;

/** Smallest pacing rate (bps) so that the pacer can never stall forever. */
const MIN_RATE_BPS = 1000;
const NUM_CLASSES = 7; // index = Priority 1..6
/** Items larger than this are refused as invalid (bytes). */
const MAX_ITEM_BYTES = 1 << 24;

/** FIFO of one priority class: items plus enqueue times, head index, compacted lazily. */
class Fifo<T> {
  items: (T | undefined)[] = [];
  times: number[] = [];
  head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T, t: number): void {
    this.items.push(item);
    this.times.push(t);
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  peekTime(): number {
    return this.times[this.head];
  }

  shift(): T {
    const it = this.items[this.head] as T;
    this.items[this.head] = undefined;
    this.head++;
    if (this.head > 64 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
    return it;
  }
}

/** Priority of an item as a class index 1..6 (anything else is Media). */
function classOf(p: unknown): number {
  return typeof p === 'number' && Number.isInteger(p) && p >= Priority.Retransmission && p <= Priority.Media ? p : Priority.Media;
}

/**
 * Leaky-bucket pacer for one path.
 *
 * - {@link enqueue} queues an item (false = refused because the queue is full
 *   and nothing less important could be evicted; an evicted item is returned
 *   later in `dropped` of {@link poll}).
 * - {@link poll} returns what may be sent now, in priority order (lower
 *   Priority number first, FIFO within a priority), spending a budget that
 *   refills at pacingFactor x rate and never letting bufferedAmount + sent
 *   exceed the buffer budget; it also drops Media (6), FEC (5) and
 *   retransmissions (1) that waited longer than maxQueueDelayMs, and key
 *   frame, SPS and PPS packets (2-4) that waited 4 x as long (a late
 *   retransmission only feeds the queue that made it late: without this, a
 *   congested path spirals into more NACKs and key frames).
 * - {@link nextPollUs} says when polling again makes sense.
 */
export class Pacer<T extends { priority: Priority; sizeBytes: number }> {
  private readonly cfg: PacerConfig;
  private readonly queues: Fifo<T>[] = [];
  private rateBps: number;
  private budgetBytes = 0;
  private lastPollUs = Number.NaN;
  private count = 0;
  private bytes = 0;
  private heldByBuffer = false;
  private pendingDropped: T[] = [];
  private readonly s: PacerStats;

  /**
   * @param initialRateBps path target rate before the first setRateBps (bps)
   * @param config partial {@link PacerConfig}
   * @throws RangeError on a non-finite/negative rate or an invalid config value
   */
  constructor(initialRateBps: number, config: Partial<PacerConfig> = {}) {
    const c: PacerConfig = { ...DEFAULT_PACER_CONFIG, ...config };
    for (const k of Object.keys(DEFAULT_PACER_CONFIG) as (keyof PacerConfig)[]) {
      const v = c[k];
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new RangeError(`Pacer: ${k} must be a finite number >= 0, got ${v}`);
    }
    if (c.pacingFactor <= 0) throw new RangeError('Pacer: pacingFactor must be > 0');
    if (!Number.isInteger(c.maxQueuePackets) || c.maxQueuePackets < 1) throw new RangeError('Pacer: maxQueuePackets must be an integer >= 1');
    if (c.bufferRecheckMs <= 0) throw new RangeError('Pacer: bufferRecheckMs must be > 0');
    this.cfg = c;
    for (let i = 0; i < NUM_CLASSES; i++) this.queues.push(new Fifo<T>());
    this.rateBps = Pacer.checkRate(initialRateBps);
    this.s = {
      rateBps: this.rateBps,
      pacingRateBps: this.pacingRateBps(),
      queuedPackets: 0,
      queuedBytes: 0,
      sentPackets: 0,
      sentBytes: 0,
      sentByPriority: new Array<number>(NUM_CLASSES).fill(0),
      droppedByPriority: new Array<number>(NUM_CLASSES).fill(0),
      droppedFull: 0,
      droppedExpired: 0,
      droppedInvalid: 0,
      droppedStale: 0,
      heldByBuffer: 0,
    };
  }

  private static checkRate(bps: number): number {
    if (typeof bps !== 'number' || !Number.isFinite(bps) || bps < 0) throw new RangeError(`Pacer: rate must be a finite number >= 0 bps, got ${bps}`);
    return Math.max(bps, MIN_RATE_BPS);
  }

  /**
   * Set the path target rate (bps); pacing happens at pacingFactor x this.
   * Rates below 1 kbps are raised to 1 kbps. @throws RangeError if not finite or negative.
   */
  setRateBps(bps: number): void {
    this.rateBps = Pacer.checkRate(bps);
  }

  /** Pacing rate (bps) = pacingFactor x target rate. */
  pacingRateBps(): number {
    return this.rateBps * this.cfg.pacingFactor;
  }

  /** Debt (bytes) a burst may run up: burstMs at the pacing rate, at most 63,000 bytes; 0 without a burst. */
  private burstBytes(): number {
    return Math.min((this.pacingRateBps() * this.cfg.burstMs) / 8000, MAX_BURST_BYTES);
  }

  /** Max bytes allowed in bufferedAmount after a send: max(bufferBudgetMs at the target rate, floor). */
  bufferBudgetBytes(): number {
    return Math.max((this.rateBps * this.cfg.bufferBudgetMs) / 8000, this.cfg.minBufferBudgetBytes);
  }

  /**
   * Queue an item.
   * @returns true when queued; false when refused (size not a finite number in [0, 16 MiB], or queue full
   *   and nothing less important to evict). Refused items are counted, not returned by poll.
   */
  enqueue(item: T, nowUs: number): boolean {
    const size = item?.sizeBytes;
    if (typeof size !== 'number' || !Number.isFinite(size) || size < 0 || size > MAX_ITEM_BYTES) {
      this.s.droppedInvalid++;
      this.s.droppedByPriority[classOf(item?.priority)]++;
      return false;
    }
    const cls = classOf(item.priority);
    if (this.count >= this.cfg.maxQueuePackets) {
      // Evict the oldest of the least important class, if less important than the newcomer.
      let victim = -1;
      for (let p = Priority.Media; p > cls; p--) {
        if (this.queues[p].length > 0) {
          victim = p;
          break;
        }
      }
      if (victim < 0) {
        this.s.droppedFull++;
        this.s.droppedByPriority[cls]++;
        return false;
      }
      const dropped = this.removeHead(victim);
      this.s.droppedFull++;
      this.s.droppedByPriority[victim]++;
      this.pendingDropped.push(dropped);
    }
    this.queues[cls].push(item, Number.isFinite(nowUs) ? nowUs : Number.isFinite(this.lastPollUs) ? this.lastPollUs : 0);
    this.count++;
    this.bytes += size;
    return true;
  }

  /**
   * Items to send now and items dropped since the last poll.
   * @param nowUs sender clock (µs)
   * @param bufferedAmountBytes the data channel's current bufferedAmount (bytes)
   */
  poll(nowUs: number, bufferedAmountBytes: number): { send: T[]; dropped: T[] } {
    const dropped = this.pendingDropped;
    this.pendingDropped = [];
    const send: T[] = [];
    if (!Number.isFinite(nowUs)) return { send, dropped };
    this.dropExpired(nowUs, dropped);
    this.refill(nowUs);

    const buffered = Number.isFinite(bufferedAmountBytes) && bufferedAmountBytes > 0 ? bufferedAmountBytes : 0;
    const budget = this.bufferBudgetBytes();
    let sentBytes = 0;
    this.heldByBuffer = false;
    const floor = -this.burstBytes();
    for (let p = Priority.Retransmission; p <= Priority.Media && this.budgetBytes > floor; p++) {
      const q = this.queues[p];
      while (q.length > 0 && this.budgetBytes > floor) {
        const item = q.peek() as T;
        const size = item.sizeBytes;
        // An item bigger than the whole budget may go alone into an empty buffer (no stall).
        if (buffered + sentBytes + size > budget && !(buffered === 0 && sentBytes === 0)) {
          this.heldByBuffer = true;
          break;
        }
        q.shift();
        this.count--;
        this.bytes -= size;
        this.budgetBytes -= size;
        sentBytes += size;
        this.s.sentPackets++;
        this.s.sentBytes += size;
        this.s.sentByPriority[p]++;
        send.push(item);
      }
      if (this.heldByBuffer) break;
    }
    if (this.heldByBuffer) this.s.heldByBuffer++;
    return { send, dropped };
  }

  /**
   * When a poll could next send or drop something (µs), undefined when the
   * queue is empty and nothing waits to be reported. While held by
   * bufferedAmount it hints a recheck after bufferRecheckMs (the engine
   * should also poll on the channel's bufferedamountlow event).
   */
  nextPollUs(nowUs: number): number | undefined {
    if (this.pendingDropped.length > 0) return nowUs;
    if (this.count === 0) return undefined;
    let t: number;
    if (this.heldByBuffer) {
      t = nowUs + this.cfg.bufferRecheckMs * 1000;
    } else {
      const rateBytesPerUs = this.pacingRateBps() / 8e6;
      const elapsed = Number.isNaN(this.lastPollUs) ? 0 : Math.max(0, nowUs - this.lastPollUs);
      const projected = this.budgetBytes + Math.min(elapsed, this.cfg.maxBurstMs * 1000) * rateBytesPerUs;
      const floor = -this.burstBytes();
      t = projected > floor ? nowUs : nowUs + Math.ceil((floor - projected) / rateBytesPerUs);
    }
    // Media / FEC expiry may come sooner.
    const maxDelayUs = this.cfg.maxQueueDelayMs * 1000;
    for (const p of [Priority.Media, Priority.Fec]) {
      const q = this.queues[p];
      if (q.length > 0) t = Math.min(t, Math.max(nowUs, q.peekTime() + maxDelayUs + 1));
    }
    return t;
  }

  /**
   * Remove every queued item `stale` returns true for (e.g. the delta frames
   * a new key frame makes useless, so the key frame never waits behind
   * them). Removed items are reported in `dropped` of the next {@link poll}
   * and counted as `droppedStale`. O(queued items). Returns how many were removed.
   */
  purge(stale: (item: T) => boolean): number {
    let n = 0;
    for (let p = Priority.Retransmission; p <= Priority.Media; p++) {
      const q = this.queues[p];
      if (q.length === 0) continue;
      const keep = new Fifo<T>();
      while (q.length > 0) {
        const t = q.peekTime();
        const it = q.shift();
        if (stale(it)) {
          this.count--;
          this.bytes -= it.sizeBytes;
          this.s.droppedStale++;
          this.s.droppedByPriority[p]++;
          this.pendingDropped.push(it);
          n++;
        } else keep.push(it, t);
      }
      this.queues[p] = keep;
    }
    return n;
  }

  /** True when some queued item satisfies `match` (e.g. a key frame's packets are still waiting). O(queued items). */
  has(match: (item: T) => boolean): boolean {
    for (let p = Priority.Retransmission; p <= Priority.Media; p++) {
      const q = this.queues[p];
      for (let i = q.head; i < q.items.length; i++) {
        const it = q.items[i];
        if (it !== undefined && match(it)) return true;
      }
    }
    return false;
  }

  queuedBytes(): number {
    return this.count === 0 ? 0 : Math.max(0, this.bytes);
  }

  queuedPackets(): number {
    return this.count;
  }

  /** Counters (copies of the arrays). */
  stats(): PacerStats {
    return {
      ...this.s,
      rateBps: this.rateBps,
      pacingRateBps: this.pacingRateBps(),
      queuedPackets: this.count,
      queuedBytes: this.queuedBytes(),
      sentByPriority: this.s.sentByPriority.slice(),
      droppedByPriority: this.s.droppedByPriority.slice(),
    };
  }

  /** Refill the media budget for the time since the last poll (no credit kept from idle periods). */
  private refill(nowUs: number): void {
    const rateBytesPerUs = this.pacingRateBps() / 8e6;
    if (Number.isNaN(this.lastPollUs)) {
      this.lastPollUs = nowUs;
      this.budgetBytes = Math.max(this.budgetBytes, 1); // first poll may send one packet
      return;
    }
    let elapsed = nowUs - this.lastPollUs;
    if (elapsed < 0) elapsed = 0; // clock went back: no refill
    this.lastPollUs = Math.max(this.lastPollUs, nowUs);
    const add = Math.min(elapsed, this.cfg.maxBurstMs * 1000) * rateBytesPerUs;
    if (this.budgetBytes < 0) {
      // Pay the debt of the last burst first (carried).
      this.budgetBytes = Math.min(this.budgetBytes + add, add);
    } else {
      // libwebrtc IntervalBudget without build-up: idle time gives no extra credit.
      this.budgetBytes = add;
    }
  }

  private dropExpired(nowUs: number, out: T[]): void {
    const maxDelayUs = this.cfg.maxQueueDelayMs * 1000;
    // Media and FEC expire after maxQueueDelayMs; a retransmission that waited as long
    // is as useless (its frame is past due) and would only feed the queue that delays it.
    // Key frame, SPS and PPS packets are kept longer (a frame needs all of them) but
    // not forever: after 4 x maxQueueDelayMs the receiver has asked for a new key frame.
    for (const [p, limitUs] of [
      [Priority.Media, maxDelayUs],
      [Priority.Fec, maxDelayUs],
      [Priority.Retransmission, maxDelayUs],
      [Priority.Keyframe, 4 * maxDelayUs],
      [Priority.Sps, 4 * maxDelayUs],
      [Priority.Pps, 4 * maxDelayUs],
    ] as const) {
      const q = this.queues[p];
      while (q.length > 0 && nowUs - q.peekTime() > limitUs) {
        const it = this.removeHead(p);
        this.s.droppedExpired++;
        this.s.droppedByPriority[p]++;
        out.push(it);
      }
    }
  }

  private removeHead(p: number): T {
    const it = this.queues[p].shift();
    this.count--;
    this.bytes -= it.sizeBytes;
    return it;
  }
}
