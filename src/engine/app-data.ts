/**
 * Application data on the call's paths (`MultipathCall.send`), free of I/O:
 * a clock is injected, nothing runs on its own; {@link AppDataChannel.tick}
 * is driven by the Endpoint's tick and {@link AppDataChannel.nextWakeUs} says
 * when it wants the next one.
 *
 * The paths are unordered datachannels with `maxRetransmits: 0`, so reliability
 * is ours:
 *  - Unreliable messages are sent once, on the best up path (lowest smoothed
 *    RTT; a path without an RTT sample ranks after the measured ones), and
 *    delivered as they arrive (no order, no dedup beyond what the network does).
 *  - Reliable messages carry a per-call sequence number (uint32, RFC 1982
 *    serial arithmetic). The receiver acknowledges with a cumulative point and
 *    gap blocks (SCTP SACK, RFC 9260 §3.3.4; QUIC ACK ranges, RFC 9000 §19.3),
 *    deduplicates, and delivers exactly once and in order through a bounded
 *    reorder buffer. The sender retransmits a message not acknowledged within
 *    the RTO of the path it went on (RFC 6298 §2: SRTT, RTTVAR, RTO = SRTT +
 *    max(G, 4 RTTVAR), Karn's rule §3 — samples only from messages sent once —
 *    and exponential backoff §5.5), each time on the best path up at that
 *    moment other than the one the last attempt was lost on (when another is
 *    up), so a message sent on a lossy or dead path goes on another one.
 *    After {@link AppDataOptions.maxAttempts} transmissions the sender gives
 *    up on the message: its payload is freed, the app is told
 *    (`onAbandon`), and a small `skip` marker takes its place so the receiver
 *    moves past it (PR-SCTP FORWARD-TSN, RFC 3758 §3.5) instead of waiting
 *    for it forever.
 *
 * Bounds: message size ({@link MAX_APP_DATA_BYTES}), bytes and messages in
 * flight on the sender (`send` throws {@link AppDataError} 'window-full'),
 * the receiver's reorder window (messages and bytes; a message beyond it is a
 * counted drop that the sender retransmits later). Bad input — malformed
 * acks, acks of never-sent seqs, huge sequence jumps — is a counted drop,
 * never an exception.
 *
 * App data bypasses the media pacer and congestion controller: the in-flight
 * bound (default 256 KiB) is what keeps it from crowding out video.
 */
import { MAX_RTT_US, RttEstimator } from '../cc/rtt.js';
import type { Clock } from '../core/clock.js';
import { seqAdd, seqDiff } from '../core/seq.js';
import type { PathId } from '../core/types.js';
import { encodeControl } from '../wire/encode.js';
import { AppDataError, type AppDataOptions, type AppDataStats, zeroAppDataCounters } from './app-data-types.js';
import { type AppDataAckMessage, type AppDataMessage, MAX_APP_DATA_ACK_RANGES, MAX_APP_DATA_BYTES } from '../wire/types.js';

interface Outstanding {
  seq: number;
  text: boolean;
  /** Null for a skip marker. */
  payload: Uint8Array | null;
  attempts: number;
  sentUs: number;
  pathId: PathId;
  deadlineUs: number;
}

/** One path: up or not, and its RFC 6298 §2 SRTT / RTTVAR from app data acks. */
interface PathRtt {
  up: boolean;
  rtt: RttEstimator;
}

export { AppDataError } from './app-data-types.js';
export type { AppDataErrorCode, AppDataInfo, AppDataOptions, AppDataStats } from './app-data-types.js';

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder('utf-8', { fatal: false });

/** RFC 6298 clock granularity G (µs). */
const GRANULARITY_US = 1000;

export class AppDataChannel {
  private readonly clock: Clock;
  private readonly transmit: AppDataOptions['transmit'];
  private readonly deliver: AppDataOptions['deliver'];
  private readonly onAbandon: AppDataOptions['onAbandon'];
  private readonly maxMessageBytes: number;
  private readonly maxInFlightBytes: number;
  private readonly maxInFlightMessages: number;
  private readonly maxAttempts: number;
  private readonly initialRtoUs: number;
  private readonly minRtoUs: number;
  private readonly maxRtoUs: number;
  private readonly reorderWindow: number;
  private readonly maxReorderBytes: number;

