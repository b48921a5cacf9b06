/**
 * The extension page that hosts a call (call.html). Query string for scripted
 * runs: `?room=R&sig=ws://host:port&paths=N&autojoin=1`. Answers the popup's
 * {@link STATS_REQUEST} over chrome.runtime messaging.
 */
import { type CallSnapshot, STATS_REQUEST } from './protocol.js';
import type { ExtensionCall } from './sdk-call.js';
import { joinCall } from './sdk-call.js';

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const query = new URLSearchParams(location.search);
for (const key of ['room', 'sig', 'paths']) {
  const v = query.get(key);
  if (v !== null) $<HTMLInputElement>(key).value = v;
}

let call: ExtensionCall | undefined;
let camera: MediaStream | undefined;
let phase = 'idle';
let lastError: string | undefined;
let room = '';

/** 'error' records the message (CallEvent.Error is not fatal) and keeps the phase unless a catch set it. */
function setPhase(p: string, detail?: string): void {
  if (p === 'error') lastError = detail;
  else phase = p;
  $('status').textContent = detail ? `${p}: ${detail}` : p;
}

async function start(): Promise<void> {
  if (call) return;
  room = $<HTMLInputElement>('room').value.trim();
  const paths = Number($<HTMLInputElement>('paths').value);
  $<HTMLButtonElement>('join-btn').disabled = true;
  setPhase('connecting');
  try {
    call = await joinCall({
      signallingUrl: $<HTMLInputElement>('sig').value.trim(),
      room,
      paths: Number.isInteger(paths) && paths >= 1 ? paths : 2,
      onRemoteTrack: (track) => ($<HTMLVideoElement>('remote').srcObject = new MediaStream([track])),
      onPhase: setPhase,
    });
    if (phase === 'connecting') setPhase('waiting', 'for the other peer');
    $<HTMLButtonElement>('leave-btn').disabled = false;
    camera = await navigator.mediaDevices.getUserMedia({ video: { width: 640, height: 480, frameRate: 30 } });
    $<HTMLVideoElement>('local').srcObject = camera;
    await call.send(camera.getVideoTracks()[0]);
  } catch (e) {
    // Fatal (server unreachable, camera refused): leave the call, keep the reason on screen.
    phase = 'error';
    stop();
    setPhase('error', e instanceof Error ? e.message : String(e));
  }
}

function stop(): void {
  call?.close();
  call = undefined;
  for (const t of camera?.getTracks() ?? []) t.stop();
  camera = undefined;
  $<HTMLVideoElement>('local').srcObject = null;
  $<HTMLVideoElement>('remote').srcObject = null;
  $<HTMLButtonElement>('join-btn').disabled = false;
  $<HTMLButtonElement>('leave-btn').disabled = true;
  if (phase !== 'error') setPhase('closed');
}

/** The popup's view of this page (also read by tests as `window.__mprtcExt.snapshot()`). */
function snapshot(): CallSnapshot {
  const empty = { timestamp: Date.now(), paths: [], fps: 0, framesDecoded: 0, freezeCount: 0, freezeTotalMs: 0, framesEncoded: 0 };
  return { ...(call ? call.snapshot() : empty), phase, room, ...(lastError ? { error: lastError } : {}) };
}

chrome.runtime.onMessage.addListener((msg, _sender, sendResponse) => {
  if ((msg as { type?: unknown } | undefined)?.type !== STATS_REQUEST) return false;
  sendResponse(snapshot());
  return false;
});

(window as unknown as { __mprtcExt: { snapshot(): CallSnapshot } }).__mprtcExt = { snapshot };

$('join').addEventListener('submit', (ev) => {
  ev.preventDefault();
  void start();
});
$('leave-btn').addEventListener('click', stop);
window.addEventListener('pagehide', () => call?.close());
if (query.get('autojoin') === '1') void start();
