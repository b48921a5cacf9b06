/**
 * In-memory {@link PathTransport} pair for unit tests of engines in Node:
 * what `a` sends, `b` receives and vice versa, with optional one-way delay,
 * random loss (seeded), a serialization rate and a bounded in-flight queue.
 *
 * Delivery modes:
 * - 'manual' (default when a clock is given): messages are due at
 *   `send time + delay (+ serialization)` on the clock and are delivered by
 *   `flush(nowUs)`, in due-time order.
 * - 'microtask' (default without a clock): each send schedules delivery on a
 *   microtask; no delay or rate is possible (a RangeError says so).
 *
 * I/O-free apart from `queueMicrotask` in microtask mode.
 */
import type { Clock } from '../core/clock.js';
import { Emitter } from '../core/emitter.js';
import { Rng } from '../core/rng.js';
import type { PathId } from '../core/types.js';
import type { PathTransport, PathTransportErrorInfo, PathTransportEvents, PathTransportState, SelectedPair } from './types.js';

export interface FakePathOptions {
  /** Time source for send stamps and `bufferedAmount`; required for delay/rate. */
  clock?: Clock;
  /** One-way delay in ms (default 0). Requires manual delivery. */
  delayMs?: number;
  /** Loss probability per message, 0..1 (default 0). */
  loss?: number;
  /** Seed of the loss PRNG (default 1). */
  seed?: number;
  /** Bottleneck rate in bits/s per direction (default: unlimited). Requires manual delivery. */
  rateBps?: number;
  /** Messages in flight per direction (default 4096); beyond, the OLDEST is dropped and counted. */
  maxQueue?: number;
  /** See module doc. Default 'manual' with a clock, else 'microtask'. */
  delivery?: 'manual' | 'microtask';
  /** Start in 'connected' (default true) or in 'new' until `pair.connect()`. */
  connected?: boolean;
}

/** Counters per direction. */
export interface FakeDirectionStats {
  sent: number;
  delivered: number;
  lost: number;
  queueDrops: number;
  /** Dropped at delivery because the receiver was not connected. */
  deadDrops: number;
}

interface InFlight {
  dueUs: number;
  bytes: Uint8Array;
}

class Direction {
  q: InFlight[] = [];
  head = 0;
  busyUntilUs = 0;
  readonly st: FakeDirectionStats = { sent: 0, delivered: 0, lost: 0, queueDrops: 0, deadDrops: 0 };

  get size(): number {
    return this.q.length - this.head;
  }

  push(m: InFlight, max: number): void {
    if (this.size >= max) {
      this.head++;
      this.st.queueDrops++;
    }
    this.q.push(m);
    if (this.head > 1024 && this.head * 2 > this.q.length) {
      this.q = this.q.slice(this.head);
      this.head = 0;
    }
  }

  peek(): InFlight | undefined {
    return this.head < this.q.length ? this.q[this.head] : undefined;
  }

  shift(): InFlight | undefined {
    const m = this.peek();
    if (m) {
      this.q[this.head] = undefined as unknown as InFlight;
      this.head++;
      if (this.head === this.q.length) {
        this.q = [];
        this.head = 0;
      }
    }
    return m;
  }
}

/** One end of a fake pair. */
export class FakePathTransport implements PathTransport {
  readonly pathId: PathId;
  private _state: PathTransportState;
  /** @internal */ peer!: FakePathTransport;
  /** @internal */ readonly out: Direction;
  private readonly link: FakeLink;
  private readonly events = new Emitter<PathTransportEvents>({ onListenerError: () => this.listenerErrors++ });
  private readonly pair: SelectedPair;
  /** Exceptions thrown by listeners (caught). */
  listenerErrors = 0;

  /** @internal */
  constructor(pathId: PathId, link: FakeLink, out: Direction, pair: SelectedPair, connected: boolean) {
    this.pathId = pathId;
    this.link = link;
    this.out = out;
    this.pair = pair;
    this._state = connected ? 'connected' : 'new';
  }

  get state(): PathTransportState {
    return this._state;
  }

  send(bytes: Uint8Array): boolean {
    if (this._state !== 'connected' || !(bytes instanceof Uint8Array)) return false;
    return this.link.enqueue(this, bytes);
  }

