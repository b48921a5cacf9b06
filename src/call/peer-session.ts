/**
 * One pair of a full-mesh call: this participant and one remote participant,
 * with their own multipath session: own paths (one RTCPeerConnection each,
 * under a {@link PathSupervisor}), own {@link SenderEngine} (congestion
 * control, scheduler, FEC, retransmissions per path), own
 * {@link ReceiverEngine} and video decoder, own app data channel and stats.
 * {@link MultipathCall} keeps one per remote participant and feeds every
 * session's sender the frames of one shared camera encoder.
 *
 * Who offers: on every path, the participant whose id sorts first
 * (lexicographic, UTF-16 code units) is the initiator; the other only answers.
 * Both sides compute the same answer from the two ids, so two participants
 * joining at once never both offer (no glare) and no rollback is needed.
 */
import type { Clock } from '../core/clock.js';
import type { PathId, PathState, PathTransportState as EnginePathState } from '../core/types.js';
import { FrameDecoder } from '../codec/webcodecs.js';
import { LazyAppData } from './lazy-app-data.js';
import { Endpoint } from '../engine/endpoint.js';
import { RemoteAudio } from '../audio/call-audio.js';
import { ReceiverEngine } from '../engine/receiver.js';
import type { SenderEngine } from '../engine/sender.js';
import { DRAIN_BACKLOG_BYTES } from '../engine/sender-path.js';
import type { ParsedCandidate, PathCandidatePolicy } from '../transport/candidates.js';
import type { PathSink } from '../engine/types.js';
import { findSharedPairs } from '../transport/path-set.js';
import { SimplePeerPath } from '../transport/simple-peer-path.js';
import { PathSupervisor } from '../transport/path-supervisor.js';
import type { PathStatus } from '../transport/path-supervisor.js';
import type { DatagramCarrier } from '../transport/carrier.js';
import type { StallFallbackSink } from '../transport/stall-fallback.js';
import type { PathTransport, SelectedPair } from '../transport/types.js';
import type { RouteHandover } from './route-handover.js';
import type { SessionSnapshot } from './stats.js';
import { CallError, CallEvent, type CallEventMap, type MultipathCallOptions } from './types.js';

/** Decode times kept for the last-second frame rate (bounds the ring at 240 fps). */
const RECENT_DECODES = 240;
/** Period (µs) at which each connected path's selected candidate pair is read again. */
const PAIR_REREAD_US = 2_000_000;

/** A path transport that takes the remote side's signals (simple-peer's offer / answer / candidates). */
export interface SignalledPath extends PathTransport {
  signal(data: unknown): void;
  /** Optional: move the path onto other ICE servers by an ICE restart (SimplePeerPath.switchIceServers). */
  switchIceServers?(iceServers: RTCIceServer[], iceTransportPolicy?: 'all' | 'relay'): boolean;
}

/** Makes one generation of one path towards one participant; `onSignal` sends a local signal to it. */
export type CreatePath = (args: { pathId: PathId; initiator: boolean; remoteId: string; onSignal: (data: Record<string, unknown>) => void }) => SignalledPath;

/**
 * A video decoder whose handlers are set after it exists: the call makes its
 * first one at construction (so `MultipathCall.remoteTrack` exists before
 * anyone joins) and hands it to the first session.
 */
export class DecoderSlot {
  handlers: ConstructorParameters<typeof FrameDecoder>[0] = { onDecoded: () => undefined, onNeedKeyframe: () => undefined };
  readonly decoder = new FrameDecoder({
    onDecoded: (info) => this.handlers.onDecoded(info),
    onNeedKeyframe: (reason) => this.handlers.onNeedKeyframe(reason),
    onError: (e) => this.handlers.onError?.(e),
  });
}

/**
 * `MultipathCallOptions.rtpCarrier` as the path gets it: on unless `false`, with
 * attach 'stall' unless one is given (also in the object form); `true` is
 * 'connect' (src/call/types.ts).
 */
