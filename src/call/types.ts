/**
 * Public types of {@link import('./multipath-call.js').MultipathCall}: its
 * events, options and error (its statistics: ./stats-types.ts).
 */
import type { Clock } from '../core/clock.js';
import type { CodecName, PathId } from '../core/types.js';
import type { DegradationPreference } from '../adapt/ladder.js';
import type { PlayoutOptions } from '../feedback/playout.js';
import type { AppDataInfo } from '../engine/app-data.js';
import type { SenderEngineConfig } from '../engine/sender.js';
import type { EstimatorEntry, EstimatorName } from '../cc/registry.js';
import type { FecPolicyEntry } from '../fec/factory.js';
import type { FecPolicyName } from '../fec/types.js';
import type { SchedulerEntry } from '../sched/factory.js';
import type { PathEvent } from '../sched/path-manager.js';
import type { SchedulerName } from '../sched/types.js';
import type { ParsedCandidate } from '../transport/candidates.js';
import type { PathLifecycleState, PathStatus } from '../transport/path-supervisor.js';
import type { RouteSwitchInfo } from './route-handover.js';
import type { RelaySelectionOption } from './relay-selection-config.js';
import type { SignallingTransport, SignallingTransportFactory } from '../signalling/transport.js';

/** Events of a call (register before connect()). */
export enum CallEvent {
  Connected = 'connected',
  ParticipantJoined = 'participant-joined',
  ParticipantLeft = 'participant-left',
  PathState = 'path-state',
  PathEvent = 'path-event',
  SamePair = 'same-pair',
  RemoteTrack = 'remote-track',
  RemoteFrame = 'remote-frame',
  Data = 'data',
  SignallingState = 'signalling-state',
  RouteSwitch = 'route-switch',
  Error = 'error',
  Closed = 'closed',
}

export interface CallEventMap {
  /**
   * The first path to a remote participant connected: once per participant
   * (a participant that leaves and rejoins is a new one). `peerId` is this
   * participant's own id, `remotePeerId` the other one's.
   */
  [CallEvent.Connected]: (info: { peerId: string; remotePeerId: string }) => void;
  /** The signalling server announced a participant in the room (its paths start now). */
  [CallEvent.ParticipantJoined]: (participantId: string) => void;
  /** A participant left the room (or its socket closed): its paths, engines and remote track are gone. */
  [CallEvent.ParticipantLeft]: (participantId: string) => void;
  /**
   * A path to `participantId` changed state: `connecting` (first attempt or a
   * restart), `connected`, `retrying` (down; a restart follows after the
   * backoff) or `closed`; `status.reason` says why
   * (src/transport/path-supervisor.ts `PathStateReason`), `status.attempt`
   * counts restarts since it was last up.
   */
  [CallEvent.PathState]: (pathId: PathId, state: PathLifecycleState, status: PathStatus, participantId: string) => void;
  /** The sender's path manager's view (up, down, enabled by the scheduler) of a path to `participantId`. */
  [CallEvent.PathEvent]: (event: PathEvent, participantId: string) => void;
  /** Paths to `participantId` that ended on the same route (local and remote address). */
  [CallEvent.SamePair]: (pathIds: PathId[], participantId: string) => void;
  /**
   * The video of a remote participant, from its first decoded frame on: once
   * per participant and stream (`info.streamId`; 0 = the camera).
   */
  [CallEvent.RemoteTrack]: (track: MediaStreamTrack, info: RemoteTrackInfo) => void;
  [CallEvent.RemoteFrame]: (info: { streamId: number; frameId: number; captureUs: number; participantId: string }) => void;
  /**
   * App data from a remote participant (`MultipathCall.send`): a string when
   * it sent a string, else bytes. `info.reliable` says which service carried
   * it (reliable messages arrive exactly once and in order per sender),
   * `info.pathId` the path it arrived on, `info.participantId` who sent it.
   */
  [CallEvent.Data]: (data: Uint8Array | string, info: CallDataInfo) => void;
  /**
   * The signalling connection: 'connected' (joined, also after a
   * reconnect), 'reconnecting' (the socket closed under the call: attempt n
   * follows after `info.delayMs`; media goes on over the paths that are up),
   * 'disconnected' (no more attempts: `reconnect: false`, or
   * `maxAttempts` failed; a CallError 'signalling-lost' follows).
   */
  [CallEvent.SignallingState]: (state: 'connected' | 'reconnecting' | 'disconnected', info: SignallingStateInfo) => void;
  /**
   * An ICE restart moves a path to `participantId` onto another route (a
   * relay switch, `MultipathCall.switchRelay`, ours or the remote side's):
   * 'started' (held out of the schedule when another path is up:
   * `info.held`), then 'switched' (new pair selected: `info.pair`,
   * `info.elapsedMs`) or 'timed-out' (no new pair within 5 s; the path
   * is scheduled again anyway). src/call/route-handover.ts.
   */
  [CallEvent.RouteSwitch]: (pathId: PathId, info: RouteSwitchInfo, participantId: string) => void;
  [CallEvent.Error]: (err: Error) => void;
  [CallEvent.Closed]: () => void;
}

