/**
 * The browser façade: one multipath video call with one remote peer.
 *
 * It joins a signalling room, opens one RTCPeerConnection per path (each with
 * one unordered, maxRetransmits 0 datachannel, pinned to its own group of ICE
 * candidates), sends a camera track through WebCodecs and the multipath sender
 * engine, and receives, decodes and renders the remote stream.
 *
 * ```ts
 * const call = new MultipathCall({ signallingUrl: 'ws://host:8080', room: 'demo' });
 * call.on(CallEvent.RemoteTrack, (track) => (video.srcObject = new MediaStream([track])));
 * await call.connect();
 * await call.sendTrack((await navigator.mediaDevices.getUserMedia({ video: true })).getVideoTracks()[0]);
 * console.log(call.getStats());
 * ```
 */
import { monotonicClock } from '../core/clock.js';
import type { Clock } from '../core/clock.js';
import { Emitter } from '../core/emitter.js';
import type { PathId } from '../core/types.js';
import { CameraEncoder, FrameDecoder, callCapabilities, isCallSupported } from '../codec/webcodecs.js';
import type { CallCapabilities } from '../codec/webcodecs.js';
import { AppDataChannel, AppDataError } from '../engine/app-data.js';
import { Endpoint } from '../engine/endpoint.js';
import { ReceiverEngine } from '../engine/receiver.js';
import { SenderEngine } from '../engine/sender.js';
import { SignallingClient } from '../signalling/client.js';
import { PathCandidatePolicy } from '../transport/candidates.js';
import type { ParsedCandidate } from '../transport/candidates.js';
import { probeLocalCandidates } from '../transport/probe.js';
import { findSharedPairs } from '../transport/path-set.js';
import { SimplePeerPath } from '../transport/simple-peer-path.js';
import { PathSupervisor } from '../transport/path-supervisor.js';
import type { SelectedPair } from '../transport/types.js';
import { CallError, CallEvent, type CallEventMap, type CallStats, type MultipathCallOptions, type SendDataOptions } from './types.js';

export { CallError, CallEvent } from './types.js';
export type { CallEventMap, CallPathInfo, CallStats, MultipathCallOptions, SendDataOptions } from './types.js';
export type { CallCapabilities } from '../codec/webcodecs.js';

export class MultipathCall {
  /**
   * Whether this browser has every API a call needs (WebCodecs encoder and
   * decoder, a way to capture camera frames and to render remote ones,
   * RTCDataChannel). Synchronous; {@link MultipathCall.capabilities} also asks the codecs.
   */
  static isSupported(): boolean {
    return isCallSupported();
  }

  /**
   * What works in this browser: codecs that encode / decode, the capture mode
   * ('track-processor' | 'video-frame-callback' | 'video-timer'), the render
   * mode ('track-generator' | 'canvas-capture'), RTCDataChannel, and what is
   * missing by name. Never rejects. See src/codec/capabilities.ts.
   */
  static capabilities(): Promise<CallCapabilities> {
    return callCapabilities();
  }

  private readonly opts: MultipathCallOptions;
  private readonly clock: Clock;
  private readonly numPaths: number;
  /** Exceptions thrown by handlers are reported as 'error' (those of 'error' handlers are dropped). */
  private readonly events = new Emitter<CallEventMap>({
    onListenerError: (e, event) => {
      if (event !== CallEvent.Error) this.emit(CallEvent.Error, e instanceof Error ? e : new Error(String(e)));
    },
  });
  private signalling: SignallingClient | undefined;
  private remotePeerId: string | undefined;
  private myPeerId: string | undefined;
  private readonly transports = new Map<PathId, SimplePeerPath>();
  private readonly selectedPairs = new Map<PathId, SelectedPair>();
  private readonly receiver: ReceiverEngine;
  private readonly appData: AppDataChannel;
  private sender: SenderEngine | undefined;
  private endpoint: Endpoint;
  private encoder: CameraEncoder | undefined;
  private readonly decoder: FrameDecoder;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private supervisor: PathSupervisor | undefined;
  private closed = false;
  private lastSamePairKey = '';
  /** RemoteTrack was emitted (once per call: the decoder renders into one track). */
  private remoteTrackEmitted = false;
  /** Remote peer the last Connected event named. */
  private connectedTo: string | undefined;
  private candidatePolicy: PathCandidatePolicy = PathCandidatePolicy.all();

