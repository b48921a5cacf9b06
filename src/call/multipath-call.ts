/**
 * The browser façade: one participant of a multipath video call with up to
 * {@link MAX_PARTICIPANTS} others (a full mesh).
 *
 * It joins a signalling room and, for every other participant there, opens a
 * {@link PeerSession}: its own paths (one RTCPeerConnection per path, each
 * with one unordered, maxRetransmits 0 datachannel, pinned to its own group
 * of ICE candidates), its own sender and receiver engines and stats. It sends
 * one camera track through one WebCodecs encoder whose frames go to every
 * session's sender, and receives, decodes and renders each remote
 * participant's stream into its own track.
 *
 * One shared encoder at the lowest target: the encoder's bitrate is the
 * lowest of the sessions' targets (each from its own paths' congestion
 * controllers), so no session gets more than its paths carry; sessions with
 * better paths get the same video as the worst one. That is the simplest
 * correct choice: one encode per camera frame whatever the room size, and a
 * key frame a new participant needs is one key frame for all. One encoding
 * per receiver would give each its own rate, at N-1 encodes per camera
 * frame (encoder CPU grows with the room; software H.264/VP8 at 640x480 is
 * the largest CPU cost of a call) and a separate key frame stream each;
 * simulcast layers would be the middle way. A joining participant pulls the shared rate down to its
 * sender's start rate until its paths ramp up.
 *
 * ```ts
 * const call = new MultipathCall({ signallingUrl: 'ws://host:8080', room: 'demo' });
 * call.on(CallEvent.RemoteTrack, (track, { participantId }) => show(participantId, new MediaStream([track])));
 * call.on(CallEvent.ParticipantLeft, (participantId) => hide(participantId));
 * await call.connect();
 * await call.sendTrack((await navigator.mediaDevices.getUserMedia({ video: true })).getVideoTracks()[0]);
 * for (const r of call.getStats().ofType('inbound-rtp')) console.log(r.participantId, r.kind, r.framesPerSecond, r.freezeCount);
 * ```
 */
import { AudioSend } from '../audio/call-audio.js';
import { estimatorNames, isEstimatorName } from '../cc/registry.js';
import { fecPolicyNames, isFecPolicyName } from '../fec/factory.js';
import { isSchedulerName, schedulerNames } from '../sched/factory.js';
import { monotonicClock } from '../core/clock.js';
import type { Clock } from '../core/clock.js';
import { Emitter } from '../core/emitter.js';
import type { PathId } from '../core/types.js';
import { apiCheck } from '../codec/capabilities.js';
import { isCallSupported } from '../codec/webcodecs.js';
import type { CallCapabilities } from '../codec/webcodecs.js';
import { ReceiverEngine } from '../engine/receiver.js';
import { SenderEngine } from '../engine/sender.js';
import type { WebSocketCtor } from '../signalling/client.js';
import { PathCandidatePolicy } from '../transport/candidates.js';
import { probeLocalCandidates } from '../transport/probe.js';
import { type CreatePath, DecoderSlot, PeerSession, type PeerSessionHost, simplePeerPaths } from './peer-session.js';
import { SharedVideoEncoder } from './shared-encoder.js';
import { resolveReconnectPolicy } from './reconnect.js';
import { sendToEach } from './app-send.js';
import { CallSignalling, rosterHandlers } from './call-signalling.js';
import { buildStatsReport } from './stats.js';
import { type ResolvedRelaySelection, resolveRelaySelection } from './relay-selection-config.js';
import type { RunningRelaySelection } from './relay-selection.js';
import type { CallStatsReport } from './stats-types.js';
import { CallError, CallEvent, type CallEventMap, MAX_PARTICIPANTS, type MultipathCallOptions, type ParticipantInfo, type SendDataOptions } from './types.js';

