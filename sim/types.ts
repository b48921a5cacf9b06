/**
 * The simulator's options and result shapes (sim/simulator.ts `simulate`):
 * the result uses the call report's metric names (tools/harness/report.ts).
 */
import type { EstimatorName } from '../src/cc/registry.js';
import type { FractalConfig } from '../src/cc/fractal.js';
import type { PathId } from '../src/core/types.js';
import type { ReceiverEngineConfig } from '../src/engine/receiver-config.js';
import type { SenderEngineConfig } from '../src/engine/sender.js';
import type { PlayoutOptions } from '../src/feedback/playout.js';
import type { FecPolicyName } from '../src/fec/types.js';
import type { ConvergeConfig, SchedulerName } from '../src/sched/types.js';
import type { PerSecond, ReportPath } from '../tools/harness/report.js';
import type { FairnessResult } from './fairness.js';
import type { CrossTrafficKind, Scenario } from './net/scenario.js';
import type { SctpStats } from './datachannel-model.js';
import type { RtpCarrierOptions, RtpCarrierStats } from './rtp-carrier-model.js';
import type { StallFallbackOptions, StallFallbackStats } from '../src/transport/stall-fallback.js';

/** Per path with `datachannel: 'sctp+rtp'`: the up carrier's counters and each of our streams' stall fallback sink. */
export interface SimRtpPathStats {
  carrier: RtpCarrierStats;
  sinks: StallFallbackStats[];
}
import type { AdaptationStats, EncoderModelOptions } from './encoder-model.js';
import type { PacketTransmissionStats } from './metrics.js';

