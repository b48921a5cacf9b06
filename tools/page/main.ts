/**
 * The peer page the `call` command and the end-to-end tests drive: one
 * MultipathCall per page, configured from the URL, with a small frame log the
 * harness reads every second through `window.__peer`.
 */
import { CallEvent, MultipathCall } from '../../src/call/multipath-call.js';
import type { CodecName } from '../../src/core/types.js';
import { latencySampleMs } from '../../src/feedback/qoe-metrics.js';
import type { FecPolicyName } from '../../src/fec/types.js';
import type { SchedulerName } from '../../src/sched/types.js';
import { registerAllStrategies } from '../../src/strategies.js';

const q = new URLSearchParams(location.search);
const role = q.get('role') === 'sender' ? 'sender' : 'receiver';
const statusEl = document.getElementById('status')!;
const log = (s: string) => {
  statusEl.textContent = s;
};

/** Epoch-based µs clock: the two pages of a call on one host share it, so capture -> decoded latency is exact. */
const clock = { nowUs: () => Math.round((performance.timeOrigin + performance.now()) * 1000) };

interface FrameLogEntry {
  frameId: number;
  latencyMs: number;
  atMs: number;
}
const frameLog: FrameLogEntry[] = [];
const events: Array<{ atMs: number; type: string; detail: unknown }> = [];
const errors: string[] = [];
let lastFrameId = -1;
let outOfOrder = 0;

// The harness picks strategies by name (?scheduler=lola): register every shipped one.
registerAllStrategies();
const call = new MultipathCall({
  signallingUrl: q.get('sig') ?? 'ws://127.0.0.1:8080',
  room: q.get('room') ?? 'call',
  peerId: role,
  paths: Number(q.get('paths') ?? 2),
  codec: (q.get('codec') ?? 'h264') as CodecName,
  scheduler: (q.get('scheduler') ?? 'converge') as SchedulerName,
  singlePath: q.has('singlePath') ? Number(q.get('singlePath')) : undefined,
  fec: (q.get('fec') ?? 'path') as FecPolicyName,
  qoeFeedback: q.get('qoeFeedback') !== '0',
  // The emulator's relays make the paths differ: every path signals every candidate.
  candidates: 'all',
  keyframeIntervalMs: q.has('keyframeIntervalMs') ? Number(q.get('keyframeIntervalMs')) : undefined,
  maxBitrateBps: q.has('maxBitrate') ? Number(q.get('maxBitrate')) : undefined,
  connectTimeoutMs: q.has('connectTimeoutMs') ? Number(q.get('connectTimeoutMs')) : undefined,
  mtuBytes: q.has('mtuBytes') ? Number(q.get('mtuBytes')) : undefined,
  playout: q.has('playoutMaxMs') ? { maxDelayMs: Number(q.get('playoutMaxMs')) } : undefined,
  // Overlay (issue 16): the harness's coturn relays, as JSON RTCIceServer[].
  relays: q.has('relays') ? (JSON.parse(q.get('relays') as string) as RTCIceServer[]) : undefined,
  relayHandover: q.get('relayHandover') === 'hold' ? 'hold' : undefined,
  relaySelection: q.has('relaySelection') ? JSON.parse(q.get('relaySelection') as string) : undefined,
  faultHandling: q.has('faultHandling') ? JSON.parse(q.get('faultHandling') as string) : undefined,
  clock,
});

call.on(CallEvent.RemoteFrame, (info) => {
  const now = clock.nowUs();
  if (info.frameId <= lastFrameId) outOfOrder++;
  lastFrameId = info.frameId;
  if (frameLog.length < 100_000) frameLog.push({ frameId: info.frameId, latencyMs: latencySampleMs(info.captureUs, now), atMs: now / 1000 });
});
call.on(CallEvent.Error, (e) => {
  if (errors.length < 200) errors.push(String(e.message ?? e));
});
for (const ev of [
  CallEvent.PathState,
  CallEvent.PathEvent,
  CallEvent.SamePair,
  CallEvent.Connected,
  CallEvent.ParticipantJoined,
  CallEvent.ParticipantLeft,
  CallEvent.RemoteTrack,
  CallEvent.RouteSwitch,
] as const) {
  call.on(ev, ((...args: unknown[]) => {
    // A MediaStreamTrack does not cross page.evaluate: record its kind.
    const detail = ev === CallEvent.RemoteTrack ? [(args[0] as MediaStreamTrack).kind, args[1]] : args;
    if (events.length < 1000) events.push({ atMs: clock.nowUs() / 1000, type: ev, detail });
  }) as never);
}

