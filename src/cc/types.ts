/**
 * Strategy interface for per-path congestion control. One estimator per path;
 * I/O-free: it learns from packets sent and from the receiver's per-path
 * arrival reports, and answers with a target send rate.
 */
import type { PathReport } from '../core/types.js';

/** A packet as sent on the path (per-path seq, size, sender clock). */
export interface SentPacketInfo {
  pathSeq: number;
  sizeBytes: number;
  sendTimeUs: number;
}

/** Internals worth plotting, all optional beyond the rate. */
export interface EstimatorStats {
  targetRateBps: number;
  delayBasedBps: number;
  lossBasedBps: number;
  ackedRateBps: number | undefined;
  srttMs: number;
  minRttMs: number;
  lossRate: number;
  /** Trendline slope estimate (modified, ms/s) */
  trend: number;
  threshold: number;
  /** 'normal' | 'overusing' | 'underusing' */
  bandwidthUsage: string;
  /** 'hold' | 'increase' | 'decrease' */
  rateControlState: string;
}

export interface BandwidthEstimator {
  onPacketSent(packet: SentPacketInfo): void;
  /** A receiver report arrived at sender time `nowUs`. */
  onReport(report: import('../core/types.js').PathReport, nowUs: number): void;
  /** Periodic call (every ~10-50 ms) so time-based parts progress without reports. */
  onTick(nowUs: number): void;
  /** Target send rate (bps), clamped to [min, max] of the config. */
  targetRateBps(): number;
  /** Acknowledged (received) bitrate (bps), undefined until measured. */
  ackedRateBps(): number | undefined;
  srttMs(): number;
  minRttMs(): number;
  /** Loss fraction 0..1 over recent reports. */
  lossRate(): number;
  /**
   * The lowest target (bps) the estimator goes to: at it, congestion control
   * cannot back off any further (GCC: `GccConfig.minBps`; RTC-BBR: its
   * `minBps`). Optional: without it the path hysteresis' rate-floor rule
   * (src/engine/path-recovery.ts) stays off for the path.
   */
  minRateBps?(): number;
  /** Bytes sent and not yet covered by a report (bytes). */
  inflightBytes(): number;
  /** Sender time (µs) of the last report, undefined before the first. */
  lastReportUs(): number | undefined;
  /**
   * Optional: the path's reports resumed after an outage at rate `rateBps`
   * (see GccEstimator.onPathRestored); loss until `graceUntilUs` is not congestion.
   */
  onPathRestored?(rateBps: number, nowUs: number, graceUntilUs: number): void;
  /**
   * Optional: packet `pathSeq` (sent earlier with {@link onPacketSent}) left
   * the sender's transport for the network only at `departUs` (µs, sender
   * clock): it waited in the datachannel's buffer. An estimator that times
   * packets by their send (GCC's delay-based detector) uses this time
   * instead, unless a report already covered the packet or the time is not
   * later (SenderPath.observeDepartures).
   */
  onPacketDeparted?(pathSeq: number, departUs: number): void;
  /**
   * Optional: the path now runs over another route (an ICE restart onto
   * another TURN relay, sender time `nowUs`): forget the old route's
   * bandwidth and RTT (RtcBbrEstimator restarts its filters).
   */
  onRouteChange?(nowUs: number): void;
  /**
   * Optional: the factor the path's pacer applies to {@link targetRateBps}
   * (src/cc/pacer.ts, default 1.5 as libwebrtc's pacing factor over the
   * encoder target). An estimator whose target already is its pacing rate
   * (RtcBbrEstimator: Zhang & Lei §3.1.1 Eq. 2, paced as is by Eq. 3) says 1.
   */
  readonly pacingFactor?: number;
  /**
   * Optional capability: bandwidth probing for this estimator (in libwebrtc
   * the congestion controller owns its ProbeController and ALR detection).
   * Estimators without it are never probed.
   */
  createProber?(config: { maxBps: number; alrIntervalMs: number }): PathProber;
  stats(): EstimatorStats;
}

/**
 * A path's probe controller bound to its estimator (see
 * {@link import('./probe-controller.js').GccProber}): which clusters to send,
 * and what their reports measured. Rates in bps, times in µs.
 */
export interface PathProber {
  /** Initial clusters; [] after the first call. */
  start(nowUs: number, startBps: number): ProbeCluster[];
  /**
   * A packet of cluster `clusterId` was sent (per-path seq, bytes, sender clock µs); `bufferedBytes`:
   * the transport's send buffer right after the write (bytes, a datachannel's `bufferedAmount`), when known.
   */
  onPacketSent(clusterId: number, pathSeq: number, sizeBytes: number, sendTimeUs: number, bufferedBytes?: number): void;
  /** After the estimator's own onReport: measure clusters, apply results, return clusters to send next. */
  onReport(report: PathReport, nowUs: number): ProbeCluster[];
  /** An extra cluster at `targetBps` (after a failover or an outage), undefined for bad input. */
  requestProbe(nowUs: number, targetBps: number): ProbeCluster | undefined;
  /** The path sends well below its estimate (periodic ALR probes). */
  setApplicationLimited(appLimited: boolean): void;
}