export function rtpCarrierOption(v: MultipathCallOptions['rtpCarrier']): true | { attach: 'connect' | 'stall' } {
  if (v === true) return true;
  return { ...(typeof v === 'object' ? v : {}), attach: (typeof v === 'object' && v.attach) || 'stall' };
}

/**
 * The browser's {@link CreatePath}: a simple-peer RTCPeerConnection per path
 * generation, with the call's ICE servers (all paths or per path) and its
 * local candidate filter (the app's, else `policy()`'s split). With
 * `o.relays` (overlay, issue 16) the offerer of each path reaches the other
 * peer through that path's current relay only (`relayIndex(pathId)`,
 * `iceTransportPolicy: 'relay'`).
 */
export function simplePeerPaths(
  o: MultipathCallOptions,
  policy: () => PathCandidatePolicy,
  relayIndex: (pathId: PathId) => number = (pathId) => pathId,
  wrtc?: () => Record<string, unknown> | undefined,
): CreatePath {
  return ({ pathId, initiator, onSignal }) => {
    const relays = o.relays ?? [];
    const relay = initiator && relays.length > 0 ? relays[relayIndex(pathId) % relays.length] : undefined;
    return new SimplePeerPath({
      pathId,
      initiator,
      iceServers: relay ? [relay] : typeof o.iceServers === 'function' ? o.iceServers(pathId) : o.iceServers,
      ...(relay ? { iceTransportPolicy: 'relay' as const } : {}),
      candidateFilter: o.candidateFilter ?? ((c: ParsedCandidate, id: PathId) => policy().allows(c, id)),
      ...(wrtc?.() ? { wrtc: wrtc() } : {}),
      // Where the browser cannot run the carrier, its chunk says why.
      ...(o.rtpCarrier !== false ? { rtpCarrier: rtpCarrierOption(o.rtpCarrier) } : {}),
      onSignal,
    });
  };
}

/** True when `localId` offers on the paths between the two participants: the smaller id does. */
export function isOfferer(localId: string, remoteId: string): boolean {
  return localId < remoteId;
}

/** What a session needs from its call. */
export interface PeerSessionHost {
  readonly opts: MultipathCallOptions;
  readonly clock: Clock;
  readonly numPaths: number;
  readonly localId: string;
  createPath: CreatePath;
  sendSignal(to: string, pathId: PathId, data: Record<string, unknown>): void;
  emit<K extends keyof CallEventMap>(event: K, ...args: Parameters<CallEventMap[K]>): void;
  /** The session's first path connected (the shared encoder sends a key frame for the new receiver). */
  onFirstConnected(session: PeerSession): void;
  /** The sender's target changed (the shared encoder follows the lowest). */
  onTargetBitrate(session: PeerSession): void;
  /** Our ICE restart of path `id` selected no new pair in time: the path is still on its old route. */
  onRelaySwitchFailed?(id: PathId): void;
}

/** See the module comment. */
export class PeerSession {
  readonly receiver: ReceiverEngine;
  readonly appData: LazyAppData;
  private readonly decoderSlot: DecoderSlot;
  private readonly transports = new Map<PathId, SignalledPath>();
  private readonly selectedPairs = new Map<PathId, SelectedPair>();
  private readonly supervisor: PathSupervisor;
  private readonly linkStates = new Map<PathId, EnginePathState>();
  /** Paths the app disabled towards this participant (`MultipathCall.setPathEnabled`). */
  private readonly disabled = new Set<PathId>();
  /** Call clock (µs) of the last periodic read of the selected pairs ({@link tick}). */
  private pairsReadUs = 0;
  /** Last pair RTT read per path (freshPairRtt). */
  private readonly rttSeen = new Map<PathId, { key: string; responses: number | undefined }>();
  /** ICE restarts of the paths (src/call/route-handover.ts), loaded at the first one (most calls have none). */
  private handover: RouteHandover | undefined;
  private handoverLoad: Promise<RouteHandover> | undefined;
  private endpoint: Endpoint;
  private _sender: SenderEngine | undefined;
  private senderUnsubscribe: Array<() => void> = [];
  /** Each path's sink (see {@link pathSink}). */
  private readonly sinks = new Map<PathId, PathSink>();
  /** The paths' stall fallbacks (option `rtpCarrier`), once loaded. */
  private readonly fallbacks = new Map<PathId, StallFallbackSink>();
  /** The sender's key frame request (attachSender). */
  private onKeyframeNeeded: ((reason: string) => void) | undefined;
  /**
   * Since when (ms, Date.now()) the signalling server no longer announces
   * this participant (it left, or our or its signalling reconnects);
   * undefined while announced. The call drops the session once no path is
   * up, or after its grace time.
   */
  absentSinceMs: number | undefined;

