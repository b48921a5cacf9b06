/**
 * What `MultipathCall.getStats()` returns: a {@link CallStatsReport}, a
 * read-only `Map` from entry id to a typed entry, shaped after the W3C
 * "Identifiers for WebRTC's Statistics API" (webrtc-stats, RTCStatsReport):
 * the same entry types, field names and units where the concept is the same,
 * so code written against `RTCPeerConnection.getStats()` reads it the same
 * way. This is a stable contract: fields are only added, never renamed or
 * given other units, within a major version.
 *
 * Units, as in webrtc-stats: `timestamp` in ms; every other duration in
 * seconds (s); bit rates in bits per second (bps); sizes in bytes; ratios
 * as fractions 0..1; counts as integers. Every field's docstring names its
 * unit. Entries link by id: `transportId`, `codecId`, `mediaSourceId`,
 * `remoteId` / `localId`, `candidatePairId`, `localCandidateId` /
 * `remoteCandidateId`, `pathId`; `participantId` names the remote
 * participant an entry is about.
 *
 * Entry types (the `type` field discriminates the union {@link CallStatsEntry}):
 * - `call` (ours, one): own id, candidate policy, paths disabled for all.
 * - `media-source` (one per kind sent): the camera / microphone.
 * - `transport` (one per remote participant): the multipath session with it,
 *   whatever its paths (webrtc-stats has one per RTCPeerConnection; our
 *   session has one RTCPeerConnection per path, under one transport entry).
 * - `candidate-pair`, `local-candidate`, `remote-candidate` (per path):
 *   the path's RTCPeerConnection's selected route and traffic.
 * - `path` (ours, per remote participant and path): the multipath view of a
 *   path: lifecycle, media share, rate estimate, RTT, loss, one-way delay.
 * - `codec` (per transport and codec in use).
 * - `outbound-rtp` (per remote participant and kind): what we send to it.
 * - `remote-inbound-rtp` (per remote participant, video): its receiver's
 *   view of our video, from its feedback (RTT, loss).
 * - `inbound-rtp` (per remote participant and kind): what we receive from
 *   it, with freezes and jitter buffer as webrtc-stats counts them.
 * - `data-channel` (per remote participant): app data (`MultipathCall.send`).
 *
 * Fields named in webrtc-stats keep its meaning; fields webrtc-stats does not
 * have are marked "(multipath-rtc)". No RTP runs here (our own wire format on
 * RTCDataChannels), so RTP-only fields (ssrc, payloadType, header bytes) are
 * absent. Freeze, frame rate, latency and goodput have one definition,
 * src/feedback/qoe-metrics.ts, shared with the simulator, the call report and
 * the browser benchmark.
 */
import type { PathId } from '../core/types.js';
import type { CandidatePairStats, IceCandidateStats, PathStats, TransportStats } from './stats-types-path.js';

export type { CandidatePairStats, IceCandidateStats, PathStats, TransportStats } from './stats-types-path.js';

/** Every `type` an entry can have. */
export type CallStatsType = CallStatsEntry['type'];

/** Fields of every entry (webrtc-stats RTCStats). */
export interface StatsBase {
  /** Unique within the report and stable across reports of one call: compare two reports by id. */
  id: string;
  /** When the report was made: the call's clock in ms (`MultipathCallOptions.clock`, default `performance.now()`; an epoch clock gives epoch ms). */
  timestamp: number;
}

/** (multipath-rtc) The call itself; id `call`. */
export interface CallEntryStats extends StatsBase {
  type: 'call';
  /** Own participant id, once joined. */
  participantId: string | undefined;
  /** Remote participants with a session, in join order (ids). */
  remoteParticipantIds: string[];
  /** How local ICE candidates were split over the paths ('app filter', 'all candidates on every path', or the by-network split). */
  candidatePolicy: string;
  /** Paths the app disabled for every participant (`setPathEnabled(id, false)` without a participant), ascending. */
  disabledPathIds: PathId[];
  /** Signals from the signalling transport dropped as malformed (bad sender id, path id or data) (count). */
  droppedSignals: number;
}

