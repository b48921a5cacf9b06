/**
 * The RTP carrier: a {@link DatagramCarrier} that carries a path's datagrams
 * inside encoded VP8 frames of a tiny video track on the path's own
 * RTCPeerConnection, through `RTCRtpScriptTransform` (W3C WebRTC Encoded
 * Transform), so that they need no acknowledgement on the reverse direction
 * (src/transport/carrier.ts). Built after the feasibility study in Chromium
 * (tools/experiments/rtp-carrier/README.md, "Sketch: an RTP carrier
 * transport"); loaded lazily (`import()`) by {@link SimplePeerPath} when its
 * option `rtpCarrier` is set.
 *
 * Set-up, on both peers of a path (both must opt in):
 * - one video transceiver, `sendrecv`, VP8 only (`setCodecPreferences`,
 *   without RTX); the initiator adds it when this chunk has loaded, and
 *   renegotiates when its first offer went out without it (the usual case:
 *   measured in Chromium 156, even a cached chunk's `import()` resolves after
 *   simple-peer's first `createOffer`; the video m-section then joins the
 *   datachannel's BUNDLE group, one ICE transport, no new candidates); the
 *   answerer takes the transceiver the remote offer made and turns it
 *   `sendrecv` before its answer (or asks the initiator to renegotiate when
 *   its answer went out first). Were the transceiver in the first offer,
 *   Chromium's default bundle policy ('balanced') would gather candidates for
 *   the video m-section too until the answer accepts BUNDLE; they pass the
 *   path's candidate filter like the others;
 * - its sender's track: a 16x16 `MediaStreamTrackGenerator` (Chromium's
 *   breakout box) that gets a frame whenever the queue holds data, at most
 *   `maxFrameRate` per second; else a 16x16 canvas `captureStream(0)` with
 *   `requestFrame()`;
 * - both transforms run in one module worker per carrier
 *   (src/transport/rtp-carrier-worker.ts), which keeps the send queue.
 *
 * Chromium's own repair is off: no RTX in the codec preferences, and the
 * `nack`, `nack pli` and `ccm fir` feedback removed from the video m-section
 * of every offer and answer (`withoutVideoRepair`). Why: its NACKs travel on
 * the reverse direction, which is what is failing when a path needs this
 * carrier; its RTX padding re-sends recent frames (duplicates, rate outside
 * our scheduler's view); after an outage it would retransmit stale frames;
 * our own NACK and FEC repair end to end on any path. The price: one lost
 * RTP packet loses its whole frame, so frames carry at most `maxDatagrams`
 * (default 2) datagrams (README answer 2: 79 % of frames at 5 % packet loss
 * without repair, 3-4 RTP packets per frame there).
 *
 * Rate: Chromium's pacer sends at about its GCC estimate whatever we queue
 * (README answer 3); {@link RtpCarrier.rateCeilingBps} is that estimate
 * (`availableOutgoingBitrate` of the selected candidate pair, polled once a
 * second), and the caller must keep its offered rate below it. Send
 * opportunities are frames: at most `maxFrameRate` (120/s) x `maxDatagrams`.
 *
 * Limits (Chromium behaviour we rely on, not specified; README "Risks"): the
 * receive transform sits after frame assembly, so a lost frame does not hold
 * later ones; ICE stops sending ~5 s after the reverse direction goes
 * completely dead (`open` turns false with ICE `disconnected`); a page timer
 * paces the frames, so a background tab's throttled timers slow the carrier.
 * The path's peer connection must carry no other video.
 */
import { Emitter } from '../core/emitter.js';
import type { DatagramCarrier } from './carrier.js';
import { carrierCodecs, MAX_CARRIED_DATAGRAM_BYTES, withoutVideoRepair } from './rtp-carrier-frame.js';
import type { RtpCarrierWorkerStats } from './rtp-carrier-worker.js';
import { selectedPairFromStats, type StatsEntry } from './selected-pair.js';
import type { SimplePeerPath } from './simple-peer-path.js';
import type { PathTransportEvents } from './types.js';

export type { RtpCarrierWorkerStats } from './rtp-carrier-worker.js';

/** Options of an {@link RtpCarrier} (all optional). */
export interface RtpCarrierOptions {
  /** Bound on the bytes queued and not yet in a frame (default 262 144); send() beyond it returns false. */
  maxQueuedBytes?: number;
  /** Bound on the datagrams queued (default 1024). */
  maxQueuedDatagrams?: number;
  /** Datagrams queued longer than this (ms) are dropped, counted (default 1000). */
  maxQueueDelayMs?: number;
  /** Most datagrams in one frame (default 2: a lost RTP packet loses the whole frame). */
  maxDatagramsPerFrame?: number;
  /** Most bytes of one frame when it holds more than one datagram (default 2600). */
  maxFrameBytes?: number;
  /** Most frames pushed into the track per second (default 120; README answer 3, `gen120`). */
  maxFrameRate?: number;
  /** Period of the `getStats()` poll for `availableOutgoingBitrate`, ms (default 1000). */
  statsIntervalMs?: number;
}

