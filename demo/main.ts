/**
 * Demo: a conferencing page. Every tab (or machine) that joins the room sees
 * every other one, each over its own multipath session: one tile per remote
 * participant with its video and live per-path plots (what we send it: rate,
 * RTT, loss, media share; what we receive from it: freezes, resolution, fps),
 * a toggle per path that disables and re-enables it live, and the scheduler
 * and FEC chosen before joining. Each participant sends its camera and
 * microphone; the remote audio plays through one AudioContext, with a level
 * meter per tile (RMS of what goes to the speaker, an AnalyserNode on the
 * remote audio track). Mute buttons (`setMuted`) and camera / microphone
 * pickers (`replaceTrack`) act live.
 *
 * URL parameters: room, paths, codec, scheduler, fec (preset the form),
 * autojoin=1 (join at once), sig=ws://host:port (signalling server; default
 * port 8787 on this host), audio=0 (send no microphone).
 *
 * For scripts: `window.__demo` is the call, `window.__audioLevels()` the
 * level (RMS, full scale 1) of each remote participant's audio, the largest
 * of its last second.
 */
import { CallEvent, MultipathCall } from '../src/index.js';
import type { CallStatsReport, CodecName, FecPolicyName, SchedulerName } from '../src/index.js';
import { registerAllStrategies } from '../src/strategies.js';
import { PATH_COLOURS, type RollingPlot, rollingPlot } from './plots.js';

// The form offers every shipped scheduler and FEC policy by name.
registerAllStrategies();

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const setStatus = (s: string) => ($('status').textContent = s);

const query = new URLSearchParams(location.search);
for (const k of ['room', 'paths', 'codec', 'scheduler', 'fec']) {
  const v = query.get(k);
  if (v !== null) $<HTMLInputElement>(k).value = v;
}

$('join').addEventListener('submit', (ev) => {
  ev.preventDefault();
  void start().catch((e) => setStatus(`error: ${String(e)}`));
});

/** One remote participant's tile. */
interface Tile {
  el: HTMLElement;
  video: HTMLVideoElement;
  live: HTMLElement;
  plots: { rate: RollingPlot; rtt: RollingPlot; loss: RollingPlot; share: RollingPlot; freezes: RollingPlot; video: RollingPlot };
  lastDecoded: number;
  lastAtUs: number;
  /** The remote audio's meter: an AnalyserNode on its track, and its recent RMS readings. */
  audio?: { analyser: AnalyserNode; samples: Float32Array<ArrayBuffer>; recent: number[] };
  meter: HTMLElement;
}

const tiles = new Map<string, Tile>();
let started = false;
let numPaths = 2;
/** Signalling trouble to show beside the status ('' when joined). */
let signalling = '';
/** What the call goes on without (e.g. the microphone), shown after the status. */
let notice = '';

async function start(): Promise<void> {
  if (started) return;
  started = true;
  for (const el of $('join').querySelectorAll('input, select, button')) (el as HTMLInputElement).disabled = true;
  const paths = Number($<HTMLInputElement>('paths').value);
  numPaths = paths;
  const call = new MultipathCall({
    signallingUrl: query.get('sig') ?? `ws://${location.hostname}:8787`,
    room: $<HTMLInputElement>('room').value,
    paths,
    codec: $<HTMLSelectElement>('codec').value as CodecName,
    scheduler: $<HTMLSelectElement>('scheduler').value as SchedulerName,
    fec: $<HTMLSelectElement>('fec').value as FecPolicyName,
    // Wall-clock µs: tabs of one machine share it, so capture -> render latency is right there
    // (across machines it is as good as their clock sync).
    clock: { nowUs: () => Math.round((performance.timeOrigin + performance.now()) * 1000) },
  });
  (window as unknown as { __demo: MultipathCall }).__demo = call;
  call.on(CallEvent.ParticipantJoined, (id) => tileOf(id, paths));
  call.on(CallEvent.ParticipantLeft, (id) => {
    tiles.get(id)?.el.remove();
    tiles.delete(id);
  });
  call.on(CallEvent.RemoteTrack, (track, { participantId }) => {
    const tile = tileOf(participantId, paths);
    if (track.kind === 'audio') playAudio(tile, track);
    else tile.video.srcObject = new MediaStream([track]);
  });
  call.on(CallEvent.SamePair, (ids, participantId) => console.warn(`paths ${ids.join(', ')} to ${participantId} use the same network route`));
  call.on(CallEvent.Error, (e) => console.warn(e));
  call.on(CallEvent.SignallingState, (state, { attempt }) => {
    signalling = state === 'reconnecting' ? `signalling lost, reconnecting (attempt ${attempt})` : state === 'disconnected' ? 'signalling lost' : '';
  });
  makeToggles(call, paths);
  setStatus('joining…');
  await call.connect();
  const withAudio = query.get('audio') !== '0';
  const cam = await navigator.mediaDevices.getUserMedia({ video: CAMERA, audio: withAudio });
  $<HTMLVideoElement>('local').srcObject = new MediaStream(cam.getVideoTracks());
  await call.sendTrack(cam.getVideoTracks()[0]);
  // A browser that cannot send the microphone (Firefox: capabilities().audio.send) holds a video-only call.
  let mic: MediaStreamTrack | undefined = cam.getAudioTracks()[0];
  if (mic) {
    await call.sendTrack(mic).catch((e: unknown) => {
      notice = `microphone not sent: ${e instanceof Error ? e.message : String(e)}`;
      mic?.stop();
      mic = undefined;
    });
  }
  makeMuteButtons(call);
  void devicePicker(call, 'videoinput', cam.getVideoTracks()[0]);
  if (mic) void devicePicker(call, 'audioinput', mic);
  const t0 = performance.now();
  setInterval(() => render(call, (performance.now() - t0) / 1000), 1000);
  setInterval(measureLevels, 250);
  render(call, 0);
}