  constructor(options: MultipathCallOptions) {
    if (!options || typeof options.signallingUrl !== 'string' || typeof options.room !== 'string') {
      throw CallError.badOptions('signallingUrl and room are required');
    }
    const n = options.paths ?? 2;
    if (!Number.isInteger(n) || n < 1 || n > 8) throw CallError.badOptions(`paths must be 1..8, got ${n}`);
    this.opts = options;
    this.numPaths = n;
    this.clock = options.clock ?? monotonicClock;
    this.receiver = new ReceiverEngine({ clock: this.clock, ...(options.playout ? { playout: options.playout } : {}) });
    this.appData = new AppDataChannel({
      clock: this.clock,
      transmit: (id, bytes) => this.transports.get(id)?.send(bytes) ?? false,
      deliver: (data, info) => this.emit(CallEvent.Data, data, info),
      onAbandon: (seq, bytes) =>
        this.emit(CallEvent.Error, new CallError('data-lost', `reliable app data message ${seq} (${bytes} bytes) unacknowledged after every retransmission: delivery unconfirmed`)),
    });
    this.endpoint = new Endpoint(this.receiver, undefined, this.appData);
    this.decoder = new FrameDecoder({
      onDecoded: (info) => {
        this.receiver.onFrameDecoded(info.streamId, info.frameId, info.captureUs, info.bytes);
        // The remote video exists from its first decoded frame on.
        const track = this.decoder.track;
        if (track && !this.remoteTrackEmitted) {
          this.remoteTrackEmitted = true;
          this.emit(CallEvent.RemoteTrack, track);
        }
        this.emit(CallEvent.RemoteFrame, info);
      },
      onNeedKeyframe: (reason) => this.receiver.requestKeyframe(reason),
      onError: (e) => this.emit(CallEvent.Error, new Error(`decoder: ${e.message}`)),
    });
    this.receiver.on('streamInfo', (info) => this.decoder.configure(info.codec));
    this.receiver.on('frame', (f) => this.decoder.decode(f));
  }

  /**
   * Register an event handler; returns a function that removes it.
   * Exceptions thrown by handlers are caught and reported as 'error'.
   */
  on<K extends CallEvent>(event: K, handler: CallEventMap[K]): () => void {
    return this.events.on(event, handler);
  }

  off<K extends CallEvent>(event: K, handler: CallEventMap[K]): void {
    this.events.off(event, handler);
  }

  private emit<K extends CallEvent>(event: K, ...args: Parameters<CallEventMap[K]>): void {
    this.events.emit(event, ...args);
  }

  /** The rendered remote video (MediaStreamTrackGenerator), when the browser has one. */
  get remoteTrack(): MediaStreamTrack | undefined {
    return this.decoder.track;
  }

