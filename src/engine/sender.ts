/**
 * The sender side of one multipath stream, I/O-free: packetize an encoded
 * frame, schedule its packets over the paths (Converge §4.1 or a baseline),
 * add path-specific FEC (Converge §4.3), pace each path (its GCC rate), answer
 * NACKs from a bounded history and keyframe requests, and tell the encoder its
 * target bitrate (uncoupled congestion control, Converge §4.1:
 * min(sum S_i, app max)).
 *
 * The browser and the simulator drive the same object: they feed encoded frames
 * with {@link SenderEngine.sendFrame}, control packets from the receiver with
 * {@link SenderEngine.onControl}, and call {@link SenderEngine.tick} at (or
 * after) {@link SenderEngine.nextWakeUs}.
 */
import { integerClock } from '../core/clock.js';
import type { Clock } from '../core/clock.js';
import { seqDiff } from '../core/seq.js';
import { MAX_PATHS, Priority } from '../core/types.js';
import type { Assignment, OutgoingPacket, PathId, PathState, QoeFeedback } from '../core/types.js';
import { GccEstimator } from '../cc/gcc.js';
import { Pacer } from '../cc/pacer.js';
import { GccProber } from '../cc/probe-controller.js';
import type { ProbeCluster } from '../cc/types.js';
import type { BandwidthEstimator } from '../cc/types.js';
import { createFecPolicy } from '../fec/factory.js';
import type { FecPolicy, FecPolicyName } from '../fec/types.js';
import { FecProtectionWindow } from '../fec/window.js';
import { makeFecPackets } from '../fec/xor.js';
import { createScheduler } from '../sched/factory.js';
import { PathHysteresis, type PathHysteresisConfig } from '../sched/path-hysteresis.js';
import { PathHealth, type PathHealthConfig } from './path-health.js';
import { PathManager } from '../sched/path-manager.js';
import { deliveryRateBps } from '../sched/path-util.js';
import type { PathEvent } from '../sched/path-manager.js';
import type { Scheduler, SchedulerName } from '../sched/types.js';
import { encodeControl, encodeFec, encodePacket } from '../wire/codec.js';
import { Packetizer } from '../wire/packetizer.js';
import type { EncodedFrameInput } from '../wire/packetization.js';
import type { PacketBody, StreamInfoMessage } from '../wire/types.js';
import type { PathLinkState, PathSink, SenderPathStats, SenderStats } from './types.js';
import { RateMeter } from './rate-meter.js';

export interface SenderEngineConfig {
  clock: Clock;
  streamId?: number;
  /** Scheduler strategy or name (default 'converge'). */
  scheduler?: Scheduler | SchedulerName;
  /** For scheduler 'single': the path to use. */
  singlePath?: PathId;
  /** FEC policy or name (default 'path'). */
  fec?: FecPolicy | FecPolicyName;
  /** Whole-datagram MTU in bytes (default 1200). */
  mtuBytes?: number;
  /** App cap on the encoder target (bps, default 8 Mbps). */
  maxBitrateBps?: number;
  /** Floor of the encoder target (bps, default 150 kbps). */
  minBitrateBps?: number;
  /** Initial per-path rate (bps, default 1 Mbps). */
  startBitrateBps?: number;
  /** Factory for a per-path estimator (default GCC). */
  createEstimator?: (pathId: PathId) => BandwidthEstimator;
  /** NACK history per stream in packets (default 4096). */
  historyPackets?: number;
  /** StreamInfo repeat interval (ms, default 1000). */
  streamInfoIntervalMs?: number;
  /**
   * Act on the receiver's QoE feedback (Converge §4.2; default true). False
   * gives the "Converge without feedback" baseline of Converge Table 4.
   */
  qoeFeedback?: boolean;
  /** Bandwidth probing for the default GCC estimators (default true). */
  probing?: boolean;
  /** Pacer tuning. */
  pacer?: { bufferBudgetMs?: number; maxQueueDelayMs?: number; pacingFactor?: number };
  /**
   * Frame dropping before encoding ({@link SenderEngine.shouldDropFrame}):
   * drop a delta frame when every usable path's sender queue (pacer +
   * bufferedAmount) takes longer than this many frame intervals to drain at
   * the path's rate. 0 = never drop. Default 3.
   */
  dropQueueFrames?: number;
  /** Longest run of frames dropped in a row before one is let through (default 3). */
  maxConsecutiveDrops?: number;
  /**
   * Temporal layers: a frame that would be an upper-layer frame is dropped
   * before encoding once the queues exceed this fraction of `dropQueueFrames`
   * (0..1, default 1 = the same threshold as base-layer frames). Below 1,
   * upper-layer frames go first under pushback; nothing depends on them.
   */
  upperLayerDropFactor?: number;
  /**
   * Congestion-window pushback of the encoder target (libwebrtc
   * congestion_window_pushback_controller.cc; default true).
   */
  cwndPushback?: boolean;
  /**
   * Demote a path that fails or loses heavily, promote it back only after
   * it stayed clean for a hold that doubles per recent fault
   * (src/sched/path-hysteresis.ts; issue 11). A fault is a failure (a
   * silence past the path's learned threshold whose packets turned out
   * lost, a transport that is not connected, or 2 s without a report) or
   * random loss above 15 % sustained over 3 loss windows at the path's base
   * RTT (src/engine/path-health.ts): an LTE uplink's delay stalls and
   * congestion drops are not faults. A demoted path carries no media and
   * does not count in the encoder target; padding every 50 ms keeps its RTT
   * and loss measured. Never demotes the last usable path. true = defaults,
   * an object = tuned, false = off. Default true: on the cellular suite
   * (3 seeds, converge total freeze) tune 23.8 -> 21.7 s, check 18.3 ->
   * 16.7 s, no pair below 0.95x its best single path's goodput; lossy-path
   * 2.1 -> 0.24 s (path 1 alone: 0), flap 3.3 -> 1.4 s, `carriers` 1.2 ->
   * 0.65 s at 0.98x the goodput.
   */
  pathHysteresis?: boolean | Partial<PathHysteresisConfig>;
  /**
   * Fast failover (issue 11): a path is suspect once it has been silent (no
   * receiver report while packets are outstanding) for its learned silence
   * threshold (PathHealth.silenceThresholdUs: max(100 ms, 2 x SRTT, 1.25 x
   * the 99th percentile of its recent report gaps)) instead of max(250 ms,
   * 2 x SRTT + 100 ms) while another enabled path is up and reporting, and
   * once per silence past that threshold its unreported media (frames since
   * the newest key frame, at most 1 s old) is duplicated onto the best other
   * usable path if it drains there within 150 ms at that path's rate; else
   * a key frame is asked for at once. Default false: with the hysteresis it
   * meets flap (0.42 s vs 0 for path 1 alone) and takes failover's longest
   * freeze to 249-321 ms, but on the mahimahi LTE pairs (3 pairs x 3 seeds)
   * it costs 1-4 s of freeze in 8 of 9 runs even when it fires only 4-6
   * times a call: moving or duplicating one LTE path's load onto the other,
   * which runs near its capacity, congests it. Each part alone (the early
   * suspect, the duplicates) loses there too.
   */
  fastFailover?: boolean;
  /**
   * When a path's reports resume after an outage (>= 700 ms of silence),
   * probe it at the rate it had and let the result restore its estimate
   * (GccEstimator.onPathRestored). 'total': only when no other path carried
   * the call meanwhile (both/all paths were down: the encoder target is back
   * within an RTT or two instead of GCC's 8%/s climb); 'any': for every
   * returning path; 'off': never. Default 'total' ('any' lost on the
   * cellular suite: a WiFi path that returns for a moment and fades again
   * took load back too fast).
   */
  outageRestore?: 'total' | 'any' | 'off';
  /**
   * Tuning of the learned silence threshold and the sustained-loss rule
   * (src/engine/path-health.ts) that fast failover and the hysteresis use.
   */
  pathHealth?: Partial<PathHealthConfig>;
}

/** Events the engine reports to its owner. */
export interface SenderEvents {
  /** The encoder should produce a key frame (PLI or a new path). */
  keyframeNeeded: (reason: string) => void;
  /** The encoder target changed by more than 5% (bps). */
  targetBitrate: (bps: number) => void;
  /** Path lifecycle (path manager) and scheduler enable/disable. */
  pathEvent: (event: PathEvent) => void;
}

