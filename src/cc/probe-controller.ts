/**
 * Bandwidth probing: when to send probe clusters and at which rates; plus
 * {@link GccProber}, the per-path facade that ties the controller, the
 * {@link ProbeBitrateEstimator} and a {@link GccEstimator} together.
 *
 * SOURCE: libwebrtc modules/congestion_controller/goog_cc/probe_controller.cc
 * (InitiateExponentialProbing: probes at 3x and 6x the start rate;
 * SetEstimatedBitrate: while waiting for a result, "probe further" at 2x the
 * estimate once it exceeds further_probe_threshold 0.7 x the last probe;
 * kMaxWaitingTimeForProbingResult 1 s; probes capped at the max bitrate, which
 * also ends probing further; periodic ALR probes at 2x every 5 s, off by
 * default; min_probe_packets_sent 5, min_probe_duration 15 ms) and
 * goog_cc_network_control.cc (probe result -> DelayBasedBwe -> SendSideBandwidthEstimation).
 * Ours, not libwebrtc's: {@link ProbeController.reprobe} and the start-up
 * re-probe of {@link GccProber} (see there).
 *
 * I/O-free: time only comes as `nowUs` arguments (sender clock, µs).
 */
import type { GccEstimator } from './gcc.js';
import { ProbeBitrateEstimator } from './probe-estimator.js';
import type { PathReport, ProbeCluster, ProbeConfig, ProbeEstimatorConfig } from './types.js';

/** Defaults of {@link ProbeConfig}. */
export const DEFAULT_PROBE_CONFIG: Readonly<ProbeConfig> = Object.freeze({
  initialScales: [3, 6],
  furtherScale: 2,
  furtherThreshold: 0.7,
  maxWaitMs: 1000,
  maxBps: 50_000_000,
  minPackets: 5,
  minDurationMs: 15,
  alrIntervalMs: 0,
  alrScale: 2,
});

/** Controller state (libwebrtc ProbeController::State). */
export type ProbeState = 'init' | 'waiting' | 'complete';

const MAX_INITIAL_SCALES = 4;
const MAX_CLUSTER_ID = 0x7fff_ffff;

/**
 * Decides the probe clusters of one path. Bounded: at most
 * `initialScales.length` (<= 4) clusters at start; afterwards at most one
 * cluster per call. Each further probe targets at least furtherScale x
 * furtherThreshold (1.4) x the previous one and they stop at maxBps, so at
 * most log_1.4(maxBps / first probe) + 1 further probes happen per probing
 * episode before the controller settles in 'complete' (ALR probes, when
 * enabled, at most one per alrIntervalMs).
 */
export class ProbeController {
  private readonly cfg: ProbeConfig;
  private st: ProbeState = 'init';
  private nextId = 1;
  /** Probing further needs an estimate above this (bps); +Infinity when not probing further. */
  private minToProbeFurther = Number.POSITIVE_INFINITY;
  private lastProbeTargetBps = 0;
  private waitStartUs = 0;
  private lastProbeUs = Number.NEGATIVE_INFINITY;
  private appLimited = false;
  private clusters = 0;