  private readonly paths = new Map<PathId, PathRtt>();
  // Sender.
  private nextReliableSeq = 0;
  private nextUnreliableSeq = 0;
  /** Unacknowledged reliable messages by seq, in send order. */
  private readonly outstanding = new Map<number, Outstanding>();
  private inFlightBytes = 0;
  /** Highest cumulative point acknowledged so far (seqs before it are done). */
  private ackedCumulative = 0;
  // Receiver.
  private expected = 0;
  private readonly reorder = new Map<number, { msg: AppDataMessage; pathId: PathId }>();
  private reorderBytes = 0;
  /** An ack is owed: first arrival time since the last ack (µs) and path to send it on. */
  private ackOwedSinceUs = -1;
  private ackPath: PathId = 0;

  private readonly counters = zeroAppDataCounters();

  /** @throws RangeError when an option is out of range (named in the message). */
  constructor(opts: AppDataOptions) {
    this.clock = opts.clock;
    this.transmit = opts.transmit;
    this.deliver = opts.deliver;
    this.onAbandon = opts.onAbandon;
    const int = (name: string, v: number | undefined, def: number, lo: number, hi: number): number => {
      const x = v ?? def;
      if (!Number.isInteger(x) || x < lo || x > hi) throw new RangeError(`AppDataChannel: ${name} ${x} not an integer in [${lo}, ${hi}]`);
      return x;
    };
    this.maxMessageBytes = int('maxMessageBytes', opts.maxMessageBytes, MAX_APP_DATA_BYTES, 1, MAX_APP_DATA_BYTES);
    this.maxInFlightBytes = int('maxInFlightBytes', opts.maxInFlightBytes, 262_144, this.maxMessageBytes, 64 * 1024 * 1024);
    this.maxInFlightMessages = int('maxInFlightMessages', opts.maxInFlightMessages, 1024, 1, 32_768);
    this.maxAttempts = int('maxAttempts', opts.maxAttempts, 12, 1, 100);
    this.initialRtoUs = 1000 * int('initialRtoMs', opts.initialRtoMs, 1000, 1, 60_000);
    this.minRtoUs = 1000 * int('minRtoMs', opts.minRtoMs, 200, 1, 60_000);
    this.maxRtoUs = 1000 * int('maxRtoMs', opts.maxRtoMs, 10_000, 1, 120_000);
    if (this.maxRtoUs < this.minRtoUs) throw new RangeError(`AppDataChannel: maxRtoMs ${this.maxRtoUs / 1000} < minRtoMs ${this.minRtoUs / 1000}`);
    this.reorderWindow = int('reorderWindow', opts.reorderWindow, 2048, 1, 32_768);
    this.maxReorderBytes = int('maxReorderBytes', opts.maxReorderBytes, 1024 * 1024, this.maxMessageBytes, 256 * 1024 * 1024);
  }

  /**
   * Marks a path up (it can carry messages) or down. Unknown paths are added.
   * Down: messages last sent on it are retransmitted on the next tick (on
   * another path) instead of after their RTO. Up: messages that found no path
   * go out on the next tick.
   */
  setPathUp(pathId: PathId, up: boolean): void {
    const p = this.paths.get(pathId);
    const was = p?.up ?? false;
    if (p) p.up = up;
    else this.paths.set(pathId, { up, rtt: new RttEstimator({ maxSamples: 16 }) });
    if (up === was) return;
    const now = this.clock.nowUs();
    for (const o of this.outstanding.values()) {
      if (up ? o.deadlineUs === Infinity : o.attempts > 0 && o.pathId === pathId && o.deadlineUs > now) o.deadlineUs = now;
    }
  }

  /** Forgets a path (its RTT too); its messages are retransmitted as for a path that went down. */
  removePath(pathId: PathId): void {
    this.setPathUp(pathId, false);
    this.paths.delete(pathId);
  }

  /** True when some path is up. */
  hasUpPath(): boolean {
    for (const p of this.paths.values()) if (p.up) return true;
    return false;
  }

  /**
   * Forgets both directions' state (a new remote peer): sequence numbers
   * restart at 0, in-flight and buffered messages are dropped (not counted
   * as abandoned). Counters and path RTTs are kept.
   */
  reset(): void {
    this.nextReliableSeq = 0;
    this.nextUnreliableSeq = 0;
    this.outstanding.clear();
    this.inFlightBytes = 0;
    this.ackedCumulative = 0;
    this.expected = 0;
    this.reorder.clear();
    this.reorderBytes = 0;
    this.ackOwedSinceUs = -1;
  }