/** webrtc-stats RTCVideoSourceStats / RTCAudioSourceStats: what we send, before encoding. Ids `SV` (camera) and `SA` (microphone). */
export type MediaSourceStats = VideoSourceStats | AudioSourceStats;

export interface VideoSourceStats extends StatsBase {
  type: 'media-source';
  kind: 'video';
  /** Camera frame size (px) as the track reports it. */
  width: number;
  height: number;
  /** Frames read from the camera so far (count). */
  frames: number;
  /** Camera frame rate as the track reports it (frames/s). */
  framesPerSecond: number;
  /** (multipath-rtc) How camera frames are read: 'track-processor' | 'video-frame-callback' | 'video-timer'. */
  captureMode: string | undefined;
  /** (multipath-rtc) Frames sent black because the camera is muted (`MultipathCall.setMuted('video', true)`) (count). */
  mutedFrames: number;
  /**
   * (multipath-rtc) Camera frames not encoded, by cause (counts): `pushback` = the path
   * queues held more than the frame budget (src/engine/frame-dropper.ts); `encoderQueue` =
   * the encoder fell behind; `fpsCap` = over the adaptation's frame-rate cap; `noPath` = no
   * path could carry it.
   */
  framesNotEncoded: { pushback: number; encoderQueue: number; fpsCap: number; noPath: number };
}

export interface AudioSourceStats extends StatsBase {
  type: 'media-source';
  kind: 'audio';
  /** (multipath-rtc) 20 ms frames read from the microphone (count). */
  frames: number;
  /** (multipath-rtc) Sample rate of the microphone (Hz). */
  sampleRate: number;
  /** (multipath-rtc) Channels of the microphone input. */
  channels: number;
  /** (multipath-rtc) Opus frames encoded (count). */
  framesEncoded: number;
  /** (multipath-rtc) Frames sent as digital silence because the microphone is muted (`setMuted('audio', true)`) (count). */
  mutedFrames: number;
  /** (multipath-rtc) Opus bitrate in use (bps), from the paths' rate (src/engine/audio-rate.ts); 0 before the first microphone input. */
  targetBitrate: number;
  /** (multipath-rtc) Opus frame duration in use (s): 0.02, 0.04 or 0.06; 0 before the first microphone input. */
  frameDuration: number;
  /** (multipath-rtc) Encoders started after the first: a new bitrate or frame duration, or a new microphone sample rate (count). */
  reconfigurations: number;
}

/** webrtc-stats RTCCodecStats; id `CO_<participant>_<mime type>`. No `payloadType`: our wire names the codec, no RTP payload types. */
export interface CodecStats extends StatsBase {
  type: 'codec';
  transportId: string;
  /** 'video/H264' | 'video/VP8' | 'video/VP9' | 'video/AV1' | 'audio/opus'. */
  mimeType: string;
  /** (Hz) 90000 for video, 48000 for Opus. */
  clockRate: number;
  /** Audio channels (Opus: 2, as its SDP declares). */
  channels?: number;
  /** (multipath-rtc) The WebCodecs codec string (e.g. 'avc1.42e01f'), when known. */
  codecString?: string;
}

/** webrtc-stats RTCOutboundRtpStreamStats, per remote participant and kind; id `OT_<participant>_<kind>`. */
export type OutboundRtpStats = OutboundVideoStats | OutboundAudioStats;

interface OutboundBase extends StatsBase {
  type: 'outbound-rtp';
  /** (multipath-rtc) The remote participant it goes to. */
  participantId: string;
  transportId: string;
  codecId: string | undefined;
  mediaSourceId: string;
  /** Packets of this stream sent for the first time, all paths (count). */
  packetsSent: number;
  /** Bytes sent for it (bytes): video, every datagram our sender paced to this participant (media, FEC, retransmissions, probes); audio, see {@link OutboundAudioStats}. */
  bytesSent: number;
}