export interface MultipathCallOptions {
  /**
   * ws:// or wss:// URL of the bundled signalling server (`multipath-rtc/server`):
   * the call uses the bundled WebSocket client. Give this or `signalling`.
   */
  signallingUrl?: string;
  /**
   * The app's own signalling (src/signalling/transport.ts): a
   * {@link SignallingTransport} over its backend, or a function making a
   * fresh one per join. With a function the call rejoins through a new
   * transport when one closes under it (`reconnect`); with an instance it
   * cannot, and reports signalling lost. Give this or `signallingUrl`.
   */
  signalling?: SignallingTransport | SignallingTransportFactory;
  room: string;
  peerId?: string;
  /** Room credential sent with the join (e.g. from the app server's `signRoomToken`); required when the server runs with `authorize`. */
  token?: string;
  /** Number of paths (default 2, at most 8). */
  paths?: number;
  codec?: CodecName;
  /**
   * The multipath scheduler (default 'converge'): a registered name, or an
   * entry from `multipath-rtc/strategies` (`import { lola } from
   * 'multipath-rtc/strategies'`; one instance is made per remote
   * participant). Only 'converge' is registered from the start; register
   * others with `registerScheduler(lola)` to use their names. An unknown
   * name throws CallError 'bad-options' in the constructor.
   */
  scheduler?: SchedulerName | SchedulerEntry;
  /** With scheduler 'single': the path to use. */
  singlePath?: PathId;
  /**
   * The FEC policy (default 'path'; 'none' also registered): a registered
   * name or an entry (`webrtcTableFec` of `multipath-rtc/strategies`). An
   * unknown name throws CallError 'bad-options' in the constructor.
   */
  fec?: FecPolicyName | FecPolicyEntry;
  /**
   * The per-path bandwidth estimator (default 'gcc'): a registered name or
   * an entry (src/cc/registry.ts). An unknown name throws CallError
   * 'bad-options' in the constructor.
   */
  estimator?: EstimatorName | EstimatorEntry;
  /** Force a key frame at least this often (ms); default: only on request (PLI, new path). */
  keyframeIntervalMs?: number;
  /** Act on the receiver's QoE feedback (Converge §4.2, default true). */
  qoeFeedback?: boolean;
  /** App cap on the video bitrate (bps, default 6 Mbps). */
  maxBitrateBps?: number;
  startBitrateBps?: number;
  mtuBytes?: number;
  /**
   * Fault handling of the sender (SenderEngineConfig): path
   * demotion with hysteresis, fast failover, rate restore after a total
   * outage, a clean return ending a path's probation, how long a strong
   * path is kept through a feedback gap (ms), and a key frame after a
   * path's blackhole. Default: the engine's (path hysteresis on, fast
   * failover on, restore 'total', cleanReturn true, gapKeepMs 1000,
   * blackholeKeyframe true).
   */
  faultHandling?: Pick<SenderEngineConfig, 'pathHysteresis' | 'fastFailover' | 'outageRestore' | 'cleanReturn' | 'gapKeepMs' | 'blackholeKeyframe'>;
  /**
   * The sender's per-path pacer (SenderEngineConfig.pacer): `burstMs` lets a
   * frame leave as one burst (libwebrtc pacing_controller.cc send burst
   * interval, 40 ms there), `pacingFactor` scales the pacing rate over the
   * path's target (libwebrtc 2.5). Default: the engine's (no burst, 1.5).
   */
  pacer?: SenderEngineConfig['pacer'];
  /**
   * The microphone's Opus encoding follows the paths' rate (SenderEngineConfig.audioRate,
   * src/engine/audio-rate.ts): 32 kbps / 20 ms frames, 24 kbps / 40 ms or 12 kbps / 60 ms
   * as the rate falls. `false`: 32 kbps / 20 ms always. Default on.
   */
  audioRate?: SenderEngineConfig['audioRate'];
  /**
   * Stamp each media packet's send time (what the bandwidth estimator's
   * delay gradient and RTT use) when it leaves the RTCDataChannel's SCTP
   * buffer for the network, read from `bufferedAmount` (bytes), not when it
   * is written into the channel (SenderEngineConfig.departureTimes). A
   * backlog in that buffer then no longer reads as queueing on the path.
   * libwebrtc stamps the send time when the socket takes the packet
   * (call/rtp_transport_controller_send.cc OnSentPacket). Default false:
   * on a lossy path SCTP's own window limits the rate, and that backlog,
   * timed at the write, was what held the estimate down (simulator,
   * `--datachannel sctp+rtp`, loss-sweep 1 % loss: frozen 3.5 -> 22 s).
   */
  departureTimes?: boolean;
  /**
   * ICE servers (STUN / TURN) for all paths, or per path (e.g. a TURN relay
   * on path 1 only, so one path survives a blocked direct route). Passed to
   * each path's RTCPeerConnection as `iceServers`; a TURN entry needs
   * `username` and `credential` (use short-lived credentials from your app
   * server). With per-path servers set `candidates: 'all'`.
   */
  iceServers?: RTCIceServer[] | ((pathId: PathId) => RTCIceServer[]);
  /**
   * Overlay (issue 16): candidate TURN relays. With them, the offerer of
   * each path reaches the other peer through exactly one relay
   * (`iceTransportPolicy: 'relay'`; path i starts on relay i mod n; `iceServers`
   * is not used on those paths) and `MultipathCall.switchRelay` moves a path
   * to another relay by an ICE restart. Give the same list on both sides.
   */
  relays?: RTCIceServer[];
  /**
   * What a path does during an ICE restart (a relay switch, either side's):
   * 'none' (default) keeps sending on it (the old pair carries it until the
   * browser selects the new one); 'hold' takes it out of the sender's
   * schedule while another path is up, until the new candidate pair is
   * selected (at most 5 s), so the other paths carry the frames. 'hold' did
   * not shorten the freeze around a switch in the browser benchmark
   * (`npm run bench:relays`; src/call/route-handover.ts says why).
   */
  relayHandover?: 'hold' | 'none';
  /**
   * Let the call choose each path's relay (needs `relays`): 'ucb' is the
   * discounted UCB of Zhang & Lei §3.2 over each path's ICE round-trip time,
   * deciding every second and switching a path at most once per 10 s
   * (src/call/relay-selection.ts); or an object with `intervalMs`,
   * `minDwellMs`, `relaysOf` (the relays each path may use) and `ucb`
   * tuning. The side that offers the paths (the lower participant id)
   * decides. Default: none (the app calls `switchRelay`).
   */
  relaySelection?: RelaySelectionOption;
  /** App-given filter of local candidates per path; overrides `candidates`. */
  candidateFilter?: (candidate: ParsedCandidate, pathId: PathId) => boolean;
  /**
   * Serve every path's RTCDataChannel from a dedicated worker
   * (src/transport/datachannel-worker.ts), so that datagram arrival times,
   * which the remote sender's GCC delay-based detector reads, are stamped off
   * this page's busy main thread (libwebrtc stamps them on its network
   * thread). Needs `worker-src blob:` (or `script-src blob:`) if the page has a
   * CSP; where the browser cannot transfer a channel, that path stays on the
   * main thread. Default false.
   */
  datachannelWorker?: boolean;
  /**
   * Give every path a second, acknowledgement-free pipe next to its
   * datachannel: an RTP carrier (our datagrams bundled into VP8 frames through
   * `RTCRtpScriptTransform`, src/transport/rtp-carrier.ts) that the path's
   * media uses while its datachannel is stalled (SCTP sends only what SACKs on
   * the reverse direction allow, so a dead downlink stops the uplink's media;
   * src/transport/stall-fallback.ts decides). **On by default** (attach
   * 'stall'); `false` turns it off. Chromium only: elsewhere
   * (`rtpCarrierUnsupported`: Firefox, Safari) the path keeps its datachannel
   * alone, and a peer negotiates the carrier only with a remote that said it
   * has one (SimplePeerPath.remoteRtpCarrier), so a Chromium <-> Firefox call
   * never offers it. `attach` (src/transport/rtp-carrier.ts
   * `RtpCarrierOptions.attach`): when a path negotiates the carrier's video
   * transceiver: 'stall' (the default) at its datachannel's first stall
   * (nothing negotiated, no worker or track until then), 'connect' (also
   * `true`; both peers must then opt in) at connect. Browser benchmark, AT&T
   * alone (docs/results.md, stop 34): frozen 19.0 s off, ~13 s with either.
   */
  rtpCarrier?: boolean | { attach?: 'connect' | 'stall' };
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
  /**
   * Signalling reconnect: when the signalling socket closes under a running
   * call (server restart, network change), the call rejoins the room under
   * its own id with backoff and jitter ({@link ReconnectPolicy}; default 10
   * attempts over about a minute); media keeps flowing on the paths already
   * up meanwhile, and the sessions are kept. `false`: no reconnect. Bad
   * values throw CallError 'bad-options' in the constructor.
   */
  reconnect?: ReconnectPolicy | false;
  /**
   * A participant the signalling server reports gone (or that is not back
   * after a reconnect) while a path to it is still up may only have lost its
   * signalling: its session is kept until no path is up or this long (ms,
   * default 30000) has passed without it being announced again.
   */
  participantGraceMs?: number;
  /** Restart backoff (ms): first delay and cap (default 1000 and 30000). */
  restartBackoffMs?: { base: number; max: number };
  /** Clock (default performance-based µs). Use an epoch-based clock to compare capture and decode times across pages. */
  clock?: Clock;
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
   * `scalabilityMode` of getStats()'s video `outbound-rtp` entries says what is in use.
   */
  temporalLayers?: number;
}