  /**
   * Sends one message. Strings go as UTF-8 and arrive as strings.
   * Unreliable: sent now on the best up path, or not at all.
   * Reliable: sent now when a path is up, else on the first tick with one;
   * retransmitted until acknowledged (see the module comment).
   * @returns the message's seq (reliable and unreliable seqs count separately).
   * @throws AppDataError 'bad-data' (not a Uint8Array or string), 'too-large'
   *   (payload above maxMessageBytes, named), 'no-path' (unreliable with no
   *   path up), 'window-full' (reliable with maxInFlightBytes or
   *   maxInFlightMessages already unacknowledged: retry after some are acked).
   */
  send(data: Uint8Array | string, reliable: boolean): number {
    let payload: Uint8Array;
    let text: boolean;
    if (typeof data === 'string') {
      payload = textEncoder.encode(data);
      text = true;
    } else if (data instanceof Uint8Array) {
      payload = data.slice(); // the app may reuse its buffer
      text = false;
    } else {
      throw new AppDataError('bad-data', 'app data must be a Uint8Array or a string');
    }
    if (payload.length > this.maxMessageBytes) {
      throw new AppDataError('too-large', `app data message of ${payload.length} bytes exceeds the limit of ${this.maxMessageBytes} bytes`);
    }
    const now = this.clock.nowUs();
    if (!reliable) {
      const best = this.bestPath();
      if (best === undefined) throw new AppDataError('no-path', 'no path is up: unreliable app data cannot be sent now');
      const seq = this.nextUnreliableSeq;
      this.nextUnreliableSeq = seqAdd(seq, 1);
      this.counters.sent++;
      this.counters.sentBytes += payload.length;
      if (!this.put(best, now, { seq, reliable: false, text, payload, skip: false })) this.counters.dropped.notSent++;
      return seq;
    }
    if (this.outstanding.size >= this.maxInFlightMessages) {
      throw new AppDataError('window-full', `${this.outstanding.size} reliable app data messages await an ack (limit ${this.maxInFlightMessages})`);
    }
    if (this.inFlightBytes + payload.length > this.maxInFlightBytes) {
      throw new AppDataError('window-full', `${this.inFlightBytes} bytes of reliable app data await an ack; ${payload.length} more would exceed the limit of ${this.maxInFlightBytes} bytes`);
    }
    const seq = this.nextReliableSeq;
    this.nextReliableSeq = seqAdd(seq, 1);
    const o: Outstanding = { seq, text, payload, attempts: 0, sentUs: now, pathId: 0, deadlineUs: now };
    this.outstanding.set(seq, o);
    this.inFlightBytes += payload.length;
    this.counters.sent++;
    this.counters.sentBytes += payload.length;
    this.transmitReliable(o, now);
    return seq;
  }

  /** An AppData or AppDataAck body arrived on `pathId`. Never throws for bad content. */
  onMessage(pathId: PathId, body: { kind: 'appData'; appData: AppDataMessage } | { kind: 'appDataAck'; appDataAck: AppDataAckMessage }): void {
    if (body.kind === 'appData') this.onData(pathId, body.appData);
    else this.onAck(body.appDataAck);
  }

  /** Sends an owed ack, retransmits what timed out. */
  tick(): void {
    const now = this.clock.nowUs();
    if (this.ackOwedSinceUs >= 0) this.sendAck(now);
    if (this.outstanding.size === 0) return;
    for (const o of this.outstanding.values()) {
      if (o.deadlineUs > now) continue;
      if (o.payload !== null && o.attempts >= this.maxAttempts) {
        // Give up: free the payload, keep a skip marker in its place.
        this.inFlightBytes -= o.payload.length;
        this.counters.abandoned++;
        this.onAbandon?.(o.seq, o.payload.length);
        o.payload = null;
        o.attempts = 0;
      }
      this.transmitReliable(o, now);
    }
  }

  /** Earliest time (µs) a tick has work: an owed ack now, else the first RTO deadline (Infinity when idle). */
  nextWakeUs(): number {
    if (!this.hasUpPath()) return Infinity;
    if (this.ackOwedSinceUs >= 0) return this.clock.nowUs();
    let t = Infinity;
    for (const o of this.outstanding.values()) if (o.deadlineUs < t) t = o.deadlineUs;
    return t;
  }

  /** A snapshot of the counters. */
  stats(): AppDataStats {
    const srttMs: Record<number, number> = {};
    for (const [id, p] of this.paths) if (p.rtt.hasSample()) srttMs[id] = p.rtt.srttMs();
    return {
      ...this.counters,
      dropped: { ...this.counters.dropped },
      inFlight: this.outstanding.size,
      inFlightBytes: this.inFlightBytes,
      reorderBuffered: this.reorder.size,
      reorderBufferedBytes: this.reorderBytes,
      srttMs,
    };
  }