  /** Announced by the signalling server (true) or not (false). */
  setAnnounced(announced: boolean, nowMs: number): void {
    if (announced) this.absentSinceMs = undefined;
    else this.absentSinceMs ??= nowMs;
  }
  /** Last encoder target this session's sender asked for (bps). */
  targetBps: number | undefined;
  private lastSamePairKey = '';
  /** Its audio (src/audio/call-audio.ts): the remote audio track once its first frame played. */
  readonly audio: RemoteAudio;
  /** RemoteTrack was emitted (the first frame was decoded). */
  remoteTrackShown = false;
  private connectedEmitted = false;
  private closed = false;
  /** Decode times (µs, call clock) of the last {@link RECENT_DECODES} frames, ring. */
  private readonly recentDecodesUs = new Float64Array(RECENT_DECODES).fill(Number.NEGATIVE_INFINITY);
  private recentDecodesHead = 0;
  /** WebCodecs codec string of the video received (StreamInfo). */
  private receivedCodec: string | undefined;

  /**
   * @param decoder a decoder to adopt (the call's first one, whose track exists before anyone joins); else a new one.
   */
  constructor(
    readonly remoteId: string,
    private readonly host: PeerSessionHost,
    disabledPaths: Iterable<PathId>,
    decoder?: DecoderSlot,
  ) {
    const { opts, clock } = host;
    for (const id of disabledPaths) this.disabled.add(id);
    this.receiver = new ReceiverEngine({ clock, ...(opts.playout ? { playout: opts.playout } : {}) });
    this.audio = new RemoteAudio(
      this.receiver,
      (track) => host.emit(CallEvent.RemoteTrack, track, { participantId: remoteId, streamId: 0, kind: 'audio' }),
      (e) => host.emit(CallEvent.Error, new Error(`audio output (${remoteId}): ${e.message}`)),
    );
    // Loaded at first use (a send, or data from the peer): calls that never exchange app data never fetch it.
    this.appData = new LazyAppData(
      {
        clock,
        transmit: (id, bytes) => this.transports.get(id)?.send(bytes) ?? false,
        deliver: (data, info) => host.emit(CallEvent.Data, data, { ...info, participantId: remoteId }),
        onAbandon: (seq, bytes) =>
          host.emit(CallEvent.Error, new CallError('data-lost', `reliable app data message ${seq} (${bytes} bytes) to ${remoteId} unacknowledged after every retransmission: delivery unconfirmed`)),
      },
      (e) => host.emit(CallEvent.Error, new CallError('data-lost', `${e.message} (to ${remoteId})`)),
    );
    this.endpoint = new Endpoint(this.receiver, undefined, this.appData);
    this.decoderSlot = decoder ?? new DecoderSlot();
    this.decoderSlot.handlers = {
      onDecoded: (info) => {
        this.receiver.onFrameDecoded(info.streamId, info.frameId, info.captureUs, info.bytes);
        this.recentDecodesUs[this.recentDecodesHead] = clock.nowUs();
        this.recentDecodesHead = (this.recentDecodesHead + 1) % RECENT_DECODES;
        // The remote video exists from its first decoded frame on.
        const track = this.decoder.track;
        if (track && !this.remoteTrackShown) {
          this.remoteTrackShown = true;
          host.emit(CallEvent.RemoteTrack, track, { participantId: remoteId, streamId: info.streamId, kind: 'video' });
        }
        host.emit(CallEvent.RemoteFrame, { streamId: info.streamId, frameId: info.frameId, captureUs: info.captureUs, participantId: remoteId });
      },
      onNeedKeyframe: (reason) => this.receiver.requestKeyframe(reason),
      onError: (e) => host.emit(CallEvent.Error, new Error(`decoder (${remoteId}): ${e.message}`)),
    };
    this.receiver.on('streamInfo', (info) => {
      this.receivedCodec = info.codec;
      this.decoder.configure(info.codec);
    });
    this.receiver.on('frame', (f) => this.decoder.decode(f));

    const initiator = isOfferer(host.localId, remoteId);
    this.supervisor = new PathSupervisor({
      initiator,
      connectTimeoutMs: opts.connectTimeoutMs,
      backoffBaseMs: opts.restartBackoffMs?.base,
      backoffMaxMs: opts.restartBackoffMs?.max,
      // One generation of a path: its own RTCPeerConnection; its signals carry the generation.
      create: (id, gen) => {
        const t = host.createPath({ pathId: id, initiator, remoteId, onSignal: (data) => host.sendSignal(remoteId, id, { ...data, gen }) });
        this.transports.set(id, t);
        this.selectedPairs.delete(id);
        this.handover?.forget(id);
        t.on('iceRestart', (info) => {
          void this.routeHandover().then((h) => {
            if (this.transports.get(id) === t && !this.closed) h.begin(id, info.local);
          });
        });
        t.on('message', (bytes: Uint8Array, ageUs?: number) => {
          if (this.transports.get(id) === t) this.endpoint.onDatagram(id, bytes, ageUs);
        });
        return t;
      },
      onStatus: (st) => this.onPathStatus(st),
    });
  }

