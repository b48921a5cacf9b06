/**
 * The getStats() contract (src/call/stats-types.ts): a report built from a
 * real sender and receiver engine pair (tests/unit/engine/call-helper.ts,
 * two emulated paths of 30 and 80 ms one-way delay) has every entry type with
 * its required fields, ids that resolve to entries of the right type, and
 * W3C units (s, fractions, ms timestamps) that match the engines' own
 * numbers and the links' configured delays.
 */
import { describe, expect, it } from 'vitest';
import { buildStatsReport, type CallSnapshot, mimeTypeOf, type SessionSnapshot } from '../../../src/call/stats.js';
import { type CallStatsEntry, CallStatsReport, type CallStatsType } from '../../../src/call/stats-types.js';
import type { CameraEncoderStats } from '../../../src/codec/webcodecs.js';
import { AppDataChannel } from '../../../src/engine/app-data.js';
import { makeCall } from '../engine/call-helper.js';

/** Fields every entry of a type must have (value may be undefined only where listed in `optional`). */
const REQUIRED: Record<CallStatsType, string[]> = {
  call: ['remoteParticipantIds', 'candidatePolicy', 'disabledPathIds', 'droppedSignals'],
  'media-source': ['kind', 'frames'],
  transport: ['participantId', 'packetsSent', 'bytesSent', 'packetsReceived', 'bytesReceived', 'candidatePairIds', 'roundTripTime', 'remoteClockOffset', 'samePairPathIds'],
  'candidate-pair': ['transportId', 'pathId', 'state', 'nominated', 'packetsSent', 'bytesSent', 'packetsReceived', 'bytesReceived'],
  'local-candidate': ['transportId', 'address', 'port', 'protocol', 'candidateType'],
  'remote-candidate': ['transportId', 'address', 'port', 'protocol', 'candidateType'],
  path: ['participantId', 'pathId', 'transportId', 'candidatePairId', 'enabled', 'state', 'mediaShare', 'sendBitrate', 'fractionLost', 'packetsSent', 'packetsReceived', 'latePackets'],
  codec: ['transportId', 'mimeType', 'clockRate'],
  'outbound-rtp': ['kind', 'participantId', 'transportId', 'mediaSourceId', 'packetsSent', 'bytesSent'],
  'remote-inbound-rtp': ['kind', 'participantId', 'transportId', 'localId', 'fractionLost'],
  'inbound-rtp': ['kind', 'participantId', 'transportId', 'packetsReceived', 'packetsLost', 'jitterBufferTargetDelay'],
  'data-channel': ['participantId', 'transportId', 'label', 'state', 'messagesSent', 'bytesSent', 'messagesReceived', 'bytesReceived'],
};
const VIDEO_IN = ['framesDecoded', 'framesDropped', 'framesPerSecond', 'freezeCount', 'totalFreezesDuration', 'jitterBufferDelay', 'jitterBufferEmittedCount', 'nackCount', 'pliCount', 'jitter'];
const VIDEO_OUT = ['framesEncoded', 'framesSent', 'frameWidth', 'frameHeight', 'framesPerSecond', 'targetBitrate', 'qualityLimitationReason', 'nackCount', 'pliCount', 'remoteId', 'scalabilityMode'];
/** Fields in seconds, and fields that are fractions 0..1. */
const SECONDS =
  /^(roundTripTime|minRoundTripTime|currentRoundTripTime|oneWayDelay|connectTime|jitter|jitterBufferDelay|jitterBufferTargetDelay|totalFreezesDuration|endToEndLatency\w*|totalFcd|totalIfd|mouthToEar\w*)$/;
const FRACTIONS = /^(mediaShare|fractionLost|receiveFractionLost|fecUtilization|fecUseful)$/;

const encoder: CameraEncoderStats = {
  framesIn: 300,
  framesEncoded: 290,
  framesDroppedBeforeEncode: 0,
  framesSkipped: 0,
  keyFrames: 2,
  bitrateBps: 1_200_000,
  width: 640,
  height: 480,
  frameRate: 29.5,
  fps: 30,
  maxFps: 30,
  degradationReason: 'bandwidth',
  adaptationChanges: 1,
  degradationPreference: 'maintain-framerate',
  framesDroppedByFpsCap: 0,
  framesDroppedByPushback: 0,
  encodeUsage: 0.3,
  temporalLayers: 2,
  framesPerLayer: [145, 145],
  captureMode: 'track-processor',
  mutedFrames: 0,
};