  /**
   * Join the room; paths open when the remote peer is there.
   * @throws CallError 'already-connected' | 'closed'
   */
  async connect(): Promise<void> {
    if (this.closed) throw new CallError('closed', 'call is closed');
    if (this.signalling) throw new CallError('already-connected', 'connect() called twice');
    const sig = new SignallingClient();
    this.signalling = sig;
    sig.on('joined', ({ peerId, peers }) => {
      this.myPeerId = peerId;
      const other = peers.find((p) => p !== peerId);
      if (other) this.startPaths(other);
    });
    sig.on('peer-joined', ({ peerId }) => {
      if (!this.remotePeerId) this.startPaths(peerId);
    });
    sig.on('peer-left', ({ peerId }) => {
      if (peerId !== this.remotePeerId) return;
      this.emit(CallEvent.PeerLeft, peerId);
      this.stopPaths();
    });
    sig.on('signal', ({ from, pathId, data }) => {
      if (from !== this.remotePeerId) {
        if (!this.remotePeerId) this.startPaths(from);
        else return;
      }
      // Signals carry the path generation (0 when absent): a newer one restarts our side, an older one is stale.
      const gen = data && typeof data === 'object' && typeof (data as { gen?: unknown }).gen === 'number' ? (data as { gen: number }).gen : 0;
      if (!this.supervisor?.acceptRemoteGeneration(pathId, gen)) return;
      this.transports.get(pathId)?.signal(data);
    });
    sig.on('error', (e) => this.emit(CallEvent.Error, new Error(`signalling: ${e.code}: ${e.message}`)));
    if (!this.opts.candidateFilter && (this.opts.candidates ?? 'by-network') === 'by-network') {
      try {
        const iceServers = typeof this.opts.iceServers === 'function' ? this.opts.iceServers(0) : this.opts.iceServers;
        this.candidatePolicy = PathCandidatePolicy.byNetwork(await probeLocalCandidates({ iceServers }));
      } catch (e) {
        this.emit(CallEvent.Error, new Error(`candidate probe failed, every path uses every candidate: ${(e as Error).message}`));
      }
    }
    await sig.connect(this.opts.signallingUrl, this.opts.room, this.opts.peerId, this.opts.token !== undefined ? { token: this.opts.token } : {});
    this.schedule();
  }

  private startPaths(remote: string): void {
    if (this.remotePeerId === remote && this.transports.size > 0) return;
    this.stopPaths();
    this.appData.reset(); // a new remote peer: both directions' app data sequences start over
    this.remotePeerId = remote;
    const initiator = (this.myPeerId ?? '') < remote;
    const supervisor = new PathSupervisor({
      initiator,
      connectTimeoutMs: this.opts.connectTimeoutMs,
      backoffBaseMs: this.opts.restartBackoffMs?.base,
      backoffMaxMs: this.opts.restartBackoffMs?.max,
      // One generation of a path: its own RTCPeerConnection; its signals carry the generation.
      create: (id, gen) => {
        const iceServers = typeof this.opts.iceServers === 'function' ? this.opts.iceServers(id) : this.opts.iceServers;
        const t = new SimplePeerPath({
          pathId: id,
          initiator,
          iceServers,
          candidateFilter: this.opts.candidateFilter ?? ((c: ParsedCandidate, pathId: PathId) => this.candidatePolicy.allows(c, pathId)),
          onSignal: (data: Record<string, unknown>) => this.signalling?.sendSignal(remote, id, { ...data, gen }),
        });
        this.transports.set(id, t);
        this.selectedPairs.delete(id);
        t.on('message', (bytes: Uint8Array) => {
          if (this.transports.get(id) === t) this.endpoint.onDatagram(id, bytes);
        });
        return t;
      },
      onStatus: (st) => {
        if (st.state === 'closed' && this.supervisor !== supervisor) return;
        this.emit(CallEvent.PathState, st.pathId, st.state, st);
        this.appData.setPathUp(st.pathId, st.state === 'connected');
        this.sender?.setPathState(st.pathId, st.state === 'connected' ? 'connected' : st.state === 'closed' ? 'closed' : st.state === 'retrying' ? 'failed' : 'connecting');
        if (st.state === 'connected') void this.refreshPair(st.pathId);
      },
    });
    this.supervisor = supervisor;
    for (let id = 0; id < this.numPaths; id++) {
      const sink = this.pathSink(id);
      this.receiver.addPath(id, sink);
      this.sender?.addPath(id, sink, 'connecting');
      supervisor.start(id);
    }
    // Once per remote peer: the room's join reply and a later signal name the same peer.
    if (this.myPeerId && this.connectedTo !== remote) {
      this.connectedTo = remote;
      this.emit(CallEvent.Connected, { peerId: this.myPeerId, remotePeerId: remote });
    }
  }

  /** The engines' view of a path: whatever transport generation is current. */
  private pathSink(id: PathId): { send(b: Uint8Array): boolean; bufferedAmount(): number } {
    return {
      send: (b: Uint8Array) => this.transports.get(id)?.send(b) ?? false,
      bufferedAmount: () => this.transports.get(id)?.bufferedAmount() ?? 0,
    };
  }