  get decoder(): FrameDecoder {
    return this.decoderSlot.decoder;
  }

  /** Open every path. */
  start(): void {
    for (let id = 0; id < this.host.numPaths; id++) {
      const sink = this.pathSink(id);
      this.receiver.addPath(id, sink);
      this.addSenderPath(id, sink);
      this.supervisor.start(id);
    }
  }

  private onPathStatus(st: PathStatus): void {
    if (this.closed) return;
    const id = st.pathId;
    this.host.emit(CallEvent.PathState, id, st.state, st, this.remoteId);
    const link: EnginePathState = st.state === 'connected' ? 'connected' : st.state === 'closed' ? 'closed' : st.state === 'retrying' ? 'failed' : 'connecting';
    this.linkStates.set(id, link);
    this.appData.setPathUp(id, link === 'connected' && this.isScheduled(id));
    this._sender?.setPathState(id, this.senderState(id));
    this.handover?.onOthersChanged();
    if (st.state === 'connected') {
      void this.refreshPair(id);
      if (!this.connectedEmitted) {
        this.connectedEmitted = true;
        this.host.emit(CallEvent.Connected, { peerId: this.host.localId, remotePeerId: this.remoteId });
        this.host.onFirstConnected(this);
      }
    }
  }

  /** What the sender engine is told about a path's transport (the app's switch goes to `setPathEnabled`). */
  private senderState(id: PathId): EnginePathState {
    return this.linkStates.get(id) ?? 'connecting';
  }

  /**
   * Add a path to the sender engine with its transport state and the app's
   * switch: a disabled path gets nothing scheduled, and is no fault for the
   * engine's hysteresis (SenderEngine.setPathEnabled).
   */
  private addSenderPath(id: PathId, sink: PathSink, sender = this._sender): void {
    if (!sender) return;
    sender.addPath(id, sink, this.senderState(id));
    if (!this.isScheduled(id)) sender.setPathEnabled(id, false);
  }