  /**
   * @param config partial {@link ProbeConfig}
   * @throws RangeError when a scale is not finite and > 1 (initialScales: 1..4 of them),
   *   furtherThreshold is not in (0, 1], maxBps/minDurationMs/maxWaitMs are not finite and > 0,
   *   minPackets is not an integer in [1, 1000], or alrIntervalMs is negative or not finite.
   */
  constructor(config: Partial<ProbeConfig> = {}) {
    const c: ProbeConfig = { ...DEFAULT_PROBE_CONFIG, ...config };
    const bad = (k: string, v: unknown) => new RangeError(`ProbeController: invalid ${k}: ${String(v)}`);
    if (!Array.isArray(c.initialScales) || c.initialScales.length < 1 || c.initialScales.length > MAX_INITIAL_SCALES || !c.initialScales.every((s) => Number.isFinite(s) && s > 1))
      throw bad('initialScales', c.initialScales);
    for (const k of ['furtherScale', 'alrScale'] as const) if (!(Number.isFinite(c[k]) && c[k] > 1)) throw bad(k, c[k]);
    if (!(c.furtherThreshold > 0 && c.furtherThreshold <= 1)) throw bad('furtherThreshold', c.furtherThreshold);
    for (const k of ['maxBps', 'minDurationMs', 'maxWaitMs'] as const) if (!(Number.isFinite(c[k]) && c[k] > 0)) throw bad(k, c[k]);
    if (!Number.isInteger(c.minPackets) || c.minPackets < 1 || c.minPackets > 1000) throw bad('minPackets', c.minPackets);
    if (!(Number.isFinite(c.alrIntervalMs) && c.alrIntervalMs >= 0)) throw bad('alrIntervalMs', c.alrIntervalMs);
    this.cfg = { ...c, initialScales: [...c.initialScales] };
  }

  /** 'init' before {@link onStart}, 'waiting' while a result may trigger probing further, 'complete' otherwise. */
  state(): ProbeState {
    return this.st;
  }

  /** Clusters created so far. */
  clustersCreated(): number {
    return this.clusters;
  }

  /**
   * Initial exponential probing: one cluster per `initialScales` entry
   * (default 3x and 6x `startBps`), capped at maxBps. Only the first call
   * probes; later calls (and a non-finite or <= 0 start) return [].
   * @param nowUs sender clock (µs)
   * @param startBps start rate of the path (bps)
   */
  onStart(nowUs: number, startBps: number): ProbeCluster[] {
    if (this.st !== 'init') return [];
    return this.exponential(nowUs, startBps);
  }

  /**
   * New target estimate of the path (bps), e.g. after each report. While
   * waiting for a probe result (at most maxWaitMs after the last probe),
   * an estimate above furtherThreshold x the last probe target starts one
   * probe at furtherScale x the estimate. When ALR probing is enabled and
   * the sender is application-limited, probes at alrScale x the estimate
   * every alrIntervalMs. Returns the clusters to send ([] mostly).
   */
  onEstimate(nowUs: number, estimateBps: number): ProbeCluster[] {
    if (!Number.isFinite(nowUs) || !(Number.isFinite(estimateBps) && estimateBps > 0)) return [];
    if (this.st === 'waiting') {
      if (nowUs - this.waitStartUs > this.cfg.maxWaitMs * 1000) {
        this.complete();
      } else if (estimateBps > this.minToProbeFurther) {
        return this.initiate(nowUs, [this.cfg.furtherScale * estimateBps], true);
      }
    }
    if (this.st === 'complete' && this.appLimited && this.cfg.alrIntervalMs > 0 && nowUs - this.lastProbeUs >= this.cfg.alrIntervalMs * 1000) {
      return this.initiate(nowUs, [this.cfg.alrScale * estimateBps], true);
    }
    return [];
  }

  /**
   * A probe result (bps). A result clearly below the last probe's target
   * (under furtherThreshold x target) shows the capacity was found: probing
   * further stops at once instead of after maxWaitMs.
   */
  onProbeResult(_nowUs: number, resultBps: number): void {
    if (!(Number.isFinite(resultBps) && resultBps > 0)) return;
    if (this.st === 'waiting' && resultBps < this.cfg.furtherThreshold * this.lastProbeTargetBps) this.complete();
  }

  /**
   * A second round of exponential probing: one cluster per `initialScales`
   * entry (default 3x and 6x `bps`), capped at maxBps, probing further as
   * after {@link onStart}. Ours, not libwebrtc's (see {@link GccProber}'s
   * start-up re-probe). Returns [] before {@link onStart}, while waiting for
   * a result, and on non-finite or <= 0 input.
   * @param nowUs sender clock (µs)
   * @param bps the rate to scale (bps), e.g. the current target
   */
  reprobe(nowUs: number, bps: number): ProbeCluster[] {
    if (this.st !== 'complete') return [];
    return this.exponential(nowUs, bps);
  }

