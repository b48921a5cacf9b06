/**
 * I/O-free model of one direction of an emulated network path: a drop-tail
 * bottleneck queue drained by a time-varying capacity trace, followed by a
 * (possibly time-varying) propagation delay, with random loss and blackhole
 * (down) periods. Time comes only from the `nowUs` arguments (µs since the
 * scenario start), so the same object runs in the UDP relay (wall clock) and
 * in the simulator (virtual clock). Deterministic for a given {@link Rng} seed.
 *
 * Model, in order, for a packet sent at time `now`:
 * 1. invalid size (not finite or <= 0) -> dropped, cause `invalid`;
 * 2. link down (manual {@link Link.setDown} or a configured down period) ->
 *    dropped, cause `blackhole`;
 * 3. random loss (Bernoulli / Gilbert-Elliott) applied AT ENQUEUE -> dropped,
 *    cause `loss`; a lost packet uses no capacity;
 * 4. drop-tail limits (packets, bytes in queue) -> dropped, cause `queue`;
 * 5. the packet's departure from the bottleneck is computed right away: the
 *    queue is FIFO and capacity does not depend on traffic, so the packet
 *    uses the capacity left after the packets ahead of it. Capacity follows
 *    mahimahi's mm-link (README.upstream of the mahimahi traces): the bytes of
 *    millisecond `i` are offered at the instant `i` ms, a packet may use
 *    several opportunities (byte-accurate, one opportunity may finish one
 *    packet and start the next), and unused bytes are lost. If the packet
 *    would wait more than the `ms` queue limit (unless the queue is empty) or
 *    more than {@link MAX_QUEUE_WAIT_MS} -> dropped, cause `queue`; if it
 *    would still be queued when a configured down period starts -> dropped,
 *    cause `blackhole` (the queue is flushed when the link goes down);
 * 6. delivery time = departure + one-way delay at the departure instant,
 *    never earlier than the previous delivery (order is preserved, so a delay
 *    decrease bunches packets instead of reordering them).
 *
 * `send()` returns false exactly when the packet will never be delivered.
 */
import type { Rng } from '../../src/core/rng.js';
import { type LossConfig, type LossModel, createLossModel, validateLoss } from './loss.js';
import { type CapacityTrace, type DelayTrace, capacityAt, delayAt } from './traces.js';

export type { LossConfig } from './loss.js';

/** Drop-tail limits; a packet is dropped when accepting it would exceed any of them. */
export interface QueueLimit {
  /** Max packets waiting in the bottleneck queue (not counting those propagating). */
  packets?: number;
  /** Max bytes waiting in the bottleneck queue. */
  bytes?: number;
  /** Max queueing delay (ms) a new packet may face; an empty queue always accepts. */
  ms?: number;
}

/** A step change at `atMs` (link time); fields left undefined keep their value. */
export interface ScheduleStep {
  atMs: number;
  /** New constant capacity (bps); `null` = back to the configured trace. */
  rateBps?: number | null;
  /** New constant one-way delay (ms); `null` = back to the configured delay. */
  delayMs?: number | null;
  /** New loss model (its state starts fresh). */
  loss?: LossConfig;
}

/** Configuration of one link direction. */
export interface LinkConfig {
  /** Bottleneck capacity (see {@link CapacityTrace}). */
  capacity: CapacityTrace;
  /** One-way propagation delay: a constant in ms or a delay trace. */
  delay: number | DelayTrace;
  /** Random loss at enqueue (default none). */
  loss?: LossConfig;
  /** Drop-tail limits (default {@link DEFAULT_QUEUE_LIMIT}). */
  queue?: QueueLimit;
  /** Down periods `[startMs, endMs)` in link time: everything sent is dropped. */
  downPeriods?: ReadonlyArray<readonly [number, number]>;
  /** Step changes of rate / delay / loss, any order (sorted here). */
  schedule?: ReadonlyArray<ScheduleStep>;
  /** Link time 0 maps to this ms of the capacity and delay traces (default 0). */
  traceOffsetMs?: number;
}

/** Drop causes counted by {@link LinkStats}. */
export interface LinkDrops {
  /** Drop-tail queue full (packets/bytes/ms limit or internal bound). */
  queue: number;
  /** Random loss model. */
  loss: number;
  /** Link down (configured period or manual). */
  blackhole: number;
  /** Invalid size. */
  invalid: number;
}

