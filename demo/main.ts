/** Demo: two tabs (or two machines) join a room and see each other over all paths. */
import { CallEvent, MultipathCall } from '../src/index.js';
import type { CodecName, SchedulerName } from '../src/index.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const status = (s: string) => ($('status').textContent = s);

const query = new URLSearchParams(location.search);
if (query.has('room')) $<HTMLInputElement>('room').value = query.get('room') ?? 'demo';

$('join').addEventListener('submit', (ev) => {
  ev.preventDefault();
  void start().catch((e) => status(`error: ${String(e)}`));
});
// ?autojoin=1 joins at once (used by the smoke test).
if (query.get('autojoin') === '1') void start().catch((e) => status(`error: ${String(e)}`));

async function start(): Promise<void> {
  const call = new MultipathCall({
    // ?sig=ws://host:port overrides the default signalling server (port 8787 on this host).
    signallingUrl: query.get('sig') ?? `ws://${location.hostname}:8787`,
    room: $<HTMLInputElement>('room').value,
    paths: Number($<HTMLInputElement>('paths').value),
    codec: $<HTMLSelectElement>('codec').value as CodecName,
    scheduler: $<HTMLSelectElement>('scheduler').value as SchedulerName,
  });
  call.on(CallEvent.Connected, ({ remotePeerId }) => status(`connected to ${remotePeerId}`));
  call.on(CallEvent.PeerLeft, () => status('peer left'));
  call.on(CallEvent.SamePair, (ids) => status(`note: paths ${ids.join(', ')} use the same network pair`));
  call.on(CallEvent.Error, (e) => console.warn(e));
  (window as unknown as { __demo: MultipathCall }).__demo = call;
  if (call.remoteTrack) $<HTMLVideoElement>('remote').srcObject = new MediaStream([call.remoteTrack]);
  await call.connect();
  status('waiting for the other peer');
  const cam = await navigator.mediaDevices.getUserMedia({ video: { width: 640, height: 480, frameRate: 30 } });
  $<HTMLVideoElement>('local').srcObject = cam;
  await call.sendTrack(cam.getVideoTracks()[0]);
  setInterval(() => render(call), 1000);
}

function render(call: MultipathCall): void {
  const s = call.getStats();
  const rx = new Map(s.receiver.paths.map((p) => [p.id, p]));
  const rows = (s.sender?.paths ?? []).map((p) => {
    const info = s.paths.find((q) => q.id === p.id);
    const pair = info?.selectedPair ? `${info.selectedPair.local.address} → ${info.selectedPair.remote.address}` : '';
    return `<tr><td>${p.id}</td><td>${info?.state ?? ''}</td><td>${p.up ? (p.enabled ? 'up' : 'disabled') : 'down'}</td><td>${(p.sendRateBps / 1e6).toFixed(2)}</td><td>${(p.rateBps / 1e6).toFixed(2)}</td><td>${p.rttMs.toFixed(0)}</td><td>${p.lossPct.toFixed(1)}</td><td>${p.sharePct.toFixed(0)}%</td><td>${rx.get(p.id)?.packetsReceived ?? 0}</td><td style="text-align:left">${pair}</td></tr>`;
  });
  $('paths-table').innerHTML =
    '<tr><th>path</th><th>ICE</th><th>state</th><th>sent Mbps</th><th>estimate Mbps</th><th>RTT ms</th><th>loss %</th><th>media share</th><th>pkts in</th><th>pair</th></tr>' + rows.join('');
  const r = s.receiver;
  $('qoe').textContent =
    `received: ${r.fps.toFixed(1)} fps, freezes ${r.freezeCount} (${r.freezeTotalMs.toFixed(0)} ms), latency p50 ${r.latencyMs.p50.toFixed(0)} ms p95 ${r.latencyMs.p95.toFixed(0)} ms, keyframe requests ${r.keyframeRequestsSent}
sending: target ${((s.sender?.targetBitrateBps ?? 0) / 1e6).toFixed(2)} Mbps, ${s.encoder?.framesEncoded ?? 0} frames encoded`;
}