interface QueuedItem {
  priority: Priority;
  sizeBytes: number;
  packet: OutgoingPacket;
  probe: boolean;
}

interface PathEntry {
  id: PathId;
  sink: PathSink;
  estimator: BandwidthEstimator;
  pacer: Pacer<QueuedItem>;
  pathSeq: number;
  linkState: PathLinkState;
  lastKeepaliveUs: number;
  /** Send time (µs) of the oldest packet not yet covered by a receiver report; undefined when all are. */
  unreportedSinceUs: number | undefined;
  /** Bandwidth probing (GCC estimators only): clusters to send, the one being sent. */
  prober: GccProber | undefined;
  probeStarted: boolean;
  probeQueue: ProbeCluster[];
  probe: { cluster: ProbeCluster; packets: number; bytes: number; nextUs: number } | undefined;
  /** Suspect or down at the last check (see probeOnFailover). */
  failedOver: boolean;
  /** A probe to send after another path failed (see probeOnFailover). */
  failoverProbe: { targetBps: number; dueUs: number; left: number } | undefined;
  /** The path's rate (bps) when it last went silent, and when (µs): restored when its reports resume (see restoreAfterOutage). */
  rateAtFailure: { bps: number; atUs: number } | undefined;
  /** Recent loss for the hysteresis (see recentLoss): estimator counters at the window start, and the last window's loss fraction. */
  lossWindow: { atUs: number; lost: number; received: number; rate: number; graceUntilUs: number };
  /** Datachannel drain measurement (see measureDrain). */
  drain: { sinceUs: number; sentBytes: number; buffered: number; rateBps: number | undefined; backlogged: boolean };
  stats: Omit<SenderPathStats, 'id' | 'up' | 'enabled' | 'demoted' | 'sharePct' | 'rateBps' | 'goodputBps' | 'rttMs' | 'minRttMs' | 'lossPct' | 'queuedBytes' | 'sendRateBps'>;
  sendRate: RateMeter;
}

interface HistoryEntry {
  flowSeq: number;
  body: Uint8Array;
  sizeBytes: number;
  frameId: number;
  priority: Priority;
  nalClass: number;
  pathId: PathId;
  sentUs: number;
  rtxCount: number;
  lastRtxUs: number;
}

const MAX_RTX_PER_PACKET = 3;
const KEEPALIVE_INTERVAL_US = 100_000;
/** PLIs within this long (or 2 x RTT) of the last key frame are answered by it (µs). */
const KEYFRAME_MIN_INTERVAL_US = 500_000;
/** Longest key frame transmit time the sender coalesces requests for (µs). */
const MAX_KEYFRAME_TX_US = 3_000_000;
/** No retransmission for a packet first sent longer ago than this (µs). */
const MAX_RTX_AGE_US = 1_000_000;
/** No retransmission onto a path whose queue holds more than this (ms at its rate). */
const MAX_RTX_QUEUE_MS = 300;
/** Padding bytes of a probe packet (about a full packet with the envelope). */
const PROBE_PADDING_BYTES = 1150;
/** A probe waits while the datachannel holds more than this (bytes). */
const PROBE_MAX_BUFFERED_BYTES = 64_000;
/** A failover probe waits until the path's queue is below this (bytes). */
const FAILOVER_PROBE_MAX_QUEUE_BYTES = 6_000;
/** Datachannel drain measurement interval (µs) and the backlog that makes it count (bytes). */
const DRAIN_INTERVAL_US = 100_000;
const DRAIN_BACKLOG_BYTES = 4_000;
/** Lowest rate a path is given (bps). */
const MIN_PATH_RATE_BPS = 50_000;
/** Congestion-window pushback: update spacing (libwebrtc process interval, 25 ms). */
const PUSHBACK_INTERVAL_US = 25_000;
/** ... accepted queue added to the RTT in the data window (libwebrtc CongestionWindowConfig default, ms). */
const PUSHBACK_QUEUE_MS = 350;
/** ... smallest data window (bytes; libwebrtc kMinCwndBytes 2 x 1500). */
const PUSHBACK_MIN_WINDOW_BYTES = 3000;
/** ... floor of the ratio (the encoder target is floored at minBitrateBps anyway). */
const PUSHBACK_MIN_RATIO = 0.1;
/** Padding interval on a demoted path (µs): its loss and RTT stay measured. */
const DEMOTED_PADDING_INTERVAL_US = 50_000;
/** Padding bytes on a demoted path. */
const DEMOTED_PADDING_BYTES = 100;
/** Loss window of the hysteresis: at least this long (µs) and this many resolved packets. */
const LOSS_WINDOW_US = 250_000;
const LOSS_WINDOW_PACKETS = 20;
/** Fast failover: the duplicates (with the surviving path's queue) must drain at its rate within this (ms). */
const FAILOVER_DUPLICATE_BUDGET_MS = 150;
/** Hysteresis: a silence this long (µs) is a fault even before its packets are known lost. */
const FAILURE_SILENCE_US = 2_000_000;
/**
 * Only a silence this long (µs, from turning suspect to reports resuming) is
 * an outage whose losses are not congestion: GCC's feedback timeout cuts
 * after 1 s. Shorter gaps on a lossy or fading path are its congestion signal.
 */
const OUTAGE_MIN_US = 700_000;
/** A path silent for longer than this (µs) has forgotten its rate: it restarts from its current estimate. */
const OUTAGE_RATE_MEMORY_US = 10_000_000;
/** After an outage, loss is not congestion for max(this, 2 x SRTT + 200 ms) after reports resume (µs). */
const OUTAGE_LOSS_GRACE_US = 500_000;
/** Envelope bytes around an FEC body (path id, seq, send time, field tag and length). */
const FEC_ENVELOPE_BYTES = 24;

/** See the module comment. */
export class SenderEngine {
  readonly streamId: number;
  private readonly clock: Clock;
  private readonly scheduler: Scheduler;
  private readonly fec: FecPolicy;
  private readonly packetizer: Packetizer;
  /** A path with no receiver report for 500 ms while data was sent on it is down. */
  private readonly pathManager = new PathManager({ downAfterMs: 500 });
  /** Media packets per path not yet covered by FEC (Converge §4.3 protects per path). */
  private readonly fecWindow = new FecProtectionWindow();
  private readonly paths = new Map<PathId, PathEntry>();
  private readonly history: (HistoryEntry | undefined)[];
  private readonly cfg: Required<Omit<SenderEngineConfig, 'clock' | 'scheduler' | 'fec' | 'singlePath' | 'createEstimator' | 'pacer' | 'streamId' | 'qoeFeedback' | 'probing' | 'pathHysteresis' | 'pathHealth'>>;
  /** Path demotion with hysteresis (config.pathHysteresis), undefined when off. */
  private readonly hysteresis: PathHysteresis | undefined;
  /** Learned silence threshold and sustained loss per path (fault-handling hooks). */
  private readonly health: PathHealth;
  private readonly createEstimator: (pathId: PathId) => BandwidthEstimator;
  private readonly pacerCfg: SenderEngineConfig['pacer'];
  private listeners: Partial<SenderEvents> = {};
  private streamInfo: StreamInfoMessage | undefined;
  private lastStreamInfoUs = -Infinity;
  private lastTargetBps = 0;
  private fecSeq = 0;
  private lastQoeSeq = -1;
  private lastKeyFrameId = 0;
  private lastKeyFrameUs = -Infinity;
  /** Transmit time of the last key frame at the encoder target (µs). */
  private lastKeyFrameTxUs = 0;
  private readonly useQoeFeedback: boolean;
  private readonly probing: boolean;
  private fps = 30;
  /** CongestionWindowPushbackController's encoding_rate_ratio (0..1]. */
  private pushbackRatio = 1;
  private lastPushbackUs = -Infinity;
  private consecutiveDrops = 0;
  /** Last tick (µs) at which no path was up and reporting (see restoreAfterOutage). */
  private lastTotalOutageUs = -Infinity;
  private readonly c = {
    framesSent: 0,
    keyframesSent: 0,
    bytesSent: 0,
    keyframeRequestsReceived: 0,
    nacksReceived: 0,
    retransmissionsSent: 0,
    retransmissionsUnavailable: 0,
    retransmissionsTooOld: 0,
    retransmissionsSkipped: 0,
    fecPacketsSent: 0,
    mediaPacketsSent: 0,
    qoeFeedbackReceived: 0,
    qoeFeedbackIgnored: 0,
    keyframeRequestsSuppressed: 0,
    framesDroppedBeforeEncode: 0,
    stalePacketsPurged: 0,
    pathRestores: 0,
    failoverDuplicates: 0,
    failoverKeyframes: 0,
  };