export { CallError, CallEvent, MAX_PARTICIPANTS } from './types.js';
export type {
  CallDataInfo,
  CallErrorCode,
  CallEventMap,
  MultipathCallOptions,
  ParticipantInfo,
  ReconnectPolicy,
  RemoteTrackInfo,
  SignallingStateInfo,
  SendDataOptions,
} from './types.js';
export type { RouteSwitchInfo, RouteSwitchPhase } from './route-handover.js';
export type { RelaySelectionConfig, RelaySelectionOption } from './relay-selection-config.js';
export { CallStatsReport } from './stats-types.js';
export type * from './stats-types.js';
export { isOfferer } from './peer-session.js';
export { reconnectDelayMs } from './reconnect.js';

/**
 * `scheduler`, `fec` and `estimator` options: a registered name or an entry
 * with `create` (src/strategies.ts).
 * @throws CallError 'bad-options' naming the option and how to register a shipped strategy.
 */
function checkStrategies(o: MultipathCallOptions): void {
  const check = (option: string, v: unknown, known: (n: unknown) => boolean, names: () => string[], register: string): void => {
    if (v === undefined || known(v)) return;
    if (typeof v === 'object' && v !== null && typeof (v as { create?: unknown }).create === 'function') return;
    throw CallError.badOptions(
      `${option}: ${JSON.stringify(v)} is not registered (registered: ${names().join(', ')}); pass an entry (import it from 'multipath-rtc/strategies') or ${register}(entry) first`,
    );
  };
  check('scheduler', o.scheduler, isSchedulerName, schedulerNames, 'registerScheduler');
  check('fec', o.fec, isFecPolicyName, fecPolicyNames, 'registerFecPolicy');
  check('estimator', o.estimator, isEstimatorName, estimatorNames, 'registerEstimator');
}

/**
 * Injected dependencies (tests and Node): a WebSocket implementation for the
 * signalling client and a path factory in place of simple-peer.
 */
