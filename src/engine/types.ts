/**
 * Contracts between the I/O-free engines and whatever moves their bytes: the
 * browser (RTCDataChannel per path) or the simulator (emulated links).
 */
import type { AvSyncStats } from '../feedback/av-sync.js';
import type { AudioReceiverStats } from '../audio/audio-receiver.js';
import type { AudioSenderStats } from './audio-sender.js';
import type { PathId } from '../core/types.js';

/** Where an engine writes the packets of one path. */
export interface PathSink {
  /** Send one datagram. Returns false when the path cannot take it now (closed): the packet is counted as dropped. */
  send(bytes: Uint8Array): boolean;
  /** Bytes queued below us (RTCDataChannel.bufferedAmount); 0 for a simulator link. */
  bufferedAmount(): number;
  /**
   * Optional: true while new data would only wait behind a stalled backlog
   * (a datachannel waiting for SACKs, and no other pipe). A sink with a
   * second pipe (src/transport/stall-fallback.ts) answers it; without it the
   * engine takes `bufferedAmount() > DRAIN_BACKLOG_BYTES` (src/engine/sender-path.ts).
   */
  stalled?(): boolean;
}

/** Per-path sender statistics (units in names). */
export interface SenderPathStats {
  id: PathId;
  /** Up in the path manager (connected, reports not silent past downAfterMs); see src/call/stats-types-path.ts `up` for when media does not follow it. */
  up: boolean;
  enabled: boolean;
  /** Benched (no media, padding only) while another path can carry the call: demoted by the path hysteresis (SenderEngineConfig.pathHysteresis) or on probation after a silence (SenderPaths.isDemoted). */
  demoted: boolean;
  packetsSent: number;
  bytesSent: number;
  mediaPacketsSent: number;
  /** Share of this stream's media packets (first sends, not FEC/rtx/probes) on this path, %. */
  sharePct: number;
  fecPacketsSent: number;
  retransmissionsSent: number;
  probesSent: number;
  /** Packets the pacer dropped (over its delay budget or queue bound). */
  pacerDropped: number;
  /** Target send rate S_i (bps). */
  rateBps: number;
  /** Acknowledged rate (bps), 0 until known. */
  goodputBps: number;
  rttMs: number;
  minRttMs: number;
  lossPct: number;
  queuedBytes: number;
  /** Datagrams the sink refused. */
  sendFailures: number;
  /** Packets of priority 2 (key frame), 3 (SPS) and 4 (PPS) sent on this path (Converge Table 2). */
  keyframePacketsSent: number;
  spsPacketsSent: number;
  ppsPacketsSent: number;
  /** Sum of sizes of everything sent in the last second (bps), measured. */
  sendRateBps: number;
}

