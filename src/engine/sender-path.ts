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
import type { SenderEngineConfig } from './sender-config.js';

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
export function createPathPacer(rateBps: number, cfg: SenderEngineConfig['pacer']): Pacer<QueuedItem> {
  const c: Record<string, number> = { minBufferBudgetBytes: 6_000 };
  for (const [k, v] of Object.entries(cfg ?? {})) if (v !== undefined) c[k] = v;
  return new Pacer<QueuedItem>(rateBps, c);
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

/** Packets tracked at once for their departure from the datachannel (see {@link SenderPath.observeDepartures}). */
const DEPARTURE_QUEUE = 1024;
/** A packet queued behind at most this many bytes in the datachannel counts as sent at once (bytes; two MTUs). */
const DEPARTURE_MIN_AHEAD_BYTES = 2_400;
/** A departure is never put more than this after the send (µs): beyond it the count of bytes is off. */
const DEPARTURE_MAX_WAIT_US = 2_000_000;

/** Datagrams remembered per path seq for the delivery rate (a ring; power of two). */
const DELIVERY_RING = 4096;
/** Window of the delivery cap's rates (µs; SenderEngineConfig.queuedDeliveryMs). */
const DELIVERY_WINDOW_US = 200_000;

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
  /** When (µs) a report ended a silence of the path and showed its packets delivered with the estimate held (PathRecovery.learnGap, SenderEngineConfig.cleanReturn): a feedback gap, which ends the path's probation; -Infinity = never. */
  cleanReturnUs = -Infinity;
  /** The path's rate (bps) when it last went silent, and when (µs): restored when its reports resume. */
  rateAtFailure: { bps: number; atUs: number } | undefined;
  /** When (µs) the receiver last NACKed a media packet first sent on this path after the path's last report arrived (SenderPaths.keptThroughGap); -Infinity = never. */
  nackedInGapUs = -Infinity;
  /** `stats.bytesSent` right after the last packet of the latest key frame went into the sink; undefined before (see SenderEngine.keyframeStillQueued). */
  keyTailBytes: number | undefined;
  /** When a packet of the newest key frame was last queued on this path (µs; SenderEngineConfig.blackholeKeyframe). */
  keyQueuedUs = -Infinity;
  /** `stats.mediaPacketsSent` when the path's latest report was applied (SenderEngineConfig.blackholeKeyframe). */
  mediaAtReport = 0;
  /** Recent loss for the hysteresis: estimator counters at the window start, and the last window's loss fraction. */
  readonly lossWindow: { atUs: number; lost: number; received: number; rate: number; graceUntilUs: number };
  /** Since when (µs) the estimate has sat at its estimator's minimum rate (PathRecovery's rate floor); undefined while above it. */
  rateFloorSinceUs: number | undefined;
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
  /** Everything sent on the path over the last second; with {@link protection}, the protection overhead's share (SenderPaths.usableRateBps). */
  readonly sendRate: RateMeter;
  /** Retransmissions and FEC sent over the last second (SenderPaths.usableRateBps). */
  readonly protection: RateMeter;
  /** Loss detection on this path by RACK (RFC 8985 §6.2), fed by every datagram {@link send} writes and the path's reports. */
  readonly rack = new PathRack();
  private readonly drain: { sinceUs: number; sentBytes: number; buffered: number; rateBps: number | undefined; backlogged: boolean };

  /**
   * The datachannel (or simulated link) of the path, as the engine uses it:
   * the sink given to the constructor, counting the bytes it accepted
   * ({@link writtenBytes}) so that bytes that left it can be told from
   * `bufferedAmount`.
   */
  readonly sink: PathSink;
  /** Bytes the sink accepted through {@link sink} (every kind of datagram). */
  private writtenBytes = 0;
  /**
   * Packets that went into a backlogged datachannel, oldest first (a ring of
   * DEPARTURE_QUEUE): per-path seq, send time (µs) and the byte count
   * {@link writtenBytes} reached with it (it has left the channel once
   * written - bufferedAmount >= that).
   */
  private readonly depSeq = new Float64Array(DEPARTURE_QUEUE);
  private readonly depSendUs = new Float64Array(DEPARTURE_QUEUE);
  private readonly depEnd = new Float64Array(DEPARTURE_QUEUE);
  private depHead = 0;
  private depLen = 0;
  /** Last look at the channel: when (µs) and how many bytes had left it. */
  private depLast = { atUs: Number.NaN, departed: 0 };
  /** Correct send times to the datachannel departure (SenderEngineConfig.departureTimes). */
  departureTimes = false;
  /**
   * Per path seq (rings): the datagram's size (bytes, negative once
   * delivered) and its send time (µs); what was delivered by receiver time
   * (µs), the latest arrival, and the newest path seq delivered (-1 = none yet).
   */
  private readonly sizes = new Int32Array(DELIVERY_RING);
  private readonly sentUs = new Float64Array(DELIVERY_RING);
  private newestDelivered = -1;
  private readonly delivered = new RateMeter(DELIVERY_WINDOW_US);
  private lastArrivalUs = 0;
  /** SenderEngineConfig.queuedDeliveryMs (0 = off) and queuedDeliveryRatio (0 = no link test). */
  queuedMs = 0;
  queuedRatio = 0;
  /** The last report showed the link delivering less than queuedRatio x what was sent (true while queuedRatio is 0). */
  private linkLimited = true;
  /** The cap holds: the link was found limited during the present standing queue. */
  private capHeld = false;

  constructor(
    readonly id: PathId,
    sink: PathSink,
    readonly estimator: BandwidthEstimator,
    readonly pacer: Pacer<QueuedItem>,
    /** Bandwidth probing, undefined when the estimator has none or probing is off. */
    readonly prober: ProbeSender | undefined,
    state: PathTransportState,
    nowUs: number,
  ) {
    this.sink = {
      send: (bytes: Uint8Array): boolean => {
        const ok = sink.send(bytes);
        if (ok) this.writtenBytes += bytes.length;
        return ok;
      },
      bufferedAmount: () => sink.bufferedAmount(),
      stalled: () => sink.stalled?.() ?? sink.bufferedAmount() > DRAIN_BACKLOG_BYTES,
    };
    this.linkState = state;
    // Aligned to the path's start: the encoder target (through the protection share) must not depend on the clock's epoch.
    this.sendRate = new RateMeter(1_000_000, nowUs);
    this.protection = new RateMeter(1_000_000, nowUs);
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
    const ahead = this.departureTimes ? this.sink.bufferedAmount() : 0;
    if (!this.sink.send(bytes)) return undefined;
    this.estimator.onPacketSent({ pathSeq, sizeBytes: bytes.length, sendTimeUs: nowUs });
    if ((ahead > DEPARTURE_MIN_AHEAD_BYTES || this.depLen > 0) && this.estimator.onPacketDeparted) this.trackDeparture(pathSeq, nowUs);
    this.rack.onSent(pathSeq, nowUs, acct.flowSeq ?? -1, acct.copy !== true);
    this.sizes[pathSeq & (DELIVERY_RING - 1)] = bytes.length;
    this.sentUs[pathSeq & (DELIVERY_RING - 1)] = nowUs;
    this.stats.packetsSent++;
    this.stats.bytesSent += bytes.length;
    if (acct.rate !== false) this.sendRate.add(nowUs, bytes.length);
    if (acct.drain !== false) this.drain.sentBytes += bytes.length;
    return { pathSeq, bytes: bytes.length };
  }

  /**
   * What the path can take (bps): +Infinity, or with `queuedMs` > 0 what it
   * delivered over the last 200 ms of receiver arrival time while it holds
   * a standing queue (its SRTT exceeds its min RTT by more than `queuedMs`)
   * and, with `queuedRatio` > 0, once a report during that queue showed the
   * link limited (see {@link onArrivals}); the cap then holds until the
   * queue is gone, and is off while the newest delivered datagram was sent
   * within 200 ms after the path was last silent ({@link lastGoneUs}). See
   * SenderEngineConfig.queuedDeliveryMs / queuedDeliveryRatio.
   */
  deliveryCapBps(): number {
    this.capHeld =
      this.queuedMs > 0 &&
      this.estimator.srttMs() - this.estimator.minRttMs() > this.queuedMs &&
      (this.capHeld || this.linkLimited) &&
      this.sentUs[this.newestDelivered & (DELIVERY_RING - 1)] - this.lastGoneUs > DELIVERY_WINDOW_US;
    if (!this.capHeld) return Number.POSITIVE_INFINITY; // no rate-meter work per pacer poll while the cap is off
    const d = this.delivered.rateBps(this.lastArrivalUs);
    return d > 0 ? Math.max(MIN_PATH_RATE_BPS, d) : Number.POSITIVE_INFINITY;
  }

  /**
   * A report's arrivals: each datagram counts once in {@link deliveryCapBps},
   * at its arrival time. With `queuedRatio` > 0 the link counts as limited
   * while the rate delivered over the last 200 ms is below `queuedRatio` x
   * the rate sent over the 200 ms before the newest delivered datagram's send
   * (the same bytes, one trip earlier): a link whose capacity fell below what
   * we send delivers less than was sent, while a path we send little on (app-
   * limited, or ramping up) delivers what was sent, and a delay spike
   * delivers late but all of it (BBR's delivery rate against the send rate of
   * the same packets, draft-cheng-iccrg-delivery-rate-estimation §3.3).
   */
  onArrivals(arrivals: ReadonlyArray<{ pathSeq: number; arrivalUs: number }>): void {
    if (!(this.queuedMs > 0)) return;
    for (const a of arrivals) {
      const i = a.pathSeq & (DELIVERY_RING - 1);
      // A seq already delivered (a report listing it again) adds nothing.
      if (this.sizes[i] > 0) this.delivered.add(a.arrivalUs, this.sizes[i]);
      this.sizes[i] = -Math.abs(this.sizes[i]);
      this.lastArrivalUs = Math.max(this.lastArrivalUs, a.arrivalUs);
      if (((a.pathSeq - this.newestDelivered) | 0) > 0) this.newestDelivered = a.pathSeq;
    }
    if (!(this.queuedRatio > 0 && arrivals.length > 0)) return;
    // Bytes sent in the window up to the newest delivered datagram's send (bounded by the ring).
    const last = this.sentUs[this.newestDelivered & (DELIVERY_RING - 1)];
    let sent = 0;
    for (let k = 0, seq = this.newestDelivered; k < DELIVERY_RING; k++, seq = (seq - 1) >>> 0) {
      const t = this.sentUs[seq & (DELIVERY_RING - 1)];
      // Sent before the window, or overwritten by a later datagram: done.
      if (!(last - t <= DELIVERY_WINDOW_US && t <= last)) break;
      sent += Math.abs(this.sizes[seq & (DELIVERY_RING - 1)]);
    }
    this.linkLimited = this.delivered.rateBps(this.lastArrivalUs) * DELIVERY_WINDOW_US < this.queuedRatio * sent * 8e6;
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

  private trackDeparture(pathSeq: number, nowUs: number): void {
    if (this.depLen === DEPARTURE_QUEUE) {
      // Full: the oldest keeps its send time (a bound, not a failure).
      this.depHead = (this.depHead + 1) % DEPARTURE_QUEUE;
      this.depLen--;
    }
    const i = (this.depHead + this.depLen) % DEPARTURE_QUEUE;
    this.depSeq[i] = pathSeq;
    this.depSendUs[i] = nowUs;
    this.depEnd[i] = this.writtenBytes;
    this.depLen++;
  }

  /**
   * Send times at the datachannel's departure ({@link SenderEngineConfig.departureTimes}).
   * A datagram written into an RTCDataChannel that holds a backlog waits in
   * SCTP (its congestion window, or SACKs that a fading reverse link does not
   * bring) before it goes on the network. GCC's delay-based detector must
   * time packets when they leave for the network (libwebrtc stamps the send
   * time when the socket takes the packet: RtpTransportControllerSend::OnSentPacket,
   * transport_feedback_adapter.cc ProcessSentPacket); stamped when written,
   * the wait in SCTP reads as a growing network queue and the detector
   * over-uses, cutting the estimate to 0.85 x an acknowledged rate that SCTP
   * limited. Here: bytes that left = bytes written - bufferedAmount; a
   * tracked packet left once that count passed its last byte, at a time
   * interpolated between the last two looks (each tick), never before its
   * send nor more than DEPARTURE_MAX_WAIT_US after it. The estimator then
   * moves its send time ({@link BandwidthEstimator.onPacketDeparted}).
   * Bytes another engine writes into the same channel (the reverse stream's
   * reports) are not counted, which can only make a departure look later.
   */
  observeDepartures(nowUs: number): void {
    if (!this.departureTimes) return; // nothing is tracked without it (send)
    const departed = this.writtenBytes - this.sink.bufferedAmount();
    const last = this.depLast;
    const spanBytes = departed - last.departed;
    const since = Number.isFinite(last.atUs) ? last.atUs : nowUs;
    while (this.depLen > 0 && this.depEnd[this.depHead] <= departed) {
      const h = this.depHead;
      const frac = spanBytes > 0 ? Math.min(1, Math.max(0, (this.depEnd[h] - last.departed) / spanBytes)) : 1;
      const sentUs = this.depSendUs[h];
      const t = Math.min(Math.max(since + frac * (nowUs - since), sentUs), sentUs + DEPARTURE_MAX_WAIT_US);
      if (t > sentUs) this.estimator.onPacketDeparted?.(this.depSeq[h], t);
      this.depHead = (h + 1) % DEPARTURE_QUEUE;
      this.depLen--;
    }
    last.atUs = nowUs;
    last.departed = departed;
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
    const gcc = Math.min(this.estimator.targetRateBps(), this.deliveryCapBps());
    const d = this.drain;
    if (!d.backlogged || d.rateBps === undefined) return gcc;
    return Math.max(MIN_PATH_RATE_BPS, Math.min(gcc, 0.9 * d.rateBps));
  }
}
