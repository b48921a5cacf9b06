/**
 * Public types of {@link import('./multipath-call.js').MultipathCall}: its
 * events, options, statistics and error.
 */
import type { Clock } from '../core/clock.js';
import type { CodecName, PathId } from '../core/types.js';
import type { CameraEncoderStats, FrameDecoderStats } from '../codec/webcodecs.js';
import type { DegradationPreference } from '../adapt/ladder.js';
import type { PlayoutOptions } from '../feedback/playout.js';
import type { AppDataInfo, AppDataStats } from '../engine/app-data.js';
import type { SenderEngine, SenderEngineConfig } from '../engine/sender.js';
import type { ReceiverStats, SenderStats } from '../engine/types.js';
import type { FecPolicyName } from '../fec/types.js';
import type { PathEvent } from '../sched/path-manager.js';
import type { SchedulerName } from '../sched/types.js';
import type { ParsedCandidate } from '../transport/candidates.js';
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
  Data = 'data',
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
  /**
   * App data from the remote peer (`MultipathCall.send`): a string when it
   * sent a string, else bytes. `info.reliable` says which service carried it
   * (reliable messages arrive exactly once and in order), `info.pathId` the
   * path it arrived on.
   */
  [CallEvent.Data]: (data: Uint8Array | string, info: AppDataInfo) => void;
  [CallEvent.Error]: (err: Error) => void;
  [CallEvent.Closed]: () => void;
}

export interface MultipathCallOptions {
  /** ws:// or wss:// URL of the signalling server. */
  signallingUrl: string;
  room: string;
  peerId?: string;
  /** Room credential sent with the join (e.g. from the app server's `signRoomToken`); required when the server runs with `authorize`. */
  token?: string;
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
   * Fault handling of the sender (SenderEngineConfig): path
   * demotion with hysteresis, fast failover, rate restore after a total
   * outage. Default: the engine's (path hysteresis on, fast failover off, restore 'total').
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
  decoder: FrameDecoderStats;
  paths: CallPathInfo[];
  /** Groups of paths that ended on the same candidate pair. */
  samePair: PathId[][];
  /** How local candidates were split over the paths. */
  candidatePolicy: string;
  malformed: Record<string, number>;
  estimators?: ReturnType<SenderEngine['estimatorStats']>;
  /** App data counters (`send` / {@link CallEvent.Data}): messages and bytes sent, received, retransmitted, dropped. */
  appData: AppDataStats;
}

/** Options of {@link import('./multipath-call.js').MultipathCall.send}. */
export interface SendDataOptions {
  /**
   * true (default): delivered exactly once and in order, retransmitted on the
   * best path until acknowledged. false: sent once on the lowest-RTT path up,
   * may be lost or arrive out of order.
   */
  reliable?: boolean;
}

/** Error with a stable code. */
export class CallError extends Error {
  constructor(
    readonly code: 'already-connected' | 'not-connected' | 'bad-options' | 'closed' | 'data-too-large' | 'data-window-full' | 'data-lost' | 'bad-data',
    message: string,
  ) {
    super(message);
    this.name = 'CallError';
  }
  static badOptions(msg: string): CallError {
    return new CallError('bad-options', msg);
  }
}
