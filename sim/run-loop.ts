/**
 * The simulator's run loop (sim/simulator.ts describes the topology): builds
 * the links, the engines and the encoder/decoder models from the options,
 * then runs the discrete-event loop to the end of the call and hands back the
 * state the result builder (sim/result.ts) reads.
 *
 * Event loop (µs): the next time is the earliest of a link delivery, an SCTP
 * timer, a camera frame, an endpoint wake-up ({@link Endpoint.nextWakeUs},
 * remembered after each tick), the per-second stats sample, and `now + 5 ms`.
 * Time always advances (an engine asking for "now" again right after its tick
 * waits {@link MIN_TICK_STEP_US}). At one instant: deliveries first (in link
 * order), then camera frames, then endpoint ticks, then the sample.
 */
import { type Clock, ManualClock } from '../src/core/clock.js';
import { Rng } from '../src/core/rng.js';
import { Endpoint } from '../src/engine/endpoint.js';
import { ReceiverEngine } from '../src/engine/receiver.js';
import type { DecodableFrame } from '../src/engine/receiver.js';
import { SenderEngine } from '../src/engine/sender.js';
import type { PathSink, SenderStats } from '../src/engine/types.js';
import { ConvergeScheduler } from '../src/sched/converge.js';
import { decodePacket } from '../src/wire/decode.js';
import { fractalEstimatorEntry } from '../src/cc/fractal-entry.js';
import { type CrossFlow, type CrossPacket, createCrossFlow } from './cross-traffic.js';
import type { Link } from './net/link.js';
import { buildLink } from './net/scenario.js';
import { SctpChannel, type SctpPacket } from './datachannel-model.js';
import { type RtpFeedback, type RtpPacket, RtpCarrierModel } from './rtp-carrier-model.js';
import type { DatagramCarrier } from '../src/transport/carrier.js';
import { StallFallbackSink } from '../src/transport/stall-fallback.js';
import { EncoderModel, makeAnnexB } from './encoder-model.js';
import { FreezeRecorder } from './freeze-explain.js';
import { PathTracer } from './path-trace.js';
import { type HeapSampler, heapSampler } from './heap.js';
import type { DecodedFrame } from './metrics.js';
import { PacketTransmission, round } from './metrics.js';
import { OverlayRoutes, type OverlayResult, type RelayProbe } from './overlay.js';
import type { SimOptions } from './types.js';
import { registerAllStrategies } from '../src/strategies.js';

// Every shipped strategy by name (the library registers only the defaults).
registerAllStrategies();

/** UDP (8) + IPv4 (20) header bytes: what the browser's path relay charges per datagram (tools/emulator). */
export const UDP_IP_OVERHEAD_BYTES = 28;
/** Smallest step (µs) after an engine asked to be ticked "now" right after a tick. */
export const MIN_TICK_STEP_US = 50;
/** Bound of SimStreamResult.targetChanges (the first ones are kept). */
export const MAX_TARGET_CHANGES = 5_000;
/** Audio frame interval (µs): 20 ms Opus frames (RFC 7587). */
export const AUDIO_FRAME_US = 20_000;
/** Largest step (µs) of the event loop. */
export const MAX_STEP_US = 5_000;

/**
 * Measured link cost per datagram of ours in Chromium (bytes): the emulator's
 * relays counted 1,121,576 bytes in 1,566 UDP packets (with 28 bytes IP/UDP
 * each) for 1,209 datagrams / 985,547 payload bytes the sender sent
 * (`npm run call -- --scenario constant --synthetic --duration 12`): 112 bytes
 * per datagram, i.e. ~59 bytes of DTLS (13 header, 8 nonce, 16 tag) and SCTP
 * (12 common header, 16 DATA chunk header) per packet, 28 of IP/UDP, and 0.3
 * SCTP control packets per datagram. Calibration of `npm run fidelity`.
 */
export const DEFAULT_LINK_OVERHEAD_BYTES = 112;

export interface Datagram {
  s: number;
  bytes: Uint8Array;
}
/** What a link carries: an engine datagram ('ideal'), an SCTP packet ('sctp'), an RTP carrier packet or its feedback ('sctp+rtp'), a cross-traffic packet or a relay probe (sim/overlay.ts). */
export type Item = Datagram | { sctp: SctpPacket<Datagram> } | { rtp: RtpPacket } | { rtpfb: RtpFeedback } | CrossPacket | RelayProbe;

/** One stream's engines, encoder model, decoder model state and counters. */
export interface StreamCtx {
  s: number;
  sender: SenderEngine;
  sEp: Endpoint;
  rx: ReceiverEngine;
  rEp: Endpoint;
  enc: EncoderModel;
  sWake: number;
  rWake: number;
  nextFrameUs: number;
  frameIndex: number;
  cameraFrames: number;
  sizes: number[];
  decoded: DecodedFrame[];
  lastDecodedId: number;
  /** Temporal layers: reference distance per frame id as the encoder model made it (undefined = the previous frame). */
  refs: Array<number | undefined>;
  /** Frame ids decoded since the last key frame (the decoder's references), bounded. */
  decodedSinceKey: Set<number>;
  violations: number;
  outOfOrder: number;
  qoeDropped: number;
  targets: number[];
  targetChanges: Array<{ atS: number; bps: number }>;
  /** AggDeliv's packet transmission time of this stream's media packets (sim/metrics.ts {@link PacketTransmission}). */
  transmission: PacketTransmission;
  /** Camera start (µs; a gcc-video cross flow's start), default 0. */
  originUs?: number;
}

