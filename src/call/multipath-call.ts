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
import type { CodecName, PathId } from '../core/types.js';
import { CameraEncoder, FrameDecoder } from '../codec/webcodecs.js';
import type { CameraEncoderStats } from '../codec/webcodecs.js';
import type { DegradationPreference } from '../adapt/ladder.js';
import { Endpoint } from '../engine/endpoint.js';
import { ReceiverEngine } from '../engine/receiver.js';
import type { PlayoutOptions } from '../feedback/playout.js';
import { SenderEngine, type SenderEngineConfig } from '../engine/sender.js';
import type { ReceiverStats, SenderStats } from '../engine/types.js';
import type { FecPolicyName } from '../fec/types.js';
import type { PathEvent } from '../sched/path-manager.js';
import type { SchedulerName } from '../sched/types.js';
import { SignallingClient } from '../signalling/client.js';
import { PathCandidatePolicy } from '../transport/candidates.js';
import type { ParsedCandidate } from '../transport/candidates.js';
import { probeLocalCandidates } from '../transport/probe.js';
import { findSharedPairs } from '../transport/path-set.js';
import { SimplePeerPath } from '../transport/simple-peer-path.js';
import { PathSupervisor } from '../transport/path-supervisor.js';
import type { PathLifecycleState, PathStateReason, PathStatus } from '../transport/path-supervisor.js';
import type { PathTransportState, SelectedPair } from '../transport/types.js';

/** Events of a call (register before connect()). */
export enum CallEvent {
  Connected = 'connected',
  PeerLeft = 'peer-left',
  PathState = 'path-state',
  PathEvent = 'path-event',
  SamePair = 'same-pair',
  RemoteTrack = 'remote-track',
  RemoteFrame = 'remote-frame',
  Error = 'error',
  Closed = 'closed',
}

export interface CallEventMap {
  [CallEvent.Connected]: (info: { peerId: string; remotePeerId: string }) => void;
  [CallEvent.PeerLeft]: (peerId: string) => void;
  /**
   * A path's state changed: `connecting` (first attempt or a restart),
   * `connected`, `retrying` (down; a restart follows after the backoff) or
   * `closed`; `status.reason` says why (src/transport/path-supervisor.ts
   * `PathStateReason`), `status.attempt` counts restarts since it was last up.
   */
  [CallEvent.PathState]: (pathId: PathId, state: PathLifecycleState, status: PathStatus) => void;
  [CallEvent.PathEvent]: (event: PathEvent) => void;
  [CallEvent.SamePair]: (pathIds: PathId[]) => void;
  [CallEvent.RemoteTrack]: (track: MediaStreamTrack) => void;
  [CallEvent.RemoteFrame]: (info: { streamId: number; frameId: number; captureUs: number }) => void;
  [CallEvent.Error]: (err: Error) => void;
  [CallEvent.Closed]: () => void;
}

export interface MultipathCallOptions {
  /** ws:// or wss:// URL of the signalling server. */
  signallingUrl: string;
  room: string;
  peerId?: string;
  // --- signalling auth (issue 11, H3): the token is only passed through to the join ---
  /** Room credential sent with the join (e.g. from the app server's `signRoomToken`); required when the server runs with `authorize`. */
  token?: string;
  // --- end signalling auth ---
  /** Number of paths (default 2, at most 8). */
  paths?: number;
  codec?: CodecName;
  scheduler?: SchedulerName;
  /** With scheduler 'single': the path to use. */
  singlePath?: PathId;
  fec?: FecPolicyName;
  /** Force a key frame at least this often (ms); default: only on request (PLI, new path). */
  keyframeIntervalMs?: number;
  /** Act on the receiver's QoE feedback (Converge §4.2, default true). */
  qoeFeedback?: boolean;
  /** App cap on the video bitrate (bps, default 6 Mbps). */
  maxBitrateBps?: number;
  startBitrateBps?: number;
  mtuBytes?: number;
  /**
   * Fault handling of the sender (issue 11; SenderEngineConfig): path
   * demotion with hysteresis, fast failover, rate restore after a total
   * outage. Default: the engine's (all on, restore 'total').
   */
  faultHandling?: Pick<SenderEngineConfig, 'pathHysteresis' | 'fastFailover' | 'outageRestore'>;
  /** ICE servers for all paths, or per path. */
  iceServers?: RTCIceServer[] | ((pathId: PathId) => RTCIceServer[]);
  /** App-given filter of local candidates per path; overrides `candidates`. */
  candidateFilter?: (candidate: ParsedCandidate, pathId: PathId) => boolean;
  /**
   * How paths are pinned to local candidates when no filter is given:
   * 'by-network' (default) gathers the local candidates once, groups them by
   * network (Chrome's network-id, else interface address) and signals group
   * i mod n on path i; 'all' signals every candidate on every path (e.g. when
   * per-path ICE servers or a relay make the paths differ).
   */
  candidates?: 'by-network' | 'all';
  /**
   * A path not connected this long after its start or restart (ms, default
   * 10000) is restarted: a new RTCPeerConnection for that path (new ICE
   * session), after a backoff of 1 s doubling to at most 30 s, for as long as
   * the call runs. See {@link CallEvent.PathState}.
   */
  connectTimeoutMs?: number;
  /** Restart backoff (ms): first delay and cap (default 1000 and 30000). */
  restartBackoffMs?: { base: number; max: number };
  /** Clock (default performance-based µs). Use an epoch-based clock to compare capture and decode times across pages. */
  clock?: Clock;
  // --- Resolution / frame-rate adaptation (src/adapt; issue 10 item 1) ---
  /**
   * What the sent video gives up when the bitrate or the encoder cannot keep
   * up (W3C `RTCRtpSendParameters.degradationPreference`):
   * 'maintain-framerate' (default, as Chromium's WebRTC for camera video:
   * lower the resolution), 'balanced' (frame rate first, then resolution),
   * 'maintain-resolution', or 'maintain-framerate-and-resolution' (no
   * adaptation). An unknown value makes `sendTrack` throw a RangeError.
   */
  degradationPreference?: DegradationPreference;
  /**
   * Receiver playout timing (src/feedback/playout.ts, after libwebrtc
   * VCMTiming): frames are decoded at their expected arrival plus a delay that
   * follows the measured frame jitter (default 0-400 ms), so delay variations
   * shorter than it cost latency instead of a freeze. `{ maxDelayMs: 0 }`
   * decodes every frame as soon as it is decodable. Bad values make the
   * constructor throw a RangeError.
   */
  playout?: PlayoutOptions;
  /**
   * Temporal layers of the sent video (1..3; default 1 = none,
   * DEFAULT_TEMPORAL_LAYERS of src/codec/temporal-layers.ts): 2 / 3 ask for
   * scalabilityMode L1T2 / L1T3 where the browser's encoder supports it
   * (Debian's Chromium: H.264, VP8, VP9 and AV1 all do), else none. A lost
   * upper-layer frame then costs the receiver no key frame, and Converge
   * sends the base layer on the best path (ConvergeConfig.baseLayerFastPath).
   * Trade-off measured in the simulator: less freeze on cellular pairs, less
   * goodput on stable ones (README "Temporal layers").
   * `getStats().encoder.temporalLayers` says what is in use.
   */
  temporalLayers?: number;
}