  constructor(config: SenderEngineConfig) {
    this.clock = integerClock(config.clock);
    this.streamId = config.streamId ?? 0;
    this.scheduler =
      typeof config.scheduler === 'object'
        ? config.scheduler
        : createScheduler(config.scheduler ?? 'converge', { singlePath: config.singlePath });
    this.fec = typeof config.fec === 'object' ? config.fec : createFecPolicy(config.fec ?? 'path');
    this.cfg = {
      mtuBytes: config.mtuBytes ?? 1200,
      maxBitrateBps: config.maxBitrateBps ?? 8_000_000,
      minBitrateBps: config.minBitrateBps ?? 150_000,
      startBitrateBps: config.startBitrateBps ?? 1_000_000,
      historyPackets: config.historyPackets ?? 4096,
      streamInfoIntervalMs: config.streamInfoIntervalMs ?? 1000,
      dropQueueFrames: config.dropQueueFrames ?? 3,
      maxConsecutiveDrops: config.maxConsecutiveDrops ?? 3,
      upperLayerDropFactor: config.upperLayerDropFactor ?? 1,
      cwndPushback: config.cwndPushback ?? true,
      fastFailover: config.fastFailover ?? false,
      outageRestore: config.outageRestore ?? 'total',
    };
    const h = config.pathHysteresis ?? true;
    this.hysteresis = h === false ? undefined : new PathHysteresis(h === true ? {} : h);
    this.health = new PathHealth(config.pathHealth);
    for (const k of ['dropQueueFrames', 'maxConsecutiveDrops'] as const) {
      const v = this.cfg[k];
      if (!(Number.isFinite(v) && v >= 0)) throw new RangeError(`SenderEngine: ${k} must be a finite number >= 0, got ${v}`);
    }
    if (!(this.cfg.upperLayerDropFactor >= 0 && this.cfg.upperLayerDropFactor <= 1)) {
      throw new RangeError(`SenderEngine: upperLayerDropFactor must be in [0, 1], got ${this.cfg.upperLayerDropFactor}`);
    }
    this.packetizer = new Packetizer({ mtuBytes: this.cfg.mtuBytes, streamId: this.streamId });
    this.history = new Array(this.cfg.historyPackets);
    this.createEstimator =
      config.createEstimator ??
      (() => new GccEstimator({ startBps: this.cfg.startBitrateBps, maxBps: this.pathMaxBps() }));
    this.pacerCfg = config.pacer;
    this.useQoeFeedback = config.qoeFeedback ?? true;
    this.probing = config.probing ?? true;
  }

  /** Ceiling of one path's estimate (bps): above the app cap, so a path can carry the whole stream. */
  private pathMaxBps(): number {
    return Math.max(this.cfg.maxBitrateBps * 1.5, 2_000_000);
  }

  get schedulerName(): SchedulerName {
    return this.scheduler.name;
  }

  get fecPolicyName(): FecPolicyName {
    return this.fec.name;
  }

  /** Register a handler (one per event; a later call replaces it). */
  on<K extends keyof SenderEvents>(event: K, handler: SenderEvents[K]): void {
    this.listeners[event] = handler;
  }

  /**
   * Add a path with the sink its packets go to.
   * @throws RangeError for an id outside [0, MAX_PATHS) or one already added.
   */
  addPath(pathId: PathId, sink: PathSink, state: PathLinkState = 'connected'): void {
    if (!Number.isInteger(pathId) || pathId < 0 || pathId >= MAX_PATHS) throw new RangeError(`path id ${pathId} outside [0, ${MAX_PATHS})`);
    if (this.paths.has(pathId)) throw new RangeError(`path ${pathId} already added`);
    const now = this.clock.nowUs();
    const estimator = this.createEstimator(pathId);
    const pacer = new Pacer<QueuedItem>(estimator.targetRateBps(), {
      // A small floor: on a slow path 15 kB in the datachannel would be most of a second.
      minBufferBudgetBytes: 6_000,
      ...(this.pacerCfg?.bufferBudgetMs !== undefined ? { bufferBudgetMs: this.pacerCfg.bufferBudgetMs } : {}),
      ...(this.pacerCfg?.maxQueueDelayMs !== undefined ? { maxQueueDelayMs: this.pacerCfg.maxQueueDelayMs } : {}),
      ...(this.pacerCfg?.pacingFactor !== undefined ? { pacingFactor: this.pacerCfg.pacingFactor } : {}),
    });
    this.paths.set(pathId, {
      id: pathId,
      sink,
      estimator,
      pacer,
      pathSeq: 0,
      linkState: state,
      lastKeepaliveUs: -Infinity,
      unreportedSinceUs: undefined,
      prober: estimator instanceof GccEstimator && this.probing ? new GccProber({ maxBps: this.pathMaxBps(), alrIntervalMs: 5000 }) : undefined,
      probeStarted: false,
      probeQueue: [],
      probe: undefined,
      failedOver: false,
      failoverProbe: undefined,
      rateAtFailure: undefined,
      lossWindow: { atUs: now, lost: 0, received: 0, rate: 0, graceUntilUs: -Infinity },
      drain: { sinceUs: now, sentBytes: 0, buffered: 0, rateBps: undefined, backlogged: false },
      stats: {
        packetsSent: 0,
        bytesSent: 0,
        mediaPacketsSent: 0,
        fecPacketsSent: 0,
        retransmissionsSent: 0,
        probesSent: 0,
        pacerDropped: 0,
        sendFailures: 0,
        keyframePacketsSent: 0,
        spsPacketsSent: 0,
        ppsPacketsSent: 0,
      },
      sendRate: new RateMeter(1_000_000),
    });
    this.pathManager.addPath(pathId, now);
    this.pathManager.onTransportState(pathId, state, now);
    this.lastStreamInfoUs = -Infinity; // announce the stream on the new path soon
  }

  /** Remove a path; its queued packets are dropped (NACK recovers them). */
  removePath(pathId: PathId): void {
    if (!this.paths.delete(pathId)) return;
    this.hysteresis?.remove(pathId);
    this.health.remove(pathId);
    this.pathManager.removePath(pathId, this.clock.nowUs());
  }

  /** Transport state change of a path (ICE connected, failed, closed). Unknown paths are ignored. */
  setPathState(pathId: PathId, state: PathLinkState): void {
    const p = this.paths.get(pathId);
    if (!p) return;
    p.linkState = state;
    this.pathManager.onTransportState(pathId, state, this.clock.nowUs());
  }

  /** Describe the stream (codec, size, frame rate); repeated to the receiver every second. */
  setStreamInfo(info: Omit<StreamInfoMessage, 'streamId'>): void {
    this.streamInfo = { ...info, streamId: this.streamId };
    if (info.fps > 0) this.fps = info.fps;
    this.lastStreamInfoUs = -Infinity;
  }

  /** Up and reporting (not suspect). */
  private isLive(p: PathEntry, now: number): boolean {
    return this.pathManager.isUp(p.id) && !this.isSuspect(p, now);
  }

  /** Demoted by the hysteresis while another live, enabled, not demoted path can carry the call. */
  private isDemoted(p: PathEntry, now: number): boolean {
    const h = this.hysteresis;
    if (!h?.isDemoted(p.id)) return false;
    for (const q of this.paths.values()) {
      if (q !== p && !h.isDemoted(q.id) && this.scheduler.isEnabled(q.id) && this.isLive(q, now)) return true;
    }
    return false;
  }

  /** Live, enabled by the scheduler and not demoted: a path that carries media and counts in the encoder target. */
  private isUsable(p: PathEntry, now: number): boolean {
    return this.isLive(p, now) && this.scheduler.isEnabled(p.id) && !this.isDemoted(p, now);
  }