  // ---------------------------------------------------------------------------
  // Sender internals
  // ---------------------------------------------------------------------------

  /** Up path with the lowest SRTT (other than `avoid` when another is up); unmeasured paths after measured ones, then by id. */
  private bestPath(avoid?: PathId): PathId | undefined {
    let best: PathId | undefined;
    let bestKey = Infinity;
    for (const [id, p] of this.paths) {
      if (!p.up) continue;
      if (id === avoid) continue;
      const key = p.rtt.hasSample() ? p.rtt.srttMs() * 1000 : MAX_RTT_US + id;
      if (key < bestKey) {
        bestKey = key;
        best = id;
      }
    }
    return best === undefined && avoid !== undefined ? this.bestPath() : best;
  }

  /** RFC 6298 §2.2/2.3 RTO of a path (µs), clamped to [minRto, maxRto]. */
  private rtoUs(pathId: PathId): number {
    const p = this.paths.get(pathId);
    const base = p?.rtt.hasSample() ? 1000 * (p.rtt.srttMs() + Math.max(GRANULARITY_US / 1000, 4 * p.rtt.rttvarMs())) : this.initialRtoUs;
    return Math.min(this.maxRtoUs, Math.max(this.minRtoUs, base));
  }

  private transmitReliable(o: Outstanding, now: number): void {
    // A retransmission avoids the path the last attempt was lost on when another is up (MPTCP
    // reinjects on another subflow after an RTO: Raiciu et al., "How Hard Can It Be?", NSDI'12 §4.2).
    const best = this.bestPath(o.attempts > 0 ? o.pathId : undefined);
    if (best === undefined) {
      o.deadlineUs = Infinity; // sent as soon as a path comes up (setPathUp)
      return;
    }
    if (o.attempts > 0) {
      this.counters.retransmitted++;
      this.counters.retransmittedBytes += o.payload?.length ?? 0;
    }
    o.attempts++;
    o.sentUs = now;
    o.pathId = best;
    // RFC 6298 §5.5: back off the timer exponentially on each retransmission.
    o.deadlineUs = now + Math.min(this.maxRtoUs, this.rtoUs(best) * 2 ** Math.min(o.attempts - 1, 16));
    const msg: AppDataMessage =
      o.payload === null ? { seq: o.seq, reliable: true, text: false, payload: new Uint8Array(0), skip: true } : { seq: o.seq, reliable: true, text: o.text, payload: o.payload, skip: false };
    this.put(best, now, msg);
  }

  private put(pathId: PathId, now: number, appData: AppDataMessage): boolean {
    const bytes = encodeControl({ pathId, pathSeq: 0, sendTimeUs: now }, { kind: 'appData', appData });
    return this.transmit(pathId, bytes);
  }

  private onAck(a: AppDataAckMessage): void {
    this.counters.acksReceived++;
    const now = this.clock.nowUs();
    // The cumulative point and every range end must name seqs already sent.
    // An older cumulative point is a stale ack (acks travel on several paths): its ranges still count.
    const sentAhead = seqDiff(a.cumulative, this.nextReliableSeq);
    const last = a.ranges.length > 0 ? a.ranges[a.ranges.length - 1] : a.cumulative;
    if (sentAhead < 0 || seqDiff(last, this.nextReliableSeq) < 0) {
      this.counters.dropped.badAck++;
      return;
    }
    const ackDelayUs = Math.min(a.ackDelayUs, 1_000_000);
    let sampled = false;
    const acked = (o: Outstanding): void => {
      if (!sampled && o.attempts === 1 && o.payload !== null) {
        // Karn's rule (RFC 6298 §3): only messages transmitted once give a sample.
        this.rttSample(o.pathId, now - o.sentUs - ackDelayUs, now);
        sampled = true;
      }
      this.inFlightBytes -= o.payload?.length ?? 0;
      this.outstanding.delete(o.seq);
    };
    // Walk from the old cumulative point: bounded by the seqs in flight.
    const span = seqDiff(this.ackedCumulative, a.cumulative);
    if (span > 0) {
      if (span <= this.outstanding.size) {
        for (let i = 0, s = this.ackedCumulative; i < span; i++, s = seqAdd(s, 1)) {
          const o = this.outstanding.get(s);
          if (o) acked(o);
        }
      } else {
        for (const o of [...this.outstanding.values()]) if (seqDiff(a.cumulative, o.seq) < 0) acked(o);
      }
      this.ackedCumulative = a.cumulative;
    }
    for (let i = 0; i < a.ranges.length; i += 2) {
      const start = a.ranges[i];
      const n = seqDiff(start, a.ranges[i + 1]);
      if (n > this.outstanding.size) {
        for (const o of [...this.outstanding.values()]) {
          const off = seqDiff(start, o.seq);
          if (off >= 0 && off < n) acked(o);
        }
      } else {
        for (let k = 0, s = start; k < n; k++, s = seqAdd(s, 1)) {
          const o = this.outstanding.get(s);
          if (o) acked(o);
        }
      }
    }
  }