/** Second argument of {@link CallEvent.SignallingState}. */
export interface SignallingStateInfo {
  /** Reconnect attempt (1-based; 0 for the first join). */
  attempt: number;
  /** Why the socket went (close code, or the last attempt's error). */
  reason?: string;
  /** Wait before this attempt (ms). */
  delayMs?: number;
}

/**
 * Signalling reconnect policy (`MultipathCallOptions.reconnect`): attempt n
 * waits `reconnectDelayMs(n, baseDelayMs, maxDelayMs)`: 0 for the first,
 * then base x 2^(n-2) capped at max, half of it random.
 */
export interface ReconnectPolicy {
  /** Attempts before giving up (default 10). */
  maxAttempts?: number;
  /** Backoff base (ms, default 500). */
  baseDelayMs?: number;
  /** Backoff cap (ms, default 10000). */
  maxDelayMs?: number;
}

/** Second argument of {@link CallEvent.RemoteTrack}. */
export interface RemoteTrackInfo {
  participantId: string;
  streamId: number;
  kind: 'video' | 'audio';
}

/** Second argument of {@link CallEvent.Data}. */
export interface CallDataInfo extends AppDataInfo {
  participantId: string;
}

/** One remote participant (`MultipathCall.participants`). */
export interface ParticipantInfo {
  id: string;
  /** At least one path to it is connected. */
  connected: boolean;
  /** Its video (MediaStreamTrackGenerator), once its first frame was decoded. */
  videoTrack: MediaStreamTrack | undefined;
}

