/**
 * Builds `MultipathCall.getStats()`'s {@link CallStatsReport} (the contract
 * is ./stats-types.ts) from snapshots of the call's engines. Pure: no clock,
 * no I/O; the call and its sessions take the snapshots (./peer-session.ts
 * `PeerSession.snapshot`), this module only renames, converts units
 * (ms -> s, % -> fraction) and links entries by id. It computes no metric
 * of its own: freezes, frame rate, latency and goodput come from the
 * receiver engine, which computes them with src/feedback/qoe-metrics.ts.
 */
import type { AudioOutputStats } from '../audio/audio-output.js';
import type { OpusEncoderStats } from '../audio/opus-encoder.js';
import type { CameraEncoderStats, FrameDecoderStats } from '../codec/webcodecs.js';
import type { PathId } from '../core/types.js';
import type { AppDataStats } from '../engine/app-data.js';
import type { ReceiverStats, SenderStats } from '../engine/types.js';
import type { PathLifecycleState, PathStateReason } from '../transport/path-supervisor.js';
import type { StallFallbackStats } from '../transport/stall-fallback.js';
import type { PathTransportState, SelectedPair } from '../transport/types.js';
import {
  type CallStatsEntry,
  CallStatsReport,
  type CandidatePairStats,
  type CodecStats,
  type InboundAudioStats,
  type InboundVideoStats,
  type OutboundAudioStats,
  type OutboundVideoStats,
  type PathStats,
  type TransportStats,
} from './stats-types.js';

/** One path of a session, as the session's supervisor and transport see it. */
export interface PathSnapshot {
  id: PathId;
  enabled: boolean;
  state: PathLifecycleState;
  stateReason: PathStateReason;
  transportState: PathTransportState | undefined;
  connectMs: number | undefined;
  iceRestarts: number;
  attempt: number;
  selectedPair: SelectedPair | undefined;
  bufferedAmount: number;
  /** With the option `rtpCarrier`: the path's stall fallback counters (src/transport/stall-fallback.ts). */
  rtpCarrier?: StallFallbackStats;
}

/** What one session (one remote participant) holds at the moment of the report. */
export interface SessionSnapshot {
  participantId: string;
  sender: SenderStats | undefined;
  receiver: ReceiverStats;
  decoder: FrameDecoderStats;
  /** Frames decoded over the last second (frames/s). */
  decodedFpsLastSecond: number;
  /** WebCodecs codec string of the video received, once announced. */
  receivedVideoCodec: string | undefined;
  paths: PathSnapshot[];
  samePair: PathId[][];
  malformedPackets: number;
  appData: AppDataStats;
  audioOutput: AudioOutputStats | undefined;
}

/** What the call holds at the moment of the report. */
export interface CallSnapshot {
  /** The call clock (ms). */
  timestampMs: number;
  participantId: string | undefined;
  candidatePolicy: string;
  disabledPaths: PathId[];
  /** Malformed signals the call's signalling dropped. */
  droppedSignals: number;
  /** The shared camera encoder, once a video track is sent. */
  encoder: CameraEncoderStats | undefined;
  /** A camera track is being encoded now. */
  sendingVideo: boolean;
  /** WebCodecs codec string of the video sent, else the configured codec name. */
  sentVideoCodec: string | undefined;
  camera: { width: number; height: number; fps: number } | undefined;
  audioEncoder: OpusEncoderStats | undefined;
  sessions: SessionSnapshot[];
}

/** W3C mime type of a WebCodecs codec string or a codec name (RFC 6184 H264, RFC 7741 VP8, ...); undefined when unknown. */
export function mimeTypeOf(codec: string): string | undefined {
  const c = codec.toLowerCase();
  if (c.startsWith('avc1') || c.startsWith('avc3') || c === 'h264') return 'video/H264';
  if (c === 'vp8') return 'video/VP8';
  if (c.startsWith('vp09') || c === 'vp9') return 'video/VP9';
  if (c.startsWith('av01') || c === 'av1') return 'video/AV1';
  if (c === 'opus') return 'audio/opus';
  return undefined;
}