  /** RFC 6298 §2.2 / §2.3 through the shared estimator (src/cc/rtt.ts); garbage samples are ignored there. */
  private rttSample(pathId: PathId, rttUs: number, nowUs: number): void {
    this.paths.get(pathId)?.rtt.onSample(rttUs, nowUs);
  }

  // ---------------------------------------------------------------------------
  // Receiver internals
  // ---------------------------------------------------------------------------

  private onData(pathId: PathId, m: AppDataMessage): void {
    if (!m.reliable) {
      this.counters.received++;
      this.counters.receivedBytes += m.payload.length;
      this.deliver(m.text ? textDecoder.decode(m.payload) : m.payload, { reliable: false, pathId });
      return;
    }
    const off = seqDiff(this.expected, m.seq);
    if (off >= this.reorderWindow) {
      this.counters.dropped.outOfWindow++; // not acked: the sender retransmits once the window moves
      return;
    }
    this.owe(pathId);
    if (off < 0 || this.reorder.has(m.seq)) {
      this.counters.duplicates++;
      return;
    }
    if (off > 0) {
      if (this.reorderBytes + m.payload.length > this.maxReorderBytes) {
        this.counters.dropped.bufferFull++;
        return;
      }
      this.reorder.set(m.seq, { msg: m, pathId });
      this.reorderBytes += m.payload.length;
      return;
    }
    this.accept(m, pathId);
    for (let next = this.reorder.get(this.expected); next; next = this.reorder.get(this.expected)) {
      this.reorder.delete(this.expected);
      this.reorderBytes -= next.msg.payload.length;
      this.accept(next.msg, next.pathId);
    }
  }

  /** The in-order message `expected`: deliver (or skip) and move on. */
  private accept(m: AppDataMessage, pathId: PathId): void {
    this.expected = seqAdd(this.expected, 1);
    if (m.skip) {
      this.counters.skipped++;
      return;
    }
    this.counters.received++;
    this.counters.receivedBytes += m.payload.length;
    this.deliver(m.text ? textDecoder.decode(m.payload) : m.payload, { reliable: true, pathId });
  }

  private owe(pathId: PathId): void {
    if (this.ackOwedSinceUs < 0) this.ackOwedSinceUs = this.clock.nowUs();
    this.ackPath = pathId;
  }

  /** Cumulative point plus up to MAX_APP_DATA_ACK_RANGES gap blocks, lowest first, on the path data last came on (or the best up path). */
  private sendAck(now: number): void {
    const ranges: number[] = [];
    if (this.reorder.size > 0) {
      const offs = [...this.reorder.keys()].map((s) => seqDiff(this.expected, s)).sort((x, y) => x - y);
      let start = offs[0];
      let end = start + 1;
      for (let i = 1; i <= offs.length && ranges.length < 2 * MAX_APP_DATA_ACK_RANGES; i++) {
        if (i < offs.length && offs[i] === end) {
          end++;
          continue;
        }
        ranges.push(seqAdd(this.expected, start), seqAdd(this.expected, end));
        if (i < offs.length) {
          start = offs[i];
          end = start + 1;
        }
      }
    }
    const path = this.paths.get(this.ackPath)?.up ? this.ackPath : this.bestPath();
    if (path === undefined) return; // owed until a path is up
    const ackDelayUs = Math.min(0xffff_ffff, Math.max(0, Math.round(now - this.ackOwedSinceUs)));
    const bytes = encodeControl({ pathId: path, pathSeq: 0, sendTimeUs: now }, { kind: 'appDataAck', appDataAck: { cumulative: this.expected, ranges, ackDelayUs } });
    this.ackOwedSinceUs = -1;
    this.counters.acksSent++;
    this.transmit(path, bytes);
  }
}
