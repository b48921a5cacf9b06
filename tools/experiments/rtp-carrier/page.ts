/**
 * Page of the RTP-carrier experiment (README.md here): two RTCPeerConnections
 * in one page, the sender's video track from a canvas, our payloads written
 * into its encoded frames by `worker.ts`; optionally both connections cross a
 * `tools/emulator` path relay (ICE candidates rewritten to the relay's
 * sockets), and a second pair carries an unordered, `maxRetransmits: 0`
 * RTCDataChannel over its own relay with the same link, for comparison.
 * The Node driver (`run.ts`) calls `window.runCase(cfg)`.
 */
import type { TransformOptions } from './worker.js';

interface RelayPorts {
  portA: number;
  portB: number;
}

export interface CaseConfig {
  codec: 'VP8' | 'H264';
  mode: 'replace' | 'append';
  prefix: 'delta' | 'key';
  sizes?: number[];
  rateKbps?: number;
  durationS: number;
  fps: number;
  /** The RTP carrier's path relay (none: direct loopback). */
  relay?: RelayPorts;
  /** Feed the track from a MediaStreamTrackGenerator at `fps` instead of canvas.captureStream. */
  generator?: boolean;
  /** Negotiate without RTX and without NACK/PLI feedback (Chromium's own repair off). */
  noNack?: boolean;
  /** Negotiate without PLI/FIR feedback (no key frame requests; NACK/RTX kept). */
  noPli?: boolean;
  /** Cap the offered rate at this share of GCC's availableOutgoingBitrate (updated each second). */
  followEstimate?: number;
  /** Datachannel comparison over its own relay. */
  dc?: { relay: RelayPorts; rateKbps: number; maxBufferedBytes: number; messageBytes: number };
}

declare global {
  interface Window {
    runCase: (cfg: CaseConfig) => Promise<unknown>;
    RTCRtpScriptTransform: new (worker: Worker, options: unknown) => unknown;
  }
}

/** Point a candidate at the relay socket facing the peer that will receive it; null drops it. */
function viaRelay(c: RTCIceCandidate, toPort: number): RTCIceCandidateInit | null {
  const parts = c.candidate.split(/\s+/);
  if (parts.length < 8 || parts[2].toLowerCase() !== 'udp' || parts[7] !== 'host' || parts[4].includes(':')) return null;
  parts[4] = '127.0.0.1';
  parts[5] = String(toPort);
  return { candidate: parts.join(' '), sdpMid: c.sdpMid, sdpMLineIndex: c.sdpMLineIndex };
}

function wire(a: RTCPeerConnection, b: RTCPeerConnection, relay?: RelayPorts): void {
  a.onicecandidate = (e) => {
    if (!e.candidate) return;
    const c = relay ? viaRelay(e.candidate, relay.portB) : e.candidate.toJSON();
    if (c) b.addIceCandidate(c).catch(() => undefined);
  };
  b.onicecandidate = (e) => {
    if (!e.candidate) return;
    const c = relay ? viaRelay(e.candidate, relay.portA) : e.candidate.toJSON();
    if (c) a.addIceCandidate(c).catch(() => undefined);
  };
}

/**
 * Remove feedback lines from an SDP. `nack`: NACK and PLI (Chromium then neither asks for nor sends
 * retransmissions); `pli`: PLI and FIR only (no key frame requests, so no key frames and no pacer
 * key-frame flushes, NACK/RTX kept).
 */
function withoutFeedback(sdp: string, what: 'nack' | 'pli'): string {
  const drop = what === 'nack' ? /^a=rtcp-fb:\d+ nack( pli)?$/ : /^a=rtcp-fb:\d+ (nack pli|ccm fir)$/;
  return sdp
    .split('\r\n')
    .filter((l) => !drop.test(l))
    .join('\r\n');
}

async function negotiate(a: RTCPeerConnection, b: RTCPeerConnection, strip?: 'nack' | 'pli'): Promise<void> {
  const munge = (d: RTCSessionDescriptionInit): RTCSessionDescriptionInit => (strip && d.sdp ? { type: d.type, sdp: withoutFeedback(d.sdp, strip) } : d);
  const offer = munge(await a.createOffer());
  await a.setLocalDescription(offer);
  await b.setRemoteDescription(offer);
  const answer = munge(await b.createAnswer());
  await b.setLocalDescription(answer);
  await a.setRemoteDescription(answer);
}

function connected(pc: RTCPeerConnection, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`ICE not connected after ${timeoutMs} ms (${pc.iceConnectionState})`)), timeoutMs);
    const check = (): void => {
      if (pc.iceConnectionState === 'connected' || pc.iceConnectionState === 'completed') {
        clearTimeout(t);
        resolve();
      }
    };
    pc.addEventListener('iceconnectionstatechange', check);
    check();
  });
}

