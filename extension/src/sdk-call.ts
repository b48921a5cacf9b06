/**
 * The extension's only use of the SDK (`src/index.ts`): join a room, send the
 * camera, hand the remote track to the page and turn `getStats()` into the
 * popup's {@link CallSnapshot}. Kept in one small file so a change of the SDK's
 * API touches nothing else in `extension/`.
 */
import { CallEvent, MultipathCall } from '../../src/index.js';
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

function toSnapshot(s: ReturnType<MultipathCall['getStats']>): Omit<CallSnapshot, 'phase' | 'room' | 'error'> {
  const tx = new Map((s.sender?.paths ?? []).map((p) => [p.id, p]));
  const rx = new Map(s.receiver.paths.map((p) => [p.id, p]));
  const paths: PathSnapshot[] = s.paths.map((info) => {
    const t = tx.get(info.id);
    const r = rx.get(info.id);
    return {
      id: info.id,
      state: info.state,
      rttMs: t?.rttMs,
      sendRateBps: t?.sendRateBps,
      estimateBps: t?.rateBps,
      lossPct: t?.lossPct ?? r?.lossPct,
      packetsReceived: r?.packetsReceived ?? 0,
    };
  });
  return {
    timestamp: Date.now(),
    paths,
    fps: s.receiver.fps,
    framesDecoded: s.receiver.framesDecoded,
    freezeCount: s.receiver.freezeCount,
    freezeTotalMs: s.receiver.freezeTotalMs,
    framesEncoded: s.encoder?.framesEncoded ?? 0,
  };
}
