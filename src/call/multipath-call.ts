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
 * console.log(call.getStats().participants);
 * ```
 */
import { AudioSend } from '../audio/call-audio.js';
import { monotonicClock } from '../core/clock.js';
import type { Clock } from '../core/clock.js';
import { Emitter } from '../core/emitter.js';
import type { PathId } from '../core/types.js';
import { callCapabilities, isCallSupported } from '../codec/webcodecs.js';
import type { CallCapabilities } from '../codec/webcodecs.js';
import { AppDataChannel, AppDataError } from '../engine/app-data.js';
import { ReceiverEngine } from '../engine/receiver.js';
import { SenderEngine } from '../engine/sender.js';
import { SignallingClient, type WebSocketCtor } from '../signalling/client.js';
import { PathCandidatePolicy } from '../transport/candidates.js';
import type { ParsedCandidate } from '../transport/candidates.js';
import { probeLocalCandidates } from '../transport/probe.js';
import { SimplePeerPath } from '../transport/simple-peer-path.js';
import { type CreatePath, DecoderSlot, PeerSession, type PeerSessionHost } from './peer-session.js';
import { SharedVideoEncoder } from './shared-encoder.js';
import { reconnectDelayMs, resolveReconnectPolicy } from './reconnect.js';
import {
  CallError,
  CallEvent,
  type CallEventMap,
  type CallStats,
  MAX_PARTICIPANTS,
  type MultipathCallOptions,
  type ParticipantInfo,
  type ParticipantStats,
  type ReconnectPolicy,
  type SendDataOptions,
} from './types.js';

export { CallError, CallEvent, MAX_PARTICIPANTS } from './types.js';
export type {
  CallDataInfo,
  CallErrorCode,
  CallEventMap,
  CallPathInfo,
  CallStats,
  MultipathCallOptions,
  ParticipantInfo,
  ParticipantStats,
  ReconnectPolicy,
  RemoteTrackInfo,
  SignallingStateInfo,
  SendDataOptions,
  SessionStats,
} from './types.js';
export { isOfferer } from './peer-session.js';
export { reconnectDelayMs } from './reconnect.js';

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
   * missing by name. Never rejects. See src/codec/capabilities.ts.
   */
  static capabilities(): Promise<CallCapabilities> {
    return callCapabilities();
  }

  private readonly opts: MultipathCallOptions;
  private readonly clock: Clock;
  private readonly numPaths: number;
  private readonly deps: CallDeps;
  /** Exceptions thrown by handlers are reported as 'error' (those of 'error' handlers are dropped). */
  private readonly events = new Emitter<CallEventMap>({
    onListenerError: (e, event) => {
      if (event !== CallEvent.Error) this.emit(CallEvent.Error, e instanceof Error ? e : new Error(String(e)));
    },
  });
  private signalling: SignallingClient | undefined;
  private myPeerId: string | undefined;
  /** One session per remote participant, in join order. */
  private readonly sessions = new Map<string, PeerSession>();
  /** The first session's decoder, made now so that `remoteTrack` exists before anyone joins. */
  private firstDecoder: DecoderSlot | undefined = new DecoderSlot();
  /** Stats before anyone joined (zeros); also validates `playout` in the constructor. */
  private readonly idleReceiver: ReceiverEngine;
  private readonly idleAppData: AppDataChannel;
  /** Paths disabled for every participant, present and future. */
  private readonly disabledPaths = new Set<PathId>();
  /** The one camera encoder, feeding every session's sender. */
  private readonly video: SharedVideoEncoder;
  /** The microphone's Opus encoder, feeding every participant's sender (src/audio/call-audio.ts). */
  private readonly audioSend: AudioSend;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private housekeeping: ReturnType<typeof setInterval> | undefined;
  private readonly reconnectPolicy: Required<ReconnectPolicy> | undefined;
  private readonly graceMs: number;
  private closed = false;
  private candidatePolicy: PathCandidatePolicy = PathCandidatePolicy.all();
  private readonly host: PeerSessionHost;

  /**
   * @throws CallError 'bad-options' (missing signallingUrl / room, paths outside 1..8);
   *   RangeError for bad `playout` values.
   */
  constructor(options: MultipathCallOptions, deps: CallDeps = {}) {
    if (!options || typeof options.signallingUrl !== 'string' || typeof options.room !== 'string') {
      throw CallError.badOptions('signallingUrl and room are required');
    }
    const n = options.paths ?? 2;
    if (!Number.isInteger(n) || n < 1 || n > 8) throw CallError.badOptions(`paths must be 1..8, got ${n}`);
    this.opts = options;
    this.numPaths = n;
    this.reconnectPolicy = resolveReconnectPolicy(options.reconnect);
    this.graceMs = options.participantGraceMs ?? 30_000;
    if (!(this.graceMs >= 0 && Number.isFinite(this.graceMs))) throw CallError.badOptions(`participantGraceMs must be finite and >= 0, got ${this.graceMs}`);
    this.deps = deps;
    this.clock = options.clock ?? monotonicClock;
    this.idleReceiver = new ReceiverEngine({ clock: this.clock, ...(options.playout ? { playout: options.playout } : {}) });
    this.idleAppData = new AppDataChannel({ clock: this.clock, transmit: () => false, deliver: () => undefined });
    const call = this;
    this.host = {
      opts: options,
      clock: this.clock,
      numPaths: n,
      get localId() {
        return call.myPeerId ?? '';
      },
      createPath: deps.createPath ?? ((a) => this.createSimplePeerPath(a)),
      sendSignal: (to, pathId, data) => this.signalling?.sendSignal(to, pathId, data),
      emit: (event, ...args) => this.emit(event, ...args),
      onFirstConnected: () => this.video.requestKeyframe(),
      onTargetBitrate: () => this.video.applyBitrate(),
    };
    this.audioSend = new AudioSend({ clock: this.clock, onError: (e) => this.emit(CallEvent.Error, e) });
    this.video = new SharedVideoEncoder({ opts: options, clock: this.clock, sessions: () => this.sessions.values(), onError: (e) => this.emit(CallEvent.Error, e) });
  }

  private createSimplePeerPath({ pathId, initiator, onSignal }: Parameters<CreatePath>[0]): SimplePeerPath {
    const o = this.opts;
    const iceServers = typeof o.iceServers === 'function' ? o.iceServers(pathId) : o.iceServers;
    return new SimplePeerPath({
      pathId,
      initiator,
      iceServers,
      candidateFilter: o.candidateFilter ?? ((c: ParsedCandidate, id: PathId) => this.candidatePolicy.allows(c, id)),
      onSignal,
    });
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

  /** The remote participants in the call, in join order. */
  /** The first remote participant's audio (MediaStreamTrackGenerator of kind 'audio'), once its first frame played; see {@link CallEvent.RemoteTrack} for every participant's. */
  get remoteAudioTrack(): MediaStreamTrack | undefined {
    return this.sessions.values().next().value?.audio.track;
  }

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
    if (this.signalling) throw new CallError('already-connected', 'connect() called twice');
    const sig = this.newSignallingClient();
    if (!this.opts.candidateFilter && (this.opts.candidates ?? 'by-network') === 'by-network') {
      try {
        const iceServers = typeof this.opts.iceServers === 'function' ? this.opts.iceServers(0) : this.opts.iceServers;
        this.candidatePolicy = PathCandidatePolicy.byNetwork(await probeLocalCandidates({ iceServers }));
      } catch (e) {
        this.emit(CallEvent.Error, new Error(`candidate probe failed, every path uses every candidate: ${(e as Error).message}`));
      }
    }
    try {
      await sig.connect(this.opts.signallingUrl, this.opts.room, this.opts.peerId, this.opts.token !== undefined ? { token: this.opts.token } : {});
    } catch (e) {
      this.signalling = undefined;
      sig.close();
      const msg = (e as Error)?.message ?? String(e);
      throw new CallError(/join refused/.test(msg) ? 'join-refused' : 'signalling-failed', `${this.opts.signallingUrl} room ${this.opts.room}: ${msg}`);
    }
    this.emit(CallEvent.SignallingState, 'connected', { attempt: 0 });
    this.schedule();
    this.housekeeping = setInterval(() => this.dropGoneParticipants(), 1000);
  }

  /** A signalling client wired to this call (the first one, and one per reconnect). */
  private newSignallingClient(): SignallingClient {
    const sig = new SignallingClient(this.deps.WebSocket ? { WebSocket: this.deps.WebSocket } : {});
    this.signalling = sig;
    let joined = false;
    sig.on('joined', ({ peerId, peers }) => {
      joined = true;
      this.myPeerId = peerId;
      const present = new Set(peers);
      // After a reconnect: whoever is not back yet is absent until announced (or gone once its paths are down).
      for (const s of this.sessions.values()) s.setAnnounced(present.has(s.remoteId), Date.now());
      for (const p of peers) this.addParticipant(p);
    });
    sig.on('peer-joined', ({ peerId }) => {
      const s = this.addParticipant(peerId);
      s?.setAnnounced(true, Date.now());
    });
    sig.on('peer-left', ({ peerId }) => {
      const s = this.sessions.get(peerId);
      // Paths still up: its signalling may only have dropped (it reconnects under the same id); media goes on.
      if (s?.connected) s.setAnnounced(false, Date.now());
      else this.removeParticipant(peerId);
    });
    sig.on('signal', ({ from, pathId, data }) => {
      // The signalling client passes only signals from peers the server announced.
      const s = this.sessions.get(from) ?? this.addParticipant(from);
      s?.onSignal(pathId, data);
    });
    sig.on('error', (e) => this.emit(CallEvent.Error, new Error(`signalling: ${e.code}: ${e.message}`)));
    sig.on('closed', ({ code }) => {
      if (this.closed || this.signalling !== sig || !joined) return;
      this.signallingLost(`socket closed (code ${code})`);
    });
    return sig;
  }

  /**
   * The signalling socket closed under a running call: media goes on over the
   * paths already up, and the call rejoins the room under its own id with
   * backoff and jitter ({@link reconnectDelayMs}). Paths that need a restart
   * meanwhile retry until signalling is back.
   */
  private signallingLost(reason: string): void {
    const policy = this.reconnectPolicy;
    // No signalling for good: nobody can be announced again; sessions go as their paths do (or after the grace time).
    const giveUp = (): void => {
      for (const s of this.sessions.values()) s.setAnnounced(false, Date.now());
    };
    if (!policy) {
      giveUp();
      this.emit(CallEvent.SignallingState, 'disconnected', { attempt: 0, reason });
      return;
    }
    let attempt = 0;
    const next = (why: string): void => {
      if (this.closed) return;
      attempt++;
      if (attempt > policy.maxAttempts) {
        giveUp();
        this.emit(CallEvent.SignallingState, 'disconnected', { attempt: attempt - 1, reason: why });
        this.emit(
          CallEvent.Error,
          new CallError('signalling-lost', `${this.opts.signallingUrl}: no signalling after ${policy.maxAttempts} reconnect attempts (${why}); media goes on over the paths that are up`),
        );
        return;
      }
      const delayMs = reconnectDelayMs(attempt, policy.baseDelayMs, policy.maxDelayMs, Math.random());
      this.emit(CallEvent.SignallingState, 'reconnecting', { attempt, reason: why, delayMs });
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = undefined;
        if (this.closed) return;
        const sig = this.newSignallingClient();
        sig.connect(this.opts.signallingUrl, this.opts.room, this.myPeerId ?? this.opts.peerId, this.opts.token !== undefined ? { token: this.opts.token } : {}).then(
          () => {
            if (this.closed || this.signalling !== sig) return;
            this.emit(CallEvent.SignallingState, 'connected', { attempt });
          },
          (e: unknown) => {
            sig.close();
            if (this.signalling === sig) next((e as Error)?.message ?? String(e));
          },
        );
      }, delayMs);
    };
    next(reason);
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
      qoeFeedback: o.qoeFeedback,
      mtuBytes: o.mtuBytes,
      maxBitrateBps: o.maxBitrateBps ?? 6_000_000,
      startBitrateBps: o.startBitrateBps,
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
   *   'unsupported-track' (neither video nor audio); Error when WebCodecs audio is missing.
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
   * `getStats().sender` keeps counting. Idempotent; a later `sendTrack` starts
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
   * `getStats().paths[i].enabled` and `sender.paths[i].up` show it.
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
    let sent = 0;
    let firstError: CallError | undefined;
    const errors: CallError[] = [];
    for (const s of targets) {
      try {
        s.appData.send(data, options.reliable ?? true);
        sent++;
      } catch (e) {
        if (!(e instanceof AppDataError)) throw e;
        const code = e.code === 'too-large' ? 'data-too-large' : e.code === 'window-full' ? 'data-window-full' : e.code === 'no-path' ? 'not-connected' : 'bad-data';
        const err = new CallError(code, `send to ${s.remoteId}: ${e.message}`);
        // Size and type are the same for every participant: fail at once.
        if (code === 'data-too-large' || code === 'bad-data') throw err;
        firstError ??= err;
        errors.push(err);
      }
    }
    if (sent === 0 && firstError) throw firstError;
    for (const e of errors) this.emit(CallEvent.Error, e);
    return sent;
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
   * A snapshot of every statistic the call keeps: per participant in
   * `participants`, and the first participant's at the top level (see {@link CallStats}).
   */
  getStats(): CallStats {
    const participants: ParticipantStats[] = [...this.sessions.values()].map((s) => s.stats());
    const first = participants[0];
    const top = first
      ? {
          sender: first.sender,
          receiver: first.receiver,
          decoder: first.decoder,
          paths: first.paths,
          samePair: first.samePair,
          malformed: first.malformed,
          estimators: first.estimators,
          appData: first.appData,
          audioOutput: first.audioOutput,
        }
      : {
          sender: undefined,
          receiver: this.idleReceiver.stats(),
          decoder: this.firstDecoder?.decoder.stats() ?? { decoded: 0, errors: 0, queue: 0, held: 0, renderMode: 'none', renderErrors: 0 },
          paths: [],
          samePair: [],
          malformed: {},
          estimators: undefined,
          appData: this.idleAppData.stats(),
        };
    return {
      timestampUs: this.clock.nowUs(),
      participantId: this.myPeerId,
      ...top,
      encoder: this.video.stats(),
      audioEncoder: this.audioSend.stats(),
      candidatePolicy: this.opts.candidateFilter ? 'app filter' : this.candidatePolicy.describe(this.numPaths),
      participants,
      disabledPaths: [...this.disabledPaths].sort((a, b) => a - b),
    };
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
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.housekeeping) clearInterval(this.housekeeping);
    this.video.stop();
    this.audioSend.stop();
    this.firstDecoder?.decoder.close();
    for (const s of this.sessions.values()) s.close();
    this.sessions.clear();
    this.signalling?.close();
    this.emit(CallEvent.Closed);
  }
}