  /** Encoder target (bps): min(sum S_i over up, not suspect, enabled and not demoted paths, app max), floored. */
  targetBitrateBps(): number {
    const now = this.clock.nowUs();
    let sum = 0;
    for (const p of this.paths.values()) {
      if (this.isUsable(p, now)) sum += this.pathRateBps(p);
    }
    // Packets the scheduler moves between paths (Converge Eq. 2) must not overload the receiving path.
    const f = this.scheduler.encoderRateFraction?.() ?? 1;
    if (f > 0 && f < 1) sum *= f;
    // Congestion-window pushback (libwebrtc CongestionWindowPushbackController).
    if (this.pushbackRatio < 1) sum *= this.pushbackRatio;
    return Math.max(this.cfg.minBitrateBps, Math.min(this.cfg.maxBitrateBps, sum));
  }

  /**
   * Update the congestion-window pushback ratio, at most every 25 ms (the
   * libwebrtc process interval). Following libwebrtc
   * modules/congestion_controller/goog_cc/congestion_window_pushback_controller.cc
   * (facts, our code): data window = sum over usable paths of S_i x (SRTT_i +
   * 350 ms accepted queue); fill = (bytes in flight + bytes queued at the
   * sender) / window; fill > 1.5 -> ratio x 0.9, > 1 -> x 0.95, < 0.1 -> 1,
   * else x 1.05 (at most 1).
   */
  private updatePushback(now: number): void {
    if (!this.cfg.cwndPushback || now - this.lastPushbackUs < PUSHBACK_INTERVAL_US) return;
    this.lastPushbackUs = now;
    let windowBytes = 0;
    let bytes = 0;
    for (const p of this.paths.values()) {
      if (!this.isUsable(p, now)) continue;
      windowBytes += (this.pathRateBps(p) * (p.estimator.srttMs() + PUSHBACK_QUEUE_MS)) / 8000;
      bytes += p.estimator.inflightBytes() + p.pacer.queuedBytes() + p.sink.bufferedAmount();
    }
    if (windowBytes <= 0) return;
    const fill = bytes / Math.max(windowBytes, PUSHBACK_MIN_WINDOW_BYTES);
    let r = this.pushbackRatio;
    if (fill > 1.5) r *= 0.9;
    else if (fill > 1) r *= 0.95;
    else if (fill < 0.1) r = 1;
    else r *= 1.05;
    this.pushbackRatio = Math.min(1, Math.max(PUSHBACK_MIN_RATIO, r));
  }

  /**
   * Ask before encoding a camera frame: true = skip it (counted in
   * `framesDroppedBeforeEncode`). A delta frame is dropped when every usable
   * path's sender queue (pacer + bufferedAmount) would take more than
   * `dropQueueFrames` frame intervals to drain at the path's rate: the frame
   * would only be late and delay the next ones (libwebrtc
   * modules/video_coding/utility/frame_dropper.cc drops on a leaky bucket of
   * encoded bytes vs target for the same reason). A key frame is never
   * dropped, nor more than `maxConsecutiveDrops` frames in a row.
   * @param temporalLayer the layer the frame would be encoded in (temporal
   *   layers; undefined = none): an upper-layer frame is dropped at
   *   `upperLayerDropFactor` x the queue budget.
   */
  shouldDropFrame(keyFrame: boolean, temporalLayer?: number): boolean {
    if (keyFrame || this.cfg.dropQueueFrames <= 0) {
      this.consecutiveDrops = 0;
      return false;
    }
    const now = this.clock.nowUs();
    const frames = this.cfg.dropQueueFrames * (temporalLayer !== undefined && temporalLayer > 0 ? this.cfg.upperLayerDropFactor : 1);
    const budgetMs = (frames * 1000) / Math.max(1, this.fps);
    let minDrainMs = Infinity;
    for (const p of this.paths.values()) {
      if (!this.isUsable(p, now)) continue;
      const rate = Math.max(MIN_PATH_RATE_BPS, this.pathRateBps(p));
      const drainMs = ((p.pacer.queuedBytes() + p.sink.bufferedAmount()) * 8000) / rate;
      if (drainMs < minDrainMs) minDrainMs = drainMs;
    }
    if (minDrainMs > budgetMs && Number.isFinite(minDrainMs) && this.consecutiveDrops < this.cfg.maxConsecutiveDrops) {
      this.consecutiveDrops++;
      this.c.framesDroppedBeforeEncode++;
      return true;
    }
    this.consecutiveDrops = 0;
    return false;
  }

  /**
   * A path whose reports stopped (packets sent more than max(250 ms, 2 x SRTT
   * + 100 ms) ago are still unreported) is suspect: schedulers stop using it
   * at once, before the path manager declares it down, so a blackhole costs
   * a few hundred ms of media, not a second.
   */
  private isSuspect(p: PathEntry, now: number): boolean {
    if (p.unreportedSinceUs === undefined) return false;
    const age = now - p.unreportedSinceUs;
    const srttUs = p.estimator.srttMs() * 1000;
    if (age > Math.max(250_000, 2 * srttUs + 100_000)) return true;
    // Fast failover: only when another path could take over (alone, a lossy slow path
    // has report gaps of 2 x SRTT all the time and would only lose its encoder target).
    if (!this.cfg.fastFailover || !this.isSilent(p, now)) return false;
    for (const q of this.paths.values()) {
      if (q === p || !this.pathManager.isUp(q.id) || !this.scheduler.isEnabled(q.id)) continue;
      if (!this.isSilent(q, now)) return true;
    }
    return false;
  }

  /** Fault-handling hook: silent for longer than the path's learned threshold (PathHealth.silenceThresholdUs). */
  private isSilent(p: PathEntry, now: number): boolean {
    return p.unreportedSinceUs !== undefined && now - p.unreportedSinceUs > this.health.silenceThresholdUs(p.id, p.estimator.srttMs());
  }

  /** Snapshot of the paths as the scheduler sees them. */
  pathStates(): PathState[] {
    const now = this.clock.nowUs();
    const out: PathState[] = [];
    for (const p of this.paths.values()) {
      const e = p.estimator;
      out.push({
        id: p.id,
        up: this.isLive(p, now) && !this.isDemoted(p, now),
        rateBps: this.pathRateBps(p),
        goodputBps: e.ackedRateBps() ?? 0,
        srttMs: e.srttMs(),
        minRttMs: e.minRttMs(),
        lossRate: e.lossRate(),
        inflightBytes: e.inflightBytes(),
        queuedBytes: p.pacer.queuedBytes() + p.sink.bufferedAmount(),
      });
    }
    return out;
  }