export interface OutboundVideoStats extends OutboundBase {
  kind: 'video';
  /** Its `remote-inbound-rtp` entry. */
  remoteId: string;
  /** Sending to this participant now (a camera track is being encoded). */
  active: boolean;
  /** Encoder target this participant's sender asks for (bps): min(sum of its paths' S_i, app max). The shared encoder runs at the lowest of them (`encoderBitrate`). */
  targetBitrate: number;
  /** (multipath-rtc) Bit rate the one camera encoder shared by all participants is configured with (bps). */
  encoderBitrate: number;
  /** Frames handed to this participant's sender (count). */
  framesSent: number;
  /** (multipath-rtc) Key frames among them (count). */
  keyFramesSent: number;
  /** Frames out of the shared encoder (count). */
  framesEncoded: number;
  keyFramesEncoded: number;
  /** Size of the encoded frames now (px), after adaptation. */
  frameWidth: number;
  frameHeight: number;
  /** Frames encoded over the last second (frames/s). */
  framesPerSecond: number;
  /** Why the video is degraded now: 'none' | 'bandwidth' | 'cpu'. */
  qualityLimitationReason: 'none' | 'bandwidth' | 'cpu' | 'other';
  /** Adaptation steps so far (resolution or frame rate, either direction; webrtc-stats counts resolution only) (count). */
  qualityLimitationResolutionChanges: number;
  /** 'L1T1' | 'L1T2' | 'L1T3': temporal layers in use. */
  scalabilityMode: string;
  /** NACKs received from this participant (count). */
  nackCount: number;
  /** Key frame requests (PLI) received from this participant (count). */
  pliCount: number;
  /** Packets retransmitted after a NACK (count). */
  retransmittedPacketsSent: number;
  /** (multipath-rtc) FEC packets sent (count). */
  fecPacketsSent: number;
  /** (multipath-rtc) Converge QoE feedback messages received (count; Converge §4.2). */
  qoeFeedbackReceived: number;
  /** (multipath-rtc) Encode time / frame interval (fraction), undefined until measured. */
  encodeUsage: number | undefined;
}

/**
 * Audio to one participant. `packetsSent` counts first copies;
 * `bytesSent` is the Opus payload the one microphone encoder produced for
 * every participant (frames no path took included: see `framesUnsent`).
 */
export interface OutboundAudioStats extends OutboundBase {
  kind: 'audio';
  /** (multipath-rtc) 20 ms Opus frames sent (count). */
  framesSent: number;
  /** (multipath-rtc) Copies sent on a second path (count). */
  duplicatePacketsSent: number;
  /** (multipath-rtc) Frames no path could take (count). */
  framesUnsent: number;
  /** (multipath-rtc) Audio send rate over the last second, copies included (bps). */
  sendBitrate: number;
}

/** webrtc-stats RTCRemoteInboundRtpStreamStats: the remote receiver's view of our video, from its feedback; id `RI_<participant>_video`. */
export interface RemoteInboundRtpStats extends StatsBase {
  type: 'remote-inbound-rtp';
  kind: 'video';
  participantId: string;
  transportId: string;
  codecId: string | undefined;
  /** Its `outbound-rtp` entry. */
  localId: string;
  /** RTT the media sees (s): the paths' smoothed RTTs weighted by media share; undefined before the first sample. */
  roundTripTime: number | undefined;
  /** Loss of our packets the receiver reports (fraction 0..1), weighted by media share. */
  fractionLost: number;
}

/** webrtc-stats RTCInboundRtpStreamStats, per remote participant and kind; id `IT_<participant>_<kind>`. */
export type InboundRtpStats = InboundVideoStats | InboundAudioStats;

interface InboundBase extends StatsBase {
  type: 'inbound-rtp';
  /** (multipath-rtc) The remote participant it comes from. */
  participantId: string;
  transportId: string;
  codecId: string | undefined;
  packetsReceived: number;
  /** Packets never received (count). */
  packetsLost: number;
  /** Target delay of the jitter buffer (s). */
  jitterBufferTargetDelay: number;
}

