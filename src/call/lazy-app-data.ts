/**
 * The app data channel of a session, loaded at first use: src/engine/app-data.ts
 * (reliable delivery, RTO, acks, reorder: ~2.3 kB min+gzip) is a separate
 * chunk that a call fetches with `import()` only when the app first sends
 * data or the first app data datagram arrives from the peer. A video call
 * that never uses `MultipathCall.send` never loads it.
 *
 * Until it is loaded this front keeps the same synchronous contract as
 * {@link AppDataChannel.send}: the same `AppDataError`s at once (bad data,
 * too large, no path for an unreliable message, window full for reliable
 * messages queued beyond the channel's own in-flight bounds), the same seqs
 * returned; the accepted messages are handed to the channel in order as soon
 * as it exists (a few ms later: the module load). Datagrams that arrive
 * before are held (bounded: {@link MAX_EARLY_DATAGRAMS}; beyond it they are
 * counted drops, which a reliable sender retransmits) and replayed in order.
 * Path states are recorded and replayed. If the chunk fails to load, the
 * queued messages are reported through `onError` and later sends retry the
 * load.
 */
import type { PathId } from '../core/types.js';
import type { AppDataChannel } from '../engine/app-data.js';
import { AppDataError, type AppDataOptions, type AppDataStats, zeroAppDataCounters } from '../engine/app-data-types.js';
import { seqAdd } from '../core/seq.js';
import { MAX_APP_DATA_BYTES, type AppDataAckMessage, type AppDataMessage } from '../wire/types.js';

/** Incoming app data datagrams held while the channel loads. */
export const MAX_EARLY_DATAGRAMS = 256;

type AppDataBody = { kind: 'appData'; appData: AppDataMessage } | { kind: 'appDataAck'; appDataAck: AppDataAckMessage };
type Ctor = new (opts: AppDataOptions) => AppDataChannel;

const textEncoder = new TextEncoder();

/** Loads the channel's module (the default: a dynamic import, a chunk of its own in a bundle). */
export const loadAppDataChannel = (): Promise<Ctor> => import('../engine/app-data.js').then((m) => m.AppDataChannel);

export class LazyAppData {
  private channel: AppDataChannel | undefined;
  private loading = false;
  private readonly pathsUp = new Map<PathId, boolean>();
  private readonly sends: Array<{ payload: Uint8Array | string; reliable: boolean; bytes: number }> = [];
  private queuedReliable = 0;
  private queuedReliableBytes = 0;
  private nextReliableSeq = 0;
  private nextUnreliableSeq = 0;
  private readonly early: Array<{ pathId: PathId; body: AppDataBody }> = [];
  private earlyDropped = 0;
  private readonly maxMessageBytes: number;
  private readonly maxInFlightBytes: number;
  private readonly maxInFlightMessages: number;

  /**
   * @param opts the channel's options (validated by the channel when it is created).
   * @param onError told when the channel's module cannot be loaded (the queued messages are dropped).
   * @param load the module loader (tests inject one).
   */
  constructor(
    private readonly opts: AppDataOptions,
    private readonly onError: (e: Error) => void,
    private readonly load: () => Promise<Ctor> = loadAppDataChannel,
  ) {
    this.maxMessageBytes = opts.maxMessageBytes ?? MAX_APP_DATA_BYTES;
    this.maxInFlightBytes = opts.maxInFlightBytes ?? 262_144;
    this.maxInFlightMessages = opts.maxInFlightMessages ?? 1024;
  }

  /** True once the channel's module is loaded and the channel exists. */
  get loaded(): boolean {
    return this.channel !== undefined;
  }

  /** See {@link AppDataChannel.setPathUp}. */
  setPathUp(pathId: PathId, up: boolean): void {
    if (this.channel) this.channel.setPathUp(pathId, up);
    else this.pathsUp.set(pathId, up);
  }

  /** See {@link AppDataChannel.removePath}. */
  removePath(pathId: PathId): void {
    if (this.channel) this.channel.removePath(pathId);
    else this.pathsUp.delete(pathId);
  }