/** One per-second sample: every stream's sender stats, stream 0's receiver FCD/IFD means (ms), each up link's capacity over the second (bps). */
export interface Sample {
  t: number;
  snd: SenderStats[];
  rxFcd: number;
  rxIfd: number;
  cap: number[];
}

/** The options {@link simulate} checked and resolved (defaults applied). */
export interface RunSettings {
  durationS: number;
  nStreams: number;
  qoeFeedback: boolean;
  dcModel: 'sctp' | 'ideal' | 'sctp+rtp';
  /** Link bytes per datagram beyond its payload (SimOptions.linkOverheadBytes). */
  overhead: number;
  endUs: number;
}

/**
 * Link bytes delivered per second (index = second of the call) on the up
 * links: by our streams per path, and per cross-traffic flow (index of
 * `scenario.crossTraffic`). With packets (datagrams) sent and delivered.
 */
export interface FlowSeries {
  ours: number[][];
  cross: number[][];
  oursSent: number;
  oursDelivered: number;
  /** gcc-video cross flows: datagrams sent / delivered on the up link (index = cross flow). */
  crossSent: number[];
  crossDelivered: number[];
}

/** A `gcc-video` cross-traffic flow: a stream of ours on one path, active in [startUs, stopUs). */
export interface CrossVideo {
  x: number;
  ctx: StreamCtx;
  startUs: number;
  stopUs: number;
}

/** What the run loop leaves for the result builder. */
export interface SimRun extends RunSettings {
  streams: StreamCtx[];
  /** Cross-traffic flows in `scenario.crossTraffic` order: a model flow or a gcc-video stream. */
  cross: Array<{ kind: 'model'; flow: CrossFlow } | { kind: 'video'; video: CrossVideo }>;
  flows: FlowSeries;
  up: Link<Item>[];
  chUp: SctpChannel<Datagram>[];
  chDown: SctpChannel<Datagram>[];
  /** 'sctp+rtp': per path, the up link's RTP carrier and the stall fallback sink of each of our streams' sender. */
  rtp?: Array<{ carrier: RtpCarrierModel; sinks: StallFallbackSink[] }>;
  samples: Sample[];
  heap?: { sampler: HeapSampler; samples: Array<{ atS: number; usedBytes: number }> };
  /** Relay routes of an overlay scenario (sim/overlay.ts), undefined without relays. */
  overlay?: OverlayResult;
  /** Stream 0's traffic for the freeze attribution (SimOptions.explainFreezes). */
  freezeRecorder?: FreezeRecorder;
  /** Stream 0's per-path trace (SimOptions.pathTrace). */
  pathTracer?: PathTracer;
  steps: number;
  datagramsUp: number;
  datagramsDown: number;
}

/** Where separate clocks start (µs, the later of the two; SimOptions.clockSkewMs). */
const SEPARATE_CLOCK_START_US = 60_000_000;

