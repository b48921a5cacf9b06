/**
 * Sends a path's probe clusters (libwebrtc modules/pacing/bitrate_prober.cc:
 * a cluster is a burst of padding packets at its target rate, at least
 * `minPackets` packets and `minBytes` bytes, spaced size x 8 / targetBps
 * apart). The clusters come from the path's {@link PathProber} (the
 * estimator's probe controller: initial, "probe further" and ALR probes),
 * from a failover (another path failed and this one must take its load) and
 * from an outage's end (probe at the rate the path had).
 *
 * I/O-free: the owner writes each padding packet ({@link ProbeSender.sendDue}'s
 * callback) and passes times in (µs). Bounded: at most 8 queued clusters.
 */
import type { BandwidthEstimator, PathProber, PathReport, ProbeCluster } from './types.js';

/** A probe waits while the datachannel holds more than this (bytes). */
const PROBE_MAX_BUFFERED_BYTES = 64_000;
/** A failover probe waits until the path's queue is below this (bytes). */
const FAILOVER_PROBE_MAX_QUEUE_BYTES = 6_000;
/** Queued clusters, at most. */
const MAX_QUEUED_CLUSTERS = 8;
/** Clusters sent per call of sendDue, at most (a guard against a zero-spacing loop). */
const MAX_PACKETS_PER_CALL = 64;

export class ProbeSender {
  private started = false;
  private readonly queue: ProbeCluster[] = [];
  private current: { cluster: ProbeCluster; packets: number; bytes: number; nextUs: number } | undefined;
  private failover: { targetBps: number; dueUs: number; left: number } | undefined;

  constructor(
    private readonly prober: PathProber,
    private readonly estimator: BandwidthEstimator,
  ) {}

  /**
   * A receiver report arrived (after `estimator.onReport`): measure the
   * clusters it covers and queue the ones the controller asks for next.
   * @param appLimited the path sends well below its estimate (its ALR probes keep the estimate real)
   */
  onReport(report: PathReport, nowUs: number, appLimited: boolean): void {
    this.prober.setApplicationLimited(appLimited);
    for (const c of this.prober.onReport(report, nowUs)) if (this.queue.length < MAX_QUEUED_CLUSTERS) this.queue.push(c);
  }

  /**
   * Another path failed: probe this one at `targetBps` once the rerouted
   * burst has drained (a probe into a standing queue measures the queue, and
   * GCC ignores results while it sees overuse), from `dueUs` on, retrying up
   * to 3 times 700 ms apart while the estimate stays below half the target.
   */
  scheduleFailoverProbe(targetBps: number, dueUs: number): void {
    this.failover = { targetBps, dueUs, left: 3 };
  }

  /** The path's reports resumed after an outage: probe at the rate it had (`bps`) before anything else. */
  probeFirst(nowUs: number, bps: number): void {
    const c = this.prober.requestProbe(nowUs, bps);
    if (c && this.queue.length < MAX_QUEUED_CLUSTERS) this.queue.unshift(c);
  }

  /**
   * Send the probe packets due now through `sendPadding(clusterId)`, which
   * writes one padding packet and returns its per-path seq and size, or
   * undefined when the path refused it (the cluster is then abandoned).
   * @param bufferedBytes the datachannel's bufferedAmount now
   * @param queuedBytes the path's pacer queue + bufferedAmount now
   */
  sendDue(nowUs: number, bufferedBytes: () => number, queuedBytes: number, sendPadding: () => { pathSeq: number; bytes: number } | undefined): void {
    this.maybeFailoverProbe(nowUs, queuedBytes);
    if (!this.started) {
      this.started = true;
      this.queue.push(...this.prober.start(nowUs, this.estimator.targetRateBps()));
    }
    for (let guard = 0; guard < MAX_PACKETS_PER_CALL; guard++) {
      if (!this.current) {
        const cluster = this.queue.shift();
        if (!cluster) return;
        this.current = { cluster, packets: 0, bytes: 0, nextUs: nowUs };
      }
      const pr = this.current;
      if (pr.nextUs > nowUs) return;
      if (bufferedBytes() > PROBE_MAX_BUFFERED_BYTES) {
        pr.nextUs = nowUs + 2_000;
        return;
      }
      const sent = sendPadding();
      if (!sent) {
        this.current = undefined;
        return;
      }
      this.prober.onPacketSent(pr.cluster.id, sent.pathSeq, sent.bytes, nowUs, bufferedBytes());
      pr.packets++;
      pr.bytes += sent.bytes;
      if (pr.packets >= pr.cluster.minPackets && pr.bytes >= pr.cluster.minBytes) {
        this.current = undefined;
        continue;
      }
      pr.nextUs += Math.max(1, Math.round((sent.bytes * 8e6) / pr.cluster.targetBps));
    }
  }

  /** When the next probe packet is due (µs): `nowUs` when a cluster waits to start, undefined when none. */
  nextUs(nowUs: number): number | undefined {
    if (this.current) return this.current.nextUs;
    return this.queue.length > 0 ? nowUs : undefined;
  }

  private maybeFailoverProbe(nowUs: number, queuedBytes: number): void {
    const fp = this.failover;
    if (!fp || nowUs < fp.dueUs || this.current || this.queue.length > 0) return;
    if (queuedBytes > FAILOVER_PROBE_MAX_QUEUE_BYTES) {
      fp.dueUs = nowUs + 20_000;
      return;
    }
    if (fp.left <= 0 || this.estimator.targetRateBps() >= 0.5 * fp.targetBps) {
      this.failover = undefined;
      return;
    }
    fp.left--;
    fp.dueUs = nowUs + 700_000;
    const c = this.prober.requestProbe(nowUs, fp.targetBps);
    if (c) this.queue.push(c);
  }
}