// App data check (the e2e call test): the sender sends APP_DATA_COUNT reliable messages as soon as
// the remote peer is in the call (they wait for a path); the receiver records every Data event.
const APP_DATA_COUNT = 50;
call.on(CallEvent.Connected, () => {
  if (role !== 'sender') return;
  try {
    for (let i = 0; i < APP_DATA_COUNT; i++) call.send(i % 2 === 0 ? `msg ${i}` : new Uint8Array([i, 255 - i]));
  } catch (e) {
    errors.push(`send: ${String((e as Error)?.message ?? e)}`);
  }
});
call.on(CallEvent.Data, (data, info) => {
  const detail = [typeof data === 'string' ? data : `bytes ${Array.from(data).join(',')}`, info];
  if (events.length < 1000) events.push({ atMs: clock.nowUs() / 1000, type: CallEvent.Data, detail });
});

(window as unknown as { __peer: unknown }).__peer = {
  role,
  /** getStats() entries (a Map does not cross page.evaluate; CallStatsReport.from rebuilds one). */
  stats: () => call.getStats().toJSON(),
  camera: () => call.camera,
  /** Frames decoded since the last call (the harness drains it every second). */
  drainFrames: () => frameLog.splice(0, frameLog.length),
  outOfOrder: () => outOfOrder,
  events: () => events.slice(),
  errors: () => errors.slice(),
  stopSending: () => call.stopSending(),
  /** What this browser can do (MultipathCall.capabilities()). */
  capabilities: () => MultipathCall.capabilities(),
  close: () => call.close(),
  /** Overlay: move a path onto another relay (MultipathCall.switchRelay); returns the sessions switched. */
  switchRelay: (pathId: number, relay: number) => call.switchRelay(pathId, relay),
  /** Overlay: the relay each path runs through (MultipathCall.relayIndex). */
  relays: () => Array.from({ length: Number(q.get('paths') ?? 2) }, (_, p) => call.relayIndex(p)),
  /** Overlay: the relay selector's view of each path (MultipathCall.relaySelectionState). */
  relayState: () => Array.from({ length: Number(q.get('paths') ?? 2) }, (_, p) => call.relaySelectionState(p)),
  /** Overlay: each path's selected local candidate (type relay = through a TURN server) and its ICE restarts. */
  pairs: () => {
    const r = call.getStats();
    return r.ofType('path').map((p) => {
      const pair = r.get(p.candidatePairId);
      const local = pair?.type === 'candidate-pair' && pair.localCandidateId ? r.get(pair.localCandidateId) : undefined;
      const lc = local?.type === 'local-candidate' ? local : undefined;
      return { id: p.pathId, participantId: p.participantId, type: lc?.candidateType, local: lc ? `${lc.address}:${lc.port}` : undefined, iceRestarts: p.iceRestarts };
    });
  },
};

async function main(): Promise<void> {
  await call.connect();
  if (role === 'sender') {
    const w = Number(q.get('width') ?? 640);
    const h = Number(q.get('height') ?? 480);
    const fps = Number(q.get('fps') ?? 30);
    const stream = await navigator.mediaDevices.getUserMedia({ video: { width: w, height: h, frameRate: fps } });
    await call.sendTrack(stream.getVideoTracks()[0]);
    log('sending');
  } else {
    const video = document.getElementById('remote') as HTMLVideoElement;
    // As the README's example does: the remote video arrives with its first decoded frame.
    call.on(CallEvent.RemoteTrack, (track) => {
      video.srcObject = new MediaStream([track]);
    });
    log('receiving');
  }
  (window as unknown as { __ready: boolean }).__ready = true;
}

main().catch((e) => {
  errors.push(`start: ${String((e as Error)?.message ?? e)}`);
  log(`error: ${String(e)}`);
  (window as unknown as { __ready: boolean }).__ready = true;
});