/** One AudioContext plays every remote participant's audio (created on the first one; resumed on a click if the autoplay policy suspended it). */
let audioCtx: AudioContext | undefined;

function playAudio(tile: Tile, track: MediaStreamTrack): void {
  if (!audioCtx) {
    audioCtx = new AudioContext();
    document.addEventListener('click', () => void audioCtx?.resume());
  }
  const source = audioCtx.createMediaStreamSource(new MediaStream([track]));
  const analyser = audioCtx.createAnalyser();
  // The longest window (32768 samples, ~0.7 s) read every 250 ms sees every sample: a short beep is not missed.
  analyser.fftSize = 32768;
  source.connect(analyser).connect(audioCtx.destination);
  tile.audio = { analyser, samples: new Float32Array(analyser.fftSize), recent: [] };
}

/** RMS of each remote audio's last ~0.7 s; a tile's level is the largest of its last four readings (1 s). */
function measureLevels(): void {
  for (const t of tiles.values()) {
    const a = t.audio;
    if (!a) continue;
    a.analyser.getFloatTimeDomainData(a.samples);
    let sum = 0;
    for (const x of a.samples) sum += x * x;
    a.recent.push(Math.sqrt(sum / a.samples.length));
    if (a.recent.length > 4) a.recent.shift();
    const level = Math.max(...a.recent);
    const db = level > 0 ? 20 * Math.log10(level) : -Infinity;
    t.meter.style.width = `${Math.max(0, Math.min(100, ((db + 60) / 60) * 100))}%`;
    t.meter.title = `audio ${Number.isFinite(db) ? db.toFixed(0) : '-inf'} dBFS`;
  }
}

(window as unknown as { __audioLevels: () => Record<string, number> }).__audioLevels = () =>
  Object.fromEntries([...tiles].filter(([, t]) => t.audio && t.audio.recent.length > 0).map(([id, t]) => [id, Math.max(...t.audio!.recent)]));

/** Mute buttons for the microphone and the camera (`setMuted`: silence / black frames go on, nothing counts as loss). */
function makeMuteButtons(call: MultipathCall): void {
  for (const kind of ['audio', 'video'] as const) {
    const b = $<HTMLButtonElement>(`mute-${kind}`);
    const label = () => {
      const muted = call.isMuted(kind);
      b.textContent = `${muted ? 'unmute' : 'mute'} ${kind === 'audio' ? 'microphone' : 'camera'}`;
      b.classList.toggle('muted', muted);
    };
    b.disabled = false;
    b.addEventListener('click', () => {
      call.setMuted(kind, !call.isMuted(kind));
      label();
    });
    label();
  }
}

const CAMERA: MediaTrackConstraints = { width: 640, height: 480, frameRate: 30 };

/**
 * Camera or microphone picker (`enumerateDevices`): switching calls
 * `replaceTrack` (the same stream goes on: a key frame on a camera switch,
 * the next Opus frame from the new microphone); mute settings carry over.
 */
