/**
 * One path of the sender: its sink (the datachannel or a simulated link),
 * congestion controller (a BandwidthEstimator, GCC by default), pacer, probe
 * sender, per-path sequence numbers and counters, and the measurement of the
 * datachannel's own drain rate. Every datagram the sender writes goes through
 * {@link SenderPath.send}, so sequence numbers, the estimator's send history
 * and the counters stay consistent whatever kind of packet it is.
 * I/O-free: times are passed in (µs).
 */
import type { BandwidthEstimator } from '../cc/types.js';
import { Pacer } from '../cc/pacer.js';
import type { ProbeSender } from '../cc/probe-sender.js';
import type { OutgoingPacket, PathId, PathTransportState, Priority } from '../core/types.js';
import { PathRack } from '../feedback/path-rack.js';
import { RateMeter } from './rate-meter.js';
import type { PathSink, SenderPathStats } from './types.js';

/** What the pacer queues: a packet, or a probe duplicate. */
export interface QueuedItem {
  priority: Priority;
  sizeBytes: number;
  packet: OutgoingPacket;
  probe: boolean;
}

/** The counters of a path that the path itself keeps (the rest of SenderPathStats is computed). */
export type SenderPathCounters = Omit<SenderPathStats, 'id' | 'up' | 'enabled' | 'demoted' | 'sharePct' | 'rateBps' | 'goodputBps' | 'rttMs' | 'minRttMs' | 'lossPct' | 'queuedBytes' | 'sendRateBps'>;

/** Reports remembered per path to drop copies (one per 50 ms report interval: 0.8 s). */
const REPORT_MEMORY = 16;
/** Lowest rate a path is given (bps). */
export const MIN_PATH_RATE_BPS = 50_000;
/** Datachannel drain measurement interval (µs) and the backlog that makes it count (bytes). */
const DRAIN_INTERVAL_US = 100_000;
export const DRAIN_BACKLOG_BYTES = 4_000;

/**
 * A path's pacer (src/cc/pacer.ts) starting at `rateBps`, with the sender's
 * tuning. The datachannel budget has a small floor (6 kB): on a slow path
 * 15 kB in the datachannel would be most of a second.
 */
export function createPathPacer(rateBps: number, cfg: { bufferBudgetMs?: number; maxQueueDelayMs?: number; pacingFactor?: number } | undefined): Pacer<QueuedItem> {
  return new Pacer<QueuedItem>(rateBps, {
    minBufferBudgetBytes: 6_000,
    ...(cfg?.bufferBudgetMs !== undefined ? { bufferBudgetMs: cfg.bufferBudgetMs } : {}),
    ...(cfg?.maxQueueDelayMs !== undefined ? { maxQueueDelayMs: cfg.maxQueueDelayMs } : {}),
    ...(cfg?.pacingFactor !== undefined ? { pacingFactor: cfg.pacingFactor } : {}),
  });
}

/** How a datagram counts (see {@link SenderPath.send}). */
export interface SendAccounting {
  /** Counts in the send rate meter (default true). */
  rate?: boolean;
  /** Counts in the drain measurement (default true). */
  drain?: boolean;
  /** The media flowSeq the datagram carries (original or retransmission), for loss detection by RACK; absent for FEC, padding and control. */
  flowSeq?: number;
  /** With flowSeq: the datagram is a copy (probe duplicate) whose loss needs no resend. */
  copy?: boolean;
}

/** RACK reorder window before the path has an RTT sample (µs). */
const RACK_DEFAULT_REO_WND_US = 25_000;

/** Longest a relay switch may go unconfirmed by the new route before the path counts as failed (µs). */
export const ROUTE_SWITCH_MAX_US = 2_000_000;

export class SenderPath {
  /** Per-path sequence number of the next datagram. */
  private pathSeq = 0;
  /** The transport's state (ICE connected, failed, closed), whatever the app's switch says. */
  linkState: PathTransportState;
  /**
   * The app's administrative switch (SenderEngine.setPathEnabled): false =
   * the app turned the path off; the path manager sees it closed, but it is
   * no fault: the hysteresis does not count it, and a re-enabled path that
   * was healthy carries media at once.
   */
  adminEnabled = true;
  /** When (µs) the path's route last changed (a relay switch), and until when its gap is no fault (+Infinity: until its old packets are resolved; PathRecovery.onRouteChange). */
  routeChangeUs = -Infinity;
  routeGraceUntilUs = -Infinity;
  /** The per-path seq of the first packet sent after the last route change. */
  routeChangeSeq = 0;
  /** Estimate (bps) when the app disabled the path: the re-enabled path is probed there. */
  rateAtDisable: number | undefined;
  lastKeepaliveUs = -Infinity;
  /** Suspect or down at the last check (see SenderEngine failover handling). */
  failedOver = false;
  /** Receiver times (µs) of the last REPORT_MEMORY reports applied (a ring): copies on other paths are dropped (ReceiverEngineConfig.reportCopies). */
  private readonly reportTimes = new Float64Array(REPORT_MEMORY).fill(Number.NaN);
  private reportNext = 0;
  /** Last check (µs, PathRecovery.tick) at which the path was suspect or down; -Infinity = never. */
  lastGoneUs = -Infinity;
  /** Last check (µs, PathRecovery.tick) at which the path was down (PathManager: silent for downAfterMs while sending, or its transport down); -Infinity = never. */
  lastDownUs = -Infinity;
  /** The path's rate (bps) when it last went silent, and when (µs): restored when its reports resume. */
  rateAtFailure: { bps: number; atUs: number } | undefined;
  /** `stats.bytesSent` right after the last packet of the latest key frame went into the sink; undefined before (see SenderEngine.keyframeStillQueued). */
  keyTailBytes: number | undefined;
  /** Recent loss for the hysteresis: estimator counters at the window start, and the last window's loss fraction. */
  readonly lossWindow: { atUs: number; lost: number; received: number; rate: number; graceUntilUs: number };
  readonly stats: SenderPathCounters = {
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
  };
  readonly sendRate = new RateMeter(1_000_000);
  /** Loss detection on this path by RACK (RFC 8985 §6.2), fed by every datagram {@link send} writes and the path's reports. */
  readonly rack = new PathRack();
  private readonly drain: { sinceUs: number; sentBytes: number; buffered: number; rateBps: number | undefined; backlogged: boolean };