export interface SenderStats {
  framesSent: number;
  keyframesSent: number;
  bytesSent: number;
  /** Encoder target = min(sum S_i over enabled paths, app max), bps. */
  targetBitrateBps: number;
  keyframeRequestsReceived: number;
  /** PLIs answered by a key frame sent just before (not forwarded to the encoder). */
  keyframeRequestsSuppressed: number;
  /** Key frame requests the gate would have coalesced, forwarded to the encoder because the receiver sent them after the last key frame was complete there (KeyFrameDelivery). */
  keyframeRequestsAfterKeyFrame: number;
  /** Camera frames {@link SenderEngine.shouldDropFrame} told the app to skip (path queues too long). */
  framesDroppedBeforeEncode: number;
  /** Of those, key frames held back while the last one still waited in every media path's datachannel (SenderEngineConfig.holdKeyFrameWhileBuffered). */
  keyFramesHeldBack: number;
  /** Queued packets of older frames dropped when a key frame was enqueued. */
  stalePacketsPurged: number;
  /** Receiver reports dropped as copies of one already applied (they came on another path: ReceiverEngineConfig.reportCopies). */
  reportCopiesDropped: number;
  /** Media packets duplicated onto another path when their path went silent (SenderEngineConfig.fastFailover). */
  failoverDuplicates: number;
  /** Path silences whose unreported media was too much to duplicate in time, left to NACK (fastFailover). */
  failoverSkipped: number;
  /** Paths whose rate was restored when their reports resumed after an outage (GccEstimator.onPathRestored). */
  pathRestores: number;
  /** Congestion-window pushback ratio applied to the encoder target (1 = none). */
  pushbackRatio: number;
  nacksReceived: number;
  retransmissionsSent: number;
  /** NACKed packets no longer in the history. */
  retransmissionsUnavailable: number;
  /** NACKed packets older than the retransmission age limit (1 s). */
  retransmissionsTooOld: number;
  /** Retransmissions not sent because the chosen path's queue was too long. */
  retransmissionsSkipped: number;
  /** Media packets the per-path RACK loss detection declared lost (src/feedback/path-rack.ts; counted with SenderEngineConfig.rack off too). */
  rackLost: number;
  /** Retransmissions sent on RACK's word (SenderEngineConfig.rack), before any NACK; included in retransmissionsSent. */
  rackRetransmissionsSent: number;
  /** RACK detections left to the receiver's NACK: first sent longer ago than the lowest SRTT + 200 ms (SenderEngine.onRackLoss). */
  rackTooOld: number;
  /** Media packets RACK declared lost that were reported delivered afterwards (spurious detections). */
  rackSpurious: number;
  fecPacketsSent: number;
  mediaPacketsSent: number;
  /** FEC packets / media packets, %. */
  fecOverheadPct: number;
  qoeFeedbackReceived: number;
  /** Negative feedback naming our own fast path (dropped, see SenderEngine.onQoe). */
  qoeFeedbackIgnored: number;
  paths: SenderPathStats[];
  /** The audio stream (src/engine/audio-sender.ts), and how often {@link SenderEngine.audioEncoding} changed its answer (src/engine/audio-rate.ts). */
  audio: AudioSenderStats & { encodingChanges: number };
}

/** Per-path receiver statistics. */
export interface ReceiverPathStats {
  id: PathId;
  packetsReceived: number;
  bytesReceived: number;
  mediaPacketsReceived: number;
  fecPacketsReceived: number;
  /** FEC packets received on this path's behalf that rebuilt a packet / FEC received, %. */
  fecUtilizationPct: number;
  latePackets: number;
  earlyPackets: number;
  /** Sequence numbers missing in this path's seq space so far (count; RFC 3550 §6.4.1 cumulative lost). */
  packetsLost: number;
  /** Loss seen in this path's seq space, % (from the report builder's view). */
  lossPct: number;
  /** Smoothed RTT of this path from the report -> clock echo exchange (ms; 0 before the first sample). */
  rttMs: number;
  /**
   * One-way delay of the media packets on this path (ms): smoothed arrival -
   * send time plus the estimated sender - receiver clock offset
   * (src/feedback/clock-sync.ts); undefined before both are known.
   */
  oneWayDelayMs: number | undefined;
  /**
   * Feedback this side sent back on the path's reverse direction (bytes of the
   * encoded datagrams, no transport overhead): its path reports (copies of
   * other paths' reports included), clock echoes, NACKs, QoE feedback and key
   * frame requests.
   */
  feedbackBytesSent: number;
  /** The path reports among {@link feedbackBytesSent} (bytes). */
  reportBytesSent: number;
  /**
   * Arrivals this path's own reports listed again after a late packet re-covered them
   * (src/feedback/path-report-builder.ts `relisted`; count): counted when the report is built,
   * whichever path carries it and whether or not the transport took it.
   */
  reportArrivalsRelisted: number;
}