async function devicePicker(call: MultipathCall, kind: 'videoinput' | 'audioinput', first: MediaStreamTrack): Promise<void> {
  const video = kind === 'videoinput';
  const select = $<HTMLSelectElement>(video ? 'camera' : 'microphone');
  const devices = (await navigator.mediaDevices.enumerateDevices()).filter((d) => d.kind === kind);
  for (const [i, d] of devices.entries()) select.append(new Option(d.label || `${video ? 'camera' : 'microphone'} ${i + 1}`, d.deviceId));
  select.value = first.getSettings().deviceId ?? '';
  select.disabled = devices.length === 0;
  let current = first;
  select.addEventListener('change', () => {
    void (async () => {
      const constraints = video ? { video: { ...CAMERA, deviceId: { exact: select.value } } } : { audio: { deviceId: { exact: select.value } } };
      const stream = await navigator.mediaDevices.getUserMedia(constraints);
      const track = video ? stream.getVideoTracks()[0] : stream.getAudioTracks()[0];
      await call.replaceTrack(track);
      current.stop();
      current = track;
      if (video) $<HTMLVideoElement>('local').srcObject = stream;
    })().catch((e) => setStatus(`${video ? 'camera' : 'microphone'} switch failed: ${String(e)}`));
  });
}

/** One checkbox per path: unchecked = the path carries nothing of ours to anyone (`setPathEnabled`). */
function makeToggles(call: MultipathCall, paths: number): void {
  const bar = $('toggles');
  bar.append('paths: ');
  for (let id = 0; id < paths; id++) {
    const label = document.createElement('label');
    label.style.color = PATH_COLOURS[id];
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = true;
    box.id = `path-toggle-${id}`;
    box.addEventListener('change', () => call.setPathEnabled(id, box.checked));
    label.append(box, `path ${id}`);
    bar.append(label);
  }
}

function tileOf(id: string, paths: number): Tile {
  const have = tiles.get(id);
  if (have) return have;
  const el = document.createElement('div');
  el.className = 'tile remote';
  el.dataset.participant = id;
  const media = document.createElement('div');
  media.className = 'media';
  const name = document.createElement('div');
  name.className = 'name';
  name.textContent = id;
  const video = document.createElement('video');
  video.autoplay = true;
  video.muted = true;
  video.playsInline = true;
  const live = document.createElement('div');
  live.className = 'live';
  const level = document.createElement('div');
  level.className = 'level';
  const meter = document.createElement('div');
  level.append(meter);
  media.append(name, video, level, live);
  const box = document.createElement('div');
  box.className = 'plots';
  el.append(media, box);
  $('tiles').append(el);
  const names = Array.from({ length: paths }, (_, i) => `path ${i}`);
  const tile: Tile = {
    el,
    video,
    live,
    plots: {
      rate: rollingPlot(box, 'send rate (Mbps)', names),
      rtt: rollingPlot(box, 'RTT (ms)', names),
      loss: rollingPlot(box, 'loss (%)', names),
      share: rollingPlot(box, 'media share (%)', names),
      freezes: rollingPlot(box, 'received: freezes, fps', ['freezes', 'fps'], { colours: ['#d62728', '#2ca02c'] }),
      video: rollingPlot(box, 'received resolution (px)', ['height', 'width'], { colours: ['#9467bd', '#17becf'] }),
    },
    lastDecoded: 0,
    lastAtUs: 0,
    meter,
  };
  tiles.set(id, tile);
  return tile;
}

function render(call: MultipathCall, tS: number): void {
  const s = call.getStats();
  renderStatus(call, s);
  const remotes = s.ofType('call')[0]?.remoteParticipantIds ?? [];
  for (const id of remotes) renderTile(tileOf(id, numPaths), id, s, tS);
  const e = s.ofType('outbound-rtp').find((x) => x.kind === 'video');
  $('local-live').textContent = e
    ? `${call.participantId ?? ''}\nsending ${e.frameWidth}x${e.frameHeight} @ ${e.framesPerSecond} fps, ${(e.encoderBitrate / 1e6).toFixed(2)} Mbps (lowest target of ${remotes.length} session(s))`
    : (call.participantId ?? '');
  const muted = [call.isMuted('audio') ? 'microphone muted' : '', call.isMuted('video') ? 'camera muted' : ''].filter(Boolean).join(', ');
  if (muted) $('local-live').textContent += `\n${muted}`;
}