export interface SimOptions {
  scenario: Scenario;
  scheduler: SchedulerName;
  /** For scheduler 'single'. */
  singlePath?: PathId;
  fec: FecPolicyName;
  seed: number;
  /** Simulated seconds (default scenario.durationS, else 60). */
  durationS?: number;
  /** Independent video streams sharing the links (1..3, default 1). */
  streams?: number;
  encoder?: EncoderModelOptions;
  /** false = drop the receiver's QoE feedback (converge-without-feedback). Default true. */
  qoeFeedback?: boolean;
  /** App cap on the encoder target per stream (bps, default 8 Mbps as the engine). */
  maxBitrateBps?: number;
  /** Initial per-path GCC rate (bps, default 1 Mbps as the engine). */
  startBitrateBps?: number;
  /** Datagram MTU (bytes, default 1200). */
  mtuBytes?: number;
  /**
   * Bytes each datagram costs on the link beyond its payload. With
   * `datachannel: 'ideal'` (default {@link DEFAULT_LINK_OVERHEAD_BYTES} in sim/run-loop.ts):
   * IP/UDP, DTLS record and SCTP headers and the SCTP control packets (SACK,
   * FORWARD-TSN) the browser's datachannel adds; 0 = an ideal transport. With
   * 'sctp' only the UDP/IP headers (default 28, as the browser path relay,
   * tools/emulator): the SCTP/DTLS bytes are the model's.
   */
  linkOverheadBytes?: number;
  /**
   * How a path's RTCDataChannel is modelled. 'sctp': sim/datachannel-model.ts
   * (dcSCTP's congestion window, send buffer, SACKs on the reverse link,
   * fragmentation into 1191-byte SCTP packets, DTLS overhead), so
   * `bufferedAmount()` is real. 'ideal': every datagram goes on the link at
   * once, `bufferedAmount()` is 0. 'sctp+rtp': 'sctp' plus, per path, an RTP
   * carrier (sim/rtp-carrier-model.ts) on the up link that the media
   * sender of each of our streams uses while that path's datachannel is
   * stalled (src/transport/stall-fallback.ts StallFallbackSink; see
   * {@link stallFallback}, {@link rtpCarrier}). Default 'ideal'.
   */
  datachannel?: 'sctp' | 'ideal' | 'sctp+rtp';
  /** With `datachannel: 'sctp+rtp'`: the stall fallback's options (StallFallbackOptions `stallMs`, `stallScale`, `backlogBytes`, ...); default its defaults. */
  stallFallback?: Partial<
    Pick<StallFallbackOptions, 'stallMs' | 'stallScale' | 'backlogBytes' | 'progressBytes' | 'ceilingQueueMs' | 'minCeilingQueueBytes' | 'burstMs' | 'minCeilingBps' | 'drainProgresses'>
  > & {
    /** Ask the encoder for a key frame on each switch to the carrier (StallFallbackOptions.onSwitch); default true. */
    keyframeOnSwitch?: boolean;
    /** Count a stall only while nothing arrived on the path's down link for the stall time (StallFallbackOptions.lastReverseUs); default false. */
    reverseGate?: boolean;
  };
  /** With `datachannel: 'sctp+rtp'`: the RTP carrier model's options (sim/rtp-carrier-model.ts RTP_CARRIER_DEFAULTS). */
  rtpCarrier?: Partial<RtpCarrierOptions>;
  /** Receiver playout timing (ReceiverEngine `playout`; default the engine's; `{ maxDelayMs: 0 }` = decode at once). */
  playout?: PlayoutOptions;
  /**
   * Give the sender and the receiver different clocks: sender clock - receiver
   * clock (ms, any sign). Unset: both share the virtual clock and latency is
   * exact. Set (even 0): each side's engines run on their own clock (the
   * virtual clock shifted so neither is negative), capture times are on the
   * sender's clock, and the latency fields use the receiver's clock-offset
   * estimate, as in a real call; `clock` in the result reports the estimate.
   */
  clockSkewMs?: number;
  /** Receiver NACK timing (ReceiverEngine `nack`: reorderWindowMs, maxReorderWindowMs, maxRetries, maxNackAgeMs); default the engine's. For experiments. */
  nack?: import('../src/engine/receiver-config.js').ReceiverEngineConfig['nack'];
  /** Receiver RTT assumption (ms) passed as ReceiverEngine `defaultRttMs` (engine default 100); for experiments. */
  receiverDefaultRttMs?: number;
  /** SenderEngine options over the simulator's (frame dropping, temporal-layer dropping, fault handling); for experiments. */
  sender?: Partial<
    Pick<
      SenderEngineConfig,
      | 'dropQueueFrames'
      | 'maxConsecutiveDrops'
      | 'holdKeyFrameWhileBuffered'
      | 'departureTimes'
      | 'upperLayerDropFactor'
      | 'cwndPushback'
      | 'pushbackQueueMs'
      | 'pathHysteresis'
      | 'fastFailover'
      | 'rack'
      | 'outageRestore'
      | 'fallbackEstablishMs'
      | 'probation'
      | 'probationMinAltFraction'
      | 'gapMinAltFraction'
      | 'cleanReturn'
      | 'blackholeKeyframe'
      | 'gapKeepMs'
      | 'audio'
      | 'fecCode'
      | 'pacer'
    >
  >;
  /** ReceiverEngine options of the media receiver (report copies on every path, the key-frame request rules, the frame buffer's timeout rule); for experiments. */
  receiver?: Partial<Pick<ReceiverEngineConfig, 'reportCopies' | 'keyframeOnNackGiveUp' | 'keyframeRepeat' | 'keepFramesOnTimeout'>>;
  /** Per-path bandwidth estimator of our sender (src/cc/registry.ts name; default the engine's, 'gcc'). */
  estimator?: EstimatorName;
  /**
   * FractalConfig fields (src/cc/fractal.ts) for every FRACTaL sender of the run: ours with estimator
   * 'fractal' and the `fractal-video` cross flows (the MPRTP test bed runs every flow with one controller); for experiments.
   */
  fractal?: Partial<Pick<FractalConfig, 'splitStart' | 'distortionMarginMs' | 'distortionMarginScales' | 'coupledIncrease' | 'coupledIncreaseMaxLoss' | 'fairShare' | 'fairShareMarginMs'>>;
  /** Converge tuning for scheduler 'converge' (default DEFAULT_CONVERGE_CONFIG); for experiments. */
  converge?: Partial<ConvergeConfig>;
  /**
   * An audio source on stream 0's engines (sim/run-loop.ts): one Opus-sized
   * frame every 20 ms, 70-110 bytes (~32 kbps VBR), sent with
   * SenderEngine.sendAudio and played out by the receiver's jitter buffer.
   * Default false (video only, as before audio existed); `npm run bench` turns it on.
   */
  audio?: boolean;
  /**
   * Overlay scenarios (paths with `relays`): who picks each path's route per
   * 1 s slot (sim/overlay.ts): 'fixed' = direct only, 'ucb' = discounted UCB
   * (src/sched/relay-ucb.ts), 'oracle' = most capacity over the coming slot.
   * Default 'ucb' for scheduler 'overlay-ucb', else 'fixed'.
   */
  relayPolicy?: import('./overlay.js').RelayPolicy;
  /** Overlay scenarios: overrides of the 'ucb' policy's selector (RelayUcbConfig, e.g. `explorationScale`). */
  relayUcb?: Partial<import('../src/sched/relay-ucb.js').RelayUcbConfig>;
  /**
   * Overlay scenarios: probe-based exploration of the 'ucb' policy (sim/overlay.ts
   * RelayProbeConfig overrides; false = off, explore by moving the media as Zhang & Lei do). Default on.
   */
  relayProbe?: Partial<import('./overlay.js').RelayProbeConfig> | false;
  /** Overlay scenarios: how a relay switch moves a path (overrides the scenario's `relayHandover`, sim/net/scenario.ts). */
  relayHandover?: 'break' | 'make-before-break';
  /** Free-form label copied into the result (e.g. `converge-nofb`). */
  label?: string;
  /**
   * Sample the process's used heap (after a full GC, sim/heap.ts) every this
   * many simulated seconds into `SimResult.heap`; for the
   * `soak` scenario. Measurement only: results do not depend on it. Default off.
   */
  heapSampleS?: number;
  /**
   * Attribute each freeze of stream 0 to a cause (sim/freeze-explain.ts) into
   * `SimResult.freezeCauses`. Measurement only: results do not depend on it.
   * Default off (it decodes every datagram and keeps per-frame records).
   */
  explainFreezes?: boolean;
  /** Record stream 0's per-path trace every 100 ms (sim/path-trace.ts) into `SimResult.pathTrace`. Measurement only. Default off. */
  pathTrace?: boolean;
}