  /**
   * Packetize, schedule and queue one encoded frame. Returns the number of
   * packets queued (media + FEC + probes); 0 when no path is up.
   */
  sendFrame(frame: EncodedFrameInput): number {
    const now = this.clock.nowUs();
    const frags = this.packetizer.packetize(frame);
    this.c.framesSent++;
    if (frame.keyFrame) {
      this.c.keyframesSent++;
      this.lastKeyFrameId = frame.frameId;
      this.lastKeyFrameUs = now;
      this.lastKeyFrameTxUs = Math.min(MAX_KEYFRAME_TX_US, (frame.data.length * 8e6) / Math.max(1, this.targetBitrateBps()));
      // A key frame never waits behind frames it makes useless: drop this
      // stream's queued frame packets (media, retransmissions, FEC) of older frames.
      const sid = this.streamId;
      for (const p of this.paths.values()) {
        this.c.stalePacketsPurged += p.pacer.purge((it) => !it.probe && it.packet.streamId === sid && it.packet.frameId !== frame.frameId);
      }
    }
    const layer = frame.temporalLayer;
    const packets: OutgoingPacket[] = frags.map((f) => ({
      streamId: this.streamId,
      flowSeq: f.flowSeq,
      frameId: f.frameId,
      priority: f.priority,
      nalClass: f.nalClass,
      sizeBytes: f.sizeBytes,
      body: f.body,
      // Temporal layers: the scheduler gives the base layer the better path (ConvergeConfig.baseLayerFastPath).
      ...(layer !== undefined ? { temporalLayer: layer } : {}),
    }));
    const states = this.pathStates();
    const media = this.scheduler.schedule(packets, states, now);
    let queued = this.enqueue(media, now, true);

    // Path-specific FEC (Converge §4.3): per path, over the packets it carried
    // since that path's last FEC packet (fractional FEC rates emit one FEC
    // packet every few frames, covering all of them).
    if (this.fec.name !== 'none') {
      const perPath = new Map<PathId, { count: number; bytes: number }>();
      for (const a of media) {
        if (a.probe) continue;
        this.fecWindow.push(a.pathId, a.packet.flowSeq, a.packet.body, now);
        const e = perPath.get(a.pathId) ?? { count: 0, bytes: 0 };
        e.count++;
        e.bytes += a.packet.sizeBytes;
        perPath.set(a.pathId, e);
      }
      const fecPackets: OutgoingPacket[] = [];
      for (const [pathId, e] of perPath) {
        const st = states.find((s) => s.id === pathId);
        if (!st) continue;
        const ctx = {
          pathId,
          mediaCount: e.count,
          isKeyframe: frame.keyFrame,
          lossRate: st.lossRate,
          rttMs: st.srttMs,
          rateBps: st.rateBps,
          fps: this.fps,
          frameBytes: e.bytes,
        };
        const count = this.fec.fecCount(ctx, now);
        if (count <= 0) continue;
        const fecs = makeFecPackets({
          streamId: this.streamId,
          packets: this.fecWindow.take(pathId, now),
          count,
          mask: this.fec.maskKind?.(ctx) ?? 'random',
          protectsPath: pathId,
          firstFecSeq: this.fecSeq,
        });
        this.fecSeq = (this.fecSeq + fecs.length) >>> 0;
        for (const f of fecs) {
          const body = encodeFec(f);
          fecPackets.push({
            streamId: this.streamId,
            flowSeq: f.baseSeq,
            frameId: frame.frameId,
            priority: Priority.Fec,
            nalClass: 0,
            sizeBytes: body.length + FEC_ENVELOPE_BYTES,
            body,
            isFec: true,
            protectsPath: pathId,
          });
        }
      }
      if (fecPackets.length > 0) queued += this.enqueue(this.scheduler.schedule(fecPackets, states, now), now, false);
    }
    // Remember what was sent for NACKs (first send's path).
    for (const a of media) {
      if (a.probe) continue;
      const p = a.packet;
      this.history[p.flowSeq % this.history.length] = {
        flowSeq: p.flowSeq,
        body: p.body,
        sizeBytes: p.sizeBytes,
        frameId: p.frameId,
        priority: p.priority,
        nalClass: p.nalClass,
        pathId: a.pathId,
        sentUs: now,
        rtxCount: 0,
        lastRtxUs: -Infinity,
      };
    }
    this.flush(now);
    return queued;
  }

  private enqueue(assignments: Assignment[], now: number, isMedia: boolean): number {
    let n = 0;
    for (const a of assignments) {
      const p = this.paths.get(a.pathId);
      if (!p) continue;
      const item: QueuedItem = { priority: a.packet.priority, sizeBytes: a.packet.sizeBytes, packet: a.packet, probe: a.probe === true };
      if (!p.pacer.enqueue(item, now)) {
        p.stats.pacerDropped++;
        continue;
      }
      if (isMedia && !a.probe && !a.packet.isRetransmission) {
        p.stats.mediaPacketsSent++;
        this.c.mediaPacketsSent++;
      }
      n++;
    }
    return n;
  }

  /**
   * A control packet from the receiver (report, NACK, keyframe request, QoE
   * feedback). Other kinds are ignored. `viaPath` is the path it arrived on.
   */
  onControl(body: PacketBody, viaPath: PathId): void {
    const now = this.clock.nowUs();
    switch (body.kind) {
      case 'report': {
        const r = body.report;
        const p = this.paths.get(r.pathId);
        if (!p) return;
        const gapUs = p.unreportedSinceUs === undefined ? undefined : now - p.unreportedSinceUs;
        const before = lossCounters(p.estimator);
        const srttBeforeMs = p.estimator.srttMs(); // the threshold the silence was judged by
        // Restore first: this report already says what the silence lost.
        if (p.failedOver || this.isSuspect(p, now) || !this.pathManager.isUp(p.id)) this.restoreAfterOutage(p, now);
        p.estimator.onReport(r, now);
        this.pathManager.onReport(r.pathId, now);
        if (r.fcdUs !== undefined) this.scheduler.onFcd?.(r.fcdUs / 1000, now);
        p.unreportedSinceUs = undefined;
        this.learnGap(p, now, gapUs, before, srttBeforeMs);
        if (p.prober && p.estimator instanceof GccEstimator) {
          // The path is application-limited when it sends well below its estimate:
          // periodic probes then keep the estimate real (else an idle path's GCC
          // cannot grow and its Eq. 1 share shrinks for good).
          p.prober.setApplicationLimited(p.sendRate.rateBps(now) < 0.6 * p.estimator.targetRateBps());
          for (const c of p.prober.onReport(r, now, p.estimator)) if (p.probeQueue.length < 8) p.probeQueue.push(c);
        }
        break;
      }
      case 'nack':
        if (body.nack.streamId === this.streamId) this.onNack(body.nack.flowSeqs, now);
        break;
      case 'keyframeRequest':
        if (body.keyframeRequest.streamId !== this.streamId) return;
        this.c.keyframeRequestsReceived++;
        // A key frame already sent within max(500 ms, 2 x RTT) answers this PLI too:
        // on a congested path, key frames on every PLI only deepen the congestion.
        // It is also still in flight while its own transmit time (at the encoder target) plus an RTT has not passed.
        if (now - this.lastKeyFrameUs < Math.max(KEYFRAME_MIN_INTERVAL_US, 2000 * this.minSrttMs(), this.lastKeyFrameTxUs + 1000 * this.minSrttMs())) {
          this.c.keyframeRequestsSuppressed++;
          return;
        }
        this.listeners.keyframeNeeded?.('pli');
        break;
      case 'qoe':
        this.onQoe(body.qoe, now);
        break;
      default:
        void viaPath;
    }
  }

  private onQoe(fb: QoeFeedback, now: number): void {
    if (fb.seq === this.lastQoeSeq) return; // the same feedback arrives once per path
    this.lastQoeSeq = fb.seq;
    this.c.qoeFeedbackReceived++;
    if (!this.useQoeFeedback) return;
    // The receiver judges "late" against the lowest-delay path; if that path carries
    // little (its rate is low), the packets of the path that carries the frame look
    // late. Taking packets off our fast path (Algorithm 1: least completion time)
    // is never right, so negative feedback naming it is dropped (counted).
    if (fb.alpha < 0 && fb.pathId === this.fastPathId()) {
      this.c.qoeFeedbackIgnored++;
      return;
    }
    this.scheduler.onQoeFeedback(fb, now);
  }

  private onNack(seqs: readonly number[], now: number): void {
    this.c.nacksReceived += seqs.length;
    const rtx: OutgoingPacket[] = [];
    const nacksPerPath = new Map<PathId, number>();
    let minRtt = Infinity;
    for (const p of this.paths.values()) if (this.pathManager.isUp(p.id)) minRtt = Math.min(minRtt, p.estimator.srttMs());
    const guardUs = (Number.isFinite(minRtt) ? minRtt : 100) * 1000 * 0.75;
    for (const seq of seqs) {
      const h = this.history[seq % this.history.length];
      if (!h || h.flowSeq !== seq) {
        this.c.retransmissionsUnavailable++;
        continue;
      }
      // The same NACK arrives on every path; answer once per RTT, a few times at most,
      // and not for packets whose frame is long past any playout deadline.
      if (h.rtxCount >= MAX_RTX_PER_PACKET || now - h.lastRtxUs < guardUs) continue;
      if (now - h.sentUs > MAX_RTX_AGE_US || seqDiff(this.lastKeyFrameId, h.frameId) < 0) {
        // Too old, or from before the newest key frame (which no longer needs it).
        this.c.retransmissionsTooOld++;
        continue;
      }
      if (h.rtxCount === 0) nacksPerPath.set(h.pathId, (nacksPerPath.get(h.pathId) ?? 0) + 1);
      rtx.push(this.retransmission(h, now));
    }
    for (const [pathId, n] of nacksPerPath) this.fec.onNack(pathId, n, now);
    if (rtx.length === 0) return;
    const assignments = this.scheduler.schedule(rtx, this.pathStates(), now);
    for (const a of assignments) {
      const p = this.paths.get(a.pathId);
      if (!p || a.probe) continue;
      // A retransmission behind more than MAX_RTX_QUEUE_MS of queue arrives too late to help
      // and adds to the congestion that probably lost the packet: skip it.
      const drainBps = Math.max(1, p.pacer.pacingRateBps());
      if (((p.pacer.queuedBytes() + p.sink.bufferedAmount()) * 8 * 1000) / drainBps > MAX_RTX_QUEUE_MS) {
        this.c.retransmissionsSkipped++;
        continue;
      }
      if (p.pacer.enqueue({ priority: Priority.Retransmission, sizeBytes: a.packet.sizeBytes, packet: a.packet, probe: false }, now)) {
        p.stats.retransmissionsSent++;
        this.c.retransmissionsSent++;
      }
    }
    this.flush(now);
  }