export type { PathReport };

// ---------------------------------------------------------------------------
// Additions (cc folder): configuration and statistics of the GCC estimator and
// of the per-path pacer. Nothing above this line is changed.
// ---------------------------------------------------------------------------

/** Delay-based detector hypothesis (libwebrtc `BandwidthUsage`). */
export type BandwidthUsage = 'normal' | 'overusing' | 'underusing';

/** AIMD rate-control state (libwebrtc `RateControlState`). */
export type RateControlState = 'hold' | 'increase' | 'decrease';

/** Configuration of {@link import('./gcc.js').GccEstimator}. All rates in bps. */
export interface GccConfig {
  /** Initial target rate (bps). Clamped into [minBps, maxBps]. Default 1_000_000. */
  startBps: number;
  /** Floor of every estimate (bps). Default 100_000. */
  minBps: number;
  /** Ceiling of every estimate (bps). Default 50_000_000. */
  maxBps: number;
  /** Sent-packet history used to match reports (packets, rounded up to a power of two). Default 8192. */
  historyPackets: number;
  /**
   * With bytes in flight and no report for this long, the target is cut by
   * 20 % once per second (libwebrtc send_side_bandwidth_estimation.cc
   * feedback-timeout experiment, scaled to 50-100 ms reports). Default 1000 ms.
   */
  feedbackTimeoutMs: number;
  /** RTT assumed before the first sample (ms); libwebrtc kDefaultRtt. Default 200. */
  initialRttMs: number;
}

/** {@link EstimatorStats} plus counters of what the estimator dropped or repaired. */
export interface GccStats extends EstimatorStats {
  /** Latest RTT sample (ms), 0 before the first. */
  latestRttMs: number;
  /** The loss-queue bound's loss (0..1): an EWMA of the loss windows, gain 0.3 (src/cc/gcc.ts refreshTarget). */
  recentLossRate: number;
  /** Link capacity estimate of the AIMD controller (bps), undefined when reset. */
  linkCapacityBps: number | undefined;
  /** Over-use decreases held at half the estimate because the path carried far less than it (app-limited; they neither shortcut the next decrease nor set the link capacity: src/cc/aimd.ts). */
  appLimitedDecreases: number;
  inflightBytes: number;
  packetsSent: number;
  reports: number;
  /** Reports rejected as malformed (not an object, non-integer seqs, ...). */
  reportsInvalid: number;
  /** Arrival entries for a seq never sent or already out of the history. */
  arrivalsUnknown: number;
  /** Arrival entries for a seq already reported received. */
  arrivalsDuplicate: number;
  /** Arrival entries with a malformed seq or a non-finite/absurd time. */
  arrivalsInvalid: number;
  /** Packets first counted lost and later reported received (reordering). */
  lossRecovered: number;
  packetsLost: number;
  packetsReceived: number;
  /** onPacketSent calls rejected (non-finite time/size, bad seq). */
  sentInvalid: number;
  /** RTT samples rejected (negative hold time, RTT <= 0 or > 60 s). */
  rttRejected: number;
  /** Inter-arrival resets (clock offset jump, persistent reordering). */
  interArrivalResets: number;
  /** Delay-based over-use onsets: the detector's hypothesis turned to 'overusing' (each may cut the rate). */
  overuseOnsets: number;
  feedbackTimeouts: number;
  /** Probe results given to onProbeResult (valid numbers). */
  probeResults: number;
  /** Probe results that set the delay-based estimate (raised it, or lowered it after a saturated probe). */
  probeResultsApplied: number;
  /** onPathRestored calls (reports resumed after an outage). */
  pathRestores: number;
  /** Probe results that restored the loss-based estimate after an outage. */
  probeRestores: number;
  /** Loss windows with losses dropped in the grace time after an outage. */
  lossWindowsIgnored: number;
  /** Send times moved to the datachannel departure (onPacketDeparted). */
  departuresApplied: number;
  /** Start-up re-probes sent by this estimator's prober (0 or 1; GccProber in probe-controller.ts). */
  startReprobes: number;
}

/** Configuration of {@link import('./pacer.js').Pacer}. */
export interface PacerConfig {
  /** Pacing rate = factor x target rate. Default 1.5 (libwebrtc uses 2.5 for RTP video). */
  pacingFactor: number;
  /** Queue bound (packets, all priorities). Default 2000. */
  maxQueuePackets: number;
  /**
   * Max time-worth of data (ms at the path target rate) allowed in the
   * RTCDataChannel's bufferedAmount after a send. Default 60.
   */
  bufferBudgetMs: number;
  /** Floor of that buffer budget (bytes). Default 15_000. */
  minBufferBudgetBytes: number;
  /** Media (6) and FEC (5) waiting longer than this are dropped (ms). Default 300. */
  maxQueueDelayMs: number;
  /**
   * Cap on the time credited to one poll (ms of pacing rate): bounds the
   * burst after an idle period and the catch-up after a late timer. Default 20.
   */
  maxBurstMs: number;
  /** Poll interval hinted by nextPollUs while held by bufferedAmount (ms). Default 5. */
  bufferRecheckMs: number;
  /**
   * Send burst (ms of pacing rate): packets go out at once while the debt of
   * what was sent drains within this time, so a video frame leaves as one
   * burst instead of spread over the frame interval. The burst is capped at
   * 63,000 bytes. Default 0 (no burst). SOURCE: libwebrtc
   * modules/pacing/pacing_controller.cc NextSendTime (send_burst_interval,
   * kDefaultBurstInterval 40 ms, kMaxBurstSize 63,000 bytes).
   */
  burstMs: number;
}