  bufferedAmount(): number {
    return this.link.buffered(this.out);
  }

  on<K extends keyof PathTransportEvents>(event: K, cb: PathTransportEvents[K]): () => void {
    return this.events.on(event, cb);
  }

  async selectedPair(): Promise<SelectedPair | undefined> {
    return this._state === 'connected' ? { local: { ...this.pair.local }, remote: { ...this.pair.remote }, id: this.pair.id } : undefined;
  }

  close(): void {
    if (this._state === 'closed') return;
    this.setState('closed');
    this.peer.setState('closed');
  }

  /** @internal Deliver one message to listeners. */
  deliver(bytes: Uint8Array): void {
    this.events.emit('message', bytes);
  }

  /** @internal Change state and notify (no-op when unchanged or already closed/failed). */
  setState(s: PathTransportState, err?: PathTransportErrorInfo): void {
    if (s === this._state || this._state === 'closed' || this._state === 'failed') return;
    this._state = s;
    if (err) this.events.emit('error', err);
    this.events.emit('state', s);
  }
}

/** @internal Shared state of both directions. */
class FakeLink {
  delayUs: number;
  loss: number;
  rateBps: number;
  readonly maxQueue: number;
  readonly manual: boolean;
  readonly clock: Clock | undefined;
  readonly rng: Rng;
  private microtaskPending = false;
  a!: FakePathTransport;
  b!: FakePathTransport;

  constructor(opts: FakePathOptions) {
    this.clock = opts.clock;
    this.manual = (opts.delivery ?? (opts.clock ? 'manual' : 'microtask')) === 'manual';
    this.delayUs = 0;
    this.loss = 0;
    this.rateBps = 0;
    this.maxQueue = opts.maxQueue ?? 4096;
    this.rng = new Rng(opts.seed ?? 1);
    if (!Number.isInteger(this.maxQueue) || this.maxQueue < 1) {
      throw new RangeError(`createFakePathPair: maxQueue must be an integer >= 1, got ${opts.maxQueue}`);
    }
    this.setConditions(opts.delayMs ?? 0, opts.loss ?? 0, opts.rateBps ?? 0);
  }

  setConditions(delayMs: number, loss: number, rateBps: number): void {
    if (!Number.isFinite(delayMs) || delayMs < 0) throw new RangeError(`fake path: delayMs must be >= 0, got ${delayMs}`);
    if (!(loss >= 0 && loss <= 1)) throw new RangeError(`fake path: loss must be in [0, 1], got ${loss}`);
    if (!Number.isFinite(rateBps) || rateBps < 0) throw new RangeError(`fake path: rateBps must be >= 0, got ${rateBps}`);
    if (!this.manual && (delayMs > 0 || rateBps > 0)) {
      throw new RangeError('fake path: delayMs/rateBps need manual delivery with a clock');
    }
    if (this.manual && !this.clock) throw new RangeError('fake path: manual delivery needs a clock');
    this.delayUs = delayMs * 1000;
    this.loss = loss;
    this.rateBps = rateBps;
  }

  private now(): number {
    return this.clock ? this.clock.nowUs() : 0;
  }

  buffered(d: Direction): number {
    if (this.rateBps <= 0) return 0;
    const backlogUs = d.busyUntilUs - this.now();
    return backlogUs > 0 ? Math.ceil((backlogUs * this.rateBps) / 8e6) : 0;
  }

  enqueue(from: FakePathTransport, bytes: Uint8Array): boolean {
    const d = from.out;
    d.st.sent++;
    const now = this.now();
    let departUs = now;
    if (this.rateBps > 0) {
      const start = Math.max(now, d.busyUntilUs);
      departUs = start + (bytes.byteLength * 8e6) / this.rateBps;
      d.busyUntilUs = departUs;
    }
    if (this.loss > 0 && this.rng.next() < this.loss) {
      d.st.lost++;
      return true; // accepted by the transport, lost in the network
    }
    d.push({ dueUs: departUs + this.delayUs, bytes: bytes.slice() }, this.maxQueue);
    if (!this.manual && !this.microtaskPending) {
      this.microtaskPending = true;
      queueMicrotask(() => {
        this.microtaskPending = false;
        this.flush(Number.POSITIVE_INFINITY);
      });
    }
    return true;
  }