  private stopPaths(): void {
    const sup = this.supervisor;
    this.supervisor = undefined;
    sup?.close();
    for (const [id, t] of this.transports) {
      t.close();
      this.sender?.removePath(id);
      this.receiver.removePath(id);
      this.appData.removePath(id);
    }
    this.transports.clear();
    this.selectedPairs.clear();
    this.remotePeerId = undefined;
  }

  private async refreshPair(id: PathId): Promise<void> {
    const t = this.transports.get(id);
    if (!t) return;
    try {
      const pair = await t.selectedPair();
      if (pair) this.selectedPairs.set(id, pair);
    } catch {
      /* stats are best effort */
    }
    // Same route (local and remote address), not the same socket pair: each RTCPeerConnection has its own ports.
    const groups = findSharedPairs(
      [...this.selectedPairs].map(([pathId, pair]) => ({ pathId, pair })),
      { ignorePorts: true },
    );
    const key = JSON.stringify(groups);
    if (groups.length > 0 && key !== this.lastSamePairKey) {
      this.lastSamePairKey = key;
      for (const g of groups) this.emit(CallEvent.SamePair, g);
    }
  }

  /**
   * Send a camera track (WebCodecs encoder -> multipath sender engine).
   * @throws CodecError when the codec cannot be used; CallError 'closed'.
   */
  async sendTrack(track: MediaStreamTrack): Promise<void> {
    if (this.closed) throw new CallError('closed', 'call is closed');
    if (this.encoder) this.encoder.stop();
    const sender = new SenderEngine({
      clock: this.clock,
      scheduler: this.opts.scheduler ?? 'converge',
      singlePath: this.opts.singlePath,
      fec: this.opts.fec ?? 'path',
      qoeFeedback: this.opts.qoeFeedback,
      mtuBytes: this.opts.mtuBytes,
      maxBitrateBps: this.opts.maxBitrateBps ?? 6_000_000,
      startBitrateBps: this.opts.startBitrateBps,
      ...this.opts.faultHandling,
    });
    this.sender = sender;
    this.endpoint = new Endpoint(this.receiver, sender, this.appData);
    for (const [id, t] of this.transports) {
      sender.addPath(id, this.pathSink(id), t.state === 'connected' ? 'connected' : 'connecting');
    }
    const encoder = new CameraEncoder(track, {
      codec: this.opts.codec ?? 'h264',
      clock: this.clock,
      bitrateBps: sender.targetBitrateBps(),
      // Encode nothing until a path can carry it: frames sent nowhere would only be lost.
      shouldEncode: () => sender.hasUpPath(),
      keyframeIntervalMs: this.opts.keyframeIntervalMs,
      degradationPreference: this.opts.degradationPreference,
      temporalLayers: this.opts.temporalLayers,
      // Frame dropping before encoding when every usable path's queue (pacer +
      // datachannel bufferedAmount) exceeds the frame budget.
      dropBeforeEncode: (keyFrame, layer) => sender.shouldDropFrame(keyFrame, layer),
      onFrame: (f) => {
        sender.sendFrame(f);
      },
      onError: (e) => this.emit(CallEvent.Error, e),
    });
    this.encoder = encoder;
    sender.on('keyframeNeeded', () => encoder.requestKeyframe());
    sender.on('targetBitrate', (bps) => encoder.setBitrate(bps));
    sender.on('pathEvent', (ev) => this.emit(CallEvent.PathEvent, ev));
    await encoder.start();
    const st = encoder.settings;
    sender.setStreamInfo({ codec: encoder.codecString, width: st.width, height: st.height, fps: st.fps });
  }

  /**
   * Stop sending video and keep the call: the camera encoder stops (frames it
   * still holds are discarded), while the paths, the sender's retransmission
   * history and its FEC stay up, so frames already sent can still be repaired.
   * `getStats().sender` keeps counting. Idempotent; a later `sendTrack` starts
   * a new stream.
   */
  stopSending(): void {
    this.encoder?.stop();
  }