  constructor(
    readonly id: PathId,
    readonly sink: PathSink,
    readonly estimator: BandwidthEstimator,
    readonly pacer: Pacer<QueuedItem>,
    /** Bandwidth probing, undefined when the estimator has none or probing is off. */
    readonly prober: ProbeSender | undefined,
    state: PathTransportState,
    nowUs: number,
  ) {
    this.linkState = state;
    this.lossWindow = { atUs: nowUs, lost: 0, received: 0, rate: 0, graceUntilUs: -Infinity };
    this.drain = { sinceUs: nowUs, sentBytes: 0, buffered: 0, rateBps: undefined, backlogged: false };
  }

  /**
   * A report of this path with receiver time `reportTimeUs` arrived: false
   * when one with that time was applied already (a copy that came on
   * another path, ReceiverEngineConfig.reportCopies), else remember it and
   * return true. The receiver makes at most one report per path and time.
   */
  acceptReport(reportTimeUs: number): boolean {
    if (this.reportTimes.includes(reportTimeUs)) return false;
    this.reportTimes[this.reportNext] = reportTimeUs;
    this.reportNext = (this.reportNext + 1) % REPORT_MEMORY;
    return true;
  }

  /**
   * Take the next per-path sequence number and write the datagram `encode`
   * builds with it. On success the estimator learns the send and the
   * packet/byte counters grow (plus the rate meter and drain measurement
   * unless `acct` says otherwise). Returns the sequence number used, or
   * undefined when the sink refused it (the number is spent anyway).
   */
  /** The per-path seq the next datagram gets. */
  get nextPathSeq(): number {
    return this.pathSeq;
  }

  send(encode: (pathSeq: number) => Uint8Array, nowUs: number, acct: SendAccounting = {}): { pathSeq: number; bytes: number } | undefined {
    const pathSeq = this.pathSeq;
    this.pathSeq = (this.pathSeq + 1) >>> 0;
    const bytes = encode(pathSeq);
    if (!this.sink.send(bytes)) return undefined;
    this.estimator.onPacketSent({ pathSeq, sizeBytes: bytes.length, sendTimeUs: nowUs });
    this.rack.onSent(pathSeq, nowUs, acct.flowSeq ?? -1, acct.copy !== true);
    this.stats.packetsSent++;
    this.stats.bytesSent += bytes.length;
    if (acct.rate !== false) this.sendRate.add(nowUs, bytes.length);
    if (acct.drain !== false) this.drain.sentBytes += bytes.length;
    return { pathSeq, bytes: bytes.length };
  }

  /**
   * RACK's reorder window for this path (µs): min RTT / 4, capped at SRTT
   * (RFC 8985 §6.2 step 4), 25 ms while the path has no RTT sample.
   */
  rackReorderWindowUs(): number {
    const minRtt = this.estimator.minRttMs();
    const srtt = this.estimator.srttMs();
    if (!Number.isFinite(minRtt) || minRtt <= 0) return RACK_DEFAULT_REO_WND_US;
    return 1000 * Math.min(minRtt / 4, Number.isFinite(srtt) && srtt > 0 ? srtt : minRtt);
  }

  /** The estimator's cumulative loss counters (GCC's: packets lost / received), undefined for estimators without them. */
  lossCounters(): { lost: number; received: number } | undefined {
    const st = this.estimator.stats() as { packetsLost?: number; packetsReceived?: number };
    return st.packetsLost === undefined || st.packetsReceived === undefined ? undefined : { lost: st.packetsLost, received: st.packetsReceived };
  }

  /** Bytes waiting at the sender for this path: pacer queue + datachannel bufferedAmount. */
  queuedBytes(): number {
    return this.pacer.queuedBytes() + this.sink.bufferedAmount();
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
  measureDrain(nowUs: number): void {
    const d = this.drain;
    if (nowUs - d.sinceUs < DRAIN_INTERVAL_US) return;
    const buffered = this.sink.bufferedAmount();
    const drained = d.sentBytes + d.buffered - buffered;
    const bps = (Math.max(0, drained) * 8e6) / (nowUs - d.sinceUs);
    const backlogged = buffered > DRAIN_BACKLOG_BYTES && d.buffered > DRAIN_BACKLOG_BYTES;
    d.rateBps = d.rateBps === undefined ? bps : d.rateBps + 0.3 * (bps - d.rateBps);
    d.backlogged = backlogged;
    d.sinceUs = nowUs;
    d.sentBytes = 0;
    d.buffered = buffered;
  }

  /** S_i: the estimator's target, capped by the datachannel's drain rate while it is backlogged (bps). */
  rateBps(): number {
    const gcc = this.estimator.targetRateBps();
    const d = this.drain;
    if (!d.backlogged || d.rateBps === undefined) return gcc;
    return Math.max(MIN_PATH_RATE_BPS, Math.min(gcc, 0.9 * d.rateBps));
  }
}