/** Counters of one link direction; a fresh copy on every call. */
export interface LinkStats {
  sent: number;
  sentBytes: number;
  delivered: number;
  deliveredBytes: number;
  dropped: LinkDrops;
  droppedBytes: number;
  /** Packets currently waiting in the bottleneck queue. */
  queuedPackets: number;
  queuedBytes: number;
  /** Packets past the bottleneck, still propagating. */
  propagatingPackets: number;
  /** Queueing delay (ms) of accepted packets, computed at enqueue. */
  queueDelay: {
    count: number;
    meanMs: number;
    maxMs: number;
    /** The last up to {@link QUEUE_DELAY_SAMPLES} samples, oldest first. */
    recentMs: number[];
  };
}

/** Queue limit used when the config gives none (Linux txqueuelen default). */
export const DEFAULT_QUEUE_LIMIT: Readonly<QueueLimit> = Object.freeze({ packets: 1000 });
/** Hard bound on the queueing delay any packet may face (ms), whatever the limits. */
export const MAX_QUEUE_WAIT_MS = 60_000;
/** Hard bound on packets held (queued + propagating) by one link. */
export const MAX_LINK_ENTRIES = 1 << 20;
/** Number of recent queue-delay samples kept for {@link LinkStats}. */
export const QUEUE_DELAY_SAMPLES = 1024;

/** Finds the last step with time <= t; walks from the previous answer (amortised O(1) for monotone queries). */
class StepIndex {
  private i = -1;
  constructor(readonly times: readonly number[]) {}
  find(t: number): number {
    const ts = this.times;
    while (this.i + 1 < ts.length && ts[this.i + 1] <= t) this.i++;
    while (this.i >= 0 && ts[this.i] > t) this.i--;
    return this.i;
  }
}

function fail(field: string, msg: string): never {
  throw new RangeError(`LinkConfig.${field}: ${msg}`);
}

function checkNonNeg(field: string, v: unknown, positive = false): void {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (positive && v === 0)) {
    fail(field, `must be a finite number ${positive ? '> 0' : '>= 0'}, got ${String(v)}`);
  }
}

/** One direction of an emulated path. `T` is the carried item (e.g. a datagram). */
export class Link<T> {
  private readonly cap: CapacityTrace;
  private readonly baseDelay: number | DelayTrace;
  private readonly offsetMs: number;
  private readonly limPackets: number;
  private readonly limBytes: number;
  private readonly limWaitUs: number;

  private readonly downStart: number[] = [];
  private readonly downEnd: number[] = [];
  private readonly downIdx: StepIndex;

  private readonly rateIdx: StepIndex;
  private readonly rateBytesPerMs: number[] = []; // NaN = base trace
  private readonly delayIdx: StepIndex;
  private readonly delayMsSteps: number[] = []; // NaN = base delay
  private readonly lossIdx: StepIndex;
  private readonly lossModels: LossModel[] = [];
  private readonly baseLoss: LossModel;

  // FIFO ring of queued + propagating packets (absolute indices, masked).
  private items: (T | undefined)[];
  private dep: Float64Array;
  private deliv: Float64Array;
  private size: Float64Array;
  private mask: number;
  private head = 0; // next to deliver
  private qHead = 0; // first still waiting in the bottleneck queue
  private tail = 0; // next free slot

  private nowUs = -Infinity;
  private capMs = -Infinity; // opportunity the last queued packet finished in
  private capLeft = 0; // bytes left in that opportunity
  private lastDelivUs = -Infinity;
  private queuedBytes = 0;
  private manualDown = false;
  private zeroFrom = 0; // cached all-zero-capacity range [zeroFrom, zeroTo)
  private zeroTo = 0;

  private readonly st = {
    sent: 0,
    sentBytes: 0,
    delivered: 0,
    deliveredBytes: 0,
    droppedBytes: 0,
    dropped: { queue: 0, loss: 0, blackhole: 0, invalid: 0 } as LinkDrops,
  };
  private qdCount = 0;
  private qdSum = 0;
  private qdMax = 0;
  private readonly qdRing = new Float64Array(QUEUE_DELAY_SAMPLES);