function realSnapshot(): { snap: CallSnapshot; session: SessionSnapshot } {
  // Small frames: no queueing on the links, so the one-way delay is the links' own.
  const c = makeCall(
    [
      { rateMbps: 4, delayMs: 30, loss: 0.02 },
      { rateMbps: 4, delayMs: 80 },
    ],
    { frameBytes: 400 },
  );
  c.run(6000);
  const pair = (port: number) => ({ address: '192.0.2.1', port, protocol: 'udp', type: 'host' });
  const session: SessionSnapshot = {
    participantId: 'bob',
    sender: c.sender.stats(),
    receiver: c.receiver.stats(),
    decoder: { decoded: c.decoded.length, errors: 0, queue: 0, held: 0, renderMode: 'track-generator', renderErrors: 0, frameWidth: 640, frameHeight: 480 },
    decodedFpsLastSecond: 30,
    receivedVideoCodec: 'vp8',
    paths: [0, 1].map((id) => ({
      id,
      enabled: true,
      state: 'connected' as const,
      stateReason: 'connected' as never,
      transportState: 'connected' as const,
      connectMs: 120 + id,
      iceRestarts: 0,
      attempt: 0,
      selectedPair: id === 0 ? { id: 'x', local: pair(5000), remote: pair(6000) } : undefined,
      bufferedAmount: 0,
    })),
    samePair: [],
    malformedPackets: 0,
    appData: new AppDataChannel({ clock: c.clock, transmit: () => false, deliver: () => undefined }).stats(),
    audioOutput: undefined,
  };
  const snap: CallSnapshot = {
    timestampMs: c.clock.nowUs() / 1000,
    participantId: 'alice',
    candidatePolicy: 'all candidates on every path',
    disabledPaths: [],
    droppedSignals: 0,
    encoder,
    sendingVideo: true,
    sentVideoCodec: 'avc1.42e01f',
    camera: { width: 640, height: 480, fps: 30 },
    audioEncoder: undefined,
    sessions: [session],
  };
  return { snap, session };
}