/** A path of a simulated call: the call report's path fields (no ICE addresses), plus link facts. */
export interface SimPathResult extends Omit<ReportPath, 'localAddress' | 'remoteAddress'> {
  name: string;
  pacerDropped: number;
  /** Mean link capacity over the call (bps) and mean rate actually sent (bps). */
  meanCapacityBps: number;
  meanSendRateBps: number;
  /** Up-link drops by cause. */
  linkDrops: { queue: number; loss: number; blackhole: number };
  /**
   * What the sender's estimators counted from the path's reports (all streams; their
   * `packetsLost` / `packetsReceived` stats, src/cc/gcc.ts): seqs counted lost (net of
   * losses a later report un-counted) and received, and lost / (lost + received) in %;
   * `recovered`: losses un-counted by a later report (`lossRecovered`); `missing`: seqs the
   * receiver never got (ReceiverPathStats.packetsLost), the truth the counts estimate.
   */
  countedLoss: { lost: number; received: number; pct: number; recovered: number; missing: number };
}

/** The call report's per-second fields, with the simulator's own per-path facts (capacity, pacer queue). */
export interface SimPerSecond extends Omit<PerSecond, 'paths' | 'qoeFeedback'> {
  paths: Array<{
    id: number;
    capacityBps: number;
    sendRateBps: number;
    rateBps: number;
    rttMs: number;
    lossPct: number;
    mediaPackets: number;
    retransmissions: number;
    pacerQueuedBytes: number;
    up: boolean;
    enabled: boolean;
  }>;
}