/** Options of {@link import('./multipath-call.js').MultipathCall.send}. */
export interface SendDataOptions {
  /**
   * true (default): delivered exactly once and in order, retransmitted on the
   * best path until acknowledged. false: sent once on the lowest-RTT path up,
   * may be lost or arrive out of order.
   */
  reliable?: boolean;
  /** Send to this participant only (default: every participant in the call). */
  to?: string;
}

/**
 * Codes of {@link CallError}: 'join-refused' (the signalling server refused
 * the join: room full, unauthorized, id taken; the message has the server's
 * code), 'signalling-failed' (no connection to the signalling URL),
 * 'unknown-path' / 'unknown-participant' (an id the call does not have),
 * 'too-many-participants' (a participant beyond {@link MAX_PARTICIPANTS} was ignored),
 * 'unsupported-track' (a track kind `sendTrack` cannot send),
 * 'signalling-lost' (every signalling reconnect attempt failed; the media paths that are up go on).
 */
export type CallErrorCode =
  | 'already-connected'
  | 'not-connected'
  | 'bad-options'
  | 'closed'
  | 'data-too-large'
  | 'data-window-full'
  | 'data-lost'
  | 'bad-data'
  | 'join-refused'
  | 'signalling-failed'
  | 'unknown-path'
  | 'unknown-participant'
  | 'too-many-participants'
  | 'unsupported-track'
  | 'signalling-lost';

/** Remote participants a call keeps sessions with (a room holds at most 8 peers on the bundled server). */
export const MAX_PARTICIPANTS = 15;

/** Error with a stable code. */
export class CallError extends Error {
  constructor(
    readonly code: CallErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'CallError';
  }
  static badOptions(msg: string): CallError {
    return new CallError('bad-options', msg);
  }
}