  /**
   * Send app data to the remote peer on the call's paths (not through the
   * media pacer). A string arrives as a string, bytes as a Uint8Array (copied
   * at the call), in {@link CallEvent.Data} on the other side.
   *
   * Reliable (default): exactly once and in order; acknowledged by the
   * receiver and retransmitted after an RTO (RFC 6298) on the best path up,
   * so it survives loss and a path going down; sent once a path is up if
   * none is yet. After 12 unacknowledged transmissions the call gives up on
   * the message and emits {@link CallEvent.Error} with a CallError
   * 'data-lost'. Unreliable: sent once now on the lowest-RTT path up.
   *
   * Limits: 16384 bytes per message (MAX_APP_DATA_BYTES, after UTF-8
   * encoding); 256 KiB / 1024 reliable messages awaiting an ack.
   *
   * @returns the message's sequence number (reliable and unreliable count separately).
   * @throws CallError 'closed' (after close()); 'not-connected' (before a
   *   remote peer is in the call, or unreliable with no path up);
   *   'data-too-large' (above 16384 bytes); 'data-window-full' (too much
   *   reliable data awaiting an ack: retry after a Data round trip);
   *   'bad-data' (neither a Uint8Array nor a string).
   */
  send(data: Uint8Array | string, options: SendDataOptions = {}): number {
    if (this.closed) throw new CallError('closed', 'call is closed');
    if (!this.supervisor || !this.remotePeerId) throw new CallError('not-connected', 'send: no remote peer in the call yet (wait for CallEvent.Connected)');
    try {
      return this.appData.send(data, options.reliable ?? true);
    } catch (e) {
      if (!(e instanceof AppDataError)) throw e;
      const code = e.code === 'too-large' ? 'data-too-large' : e.code === 'window-full' ? 'data-window-full' : e.code === 'no-path' ? 'not-connected' : 'bad-data';
      throw new CallError(code, `send: ${e.message}`);
    }
  }

  private schedule(): void {
    if (this.closed) return;
    const now = this.clock.nowUs();
    const delayMs = Math.max(1, Math.min(20, (this.endpoint.nextWakeUs() - now) / 1000));
    this.timer = setTimeout(() => {
      try {
        this.endpoint.tick();
      } catch (e) {
        this.emit(CallEvent.Error, e instanceof Error ? e : new Error(String(e)));
      }
      this.schedule();
    }, delayMs);
  }

  /** A snapshot of every statistic the call keeps. */
  getStats(): CallStats {
    const samePair = findSharedPairs(
      [...this.selectedPairs].map(([pathId, pair]) => ({ pathId, pair })),
      { ignorePorts: true },
    );
    return {
      timestampUs: this.clock.nowUs(),
      sender: this.sender?.stats(),
      encoder: this.encoder?.stats(),
      receiver: this.receiver.stats(),
      decoder: this.decoder.stats(),
      paths: (this.supervisor?.statuses() ?? []).map((st) => {
        const t = this.transports.get(st.pathId);
        return {
          id: st.pathId,
          state: st.state,
          stateReason: st.reason,
          transportState: t?.state,
          connectMs: st.connectMs,
          iceRestarts: st.restarts,
          attempt: st.attempt,
          selectedPair: this.selectedPairs.get(st.pathId),
          bufferedAmount: t?.bufferedAmount() ?? 0,
        };
      }),
      samePair,
      candidatePolicy: this.opts.candidateFilter ? 'app filter' : this.candidatePolicy.describe(this.numPaths),
      malformed: { ...this.endpoint.malformed } as Record<string, number>,
      estimators: this.sender?.estimatorStats(),
      appData: this.appData.stats(),
    };
  }

  /** Camera settings of the sent track, once sending. */
  get camera(): { width: number; height: number; fps: number } | undefined {
    return this.encoder?.settings;
  }

  /** Stop everything; idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.encoder?.stop();
    this.decoder.close();
    this.stopPaths();
    this.signalling?.close();
    this.emit(CallEvent.Closed);
  }
}