/** Counters of one {@link RtpCarrier} (page side; the worker's are {@link RtpCarrier.workerStats}). */
export interface RtpCarrierCounters {
  /** send() calls accepted / refused (not open, bad size, queue bound). */
  sent: number;
  sendRefused: number;
  /** Datagrams the worker dropped from its queue (stale or over its bound). */
  queueDrops: number;
  /** Frames pushed into the track. */
  framesPushed: number;
  /** Frames the track source refused (its writer had no room). */
  framesNotPushed: number;
  /** Datagrams delivered to 'message' listeners. */
  received: number;
  /** Renegotiations asked of simple-peer (the transceiver missed an offer or an answer). */
  renegotiations: number;
  /** Errors caught: worker, replaceTrack, getStats, listeners. */
  errors: number;
}

/** The simple-peer members the carrier uses (simple-peer-light v9). */
export interface CarrierPeer {
  _pc?: RTCPeerConnection | null;
  readonly destroyed: boolean;
  negotiate(): void;
  // biome-ignore lint/suspicious/noExplicitAny: simple-peer's event payloads differ per event
  on(event: string, cb: (...args: any[]) => void): unknown;
}

type Transformable = { transform: unknown };
type ScriptTransformCtor = new (worker: Worker, options?: unknown) => unknown;
type TrackGeneratorCtor = new (init: { kind: 'video' }) => MediaStreamTrack & { writable: WritableStream<VideoFrame> };

/** Most renegotiations one carrier asks for (the remote may not have opted in). */
const MAX_RENEGOTIATIONS = 2;
/** A worker arrival stamp older than this (µs) is clamped (as src/transport/datachannel-worker.ts). */
const MAX_ARRIVAL_AGE_US = 2_000_000;
const SIDE = 16;

/**
 * Why this browser cannot run the RTP carrier, or undefined when it can:
 * it needs RTCPeerConnection, `RTCRtpScriptTransform` with a `transform`
 * member on senders and receivers, module Workers, a VP8 video codec, and a
 * track source (`MediaStreamTrackGenerator` + `VideoFrame`, or a canvas with
 * `captureStream`). Never throws.
 */
