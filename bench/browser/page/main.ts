/**
 * The bench peer page (driven by bench/browser/main.ts). URL parameters:
 *   role=sender|receiver, mode=ours|native, sig, room,
 *   ours:   paths, scheduler, fec, codec, singlePath, maxBitrate
 *   native: path (the emulated path to use), codec, maxBitrate
 *   source: video=<url of a Y4M served with range support> or width/height
 *           (synthetic pattern); fps; track=canvas|generator
 *   quality: sampleEvery (PSNR every N-th source id), ssim=0|1
 *   audio=1|0 (ours only, default 1): the sender also sends the microphone
 *           (Chromium's fake device: a periodic beep) through MultipathCall.sendTrack
 * The harness reads `window.__bench.sample()` once per second.
 */
import { CallEvent, MultipathCall } from '../../../src/call/multipath-call.js';
import type { CodecName } from '../../../src/core/types.js';
import type { FecPolicyName } from '../../../src/fec/types.js';
import type { SchedulerName } from '../../../src/sched/types.js';
import { registerAllStrategies } from '../../../src/strategies.js';
import type { DrawEntry } from '../metrics.js';
import { startNativePeer } from './native.js';
import type { NativePeer, NativeStats } from './native.js';
import { startSink } from './sink.js';
import type { Sink } from './sink.js';
import { openSource, startSourceTrack } from './source.js';
import type { SourceTrack } from './source.js';

const q = new URLSearchParams(location.search);
const role = q.get('role') === 'sender' ? 'sender' : 'receiver';
const mode = q.get('mode') === 'native' ? 'native' : 'ours';
const statusEl = document.getElementById('status')!;
const setStatus = (s: string) => (statusEl.textContent = s);
const errors: string[] = [];
const addError = (s: string) => {
  if (errors.length < 200) errors.push(s);
};
const draws: DrawEntry[] = [];
let sourceTrack: SourceTrack | undefined;
let sink: Sink | undefined;
/** Sender, with check=1: quality of the local source track itself (the measurement ceiling). */
let checkSink: Sink | undefined;
let call: MultipathCall | undefined;
let native: NativePeer | undefined;
const clock = { nowUs: () => Math.round((performance.timeOrigin + performance.now()) * 1000) };
const fps = Number(q.get('fps') ?? 30);
const codec = q.get('codec') ?? 'h264';
const maxBitrate = Number(q.get('maxBitrate') ?? 0);

/** Uniform counters the harness needs from either stack. */
interface Counters {
  framesSent: number;
  framesDecoded: number;
  keyframeRequests: number;
  /** Media bytes delivered for goodput (src/feedback/qoe-metrics.ts): ours, encoded bytes of decoded frames; native, RTP payload bytes received minus retransmissions. */
  bytesReceived: number;
}

function oursCounters(): { counters: Counters; stats: unknown } {
  const s = call!.getStats();
  const counters: Counters = {
    framesSent: s.encoder?.framesEncoded ?? s.sender?.framesSent ?? 0,
    framesDecoded: s.decoder.decoded,
    keyframeRequests: s.receiver.keyframeRequestsSent,
    bytesReceived: s.receiver.bytesDecoded,
  };
  // A compact digest (the full CallStats is large).
  const stats = {
    sender: s.sender && {
      framesSent: s.sender.framesSent,
      targetBitrateBps: s.sender.targetBitrateBps,
      bytesSent: s.sender.bytesSent,
      retransmissionsSent: s.sender.retransmissionsSent,
      fecPacketsSent: s.sender.fecPacketsSent,
      fecOverheadPct: s.sender.fecOverheadPct,
      keyframesSent: s.sender.keyframesSent,
      keyframeRequestsReceived: s.sender.keyframeRequestsReceived,
      paths: s.sender.paths.map((p) => ({ id: p.id, sharePct: p.sharePct, rateBps: p.rateBps, sendRateBps: p.sendRateBps, rttMs: p.rttMs, lossPct: p.lossPct })),
    },
    encoder: s.encoder,
    receiver: {
      framesDecoded: s.receiver.framesDecoded,
      framesDropped: s.receiver.framesDropped,
      freezeCount: s.receiver.freezeCount,
      freezeTotalMs: s.receiver.freezeTotalMs,
      keyframeRequestsSent: s.receiver.keyframeRequestsSent,
      nacksSent: s.receiver.nacksSent,
      nackedPackets: s.receiver.nackedPackets,
      recoveredByFec: s.receiver.recoveredByFec,
      latencyMs: s.receiver.latencyMs,
      bytesDecoded: s.receiver.bytesDecoded,
      datagramBytesReceived: s.receiver.paths.reduce((a, p) => a + p.bytesReceived, 0),
      paths: s.receiver.paths.map((p) => ({ id: p.id, bytesReceived: p.bytesReceived, lossPct: p.lossPct, latePackets: p.latePackets })),
    },
    decoder: s.decoder,
    audio: {
      receiver: ((a) => ({
        concealedPct: a.concealedPct,
        mouthToEarP95Ms: a.mouthToEarP95Ms,
        mouthToEarMs: a.mouthToEarMs,
        packetsReceived: a.packetsReceived,
        packetsLost: a.packetsLost,
        duplicates: a.duplicates,
        latePackets: a.latePackets,
        concealedSamples: a.concealedSamples,
        totalSamplesReceived: a.totalSamplesReceived,
        concealmentEvents: a.concealmentEvents,
        removedSamplesForAcceleration: a.removedSamplesForAcceleration,
        targetDelayMs: a.targetDelayMs,
        avOffsetMs: a.avOffsetMs,
      }))(s.receiver.audio),
      sender: s.sender && {
        framesSent: s.sender.audio.framesSent,
        packetsSent: s.sender.audio.packetsSent,
        duplicatesSent: s.sender.audio.duplicatesSent,
        framesUnsent: s.sender.audio.framesUnsent,
        perPath: s.sender.audio.perPath,
      },
      encoder: s.audioEncoder,
      output: s.audioOutput,
    },
    paths: s.paths.map((p) => ({ id: p.id, state: p.state, stateReason: p.stateReason, connectMs: p.connectMs, iceRestarts: p.iceRestarts })),
  };
  return { counters, stats };
}

