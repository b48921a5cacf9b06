/**
 * The bench peer page (driven by bench/browser/main.ts). URL parameters:
 *   role=sender|receiver, mode=ours|native, sig, room,
 *   ours:   paths, scheduler, estimator, fec, codec, singlePath, maxBitrate
 *   native: path (the emulated path to use), codec, maxBitrate
 *   source: video=<url of a Y4M served with range support> or width/height
 *           (synthetic pattern); fps; track=canvas|generator
 *   quality: sampleEvery (PSNR every N-th source id), ssim=0|1
 *   audio=1|0 (ours only, default 1): the sender also sends the microphone
 *           (Chromium's fake device: a periodic beep) through MultipathCall.sendTrack
 *   nativeAudio=1 (native only): Chromium's WebRTC sends that microphone too
 * The harness reads `window.__bench.sample()` once per second.
 */
import { CallEvent, MultipathCall } from '../../../src/call/multipath-call.js';
import { peerView } from '../../../tools/harness/stats-view.js';
import type { CodecName } from '../../../src/core/types.js';
import type { FecPolicyName } from '../../../src/fec/types.js';
import type { SchedulerName } from '../../../src/sched/types.js';
import type { EstimatorName } from '../../../src/cc/registry.js';
import { registerAllStrategies } from '../../../src/strategies.js';
import type { DrawEntry } from '../metrics.js';
import { startNativePeer } from './native.js';
import type { NativePeer, NativeStats } from './native.js';
import { startSink } from './sink.js';
import { startDatachannelWorker } from '../../../src/transport/datachannel-worker.js';
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
  // The call's stats contract (src/call/stats-types.ts), read as the call report reads it.
  const report = call!.getStats();
  const v = peerView(report.values());
  const src = [...report.values()].find((e) => e.type === 'media-source' && e.kind === 'video');
  const notEncoded = src?.type === 'media-source' && src.kind === 'video' ? src.framesNotEncoded : undefined;
  const mic = [...report.values()].find((e) => e.type === 'media-source' && e.kind === 'audio');
  const ov = v.outVideo;
  const iv = v.inVideo;
  const ia = v.inAudio;
  const oa = v.outAudio;
  const toMs = (s: number | undefined) => (s === undefined ? undefined : s * 1000);
  const counters: Counters = {
    framesSent: ov?.framesEncoded ?? ov?.framesSent ?? 0,
    framesDecoded: iv?.framesDecoded ?? 0,
    keyframeRequests: iv?.pliCount ?? 0,
    bytesReceived: iv?.bytesDecoded ?? 0,
  };
  // A compact digest in results.json's units (ms, bps, %).
  const stats = {
    sender: ov && {
      framesSent: ov.framesSent,
      targetBitrateBps: ov.targetBitrate,
      bytesSent: ov.bytesSent,
      retransmissionsSent: ov.retransmittedPacketsSent,
      fecPacketsSent: ov.fecPacketsSent,
      fecOverheadPct: ov.packetsSent > 0 ? (100 * ov.fecPacketsSent) / ov.packetsSent : 0,
      keyframesSent: ov.keyFramesSent,
      keyframeRequestsReceived: ov.pliCount,
      paths: v.paths.map((p) => ({
        id: p.pathId,
        sharePct: p.mediaShare * 100,
        rateBps: p.targetBitrate ?? 0,
        sendRateBps: p.sendBitrate,
        rttMs: toMs(p.roundTripTime) ?? 0,
        lossPct: p.fractionLost * 100,
        bufferedBytes: p.bufferedAmount,
        ...(p.rtpCarrier ? { rtpCarrier: p.rtpCarrier } : {}),
      })),
    },
    encoder: ov && {
      framesEncoded: ov.framesEncoded,
      keyFrames: ov.keyFramesEncoded,
      bitrateBps: ov.encoderBitrate,
      width: ov.frameWidth,
      height: ov.frameHeight,
      frameRate: ov.framesPerSecond,
      degradationReason: ov.qualityLimitationReason,
      adaptationChanges: ov.qualityLimitationResolutionChanges,
      scalabilityMode: ov.scalabilityMode,
      encodeUsage: ov.encodeUsage,
      framesNotEncoded: notEncoded,
    },
    receiver: iv && {
      framesDecoded: iv.framesDecoded,
      framesDropped: iv.framesDropped,
      freezeCount: iv.freezeCount,
      freezeTotalMs: iv.totalFreezesDuration * 1000,
      keyframeRequestsSent: iv.pliCount,
      nacksSent: iv.nackCount,
      nackedPackets: iv.nackedPackets,
      recoveredByFec: iv.fecRecoveredPackets,
      latencyMs: { mean: iv.endToEndLatencyMean * 1000, p50: iv.endToEndLatencyP50 * 1000, p95: iv.endToEndLatencyP95 * 1000, p99: iv.endToEndLatencyP99 * 1000 },
      jitterBufferDelayMeanMs: iv.jitterBufferEmittedCount > 0 ? (1000 * iv.jitterBufferDelay) / iv.jitterBufferEmittedCount : null,
      bytesDecoded: iv.bytesDecoded,
      datagramBytesReceived: v.transport?.bytesReceived ?? 0,
      paths: v.paths.map((p) => ({ id: p.pathId, bytesReceived: p.bytesReceived, lossPct: p.receiveFractionLost * 100, latePackets: p.latePackets, oneWayDelayMs: toMs(p.oneWayDelay) })),
    },
    // Diagnostic (bench only): the congestion controllers' internals, through the call's private sessions.
    estimators: (() => {
      try {
        const ss = (call as unknown as { sessions: Map<string, { sender?: { estimatorStats(): unknown[] } }> }).sessions;
        return [...ss.values()].flatMap((x) => x.sender?.estimatorStats() ?? []);
      } catch {
        return undefined;
      }
    })(),
    decoder: iv && { decoded: iv.framesDecoded, errors: iv.decoderErrors, renderMode: iv.renderMode },
    audio: {
      receiver: ia && {
        concealedPct: ia.totalSamplesReceived > 0 ? (100 * ia.concealedSamples) / ia.totalSamplesReceived : 0,
        mouthToEarP95Ms: ia.mouthToEarP95 * 1000,
        mouthToEarMs: { mean: ia.mouthToEarMean * 1000, p50: ia.mouthToEarP50 * 1000, p95: ia.mouthToEarP95 * 1000 },
        packetsReceived: ia.packetsReceived,
        packetsLost: ia.packetsLost,
        duplicates: ia.duplicatePacketsReceived,
        latePackets: ia.latePackets,
        concealedSamples: ia.concealedSamples,
        totalSamplesReceived: ia.totalSamplesReceived,
        concealmentEvents: ia.concealmentEvents,
        removedSamplesForAcceleration: ia.removedSamplesForAcceleration,
        targetDelayMs: ia.jitterBufferTargetDelay * 1000,
        avOffsetMs: ia.avOffset * 1000,
      },
      sender: oa && { framesSent: oa.framesSent, packetsSent: oa.packetsSent + oa.duplicatePacketsSent, duplicatesSent: oa.duplicatePacketsSent, framesUnsent: oa.framesUnsent },
      // The microphone's Opus encoding at the end of the run (src/engine/audio-rate.ts follows the paths' rate) and how often it changed.
      encoder:
        mic?.type === 'media-source' && mic.kind === 'audio' ? { targetBitrateBps: mic.targetBitrate, frameDurationMs: mic.frameDuration * 1000, reconfigurations: mic.reconfigurations } : undefined,
      output: ia && { framesDecoded: ia.framesDecoded, rms: ia.audioLevel, maxRms: ia.maxAudioLevel, rendering: ia.rendering },
    },
    paths: v.paths.map((p) => ({ id: p.pathId, state: p.state, stateReason: p.stateReason, connectMs: toMs(p.connectTime), iceRestarts: p.iceRestarts })),
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
      ...(q.has('estimator') ? { estimator: q.get('estimator') as EstimatorName } : {}),
      fec: (q.get('fec') ?? 'path') as FecPolicyName,
      maxBitrateBps: maxBitrate > 0 ? maxBitrate : undefined,
      // Every path runs over the same loopback interface and the harness keeps only
      // IPv4 UDP host candidates; the emulator's relays are what make paths differ.
      // The default 'by-network' gave path 1 only the IPv6 group, which the harness
      // drops, so path 1 never connected (issue 9).
      candidates: 'all',
      clock,
      ...(q.get('dcWorker') === '1' ? { datachannelWorker: true } : {}),
      ...(q.get('rtpCarrier') === '0'
        ? { rtpCarrier: false }
        : q.get('rtpCarrier') === '1'
          ? { rtpCarrier: true }
          : q.has('rtpCarrier')
            ? { rtpCarrier: { attach: q.get('rtpCarrier') as 'connect' | 'stall' } }
            : {}),
      ...(q.has('departureTimes') ? { departureTimes: q.get('departureTimes') === '1' } : {}),
      ...(q.has('pacerBurstMs') || q.has('pacingFactor')
        ? {
            pacer: {
              ...(q.has('pacerBurstMs') ? { burstMs: Number(q.get('pacerBurstMs')) } : {}),
              ...(q.has('pacingFactor') ? { pacingFactor: Number(q.get('pacingFactor')) } : {}),
            },
          }
        : {}),
    });
    call.on(CallEvent.Error, (e) => addError(String(e.message ?? e)));
    await call.connect();
    // The call loads its worker itself (a lazy chunk); read the counters of that same worker, after the fact.
    if (q.get('dcWorker') === '1') (window as unknown as { __dcw: unknown }).__dcw = startDatachannelWorker();
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
      // nativeAudio=1: Chromium sends the fake microphone too, the load our call carries with audio.
      const mic = q.get('nativeAudio') === '1' ? (await navigator.mediaDevices.getUserMedia({ audio: true })).getAudioTracks()[0] : undefined;
      await native.send(sourceTrack.track, mic);
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
