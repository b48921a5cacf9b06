/**
 * Probe bitrate estimator: measures the rate a probe cluster got through.
 *
 * SOURCE: libwebrtc modules/congestion_controller/goog_cc/probe_bitrate_estimator.cc
 * (HandleProbeAndEstimateBitrate: a cluster is measured once >= 80 % of its
 * min packets (kMinReceivedProbesRatio) and of its min bytes
 * (kMinReceivedBytesRatio) were reported; send rate = (bytes - size of the
 * last-sent packet) / (last send - first send), receive rate = (bytes - size of
 * the first-received packet) / (last arrival - first arrival); both intervals
 * must be in (0, 1 s] (kMaxProbeInterval) and receive/send <= 2
 * (kMaxValidRatio); result = min(send, receive), or 0.95 x receive
 * (kTargetUtilizationFraction) when receive < 0.9 x send
 * (kMinRatioForUnsaturatedLink: the link was saturated); clusters older
 * than 1 s are forgotten (kMaxClusterHistory)).
 *
 * I/O-free. Sender times are sender clock (µs); arrival times are the
 * receiver's clock and only used as differences.
 */
import type { PathReport, ProbeCluster, ProbeEstimatorConfig, ProbeEstimatorStats } from './types.js';

/** Defaults of {@link ProbeEstimatorConfig}. */
export const DEFAULT_PROBE_ESTIMATOR_CONFIG: Readonly<ProbeEstimatorConfig> = Object.freeze({
  clusterHistoryMs: 1000,
  maxClusters: 32,
  maxPackets: 4096,
});

const MIN_RECEIVED_PACKETS_RATIO = 0.8;
const MIN_RECEIVED_BYTES_RATIO = 0.8;
const MAX_PROBE_INTERVAL_US = 1_000_000;
const MAX_VALID_RATIO = 2;
const MIN_RATIO_FOR_UNSATURATED_LINK = 0.9;
const TARGET_UTILIZATION_FRACTION = 0.95;
/** Cluster thresholds when packets arrive for a cluster never registered with addCluster. */
const DEFAULT_MIN_PACKETS = 5;
const UINT32_MAX = 0xffff_ffff;
const MAX_PACKET_BYTES = 1 << 24;

interface ClusterState {
  id: number;
  /** Creation order (for "latest cluster wins"). */
  order: number;
  minPackets: number;
  minBytes: number;
  lastActivityUs: number;
  touched: number;
  count: number;
  bytes: number;
  firstSendUs: number;
  lastSendUs: number;
  sizeLastSend: number;
  firstRecvUs: number;
  lastRecvUs: number;
  sizeFirstRecv: number;
}

interface ProbePacket {
  clusterId: number;
  sizeBytes: number;
  sendUs: number;
}

/**
 * Matches the receiver's per-path reports to probe packets and returns a
 * probe result (bps) when a cluster's reported packets suffice.
 * Bounded: at most `maxClusters` clusters and `maxPackets` unreported probe
 * packets (oldest dropped and counted). Never throws on data.
 */
export class ProbeBitrateEstimator {
  private readonly cfg: ProbeEstimatorConfig;
  private readonly clusters = new Map<number, ClusterState>();
  private readonly packets = new Map<number, ProbePacket>();
  private order = 0;
  private reportNo = 0;
  private lastEstimate: number | undefined;
  private readonly counters: ProbeEstimatorStats = {
    packetsSent: 0,
    sentInvalid: 0,
    packetsReceived: 0,
    packetsDropped: 0,
    clustersExpired: 0,
    results: 0,
    resultsInvalid: 0,
    reportsInvalid: 0,
  };

