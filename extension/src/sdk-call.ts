/**
 * The extension's only use of the SDK (`src/index.ts`): join a room, send the
 * camera, hand the remote track to the page and turn `getStats()` into the
 * popup's {@link CallSnapshot}. Kept in one small file so a change of the SDK's
 * API touches nothing else in `extension/`.
 */
import { CallEvent, type CallStatsReport, MultipathCall } from '../../src/index.js';
import type { CallSnapshot, PathSnapshot } from './protocol.js';

export interface ExtensionCallOptions {
  /** ws:// or wss:// URL of the signalling server. */
  signallingUrl: string;
  room: string;
  /** Number of paths (1-8). */
  paths: number;
  /** Called once with the remote video track. */
  onRemoteTrack(track: MediaStreamTrack): void;
  /** Called on every phase change (see {@link CallSnapshot.phase}). */
  onPhase(phase: string, detail?: string): void;
}

export interface ExtensionCall {
  /** Start sending `track` (after the call is connected to the server). */
  send(track: MediaStreamTrack): Promise<void>;
  snapshot(): Omit<CallSnapshot, 'phase' | 'room' | 'error'>;
  close(): void;
}

/**
 * Connect to the signalling server and join `room`.
 * @throws whatever `MultipathCall.connect()` throws (bad options, server unreachable).
 */
export async function joinCall(opts: ExtensionCallOptions): Promise<ExtensionCall> {
  const call = new MultipathCall({ signallingUrl: opts.signallingUrl, room: opts.room, paths: opts.paths });
  call.on(CallEvent.RemoteTrack, (track) => opts.onRemoteTrack(track));
  call.on(CallEvent.Connected, ({ remotePeerId }) => opts.onPhase('connected', remotePeerId));
  call.on(CallEvent.ParticipantLeft, () => opts.onPhase('peer-left'));
  call.on(CallEvent.Error, (e) => opts.onPhase('error', String(e)));
  call.on(CallEvent.Closed, () => opts.onPhase('closed'));
  await call.connect();
  return {
    send: (track) => call.sendTrack(track),
    snapshot: () => toSnapshot(call.getStats()),
    close: () => call.close(),
  };
}

function toSnapshot(s: CallStatsReport): Omit<CallSnapshot, 'phase' | 'room' | 'error'> {
  // The first remote participant (the extension holds 1:1 calls).
  const pid = s.ofType('call')[0]?.remoteParticipantIds[0];
  const sending = s.ofType('outbound-rtp').some((x) => x.participantId === pid && x.kind === 'video');
  const inVideo = s.ofType('inbound-rtp').find((x) => x.participantId === pid && x.kind === 'video');
  const paths: PathSnapshot[] = s
    .ofType('path')
    .filter((p) => p.participantId === pid)
    .map((p) => ({
      id: p.pathId,
      state: p.state,
      rttMs: sending && p.roundTripTime !== undefined ? p.roundTripTime * 1000 : undefined,
      sendRateBps: sending ? p.sendBitrate : undefined,
      estimateBps: sending ? p.targetBitrate : undefined,
      lossPct: (sending ? p.fractionLost : p.receiveFractionLost) * 100,
      packetsReceived: p.packetsReceived,
    }));
  const encoded = s.ofType('outbound-rtp').find((x) => x.kind === 'video');
  return {
    timestamp: Date.now(),
    paths,
    fps: inVideo?.kind === 'video' ? inVideo.framesPerSecond : 0,
    framesDecoded: inVideo?.kind === 'video' ? inVideo.framesDecoded : 0,
    freezeCount: inVideo?.kind === 'video' ? inVideo.freezeCount : 0,
    freezeTotalMs: inVideo?.kind === 'video' ? inVideo.totalFreezesDuration * 1000 : 0,
    framesEncoded: encoded?.kind === 'video' ? encoded.framesEncoded : 0,
  };
}