/** "waiting" only while nobody is connected; the tiles say the rest. */
function renderStatus(call: MultipathCall, s: CallStatsReport): void {
  const me = s.ofType('call')[0]?.participantId;
  const room = signalling ? `${$<HTMLInputElement>('room').value} (${signalling}; media goes on)` : $<HTMLInputElement>('room').value;
  const ps = call.participants;
  if (ps.length === 0) {
    setStatus(`in room ${room} as ${me ?? '?'}: waiting for others to join${notice ? `; ${notice}` : ''}`);
    return;
  }
  const connected = ps.filter((p) => p.connected).length;
  const connecting = ps.length - connected;
  setStatus(`in room ${room} as ${me ?? '?'} with ${ps.length} other${ps.length > 1 ? 's' : ''}${connecting > 0 ? ` (${connecting} connecting)` : ''}${notice ? `; ${notice}` : ''}`);
}

function renderTile(tile: Tile, participantId: string, s: CallStatsReport, tS: number): void {
  const mine = s.ofParticipant(participantId);
  const paths = s.ofType('path').filter((x) => x.participantId === participantId);
  const out = mine.find((x) => x.type === 'outbound-rtp' && x.kind === 'video');
  const r = mine.find((x) => x.type === 'inbound-rtp' && x.kind === 'video');
  // Send-side path values exist once we send to it.
  const val = (f: (x: (typeof paths)[number]) => number | undefined) => paths.map((x) => (out ? (f(x) ?? null) : null));
  tile.plots.rate.push(
    tS,
    val((x) => x.sendBitrate / 1e6),
  );
  tile.plots.rtt.push(
    tS,
    val((x) => (x.roundTripTime === undefined ? undefined : x.roundTripTime * 1000)),
  );
  tile.plots.loss.push(
    tS,
    val((x) => x.fractionLost * 100),
  );
  tile.plots.share.push(
    tS,
    val((x) => x.mediaShare * 100),
  );
  const inVideo = r?.type === 'inbound-rtp' && r.kind === 'video' ? r : undefined;
  const decoded = inVideo?.framesDecoded ?? 0;
  const nowUs = s.ofType('call')[0].timestamp * 1000;
  const dtS = tile.lastAtUs > 0 ? (nowUs - tile.lastAtUs) / 1e6 : 0;
  const fps = dtS > 0 ? (decoded - tile.lastDecoded) / dtS : 0;
  tile.lastDecoded = decoded;
  tile.lastAtUs = nowUs;
  tile.plots.freezes.push(tS, [inVideo?.freezeCount ?? 0, fps]);
  tile.plots.video.push(tS, [tile.video.videoHeight || null, tile.video.videoWidth || null]);
  const pathLine = paths.map((x) => `path ${x.pathId}: ${x.enabled ? x.state : 'disabled'}${out ? ` ${(x.sendBitrate / 1e6).toFixed(2)} Mbps` : ''}`).join('  ');
  const target = out?.type === 'outbound-rtp' && out.kind === 'video' ? out.targetBitrate : 0;
  const au = mine.find((x) => x.type === 'inbound-rtp' && x.kind === 'audio');
  const a = au?.type === 'inbound-rtp' && au.kind === 'audio' && au.packetsReceived > 0 ? au : undefined;
  const audioLine = a
    ? `\naudio: mouth-to-ear p95 ${(a.mouthToEarP95 * 1000).toFixed(0)} ms, concealed ${((100 * a.concealedSamples) / Math.max(1, a.totalSamplesReceived)).toFixed(1)} %, A/V offset ${(a.avOffset * 1000).toFixed(0)} ms`
    : '';
  tile.live.textContent =
    `${tile.video.videoWidth}x${tile.video.videoHeight} @ ${fps.toFixed(0)} fps, ${decoded} frames, freezes ${inVideo?.freezeCount ?? 0} (${((inVideo?.totalFreezesDuration ?? 0) * 1000).toFixed(0)} ms)\n` +
    `latency p50 ${((inVideo?.endToEndLatencyP50 ?? 0) * 1000).toFixed(0)} ms p95 ${((inVideo?.endToEndLatencyP95 ?? 0) * 1000).toFixed(0)} ms, target to it ${(target / 1e6).toFixed(2)} Mbps${audioLine}\n${pathLine}`;
}

// ?autojoin=1 joins at once (used by the tests).
if (query.get('autojoin') === '1') void start().catch((e) => setStatus(`error: ${String(e)}`));