  /**
   * @param cfg link configuration (validated here)
   * @param rng seeded random source for the loss model
   * @throws RangeError naming the offending `LinkConfig` field
   */
  constructor(cfg: LinkConfig, rng: Rng) {
    const c = cfg.capacity;
    if (!c || !Number.isInteger(c.periodMs) || c.periodMs < 1 || !(c.bytesPerMs instanceof Float64Array) || c.bytesPerMs.length !== c.periodMs) {
      fail('capacity', 'must be a CapacityTrace with an integer periodMs >= 1 and bytesPerMs of that length');
    }
    this.cap = c;
    if (typeof cfg.delay === 'number') checkNonNeg('delay', cfg.delay);
    else if (!cfg.delay || !(cfg.delay.delayMs instanceof Float64Array) || cfg.delay.delayMs.length === 0 || !(cfg.delay.stepMs > 0)) {
      fail('delay', 'must be a number of ms or a DelayTrace');
    }
    this.baseDelay = cfg.delay;
    this.offsetMs = cfg.traceOffsetMs ?? 0;
    checkNonNeg('traceOffsetMs', this.offsetMs);
    if (!Number.isInteger(this.offsetMs)) fail('traceOffsetMs', 'must be an integer');

    const q = cfg.queue ?? DEFAULT_QUEUE_LIMIT;
    if (q.packets !== undefined) checkNonNeg('queue.packets', q.packets, true);
    if (q.bytes !== undefined) checkNonNeg('queue.bytes', q.bytes, true);
    if (q.ms !== undefined) checkNonNeg('queue.ms', q.ms, true);
    this.limPackets = q.packets ?? Infinity;
    this.limBytes = q.bytes ?? Infinity;
    this.limWaitUs = Math.min(q.ms ?? Infinity, MAX_QUEUE_WAIT_MS) * 1000;

    const periods = [...(cfg.downPeriods ?? [])].map((p, i) => {
      if (!Array.isArray(p) || p.length !== 2) fail(`downPeriods[${i}]`, 'must be [startMs, endMs]');
      checkNonNeg(`downPeriods[${i}][0]`, p[0]);
      checkNonNeg(`downPeriods[${i}][1]`, p[1]);
      if (!(p[1] > p[0])) fail(`downPeriods[${i}]`, `end ${p[1]} must be > start ${p[0]}`);
      return [p[0], p[1]] as [number, number];
    });
    periods.sort((a, b) => a[0] - b[0]);
    for (const [s, e] of periods) {
      const n = this.downStart.length;
      if (n > 0 && s <= this.downEnd[n - 1]) this.downEnd[n - 1] = Math.max(this.downEnd[n - 1], e);
      else {
        this.downStart.push(s);
        this.downEnd.push(e);
      }
    }
    this.downIdx = new StepIndex(this.downStart);

    if (cfg.loss) validateLoss(cfg.loss);
    this.baseLoss = createLossModel(cfg.loss, rng);
    const steps = [...(cfg.schedule ?? [])].map((s, i) => {
      checkNonNeg(`schedule[${i}].atMs`, s.atMs);
      if (s.rateBps != null) checkNonNeg(`schedule[${i}].rateBps`, s.rateBps);
      if (s.delayMs != null) checkNonNeg(`schedule[${i}].delayMs`, s.delayMs);
      if (s.loss) validateLoss(s.loss);
      return s;
    });
    steps.sort((a, b) => a.atMs - b.atMs);
    const rateT: number[] = [];
    const delayT: number[] = [];
    const lossT: number[] = [];
    for (const s of steps) {
      if (s.rateBps !== undefined) {
        rateT.push(s.atMs);
        this.rateBytesPerMs.push(s.rateBps === null ? NaN : s.rateBps / 8000);
      }
      if (s.delayMs !== undefined) {
        delayT.push(s.atMs);
        this.delayMsSteps.push(s.delayMs === null ? NaN : s.delayMs);
      }
      if (s.loss !== undefined) {
        lossT.push(s.atMs);
        this.lossModels.push(createLossModel(s.loss, rng));
      }
    }
    this.rateIdx = new StepIndex(rateT);
    this.delayIdx = new StepIndex(delayT);
    this.lossIdx = new StepIndex(lossT);

    const initial = 256;
    this.items = new Array<T | undefined>(initial);
    this.dep = new Float64Array(initial);
    this.deliv = new Float64Array(initial);
    this.size = new Float64Array(initial);
    this.mask = initial - 1;
  }