const s = (ms: number): number => ms / 1000;
const sOpt = (ms: number | undefined): number | undefined => (ms === undefined || !Number.isFinite(ms) ? undefined : ms / 1000);
const frac = (pct: number): number => (Number.isFinite(pct) ? Math.min(1, Math.max(0, pct / 100)) : 0);
/** RTT from a stats field where 0 means "no sample yet". */
const rttS = (ms: number | undefined): number | undefined => (ms !== undefined && ms > 0 ? ms / 1000 : undefined);
const pairState = (st: PathLifecycleState): CandidatePairStats['state'] => (st === 'connected' ? 'succeeded' : st === 'connecting' ? 'in-progress' : 'failed');
const qualityReason = (r: string): OutboundVideoStats['qualityLimitationReason'] => (r === 'none' || r === 'bandwidth' || r === 'cpu' ? r : 'other');

/** Build the report; see ./stats-types.ts for every field's meaning and unit. */
export function buildStatsReport(c: CallSnapshot): CallStatsReport {
  const timestamp = c.timestampMs;
  const out: CallStatsEntry[] = [];
  out.push({
    id: 'call',
    type: 'call',
    timestamp,
    participantId: c.participantId,
    remoteParticipantIds: c.sessions.map((x) => x.participantId),
    candidatePolicy: c.candidatePolicy,
    disabledPathIds: [...c.disabledPaths],
    droppedSignals: c.droppedSignals,
  });
  const enc = c.encoder;
  if (enc) {
    out.push({
      id: 'SV',
      type: 'media-source',
      kind: 'video',
      timestamp,
      width: c.camera?.width ?? 0,
      height: c.camera?.height ?? 0,
      frames: enc.framesIn,
      framesPerSecond: c.camera?.fps ?? enc.fps,
      captureMode: enc.captureMode,
      mutedFrames: enc.mutedFrames,
      framesNotEncoded: { pushback: enc.framesDroppedByPushback, encoderQueue: enc.framesDroppedBeforeEncode, fpsCap: enc.framesDroppedByFpsCap, noPath: enc.framesSkipped },
    });
  }
  if (c.audioEncoder) {
    out.push({
      id: 'SA',
      type: 'media-source',
      kind: 'audio',
      timestamp,
      frames: c.audioEncoder.inputFrames,
      sampleRate: c.audioEncoder.sampleRate,
      channels: c.audioEncoder.inputChannels,
      framesEncoded: c.audioEncoder.framesEncoded,
      mutedFrames: c.audioEncoder.mutedFrames,
      targetBitrate: c.audioEncoder.bitrateBps,
      frameDuration: c.audioEncoder.frameDurationUs / 1e6,
      reconfigurations: c.audioEncoder.reconfigurations,
    });
  }
  for (const x of c.sessions) out.push(...sessionEntries(c, x, timestamp));
  return CallStatsReport.from(out);
}