/** One stream's QoE (report.json names). */
export interface SimStreamResult {
  streamId: number;
  frames: { sent: number; decoded: number; dropped: number };
  fps: number;
  freezes: { count: number; totalMs: number; maxMs: number };
  latencyMs: { mean: number; p50: number; p95: number; p99: number };
  keyframeRequests: number;
  /** Gaps the receiver's frame buffer skipped without a key frame (temporal layers). */
  temporalLayerSkips: number;
  framesOutOfOrder: number;
  goodputBps: number;
  encoderTargetBps: { mean: number; last: number };
  fec: { overheadPct: number; utilizationPct: number; packetsSent: number; recovered: number };
  /** rack*: the sender's per-path RACK loss detection (SenderStats.rackLost / rackRetransmissionsSent / rackSpurious). */
  nack: { nacksSent: number; packetsNacked: number; retransmissionsSent: number; retransmissionsReceived: number; rackLost: number; rackRetransmissionsSent: number; rackSpurious: number };
  retransmissions: number;
  qoeFeedback: { sent: number; received: number; droppedBySim: number };
  /** Decoder-model reference-chain or payload violations (must be 0). */
  decoderViolations: number;
  keyframesSent: number;
  /** Camera frames skipped before encoding (SenderEngine.shouldDropFrame) and stale packets purged for key frames. */
  pushback: { framesDroppedBeforeEncode: number; stalePacketsPurged: number };
  /** Freezes (start s, duration ms), at most 50. */
  freezeList: Array<{ atS: number; ms: number }>;
  /** Encoded resolution / frame rate over time (sim/encoder-model.ts, src/adapt). */
  adaptation: AdaptationStats;
  /** Every encoder target the engine announced (its `targetBitrate` event: changes > 5%), first MAX_TARGET_CHANGES (sim/run-loop.ts). */
  targetChanges: Array<{ atS: number; bps: number }>;
  /** AggDeliv's packet transmission time of this stream's media packets (ms; sim/metrics.ts `PacketTransmission`). */
  packetTransmissionMs: PacketTransmissionStats;
}

/** The QoE fields a whole call reports the same way as one stream. */
type CallQoe = Pick<
  SimStreamResult,
  | 'frames'
  | 'fps'
  | 'freezes'
  | 'latencyMs'
  | 'keyframeRequests'
  | 'temporalLayerSkips'
  | 'framesOutOfOrder'
  | 'goodputBps'
  | 'encoderTargetBps'
  | 'fec'
  | 'nack'
  | 'retransmissions'
  | 'decoderViolations'
>;