  /**
   * The engines' view of a path (one per path, shared by the sender and the
   * receiver): whatever transport generation is current. With the option
   * `rtpCarrier`, once its chunk has loaded, behind the stall fallback
   * (src/transport/stall-fallback.ts): the path's media goes on its RTP
   * carrier while its datachannel is stalled, and a switch to the carrier
   * asks the encoder for a key frame (what follows references frames stuck in
   * the channel). The stall time scales with the path's RTT (the sender's SRTT);
   * a stale carrier ceiling is paced up to the path's rate (its `rateBps`).
   */
  private pathSink(id: PathId): PathSink {
    let sink = this.sinks.get(id);
    if (sink) return sink;
    const dc: PathSink = {
      send: (b) => this.transports.get(id)?.send(b) ?? false,
      bufferedAmount: () => this.transports.get(id)?.bufferedAmount() ?? 0,
    };
    let fallback: PathSink | undefined;
    let path: PathState | undefined;
    let pathAtUs = Number.NEGATIVE_INFINITY;
    if (this.host.opts.rtpCarrier !== false)
      import('../transport/stall-fallback.js').then(
        (m) => {
          if (this.closed) return;
          const f = new m.StallFallbackSink({
            datachannel: dc,
            carrier: () => {
              const c = (this.transports.get(id) as { rtpCarrier?: DatagramCarrier | string } | undefined)?.rtpCarrier;
              return typeof c === 'object' ? c : undefined;
            },
            clock: this.host.clock,
            // The sender's view of the path (its SRTT, initial before a sample; its rate), read at most every 100 ms.
            path: () => {
              const now = this.host.clock.nowUs();
              if (now - pathAtUs >= 100_000) {
                pathAtUs = now;
                path = this._sender?.pathStates().find((p) => p.id === id);
              }
              return path;
            },
            onSwitch: (pipe) => pipe === 'carrier' && this.onKeyframeNeeded?.('carrier'),
          });
          this.fallbacks.set(id, f);
          fallback = f;
        },
        // The path keeps its datachannel alone.
        (e) => this.host.emit(CallEvent.Error, new Error(`the RTP carrier's stall fallback of path ${id} did not load: ${e}`)),
      );
    sink =
      this.host.opts.rtpCarrier !== false
        ? { send: (b) => (fallback ?? dc).send(b), bufferedAmount: () => (fallback ?? dc).bufferedAmount(), stalled: () => (fallback ?? dc).stalled?.() ?? dc.bufferedAmount() > DRAIN_BACKLOG_BYTES }
        : dc;
    this.sinks.set(id, sink);
    return sink;
  }

  /** A signal from the remote participant for `pathId` (already vouched for by the signalling client). */
  onSignal(pathId: PathId, data: Record<string, unknown>): void {
    if (this.closed) return;
    // Signals carry the path generation (0 when absent): a newer one restarts our side, an older one is stale.
    const gen = typeof data.gen === 'number' ? data.gen : 0;
    if (!this.supervisor.acceptRemoteGeneration(pathId, gen)) return;
    this.transports.get(pathId)?.signal(data);
  }

  get sender(): SenderEngine | undefined {
    return this._sender;
  }

  /** Any path to this participant connected. */
  get connected(): boolean {
    for (const s of this.linkStates.values()) if (s === 'connected') return true;
    return false;
  }

  /** True when the sender can put a frame on some path now. */
  canSend(): boolean {
    return this._sender?.hasUpPath() ?? false;
  }

  /** Use `sender` for our video towards this participant (replacing the previous one). */
  attachSender(sender: SenderEngine, onKeyframeNeeded: (reason: string) => void): void {
    for (const u of this.senderUnsubscribe) u();
    this._sender = sender;
    this.onKeyframeNeeded = onKeyframeNeeded;
    this.endpoint = new Endpoint(this.receiver, sender, this.appData);
    for (let id = 0; id < this.host.numPaths; id++) {
      if (this.transports.has(id) || this.linkStates.has(id)) this.addSenderPath(id, this.pathSink(id), sender);
    }
    this.targetBps = undefined;
    this.senderUnsubscribe = [
      sender.on('keyframeNeeded', onKeyframeNeeded),
      sender.on('targetBitrate', (bps) => {
        this.targetBps = bps;
        this.host.onTargetBitrate(this);
      }),
      sender.on('pathEvent', (ev) => this.host.emit(CallEvent.PathEvent, ev, this.remoteId)),
    ];
    // The engine may have told a target while its paths were added above, before anyone listened: follow it now.
    this.host.onTargetBitrate(this);
  }

