/**
 * Configuration and events of {@link import('./sender.js').SenderEngine}.
 */
import type { BandwidthEstimator } from '../cc/types.js';
import type { Clock } from '../core/clock.js';
import type { PathId } from '../core/types.js';
import type { FecPolicy, FecPolicyName } from '../fec/types.js';
import type { PathHysteresisConfig } from '../sched/path-hysteresis.js';
import type { PathEvent } from '../sched/path-manager.js';
import type { Scheduler, SchedulerName } from '../sched/types.js';

export interface SenderEngineConfig {
  clock: Clock;
  streamId?: number;
  /** Scheduler strategy or name (default 'converge'). */
  scheduler?: Scheduler | SchedulerName;
  /** For scheduler 'single': the path to use. */
  singlePath?: PathId;
  /** FEC policy or name (default 'path'). */
  fec?: FecPolicy | FecPolicyName;
  /** Whole-datagram MTU in bytes (default 1200). */
  mtuBytes?: number;
  /** App cap on the encoder target (bps, default 8 Mbps). */
  maxBitrateBps?: number;
  /** Floor of the encoder target (bps, default 150 kbps). */
  minBitrateBps?: number;
  /** Initial per-path rate (bps, default 1 Mbps). */
  startBitrateBps?: number;
  /** Factory for a per-path estimator (default GCC). */
  createEstimator?: (pathId: PathId) => BandwidthEstimator;
  /** NACK history per stream in packets (default 4096). */
  historyPackets?: number;
  /** StreamInfo repeat interval (ms, default 1000). */
  streamInfoIntervalMs?: number;
  /**
   * Act on the receiver's QoE feedback (Converge §4.2; default true). False
   * gives the "Converge without feedback" baseline of Converge Table 4.
   */
  qoeFeedback?: boolean;
  /** Bandwidth probing for the default GCC estimators (default true). */
  probing?: boolean;
  /** Pacer tuning. */
  pacer?: { bufferBudgetMs?: number; maxQueueDelayMs?: number; pacingFactor?: number };
  /**
   * Frame dropping before encoding ({@link SenderEngine.shouldDropFrame}):
   * drop a delta frame when every usable path's sender queue (pacer +
   * bufferedAmount) takes longer than this many frame intervals to drain at
   * the path's rate. 0 = never drop. Default 3.
   */
  dropQueueFrames?: number;
  /** Longest run of frames dropped in a row before one is let through (default 3). */
  maxConsecutiveDrops?: number;
  /**
   * Temporal layers: a frame that would be an upper-layer frame is dropped
   * before encoding once the queues exceed this fraction of `dropQueueFrames`
   * (0..1, default 1 = the same threshold as base-layer frames). Below 1,
   * upper-layer frames go first under pushback; nothing depends on them.
   */
  upperLayerDropFactor?: number;
  /**
   * Congestion-window pushback of the encoder target (libwebrtc
   * congestion_window_pushback_controller.cc; default true).
   */
  cwndPushback?: boolean;
  /**
   * Demote a path that goes silent or loses heavily, promote it back only
   * after it stayed clean for a hold that doubles per recent fault
   * (src/sched/path-hysteresis.ts; issue 11). A demoted path carries no
   * media and does not count in the encoder target; padding every 50 ms
   * keeps its RTT and loss measured. Never demotes the last usable path.
   * true = defaults, an object = tuned, false = off. Default false: on the
   * cellular suite (3 seeds) it wins the tune half (total converge freeze
   * 26.1 -> 20.1 s) but loses the check half (20.9 -> 22.3 s; the LTE pair
   * mm:tmobile+att 5.7 -> 8.2 s at 0.94x the best single path's goodput)
   * and costs the `carriers` LTE pair 9% goodput: demoting a bursty LTE
   * path gives up aggregation the pair needs. It wins every fault scenario
   * (flap, lossy-path, delay-jump, failover).
   */
  pathHysteresis?: boolean | Partial<PathHysteresisConfig>;
  /**
   * Fast failover (issue 11): a path is suspect once it has been silent (no
   * receiver report while packets are outstanding) for max(2 x SRTT,
   * 100 ms) instead of max(250 ms, 2 x SRTT + 100 ms) while another enabled
   * path is up and reporting, and at that moment its
   * unreported media (frames since the newest key frame, at most 1 s old) is
   * duplicated onto the best other usable path if it drains there within
   * 150 ms at that path's rate; else a key frame is asked for at once.
   * Default false: with the hysteresis it takes the cellular suite's tune
   * half from 26.1 to 14.7 s of converge freeze (14/14 pairs within best
   * + 0.5 s) and the failover scenario's longest freeze from 778 to 260 ms,
   * but the check half goes 20.9 -> 23.2 s (both LTE pairs lose: goodput
   * 0.94x / 0.78x the best single path) and the `carriers` LTE pair's
   * freeze doubles (2.9 -> 6.3 s; 8-16 failover key frames a call instead
   * of 2-4; without the key frame fallback still 3.9 s at 3.5 Mbps):
   * bursty LTE report gaps look like failures.
   */
  fastFailover?: boolean;
  /**
   * When a path's reports resume after an outage (>= 700 ms of silence),
   * probe it at the rate it had and let the result restore its estimate
   * (GccEstimator.onPathRestored). 'total': only when no other path carried
   * the call meanwhile (both/all paths were down: the encoder target is back
   * within an RTT or two instead of GCC's 8%/s climb); 'any': for every
   * returning path; 'off': never. Default 'total' ('any' lost on the
   * cellular suite: a WiFi path that returns for a moment and fades again
   * took load back too fast).
   */
  outageRestore?: 'total' | 'any' | 'off';
}

/** Events the engine reports to its owner. */
export interface SenderEvents {
  /** The encoder should produce a key frame ('pli', 'failover', or 'outage': a single path's silence lost what was sent into it). */
  keyframeNeeded: (reason: string) => void;
  /** The encoder target changed by more than 5% (bps). */
  targetBitrate: (bps: number) => void;
  /** Path lifecycle (path manager) and scheduler enable/disable. */
  pathEvent: (event: PathEvent) => void;
}

/** The config with defaults applied (the parts the engine reads as plain values). */
export type ResolvedSenderConfig = Required<Omit<SenderEngineConfig, 'clock' | 'scheduler' | 'fec' | 'singlePath' | 'createEstimator' | 'pacer' | 'streamId' | 'qoeFeedback' | 'probing' | 'pathHysteresis'>>;

/** Apply the defaults documented on {@link SenderEngineConfig}. */
export function resolveSenderConfig(config: SenderEngineConfig): ResolvedSenderConfig {
  return {
    mtuBytes: config.mtuBytes ?? 1200,
    maxBitrateBps: config.maxBitrateBps ?? 8_000_000,
    minBitrateBps: config.minBitrateBps ?? 150_000,
    startBitrateBps: config.startBitrateBps ?? 1_000_000,
    historyPackets: config.historyPackets ?? 4096,
    streamInfoIntervalMs: config.streamInfoIntervalMs ?? 1000,
    dropQueueFrames: config.dropQueueFrames ?? 3,
    maxConsecutiveDrops: config.maxConsecutiveDrops ?? 3,
    upperLayerDropFactor: config.upperLayerDropFactor ?? 1,
    cwndPushback: config.cwndPushback ?? true,
    fastFailover: config.fastFailover ?? false,
    outageRestore: config.outageRestore ?? 'total',
  };
}