export interface SimResult extends CallQoe {
  version: 1;
  scenario: string;
  label: string;
  scheduler: SchedulerName;
  singlePath?: number;
  fecPolicy: FecPolicyName;
  qoeFeedback: boolean;
  seed: number;
  durationS: number;
  streams: number;
  camera: { width: number; height: number; fps: number };
  // The CallQoe fields are all streams together (= stream 0 with one stream).
  /** Latency CDF: 51 percentiles 0, 2, ..., 100 (ms). */
  latencyCdfMs: number[];
  /** AggDeliv's packet transmission time (ms) over every stream's media packets: frame handed to the sender -> packet arrived (sim/metrics.ts `PacketTransmission`). */
  packetTransmissionMs: PacketTransmissionStats;
  /**
   * With SimOptions.clockSkewMs: stream 0's receiver estimate of the sender's
   * clock offset at the end (ms), its error against the true skew (ms), the
   * bound on that error (half the selected sample's RTT, ms) and the samples.
   */
  clock?: { skewMs: number; estimatedOffsetMs: number; errorMs: number; errorBoundMs: number; samples: number };
  perStream: SimStreamResult[];
  paths: SimPathResult[];
  perSecond: SimPerSecond[];
  /** Used heap over the call (opts.heapSampleS): bytes after a full GC at each simulated time; `gc` false when no GC could be forced. */
  heap?: { gc: boolean; samples: Array<{ atS: number; usedBytes: number }> };
  /** The audio stream (SimOptions.audio), undefined without audio. */
  audio?: SimAudioResult;
  /** Stream 0's freezes explained (SimOptions.explainFreezes; sim/freeze-explain.ts). */
  freezeCauses?: import('./freeze-explain.js').FreezeCause[];
  /** Stream 0's freezes as [start s, duration ms], every one (SimOptions.explainFreezes; freezeCauses leaves out a freeze the run's end cut short). */
  freezeSpans?: Array<[number, number]>;
  /** Stream 0's per-path trace (SimOptions.pathTrace; sim/path-trace.ts). */
  pathTrace?: import('./path-trace.js').PathTrace;
  /** Overlay scenarios: routes taken per slot, best routes in hindsight, switches (sim/overlay.ts). */
  overlay?: import('./overlay.js').OverlayResult;
  /** The per-path estimator of our sender (SimOptions.estimator), when one was given. */
  estimator?: string;
  /** Cross-traffic flows of the scenario (sim/cross-traffic.ts; gcc-video, fractal-video: our engine on one path): link packets and bytes. */
  crossTraffic?: Array<{
    kind: CrossTrafficKind;
    path: number;
    startS: number;
    stopS: number;
    packetsSent: number;
    packetsDelivered: number;
    /** Link bytes delivered over the call. */
    bytesDelivered: number;
    /** reno/cubic: loss events, RTO expiries, last cwnd (segments), last SRTT (ms). */
    lossEvents?: number;
    timeouts?: number;
    cwnd?: number;
    srttMs?: number;
    /** gcc-video, fractal-video: last encoder target (bps), frames decoded. */
    encoderTargetBps?: number;
    framesDecoded?: number;
    /** gcc-video, fractal-video with SimOptions.audio: audio frames its own audio source sent (0 without `audio: true`). */
    audioFramesSent?: number;
  }>;
  /** MPRTP §V fairness metrics (sim/fairness.ts) when the scenario has cross traffic. */
  fairness?: FairnessResult;
  /** Simulator bookkeeping: events processed, datagrams carried. */
  sim: {
    steps: number;
    datagramsUp: number;
    datagramsDown: number;
    qoeDropped: number;
    datachannel: 'sctp' | 'ideal' | 'sctp+rtp';
    sctp?: Array<{ up: SctpStats; down: SctpStats }>;
    rtp?: SimRtpPathStats[];
  };
}

/** Audio QoE of a simulated call (receiver `stats().audio`; webrtc-stats concealment, mouth-to-ear = capture -> played out). */
export interface SimAudioResult {
  /** concealedSamples / totalSamplesReceived x 100. */
  concealedPct: number;
  /** Mouth-to-ear latency p95 (ms). */
  mouthToEarP95Ms: number;
  mouthToEarP50Ms: number;
  framesSent: number;
  packetsReceived: number;
  packetsLost: number;
  duplicates: number;
  duplicatesSent: number;
  /** Frames the sender had no path up for. */
  framesUnsent: number;
  /** Times the sender changed the Opus bitrate / frame duration it asks for (SenderEngine.audioEncoding). */
  encodingChanges: number;
  latePackets: number;
  concealmentEvents: number;
  /** Jitter buffer target at the end of the call (ms). */
  targetDelayMs: number;
  /** Video latency p50 - audio mouth-to-ear p50 (ms): positive = the picture lags the sound. */
  avOffsetMs: number;
}