  /** Enable or disable one path towards this participant (see `MultipathCall.setPathEnabled`). */
  setPathEnabled(id: PathId, enabled: boolean): void {
    if (enabled === !this.disabled.has(id)) return;
    if (enabled) this.disabled.delete(id);
    else this.disabled.add(id);
    this.handover?.onOthersChanged();
    this.applyEnabled(id);
  }

  /** The path gets our traffic: the app has not disabled it and no relay switch holds it. */
  private isScheduled(id: PathId): boolean {
    return !this.disabled.has(id) && this.handover?.isHeld(id) !== true;
  }

  /** Tell the sender and the app-data channel whether path `id` is scheduled. */
  private applyEnabled(id: PathId): void {
    const on = this.isScheduled(id);
    this.appData.setPathUp(id, this.linkStates.get(id) === 'connected' && on);
    this._sender?.setPathEnabled(id, on);
  }

  /**
   * Overlay (issue 16): move path `id` onto TURN server `server` by an ICE
   * restart (only where this side is the path's offerer). The restart
   * (`iceRestart` of the transport, here and on the remote side) holds the
   * path out of the schedule until the new pair is selected
   * (src/call/route-handover.ts). @returns whether it started.
   */
  switchRelay(id: PathId, server: RTCIceServer): boolean {
    return this.transports.get(id)?.switchIceServers?.([server], 'relay') === true;
  }

  /** The session's RouteHandover, made at the first ICE restart (its module is loaded then). */
  private routeHandover(): Promise<RouteHandover> {
    this.handoverLoad ??= import('./route-handover.js').then(({ RouteHandover }) => {
      const host = this.host;
      const h = new RouteHandover({
        enabled: host.opts.relayHandover === 'hold',
        selectedPair: async (id) => this.transports.get(id)?.selectedPair(),
        knownPair: (id) => this.selectedPairs.get(id),
        othersUp: (id) => {
          for (const [other, link] of this.linkStates) if (other !== id && link === 'connected' && !this.disabled.has(other) && !h.isHeld(other)) return true;
          return false;
        },
        hold: (id) => this.applyEnabled(id),
        onSwitched: (id, pair) => {
          this.selectedPairs.set(id, pair);
          this._sender?.onPathRouteChanged(id);
          void this.refreshPair(id);
        },
        report: (id, info) => {
          if (info.phase === 'timed-out' && info.local) host.onRelaySwitchFailed?.(id);
          host.emit(CallEvent.RouteSwitch, id, info, this.remoteId);
        },
      });
      this.handover = h;
      return h;
    });
    return this.handoverLoad;
  }

  /** This side offers the paths to this participant (and so drives their relays). */
  get offers(): boolean {
    return isOfferer(this.host.localId, this.remoteId);
  }

  /**
   * A new RTT sample (ms) of path `id`'s selected ICE candidate pair since
   * the last call (its STUN check responses grew), else undefined. Never rejects.
   */
  async freshPairRtt(id: PathId): Promise<number | undefined> {
    const t = this.transports.get(id);
    const pair = t ? await t.selectedPair() : undefined;
    if (!pair || pair.rttMs === undefined || this.closed) return undefined;
    const key = `${pair.id}|${pair.local.address}:${pair.local.port}`;
    const seen = this.rttSeen.get(id);
    this.rttSeen.set(id, { key, responses: pair.rttResponses });
    // Without a responses count every read is taken as a sample.
    if (seen && seen.key === key && pair.rttResponses !== undefined && seen.responses === pair.rttResponses) return undefined;
    return pair.rttMs;
  }