/** Pacer counters; arrays are indexed by Priority (1..6; index 0 unused). */
export interface PacerStats {
  rateBps: number;
  pacingRateBps: number;
  queuedPackets: number;
  queuedBytes: number;
  sentPackets: number;
  sentBytes: number;
  sentByPriority: number[];
  droppedByPriority: number[];
  /** Dropped because the queue bound was hit (new item refused or a less important one evicted). */
  droppedFull: number;
  /** Items dropped for waiting too long (media, FEC, retransmissions: maxQueueDelayMs; key frame/SPS/PPS: 4x). */
  droppedExpired: number;
  /** Items refused for a non-finite or negative size. */
  droppedInvalid: number;
  /** Items removed by {@link Pacer.purge} (e.g. delta frames made stale by a key frame). */
  droppedStale: number;
  /** Polls that held data back because of the bufferedAmount budget. */
  heldByBuffer: number;
}

// ---------------------------------------------------------------------------
// Additions (cc folder): bandwidth probing (probe-controller.ts,
// probe-estimator.ts). Above it only GccStats gained probeResults/probeResultsApplied.
// ---------------------------------------------------------------------------

/**
 * One probe cluster to send on a path: at least `minPackets` packets and
 * `minBytes` bytes (padding, ~1200 bytes each), paced at `targetBps`.
 * Every packet sent for it is reported with its `id`.
 * SOURCE: libwebrtc api/transport/network_types.h ProbeClusterConfig.
 */
export interface ProbeCluster {
  /** Cluster id, unique per controller (integer >= 1). */
  id: number;
  /** Send rate of the cluster (bps). */
  targetBps: number;
  /** Packets to send, at least (libwebrtc min_probe_packets_sent, 5). */
  minPackets: number;
  /** Bytes to send, at least: targetBps x min duration (15 ms) / 8. */
  minBytes: number;
}

/** Configuration of {@link import('./probe-controller.js').ProbeController}. Rates in bps. */
export interface ProbeConfig {
  /** Initial probes at these multiples of the start rate (libwebrtc 3 and 6). Default [3, 6]. */
  initialScales: number[];
  /** "Probe further" at this multiple of the current estimate (libwebrtc 2). Default 2. */
  furtherScale: number;
  /**
   * Probe further once the estimate exceeds this fraction of the last probe's
   * target (libwebrtc further_probe_threshold 0.7). Default 0.7.
   */
  furtherThreshold: number;
  /** Give up waiting for a probe result after this long (ms; libwebrtc kMaxWaitingTimeForProbingResult). Default 1000. */
  maxWaitMs: number;
  /** Probes never target more than this (bps). Default 50_000_000. */
  maxBps: number;
  /** Packets per cluster, at least (libwebrtc min_probe_packets_sent). Default 5. */
  minPackets: number;
  /** Duration of a cluster, at least (ms; libwebrtc min_probe_duration). Default 15. */
  minDurationMs: number;
  /**
   * Periodic probe while application-limited (ALR), at most this often (ms);
   * 0 disables it (libwebrtc alr_probing_interval 5 s, off unless enabled). Default 0.
   */
  alrIntervalMs: number;
  /** ALR probes target this multiple of the estimate (libwebrtc alr_probe_scale 2). Default 2. */
  alrScale: number;
}

/** Configuration of {@link import('./probe-estimator.js').ProbeBitrateEstimator}. */
export interface ProbeEstimatorConfig {
  /** A cluster is forgotten this long after its last sent packet (ms; libwebrtc kMaxClusterHistory 1 s). Default 1000. */
  clusterHistoryMs: number;
  /** Clusters tracked at once; the oldest is dropped beyond it. Default 32. */
  maxClusters: number;
  /** Probe packets awaiting a report; the oldest is dropped beyond it. Default 4096. */
  maxPackets: number;
}

/** Counters of {@link import('./probe-estimator.js').ProbeBitrateEstimator}. */
export interface ProbeEstimatorStats {
  packetsSent: number;
  /** onProbePacketSent calls rejected (bad id, seq, size or time). */
  sentInvalid: number;
  packetsReceived: number;
  /** Probe packets forgotten before their report (bound or cluster expiry). */
  packetsDropped: number;
  clustersExpired: number;
  /** Results returned by onReport. */
  results: number;
  /** Cluster evaluations rejected (intervals <= 0 or > 1 s, receive/send ratio > 2). */
  resultsInvalid: number;
  /** Reports that were not an object with an arrivals array, or a bad nowUs. */
  reportsInvalid: number;
}