const OUT_FIELDS = [
  'bytesSent',
  'packetsSent',
  'retransmittedPacketsSent',
  'retransmittedBytesSent',
  'nackCount',
  'pliCount',
  'firCount',
  'framesEncoded',
  'keyFramesEncoded',
  'framesSent',
  'targetBitrate',
  'qualityLimitationReason',
  'frameWidth',
  'totalPacketSendDelay',
  'headerBytesSent',
];
const IN_FIELDS = [
  'packetsReceived',
  'packetsLost',
  'bytesReceived',
  'nackCount',
  'pliCount',
  'firCount',
  'framesReceived',
  'framesDecoded',
  'framesDropped',
  'keyFramesDecoded',
  'retransmittedPacketsReceived',
  'freezeCount',
  'totalFreezesDuration',
];
const PAIR_FIELDS = [
  'state',
  'requestsSent',
  'responsesReceived',
  'consentRequestsSent',
  'availableOutgoingBitrate',
  'currentRoundTripTime',
  'bytesSent',
  'bytesReceived',
  'packetsSent',
  'packetsReceived',
];

function pick(r: Record<string, unknown>, fields: string[]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const f of fields) if (r[f] !== undefined) o[f] = r[f];
  return o;
}

async function snapshot(pc: RTCPeerConnection): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { ice: pc.iceConnectionState };
  const stats = await pc.getStats();
  let pairId: string | undefined;
  stats.forEach((r) => {
    if (r.type === 'transport' && r.selectedCandidatePairId) pairId = r.selectedCandidatePairId;
  });
  stats.forEach((r) => {
    if (r.type === 'outbound-rtp' && r.kind === 'video') out.out = pick(r, OUT_FIELDS);
    if (r.type === 'inbound-rtp' && r.kind === 'video') out.in = pick(r, IN_FIELDS);
    if (r.type === 'remote-inbound-rtp' && r.kind === 'video') out.remoteIn = pick(r, ['packetsLost', 'roundTripTime', 'fractionLost']);
    if (r.type === 'candidate-pair' && r.id === pairId) out.pair = pick(r, PAIR_FIELDS);
    if (r.type === 'data-channel') out.dc = pick(r, ['messagesSent', 'bytesSent', 'messagesReceived', 'bytesReceived']);
  });
  return out;
}

function pickCodec(kind: 'VP8' | 'H264'): RTCRtpCodec[] {
  const caps = RTCRtpSender.getCapabilities('video');
  if (!caps) throw new Error('no video capabilities');
  const main = caps.codecs.filter((c) => c.mimeType === `video/${kind}`);
  const chosen = kind === 'H264' ? main.filter((c) => /packetization-mode=1/.test(c.sdpFmtpLine ?? '') && /profile-level-id=42e01f/.test(c.sdpFmtpLine ?? '')) : main;
  if (chosen.length === 0) throw new Error(`codec ${kind} not available: ${caps.codecs.map((c) => c.mimeType).join(',')}`);
  return [chosen[0], ...caps.codecs.filter((c) => c.mimeType === 'video/rtx')];
}

/** Datachannel comparison: send `messageBytes` messages at `rateKbps` while bufferedAmount < maxBufferedBytes. */
async function startDc(cfg: NonNullable<CaseConfig['dc']>, t0: number) {
  const a = new RTCPeerConnection();
  const b = new RTCPeerConnection();
  wire(a, b, cfg.relay);
  const ch = a.createDataChannel('media', { ordered: false, maxRetransmits: 0 });
  const got = new Promise<RTCDataChannel>((res) => {
    b.ondatachannel = (e) => res(e.channel);
  });
  await negotiate(a, b);
  await connected(a, 15_000);
  const rx = await got;
  const sec = (): number => Math.floor((performance.now() - t0) / 1000);
  const sent: number[] = [];
  const blocked: number[] = [];
  const buffered: number[] = [];
  const recvd: number[] = [];
  const lat: number[][] = [];
  const at = <T>(arr: T[], fillv: () => T): T => {
    const s = Math.max(0, sec());
    for (let i = arr.length; i <= s; i++) arr.push(fillv());
    return arr[s];
  };
  rx.binaryType = 'arraybuffer';
  rx.onmessage = (e) => {
    const v = new DataView(e.data as ArrayBuffer);
    const s = Math.max(0, sec());
    at(recvd, () => 0);
    recvd[s]++;
    at(lat, () => []).push(performance.now() - v.getFloat64(4));
  };
  let seq = 0;
  let credit = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    credit = Math.min(credit + ((now - last) * cfg.rateKbps) / 8, cfg.messageBytes * 50);
    last = now;
    const s = Math.max(0, sec());
    at(sent, () => 0);
    at(blocked, () => 0);
    at(buffered, () => 0);
    buffered[s] = Math.max(buffered[s], ch.bufferedAmount);
    while (credit >= cfg.messageBytes) {
      credit -= cfg.messageBytes;
      if (ch.readyState !== 'open' || ch.bufferedAmount >= cfg.maxBufferedBytes) {
        blocked[s]++;
        continue;
      }
      const m = new ArrayBuffer(cfg.messageBytes);
      const v = new DataView(m);
      v.setUint32(0, seq++);
      v.setFloat64(4, now);
      ch.send(m);
      sent[s]++;
    }
  }, 10);
  return {
    pc: a,
    stop: async () => {
      clearInterval(timer);
      const pct = (xs: number[], q: number): number | null => (xs.length ? [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(q * xs.length))] : null);
      const r = { sent, blocked, maxBuffered: buffered, recvd, latP50: lat.map((l) => pct(l, 0.5)), latP95: lat.map((l) => pct(l, 0.95)) };
      a.close();
      b.close();
      return r;
    },
  };
}

