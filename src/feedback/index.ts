/**
 * Receiver-side feedback pieces (I/O-free): per-path arrival reports, jitter
 * estimation, frame buffer, Converge QoE feedback, NACK, key frame requests,
 * QoE statistics. One algorithm per file; see each file for its source.
 */
export * from './types.js';
export { percentile, percentileOfSorted, percentiles } from './percentile.js';
export { PathReportBuilder } from './path-report-builder.js';
export type { PathReportBuilderOptions, PathReportBuilderStats } from './path-report-builder.js';
export { JitterEstimator } from './jitter-estimator.js';
export type { JitterEstimatorOptions, JitterEstimatorStats } from './jitter-estimator.js';
export { FrameBuffer } from './frame-buffer.js';
export type { FrameBufferOptions, FrameBufferStats } from './frame-buffer.js';
export { QoeMonitor } from './qoe-monitor.js';
export type { QoeMonitorOptions, QoeMonitorStats } from './qoe-monitor.js';
export { NackGenerator } from './nack.js';
export type { NackGeneratorOptions, NackGeneratorStats } from './nack.js';
export { KeyframeRequester } from './keyframe-requester.js';
export type { KeyframeRequesterOptions, KeyframeRequesterStats } from './keyframe-requester.js';
export { StreamQoeStats } from './qoe-stats.js';
export type { StreamQoeStatsOptions, StreamQoeSnapshot, QoeSecond, LatencySummary } from './qoe-stats.js';
