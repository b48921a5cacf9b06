/**
 * multipath-rtc: real-time video over several network paths at once.
 * Browser-safe entry point (the Node signalling server is `multipath-rtc/server`).
 */
export { MultipathCall, CallEvent, CallError, MAX_PARTICIPANTS, isOfferer, reconnectDelayMs } from './call/multipath-call.js';
export type {
  MultipathCallOptions,
  CallEventMap,
  SendDataOptions,
  CallDataInfo,
  CallErrorCode,
  ParticipantInfo,
  RemoteTrackInfo,
  CallDeps,
  ReconnectPolicy,
  SignallingStateInfo,
  CallCapabilities,
  RouteSwitchInfo,
  RouteSwitchPhase,
  RelaySelectionConfig,
  RelaySelectionOption,
} from './call/multipath-call.js';
export { CallStatsReport } from './call/stats-types.js';
export type {
  CallStatsEntry,
  CallStatsEntryOf,
  CallStatsType,
  StatsBase,
  CallEntryStats,
  MediaSourceStats,
  VideoSourceStats,
  AudioSourceStats,
  TransportStats,
  CandidatePairStats,
  IceCandidateStats,
  PathStats,
  CodecStats,
  OutboundRtpStats,
  OutboundVideoStats,
  OutboundAudioStats,
  RemoteInboundRtpStats,
  InboundRtpStats,
  InboundVideoStats,
  InboundAudioStats,
  DataChannelStats,
} from './call/stats-types.js';
export type { SignallingTransport, SignallingTransportEvents, SignallingTransportFactory } from './signalling/transport.js';
export { AppDataChannel, AppDataError } from './engine/app-data.js';
export type { AppDataOptions, AppDataStats, AppDataInfo, AppDataErrorCode } from './engine/app-data.js';
export { MAX_APP_DATA_BYTES } from './wire/types.js';
export { SenderEngine } from './engine/sender.js';
export type { SenderEngineConfig, SenderEvents } from './engine/sender.js';
export { ReceiverEngine } from './engine/receiver.js';
export type { ReceiverEngineConfig, ReceiverMemoryConfig, DecodableFrame, ReceiverEvents } from './engine/receiver.js';
export { FreezeDetector, freezesOf, meanFps, goodputBps, latencyOf, FREEZE_WINDOW_FRAMES, FREEZE_MIN_INTERVALS, FREEZE_MIN_INCREASE_MS } from './feedback/qoe-metrics.js';
export type { FreezeStats, LatencyStats } from './feedback/qoe-metrics.js';
export { PlayoutTiming } from './feedback/playout.js';
export type { PlayoutOptions, PlayoutStats } from './feedback/playout.js';
export { Endpoint } from './engine/endpoint.js';
export type { PathSink, SenderStats, ReceiverStats, SenderPathStats, ReceiverPathStats } from './engine/types.js';
export { ManualClock, monotonicClock } from './core/clock.js';
export type { Clock } from './core/clock.js';
export { Priority, NalClass, MAX_PATHS } from './core/types.js';
export type { PathId, CodecName, PathState, QoeFeedback, PathReport } from './core/types.js';
export { createScheduler, registerScheduler, schedulerNames } from './sched/factory.js';
export type { SchedulerEntry, NamedSchedulerEntry, SchedulerSpec, CreateSchedulerOptions } from './sched/factory.js';
export type { Scheduler, SchedulerName } from './sched/types.js';
export { createFecPolicy, registerFecPolicy, fecPolicyNames } from './fec/factory.js';
export type { FecPolicyEntry, NamedFecPolicyEntry, FecPolicySpec } from './fec/factory.js';
export type { FecPolicy, FecPolicyName } from './fec/types.js';
export { fecCode, fecCodeNames, registerFecCode, DEFAULT_FEC_CODE } from './fec/codes.js';
export type { FecCodeDecoder, FecCodeEntry, FecCodeName } from './fec/codes.js';
export { GccEstimator } from './cc/gcc.js';
export { createEstimator, registerEstimator, estimatorNames, EstimatorRegistryError } from './cc/registry.js';
export type { EstimatorEntry, NamedEstimatorEntry, EstimatorSpec, EstimatorName, EstimatorOptions } from './cc/registry.js';
export type { BandwidthEstimator } from './cc/types.js';
export { CameraEncoder, FrameDecoder, CodecError, codecString, probeCodec } from './codec/webcodecs.js';
export type { CameraEncoderOptions, CameraEncoderStats, CaptureMode, RenderMode } from './codec/webcodecs.js';
export { VideoAdapter, FrameRateLimiter, EncodeUsageMeter, buildLadder, DEGRADATION_PREFERENCES } from './adapt/index.js';
export type { DegradationPreference, DegradationReason, AdaptationDecision, VideoAdapterOptions, LadderStep } from './adapt/index.js';
export { SignallingClient } from './signalling/client.js';
export type { PathTransport, PathTransportState, SelectedPair } from './transport/types.js';