  /**
   * Offer a packet to the link at `nowUs` (µs of link time; a time earlier
   * than a previous call is treated as that previous time).
   *
   * @param item opaque payload returned by {@link poll}
   * @param sizeBytes size on the wire (bytes) used against capacity and limits
   * @returns false if the packet is dropped (queue full, loss, blackhole, invalid size)
   * @throws RangeError if `nowUs` is NaN
   */
  send(item: T, sizeBytes: number, nowUs: number): boolean {
    const now = this.advance(nowUs);
    const st = this.st;
    st.sent++;
    const okSize = typeof sizeBytes === 'number' && Number.isFinite(sizeBytes) && sizeBytes > 0;
    if (okSize) st.sentBytes += sizeBytes;
    if (!okSize) return this.drop('invalid', 0);
    if (this.manualDown || this.isDown(now / 1000)) return this.drop('blackhole', sizeBytes);
    const li = this.lossIdx.find(now / 1000);
    const loss = li < 0 ? this.baseLoss : this.lossModels[li];
    if (loss.lose()) return this.drop('loss', sizeBytes);
    const queued = this.tail - this.qHead;
    if (queued + 1 > this.limPackets || this.queuedBytes + sizeBytes > this.limBytes) return this.drop('queue', sizeBytes);
    if (this.tail - this.head >= this.items.length && !this.grow()) return this.drop('queue', sizeBytes);

    // Departure from the bottleneck (see class doc, step 5).
    const waitLimitUs = queued === 0 ? MAX_QUEUE_WAIT_MS * 1000 : this.limWaitUs;
    let m: number;
    let left: number;
    let fresh: boolean; // true when `left` is the full, unused capacity of ms m
    if (this.capMs * 1000 >= now) {
      m = this.capMs;
      left = this.capLeft;
      fresh = false;
    } else {
      m = Math.ceil(now / 1000);
      left = this.capacityAtMs(m);
      fresh = true;
    }
    let remaining = sizeBytes;
    let zeroRun = -1; // first ms of a run of ms offering no capacity at all
    for (;;) {
      if (left === 0 && fresh && m >= this.zeroFrom && m < this.zeroTo) {
        // Known all-zero stretch: jump over it (a down period inside it still flushes the packet).
        if (this.downIntersects(m, this.zeroTo)) return this.drop('blackhole', sizeBytes);
        if (zeroRun < 0) zeroRun = m;
        m = this.zeroTo;
        left = this.capacityAtMs(m);
      }
      if (m * 1000 - now > waitLimitUs) {
        if (zeroRun >= 0) this.noteZero(zeroRun, m);
        return this.drop('queue', sizeBytes);
      }
      if (this.isDown(m)) return this.drop('blackhole', sizeBytes);
      if (left > 0) {
        if (zeroRun >= 0) {
          this.noteZero(zeroRun, m);
          zeroRun = -1;
        }
        if (left >= remaining - 1e-9) {
          left = Math.max(0, left - remaining);
          break;
        }
        remaining -= left;
      } else if (fresh && zeroRun < 0) zeroRun = m;
      m++;
      left = this.capacityAtMs(m);
      fresh = true;
    }
    this.capMs = m;
    this.capLeft = left;
    const depUs = Math.max(m * 1000, now);
    let delivUs = depUs + this.delayAtMs(depUs / 1000) * 1000;
    if (delivUs < this.lastDelivUs) delivUs = this.lastDelivUs;
    this.lastDelivUs = delivUs;

    const k = this.tail & this.mask;
    this.items[k] = item;
    this.dep[k] = depUs;
    this.deliv[k] = delivUs;
    this.size[k] = sizeBytes;
    this.tail++;
    this.queuedBytes += sizeBytes;

    const qd = (depUs - now) / 1000;
    this.qdRing[this.qdCount % QUEUE_DELAY_SAMPLES] = qd;
    this.qdCount++;
    this.qdSum += qd;
    if (qd > this.qdMax) this.qdMax = qd;
    return true;
  }

  /**
   * Packets whose delivery time is <= `nowUs`, in send order, each with its
   * exact delivery time `atUs` (µs, link time).
   */
  poll(nowUs: number): Array<{ item: T; atUs: number }> {
    const now = this.advance(nowUs);
    const out: Array<{ item: T; atUs: number }> = [];
    while (this.head < this.tail) {
      const k = this.head & this.mask;
      const at = this.deliv[k];
      if (at > now) break;
      out.push({ item: this.items[k] as T, atUs: at });
      this.items[k] = undefined;
      this.st.delivered++;
      this.st.deliveredBytes += this.size[k];
      this.head++;
    }
    return out;
  }

  /** Delivery time (µs) of the next packet, or undefined when nothing is in flight. Exact. */
  nextEventUs(): number | undefined {
    return this.head < this.tail ? this.deliv[this.head & this.mask] : undefined;
  }