export interface InboundVideoStats extends InboundBase {
  kind: 'video';
  /*
   * `packetsReceived` counts its media packets; `packetsLost` the gaps in its
   * paths' sequence spaces (shared by media, FEC, audio and control
   * datagrams: there is no per-stream RTP sequence here).
   */
  /** Bytes of the datagrams that carried it (bytes). */
  bytesReceived: number;
  /** Interarrival jitter of frames (s; libwebrtc's frame jitter estimate). */
  jitter: number;
  /** Frames assembled from packets (count). */
  framesReceived: number;
  framesDecoded: number;
  /** Frames given up before decode (count). */
  framesDropped: number;
  /** Frames decoded over the last second (frames/s). */
  framesPerSecond: number;
  /** Size of the last decoded frame (px); undefined before the first. */
  frameWidth: number | undefined;
  frameHeight: number | undefined;
  /** Freezes (libwebrtc's rule, src/feedback/qoe-metrics.ts) (count). */
  freezeCount: number;
  /** Sum of the freezes (s). */
  totalFreezesDuration: number;
  /** Sum over frames handed to the decoder of the time from their first packet's arrival to that moment (s). */
  jitterBufferDelay: number;
  /** Frames handed to the decoder (count): `jitterBufferDelay / jitterBufferEmittedCount` is the mean. */
  jitterBufferEmittedCount: number;
  /** NACKs sent (count). */
  nackCount: number;
  /** Key frame requests (PLI) sent (count). */
  pliCount: number;
  retransmittedPacketsReceived: number;
  fecPacketsReceived: number;
  /** (multipath-rtc) Packets rebuilt by FEC (count). */
  fecRecoveredPackets: number;
  /** (multipath-rtc) FEC packets that rebuilt a packet / FEC packets received (fraction 0..1). */
  fecUtilization: number;
  /** (multipath-rtc) FEC packets not redundant on arrival (a packet they protect was missing) / received (fraction 0..1): 1 - webrtc-stats fecPacketsDiscarded / fecPacketsReceived. */
  fecUseful: number;
  /** (multipath-rtc) Encoded bytes of the decoded frames (bytes). */
  bytesDecoded: number;
  /** (multipath-rtc) Goodput: `bytesDecoded` x 8 / time since the first decoded frame (bps). */
  goodput: number;
  /** (multipath-rtc) Capture -> decoded latency over recent frames (s): mean and percentiles, sender clock moved onto ours. */
  endToEndLatencyMean: number;
  endToEndLatencyP50: number;
  endToEndLatencyP95: number;
  endToEndLatencyP99: number;
  /** (multipath-rtc) Sum of Converge FCD (frame construction delay: last - first packet of a frame) (s) and their count (Converge §3.2). */
  totalFcd: number;
  fcdCount: number;
  /** (multipath-rtc) Sum of Converge IFD (interval between consecutive frames completing) (s) and their count. */
  totalIfd: number;
  ifdCount: number;
  /** (multipath-rtc) Packets NACKed (count). */
  nackedPackets: number;
  /** (multipath-rtc) Converge QoE feedback messages sent (count). */
  qoeFeedbackSent: number;
  /** (multipath-rtc) The last QoE feedback messages sent (newest last, at most 32): `timestamp` ms on the call clock, `fcd` s. */
  recentQoeFeedback: Array<{ timestamp: number; pathId: PathId; alpha: number; fcd: number }>;
  /** (multipath-rtc) Decoder errors (count). */
  decoderErrors: number;
  /** (multipath-rtc) How frames reach the remote track: 'track-generator' | 'canvas-capture' | 'none'. */
  renderMode: string;
}