/** Build the call from `opts` and run it to `settings.endUs`. Deterministic in its arguments. */
export function runLoop(opts: SimOptions, settings: RunSettings): SimRun {
  const { nStreams, qoeFeedback, dcModel, overhead, endUs } = settings;
  const scenario = opts.scenario;
  const clock = new ManualClock(0);
  // Separate sender/receiver clocks (SimOptions.clockSkewMs): receiver = virtual + base, sender = receiver + skew,
  // both at least SEPARATE_CLOCK_START_US, so that runs with different skews start every engine long after
  // its own time 0 (as a page's clock does) and differ only in the offset.
  const skewUs = opts.clockSkewMs === undefined ? undefined : Math.round(opts.clockSkewMs * 1000);
  const rxBaseUs = skewUs === undefined ? 0 : SEPARATE_CLOCK_START_US + Math.max(0, -skewUs);
  const txBaseUs = skewUs === undefined ? 0 : rxBaseUs + skewUs;
  const shifted = (baseUs: number): Clock => (baseUs === 0 ? clock : { nowUs: () => clock.nowUs() + baseUs });
  const txClock = shifted(txBaseUs);
  const rxClock = shifted(rxBaseUs);
  const seed = opts.seed >>> 0;
  const nPaths = scenario.paths.length;

  const up: Link<Item>[] = [];
  const down: Link<Item>[] = [];
  scenario.paths.forEach((p, i) => {
    up.push(buildLink<Item>(p.up, new Rng((seed * 7919 + 2 * i + 1) >>> 0)));
    down.push(buildLink<Item>(p.down, new Rng((seed * 7919 + 2 * i + 2) >>> 0)));
  });
  let datagramsUp = 0;
  let datagramsDown = 0;
  const rec = opts.explainFreezes ? new FreezeRecorder(nPaths) : undefined;
  // Overlay (relay) routes deliver through their own links, which the trace does not follow: refused, not half-traced.
  if (opts.pathTrace && OverlayRoutes.wanted(scenario)) throw new Error('pathTrace: not supported on overlay (relay) scenarios');
  const tracer = opts.pathTrace ? new PathTracer(nPaths) : undefined;
  // Overlay (issue 16): paths with relays switch routes (sim/overlay.ts); 'ideal' datachannel only.
  const routes = OverlayRoutes.wanted(scenario)
    ? new OverlayRoutes<Item>(
        scenario,
        seed,
        opts.relayPolicy ?? (opts.scheduler.startsWith('overlay-ucb') ? 'ucb' : 'fixed'),
        { up, down },
        { ucb: opts.relayUcb, handover: opts.relayHandover, ...(opts.relayProbe !== undefined ? { probe: opts.relayProbe } : {}) },
      )
    : undefined;
  if (routes && dcModel !== 'ideal') throw new Error('simulate: scenarios with relays need datachannel "ideal"');
  const relayLinks = routes?.relayLinks() ?? [];
  // One SCTP association per path; each direction's SACKs travel on the other direction's link.
  const onLink = (link: Link<Item>) => (p: SctpPacket<Datagram>, bytes: number) => void link.send({ sctp: p }, bytes + overhead, clock.nowUs());
  const sctp = dcModel !== 'ideal';
  const chUp = sctp ? up.map((l, i) => new SctpChannel<Datagram>(onLink(l), onLink(down[i]))) : [];
  const chDown = sctp ? down.map((l, i) => new SctpChannel<Datagram>(onLink(l), onLink(up[i]))) : [];
  const channels = [...chUp, ...chDown];
  // 'sctp+rtp': an RTP carrier per path on the up link (its transport feedback on the down link), used by our
  // streams' senders while the path's datachannel is stalled (src/transport/stall-fallback.ts).
  const rtp =
    dcModel === 'sctp+rtp'
      ? up.map((l, i) => ({
          carrier: new RtpCarrierModel(
            (p, bytes) => void l.send({ rtp: p }, bytes + overhead, clock.nowUs()),
            (f, bytes) => void down[i].send({ rtpfb: f }, bytes + overhead, clock.nowUs()),
            () => clock.nowUs(),
            opts.rtpCarrier ?? {},
          ),
          sinks: [] as StallFallbackSink[],
          /** Last arrival of anything of ours on the path's down link (µs, undefined = none yet). */
          lastReverseUs: undefined as number | undefined,
        }))
      : undefined;
  const carriers = rtp?.map((r) => r.carrier) ?? [];
  /** Stream s's view of path i's carrier `c` (its datagrams come back tagged with s). */
  const carrierView = (c: RtpCarrierModel, i: number, s: number): DatagramCarrier => ({
    get open() {
      return c.open;
    },
    send: (b) => {
      if (!c.send(b, s)) return false;
      // Counted as the datachannel sink counts its datagrams (totals, the freeze recorder's send log).
      datagramsUp++;
      if (s < nStreams) flows.oursSent++;
      if (rec && s === 0) rec.onSend(i, b, clock.nowUs());
      if (tracer && s === 0) tracer.onSend(i, b, clock.nowUs());
      return true;
    },
    queuedBytes: () => c.queuedBytes(),
    rateCeilingBps: () => c.rateCeilingBps(),
    on: (e, cb) => c.on(e, cb),
    close: () => c.close(),
  });
  /** Stream s's sender sink on path i: the datachannel, behind the stall fallback with 'sctp+rtp'. */
  const senderSink = (i: number, s: number, keyframe: () => void, pathRateBps?: () => number | undefined): PathSink => {
    const dc = sink(i, s, true, chUp[i]);
    const r = rtp?.[i];
    if (!r) return dc;
    const ch = chUp[i];
    const { keyframeOnSwitch = true, reverseGate = false, ...sf } = opts.stallFallback ?? {};
    const f = new StallFallbackSink({
      ...sf,
      datachannel: dc,
      carrier: carrierView(r.carrier, i, s),
      clock,
      rttMs: () => ch.smoothedRttMs(),
      // The path's own rate, which a stale carrier ceiling is paced up to (as src/call/peer-session.ts wires it).
      ...(pathRateBps ? { pathRateBps } : {}),
      ...(reverseGate ? { lastReverseUs: () => r.lastReverseUs } : {}),
      // What follows on the carrier references frames stuck in the stalled channel (StallFallbackOptions.onSwitch).
      ...(keyframeOnSwitch ? { onSwitch: (p: 'datachannel' | 'carrier') => void (p === 'carrier' && keyframe()) } : {}),
    });
    r.sinks.push(f);
    return f;
  };
  /** The datagrams an arriving link item carries (an SCTP packet is handed to its channel first). */
  const unwrap = (i: number, onUp: boolean, item: Item, now: number): Datagram[] => {
    if ('x' in item || 'probe' in item) return [];
    if ('rtp' in item) return onUp ? rtp![i].carrier.onRtp(now, item.rtp).map((d) => ({ s: d.tag, bytes: d.bytes })) : [];
    if ('rtpfb' in item) {
      if (!onUp) rtp![i].carrier.onFeedback(now, item.rtpfb);
      return [];
    }
    if (!('sctp' in item)) return [item];
    const [dataCh, sackCh] = onUp ? [chUp[i], chDown[i]] : [chDown[i], chUp[i]];
    if (item.sctp.kind === 'data') return dataCh.onData(now, item.sctp);
    sackCh.onSack(now, item.sctp);
    return [];
  };
  const nSec = Math.ceil(endUs / 1e6) + 1;
  const crossSpecs = scenario.crossTraffic ?? [];
  const flows: FlowSeries = {
    ours: scenario.paths.map(() => new Array<number>(nSec).fill(0)),
    cross: crossSpecs.map(() => new Array<number>(nSec).fill(0)),
    oursSent: 0,
    oursDelivered: 0,
    crossSent: crossSpecs.map(() => 0),
    crossDelivered: crossSpecs.map(() => 0),
  };
  /** Cross flow index of a stream index (gcc-video streams come after ours), -1 for ours. */
  const crossOfStream: number[] = new Array<number>(nStreams).fill(-1);
  const addDelivered = (series: number[], bytes: number, now: number) => {
    const sec = Math.min(series.length - 1, Math.floor(now / 1e6));
    series[sec] += bytes;
  };
  const sink = (i: number, s: number, isUp: boolean, ch?: SctpChannel<Datagram>): PathSink => ({
    send(bytes: Uint8Array): boolean {
      if (isUp) datagramsUp++;
      else datagramsDown++;
      if (isUp && s < nStreams) flows.oursSent++;
      if (tracer && isUp && s === 0) tracer.onSend(i, bytes, clock.nowUs());
      if (rec && isUp && s === 0) rec.onSend(i, bytes, clock.nowUs());
      else if (isUp) flows.crossSent[crossOfStream[s]]++;
      if (rec && !isUp && s === 0) rec.onControlSend(bytes, clock.nowUs());
      if (ch) return ch.send(clock.nowUs(), { s, bytes }, bytes.length); // false: send buffer full
      const link = routes ? routes.link(i, isUp, clock.nowUs()) : (isUp ? up : down)[i];
      link?.send({ s, bytes }, bytes.length + overhead, clock.nowUs());
      return true; // a link drop is network loss, not a refusal by the transport
    },
    bufferedAmount: () => (ch ? ch.bufferedAmount() : 0),
  });

  const streams: StreamCtx[] = [];
  for (let s = 0; s < nStreams; s++) {
    const sender = new SenderEngine({
      clock: txClock,
      scheduler: opts.scheduler === 'converge' && opts.converge ? new ConvergeScheduler(opts.converge) : opts.scheduler,
      singlePath: opts.singlePath,
      fec: opts.fec,
      maxBitrateBps: opts.maxBitrateBps,
      startBitrateBps: opts.startBitrateBps,
      mtuBytes: opts.mtuBytes,
      streamId: s,
      ...(opts.estimator !== undefined ? { estimator: opts.estimator === 'fractal' && opts.fractal ? fractalEstimatorEntry(opts.fractal) : opts.estimator } : {}),
      ...(opts.sender ?? {}),
    });
    const rev = new ReceiverEngine({ clock: txClock });
    const rx = new ReceiverEngine({
      clock: rxClock,
      ...(opts.receiver ?? {}),
      ...(opts.playout ? { playout: opts.playout } : {}),
      ...(opts.nack ? { nack: opts.nack } : {}),
      ...(opts.receiverDefaultRttMs !== undefined ? { defaultRttMs: opts.receiverDefaultRttMs } : {}),
    });
    const enc = new EncoderModel(opts.encoder ?? {}, sender.targetBitrateBps(), new Rng((seed * 104729 + 17 * s + 3) >>> 0));
    const ctx: StreamCtx = {
      s,
      sender,
      ...freshStreamState(rev, sender, rx, enc, s, 0),
    };
    for (let i = 0; i < nPaths; i++) {
      sender.addPath(
        i,
        senderSink(
          i,
          s,
          () => {
            enc.requestKeyframe();
            if (rec && s === 0) rec.onKeyframeRequest(clock.nowUs());
          },
          () => sender.pathStates().find((p) => p.id === i)?.rateBps,
        ),
        'connected',
      );
      rev.addPath(i, sink(i, s, true, chUp[i]));
      rx.addPath(i, sink(i, s, false, chDown[i]));
    }
    sender.setStreamInfo({ codec: 'h264', width: enc.width, height: enc.height, fps: enc.fps });
    sender.on('keyframeNeeded', () => {
      enc.requestKeyframe();
      if (rec && s === 0) rec.onKeyframeRequest(clock.nowUs());
    });
    sender.on('targetBitrate', (bps) => {
      enc.setTargetBitrate(bps);
      if (ctx.targetChanges.length < MAX_TARGET_CHANGES) ctx.targetChanges.push({ atS: round(clock.nowUs() / 1e6, 3), bps: Math.round(bps) });
    });
    rx.on('frame', (f: DecodableFrame) => onDecodable(ctx, f));
    if (rec && s === 0) rx.on('keyframeRequest', (_id, reason) => rec.onReceiverKeyframeRequest(clock.nowUs(), reason));
    streams.push(ctx);
  }

  // Cross traffic: gcc-video / fractal-video flows are streams of ours (single scheduler, GCC or FRACTaL, one path)
  // after our streams;
  // the others are model flows (sim/cross-traffic.ts) on the same links.
  const cross: SimRun['cross'] = [];
  const all: StreamCtx[] = [...streams];
  const crossVideo: CrossVideo[] = [];
  const crossModels: CrossFlow[] = [];
  crossSpecs.forEach((spec, x) => {
    const p = spec.path;
    if (spec.kind === 'gcc-video' || spec.kind === 'fractal-video') {
      const s = all.length;
      const sender = new SenderEngine({
        clock: txClock,
        scheduler: 'single',
        singlePath: p,
        estimator: spec.kind === 'fractal-video' ? (opts.fractal ? fractalEstimatorEntry(opts.fractal) : 'fractal') : 'gcc',
        fec: opts.fec,
        maxBitrateBps: spec.rateMbps !== undefined ? spec.rateMbps * 1e6 : opts.maxBitrateBps,
        startBitrateBps: opts.startBitrateBps,
        mtuBytes: opts.mtuBytes,
        streamId: s,
      });
      const rev = new ReceiverEngine({ clock: txClock });
      const rx = new ReceiverEngine({ clock: rxClock });
      const enc = new EncoderModel(opts.encoder ?? {}, sender.targetBitrateBps(), new Rng((seed * 104729 + 17 * s + 3) >>> 0));
      const startUs = Math.round(spec.startS * 1e6);
      const stopUs = spec.stopS === undefined ? Number.POSITIVE_INFINITY : Math.round(spec.stopS * 1e6);
      const ctx: StreamCtx = { s, sender, ...freshStreamState(rev, sender, rx, enc, s, startUs), originUs: startUs };
      sender.addPath(p, sink(p, s, true, chUp[p]), 'connected');
      rev.addPath(p, sink(p, s, true, chUp[p]));
      rx.addPath(p, sink(p, s, false, chDown[p]));
      sender.setStreamInfo({ codec: 'h264', width: enc.width, height: enc.height, fps: enc.fps });
      sender.on('keyframeNeeded', () => enc.requestKeyframe());
      sender.on('targetBitrate', (bps) => enc.setTargetBitrate(bps));
      rx.on('frame', (f: DecodableFrame) => onDecodable(ctx, f));
      all.push(ctx);
      crossOfStream[s] = x;
      const video = { x, ctx, startUs, stopUs };
      crossVideo.push(video);
      cross.push({ kind: 'video', video });
    } else {
      const flow = createCrossFlow<Item>(x, spec, { up: up[p], down: down[p], wrap: (pk) => pk }, endUs);
      crossModels.push(flow);
      cross.push({ kind: 'model', flow });
    }
  });
  const crossModelsByX: Array<CrossFlow | undefined> = crossSpecs.map((_, x) => crossModels.find((f) => f.index === x));
  const crossBytes = (pk: CrossPacket): number => crossModelsByX[pk.x]?.packetBytes ?? 0;
  const videoActive = (c: StreamCtx, now: number): boolean => {
    const x = crossOfStream[c.s] ?? -1;
    if (x < 0) return true;
    const v = crossVideo.find((w) => w.x === x);
    return v !== undefined && now >= v.startUs && now < v.stopUs;
  };

  function onDecodable(ctx: StreamCtx, f: DecodableFrame): void {
    const id = f.frameId;
    if (id <= ctx.lastDecodedId) {
      ctx.outOfOrder++;
      return;
    }
    // The decoder model has a delta frame's reference only when it decoded it since the last key frame
    // (temporal layers: the encoder model's reference distance; else the previous frame).
    const ok = f.keyFrame || ctx.decodedSinceKey.has(id - (ctx.refs[id] ?? 1));
    const expected = ctx.sizes[id];
    const intact = expected === f.data.length && checkTag(f.data, f.keyFrame, id);
    if (!ok || !intact) {
      ctx.violations++;
      ctx.rx.requestKeyframe(ok ? 'decoder-corrupt' : 'decoder-missing-reference', ctx.s);
      return;
    }
    ctx.lastDecodedId = id;
    if (f.keyFrame) ctx.decodedSinceKey.clear();
    if (ctx.decodedSinceKey.size >= 256) ctx.decodedSinceKey.delete(ctx.decodedSinceKey.values().next().value as number);
    ctx.decodedSinceKey.add(id);
    const now = clock.nowUs();
    // Capture time on the virtual clock = captureUs - (sender clock - virtual): exact with one clock, else the receiver's estimate.
    const est = skewUs === undefined ? 0 : ctx.rx.senderClockOffsetUs();
    const offsetUs = est === undefined ? Number.NaN : est + rxBaseUs;
    ctx.decoded.push({ frameId: id, captureUs: f.captureUs, decodedUs: now, senderClockOffsetUs: offsetUs, bytes: f.data.length });
    ctx.rx.onFrameDecoded(ctx.s, id, f.captureUs);
  }

  // Per-second samples.
  const samples: Sample[] = [];
  let nextSampleUs = 1_000_000;
  const capacityBps = linkCapacityBps;

  function takeSample(now: number): void {
    void now;
    const t = nextSampleUs / 1e6;
    const r0 = streams[0].rx.stats(0);
    samples.push({
      t,
      snd: streams.map((c) => c.sender.stats()),
      rxFcd: r0.fcdMs.mean,
      rxIfd: r0.ifdMs.mean,
      cap: up.map((l, i) => capacityBps(routes ? routes.currentUp(i) : l, (t - 1) * 1000, t * 1000)),
    });
    for (const c of streams) c.targets.push(c.sender.targetBitrateBps());
    nextSampleUs += 1_000_000;
  }

  const heapEveryUs = opts.heapSampleS !== undefined && opts.heapSampleS > 0 ? Math.round(opts.heapSampleS * 1e6) : 0;
  const heap = heapEveryUs > 0 ? { sampler: heapSampler(), nextUs: heapEveryUs, samples: [] as Array<{ atS: number; usedBytes: number }> } : undefined;

  // Audio source on stream 0 (SimOptions.audio): a frame every 20 ms, 70-110 bytes (Opus ~32 kbps VBR).
  // A gcc-video / fractal-video cross flow with `audio: true` sends its own audio too while active.
  const audioRng = new Rng((seed * 15485863 + 11) >>> 0);
  const crossAudioRng = crossVideo.map((v) => new Rng((seed * 15485863 + 101 * (v.x + 1)) >>> 0));
  let nextAudioUs = opts.audio ? 500 : Infinity;

  let steps = 0;
  for (;;) {
    const now = clock.nowUs();
    if (heap && now >= heap.nextUs) {
      heap.samples.push({ atS: round(now / 1e6, 3), usedBytes: heap.sampler.sample() });
      heap.nextUs += heapEveryUs;
    }
    // 1. Link deliveries due now.
    for (let i = 0; i < nPaths; i++) {
      if ((up[i].nextEventUs() ?? Infinity) <= now) {
        for (const d of up[i].poll(now)) {
          const it = d.item;
          if ('probe' in it) {
            routes?.onProbeArrival(it, d.atUs);
            continue;
          }
          if ('x' in it) {
            addDelivered(flows.cross[it.x], crossBytes(it), now);
            crossModelsByX[it.x]?.onDelivered(it, now);
            continue;
          }
          for (const g of unwrap(i, true, it, now)) {
            const x = crossOfStream[g.s] ?? -1;
            if (x < 0) {
              flows.oursDelivered++;
              addDelivered(flows.ours[i], g.bytes.length + overhead, now);
            } else {
              flows.crossDelivered[x]++;
              addDelivered(flows.cross[x], g.bytes.length + overhead, now);
            }
            if (x < 0) all[g.s].transmission.onArrival(g.bytes, now + txBaseUs);
            if (rec && g.s === 0) rec.onArrival(i, g.bytes, now);
            // On the sender's clock, as the send times in the packets (PacketTransmission above): exact under --clock-skew.
            if (tracer && g.s === 0) tracer.onArrival(i, g.bytes, now + txBaseUs);
            all[g.s].rEp.onDatagram(i, g.bytes);
          }
        }
      }
      if ((down[i].nextEventUs() ?? Infinity) <= now) {
        for (const d of down[i].poll(now)) {
          const it = d.item;
          if (rtp && !('x' in it)) {
            rtp[i].carrier.onReverseArrival(now); // stands for ICE's STUN responses
            rtp[i].lastReverseUs = now;
          }
          if ('x' in it) {
            crossModelsByX[it.x]?.onDelivered(it, now);
            continue;
          }
          for (const g of unwrap(i, false, it, now)) {
            const c = all[g.s];
            if (!qoeFeedback && isQoe(g.bytes)) {
              c.qoeDropped++;
              continue;
            }
            if (tracer && g.s === 0) tracer.onFeedback(i, now);
            c.sEp.onDatagram(i, g.bytes);
            c.sWake = Math.min(c.sWake, c.sEp.nextWakeUs() - txBaseUs);
          }
        }
      }
    }
    for (const r of relayLinks) {
      if ((r.link.nextEventUs() ?? Infinity) > now) continue;
      for (const d of r.link.poll(now)) {
        if ('probe' in d.item) {
          routes?.onProbeArrival(d.item, d.atUs);
          continue;
        }
        const g = d.item as Datagram;
        const c = all[g.s];
        if (r.up) {
          if (g.s < nStreams) c.transmission.onArrival(g.bytes, now + txBaseUs);
          c.rEp.onDatagram(r.i, g.bytes);
        } else if (qoeFeedback || !isQoe(g.bytes)) {
          c.sEp.onDatagram(r.i, g.bytes);
          c.sWake = Math.min(c.sWake, c.sEp.nextWakeUs() - txBaseUs);
        } else c.qoeDropped++;
      }
    }
    // Relay decisions (once per slot).
    if (routes && now >= routes.nextEventUs() && now < endUs) {
      routes.tick(
        now,
        streams.map((c) => c.sender),
        capacityBps,
      );
      for (const c of streams) c.sWake = Math.min(c.sWake, now);
    }
    // SCTP timers (T3-rtx, delayed SACK) due now.
    for (const ch of channels) if ((ch.nextTimerUs() ?? Infinity) <= now) ch.onTimer(now);
    for (const c of carriers) if ((c.nextTimerUs() ?? Infinity) <= now) c.onTimer(now);
    // Per-second sample (after the deliveries of that instant).
    if (now >= nextSampleUs) takeSample(now);
    if (now >= endUs) break;
    // Cross-traffic model timers (sends, RTOs).
    for (const f of crossModels) if (f.nextWakeUs() <= now) f.onTimer(now);
    // 2. Camera frames.
    for (const c of all) {
      if (c.nextFrameUs <= now) {
        if (!videoActive(c, now)) {
          c.nextFrameUs = Number.POSITIVE_INFINITY; // a gcc-video flow past its stop (its first frame is at its start)
          continue;
        }
        // Camera ticks and frame ids differ once the encoder's frame-rate cap drops frames (src/adapt).
        c.cameraFrames++;
        c.nextFrameUs = (c.originUs ?? 0) + c.s * 1000 + Math.round((c.cameraFrames * 1e6) / c.enc.fps);
        // Frame dropping before encoding when the path queues are too long (SenderEngine.shouldDropFrame).
        if (c.sender.shouldDropFrame(c.enc.keyframePending, c.enc.nextTemporalLayer)) continue;
        const fr = c.enc.nextFrame(now);
        if (fr.dropped) continue;
        const id = c.frameIndex++;
        c.sizes[id] = Math.max(24, fr.sizeBytes);
        c.refs[id] = fr.refDistance;
        if (rec && c.s === 0) rec.onFrame(id, now + txBaseUs, fr.keyFrame);
        c.sender.sendFrame({
          streamId: c.s,
          frameId: id,
          keyFrame: fr.keyFrame,
          captureUs: now + txBaseUs,
          data: makeAnnexB(fr.sizeBytes, fr.keyFrame, id),
          codec: 'h264',
          ...(fr.temporalLayer !== undefined ? { temporalLayer: fr.temporalLayer } : {}),
          ...(fr.refDistance !== undefined ? { refDistance: fr.refDistance } : {}),
        });
        c.sWake = Math.min(c.sWake, c.sEp.nextWakeUs() - txBaseUs);
      }
    }
    // 2b. Audio frames (sent at once: audio bypasses the pacer).
    if (nextAudioUs <= now) {
      const c = streams[0];
      // The encoding the sender asks for (SenderEngine.audioEncoding: Opus bitrate and frame duration from the
      // paths' rate): 70-110 bytes at 32 kbps / 20 ms as before, scaled by the payload per frame at another
      // (Chromium 156 made 80.7 / 119.7 / 92.6 bytes per frame at 32 / 24 / 12 kbps and 20 / 40 / 60 ms).
      const e = c.sender.audioEncoding();
      const bytes = 70 + Math.floor(audioRng.next() * 41);
      const scale = (e.bitrateBps * e.frameDurationUs) / (32_000 * AUDIO_FRAME_US);
      c.sender.sendAudio({ captureUs: now, durationUs: e.frameDurationUs, data: new Uint8Array(scale === 1 ? bytes : Math.max(8, Math.round(bytes * scale))) });
      nextAudioUs += e.frameDurationUs;
      c.sWake = Math.min(c.sWake, c.sEp.nextWakeUs());
      crossVideo.forEach((v, k) => {
        if (!crossSpecs[v.x].audio || now < v.startUs || now >= v.stopUs) return;
        const cv = v.ctx;
        cv.sender.sendAudio({ captureUs: now, durationUs: AUDIO_FRAME_US, data: new Uint8Array(70 + Math.floor(crossAudioRng[k].next() * 41)) });
        cv.sWake = Math.min(cv.sWake, cv.sEp.nextWakeUs() - txBaseUs);
      });
    }
    // 3. Endpoint ticks.
    for (const c of all) {
      if (c.sWake <= now) {
        c.sEp.tick();
        c.sWake = Math.max(c.sEp.nextWakeUs() - txBaseUs, now + MIN_TICK_STEP_US);
      }
      if (c.rWake <= now) {
        c.rEp.tick();
        c.rWake = Math.max(c.rEp.nextWakeUs() - rxBaseUs, now + MIN_TICK_STEP_US);
      }
    }
    if (rec?.sampleDue(now)) {
      const st = streams[0].sender.stats().paths;
      const detail = st.map((p, i) => {
        const l = up[i]?.stats();
        const nowMs = Math.floor(now / 1000);
        const capBps = up[i] ? capacityBps(up[i], Math.max(0, nowMs - 200), nowMs + 1) : 0;
        const qd = l?.queueDelay.recentMs;
        const dc = chUp[i]?.bufferedAmount() ?? 0;
        const netBytes = l?.queuedBytes ?? 0;
        const r1 = (x: number) => Math.round(x * 10) / 10;
        const r2 = (x: number) => Math.round(x * 100) / 100;
        return {
          pacerKB: r1(Math.max(0, p.queuedBytes - dc) / 1000),
          dcKB: r1(dc / 1000),
          netKB: r1(netBytes / 1000),
          netMs: qd && qd.length > 0 ? Math.round(qd[qd.length - 1]) : 0,
          capMbps: r2(capBps / 1e6),
          dropped: l ? l.dropped.queue : 0,
          ackedMbps: r2(p.goodputBps / 1e6),
          estMbps: r2(p.rateBps / 1e6),
          sendMbps: r2(p.sendRateBps / 1e6),
          srttMs: Math.round(p.rttMs),
        };
      });
      rec.sample(now, streams[0].sender.targetBitrateBps(), st, detail);
    }
    if (tracer?.due(now)) {
      const snd = streams[0].sender;
      const st = snd.stats().paths;
      const es = snd.estimatorStats() as unknown as Array<Record<string, unknown> & { id: number }>;
      const nowMs = Math.floor(now / 1000);
      const num = (x: unknown): number => (typeof x === 'number' ? x : Number.NaN);
      tracer.sample(
        now,
        snd.targetBitrateBps(),
        up.map((l, i) => {
          const p = st.find((q) => q.id === i);
          const e = es.find((q) => q.id === i) ?? { id: i };
          const ls = l.stats();
          const qd = ls.queueDelay.recentMs;
          return {
            capBps: capacityBps(l, Math.max(0, nowMs - 100), nowMs),
            netMs: qd.length > 0 ? qd[qd.length - 1] : 0,
            netBytes: ls.queuedBytes,
            drops: ls.dropped.queue + ls.dropped.loss + ls.dropped.blackhole,
            estBps: p?.rateBps ?? 0,
            gccBps: num(e.targetRateBps),
            delayBps: num(e.delayBasedBps),
            lossBps: num(e.lossBasedBps),
            ackedBps: num(e.ackedRateBps),
            sendBps: p?.sendRateBps ?? 0,
            queuedBytes: p?.queuedBytes ?? 0,
            srttMs: num(e.srttMs),
            minRttMs: num(e.minRttMs),
            rttMs: num(e.latestRttMs),
            lossFrac: num(e.lossRate),
            recentLossFrac: num(e.recentLossRate),
            trend: num(e.trend),
            threshold: num(e.threshold),
            usage: String(e.bandwidthUsage),
            onsets: num(e.overuseOnsets),
            up: p?.up === true,
            demoted: p?.demoted === true,
            sharePct: p?.sharePct ?? 0,
          };
        }),
      );
    }
    // Next event.
    let next = Math.min(now + MAX_STEP_US, endUs, nextSampleUs);
    for (let i = 0; i < nPaths; i++) {
      const a = up[i].nextEventUs();
      if (a !== undefined && a < next) next = a;
      const b = down[i].nextEventUs();
      if (b !== undefined && b < next) next = b;
    }
    for (const ch of channels) next = Math.min(next, ch.nextTimerUs() ?? Infinity);
    for (const c of carriers) next = Math.min(next, c.nextTimerUs() ?? Infinity);
    for (const r of relayLinks) next = Math.min(next, r.link.nextEventUs() ?? Infinity);
    if (routes) next = Math.min(next, Math.max(routes.nextEventUs(), now + 1));
    if (nextAudioUs < next) next = nextAudioUs;
    for (const f of crossModels) next = Math.min(next, f.nextWakeUs());
    for (const c of all) {
      if (c.nextFrameUs < next) next = c.nextFrameUs;
      if (c.sWake < next) next = c.sWake;
      if (c.rWake < next) next = c.rWake;
    }
    clock.setUs(Math.max(next, now + 1));
    steps++;
  }

  const overlay = routes?.result(endUs, capacityBps);
  return {
    ...settings,
    streams,
    cross,
    flows,
    up,
    chUp,
    chDown,
    ...(rtp ? { rtp } : {}),
    samples,
    ...(heap ? { heap } : {}),
    ...(overlay ? { overlay } : {}),
    ...(rec ? { freezeRecorder: rec } : {}),
    ...(tracer ? { pathTracer: tracer } : {}),
    steps,
    datagramsUp,
    datagramsDown,
  };
}