  /** Whether the sender is application-limited (ALR: sending well below the target); enables periodic ALR probes. */
  setApplicationLimited(appLimited: boolean): void {
    this.appLimited = appLimited === true;
  }

  /** One cluster per initialScales entry x `bps`, probing further; [] on non-finite or <= 0 input. */
  private exponential(nowUs: number, bps: number): ProbeCluster[] {
    if (!Number.isFinite(nowUs) || !(Number.isFinite(bps) && bps > 0)) return [];
    return this.initiate(
      nowUs,
      this.cfg.initialScales.map((s) => s * bps),
      true,
    );
  }

  private complete(): void {
    this.st = 'complete';
    this.minToProbeFurther = Number.POSITIVE_INFINITY;
  }

  private initiate(nowUs: number, ratesBps: number[], probeFurther: boolean): ProbeCluster[] {
    const out: ProbeCluster[] = [];
    const max = this.cfg.maxBps;
    let further = probeFurther;
    let last = 0;
    for (const r of ratesBps) {
      let bps = r;
      if (bps >= max) {
        bps = max;
        further = false; // nothing to find above the cap
      }
      if (bps <= last) continue; // no point in a second cluster at the same (capped) rate
      last = bps;
      out.push(this.makeCluster(bps));
    }
    this.lastProbeUs = nowUs;
    if (out.length === 0) {
      this.complete();
      return out;
    }
    this.lastProbeTargetBps = last;
    if (further) {
      this.st = 'waiting';
      this.waitStartUs = nowUs;
      this.minToProbeFurther = this.cfg.furtherThreshold * last;
    } else {
      this.complete();
    }
    return out;
  }

  private makeCluster(bps: number): ProbeCluster {
    const id = this.nextId;
    this.nextId = this.nextId >= MAX_CLUSTER_ID ? 1 : this.nextId + 1;
    this.clusters++;
    return {
      id,
      targetBps: bps,
      minPackets: this.cfg.minPackets,
      minBytes: Math.ceil((bps * this.cfg.minDurationMs) / 8000),
    };
  }
}

/** Ids of requested clusters live above the controller's own ids. */
const REQUESTED_PROBE_ID_BASE = 1_000_000;
/** The start-up re-probe is considered from this long after {@link GccProber.start} (µs)... */
const REPROBE_AFTER_US = 1_000_000;
/** ...until this long after it (µs). */
const REPROBE_UNTIL_US = 3_000_000;
/** ...on a path whose acknowledged bitrate is at least this fraction of the target (not application-limited). */
const REPROBE_MIN_ACKED_FRACTION = 0.6;
/** Given up once the target reached this multiple of the start rate (the start probes found headroom)... */
const REPROBE_FOUND_FACTOR = 2;
/** ...whose target is still at least this fraction of the start rate... */
const REPROBE_MIN_TARGET_FRACTION = 0.9;
/** ...and whose loss rate is below this. */
const REPROBE_MAX_LOSS = 0.02;
/** A start cluster counts as held by the transport when its send buffer held at least this fraction of the cluster's minBytes after one of its packets was written. */
const HELD_FRACTION = 0.5;