export interface CallDeps {
  WebSocket?: WebSocketCtor;
  createPath?: CreatePath;
}
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
   * missing by name, and whether audio can be sent and played (`audio`).
   * Never rejects: if its code (a lazy chunk, src/codec/capabilities-probe.ts)
   * cannot be loaded, the answer is the API check alone, with no codec and
   * the load error in `missing`.
   */
  static capabilities(): Promise<CallCapabilities> {
    return import('../codec/capabilities-probe.js').then(
      (m) => m.callCapabilities(),
      (e: unknown) => {
        const a = apiCheck();
        return { ...a, supported: false, send: false, receive: false, encode: [], decode: [], audio: { send: false, receive: false }, missing: [...a.missing, `capabilities: ${String(e)}`] };
      },
    );
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
  private readonly signalling: CallSignalling;
  private connectStarted = false;
  private myPeerId: string | undefined;
  /** One session per remote participant, in join order. */
  private readonly sessions = new Map<string, PeerSession>();
  /** The first session's decoder, made now so that `remoteTrack` exists before anyone joins. */
  private firstDecoder: DecoderSlot | undefined = new DecoderSlot();
  /** Paths disabled for every participant, present and future. */
  private readonly disabledPaths = new Set<PathId>();
  /** Overlay: the relay each path runs through, once switchRelay moved it (index in options.relays). */
  private readonly relayOf = new Map<PathId, number>();
  /** The last switchRelay per path (from, to): undone when our restart selects no new pair in time. */
  private readonly relayBefore = new Map<PathId, { from: number; to: number }>();
  /** The one camera encoder, feeding every session's sender. */
  private readonly video: SharedVideoEncoder;
  /** The microphone's Opus encoder, feeding every participant's sender (src/audio/call-audio.ts). */
  private readonly audioSend: AudioSend;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Automatic relay choice (options.relaySelection), once connected. */
  private readonly relaySelectionCfg: ResolvedRelaySelection | undefined;
  private relaySelection: RunningRelaySelection | undefined;
  private housekeeping: ReturnType<typeof setInterval> | undefined;
  private readonly graceMs: number;
  private closed = false;
  private candidatePolicy: PathCandidatePolicy = PathCandidatePolicy.all();
  private readonly host: PeerSessionHost;
  /** `wrtc` serving datachannels from a worker (MultipathCallOptions.datachannelWorker), once its chunk loaded. */
  private dcWrtc: Record<string, unknown> | undefined;

  /**
   * @throws CallError 'bad-options' (missing room, neither or both of
   *   signallingUrl and signalling, paths outside 1..8); RangeError for bad `playout` values.
   */
  constructor(options: MultipathCallOptions, deps: CallDeps = {}) {
    if (!options || typeof options.room !== 'string') throw CallError.badOptions('room is required');
    const n = options.paths ?? 2;
    if (!Number.isInteger(n) || n < 1 || n > 8) throw CallError.badOptions(`paths must be 1..8, got ${n}`);
    checkStrategies(options);
    this.opts = options;
    this.numPaths = n;
    this.graceMs = options.participantGraceMs ?? 30_000;
    if (!(this.graceMs >= 0 && Number.isFinite(this.graceMs))) throw CallError.badOptions(`participantGraceMs must be finite and >= 0, got ${this.graceMs}`);
    if (options.relays !== undefined && (!Array.isArray(options.relays) || options.relays.some((r) => typeof r !== 'object' || r === null || !(typeof r.urls === 'string' || Array.isArray(r.urls))))) {
      throw CallError.badOptions('relays must be an array of RTCIceServer ({ urls, username?, credential? })');
    }
    if (options.relaySelection !== undefined) {
      try {
        this.relaySelectionCfg = resolveRelaySelection(options.relaySelection, n, options.relays?.length ?? 0);
      } catch (e) {
        throw CallError.badOptions((e as Error).message);
      }
    }
    this.clock = options.clock ?? monotonicClock;
    // Load and start the datachannel worker now (a lazy chunk): paths made before it answers stay on the main thread.
    if (options.datachannelWorker) {
      void import('../transport/datachannel-worker.js').then(
        (m) => {
          this.dcWrtc = m.datachannelWorkerRtc();
        },
        () => undefined,
      );
    }
    // Bad `playout` values throw here rather than when the first participant joins.
    void new ReceiverEngine({ clock: this.clock, ...(options.playout ? { playout: options.playout } : {}) });
    this.signalling = new CallSignalling(
      options,
      resolveReconnectPolicy(options.reconnect),
      {
        numPaths: n,
        ...rosterHandlers({
          sessions: this.sessions,
          setOwnId: (id) => {
            this.myPeerId = id;
          },
          add: (id) => this.addParticipant(id),
          remove: (id) => this.removeParticipant(id),
        }),
        onState: (state, info) => this.emit(CallEvent.SignallingState, state, info),
        onError: (e) => this.emit(CallEvent.Error, e),
      },
      deps.WebSocket,
    );
    const call = this;
    this.host = {
      opts: options,
      clock: this.clock,
      numPaths: n,
      get localId() {
        return call.myPeerId ?? '';
      },
      createPath:
        deps.createPath ??
        simplePeerPaths(
          options,
          () => this.candidatePolicy,
          (pathId) => this.relayIndex(pathId),
          () => this.dcWrtc,
        ),
      sendSignal: (to, pathId, data) => this.signalling.sendSignal(to, pathId, data),
      emit: (event, ...args) => this.emit(event, ...args),
      onFirstConnected: () => this.video.requestKeyframe(),
      onTargetBitrate: () => this.video.applyBitrate(),
      onRelaySwitchFailed: (id) => {
        // The old relay still carries the path: relayIndex (and the selector's samples) follow the route, not the wish.
        const before = this.relayBefore.get(id);
        if (before !== undefined && this.relayOf.get(id) === before.to) this.relayOf.set(id, before.from);
      },
    };
    this.audioSend = new AudioSend({ clock: this.clock, onError: (e) => this.emit(CallEvent.Error, e) });
    this.video = new SharedVideoEncoder({ opts: options, clock: this.clock, sessions: () => this.sessions.values(), onError: (e) => this.emit(CallEvent.Error, e) });
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

  /**
   * The first remote participant's rendered video (MediaStreamTrackGenerator),
   * when the browser has one: in a 1:1 call the remote video. It exists from
   * construction on (frames arrive once the remote peer sends). Other
   * participants' tracks: {@link CallEvent.RemoteTrack} or {@link participants}.
   */
  get remoteTrack(): MediaStreamTrack | undefined {
    const first = this.sessions.values().next().value as PeerSession | undefined;
    return first?.decoder.track ?? this.firstDecoder?.decoder.track;
  }

  /** Own participant id, once joined. */
  get participantId(): string | undefined {
    return this.myPeerId;
  }

  /** The first remote participant's audio (a MediaStreamTrackGenerator of kind 'audio', or a Web Audio destination's track where there is none), once its first frame played; see {@link CallEvent.RemoteTrack} for every participant's. */
  get remoteAudioTrack(): MediaStreamTrack | undefined {
    return this.sessions.values().next().value?.audio.track;
  }

  /** The remote participants in the call, in join order. */
  get participants(): ParticipantInfo[] {
    return [...this.sessions.values()].map((s) => ({ id: s.remoteId, connected: s.connected, videoTrack: s.remoteTrackShown ? s.decoder.track : undefined }));
  }

  /**
   * Join the room; a session with every participant there (and every later
   * one) starts at once.
   * @throws CallError 'already-connected' | 'closed'; 'join-refused' when the
   *   signalling server refuses the join (room full, unauthorized, peer id
   *   taken: its code is in the message); 'signalling-failed' when the
   *   signalling URL cannot be reached or closes before the join.
   */
  async connect(): Promise<void> {
    if (this.closed) throw new CallError('closed', 'call is closed');
    if (this.connectStarted) throw new CallError('already-connected', 'connect() called twice');
    this.connectStarted = true;
    if (!this.opts.candidateFilter && (this.opts.candidates ?? 'by-network') === 'by-network') {
      try {
        const iceServers = typeof this.opts.iceServers === 'function' ? this.opts.iceServers(0) : this.opts.iceServers;
        this.candidatePolicy = PathCandidatePolicy.byNetwork(await probeLocalCandidates({ iceServers }));
      } catch (e) {
        this.emit(CallEvent.Error, new Error(`candidate probe failed, every path uses every candidate: ${(e as Error).message}`));
      }
    }
    try {
      await this.signalling.connect();
    } catch (e) {
      // A failed join may be retried (with a URL or a factory: a transport instance is used once).
      this.connectStarted = false;
      throw e;
    }
    this.schedule();
    this.housekeeping = setInterval(() => this.dropGoneParticipants(), 1000);
    if (this.relaySelectionCfg) void this.startRelaySelection(this.relaySelectionCfg);
  }

  /** options.relaySelection: the selector and its timer, loaded on demand (src/call/relay-selection.ts). */
  private async startRelaySelection(cfg: ResolvedRelaySelection): Promise<void> {
    const { startRelaySelection } = await import('./relay-selection.js');
    if (this.closed) return;
    this.relaySelection = startRelaySelection(cfg, {
      nowMs: () => this.clock.nowUs() / 1000,
      numPaths: this.numPaths,
      offered: () => [...this.sessions.values()].filter((s) => s.offers && s.connected),
      relayIndex: (id) => this.relayIndex(id),
      switchRelay: (id, relay) => this.switchRelay(id, relay),
      onError: (e) => this.emit(CallEvent.Error, e),
    });
  }

  /**
   * The automatic relay choice's view of path `pathId` (options.relaySelection):
   * per relay it may use, the Eq. 13 index, the smoothed reward (1000 / RTT ms)
   * and the samples taken; empty without relaySelection or before connect.
   */
  relaySelectionState(pathId: PathId): Array<{ relay: number; index: number; reward: number; samples: number }> {
    return this.relaySelection?.selection.describe(pathId) ?? [];
  }

  /**
   * Sessions whose participant the server no longer announces (it left, or
   * is not back after a reconnect) go once none of their paths is up, or
   * after `participantGraceMs`.
   */
  private dropGoneParticipants(): void {
    const now = Date.now();
    for (const s of [...this.sessions.values()]) {
      if (s.absentSinceMs !== undefined && (!s.connected || now - s.absentSinceMs > this.graceMs)) this.removeParticipant(s.remoteId);
    }
  }

  /** A participant is in the room: start its session (no-op for one we have, or ourselves). */
  private addParticipant(id: string): PeerSession | undefined {
    if (this.closed || id === this.myPeerId) return undefined;
    const existing = this.sessions.get(id);
    if (existing) return existing;
    if (this.sessions.size >= MAX_PARTICIPANTS) {
      this.emit(CallEvent.Error, new CallError('too-many-participants', `participant ${id} ignored: this call keeps sessions with at most ${MAX_PARTICIPANTS} others`));
      return undefined;
    }
    const decoder = this.firstDecoder;
    this.firstDecoder = undefined;
    const s = new PeerSession(id, this.host, this.disabledPaths, decoder);
    this.sessions.set(id, s);
    this.emit(CallEvent.ParticipantJoined, id);
    if (this.video.running || this.audioSend.running) this.attachSender(s);
    s.start();
    return s;
  }

  private removeParticipant(id: string): void {
    const s = this.sessions.get(id);
    if (!s) return;
    this.sessions.delete(id);
    s.close();
    this.emit(CallEvent.ParticipantLeft, id);
    this.video.applyBitrate();
  }

  private attachSender(s: PeerSession): void {
    const o = this.opts;
    const sender = new SenderEngine({
      clock: this.clock,
      scheduler: o.scheduler ?? 'converge',
      singlePath: o.singlePath,
      fec: o.fec ?? 'path',
      estimator: o.estimator ?? 'gcc',
      qoeFeedback: o.qoeFeedback,
      mtuBytes: o.mtuBytes,
      maxBitrateBps: o.maxBitrateBps ?? 6_000_000,
      startBitrateBps: o.startBitrateBps,
      pacer: o.pacer,
      departureTimes: o.departureTimes,
      ...(o.audioRate !== undefined ? { audioRate: o.audioRate } : {}),
      ...o.faultHandling,
    });
    if (this.video.streamInfo) sender.setStreamInfo(this.video.streamInfo);
    s.attachSender(sender, () => this.video.requestKeyframe());
  }

  /**
   * Send a camera track (WebCodecs encoder -> every participant's multipath
   * sender engine), to the participants there now and those joining later.
   * A second call starts a new stream (new sender engines); to switch
   * cameras within the stream use {@link replaceTrack}.
   * A microphone track (kind 'audio') is sent as 20 ms Opus frames to every
   * participant, on the fastest path ahead of video (src/audio/call-audio.ts);
   * it replaces the previous audio track.
   * @throws CodecError when the codec cannot be used; CallError 'closed',
   *   'unsupported-track' (neither video nor audio); for audio, CodecError 'no-webcodecs' (no
   *   AudioEncoder) or 'no-capture' (neither MediaStreamTrackProcessor nor a usable AudioContext;
   *   see `capabilities().audio`).
   */
  async sendTrack(track: MediaStreamTrack): Promise<void> {
    if (this.closed) throw new CallError('closed', 'call is closed');
    if (track?.kind === 'audio') return this.sendAudio(track);
    if (track?.kind !== 'video') throw new CallError('unsupported-track', `sendTrack: a track of kind ${JSON.stringify(track?.kind)} (expected 'video' or 'audio')`);
    this.video.stop();
    this.video.streamInfo = undefined;
    for (const s of this.sessions.values()) this.attachSender(s);
    await this.video.start(track, false);
  }

  /**
   * Switch the sent video to another track (another camera) without a new
   * stream: the senders, their paths and their congestion state stay; a new
   * encoder reads the new track and starts with a key frame; frame ids go on
   * from the old encoder's, so receivers see one stream. Without a track
   * being sent it is {@link sendTrack}. The old track is not stopped (the app owns it).
   * @throws as {@link sendTrack}.
   */
  async replaceTrack(track: MediaStreamTrack): Promise<void> {
    if (this.closed) throw new CallError('closed', 'call is closed');
    if (!this.video.running) return this.sendTrack(track);
    if (track?.kind === 'audio') return this.sendAudio(track);
    await this.video.start(track, true);
  }

  /** Microphone -> Opus -> every participant's sender (created for those that have none yet). */
  private async sendAudio(track: MediaStreamTrack): Promise<void> {
    for (const s of this.sessions.values()) if (!s.sender) this.attachSender(s);
    await this.audioSend.send(track, () => [...this.sessions.values()].map((s) => s.sender));
  }

  /**
   * Mute or unmute the microphone (`'audio'`) or the camera (`'video'`),
   * towards every participant, present and future; the setting outlives
   * `sendTrack` / `replaceTrack` (a new device stays muted) and may be set
   * before any track is sent.
   *
   * What is sent: a muted microphone sends 20 ms Opus frames of digital
   * silence, a muted camera black frames at the camera's cadence, as WebRTC
   * does for a disabled track (W3C mediacapture-main, `enabled`). The
   * streams never stop, so receivers see neither loss nor concealment nor
   * freezes, their jitter buffers stay primed, and unmuting is immediate
   * with no key frame or resynchronisation. Cost while muted: a few hundred
   * bytes per second for audio, a few kbps for black video (the encoder
   * still runs). `track.enabled = false` on the sent track has the same
   * effect in Chromium (its track processor delivers silence / black), but
   * leaves the local preview to the app; this method does not touch the
   * track. Encoder stats count the replaced frames (`mutedFrames`).
   * @throws CallError 'closed'; 'bad-options' for a kind other than 'audio' | 'video'.
   */
  setMuted(kind: 'audio' | 'video', muted: boolean): void {
    if (this.closed) throw new CallError('closed', 'call is closed');
    if (kind === 'audio') this.audioSend.muted = muted;
    else if (kind === 'video') this.video.muted = muted;
    else throw CallError.badOptions(`setMuted: kind must be 'audio' or 'video', got ${JSON.stringify(kind)}`);
  }

  /** Whether the microphone (`'audio'`) or the camera (`'video'`) is muted ({@link setMuted}). */
  isMuted(kind: 'audio' | 'video'): boolean {
    return kind === 'audio' ? this.audioSend.muted : this.video.muted;
  }

  /**
   * Stop sending video and keep the call: the camera encoder stops (frames it
   * still holds are discarded), while the paths, the senders' retransmission
   * history and their FEC stay up, so frames already sent can still be repaired.
   * The video `outbound-rtp` entries keep counting (`active` false). Idempotent; a later `sendTrack` starts
   * a new stream.
   */
  stopSending(): void {
    this.video.stop();
  }

  /**
   * Enable or disable a path live, towards one participant or (without
   * `participantId`) towards every participant, present and future. A
   * disabled path carries nothing of ours: no media, FEC, retransmissions,
   * probes or app data (the sender engine sees it as closed, fails over and
   * re-sends what it still held for it on the other paths); its
   * RTCPeerConnection stays open. Re-enabled, it is up at once and carries
   * app data and padding at once, and media again once the sender's path
   * hysteresis promotes it (clean for its hold time, 3 s doubling per recent
   * fault: src/sched/path-hysteresis.ts), as after any outage. What the
   * remote participant sends on it, and our receiver feedback about that, go on.
   * getStats()' `path` entries (`enabled`, `up`) show it.
   * @throws CallError 'unknown-path' (not in 0..paths-1), 'unknown-participant', 'closed'.
   */
  setPathEnabled(pathId: PathId, enabled: boolean, participantId?: string): void {
    if (this.closed) throw new CallError('closed', 'call is closed');
    if (!Number.isInteger(pathId) || pathId < 0 || pathId >= this.numPaths) throw new CallError('unknown-path', `setPathEnabled: path ${pathId} not in 0..${this.numPaths - 1}`);
    if (participantId !== undefined) {
      const s = this.sessions.get(participantId);
      if (!s) throw new CallError('unknown-participant', `setPathEnabled: no participant ${participantId} in the call`);
      s.setPathEnabled(pathId, enabled);
    } else {
      if (enabled) this.disabledPaths.delete(pathId);
      else this.disabledPaths.add(pathId);
      for (const s of this.sessions.values()) s.setPathEnabled(pathId, enabled);
    }
    this.video.applyBitrate();
  }

  /**
   * The index in `MultipathCallOptions.relays` of the TURN relay path
   * `pathId` runs through (initially `pathId mod relays.length`); undefined
   * without relays.
   */
  relayIndex(pathId: PathId): number {
    const n = this.opts.relays?.length ?? 0;
    return this.relayOf.get(pathId) ?? (n > 0 ? pathId % n : Number.NaN);
  }

  /**
   * Overlay (issue 16, Zhang & Lei §3.2): move path `pathId` onto relay
   * `relayIndex` of `MultipathCallOptions.relays`, by an ICE restart with the
   * new TURN server on that path's RTCPeerConnection (the old route carries
   * the path until the new one is selected). Only the side that offers the
   * path (the lower peer id) drives its relay; on the other side nothing
   * changes. Later restarts of the path (connect timeout) use the new relay.
   * When our restart selects no new candidate pair within 5 s
   * (CallEvent.RouteSwitch 'timed-out') the path is still on the old relay,
   * and `relayIndex` says so again.
   * A relay selector (src/sched/relay-ucb.ts) can drive it from
   * `getStats()` rates.
   * @returns how many participants' paths started the switch (0 when this side offers none).
   * @throws CallError 'closed'; 'unknown-path'; 'bad-options' (no `relays`, or the index is not one of them).
   */
  switchRelay(pathId: PathId, relayIndex: number): number {
    if (this.closed) throw new CallError('closed', 'call is closed');
    if (!Number.isInteger(pathId) || pathId < 0 || pathId >= this.numPaths) throw new CallError('unknown-path', `switchRelay: path ${pathId} not in 0..${this.numPaths - 1}`);
    const relays = this.opts.relays ?? [];
    if (!(Number.isInteger(relayIndex) && relayIndex >= 0 && relayIndex < relays.length))
      throw CallError.badOptions(`switchRelay: relay ${relayIndex} not in 0..${relays.length - 1} of options.relays`);
    const from = this.relayIndex(pathId);
    this.relayOf.set(pathId, relayIndex);
    let n = 0;
    for (const s of this.sessions.values()) if (s.switchRelay(pathId, relays[relayIndex])) n++;
    if (n > 0) this.relayBefore.set(pathId, { from, to: relayIndex });
    return n;
  }

  /**
   * Send app data to the remote participants on the call's paths (not
   * through the media pacer): to `options.to`, or to every participant. A
   * string arrives as a string, bytes as a Uint8Array (copied at the call),
   * in {@link CallEvent.Data} on the other side.
   *
   * Reliable (default): exactly once and in order per receiver;
   * acknowledged by the receiver and retransmitted after an RTO (RFC 6298)
   * on the best path up, so it survives loss and a path going down; sent
   * once a path is up if none is yet. After 12 unacknowledged transmissions
   * the call gives up on the message and emits {@link CallEvent.Error} with a
   * CallError 'data-lost'. Unreliable: sent once now on the lowest-RTT path
   * up (participants with no path up are skipped).
   *
   * Limits: 16384 bytes per message (MAX_APP_DATA_BYTES, after UTF-8
   * encoding); 256 KiB / 1024 reliable messages awaiting an ack, per participant.
   *
   * @returns how many participants the message was queued or sent for.
   * @throws CallError 'closed' (after close()); 'not-connected' (no remote
   *   participant in the call yet, or unreliable with no path up to any);
   *   'unknown-participant' (`to` is not in the call); 'data-too-large'
   *   (above 16384 bytes); 'data-window-full' (too much reliable data
   *   awaiting an ack: retry after a Data round trip); 'bad-data' (neither a
   *   Uint8Array nor a string). When sending to several participants, one
   *   that cannot take it is reported as {@link CallEvent.Error} and the
   *   others still get it; the error is thrown only when none took it.
   */
  send(data: Uint8Array | string, options: SendDataOptions = {}): number {
    if (this.closed) throw new CallError('closed', 'call is closed');
    let targets: PeerSession[];
    if (options.to !== undefined) {
      const s = this.sessions.get(options.to);
      if (!s) throw new CallError('unknown-participant', `send: no participant ${options.to} in the call`);
      targets = [s];
    } else targets = [...this.sessions.values()];
    if (targets.length === 0) throw new CallError('not-connected', 'send: no remote participant in the call yet (wait for CallEvent.Connected)');
    return sendToEach(targets, data, options.reliable ?? true, (e) => this.emit(CallEvent.Error, e));
  }

  private schedule(): void {
    if (this.closed) return;
    const now = this.clock.nowUs();
    let wake = Infinity;
    for (const s of this.sessions.values()) wake = Math.min(wake, s.nextWakeUs());
    const delayMs = Math.max(1, Math.min(20, (wake - now) / 1000));
    this.timer = setTimeout(() => {
      for (const s of [...this.sessions.values()]) {
        try {
          s.tick();
        } catch (e) {
          this.emit(CallEvent.Error, e instanceof Error ? e : new Error(String(e)));
        }
      }
      this.schedule();
    }, delayMs);
  }

  /**
   * A snapshot of the call's statistics as a W3C webrtc-stats-shaped report
   * (a `Map` of typed entries: `outbound-rtp`, `inbound-rtp` per participant
   * and kind, `remote-inbound-rtp`, `candidate-pair` and our `path` per path,
   * `transport`, `codec`, `media-source`, `data-channel`, `call`). The
   * contract, with every field's unit, is src/call/stats-types.ts.
   */
  getStats(): CallStatsReport {
    return buildStatsReport({
      timestampMs: this.clock.nowUs() / 1000,
      participantId: this.myPeerId,
      candidatePolicy: this.opts.candidateFilter ? 'app filter' : this.candidatePolicy.describe(this.numPaths),
      disabledPaths: [...this.disabledPaths].sort((a, b) => a - b),
      droppedSignals: this.signalling.badSignals,
      encoder: this.video.stats(),
      sendingVideo: this.video.running,
      sentVideoCodec: this.video.streamInfo?.codec ?? this.opts.codec ?? 'h264',
      camera: this.video.settings,
      audioEncoder: this.audioSend.stats(),
      sessions: [...this.sessions.values()].map((s) => s.snapshot()),
    });
  }

  /** Camera settings of the sent track, once sending. */
  get camera(): { width: number; height: number; fps: number } | undefined {
    return this.video.settings;
  }

  /** Leave the room and stop everything; idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.housekeeping) clearInterval(this.housekeeping);
    this.relaySelection?.stop();
    this.video.stop();
    this.audioSend.stop();
    this.firstDecoder?.decoder.close();
    for (const s of this.sessions.values()) s.close();
    this.sessions.clear();
    this.signalling.close();
    this.emit(CallEvent.Closed);
  }
}