  /** A history entry as a retransmission packet (counts the attempt). */
  private retransmission(h: HistoryEntry, now: number): OutgoingPacket {
    h.rtxCount++;
    h.lastRtxUs = now;
    return {
      streamId: this.streamId,
      flowSeq: h.flowSeq,
      frameId: h.frameId,
      priority: Priority.Retransmission,
      nalClass: h.nalClass,
      sizeBytes: h.sizeBytes,
      body: h.body, // same bytes: FEC parity and the receiver's dedup stay valid
      isRetransmission: true,
    };
  }

  /** Periodic work: pacing, estimator clocks, path liveness, stream info. */
  tick(): void {
    const now = this.clock.nowUs();
    for (const p of this.paths.values()) p.estimator.onTick(now);
    this.probeOnFailover(now);
    if (this.hysteresis) {
      for (const p of this.paths.values()) {
        let bestRtt = Infinity;
        for (const q of this.paths.values()) if (q !== p && this.isUsable(q, now)) bestRtt = Math.min(bestRtt, q.estimator.srttMs());
        const rttExcessMs = Number.isFinite(bestRtt) ? p.estimator.srttMs() - bestRtt : undefined;
        // Fault-handling hook: a failure (a silence that lost its packets, or a dead
        // transport, or a silence past FAILURE_SILENCE_US), loss sustained over several
        // windows. A delay stall (an LTE uplink's report gap, packets delivered late) is not a fault.
        const lossRate = this.recentLoss(p, now);
        const silent =
          this.health.takeFailure(p.id) || p.linkState !== 'connected' || (p.unreportedSinceUs !== undefined && now - p.unreportedSinceUs > FAILURE_SILENCE_US);
        this.hysteresis.update(p.id, now, { silent, lossRate, sustainedLossRate: this.health.sustainedLoss(p.id), rttExcessMs });
      }
    }
    for (const ev of this.pathManager.tick(now, this.scheduler)) {
      if (ev.type === 'path-up') this.lastStreamInfoUs = -Infinity; // announce the stream on it at once
      this.listeners.pathEvent?.(ev);
    }
    this.sendKeepalives(now);
    if (this.streamInfo && now - this.lastStreamInfoUs >= this.cfg.streamInfoIntervalMs * 1000) {
      // Only counts as announced once some path carried it.
      if (this.broadcastControl({ kind: 'streamInfo', streamInfo: this.streamInfo }) > 0) this.lastStreamInfoUs = now;
    }
    this.updatePushback(now);
    const target = this.targetBitrateBps();
    if (Math.abs(target - this.lastTargetBps) > 0.05 * Math.max(1, this.lastTargetBps)) {
      this.lastTargetBps = target;
      this.listeners.targetBitrate?.(target);
    }
    this.flush(now);
  }

  /**
   * Bandwidth probing (libwebrtc probe_controller.cc / bitrate_prober.cc): a
   * cluster is a burst of padding packets at its target rate; the receiver's
   * report of their arrival gives the path's capacity (ProbeBitrateEstimator),
   * which raises GCC at once instead of at 8%/s. Clusters start when a path
   * first comes up and follow GccProber's "probe further" and ALR rules.
   */
  private sendProbes(p: PathEntry, now: number): void {
    if (!p.prober || !this.pathManager.isUp(p.id)) return;
    this.maybeFailoverProbe(p, now);
    if (!p.probeStarted) {
      p.probeStarted = true;
      p.probeQueue.push(...p.prober.start(now, p.estimator.targetRateBps()));
    }
    for (let guard = 0; guard < 64; guard++) {
      if (!p.probe) {
        const cluster = p.probeQueue.shift();
        if (!cluster) return;
        p.probe = { cluster, packets: 0, bytes: 0, nextUs: now };
      }
      const pr = p.probe;
      if (pr.nextUs > now) return;
      if (p.sink.bufferedAmount() > PROBE_MAX_BUFFERED_BYTES) {
        pr.nextUs = now + 2_000;
        return;
      }
      const pathSeq = p.pathSeq;
      p.pathSeq = (p.pathSeq + 1) >>> 0;
      const bytes = encodeControl({ pathId: p.id, pathSeq, sendTimeUs: now }, { kind: 'padding', padding: { size: PROBE_PADDING_BYTES } });
      if (!p.sink.send(bytes)) {
        p.probe = undefined;
        return;
      }
      p.estimator.onPacketSent({ pathSeq, sizeBytes: bytes.length, sendTimeUs: now });
      p.prober.onPacketSent(pr.cluster.id, pathSeq, bytes.length, now);
      this.pathManager.onDataSent(p.id, now);
      if (p.unreportedSinceUs === undefined) p.unreportedSinceUs = now;
      p.stats.packetsSent++;
      p.stats.bytesSent += bytes.length;
      p.stats.probesSent++;
      p.sendRate.add(now, bytes.length);
      pr.packets++;
      pr.bytes += bytes.length;
      if (pr.packets >= pr.cluster.minPackets && pr.bytes >= pr.cluster.minBytes) {
        p.probe = undefined;
        continue;
      }
      pr.nextUs += Math.max(1, Math.round((bytes.length * 8e6) / pr.cluster.targetBps));
    }
  }

  /**
   * When a path turns suspect (or down) the others must carry its load, but
   * their GCC estimates sit at the rate they were app-limited to. Probe each
   * remaining path at 2 x its estimate plus the lost path's rate, once per
   * failover, so the encoder target recovers within an RTT.
   */
  private probeOnFailover(now: number): void {
    let lostBps = 0;
    const silent: PathEntry[] = [];
    for (const p of this.paths.values()) {
      const gone = !this.pathManager.isUp(p.id) || this.isSuspect(p, now);
      if (gone && !p.failedOver) {
        lostBps += p.estimator.targetRateBps();
        p.rateAtFailure = { bps: p.estimator.targetRateBps(), atUs: now };
      }
      p.failedOver = gone;
      // Fault-handling hook: duplicate once per silence, when it outlasts the path's learned threshold
      // (a bursty LTE uplink turns suspect by the fixed rule long before that, and its packets arrive).
      if (this.cfg.fastFailover && p.unreportedSinceUs !== undefined && this.health.failoverDue(p.id, p.unreportedSinceUs, now, p.estimator.srttMs())) silent.push(p);
    }
    for (const p of silent) this.duplicateUnreported(p, now);
    // A total outage: no path is up and reporting (a path the scheduler merely disabled still could carry the call).
    let anyLive = false;
    for (const p of this.paths.values()) if (this.isLive(p, now)) anyLive = true;
    if (!anyLive && this.paths.size > 0) this.lastTotalOutageUs = now;
    if (lostBps <= 0) return;
    for (const p of this.paths.values()) {
      if (p.failedOver || !p.prober) continue;
      // Probe once the burst of rerouted packets has drained (a probe into a
      // standing queue measures the queue, and GCC ignores results while it
      // sees overuse); retry a few times while the estimate stays low.
      p.failoverProbe = { targetBps: Math.min(this.pathMaxBps(), 2 * p.estimator.targetRateBps() + lostBps), dueUs: now + 200_000, left: 3 };
    }
  }