  /**
   * @param config partial {@link ProbeEstimatorConfig} (extra keys are ignored)
   * @throws RangeError when clusterHistoryMs is not finite and > 0, maxClusters is not an
   *   integer in [1, 1024] or maxPackets not an integer in [16, 2^20].
   */
  constructor(config: Partial<ProbeEstimatorConfig> = {}) {
    const c: ProbeEstimatorConfig = {
      clusterHistoryMs: config.clusterHistoryMs ?? DEFAULT_PROBE_ESTIMATOR_CONFIG.clusterHistoryMs,
      maxClusters: config.maxClusters ?? DEFAULT_PROBE_ESTIMATOR_CONFIG.maxClusters,
      maxPackets: config.maxPackets ?? DEFAULT_PROBE_ESTIMATOR_CONFIG.maxPackets,
    };
    if (!(Number.isFinite(c.clusterHistoryMs) && c.clusterHistoryMs > 0)) throw new RangeError(`ProbeBitrateEstimator: clusterHistoryMs must be finite and > 0, got ${c.clusterHistoryMs}`);
    if (!Number.isInteger(c.maxClusters) || c.maxClusters < 1 || c.maxClusters > 1024) throw new RangeError(`ProbeBitrateEstimator: maxClusters must be an integer in [1, 1024], got ${c.maxClusters}`);
    if (!Number.isInteger(c.maxPackets) || c.maxPackets < 16 || c.maxPackets > 1 << 20) throw new RangeError(`ProbeBitrateEstimator: maxPackets must be an integer in [16, 2^20], got ${c.maxPackets}`);
    this.cfg = c;
  }

  /**
   * Register a cluster so its thresholds (minPackets, minBytes) are known.
   * Packets of unregistered clusters are still measured, with 5 packets / 0 bytes.
   * Invalid clusters are ignored.
   */
  addCluster(cluster: ProbeCluster, nowUs: number): void {
    if (typeof cluster !== 'object' || cluster === null || !Number.isInteger(cluster.id) || !Number.isFinite(nowUs)) return;
    const minPackets = Number.isFinite(cluster.minPackets) && cluster.minPackets > 0 ? cluster.minPackets : DEFAULT_MIN_PACKETS;
    const minBytes = Number.isFinite(cluster.minBytes) && cluster.minBytes > 0 ? cluster.minBytes : 0;
    const c = this.getOrCreate(cluster.id, nowUs);
    c.minPackets = minPackets;
    c.minBytes = minBytes;
  }

  /**
   * A probe packet left (per-path seq uint32, bytes, sender clock µs).
   * Invalid input is counted (sentInvalid) and ignored.
   */
  onProbePacketSent(clusterId: number, pathSeq: number, sizeBytes: number, sendTimeUs: number): void {
    if (
      !Number.isInteger(clusterId) ||
      !Number.isInteger(pathSeq) ||
      pathSeq < 0 ||
      pathSeq > UINT32_MAX ||
      !(Number.isFinite(sizeBytes) && sizeBytes > 0 && sizeBytes <= MAX_PACKET_BYTES) ||
      !Number.isFinite(sendTimeUs)
    ) {
      this.counters.sentInvalid++;
      return;
    }
    const c = this.getOrCreate(clusterId, sendTimeUs);
    if (sendTimeUs > c.lastActivityUs) c.lastActivityUs = sendTimeUs;
    const p = this.packets;
    p.delete(pathSeq); // re-insert so insertion order stays send order
    p.set(pathSeq, { clusterId, sizeBytes, sendUs: sendTimeUs });
    this.counters.packetsSent++;
    if (p.size > this.cfg.maxPackets) {
      const oldest = p.keys().next().value as number;
      p.delete(oldest);
      this.counters.packetsDropped++;
    }
  }

  /**
   * Process one PathReport (sender clock `nowUs`). Returns the probe result
   * (bps) of the most recently created cluster that got packets in this
   * report and now passes the thresholds, else undefined. Malformed reports
   * and entries are skipped and counted.
   */
  onReport(report: PathReport, nowUs: number): number | undefined {
    if (typeof report !== 'object' || report === null || !Array.isArray(report.arrivals) || !Number.isFinite(nowUs)) {
      this.counters.reportsInvalid++;
      return undefined;
    }
    this.expire(nowUs);
    if (this.packets.size === 0) return undefined;
    const stamp = ++this.reportNo;
    const arrivals = report.arrivals;
    let anyTouched = false;
    for (let k = 0; k < arrivals.length; k++) {
      const a = arrivals[k] as unknown as { pathSeq?: unknown; arrivalUs?: unknown } | null;
      if (typeof a !== 'object' || a === null) continue;
      const seq = a.pathSeq;
      const at = a.arrivalUs;
      if (typeof seq !== 'number' || typeof at !== 'number' || !Number.isFinite(at)) continue;
      const pkt = this.packets.get(seq);
      if (pkt === undefined) continue;
      this.packets.delete(seq);
      const c = this.clusters.get(pkt.clusterId);
      if (c === undefined) {
        this.counters.packetsDropped++;
        continue;
      }
      this.counters.packetsReceived++;
      c.count++;
      c.bytes += pkt.sizeBytes;
      if (pkt.sendUs < c.firstSendUs) c.firstSendUs = pkt.sendUs;
      if (pkt.sendUs > c.lastSendUs) {
        c.lastSendUs = pkt.sendUs;
        c.sizeLastSend = pkt.sizeBytes;
      }
      if (at < c.firstRecvUs) {
        c.firstRecvUs = at;
        c.sizeFirstRecv = pkt.sizeBytes;
      }
      if (at > c.lastRecvUs) c.lastRecvUs = at;
      c.touched = stamp;
      anyTouched = true;
    }
    if (!anyTouched) return undefined;
    let best: ClusterState | undefined;
    let result: number | undefined;
    for (const c of this.clusters.values()) {
      if (c.touched !== stamp || (best !== undefined && c.order < best.order)) continue;
      const r = this.evaluate(c);
      if (r !== undefined) {
        best = c;
        result = r;
      }
    }
    if (result !== undefined) {
      this.counters.results++;
      this.lastEstimate = result;
    }
    return result;
  }