export interface InboundAudioStats extends InboundBase {
  kind: 'audio';
  totalSamplesReceived: number;
  concealedSamples: number;
  concealmentEvents: number;
  removedSamplesForAcceleration: number;
  /** (multipath-rtc) Second copies of a frame (multipath duplication) (count). */
  duplicatePacketsReceived: number;
  /** (multipath-rtc) Frames that came after their slot was concealed (count). */
  latePackets: number;
  /** (multipath-rtc) Mouth-to-ear latency of recent frames (s): mean, p50, p95. */
  mouthToEarMean: number;
  mouthToEarP50: number;
  mouthToEarP95: number;
  /** (multipath-rtc) Video latency p50 - audio mouth-to-ear p50 (s): > 0 = the picture lags the sound; 0 without both. */
  avOffset: number;
  /** Level of the decoded audio over the last second (RMS, 0..1 of full scale); 0 before it plays. */
  audioLevel: number;
  /** (multipath-rtc) Largest `audioLevel` so far (RMS, 0..1): 0 means only silence was played. */
  maxAudioLevel: number;
  /** (multipath-rtc) Opus frames decoded (count). */
  framesDecoded: number;
  /** (multipath-rtc) The remote audio track exists (the browser has MediaStreamTrackGenerator for audio). */
  rendering: boolean;
}

/** webrtc-stats RTCDataChannelStats of app data with one participant (`MultipathCall.send`); id `D_<participant>`. */
export interface DataChannelStats extends StatsBase {
  type: 'data-channel';
  participantId: string;
  transportId: string;
  label: 'app-data';
  /** 'open' while any path to it is connected, else 'connecting'. */
  state: 'connecting' | 'open';
  messagesSent: number;
  /** Payload bytes (bytes). */
  bytesSent: number;
  messagesReceived: number;
  /** (bytes) */
  bytesReceived: number;
  /** (multipath-rtc) Retransmitted reliable messages (count). */
  messagesRetransmitted: number;
  /** (multipath-rtc) Reliable messages given up on (count). */
  messagesAbandoned: number;
  /** (multipath-rtc) Reliable messages awaiting an ack, and their bytes. */
  messagesInFlight: number;
  bytesInFlight: number;
}

/** Every entry of a {@link CallStatsReport}, discriminated by `type` (and `kind` for RTP streams and media sources). */
export type CallStatsEntry =
  | CallEntryStats
  | MediaSourceStats
  | TransportStats
  | CandidatePairStats
  | IceCandidateStats
  | PathStats
  | CodecStats
  | OutboundRtpStats
  | RemoteInboundRtpStats
  | InboundRtpStats
  | DataChannelStats;

/** The entry type for a `type` value. */
export type CallStatsEntryOf<T extends CallStatsType> = Extract<CallStatsEntry, { type: T }>;

/**
 * The report: a `Map` from id to entry (iterate it, `get(id)`, `forEach`, as
 * an RTCStatsReport), plus typed filters. A snapshot: later changes of the
 * call do not change it. `JSON.stringify(report)` gives the entries as an array.
 */
export class CallStatsReport extends Map<string, CallStatsEntry> {
  /** Entries of one type, in report order (typed). */
  ofType<T extends CallStatsType>(type: T): CallStatsEntryOf<T>[] {
    const out: CallStatsEntryOf<T>[] = [];
    for (const e of this.values()) if (e.type === type) out.push(e as CallStatsEntryOf<T>);
    return out;
  }

  /** Entries about one remote participant: its `transport` and every entry on it (`transportId`). */
  ofParticipant(participantId: string): CallStatsEntry[] {
    const transportId = `T_${participantId}`;
    const out: CallStatsEntry[] = [];
    for (const e of this.values()) if (e.id === transportId || ('transportId' in e && e.transportId === transportId)) out.push(e);
    return out;
  }

  /** The entries, in report order: what `JSON.stringify` writes. */
  toJSON(): CallStatsEntry[] {
    return [...this.values()];
  }

  /** A report from entries (e.g. `toJSON()` output that crossed a page boundary). */
  static from(entries: Iterable<CallStatsEntry>): CallStatsReport {
    const r = new CallStatsReport();
    for (const e of entries) r.set(e.id, e);
    return r;
  }
}
