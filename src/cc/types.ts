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
  /** Bytes sent and not yet covered by a report (bytes). */
  inflightBytes(): number;
  /** Sender time (µs) of the last report, undefined before the first. */
  lastReportUs(): number | undefined;
  stats(): EstimatorStats;
}

export type { PathReport };