  /**
   * Manual blackhole. Going down drops everything still waiting in the
   * bottleneck queue (cause `blackhole`; packets already propagating still
   * arrive) and every packet sent until {@link setDown}(false).
   */
  setDown(down: boolean, nowUs: number): void {
    this.advance(nowUs);
    if (down && !this.manualDown) {
      while (this.tail > this.qHead) {
        this.tail--;
        const k = this.tail & this.mask;
        this.items[k] = undefined;
        this.queuedBytes -= this.size[k];
        this.st.dropped.blackhole++;
        this.st.droppedBytes += this.size[k];
      }
      this.queuedBytes = 0;
      this.capMs = -Infinity;
      this.capLeft = 0;
      this.lastDelivUs = this.tail > this.head ? this.deliv[(this.tail - 1) & this.mask] : -Infinity;
    }
    this.manualDown = down;
  }

  /** True while manually down or inside a configured down period at `nowUs`. */
  isDownAt(nowUs: number): boolean {
    return this.manualDown || this.isDown(nowUs / 1000);
  }

  /** Counters (fresh copy). */
  stats(): LinkStats {
    const n = Math.min(this.qdCount, QUEUE_DELAY_SAMPLES);
    const recentMs: number[] = new Array(n);
    for (let i = 0; i < n; i++) recentMs[i] = this.qdRing[(this.qdCount - n + i) % QUEUE_DELAY_SAMPLES];
    return {
      sent: this.st.sent,
      sentBytes: this.st.sentBytes,
      delivered: this.st.delivered,
      deliveredBytes: this.st.deliveredBytes,
      dropped: { ...this.st.dropped },
      droppedBytes: this.st.droppedBytes,
      queuedPackets: this.tail - this.qHead,
      queuedBytes: this.queuedBytes,
      propagatingPackets: this.qHead - this.head,
      queueDelay: {
        count: this.qdCount,
        meanMs: this.qdCount > 0 ? this.qdSum / this.qdCount : 0,
        maxMs: this.qdMax,
        recentMs,
      },
    };
  }

  /** Capacity (bytes) offered at integer link-time ms `m`, schedule and trace combined. */
  capacityAtMs(m: number): number {
    const ri = this.rateIdx.find(m);
    if (ri >= 0) {
      const r = this.rateBytesPerMs[ri];
      if (!Number.isNaN(r)) return r;
    }
    return capacityAt(this.cap, m, this.offsetMs);
  }

  /** One-way propagation delay (ms) at link time `ms`, schedule and trace combined. */
  delayAtMs(ms: number): number {
    const di = this.delayIdx.find(ms);
    if (di >= 0) {
      const d = this.delayMsSteps[di];
      if (!Number.isNaN(d)) return d;
    }
    const b = this.baseDelay;
    return typeof b === 'number' ? b : delayAt(b, ms, this.offsetMs);
  }

  private advance(nowUs: number): number {
    if (typeof nowUs !== 'number' || Number.isNaN(nowUs)) throw new RangeError(`Link: nowUs must be a number, got ${String(nowUs)}`);
    if (nowUs > this.nowUs) this.nowUs = nowUs;
    const now = this.nowUs;
    while (this.qHead < this.tail) {
      const k = this.qHead & this.mask;
      if (this.dep[k] > now) break;
      this.queuedBytes -= this.size[k];
      this.qHead++;
    }
    if (this.qHead === this.tail) this.queuedBytes = 0; // no float drift
    return now;
  }

  private isDown(ms: number): boolean {
    const i = this.downIdx.find(ms);
    return i >= 0 && ms < this.downEnd[i];
  }

  /** Whether a configured down period intersects [a, b) (ms). */
  private downIntersects(a: number, b: number): boolean {
    const i = this.downIdx.find(b - 1e-6);
    return i >= 0 && this.downEnd[i] > a;
  }

  private noteZero(from: number, to: number): void {
    if (to - from < 16) return;
    this.zeroFrom = from;
    this.zeroTo = to;
  }

  private drop(cause: keyof LinkDrops, bytes: number): false {
    this.st.dropped[cause]++;
    this.st.droppedBytes += bytes;
    return false;
  }

  private grow(): boolean {
    const old = this.items.length;
    if (old * 2 > MAX_LINK_ENTRIES) return false;
    const n = old * 2;
    const items = new Array<T | undefined>(n);
    const dep = new Float64Array(n);
    const deliv = new Float64Array(n);
    const size = new Float64Array(n);
    const mask = n - 1;
    for (let i = this.head; i < this.tail; i++) {
      const a = i & this.mask;
      const b = i & mask;
      items[b] = this.items[a];
      dep[b] = this.dep[a];
      deliv[b] = this.deliv[a];
      size[b] = this.size[a];
    }
    this.items = items;
    this.dep = dep;
    this.deliv = deliv;
    this.size = size;
    this.mask = mask;
    return true;
  }
}