function sessionEntries(c: CallSnapshot, x: SessionSnapshot, timestamp: number): CallStatsEntry[] {
  const pid = x.participantId;
  const transportId = `T_${pid}`;
  const snd = x.sender;
  const rcv = x.receiver;
  const tx = new Map((snd?.paths ?? []).map((p) => [p.id, p]));
  const rx = new Map(rcv.paths.map((p) => [p.id, p]));
  const entries: CallStatsEntry[] = [];
  /** The fields every RTP stream entry starts with. */
  const rtp = <T extends 'outbound-rtp' | 'inbound-rtp', K extends 'video' | 'audio'>(type: T, kind: K, codecId: string | undefined) => ({
    id: `${type === 'outbound-rtp' ? 'OT' : 'IT'}_${pid}_${kind}`,
    type,
    kind,
    timestamp,
    participantId: pid,
    transportId,
    codecId,
  });

  // Codecs in use with this participant.
  const codecs = new Map<string, CodecStats>();
  const codecId = (codec: string | undefined): string | undefined => {
    const mimeType = codec ? mimeTypeOf(codec) : undefined;
    if (!codec || !mimeType) return undefined;
    const id = `CO_${pid}_${mimeType.replace('/', '_')}`;
    if (!codecs.has(id)) {
      const audio = mimeType.startsWith('audio/');
      codecs.set(id, {
        id,
        type: 'codec',
        timestamp,
        transportId,
        mimeType,
        clockRate: audio ? 48_000 : 90_000,
        ...(audio ? { channels: 2 } : {}),
        ...(codec.toLowerCase() !== mimeType.slice(6).toLowerCase() ? { codecString: codec } : {}),
      });
    }
    return id;
  };

  const transport: TransportStats = {
    id: transportId,
    type: 'transport',
    timestamp,
    participantId: pid,
    packetsSent: (snd?.paths ?? []).reduce((n, p) => n + p.packetsSent, 0),
    bytesSent: (snd?.paths ?? []).reduce((n, p) => n + p.bytesSent, 0),
    packetsReceived: rcv.paths.reduce((n, p) => n + p.packetsReceived, 0),
    bytesReceived: rcv.paths.reduce((n, p) => n + p.bytesReceived, 0),
    candidatePairIds: x.paths.map((p) => `CP_${pid}_${p.id}`),
    roundTripTime: s(rcv.rttMs),
    remoteClockOffset: s(rcv.clock.offsetMs),
    remoteClockOffsetErrorBound: s(rcv.clock.errorBoundMs),
    remoteClockSamples: rcv.clock.samples,
    samePairPathIds: x.samePair.map((g) => [...g]),
    malformedPackets: x.malformedPackets,
  };
  entries.push(transport);

  for (const p of x.paths) {
    const t = tx.get(p.id);
    const r = rx.get(p.id);
    const cpId = `CP_${pid}_${p.id}`;
    const lcId = `LC_${pid}_${p.id}`;
    const rcId = `RC_${pid}_${p.id}`;
    const pair = p.selectedPair;
    const rtt = rttS(t?.rttMs) ?? rttS(r?.rttMs);
    entries.push({
      id: cpId,
      type: 'candidate-pair',
      timestamp,
      transportId,
      pathId: p.id,
      localCandidateId: pair ? lcId : undefined,
      remoteCandidateId: pair ? rcId : undefined,
      state: pairState(p.state),
      nominated: p.state === 'connected',
      currentRoundTripTime: rtt,
      availableOutgoingBitrate: t ? t.rateBps : undefined,
      packetsSent: t?.packetsSent ?? 0,
      bytesSent: t?.bytesSent ?? 0,
      packetsReceived: r?.packetsReceived ?? 0,
      bytesReceived: r?.bytesReceived ?? 0,
    });
    if (pair) {
      for (const [id, type, cand] of [
        [lcId, 'local-candidate', pair.local],
        [rcId, 'remote-candidate', pair.remote],
      ] as const) {
        entries.push({ id, type, timestamp, transportId, address: cand.address, port: cand.port, protocol: cand.protocol, candidateType: cand.type });
      }
    }
    const path: PathStats = {
      id: `P_${pid}_${p.id}`,
      type: 'path',
      timestamp,
      participantId: pid,
      pathId: p.id,
      transportId,
      candidatePairId: cpId,
      enabled: p.enabled,
      state: p.state,
      stateReason: p.stateReason,
      transportState: p.transportState,
      connectTime: sOpt(p.connectMs),
      iceRestarts: p.iceRestarts,
      restartAttempt: p.attempt,
      bufferedAmount: p.bufferedAmount,
      rtpCarrier: p.rtpCarrier,
      up: t?.up ?? false,
      demoted: t?.demoted ?? false,
      mediaShare: frac(t?.sharePct ?? 0),
      targetBitrate: t ? t.rateBps : undefined,
      sendBitrate: t?.sendRateBps ?? 0,
      goodput: t && t.goodputBps > 0 ? t.goodputBps : undefined,
      roundTripTime: rttS(t?.rttMs),
      minRoundTripTime: rttS(t?.minRttMs),
      fractionLost: frac(t?.lossPct ?? 0),
      packetsSent: t?.packetsSent ?? 0,
      bytesSent: t?.bytesSent ?? 0,
      mediaPacketsSent: t?.mediaPacketsSent ?? 0,
      fecPacketsSent: t?.fecPacketsSent ?? 0,
      retransmittedPacketsSent: t?.retransmissionsSent ?? 0,
      probePacketsSent: t?.probesSent ?? 0,
      keyFramePacketsSent: t?.keyframePacketsSent ?? 0,
      spsPacketsSent: t?.spsPacketsSent ?? 0,
      ppsPacketsSent: t?.ppsPacketsSent ?? 0,
      pacerDroppedPackets: t?.pacerDropped ?? 0,
      sendFailures: t?.sendFailures ?? 0,
      queuedBytes: t?.queuedBytes ?? 0,
      packetsReceived: r?.packetsReceived ?? 0,
      bytesReceived: r?.bytesReceived ?? 0,
      mediaPacketsReceived: r?.mediaPacketsReceived ?? 0,
      fecPacketsReceived: r?.fecPacketsReceived ?? 0,
      receiveFractionLost: frac(r?.lossPct ?? 0),
      latePackets: r?.latePackets ?? 0,
      earlyPackets: r?.earlyPackets ?? 0,
      fecUtilization: frac(r?.fecUtilizationPct ?? 0),
      oneWayDelay: sOpt(r?.oneWayDelayMs),
      feedbackBytesSent: r?.feedbackBytesSent ?? 0,
      reportBytesSent: r?.reportBytesSent ?? 0,
      reportArrivalsRelisted: r?.reportArrivalsRelisted ?? 0,
    };
    entries.push(path);
  }

  // What we send to this participant.
  if (snd) {
    const enc = c.encoder;
    const otVideo = `OT_${pid}_video`;
    const riVideo = `RI_${pid}_video`;
    const videoCodecId = codecId(c.sentVideoCodec);
    const video: OutboundVideoStats = {
      ...rtp('outbound-rtp', 'video', videoCodecId),
      mediaSourceId: 'SV',
      remoteId: riVideo,
      active: c.sendingVideo,
      packetsSent: snd.mediaPacketsSent,
      bytesSent: snd.bytesSent,
      targetBitrate: snd.targetBitrateBps,
      encoderBitrate: enc?.bitrateBps ?? 0,
      framesSent: snd.framesSent,
      keyFramesSent: snd.keyframesSent,
      framesEncoded: enc?.framesEncoded ?? 0,
      keyFramesEncoded: enc?.keyFrames ?? 0,
      frameWidth: enc?.width ?? 0,
      frameHeight: enc?.height ?? 0,
      framesPerSecond: enc?.frameRate ?? 0,
      qualityLimitationReason: qualityReason(enc?.degradationReason ?? 'none'),
      qualityLimitationResolutionChanges: enc?.adaptationChanges ?? 0,
      scalabilityMode: `L1T${enc?.temporalLayers ?? 1}`,
      nackCount: snd.nacksReceived,
      pliCount: snd.keyframeRequestsReceived,
      retransmittedPacketsSent: snd.retransmissionsSent,
      fecPacketsSent: snd.fecPacketsSent,
      qoeFeedbackReceived: snd.qoeFeedbackReceived,
      encodeUsage: enc?.encodeUsage,
    };
    entries.push(video);
    // The remote receiver's view, from its per-path feedback: weighted by where the media goes.
    let w = 0;
    let rttSum = 0;
    let lossSum = 0;
    for (const p of snd.paths) {
      if (!(p.rttMs > 0) || !(p.sharePct > 0)) continue;
      w += p.sharePct;
      rttSum += p.sharePct * p.rttMs;
      lossSum += p.sharePct * p.lossPct;
    }
    entries.push({
      id: riVideo,
      type: 'remote-inbound-rtp',
      kind: 'video',
      timestamp,
      participantId: pid,
      transportId,
      codecId: videoCodecId,
      localId: otVideo,
      roundTripTime: w > 0 ? s(rttSum / w) : undefined,
      fractionLost: w > 0 ? frac(lossSum / w) : 0,
    });
    if (c.audioEncoder || snd.audio.framesSent > 0) {
      const a = snd.audio;
      const audio: OutboundAudioStats = {
        ...rtp('outbound-rtp', 'audio', codecId('opus')),
        mediaSourceId: 'SA',
        packetsSent: a.packetsSent - a.duplicatesSent,
        bytesSent: c.audioEncoder?.bytesEncoded ?? 0,
        framesSent: a.framesSent,
        duplicatePacketsSent: a.duplicatesSent,
        framesUnsent: a.framesUnsent,
        sendBitrate: a.rateBps,
      };
      entries.push(audio);
    }
  }

  // What we receive from it.
  const videoPackets = rcv.paths.reduce((n, p) => n + p.mediaPacketsReceived, 0);
  const inVideo: InboundVideoStats = {
    ...rtp('inbound-rtp', 'video', codecId(x.receivedVideoCodec)),
    packetsReceived: videoPackets,
    packetsLost: rcv.paths.reduce((n, p) => n + p.packetsLost, 0),
    bytesReceived: transport.bytesReceived,
    jitter: s(rcv.jitterMs),
    jitterBufferTargetDelay: s(rcv.playout.targetDelayMs),
    framesReceived: rcv.framesAssembled,
    framesDecoded: rcv.framesDecoded,
    framesDropped: rcv.framesDropped,
    framesPerSecond: x.decodedFpsLastSecond,
    frameWidth: x.decoder.frameWidth,
    frameHeight: x.decoder.frameHeight,
    freezeCount: rcv.freezeCount,
    totalFreezesDuration: s(rcv.freezeTotalMs),
    jitterBufferDelay: s(rcv.jitterBufferDelayMs),
    jitterBufferEmittedCount: rcv.jitterBufferEmittedCount,
    nackCount: rcv.nacksSent,
    pliCount: rcv.keyframeRequestsSent,
    retransmittedPacketsReceived: rcv.retransmissionsReceived,
    fecPacketsReceived: rcv.fecPacketsReceived,
    fecRecoveredPackets: rcv.recoveredByFec,
    fecUtilization: frac(rcv.fecUtilizationPct),
    fecUseful: frac(rcv.fecUsefulPct),
    bytesDecoded: rcv.bytesDecoded,
    goodput: rcv.goodputBps,
    endToEndLatencyMean: s(rcv.latencyMs.mean),
    endToEndLatencyP50: s(rcv.latencyMs.p50),
    endToEndLatencyP95: s(rcv.latencyMs.p95),
    endToEndLatencyP99: s(rcv.latencyMs.p99),
    totalFcd: s(rcv.fcdTotal.sumMs),
    fcdCount: rcv.fcdTotal.count,
    totalIfd: s(rcv.ifdTotal.sumMs),
    ifdCount: rcv.ifdTotal.count,
    nackedPackets: rcv.nackedPackets,
    qoeFeedbackSent: rcv.qoeFeedbackSent,
    recentQoeFeedback: rcv.recentFeedback.map((f) => ({ timestamp: f.atUs / 1000, pathId: f.pathId, alpha: f.alpha, fcd: s(f.fcdMs) })),
    decoderErrors: x.decoder.errors,
    renderMode: x.decoder.renderMode,
  };
  entries.push(inVideo);
  const au = rcv.audio;
  if (au.packetsReceived > 0 || au.packetsLost > 0) {
    const o = x.audioOutput;
    const inAudio: InboundAudioStats = {
      ...rtp('inbound-rtp', 'audio', codecId('opus')),
      packetsReceived: au.packetsReceived,
      packetsLost: au.packetsLost,
      jitterBufferTargetDelay: s(au.targetDelayMs),
      totalSamplesReceived: au.totalSamplesReceived,
      concealedSamples: au.concealedSamples,
      concealmentEvents: au.concealmentEvents,
      removedSamplesForAcceleration: au.removedSamplesForAcceleration,
      duplicatePacketsReceived: au.duplicates,
      latePackets: au.latePackets,
      mouthToEarMean: s(au.mouthToEarMs.mean),
      mouthToEarP50: s(au.mouthToEarMs.p50),
      mouthToEarP95: s(au.mouthToEarMs.p95),
      avOffset: s(au.avOffsetMs),
      audioLevel: o?.rms ?? 0,
      maxAudioLevel: o?.maxRms ?? 0,
      framesDecoded: o?.framesDecoded ?? 0,
      rendering: o?.rendering ?? false,
    };
    entries.push(inAudio);
  }

  const d = x.appData;
  entries.push({
    id: `D_${pid}`,
    type: 'data-channel',
    timestamp,
    participantId: pid,
    transportId,
    label: 'app-data',
    state: x.paths.some((p) => p.state === 'connected' && p.enabled) ? 'open' : 'connecting',
    messagesSent: d.sent,
    bytesSent: d.sentBytes,
    messagesReceived: d.received,
    bytesReceived: d.receivedBytes,
    messagesRetransmitted: d.retransmitted,
    messagesAbandoned: d.abandoned,
    messagesInFlight: d.inFlight,
    bytesInFlight: d.inFlightBytes,
  });
  entries.push(...codecs.values());
  return entries;
}