async function nativeCounters(): Promise<{ counters: Counters; stats: NativeStats }> {
  const s = await native!.stats();
  const num = (r: Record<string, unknown> | undefined, k: string) => (typeof r?.[k] === 'number' ? (r[k] as number) : 0);
  return {
    counters: {
      framesSent: num(s.outbound, 'framesEncoded'),
      framesDecoded: num(s.inbound, 'framesDecoded'),
      keyframeRequests: num(s.inbound, 'pliCount') + num(s.inbound, 'firCount'),
      bytesReceived: num(s.inbound, 'bytesReceived') - num(s.inbound, 'retransmittedBytesReceived'),
    },
    stats: s,
  };
}

(window as unknown as { __bench: unknown }).__bench = {
  role,
  mode,
  async sample() {
    let c: { counters: Counters; stats: unknown } = { counters: { framesSent: 0, framesDecoded: 0, keyframeRequests: 0, bytesReceived: 0 }, stats: null };
    try {
      if (call) c = oursCounters();
      else if (native) c = await nativeCounters();
    } catch (e) {
      addError(`stats: ${String(e)}`);
    }
    return {
      tMs: performance.timeOrigin + performance.now(),
      counters: c.counters,
      stats: c.stats,
      draws: draws.splice(0, draws.length),
      source: sourceTrack?.counters(),
      displays: sink?.drainDisplays() ?? [],
      quality: sink?.drainQuality() ?? [],
      sink: sink?.counters(),
      check: checkSink ? { quality: checkSink.drainQuality(), displays: checkSink.drainDisplays().length, counters: checkSink.counters() } : undefined,
    };
  },
  errors: () => [...errors, ...(native?.errors ?? [])],
  close() {
    sourceTrack?.stop();
    sink?.stop();
    checkSink?.stop();
    call?.close();
    native?.close();
  },
};

async function main(): Promise<void> {
  const source = await openSource(q);
  const sampleEvery = Math.max(1, Number(q.get('sampleEvery') ?? 5));
  const ssim = q.get('ssim') !== '0';
  const trackKind = q.get('track') === 'generator' ? 'generator' : 'canvas';
  const makeTrack = () => {
    const t = startSourceTrack(source, {
      fps,
      kind: trackKind,
      onDraw: (id, tMs) => {
        if (draws.length < 100_000) draws.push({ id, tMs });
      },
    });
    if (q.get('check') === '1') checkSink = startSink(t.track.clone(), source, { sampleEvery: sampleEvery * 2, ssim });
    return t;
  };
  const sig = q.get('sig') ?? 'ws://127.0.0.1:8080';
  const room = q.get('room') ?? 'bench';
  if (mode === 'ours') {
    // Strategies by name (?scheduler=lola): register every shipped one.
    registerAllStrategies();
    call = new MultipathCall({
      signallingUrl: sig,
      room,
      peerId: role,
      paths: Number(q.get('paths') ?? 2),
      codec: codec as CodecName,
      scheduler: (q.get('scheduler') ?? 'converge') as SchedulerName,
      singlePath: q.has('singlePath') ? Number(q.get('singlePath')) : undefined,
      fec: (q.get('fec') ?? 'path') as FecPolicyName,
      maxBitrateBps: maxBitrate > 0 ? maxBitrate : undefined,
      // Every path runs over the same loopback interface and the harness keeps only
      // IPv4 UDP host candidates; the emulator's relays are what make paths differ.
      // The default 'by-network' gave path 1 only the IPv6 group, which the harness
      // drops, so path 1 never connected (issue 9).
      candidates: 'all',
      clock,
    });
    call.on(CallEvent.Error, (e) => addError(String(e.message ?? e)));
    await call.connect();
    if (role === 'sender') {
      sourceTrack = makeTrack();
      await call.sendTrack(sourceTrack.track);
      if (q.get('audio') !== '0') {
        const mic = (await navigator.mediaDevices.getUserMedia({ audio: true })).getAudioTracks()[0];
        if (!mic) throw new Error('getUserMedia gave no audio track');
        await call.sendTrack(mic);
      }
    } else {
      const t = call.remoteTrack;
      if (!t) throw new Error('MultipathCall.remoteTrack is undefined (no MediaStreamTrackGenerator)');
      sink = startSink(t.clone(), source, { sampleEvery, ssim });
    }
  } else {
    native = startNativePeer({ signallingUrl: sig, room, role, pathId: Number(q.get('path') ?? 0), codec, maxBitrateBps: maxBitrate });
    if (role === 'sender') {
      sourceTrack = makeTrack();
      await native.send(sourceTrack.track);
    } else {
      void native.remoteTrack.then((t) => {
        sink = startSink(t, source, { sampleEvery, ssim });
      });
    }
  }
  setStatus(`${mode} ${role} running`);
  (window as unknown as { __ready: boolean }).__ready = true;
}

main().catch((e) => {
  addError(`start: ${String((e as Error)?.stack ?? e)}`);
  setStatus(`error: ${String(e)}`);
  (window as unknown as { __ready: boolean }).__ready = true;
});