  /**
   * Loss fraction of the path over the last window of >= LOSS_WINDOW_US
   * and >= LOSS_WINDOW_PACKETS resolved packets (from the estimator's
   * counters), for the hysteresis: the estimator's own lossRate() is a slow
   * EWMA (a demoted path that carries only padding would need tens of
   * seconds to prove itself) and would count an outage's losses. Windows
   * restart at the end of an outage's loss grace.
   */
  private recentLoss(p: PathEntry, now: number): number {
    const w = p.lossWindow;
    if (now - w.atUs < LOSS_WINDOW_US) return w.rate;
    const st = p.estimator.stats() as { packetsLost?: number; packetsReceived?: number };
    if (st.packetsLost === undefined || st.packetsReceived === undefined) return p.estimator.lossRate();
    const lost = st.packetsLost - w.lost;
    const n = lost + st.packetsReceived - w.received;
    if (now < w.graceUntilUs) {
      w.rate = 0;
    } else if (n < LOSS_WINDOW_PACKETS) {
      return w.rate;
    } else {
      w.rate = Math.min(1, Math.max(0, lost / n));
    }
    this.health.onLossWindow(p.id, w.rate, p.estimator.srttMs(), p.estimator.minRttMs());
    w.atUs = now;
    w.lost = st.packetsLost;
    w.received = st.packetsReceived;
    return w.rate;
  }

  /**
   * Fast failover (config.fastFailover): path `p` just went silent. Its
   * media sent since shortly before its last report (in flight then, or
   * sent after) is probably stuck in it; duplicate it (frames since the
   * newest key frame, at most MAX_RTX_AGE_US old, oldest first) onto the
   * usable path with the least completion time, if they (with what its
   * queue holds already) drain at its rate within FAILOVER_DUPLICATE_BUDGET_MS;
   * else ask for a key frame at once instead. The originals stay where they are (a slow path may
   * still deliver them; the receiver drops duplicates). Our addition, in the
   * spirit of MPTCP's opportunistic retransmission (Raiciu et al., "How
   * Hard Can It Be? Designing and Implementing a Deployable Multipath TCP",
   * NSDI 2012, §4.2).
   */
  private duplicateUnreported(p: PathEntry, now: number): void {
    let q: PathEntry | undefined;
    let best = Infinity;
    for (const c of this.paths.values()) {
      if (c === p || !this.isUsable(c, now)) continue;
      const rate = Math.max(MIN_PATH_RATE_BPS, this.pathRateBps(c));
      const cpt = ((c.pacer.queuedBytes() + c.sink.bufferedAmount() + 12_000) * 8e6) / rate + c.estimator.srttMs() * 500;
      if (cpt < best) {
        best = cpt;
        q = c;
      }
    }
    if (!q) return;
    const lastReport = p.estimator.lastReportUs() ?? p.unreportedSinceUs ?? now;
    const from = Math.max(lastReport - p.estimator.srttMs() * 1000, now - MAX_RTX_AGE_US);
    const picked: HistoryEntry[] = [];
    for (const h of this.history) {
      if (!h || h.pathId !== p.id || h.sentUs < from || h.rtxCount >= MAX_RTX_PER_PACKET) continue;
      if (seqDiff(this.lastKeyFrameId, h.frameId) < 0) continue;
      picked.push(h);
    }
    if (picked.length === 0) return;
    picked.sort((a, b) => seqDiff(b.flowSeq, a.flowSeq)); // oldest first
    // The duplicates must reach the receiver before the frames behind them expire
    // in q's pacer. If they do not fit, the reference chain breaks anyway: a key
    // frame now is the faster way out (and nothing is duplicated).
    const total = picked.reduce((a, h) => a + h.sizeBytes, 0);
    const budget = (Math.max(MIN_PATH_RATE_BPS, this.pathRateBps(q)) * FAILOVER_DUPLICATE_BUDGET_MS) / 8000 - q.pacer.queuedBytes() - q.sink.bufferedAmount();
    if (total > budget) {
      this.c.failoverKeyframes++;
      this.listeners.keyframeNeeded?.('failover');
      return;
    }
    for (const h of picked) {
      const packet = this.retransmission(h, now);
      if (!q.pacer.enqueue({ priority: Priority.Retransmission, sizeBytes: h.sizeBytes, packet, probe: false }, now)) break;
      q.stats.retransmissionsSent++;
      this.c.retransmissionsSent++;
      this.c.failoverDuplicates++;
    }
  }

  /**
   * Fault-handling hook (report arrival): feed the report gap and the share
   * of the packets this report declared lost to PathHealth.onReport.
   */
  private learnGap(p: PathEntry, now: number, gapUs: number | undefined, before: { lost: number; received: number } | undefined, srttMs: number): void {
    const after = lossCounters(p.estimator);
    let lostFraction = 0;
    if (before && after) {
      const lost = after.lost - before.lost;
      const n = lost + after.received - before.received;
      if (n > 0) lostFraction = lost / n;
    }
    this.health.onReport(p.id, now, gapUs, lostFraction, srttMs);
  }

  /**
   * Reports of a path that had gone silent resumed (issue 11: after an
   * outage the rate is back within 3 s). If it went silent at least
   * {@link OUTAGE_MIN_US} and at most {@link OUTAGE_RATE_MEMORY_US} ago, its estimator is told
   * (GccEstimator.onPathRestored: the silence's losses are not congestion)
   * and a probe cluster at the rate it had is sent first: its result
   * restores the estimate up to that rate, and only as far as the path
   * really carries it now.
   */
  private restoreAfterOutage(p: PathEntry, now: number): void {
    const mem = p.rateAtFailure;
    p.rateAtFailure = undefined;
    if (!mem || now - mem.atUs > OUTAGE_RATE_MEMORY_US || now - mem.atUs < OUTAGE_MIN_US || !p.estimator.onPathRestored) return;
    if (this.cfg.outageRestore === 'off') return;
    // 'total': no path could carry the call at some moment of this path's silence.
    if (this.cfg.outageRestore === 'total' && !(this.lastTotalOutageUs >= mem.atUs)) return;
    const graceUs = Math.max(OUTAGE_LOSS_GRACE_US, 2000 * p.estimator.srttMs() + 200_000);
    p.estimator.onPathRestored(mem.bps, now, now + graceUs);
    p.lossWindow.graceUntilUs = now + graceUs;
    this.c.pathRestores++;
    if (p.prober && p.estimator.targetRateBps() < mem.bps) {
      const c = p.prober.requestProbe(now, mem.bps);
      if (c && p.probeQueue.length < 8) p.probeQueue.unshift(c);
    }
  }

  private maybeFailoverProbe(p: PathEntry, now: number): void {
    const fp = p.failoverProbe;
    if (!fp || !p.prober || now < fp.dueUs || p.probe || p.probeQueue.length > 0) return;
    if (p.pacer.queuedBytes() + p.sink.bufferedAmount() > FAILOVER_PROBE_MAX_QUEUE_BYTES) {
      fp.dueUs = now + 20_000;
      return;
    }
    if (fp.left <= 0 || p.estimator.targetRateBps() >= 0.5 * fp.targetBps) {
      p.failoverProbe = undefined;
      return;
    }
    fp.left--;
    fp.dueUs = now + 700_000;
    const c = p.prober.requestProbe(now, fp.targetBps);
    if (c) p.probeQueue.push(c);
  }

  /**
   * The datachannel's own drain rate. Each path's RTCDataChannel runs over
   * SCTP, whose congestion window (Reno-like: ~1/sqrt(loss)) can carry far
   * less than GCC's estimate on a lossy path (5% loss, 200 ms RTT: about
   * 200 kbps). The backlog then waits in bufferedAmount, where GCC does not
   * see it as a trend. Every 100 ms: drained = sent into the channel +
   * bufferedAmount before - bufferedAmount now; while the channel stays
   * backlogged, that rate (smoothed) caps the path's rate.
   */
  private measureDrain(p: PathEntry, now: number): void {
    const d = p.drain;
    if (now - d.sinceUs < DRAIN_INTERVAL_US) return;
    const buffered = p.sink.bufferedAmount();
    const drained = d.sentBytes + d.buffered - buffered;
    const bps = (Math.max(0, drained) * 8e6) / (now - d.sinceUs);
    const backlogged = buffered > DRAIN_BACKLOG_BYTES && d.buffered > DRAIN_BACKLOG_BYTES;
    d.rateBps = d.rateBps === undefined ? bps : d.rateBps + 0.3 * (bps - d.rateBps);
    d.backlogged = backlogged;
    d.sinceUs = now;
    d.sentBytes = 0;
    d.buffered = buffered;
  }