export interface CallPathInfo {
  id: PathId;
  /** The path's state as {@link CallEvent.PathState} reports it. */
  state: PathLifecycleState;
  /** Why it is in that state. */
  stateReason: PathStateReason;
  /** The current RTCPeerConnection's own transport state. */
  transportState: PathTransportState | undefined;
  /** Milliseconds from the path's start to its first connection (undefined until connected). */
  connectMs: number | undefined;
  /** Restarts of this path (new RTCPeerConnection, new ICE session) over the call. */
  iceRestarts: number;
  /** Restart attempts since the path was last connected. */
  attempt: number;
  selectedPair?: SelectedPair;
  bufferedAmount: number;
}

/** What getStats() returns: sender (if sending), receiver, codec and path info. */
export interface CallStats {
  timestampUs: number;
  sender?: SenderStats;
  encoder?: CameraEncoderStats;
  receiver: ReceiverStats;
  decoder: { decoded: number; errors: number; queue: number };
  paths: CallPathInfo[];
  /** Groups of paths that ended on the same candidate pair. */
  samePair: PathId[][];
  /** How local candidates were split over the paths. */
  candidatePolicy: string;
  malformed: Record<string, number>;
  estimators?: ReturnType<SenderEngine['estimatorStats']>;
}

/** Error with a stable code. */
export class CallError extends Error {
  constructor(
    readonly code: 'already-connected' | 'not-connected' | 'bad-options' | 'closed',
    message: string,
  ) {
    super(message);
    this.name = 'CallError';
  }
  static badOptions(msg: string): CallError {
    return new CallError('bad-options', msg);
  }
}

export class MultipathCall {
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
  private sender: SenderEngine | undefined;
  private endpoint: Endpoint;
  private encoder: CameraEncoder | undefined;
  private readonly decoder: FrameDecoder;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private supervisor: PathSupervisor | undefined;
  private closed = false;
  private lastSamePairKey = '';
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
    this.endpoint = new Endpoint(this.receiver);
    this.decoder = new FrameDecoder({
      onDecoded: (info) => {
        this.receiver.onFrameDecoded(info.streamId, info.frameId, info.captureUs, info.bytes);
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
    if (this.remotePeerId && this.remotePeerId.length > 0) this.emit(CallEvent.Connected, { peerId: this.myPeerId ?? '', remotePeerId: this.remotePeerId });
    this.schedule();
  }

  private startPaths(remote: string): void {
    if (this.remotePeerId === remote && this.transports.size > 0) return;
    this.stopPaths();
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
    if (this.myPeerId) this.emit(CallEvent.Connected, { peerId: this.myPeerId, remotePeerId: remote });
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
    const groups = findSharedPairs(
      [...this.selectedPairs].map(([pathId, pair]) => ({ pathId, pair })),
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
    this.endpoint = new Endpoint(this.receiver, sender);
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
      degradationPreference: this.opts.degradationPreference, // src/adapt (issue 10 item 1)
      temporalLayers: this.opts.temporalLayers,
      // Frame dropping before encoding when every usable path's queue (pacer +
      // datachannel bufferedAmount) exceeds the frame budget (issue 10 item 2).
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
    const samePair = findSharedPairs([...this.selectedPairs].map(([pathId, pair]) => ({ pathId, pair })));
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