window.runCase = async (cfg: CaseConfig): Promise<unknown> => {
  const t0 = performance.now();
  const worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' });
  const canvas = document.getElementById('src') as HTMLCanvasElement;
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('no 2d context');
  let n = 0;
  const draw = (): void => {
    n++;
    ctx.fillStyle = `hsl(${(n * 7) % 360} 60% 50%)`;
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.fillStyle = '#fff';
    ctx.font = '40px monospace';
    ctx.fillText(String(n), 10, 70);
  };
  draw();
  const drawTimer = setInterval(draw, 1000 / cfg.fps);
  let track: MediaStreamTrack;
  let genTimer: ReturnType<typeof setInterval> | undefined;
  if (cfg.generator) {
    // Breakout box (Chromium): push a frame whenever we want one, here every 1000/fps ms.
    const Gen = (window as unknown as { MediaStreamTrackGenerator: new (o: { kind: string }) => MediaStreamTrack & { writable: WritableStream<VideoFrame> } }).MediaStreamTrackGenerator;
    const gen = new Gen({ kind: 'video' });
    const writer = gen.writable.getWriter();
    genTimer = setInterval(() => {
      const f = new VideoFrame(canvas, { timestamp: Math.round(performance.now() * 1000) });
      writer.write(f).catch(() => f.close());
    }, 1000 / cfg.fps);
    track = gen;
  } else track = canvas.captureStream(cfg.fps).getVideoTracks()[0];

  const a = new RTCPeerConnection();
  const b = new RTCPeerConnection();
  wire(a, b, cfg.relay);
  const base: Omit<TransformOptions, 'side'> = {
    mode: cfg.mode,
    codec: cfg.codec,
    prefix: cfg.prefix,
    ...(cfg.sizes ? { sizes: cfg.sizes } : {}),
    ...(cfg.rateKbps ? { rateKbps: cfg.rateKbps } : {}),
  };
  const tr = a.addTransceiver(track, { direction: 'sendonly' });
  tr.setCodecPreferences(pickCodec(cfg.codec).filter((c) => !(cfg.noNack && c.mimeType === 'video/rtx')));
  (tr.sender as unknown as { transform: unknown }).transform = new window.RTCRtpScriptTransform(worker, { ...base, side: 'send' });
  b.ontrack = (e) => {
    (e.receiver as unknown as { transform: unknown }).transform = new window.RTCRtpScriptTransform(worker, { ...base, side: 'recv' });
    const v = document.createElement('video');
    v.muted = true;
    v.srcObject = new MediaStream([e.track]);
    v.play().catch(() => undefined);
    document.body.appendChild(v);
  };
  await negotiate(a, b, cfg.noNack ? 'nack' : cfg.noPli ? 'pli' : undefined);
  const dcRun = cfg.dc ? startDc(cfg.dc, t0) : undefined;
  await connected(a, 15_000);
  const dc = await dcRun;
  const timeline: unknown[] = [];
  const tStart = performance.now();
  while (performance.now() - tStart < cfg.durationS * 1000) {
    await new Promise((r) => setTimeout(r, 1000));
    const row: Record<string, unknown> = { t: Math.round(performance.now() - t0) / 1000, a: await snapshot(a), b: await snapshot(b) };
    if (dc) row.dc = await snapshot(dc.pc);
    const avail = (row.a as { pair?: { availableOutgoingBitrate?: number } }).pair?.availableOutgoingBitrate;
    if (cfg.followEstimate && avail) worker.postMessage({ estimateCapKbps: (avail * cfg.followEstimate) / 1000 });
    timeline.push(row);
  }
  const report = await new Promise<unknown>((res) => {
    worker.onmessage = (e) => res((e.data as { report: unknown }).report);
    worker.postMessage('report');
  });
  const dcReport = dc ? await dc.stop() : undefined;
  clearInterval(drawTimer);
  if (genTimer) clearInterval(genTimer);
  a.close();
  b.close();
  worker.terminate();
  return { sdpOffer: a.localDescription?.sdp, connectedAtS: (tStart - t0) / 1000, timeline, worker: report, dc: dcReport };
};