/** Mean capacity (bps) of `link` over [fromMs, toMs) (0 while it is down). */
export function linkCapacityBps(link: Link<Item>, fromMs: number, toMs: number): number {
  let bytes = 0;
  for (let m = fromMs; m < toMs; m++) if (!link.isDownAt(m * 1000)) bytes += link.capacityAtMs(m);
  return (bytes * 8 * 1000) / Math.max(1, toMs - fromMs);
}

/** A stream's endpoints and fresh counters; its camera starts at `startUs` (+1 ms per stream index). */
function freshStreamState(rev: ReceiverEngine, sender: SenderEngine, rx: ReceiverEngine, enc: EncoderModel, s: number, startUs: number): Omit<StreamCtx, 's' | 'sender'> {
  return {
    sEp: new Endpoint(rev, sender),
    rx,
    rEp: new Endpoint(rx),
    enc,
    sWake: startUs,
    rWake: startUs,
    nextFrameUs: startUs + s * 1000, // streams' cameras 1 ms apart
    frameIndex: 0,
    cameraFrames: 0,
    sizes: [],
    decoded: [],
    lastDecodedId: -1,
    refs: [],
    decodedSinceKey: new Set(),
    violations: 0,
    outOfOrder: 0,
    qoeDropped: 0,
    targets: [],
    targetChanges: [],
    transmission: new PacketTransmission(),
  };
}

/** Is this datagram a Converge QoE feedback message? (Malformed: no.) */
function isQoe(bytes: Uint8Array): boolean {
  const r = decodePacket(bytes);
  return r.ok && r.packet.body.kind === 'qoe';
}

/** The id tag {@link makeAnnexB} wrote (delta: offset 5; key: 23). */
function checkTag(data: Uint8Array, keyFrame: boolean, id: number): boolean {
  const at = keyFrame ? 23 : 5;
  for (let i = 0; i < 4 && at + i < data.length; i++) {
    if (data[at + i] !== (0x80 | ((id >>> (7 * i)) & 0x7f))) return false;
  }
  return true;
}