  /** Last result returned (bps), undefined before any. */
  lastEstimateBps(): number | undefined {
    return this.lastEstimate;
  }

  /** Clusters currently tracked. */
  clusterCount(): number {
    return this.clusters.size;
  }

  /** Probe packets awaiting a report. */
  pendingPackets(): number {
    return this.packets.size;
  }

  stats(): ProbeEstimatorStats {
    return { ...this.counters };
  }

  private evaluate(c: ClusterState): number | undefined {
    if (c.count < MIN_RECEIVED_PACKETS_RATIO * c.minPackets || c.bytes < MIN_RECEIVED_BYTES_RATIO * c.minBytes) return undefined;
    const sendInterval = c.lastSendUs - c.firstSendUs;
    const recvInterval = c.lastRecvUs - c.firstRecvUs;
    if (!(sendInterval > 0 && sendInterval <= MAX_PROBE_INTERVAL_US && recvInterval > 0 && recvInterval <= MAX_PROBE_INTERVAL_US)) {
      this.counters.resultsInvalid++;
      return undefined;
    }
    const sendBps = ((c.bytes - c.sizeLastSend) * 8e6) / sendInterval;
    const recvBps = ((c.bytes - c.sizeFirstRecv) * 8e6) / recvInterval;
    if (!(sendBps > 0 && recvBps > 0) || recvBps / sendBps > MAX_VALID_RATIO) {
      this.counters.resultsInvalid++;
      return undefined;
    }
    return recvBps < MIN_RATIO_FOR_UNSATURATED_LINK * sendBps ? TARGET_UTILIZATION_FRACTION * recvBps : Math.min(sendBps, recvBps);
  }

  private getOrCreate(id: number, nowUs: number): ClusterState {
    let c = this.clusters.get(id);
    if (c !== undefined) return c;
    c = {
      id,
      order: ++this.order,
      minPackets: DEFAULT_MIN_PACKETS,
      minBytes: 0,
      lastActivityUs: nowUs,
      touched: 0,
      count: 0,
      bytes: 0,
      firstSendUs: Number.POSITIVE_INFINITY,
      lastSendUs: Number.NEGATIVE_INFINITY,
      sizeLastSend: 0,
      firstRecvUs: Number.POSITIVE_INFINITY,
      lastRecvUs: Number.NEGATIVE_INFINITY,
      sizeFirstRecv: 0,
    };
    this.clusters.set(id, c);
    if (this.clusters.size > this.cfg.maxClusters) {
      const oldest = this.clusters.keys().next().value as number;
      this.clusters.delete(oldest);
      this.counters.clustersExpired++;
    }
    return c;
  }

  /** Forget clusters idle (no packet sent) for longer than clusterHistoryMs, and their unreported packets. */
  private expire(nowUs: number): void {
    const limitUs = this.cfg.clusterHistoryMs * 1000;
    let removed = false;
    for (const [id, c] of this.clusters) {
      if (nowUs - c.lastActivityUs > limitUs) {
        this.clusters.delete(id);
        this.counters.clustersExpired++;
        removed = true;
      }
    }
    if (!removed) return;
    for (const [seq, p] of this.packets) {
      if (!this.clusters.has(p.clusterId)) {
        this.packets.delete(seq);
        this.counters.packetsDropped++;
      }
    }
  }
}