  /** Deliver everything due at or before `nowUs`, in due-time order. */
  flush(nowUs: number): number {
    let n = 0;
    const da = this.a.out;
    const db = this.b.out;
    for (;;) {
      const ma = da.peek();
      const mb = db.peek();
      const aDue = ma !== undefined && ma.dueUs <= nowUs;
      const bDue = mb !== undefined && mb.dueUs <= nowUs;
      if (!aDue && !bDue) break;
      const fromA = aDue && (!bDue || ma!.dueUs <= mb!.dueUs);
      const d = fromA ? da : db;
      const to = fromA ? this.b : this.a;
      const m = d.shift()!;
      if (to.state !== 'connected') {
        d.st.deadDrops++;
        continue;
      }
      d.st.delivered++;
      n++;
      to.deliver(m.bytes);
    }
    return n;
  }
}

/** A connected fake pair and its controls. */
export interface FakePathPair {
  /** The two ends: `a` is the "local" (initiator) side, `b` the remote side. */
  a: FakePathTransport;
  b: FakePathTransport;
  /**
   * Deliver every message due at or before `nowUs` (default: the clock's now).
   * @returns number of messages delivered.
   */
  flush(nowUs?: number): number;
  /** Change network conditions (same units and checks as the options). */
  setConditions(c: { delayMs?: number; loss?: number; rateBps?: number }): void;
  /** Move both ends from 'new' to 'connecting' then 'connected'. */
  connect(): void;
  /** Both ends go to 'failed' with the given error code (default 'ERR_FAKE_FAILURE'). */
  fail(code?: string): void;
  /** Messages in flight a->b and b->a. */
  inFlight(): { ab: number; ba: number };
  stats(): { ab: FakeDirectionStats; ba: FakeDirectionStats };
}

/**
 * Create two connected in-memory transports for path `pathId`.
 * Their `selectedPair()` reports `10.0.<pathId>.1:<5000+pathId>` <-> `10.0.<pathId>.2:<6000+pathId>` (udp, host).
 * @throws RangeError on invalid options (negative delay, loss outside [0,1], delay without a clock).
 */
export function createFakePathPair(pathId: PathId, opts: FakePathOptions = {}): FakePathPair {
  if (!Number.isInteger(pathId) || pathId < 0) throw new RangeError(`createFakePathPair: bad pathId ${pathId}`);
  const link = new FakeLink(opts);
  const connected = opts.connected ?? true;
  const ca = { address: `10.0.${pathId}.1`, port: 5000 + pathId, protocol: 'udp', type: 'host' };
  const cb = { address: `10.0.${pathId}.2`, port: 6000 + pathId, protocol: 'udp', type: 'host' };
  const a = new FakePathTransport(pathId, link, new Direction(), { local: ca, remote: cb, id: `fake-${pathId}-a` }, connected);
  const b = new FakePathTransport(pathId, link, new Direction(), { local: cb, remote: ca, id: `fake-${pathId}-b` }, connected);
  a.peer = b;
  b.peer = a;
  link.a = a;
  link.b = b;
  return {
    a,
    b,
    flush: (nowUs?: number) => link.flush(nowUs ?? (link.clock ? link.clock.nowUs() : Number.POSITIVE_INFINITY)),
    setConditions: (c) => link.setConditions(c.delayMs ?? link.delayUs / 1000, c.loss ?? link.loss, c.rateBps ?? link.rateBps),
    connect: () => {
      for (const t of [a, b]) {
        if (t.state === 'new') t.setState('connecting');
      }
      for (const t of [a, b]) {
        if (t.state === 'connecting') t.setState('connected');
      }
    },
    fail: (code = 'ERR_FAKE_FAILURE') => {
      const err = { code, message: 'fake path failed' };
      a.setState('failed', err);
      b.setState('failed', err);
    },
    inFlight: () => ({ ab: a.out.size, ba: b.out.size }),
    stats: () => ({ ab: { ...a.out.st }, ba: { ...b.out.st } }),
  };
}