export interface ReceiverStats {
  packetsReceived: number;
  malformedPackets: number;
  framesAssembled: number;
  framesDecodable: number;
  framesDecoded: number;
  framesDropped: number;
  keyframeRequestsSent: number;
  /** Gaps the frame buffer skipped without a key frame (temporal layers: lost or late upper-layer frames). */
  temporalLayerSkips: number;
  nacksSent: number;
  nackedPackets: number;
  retransmissionsReceived: number;
  recoveredByFec: number;
  fecPacketsReceived: number;
  /** FEC packets of a code this page does not know (src/fec/codes.ts wire id), dropped. */
  fecUnknownCode: number;
  /** FEC packets that rebuilt a packet / FEC packets received, % (strict; single-parity XOR under random loss tops out near 1/e). */
  fecUtilizationPct: number;
  /** FEC packets that were not redundant on arrival (a protected packet was missing) / received, % (Chrome's fecPacketsDiscarded view). */
  fecUsefulPct: number;
  qoeFeedbackSent: number;
  /** Mean decoded fps from the first decoded frame to now (src/feedback/qoe-metrics.ts `meanFps`). */
  fps: number;
  /** Encoded bytes of the frames decoded so far. */
  bytesDecoded: number;
  /** Goodput: `bytesDecoded` x 8 / seconds from the first decoded frame to now (bps; qoe-metrics `goodputBps`). */
  goodputBps: number;
  /** The last QoE feedback messages sent (newest last, at most 32); `atUs` on the receiver clock. */
  recentFeedback: Array<{ atUs: number; pathId: number; alpha: number; fcdMs: number }>;
  freezeCount: number;
  freezeTotalMs: number;
  latencyMs: { mean: number; p50: number; p95: number; p99: number };
  /** Over the last `historyFrames` frames. */
  fcdMs: { mean: number; p95: number };
  ifdMs: { mean: number; p95: number };
  /** Running totals (for per-interval means: difference two snapshots). */
  fcdTotal: { sumMs: number; count: number };
  ifdTotal: { sumMs: number; count: number };
  jitterMs: number;
  /**
   * Playout timing (src/feedback/playout.ts): the delay frames are played out
   * with beyond their expected arrival and its target (ms), frames that came
   * after their playout time, frames waiting for it now.
   */
  playout: { currentDelayMs: number; targetDelayMs: number; lateFrames: number; queuedFrames: number };
  /**
   * W3C webrtc-stats `jitterBufferDelay` (here in ms) and
   * `jitterBufferEmittedCount`: the sum, over frames handed to the decoder,
   * of the time from their first packet's arrival to that moment (ms), and
   * how many frames that is.
   */
  jitterBufferDelayMs: number;
  jitterBufferEmittedCount: number;
  /**
   * Receiver-side RTT estimate (ms): NACK -> retransmission once a NACK has
   * been answered, before that the smallest per-path RTT of the clock
   * exchange (known after the first report round trip), before that
   * `defaultRttMs`.
   */
  rttMs: number;
  /**
   * The sender's clock as this receiver estimates it (src/feedback/clock-sync.ts;
   * RFC 5905 §8 over PathReport -> ClockEcho exchanges): `offsetMs` = sender
   * clock - receiver clock (ms; 0 before the first sample, see `samples`),
   * `errorBoundMs` = half the RTT of the sample it rests on (ms; the offset is
   * off by at most the two legs' asymmetry / 2), samples accepted and rejected.
   * `latencyMs` above is corrected by `offsetMs`.
   */
  clock: { offsetMs: number; errorBoundMs: number; samples: number; rejected: number };
  paths: ReceiverPathStats[];
  drops: Record<string, number>;
  /**
   * Entries dropped by the receiver's memory bounds (monotonic counts): frames
   * over the frame buffer's byte budget or age bound, incomplete frames over
   * the depacketizer's byte budget or age bound, FEC-window entries over its
   * byte budget or age bound, and NACK lists reset by a gap beyond the NACK
   * window (each reset asks for a key frame).
   */
  memoryDrops: {
    frameBufferBudget: number;
    frameBufferAge: number;
    depacketizerBudget: number;
    depacketizerAge: number;
    fecBudget: number;
    fecAge: number;
    nackWindowResets: number;
  };
  /** Estimated bytes held now by the frame buffer, the depacketizer and the FEC window. */
  heldBytes: { frameBuffer: number; depacketizer: number; fec: number };
  /**
   * The audio stream: jitter buffer, concealment (webrtc-stats names) and
   * mouth-to-ear latency; `avOffsetMs` = video latency p50 - audio
   * mouth-to-ear p50 (ms): positive = the picture lags the sound (lip sync;
   * ITU-R BT.1359 finds lags of more than ~125 ms detectable). 0 without both.
   */
  audio: AudioReceiverStats & {
    avOffsetMs: number;
    /** The lip-sync controller: extra delays it asks of audio and video, its last measured offset (undefined when turned off). */
    avSync: AvSyncStats | undefined;
  };
}
