/**
 * The transport-side entries of `MultipathCall.getStats()`: the session with
 * a remote participant (`transport`), each path's RTCPeerConnection route
 * (`candidate-pair`, `local-candidate`, `remote-candidate`) and our own
 * multipath view of each path (`path`). Units and conventions: ./stats-types.ts.
 */
import type { PathId } from '../core/types.js';
import type { PathLifecycleState, PathStateReason } from '../transport/path-supervisor.js';
import type { PathTransportState } from '../transport/types.js';
import type { StallFallbackStats } from '../transport/stall-fallback.js';
import type { StatsBase } from './stats-types.js';

/** webrtc-stats RTCTransportStats: the multipath session with one remote participant; id `T_<participant>`. */
export interface TransportStats extends StatsBase {
  type: 'transport';
  /** (multipath-rtc) The remote participant. */
  participantId: string;
  /** Datagrams sent over all its paths (media, FEC, retransmissions, probes, feedback, app data) (count). */
  packetsSent: number;
  /** Bytes of those datagrams (bytes). */
  bytesSent: number;
  /** Datagrams received over all its paths (count). */
  packetsReceived: number;
  /** Bytes of those datagrams (bytes). */
  bytesReceived: number;
  /** (multipath-rtc) Its paths' candidate-pair entries, by path id. */
  candidatePairIds: string[];
  /** (multipath-rtc) RTT as our receiver estimates it (s): NACK -> retransmission once a NACK was answered, else the smallest path RTT of the clock exchange, else its default. */
  roundTripTime: number;
  /** (multipath-rtc) Remote clock - local clock as estimated from the clock exchange (s; RFC 5905 §8); 0 before the first sample. */
  remoteClockOffset: number;
  /** (multipath-rtc) Bound on that estimate's error (s): half the RTT of the sample it rests on. */
  remoteClockOffsetErrorBound: number;
  /** (multipath-rtc) Clock exchanges accepted (count). */
  remoteClockSamples: number;
  /** (multipath-rtc) Groups of path ids whose selected routes have the same local and remote address: they are not independent paths. */
  samePairPathIds: PathId[][];
  /** (multipath-rtc) Malformed datagrams dropped (count). */
  malformedPackets: number;
}

/**
 * webrtc-stats RTCIceCandidatePairStats of one path's RTCPeerConnection; id
 * `CP_<participant>_<path>`. Traffic counters are our datagrams on the path.
 */
export interface CandidatePairStats extends StatsBase {
  type: 'candidate-pair';
  transportId: string;
  /** (multipath-rtc) The path. */
  pathId: PathId;
  /** Set once the path's route is known (its first connection). */
  localCandidateId: string | undefined;
  remoteCandidateId: string | undefined;
  /** From the path's lifecycle: connected 'succeeded', connecting 'in-progress', retrying / closed 'failed'. */
  state: 'in-progress' | 'succeeded' | 'failed';
  /** True while the path is connected. */
  nominated: boolean;
  /** Smoothed RTT of the path (s), from our sender's feedback, else the receiver's clock exchange; undefined before the first sample. */
  currentRoundTripTime: number | undefined;
  /** The path's congestion controller target rate S_i (bps; our sender's GCC estimate); undefined while we send nothing. */
  availableOutgoingBitrate: number | undefined;
  packetsSent: number;
  /** (bytes) */
  bytesSent: number;
  packetsReceived: number;
  /** (bytes) */
  bytesReceived: number;
}

/** webrtc-stats RTCIceCandidateStats of a path's selected route; ids `LC_<participant>_<path>` / `RC_<participant>_<path>`. */
export interface IceCandidateStats extends StatsBase {
  type: 'local-candidate' | 'remote-candidate';
  transportId: string;
  /** IP address, or the mDNS name when that is all the browser reveals. */
  address: string;
  port: number;
  /** 'udp' | 'tcp'. */
  protocol: string;
  /** 'host' | 'srflx' | 'prflx' | 'relay'. */
  candidateType: string;
}

/**
 * (multipath-rtc) One path towards one remote participant; id
 * `P_<participant>_<path>`. Send-side fields are about what we send on it
 * (from our sender's congestion control and the remote receiver's
 * feedback), receive-side fields about what the remote participant sends us
 * on it. Send-side fields are 0 (undefined for estimates) while we send nothing.
 */