/**
 * Per-path probing facade: {@link ProbeController} + {@link ProbeBitrateEstimator},
 * applying results to a {@link GccEstimator}.
 *
 * Engine sequence, per path (all times sender clock, µs):
 * 1. At path start: `queue(prober.start(now, gcc.targetRateBps()))`.
 * 2. Sending a cluster: send packets of ~1200 bytes until both
 *    `cluster.minPackets` packets and `cluster.minBytes` bytes went out,
 *    spaced `size x 8e6 / cluster.targetBps` µs apart, clusters one after
 *    the other in the order returned. Each such packet gets a per-path seq
 *    like any other; call `gcc.onPacketSent(...)` AND
 *    `prober.onPacketSent(cluster.id, pathSeq, sizeBytes, sendTimeUs,
 *    bufferedBytes)` (the transport's send buffer after the write, when known).
 *    Media packets sent while a cluster is going out may be counted into it
 *    too (pass the cluster id); then pad only the difference, so the path's
 *    total rate during the cluster is about `targetBps` (libwebrtc pacer
 *    behaviour). Ignore the pacer's rate for probe packets, keep its buffer limits.
 * 3. For every PathReport: `gcc.onReport(report, now)` FIRST, then
 *    `queue(prober.onReport(report, now, gcc))`, which feeds the report to
 *    the probe estimator, gives a result to `gcc.onProbeResult`, and returns
 *    further clusters to send (usually []).
 * Optional: `prober.setApplicationLimited(true)` while the path sends well
 * below its target (only acts when `alrIntervalMs` > 0).
 *
 * Start-up re-probe (ours, not libwebrtc's): when the start probes did not
 * measure the path (no result applied by 1 s after {@link GccProber.start},
 * or the transport's send buffer held them: at least half a start cluster's
 * bytes were still in it after one of its packets was written, told through
 * {@link GccProber.onPacketSent}'s `bufferedBytes`), the first report between
 * 1 s and 3 s after the start that finds the path clean (loss rate < 2 %),
 * busy (acknowledged bitrate >= 0.6 x the target) and not backed off (target
 * >= 0.9 x the start rate) starts one more round of initial probing at the
 * current target ({@link ProbeController.reprobe}). It is given up for good
 * once the target reached 2x the start rate, a result was applied from start
 * probes that left unheld, the detector saw an over-use, or 3 s passed.
 * Why: in a browser the start probes go out through a new datachannel's SCTP
 * association, whose slow start (RFC 9260 §7.2.1; dcSCTP's initial cwnd, 10
 * MTUs, ~12 kB) holds less than both clusters plus the first media, so they
 * arrive spread out and read low: not applied, or applied at 1.1-1.6x the start
 * rate (measured on carriers' 4+ Mbps paths); GCC then climbs at ~8 %/s. One
 * second in, the window has opened and the probe measures the path. A low
 * result from probes that left at their rate is the path's answer and is not
 * asked again (the simulator's cellular suite at a tenth of its rates: asking
 * again there put more on paths that then faded, +1.8 s frozen per seed set).
 */
export class GccProber {
  readonly controller: ProbeController;
  readonly estimator: ProbeBitrateEstimator;
  private lastResult: number | undefined;
  private requested = 0;
  private startUs = Number.NaN;
  private startBps = 0;
  /** Whether the start-up re-probe may still happen. */
  private reprobePending = false;
  /** minBytes of the start clusters, by id (until the re-probe is decided). */
  private readonly startClusters = new Map<number, number>();
  /** Whether the transport's send buffer held a start cluster (see the class docstring). */
  private startHeld = false;
  private reprobes = 0;

  /**
   * @param config probe controller settings (set maxBps to the GCC maxBps) and estimator settings
   * @throws RangeError on invalid settings (see ProbeController, ProbeBitrateEstimator)
   */
  constructor(config: Partial<ProbeConfig> & Partial<ProbeEstimatorConfig> = {}) {
    this.controller = new ProbeController(config);
    this.estimator = new ProbeBitrateEstimator(config);
  }

  /** Initial clusters (default 3x and 6x `startBps`); [] after the first call. */
  start(nowUs: number, startBps: number): ProbeCluster[] {
    const out = this.controller.onStart(nowUs, startBps);
    if (out.length > 0) {
      this.startUs = nowUs;
      this.startBps = startBps;
      this.reprobePending = true;
      for (const c of out) this.startClusters.set(c.id, c.minBytes);
    }
    for (const c of out) this.estimator.addCluster(c, nowUs);
    return out;
  }