describe('getStats() report shape', () => {
  const { snap, session } = realSnapshot();
  const report = buildStatsReport(snap);
  const entries = [...report.values()];

  it('has every entry type a 1:1 call sending and receiving video has, each with its required fields', () => {
    const types = new Set(entries.map((e) => e.type));
    for (const t of [
      'call',
      'media-source',
      'transport',
      'candidate-pair',
      'local-candidate',
      'remote-candidate',
      'path',
      'codec',
      'outbound-rtp',
      'remote-inbound-rtp',
      'inbound-rtp',
      'data-channel',
    ] as const) {
      expect(types.has(t), t).toBe(true);
    }
    for (const e of entries) {
      expect(typeof e.id).toBe('string');
      expect(e.timestamp).toBe(snap.timestampMs);
      for (const f of REQUIRED[e.type]) expect(e, `${e.id}.${f}`).toHaveProperty(f);
      const rec = e as unknown as Record<string, unknown>;
      if (e.type === 'inbound-rtp' && e.kind === 'video') for (const f of VIDEO_IN) expect(typeof rec[f], `${e.id}.${f}`).not.toBe('undefined');
      if (e.type === 'outbound-rtp' && e.kind === 'video') for (const f of VIDEO_OUT) expect(typeof rec[f], `${e.id}.${f}`).not.toBe('undefined');
      // Units: numbers finite; fractions in 0..1; seconds are seconds (a call on these links has nothing near 30 s).
      for (const [k, v] of Object.entries(rec)) {
        if (typeof v !== 'number') continue;
        expect(Number.isFinite(v), `${e.id}.${k}`).toBe(true);
        if (FRACTIONS.test(k)) expect(v >= 0 && v <= 1, `${e.id}.${k} = ${v}`).toBe(true);
        if (SECONDS.test(k) && !k.startsWith('total') && k !== 'jitterBufferDelay') expect(Math.abs(v) < 30, `${e.id}.${k} = ${v} s`).toBe(true);
      }
    }
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
  });

  it('links resolve to entries of the right type', () => {
    const typeOf = (id: unknown) => (typeof id === 'string' ? report.get(id)?.type : undefined);
    for (const e of entries) {
      const rec = e as unknown as Record<string, unknown>;
      if ('transportId' in rec) expect(typeOf(rec.transportId), `${e.id}.transportId`).toBe('transport');
      if (rec.codecId !== undefined && 'codecId' in rec) expect(typeOf(rec.codecId), `${e.id}.codecId`).toBe('codec');
      if ('mediaSourceId' in rec) expect(typeOf(rec.mediaSourceId), `${e.id}.mediaSourceId`).toBe('media-source');
      if ('candidatePairId' in rec) expect(typeOf(rec.candidatePairId)).toBe('candidate-pair');
      if (e.type === 'outbound-rtp' && e.kind === 'video') expect(typeOf(e.remoteId)).toBe('remote-inbound-rtp');
      if (e.type === 'remote-inbound-rtp') expect(typeOf(e.localId)).toBe('outbound-rtp');
      if (e.type === 'candidate-pair' && e.localCandidateId) {
        expect(typeOf(e.localCandidateId)).toBe('local-candidate');
        expect(typeOf(e.remoteCandidateId)).toBe('remote-candidate');
      }
      if (e.type === 'transport') for (const id of e.candidatePairIds) expect(typeOf(id)).toBe('candidate-pair');
    }
    const codecs = report.ofType('codec');
    expect(codecs.map((c) => c.mimeType).sort()).toEqual(['video/H264', 'video/VP8']);
    // Everything but the call and the camera is about bob.
    expect(report.ofParticipant('bob').length).toBe(entries.length - 2);
  });

  it("carries the engines' numbers in W3C units", () => {
    const rcv = session.receiver;
    const snd = session.sender!;
    const iv = report.ofType('inbound-rtp').find((e) => e.kind === 'video')!;
    const ov = report.ofType('outbound-rtp').find((e) => e.kind === 'video')!;
    if (iv.kind !== 'video' || ov.kind !== 'video') throw new Error('kinds');
    expect(iv.framesDecoded).toBe(rcv.framesDecoded);
    expect(iv.framesDecoded).toBeGreaterThan(100);
    expect(iv.totalFreezesDuration).toBeCloseTo(rcv.freezeTotalMs / 1000, 9);
    expect(iv.freezeCount).toBe(rcv.freezeCount);
    expect(iv.nackCount).toBe(rcv.nacksSent);
    expect(iv.nackCount).toBeGreaterThan(0);
    expect(iv.endToEndLatencyP50).toBeCloseTo(rcv.latencyMs.p50 / 1000, 9);
    // Jitter buffer: every emitted frame counted; its mean delay is within (0, 1 s) on 30-80 ms paths.
    expect(iv.jitterBufferEmittedCount).toBeGreaterThanOrEqual(iv.framesDecoded);
    const jbMean = iv.jitterBufferDelay / iv.jitterBufferEmittedCount;
    expect(jbMean).toBeGreaterThan(0);
    expect(jbMean).toBeLessThan(1);
    expect(ov.framesSent).toBe(snd.framesSent);
    expect(ov.targetBitrate).toBe(snd.targetBitrateBps);
    expect(ov.frameWidth).toBe(640);
    expect(ov.qualityLimitationReason).toBe('bandwidth');
    expect(ov.scalabilityMode).toBe('L1T2');
    const paths = report.ofType('path');
    expect(paths.map((p) => p.pathId)).toEqual([0, 1]);
    const share = paths.reduce((a, p) => a + p.mediaShare, 0);
    expect(share).toBeCloseTo(1, 6);
    for (const p of paths) {
      const sp = snd.paths.find((x) => x.id === p.pathId)!;
      expect(p.roundTripTime).toBeCloseTo(sp.rttMs / 1000, 9);
      expect(p.connectTime).toBeCloseTo((120 + p.pathId) / 1000, 9);
    }
    // One-way delay follows the links (30 and 80 ms, little queueing), and is in seconds.
    const owd = paths.map((p) => p.oneWayDelay!);
    expect(owd[0]).toBeGreaterThan(0.029);
    expect(owd[0]).toBeLessThan(0.045);
    expect(owd[1]).toBeGreaterThan(0.079);
    expect(owd[1]).toBeLessThan(0.095);
    // The lossy path reports loss as a fraction.
    expect(paths[0].fractionLost).toBeGreaterThan(0);
    expect(paths[0].fractionLost).toBeLessThan(0.1);
    const ri = report.ofType('remote-inbound-rtp')[0];
    expect(ri.roundTripTime).toBeGreaterThan(0.05);
    expect(ri.roundTripTime).toBeLessThan(0.5);
  });

  it('JSON round-trips through toJSON / from; an empty call has only the call entry', () => {
    const again = CallStatsReport.from(JSON.parse(JSON.stringify(report)) as CallStatsEntry[]);
    expect([...again.keys()]).toEqual([...report.keys()]);
    const empty = buildStatsReport({ ...snap, encoder: undefined, sessions: [], sendingVideo: false });
    expect([...empty.values()].map((e) => e.type)).toEqual(['call']);
    expect(mimeTypeOf('vp09.00.10.08')).toBe('video/VP9');
    expect(mimeTypeOf('av01.0.04M.08')).toBe('video/AV1');
    expect(mimeTypeOf('xyz')).toBeUndefined();
  });
});
