/**
 * Per-path congestion control: GCC bandwidth estimator and leaky-bucket pacer.
 * Each algorithm lives in its own file; this barrel only re-exports them.
 */
export type * from './types.js';
export { GccEstimator, DEFAULT_GCC_CONFIG } from './gcc.js';
export { Pacer, DEFAULT_PACER_CONFIG } from './pacer.js';
export { InterArrival, SEND_TIME_GROUP_LENGTH_US } from './inter-arrival.js';
export { TrendlineEstimator } from './trendline.js';
export type { TrendlineConfig } from './trendline.js';
export { OveruseDetector } from './overuse-detector.js';
export type { OveruseDetectorConfig } from './overuse-detector.js';
export { AimdRateControl } from './aimd.js';
export type { AimdConfig } from './aimd.js';
export { LinkCapacityEstimator } from './link-capacity.js';
export { LossBasedBwe } from './loss-based.js';
export type { LossBasedConfig } from './loss-based.js';
export { AckedBitrateEstimator } from './acked-bitrate.js';
export type { AckedBitrateConfig } from './acked-bitrate.js';
export { RttEstimator, rttFromReport, MAX_RTT_US } from './rtt.js';
export type { RttConfig } from './rtt.js';
export { DelayBasedBwe } from './delay-based.js';
export type { DelayBasedConfig } from './delay-based.js';
export { SentPacketHistory } from './sent-history.js';
export type { ReportOutcome } from './sent-history.js';
export { ProbeController, GccProber, DEFAULT_PROBE_CONFIG } from './probe-controller.js';
export { ProbeBitrateEstimator, DEFAULT_PROBE_ESTIMATOR_CONFIG } from './probe-estimator.js';