export interface PathStats extends StatsBase {
  type: 'path';
  participantId: string;
  pathId: PathId;
  transportId: string;
  candidatePairId: string;
  /** False while the app disabled the path (`setPathEnabled`): nothing of ours is sent on it. */
  enabled: boolean;
  /** Lifecycle as `CallEvent.PathState` reports it: 'connecting' | 'connected' | 'retrying' | 'closed'. */
  state: PathLifecycleState;
  /** Why it is in that state. */
  stateReason: PathStateReason;
  /** The current RTCPeerConnection's own transport state. */
  transportState: PathTransportState | undefined;
  /** Time from the path's start to its first connection (s); undefined until connected. */
  connectTime: number | undefined;
  /** Restarts of the path (new RTCPeerConnection, new ICE session) over the call (count). */
  iceRestarts: number;
  /** Restart attempts since it was last connected (count). */
  restartAttempt: number;
  /** Bytes queued in its RTCDataChannel (bytes). */
  bufferedAmount: number;
  /**
   * With `MultipathCallOptions.rtpCarrier`, once loaded: which pipe the path's
   * datagrams take now and the counters of both (datagrams, bytes, switches
   * to the RTP carrier on a stalled datachannel and back, refusals); see
   * src/transport/stall-fallback.ts `StallFallbackStats`. Absent otherwise.
   */
  rtpCarrier?: StallFallbackStats;
  /**
   * Up in our sender's path manager: its transport is connected and its
   * receiver reports have not been silent past the down threshold (a
   * `path-down` event fires when this turns false). Media goes on a path
   * that is `up`, `enabled` and not `demoted`, except: none while its reports
   * are late past its silence threshold (suspect, before down) or while it
   * switches relays; and some while `up` is false on a path kept through a
   * feedback gap (its reverse direction silent while the others are too
   * weak to carry the call) or on the only enabled path (the last resort).
   * `sendBitrate` and `mediaPacketsSent` show what it carries.
   */
  up: boolean;
  /**
   * Benched: no media, padding only (its loss and RTT stay measured), while
   * another path can carry the call; either demoted by the path hysteresis
   * (src/sched/path-hysteresis.ts: a flapping or lossy path, until it stays
   * clean for its hold time) or on probation after a silence
   * (src/engine/sender-paths.ts isDemoted). With no live alternative a
   * demoted path is not benched and this is false.
   */
  demoted: boolean;
  /** Share of our first-sent media packets on this path (fraction 0..1). */
  mediaShare: number;
  /** Target rate S_i of its congestion controller (bps): our rate estimate of the path. */
  targetBitrate: number | undefined;
  /** What we sent on it over the last second, everything counted (bps). */
  sendBitrate: number;
  /** Acknowledged rate (bps), undefined until known. */
  goodput: number | undefined;
  /** Smoothed RTT (s) and the smallest seen (s), from feedback; undefined before the first sample. */
  roundTripTime: number | undefined;
  minRoundTripTime: number | undefined;
  /** Loss of what we send on it, as the remote receiver reports it (fraction 0..1). */
  fractionLost: number;
  packetsSent: number;
  /** (bytes) */
  bytesSent: number;
  /** First-sent media packets (count). */
  mediaPacketsSent: number;
  fecPacketsSent: number;
  retransmittedPacketsSent: number;
  probePacketsSent: number;
  /** Packets of key frames, SPS and PPS sent on it (Converge Table 2 priorities 2, 3, 4) (count). */
  keyFramePacketsSent: number;
  spsPacketsSent: number;
  ppsPacketsSent: number;
  /** Packets its pacer dropped (over the delay budget or queue bound) (count). */
  pacerDroppedPackets: number;
  /** Datagrams its channel refused (count). */
  sendFailures: number;
  /** Bytes waiting in its pacer (bytes). */
  queuedBytes: number;
  /** Receive side: datagrams and bytes the remote participant sent us on it. */
  packetsReceived: number;
  /** (bytes) */
  bytesReceived: number;
  mediaPacketsReceived: number;
  fecPacketsReceived: number;
  /** Loss in its sequence space, receive side (fraction 0..1). */
  receiveFractionLost: number;
  /** Packets that arrived after the rest of their frame on a faster path (Converge §3.2 LATE) (count). */
  latePackets: number;
  earlyPackets: number;
  /** FEC received for it that rebuilt a packet / FEC received for it (fraction 0..1). */
  fecUtilization: number;
  /**
   * One-way delay of its media packets, receive side (s): smoothed arrival -
   * send time, moved onto one clock with the estimated clock offset (see
   * `transport.remoteClockOffset`); undefined until both are known. Off by at
   * most the offset's error bound.
   */
  oneWayDelay: number | undefined;
  /**
   * Receive side: feedback we sent back on this path's reverse direction (reports, clock echoes,
   * NACKs, QoE feedback, key frame requests; bytes of the encoded datagrams the transport took, no
   * transport overhead).
   */
  feedbackBytesSent: number;
  /** The path reports among {@link feedbackBytesSent} (bytes), copies of other paths' reports it carried included. */
  reportBytesSent: number;
  /**
   * Arrivals this path's own reports listed again after a late packet re-covered them (count;
   * src/feedback/path-report-builder.ts `relisted`): counted when the report is built, whichever path carries it.
   */
  reportArrivalsRelisted: number;
}