  /** Whether an ICE restart of path `id` is under way (a relay switch). */
  isSwitching(id: PathId): boolean {
    return this.handover?.isSwitching(id) === true;
  }

  isPathEnabled(id: PathId): boolean {
    return !this.disabled.has(id);
  }

  /**
   * Read path `id`'s selected candidate pair (at `connected`, after a route
   * switch, and every {@link PAIR_REREAD_US} from {@link tick}).
   */
  private async refreshPair(id: PathId): Promise<void> {
    const t = this.transports.get(id);
    if (!t || this.closed) return;
    try {
      const pair = await t.selectedPair();
      if (pair && this.transports.get(id) === t) this.selectedPairs.set(id, pair);
    } catch {
      /* stats are best effort */
    }
    const groups = this.samePair();
    const key = JSON.stringify(groups);
    if (groups.length > 0 && key !== this.lastSamePairKey && !this.closed) {
      this.lastSamePairKey = key;
      for (const g of groups) this.host.emit(CallEvent.SamePair, g, this.remoteId);
    }
  }

  /** Same route (local and remote address), not the same socket pair: each RTCPeerConnection has its own ports. */
  private samePair(): PathId[][] {
    return findSharedPairs(
      [...this.selectedPairs].map(([pathId, pair]) => ({ pathId, pair })),
      { ignorePorts: true },
    );
  }

  tick(): void {
    this.endpoint.tick();
    // Connected paths' selected pairs, read again: right after `connected` a browser's stats may not list the
    // pair yet (two CI runs saw one path's missing for the whole call, one of them after 8 reads 250 ms apart),
    // and ICE may move a path to another pair without a restart.
    const now = this.host.clock.nowUs();
    if (now - this.pairsReadUs >= PAIR_REREAD_US) {
      this.pairsReadUs = now;
      for (const [id, link] of this.linkStates) if (link === 'connected') void this.refreshPair(id);
    }
  }

  nextWakeUs(): number {
    return this.endpoint.nextWakeUs();
  }

  /** What getStats() reports about this participant (src/call/stats.ts builds the entries). */
  snapshot(): SessionSnapshot {
    const now = this.host.clock.nowUs();
    let lastSecond = 0;
    for (const t of this.recentDecodesUs) if (now - t <= 1_000_000) lastSecond++;
    let malformed = 0;
    for (const n of Object.values(this.endpoint.malformed) as number[]) malformed += n;
    return {
      participantId: this.remoteId,
      sender: this._sender?.stats(),
      receiver: this.receiver.stats(),
      decoder: this.decoder.stats(),
      decodedFpsLastSecond: lastSecond,
      receivedVideoCodec: this.receivedCodec,
      paths: this.supervisor.statuses().map((st) => {
        const t = this.transports.get(st.pathId);
        return {
          id: st.pathId,
          enabled: !this.disabled.has(st.pathId),
          state: st.state,
          stateReason: st.reason,
          transportState: t?.state,
          connectMs: st.connectMs,
          iceRestarts: st.restarts,
          attempt: st.attempt,
          selectedPair: this.selectedPairs.get(st.pathId),
          bufferedAmount: t?.bufferedAmount() ?? 0,
          rtpCarrier: this.fallbacks.get(st.pathId)?.stats(),
        };
      }),
      samePair: this.samePair(),
      malformedPackets: malformed,
      appData: this.appData.stats(),
      audioOutput: this.audio.stats(),
    };
  }

  /** Close the paths and the decoder; idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.handover?.close();
    for (const u of this.senderUnsubscribe) u();
    this.supervisor.close();
    for (const [id, t] of this.transports) {
      t.close();
      this._sender?.removePath(id);
      this.receiver.removePath(id);
      this.appData.removePath(id);
    }
    this.transports.clear();
    this.decoder.close();
    this.audio.close();
  }
}