  /**
   * See {@link AppDataChannel.send}: the same checks and errors, at once.
   * @throws AppDataError 'bad-data' | 'too-large' | 'no-path' | 'window-full'.
   */
  send(data: Uint8Array | string, reliable: boolean): number {
    if (this.channel) return this.channel.send(data, reliable);
    let bytes: number;
    let payload: Uint8Array | string;
    if (typeof data === 'string') {
      bytes = textEncoder.encode(data).length;
      payload = data;
    } else if (data instanceof Uint8Array) {
      bytes = data.length;
      payload = data.slice(); // the app may reuse its buffer before the channel takes it
    } else {
      throw new AppDataError('bad-data', 'app data must be a Uint8Array or a string');
    }
    if (bytes > this.maxMessageBytes) throw new AppDataError('too-large', `app data message of ${bytes} bytes exceeds the limit of ${this.maxMessageBytes} bytes`);
    let seq: number;
    if (!reliable) {
      if (![...this.pathsUp.values()].includes(true)) throw new AppDataError('no-path', 'no path is up: unreliable app data cannot be sent now');
      seq = this.nextUnreliableSeq;
      this.nextUnreliableSeq = seqAdd(seq, 1);
    } else {
      if (this.queuedReliable >= this.maxInFlightMessages) throw new AppDataError('window-full', `${this.queuedReliable} reliable app data messages await an ack (limit ${this.maxInFlightMessages})`);
      if (this.queuedReliableBytes + bytes > this.maxInFlightBytes)
        throw new AppDataError('window-full', `${this.queuedReliableBytes} bytes of reliable app data await an ack; ${bytes} more would exceed the limit of ${this.maxInFlightBytes} bytes`);
      seq = this.nextReliableSeq;
      this.nextReliableSeq = seqAdd(seq, 1);
      this.queuedReliable++;
      this.queuedReliableBytes += bytes;
    }
    this.sends.push({ payload, reliable, bytes });
    this.startLoad();
    return seq;
  }

  /** See {@link AppDataChannel.onMessage}; held (bounded) until the channel is loaded. */
  onMessage(pathId: PathId, body: AppDataBody): void {
    if (this.channel) return this.channel.onMessage(pathId, body);
    if (this.early.length >= MAX_EARLY_DATAGRAMS) this.earlyDropped++;
    else this.early.push({ pathId, body });
    this.startLoad();
  }

  /** See {@link AppDataChannel.tick}. */
  tick(): void {
    this.channel?.tick();
  }

  /** See {@link AppDataChannel.nextWakeUs} (Infinity until loaded: nothing to time yet). */
  nextWakeUs(): number {
    return this.channel ? this.channel.nextWakeUs() : Infinity;
  }

  /** See {@link AppDataChannel.stats}; before the channel loads, the queued reliable messages count as in flight. */
  stats(): AppDataStats {
    if (this.channel) {
      const s = this.channel.stats();
      s.dropped.bufferFull += this.earlyDropped;
      return s;
    }
    const counters = zeroAppDataCounters();
    counters.sent = this.sends.length;
    counters.sentBytes = this.sends.reduce((a, s) => a + s.bytes, 0);
    counters.dropped.bufferFull = this.earlyDropped;
    return {
      ...counters,
      inFlight: this.queuedReliable,
      inFlightBytes: this.queuedReliableBytes,
      reorderBuffered: 0,
      reorderBufferedBytes: 0,
      srttMs: {},
    };
  }

  private startLoad(): void {
    if (this.loading || this.channel) return;
    this.loading = true;
    this.load().then(
      (C) => this.attach(new C(this.opts)),
      (e: unknown) => {
        this.loading = false;
        const n = this.sends.length;
        this.sends.length = 0;
        this.queuedReliable = 0;
        this.queuedReliableBytes = 0;
        this.nextReliableSeq = 0; // the channel, when it loads, numbers from 0
        this.nextUnreliableSeq = 0;
        this.early.length = 0;
        this.onError(new Error(`app data channel failed to load (${n} message(s) not sent): ${e instanceof Error ? e.message : String(e)}`));
      },
    );
  }

  private attach(c: AppDataChannel): void {
    for (const [id, up] of this.pathsUp) c.setPathUp(id, up);
    this.pathsUp.clear();
    for (const s of this.sends.splice(0)) {
      try {
        c.send(s.payload, s.reliable);
      } catch (e) {
        // An unreliable message whose paths all went down while loading: not sent, as it would not have been.
        if (!(e instanceof AppDataError)) throw e;
      }
    }
    this.channel = c;
    for (const m of this.early.splice(0)) c.onMessage(m.pathId, m.body);
  }
}