export function rtpCarrierUnsupported(): string | undefined {
  try {
    const g = globalThis as unknown as Record<string, unknown>;
    if (typeof g.RTCPeerConnection !== 'function') return 'no RTCPeerConnection';
    if (typeof g.RTCRtpScriptTransform !== 'function') return 'no RTCRtpScriptTransform (WebRTC encoded transform)';
    if (!('transform' in RTCRtpSender.prototype) || !('transform' in RTCRtpReceiver.prototype)) return 'RTCRtpSender/RTCRtpReceiver have no transform';
    if (typeof g.Worker !== 'function') return 'no Worker';
    const caps = RTCRtpReceiver.getCapabilities?.('video');
    if (!caps || carrierCodecs(caps.codecs).length === 0) return 'no VP8 codec';
    if (typeof g.MediaStreamTrackGenerator === 'function' && typeof g.VideoFrame === 'function') return undefined;
    if (typeof document !== 'undefined' && typeof HTMLCanvasElement !== 'undefined' && 'captureStream' in HTMLCanvasElement.prototype) return undefined;
    return 'no video track source (MediaStreamTrackGenerator or canvas.captureStream)';
  } catch (e) {
    return `feature detection failed: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/** The carrier's video source: a frame on demand. */
interface FrameSource {
  track: MediaStreamTrack;
  /** Push one frame; false when the source had no room. */
  push(): boolean;
  stop(): void;
}

function makeSource(): FrameSource {
  const g = globalThis as unknown as { MediaStreamTrackGenerator?: TrackGeneratorCtor };
  if (typeof g.MediaStreamTrackGenerator === 'function' && typeof VideoFrame === 'function') {
    const gen = new g.MediaStreamTrackGenerator({ kind: 'video' });
    const writer = gen.writable.getWriter();
    const pixels = new Uint8Array((SIDE * SIDE * 3) / 2); // I420, black enough
    let n = 0;
    return {
      track: gen,
      push() {
        if (writer.desiredSize !== null && writer.desiredSize <= 0) return false;
        pixels[n++ % pixels.length] ^= 0xff; // never two identical frames
        const f = new VideoFrame(pixels, { format: 'I420', codedWidth: SIDE, codedHeight: SIDE, timestamp: Math.round(performance.now() * 1000) });
        writer.write(f).catch(() => f.close());
        return true;
      },
      stop() {
        writer.close().catch(() => undefined);
        gen.stop();
      },
    };
  }
  const canvas = document.createElement('canvas');
  canvas.width = SIDE;
  canvas.height = SIDE;
  const ctx = canvas.getContext('2d');
  const track = canvas.captureStream(0).getVideoTracks()[0] as MediaStreamTrack & { requestFrame?: () => void };
  let n = 0;
  return {
    track,
    push() {
      if (ctx) {
        ctx.fillStyle = n++ % 2 ? '#000' : '#111';
        ctx.fillRect(0, 0, SIDE, SIDE);
      }
      track.requestFrame?.();
      return true;
    },
    stop: () => track.stop(),
  };
}

function posInt(v: number | undefined, dflt: number, name: string): number {
  if (v === undefined) return dflt;
  if (!Number.isFinite(v) || v <= 0) throw new RangeError(`RtpCarrier: ${name} must be > 0, got ${v}`);
  return v;
}

/**
 * One path's RTP carrier (see the module doc). Made by {@link attachRtpCarrier}.
 */
export class RtpCarrier implements DatagramCarrier {
  readonly counters: RtpCarrierCounters = { sent: 0, sendRefused: 0, queueDrops: 0, framesPushed: 0, framesNotPushed: 0, received: 0, renegotiations: 0, errors: 0 };
  /** Why the carrier stopped for good (worker error), if it did. */
  failure: string | undefined;
  private readonly events = new Emitter<{ message: (bytes: Uint8Array, ageUs?: number) => void }>({ onListenerError: () => this.counters.errors++ });
  private readonly worker: Worker;
  private readonly source: FrameSource;
  private transceiver: RTCRtpTransceiver | undefined;
  private readonly running = { send: false, recv: false };
  private queued = 0;
  private closed = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastPushMs = -Infinity;
  private readonly minIntervalMs: number;
  private readonly maxQueuedBytes: number;
  private readonly statsTimer: ReturnType<typeof setInterval>;
  private ceiling: number | undefined;
  private readonly statsWaiters: Array<(s: RtpCarrierWorkerStats & { queued: number; queuedBytes: number }) => void> = [];

  /**
   * @throws RangeError on a bad option; DOMException / TypeError when the
   *   browser refuses a step (use {@link attachRtpCarrier}, which never throws).
   */
  constructor(
    private readonly peer: CarrierPeer,
    private readonly pc: RTCPeerConnection,
    private readonly initiator: boolean,
    opts: RtpCarrierOptions = {},
  ) {
    this.maxQueuedBytes = posInt(opts.maxQueuedBytes, 262_144, 'maxQueuedBytes');
    this.minIntervalMs = 1000 / posInt(opts.maxFrameRate, 120, 'maxFrameRate');
    const cfg = {
      t: 'cfg',
      maxQueueBytes: this.maxQueuedBytes,
      maxQueueDatagrams: Math.floor(posInt(opts.maxQueuedDatagrams, 1024, 'maxQueuedDatagrams')),
      maxQueueDelayMs: posInt(opts.maxQueueDelayMs, 1000, 'maxQueueDelayMs'),
      maxDatagrams: Math.floor(posInt(opts.maxDatagramsPerFrame, 2, 'maxDatagramsPerFrame')),
      maxFrameBytes: posInt(opts.maxFrameBytes, 2600, 'maxFrameBytes'),
    };
    const statsMs = posInt(opts.statsIntervalMs, 1000, 'statsIntervalMs');
    this.worker = new Worker(new URL('./rtp-carrier-worker.js', import.meta.url), { type: 'module', name: 'mprtc-rtp-carrier' });
    this.worker.onmessage = (e: MessageEvent) => this.onWorkerMessage(e.data as Record<string, unknown>);
    this.worker.onerror = (e) => {
      this.counters.errors++;
      this.failure = `RTP carrier worker failed: ${(e as ErrorEvent).message || 'error'}`;
    };
    this.worker.postMessage(cfg);
    try {
      this.source = makeSource();
    } catch (e) {
      this.worker.terminate();
      throw e;
    }
    // Offers and answers made from now on carry no NACK / PLI / FIR for video.
    for (const k of ['createOffer', 'createAnswer'] as const) {
      const make = pc[k].bind(pc) as (o?: RTCOfferOptions) => Promise<RTCSessionDescriptionInit>;
      (pc as unknown as Record<string, unknown>)[k] = (o?: RTCOfferOptions) => make(o).then((d) => (d.sdp ? { type: d.type, sdp: withoutVideoRepair(d.sdp) } : d));
    }
    try {
      if (initiator) this.adopt(pc.addTransceiver(this.source.track, { direction: 'sendrecv' }));
      else {
        const made = pc.getTransceivers().find((t) => t.receiver.track?.kind === 'video' && !(t as { stopped?: boolean }).stopped);
        if (made) this.adopt(made);
        else pc.addEventListener('track', (e) => !this.transceiver && e.track.kind === 'video' && this.adoptSafely(e.transceiver));
      }
    } catch (e) {
      this.worker.terminate();
      this.source.stop();
      throw e;
    }
    pc.addEventListener('signalingstatechange', () => this.checkNegotiated());
    if (pc.signalingState === 'stable' && pc.currentRemoteDescription) this.checkNegotiated();
    peer.on('close', () => this.close());
    this.statsTimer = setInterval(() => this.pollStats(), statsMs);
  }

  /** True once negotiated `sendrecv`, both transforms run and ICE is connected; false after close(). */
  get open(): boolean {
    const ice = this.pc.iceConnectionState;
    return !this.closed && !this.failure && this.running.send && this.running.recv && this.transceiver?.currentDirection === 'sendrecv' && (ice === 'connected' || ice === 'completed');
  }

  /**
   * Queue one datagram (1..65535 bytes; copied). @returns false (counted in
   * `sendRefused`) when not open, the size is bad, or the queue bound would
   * be exceeded. Never throws.
   */
  send(bytes: Uint8Array): boolean {
    const n = bytes?.length;
    if (!this.open || !(n >= 1 && n <= MAX_CARRIED_DATAGRAM_BYTES) || this.queued + n > this.maxQueuedBytes) {
      this.counters.sendRefused++;
      return false;
    }
    const copy = bytes.slice().buffer;
    try {
      this.worker.postMessage({ t: 'send', d: copy }, [copy]);
    } catch {
      this.counters.errors++;
      this.counters.sendRefused++;
      return false;
    }
    this.queued += n;
    this.counters.sent++;
    if (this.timer === undefined) this.pump();
    return true;
  }

  /** Bytes accepted by send() that the worker has not yet put into a frame or dropped. */
  queuedBytes(): number {
    return this.queued;
  }

  /** Chromium's GCC estimate for the path (bps, `availableOutgoingBitrate`), polled every `statsIntervalMs`; undefined before the first value. */
  rateCeilingBps(): number | undefined {
    return this.ceiling;
  }

  /** A datagram arrived; `ageUs` = time since the worker saw its frame (µs, clamped to [0, 2 s]). */
  on(event: 'message', cb: (bytes: Uint8Array, ageUs?: number) => void): () => void {
    return this.events.on(event, cb);
  }

  /** The worker's counters (frames, bundles, drops, CPU µs); undefined after close or when it does not answer within 2 s. */
  workerStats(): Promise<(RtpCarrierWorkerStats & { queued: number; queuedBytes: number }) | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(undefined), 2000);
      this.statsWaiters.push((s) => {
        clearTimeout(t);
        resolve(s);
      });
      this.worker.postMessage({ t: 'stats' });
    });
  }

  /** Stop the track, the worker and the timers (idempotent); the transceiver stays negotiated but sends nothing. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.statsTimer);
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    try {
      this.source.stop();
    } catch {
      /* already stopped */
    }
    this.worker.terminate();
    this.queued = 0;
  }

  private adoptSafely(t: RTCRtpTransceiver): void {
    try {
      this.adopt(t);
    } catch (e) {
      this.counters.errors++;
      this.failure = `RTP carrier set-up failed: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  private adopt(t: RTCRtpTransceiver): void {
    this.transceiver = t;
    const caps = RTCRtpReceiver.getCapabilities('video');
    if (caps) t.setCodecPreferences(carrierCodecs(caps.codecs));
    if (t.direction !== 'sendrecv') t.direction = 'sendrecv';
    if (t.sender.track !== this.source.track) t.sender.replaceTrack(this.source.track).catch(() => this.counters.errors++);
    const Transform = (globalThis as unknown as { RTCRtpScriptTransform: ScriptTransformCtor }).RTCRtpScriptTransform;
    (t.sender as unknown as Transformable).transform = new Transform(this.worker, { side: 'send' });
    (t.receiver as unknown as Transformable).transform = new Transform(this.worker, { side: 'recv' });
  }

  /**
   * After a negotiation: renegotiate (at most twice) when the initiator's
   * transceiver missed the offer (no mid) or the answerer's answer went out
   * before it was `sendrecv`.
   */
  private checkNegotiated(): void {
    const t = this.transceiver;
    if (this.closed || !t || this.pc.signalingState !== 'stable' || this.counters.renegotiations >= MAX_RENEGOTIATIONS || this.peer.destroyed) return;
    const missed = this.initiator ? t.mid === null : t.currentDirection === 'recvonly' || t.currentDirection === 'inactive';
    if (!missed) return;
    this.counters.renegotiations++;
    try {
      this.peer.negotiate();
    } catch {
      this.counters.errors++;
    }
  }

  /**
   * Push a frame now if the queue holds data and the last push is `minIntervalMs` old; re-arm while data is
   * queued and the carrier is open (a closed ICE transport or a dead worker would never take it: the next
   * accepted send() re-arms it; the worker drops what waits longer than `maxQueueDelayMs`).
   */
  private pump = (): void => {
    this.timer = undefined;
    if (this.queued <= 0 || !this.open) return;
    const wait = this.lastPushMs + this.minIntervalMs - performance.now();
    if (wait <= 0) {
      this.lastPushMs = performance.now();
      if (this.source.push()) this.counters.framesPushed++;
      else this.counters.framesNotPushed++;
    }
    this.timer = setTimeout(this.pump, Math.max(1, wait > 0 ? wait : this.minIntervalMs));
  };

  private onWorkerMessage(m: Record<string, unknown>): void {
    switch (m.t) {
      case 'in': {
        const list = m.d as ArrayBuffer[];
        const age = Math.round((performance.timeOrigin + performance.now() - (m.at as number)) * 1000);
        const ageUs = Math.min(Math.max(age, 0), MAX_ARRIVAL_AGE_US);
        for (const d of list) {
          this.counters.received++;
          if (!this.closed) this.events.emit('message', new Uint8Array(d), ageUs);
        }
        break;
      }
      case 'out':
        this.queued = Math.max(0, this.queued - (m.n as number));
        break;
      case 'drop':
        this.queued = Math.max(0, this.queued - (m.n as number));
        this.counters.queueDrops += m.k as number;
        break;
      case 'run':
        this.running[m.side === 'send' ? 'send' : 'recv'] = true;
        break;
      case 'stats':
        for (const w of this.statsWaiters.splice(0)) w(m.s as RtpCarrierWorkerStats & { queued: number; queuedBytes: number });
        break;
    }
  }

  private pollStats(): void {
    if (this.closed) return;
    this.pc.getStats().then(
      (report) => {
        this.ceiling = selectedPairFromStats(report.values() as Iterable<StatsEntry>)?.availableOutgoingBps;
      },
      () => this.counters.errors++,
    );
  }
}

/**
 * Set up the RTP carrier on a simple-peer instance's RTCPeerConnection (see
 * the module doc), with the path's `initiator` and `rtpCarrier` options
 * (`true`: the defaults). Never throws.
 * @returns the carrier, or why there is none (unsupported browser, closed
 *   peer, a step the browser refused, a bad option).
 */
export function attachRtpCarrier(peer: CarrierPeer, pathOptions: { initiator: boolean; rtpCarrier?: RtpCarrierOptions | boolean }): RtpCarrier | string {
  const options = pathOptions.rtpCarrier;
  const why = rtpCarrierUnsupported();
  if (why) return why;
  const pc = peer._pc;
  if (!pc || peer.destroyed) return 'the path is closed';
  try {
    return new RtpCarrier(peer, pc, pathOptions.initiator, typeof options === 'object' ? options : {});
  } catch (e) {
    return `RTP carrier set-up failed: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/**
 * {@link attachRtpCarrier} for a {@link SimplePeerPath} (what its option
 * `rtpCarrier` runs once this chunk has loaded): sets `path.rtpCarrier` to
 * the carrier or to why there is none. Never throws.
 */
export function carrierForPath(path: SimplePeerPath, pathOptions: { initiator: boolean; rtpCarrier?: RtpCarrierOptions | boolean }): void {
  const c = attachRtpCarrier((path as unknown as { peer: CarrierPeer }).peer, pathOptions);
  path.rtpCarrier = c;
  // The carrier's datagrams reach the path's listeners as the datachannel's do (same `ageUs` meaning).
  if (typeof c === 'object') c.on('message', (bytes, ageUs) => (path as unknown as { events: Emitter<PathTransportEvents> }).events.emit('message', bytes, ageUs));
}