  /**
   * A packet of cluster `clusterId` was sent (per-path seq, bytes, sender clock µs).
   * @param bufferedBytes the transport's send buffer right after the write (bytes; a datachannel's
   *   `bufferedAmount`), when known: a start cluster held there allows the start-up re-probe
   */
  onPacketSent(clusterId: number, pathSeq: number, sizeBytes: number, sendTimeUs: number, bufferedBytes?: number): void {
    this.estimator.onProbePacketSent(clusterId, pathSeq, sizeBytes, sendTimeUs);
    const minBytes = this.startClusters.get(clusterId);
    if (minBytes !== undefined && typeof bufferedBytes === 'number' && bufferedBytes >= HELD_FRACTION * minBytes) this.startHeld = true;
  }

  /**
   * After `gcc.onReport(report, nowUs)`: measure probe clusters, apply a
   * result with `gcc.onProbeResult`, and return the clusters to send next.
   * Never throws on bad reports (they are counted by the estimator).
   */
  onReport(report: PathReport, nowUs: number, gcc: GccEstimator): ProbeCluster[] {
    const r = this.estimator.onReport(report, nowUs);
    if (r !== undefined) {
      this.lastResult = r;
      gcc.onProbeResult(r, nowUs);
      this.controller.onProbeResult(nowUs, r);
    }
    let out = this.controller.onEstimate(nowUs, gcc.targetRateBps());
    if (out.length === 0 && this.reprobePending && Number.isFinite(nowUs)) out = this.maybeReprobe(nowUs, gcc);
    for (const c of out) this.estimator.addCluster(c, nowUs);
    return out;
  }

  /** The start-up re-probe (see the class docstring); [] when not due. */
  private maybeReprobe(nowUs: number, gcc: GccEstimator): ProbeCluster[] {
    const sinceUs = nowUs - this.startUs;
    if (sinceUs < REPROBE_AFTER_US) return [];
    const target = gcc.targetRateBps();
    const st = gcc.stats();
    if (sinceUs > REPROBE_UNTIL_US || target >= REPROBE_FOUND_FACTOR * this.startBps || st.overuseOnsets > 0 || (st.probeResultsApplied > 0 && !this.startHeld)) {
      this.endReprobe();
      return [];
    }
    const acked = gcc.ackedRateBps();
    if (gcc.lossRate() >= REPROBE_MAX_LOSS || target < REPROBE_MIN_TARGET_FRACTION * this.startBps) return [];
    if (acked === undefined || acked < REPROBE_MIN_ACKED_FRACTION * target) return [];
    const out = this.controller.reprobe(nowUs, target);
    if (out.length > 0) {
      this.reprobes++;
      this.endReprobe();
    }
    return out;
  }

  /** Start-up re-probes sent (0 or 1; GccStats.startReprobes). */
  get startReprobes(): number {
    return this.reprobes;
  }

  /** The start-up re-probe was sent or given up: never again. */
  private endReprobe(): void {
    this.reprobePending = false;
    this.startClusters.clear();
  }

  /**
   * An extra cluster at `targetBps`, asked for by the owner (libwebrtc
   * ProbeController::RequestProbe after a large drop): e.g. when another path
   * failed and this one must take its load, so that GCC learns the capacity in
   * one RTT instead of climbing at 8%/s from the rate it was app-limited to.
   */
  requestProbe(nowUs: number, targetBps: number): ProbeCluster | undefined {
    if (!(Number.isFinite(targetBps) && targetBps > 0) || !Number.isFinite(nowUs)) return undefined;
    const c: ProbeCluster = {
      id: REQUESTED_PROBE_ID_BASE + (this.requested++ % REQUESTED_PROBE_ID_BASE),
      targetBps,
      minPackets: 5,
      minBytes: Math.ceil((targetBps * 0.015) / 8),
    };
    this.estimator.addCluster(c, nowUs);
    return c;
  }

  /** See {@link ProbeController.setApplicationLimited}. */
  setApplicationLimited(appLimited: boolean): void {
    this.controller.setApplicationLimited(appLimited);
  }

  /** Last probe result (bps), undefined before any. */
  lastResultBps(): number | undefined {
    return this.lastResult;
  }
}