  /** S_i: the GCC target, capped by the datachannel's drain rate while it is backlogged (bps). */
  private pathRateBps(p: PathEntry): number {
    const gcc = p.estimator.targetRateBps();
    const d = p.drain;
    if (!d.backlogged || d.rateBps === undefined) return gcc;
    return Math.max(MIN_PATH_RATE_BPS, Math.min(gcc, 0.9 * d.rateBps));
  }

  /** Send what the pacers allow now. */
  private flush(now: number): void {
    for (const p of this.paths.values()) {
      this.sendProbes(p, now);
      this.measureDrain(p, now);
      p.pacer.setRateBps(this.pathRateBps(p));
      const { send, dropped } = p.pacer.poll(now, p.sink.bufferedAmount());
      p.stats.pacerDropped += dropped.length;
      // A packet the pacer gave up on was too late already: do not answer its NACK.
      for (const it of dropped) {
        const h = this.history[it.packet.flowSeq % this.history.length];
        if (h && h.flowSeq === it.packet.flowSeq && !it.packet.isFec) h.rtxCount = MAX_RTX_PER_PACKET;
      }
      for (const item of send) this.transmit(p, item, now);
    }
  }

  private transmit(p: PathEntry, item: QueuedItem, now: number): void {
    const pathSeq = p.pathSeq;
    p.pathSeq = (p.pathSeq + 1) >>> 0;
    const bytes = encodePacket({ pathId: p.id, pathSeq, sendTimeUs: now }, item.packet.isFec ? 'fec' : 'media', item.packet.body);
    if (!p.sink.send(bytes)) {
      p.stats.sendFailures++;
      return;
    }
    p.estimator.onPacketSent({ pathSeq, sizeBytes: bytes.length, sendTimeUs: now });
    this.pathManager.onDataSent(p.id, now);
    if (p.unreportedSinceUs === undefined) p.unreportedSinceUs = now;
    p.stats.packetsSent++;
    p.stats.bytesSent += bytes.length;
    p.sendRate.add(now, bytes.length);
    p.drain.sentBytes += bytes.length;
    this.c.bytesSent += bytes.length;
    if (!item.probe) {
      const pr = item.packet.priority;
      if (pr === Priority.Keyframe) p.stats.keyframePacketsSent++;
      else if (pr === Priority.Sps) p.stats.spsPacketsSent++;
      else if (pr === Priority.Pps) p.stats.ppsPacketsSent++;
    }
    if (item.probe) p.stats.probesSent++;
    else if (item.packet.isFec) {
      p.stats.fecPacketsSent++;
      this.c.fecPacketsSent++;
    }
  }

  /**
   * A connected path that the path manager holds down gets no scheduled
   * packets; a small padding packet every 100 ms (with its own per-path seq)
   * lets its receiver reports, and so the path, come back.
   */
  private sendKeepalives(now: number): void {
    for (const p of this.paths.values()) {
      const demoted = !this.pathManager.needsKeepalive(p.id) && this.pathManager.isUp(p.id) && this.isDemoted(p, now);
      if (!demoted && !this.pathManager.needsKeepalive(p.id)) continue;
      if (now - p.lastKeepaliveUs < (demoted ? DEMOTED_PADDING_INTERVAL_US : KEEPALIVE_INTERVAL_US)) continue;
      p.lastKeepaliveUs = now;
      const pathSeq = p.pathSeq;
      p.pathSeq = (p.pathSeq + 1) >>> 0;
      const bytes = encodeControl({ pathId: p.id, pathSeq, sendTimeUs: now }, { kind: 'padding', padding: { size: demoted ? DEMOTED_PADDING_BYTES : 32 } });
      if (p.sink.send(bytes)) {
        p.estimator.onPacketSent({ pathSeq, sizeBytes: bytes.length, sendTimeUs: now });
        p.stats.packetsSent++;
        p.stats.bytesSent += bytes.length;
        if (demoted) {
          // A demoted path must be able to go silent (its hysteresis restarts) like one that carries media.
          this.pathManager.onDataSent(p.id, now);
          if (p.unreportedSinceUs === undefined) p.unreportedSinceUs = now;
        }
      }
    }
  }

  /** Send a control message on every connected path; returns how many took it. */
  private broadcastControl(body: PacketBody): number {
    const now = this.clock.nowUs();
    let sent = 0;
    for (const p of this.paths.values()) {
      if (p.linkState !== 'connected') continue;
      if (p.sink.send(encodeControl({ pathId: p.id, pathSeq: 0, sendTimeUs: now }, body))) sent++;
    }
    return sent;
  }

  /** When {@link tick} should run next (µs): the earliest pacer release, at most 20 ms away. */
  nextWakeUs(): number {
    const now = this.clock.nowUs();
    let next = now + 20_000;
    for (const p of this.paths.values()) {
      const t = p.pacer.nextPollUs(now);
      if (t !== undefined && t < next) next = t;
      if (p.probe && p.probe.nextUs < next) next = p.probe.nextUs;
      else if (!p.probe && p.probeQueue.length > 0) next = now;
    }
    return Math.max(next, now);
  }

  /**
   * Converge Algorithm 1: the up path with the least completion time
   * cpt_i = N*k/rate_i + rtt_i/2 for a typical frame (N = 10 packets of
   * k = 1200 bytes), rate_i the path's delivery rate (as the Converge scheduler uses).
   */
  private fastPathId(): PathId | undefined {
    let best: PathId | undefined;
    let bestCpt = Infinity;
    for (const st of this.pathStates()) {
      if (!st.up) continue;
      const rate = deliveryRateBps(st);
      if (!(rate > 0)) continue;
      const cpt = (10 * 1200 * 8) / rate + st.srttMs / 2000;
      if (cpt < bestCpt) {
        bestCpt = cpt;
        best = st.id;
      }
    }
    return best;
  }

  /** Lowest SRTT over up paths (ms), 100 when none. */
  private minSrttMs(): number {
    let m = Infinity;
    for (const p of this.paths.values()) if (this.pathManager.isUp(p.id)) m = Math.min(m, p.estimator.srttMs());
    return Number.isFinite(m) ? m : 100;
  }

  /** True when at least one path the scheduler uses can carry packets now. */
  hasUpPath(): boolean {
    for (const p of this.paths.values()) if (this.pathManager.isUp(p.id) && this.scheduler.isEnabled(p.id)) return true;
    return false;
  }

  /** Is the path up (connected and reporting) right now? */
  isPathUp(pathId: PathId): boolean {
    return this.pathManager.isUp(pathId);
  }

  stats(): SenderStats {
    const now = this.clock.nowUs();
    let totalMedia = 0;
    for (const p of this.paths.values()) totalMedia += p.stats.mediaPacketsSent;
    const paths: SenderPathStats[] = [];
    for (const p of this.paths.values()) {
      const e = p.estimator;
      paths.push({
        id: p.id,
        up: this.pathManager.isUp(p.id),
        enabled: this.scheduler.isEnabled(p.id),
        demoted: this.isDemoted(p, now),
        ...p.stats,
        sharePct: totalMedia > 0 ? (100 * p.stats.mediaPacketsSent) / totalMedia : 0,
        rateBps: this.pathRateBps(p),
        goodputBps: e.ackedRateBps() ?? 0,
        rttMs: e.srttMs(),
        minRttMs: e.minRttMs(),
        lossPct: 100 * e.lossRate(),
        queuedBytes: p.pacer.queuedBytes() + p.sink.bufferedAmount(),
        sendRateBps: p.sendRate.rateBps(now),
      });
    }
    return {
      ...this.c,
      pushbackRatio: this.pushbackRatio,
      targetBitrateBps: this.targetBitrateBps(),
      fecOverheadPct: this.c.mediaPacketsSent > 0 ? (100 * this.c.fecPacketsSent) / this.c.mediaPacketsSent : 0,
      paths,
    };
  }

  /** Per-path estimator internals for plots. */
  estimatorStats(): Array<{ id: PathId } & ReturnType<BandwidthEstimator['stats']>> {
    return [...this.paths.values()].map((p) => ({ id: p.id, ...p.estimator.stats() }));
  }
}

/** The estimator's cumulative loss counters (GCC's), undefined for estimators without them. */
function lossCounters(e: BandwidthEstimator): { lost: number; received: number } | undefined {
  const st = e.stats() as { packetsLost?: number; packetsReceived?: number };
  return st.packetsLost === undefined || st.packetsReceived === undefined ? undefined : { lost: st.packetsLost, received: st.packetsReceived };
}
