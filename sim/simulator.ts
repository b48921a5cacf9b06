/**
 * Deterministic trace-driven simulator that runs the REAL engines
 * (src/engine SenderEngine / ReceiverEngine / Endpoint) on a virtual clock.
 *
 * Topology, per stream s (1..3 streams) and per scenario path i:
 *
 * ```
 *  encoder model -> SenderEngine(streamId s) --PathSink--> up link i ---> Endpoint(ReceiverEngine) -> decoder model
 *  Endpoint(reverse ReceiverEngine, SenderEngine) <--- down link i <--PathSink-- ReceiverEngine (reports, NACK, PLI, QoE)
 * ```
 *
 * Links are tools/net/link.ts `Link`s built from the scenario (tools/net/scenario.ts);
 * every stream's packets share the same physical links (an item is tagged
 * with its stream). With several streams each stream has its OWN engine pair
 * (own streamId, own per-path sequence spaces, own per-path GCC): their GCCs
 * share each bottleneck and compete like separate congestion-controlled
 * flows; nothing couples them.
 *
 * Event loop (discrete events, µs): the next time is the earliest of a link
 * delivery, a camera frame, an endpoint wake-up ({@link Endpoint.nextWakeUs},
 * remembered after each tick), the per-second stats sample, and `now + 5 ms`.
 * Time always advances (an engine asking for "now" again right after its tick
 * waits {@link MIN_TICK_STEP_US}). At one instant: deliveries first (in link
 * order), then camera frames, then endpoint ticks, then the sample.
 *
 * Encoder model: sim/encoder-model.ts, driven by the engine's `targetBitrate`
 * events (as the app applies them) and `keyframeNeeded` (next frame is key).
 * Decoder model: instant decode of the receiver's decodable frames; it checks
 * the reference chain (a delta frame needs its predecessor decoded; else a
 * violation is counted, the frame is not decoded and a key frame is
 * requested through the receiver) and the frame's bytes (size and id tag),
 * then calls `receiver.onFrameDecoded`.
 *
 * `qoeFeedback: false` drops the receiver's Converge QoE messages on the
 * feedback links (the "converge without feedback" configuration).
 *
 * Deterministic: same options -> same result (no wall clock, seeded Rngs,
 * ordered iteration only).
 */
import type { PlayoutOptions } from '../src/feedback/playout.js';
import { ManualClock } from '../src/core/clock.js';
import { Rng } from '../src/core/rng.js';
import type { PathId } from '../src/core/types.js';
import { Endpoint } from '../src/engine/endpoint.js';
import { ReceiverEngine } from '../src/engine/receiver.js';
import type { DecodableFrame } from '../src/engine/receiver.js';
import { SenderEngine, type SenderEngineConfig } from '../src/engine/sender.js';
import type { PathSink, SenderStats } from '../src/engine/types.js';
import type { FecPolicyName } from '../src/fec/types.js';
import { createScheduler } from '../src/sched/factory.js';
import { ConvergeScheduler } from '../src/sched/converge.js';
import type { ConvergeConfig, Scheduler, SchedulerName } from '../src/sched/types.js';
import { decodePacket } from '../src/wire/decode.js';
import type { PacketBody } from '../src/wire/types.js';
import type { PerSecond, ReportPath } from '../tools/harness/report.js';
import type { Link } from '../tools/net/link.js';
import { type Scenario, buildLink } from '../tools/net/scenario.js';
import { SctpChannel, type SctpPacket, type SctpStats } from './datachannel-model.js';
import { EncoderModel, type AdaptationStats, type EncoderModelOptions, makeAnnexB } from './encoder-model.js';
import { heapSampler } from './heap.js';
import { type DecodedFrame, freezeStats, latencyCdf, mean, perSecondQoe, round, streamQoe } from './metrics.js';

/** UDP (8) + IPv4 (20) header bytes: what the browser's path relay charges per datagram (tools/emulator). */
export const UDP_IP_OVERHEAD_BYTES = 28;
/** Smallest step (µs) after an engine asked to be ticked "now" right after a tick. */
export const MIN_TICK_STEP_US = 50;
/** Bound of SimStreamResult.targetChanges (the first ones are kept). */
export const MAX_TARGET_CHANGES = 5_000;
/** Largest step (µs) of the event loop. */
export const MAX_STEP_US = 5_000;

export interface SimOptions {
  scenario: Scenario;
  scheduler: SchedulerName;
  /** For scheduler 'single'. */
  singlePath?: PathId;
  fec: FecPolicyName;
  seed: number;
  /** Simulated seconds (default scenario.durationS, else 60). */
  durationS?: number;
  /** Independent video streams sharing the links (1..3, default 1). */
  streams?: number;
  encoder?: EncoderModelOptions;
  /** false = drop the receiver's QoE feedback (converge-without-feedback). Default true. */
  qoeFeedback?: boolean;
  /** App cap on the encoder target per stream (bps, default 8 Mbps as the engine). */
  maxBitrateBps?: number;
  /** Initial per-path GCC rate (bps, default 1 Mbps as the engine). */
  startBitrateBps?: number;
  /** Datagram MTU (bytes, default 1200). */
  mtuBytes?: number;
  /**
   * Bytes each datagram costs on the link beyond its payload. With
   * `datachannel: 'ideal'` (default {@link DEFAULT_LINK_OVERHEAD_BYTES}):
   * IP/UDP, DTLS record and SCTP headers and the SCTP control packets (SACK,
   * FORWARD-TSN) the browser's datachannel adds; 0 = an ideal transport. With
   * 'sctp' only the UDP/IP headers (default 28, as the browser path relay,
   * tools/emulator): the SCTP/DTLS bytes are the model's.
   */
  linkOverheadBytes?: number;
  /**
   * How a path's RTCDataChannel is modelled. 'sctp': sim/datachannel-model.ts
   * (dcSCTP's congestion window, send buffer, SACKs on the reverse link,
   * fragmentation into 1191-byte SCTP packets, DTLS overhead), so
   * `bufferedAmount()` is real. 'ideal': every datagram goes on the link at
   * once, `bufferedAmount()` is 0. Default 'ideal'.
   */
  datachannel?: 'sctp' | 'ideal';
  /** Work around the 'single' scheduler counting unused paths in the encoder target (default true; see makeScheduler). */
  singlePathTargetFix?: boolean;
  /** Receiver playout timing (ReceiverEngine `playout`; default the engine's; `{ maxDelayMs: 0 }` = decode at once). */
  playout?: PlayoutOptions;
  /** Receiver RTT assumption (ms) passed as ReceiverEngine `defaultRttMs` (engine default 100); for experiments. */
  receiverDefaultRttMs?: number;
  /** SenderEngine options over the simulator's (frame dropping, temporal-layer dropping, fault handling); for experiments. */
  sender?: Partial<Pick<SenderEngineConfig, 'dropQueueFrames' | 'maxConsecutiveDrops' | 'upperLayerDropFactor' | 'cwndPushback' | 'pathHysteresis' | 'fastFailover' | 'outageRestore'>>;
  /** Converge tuning for scheduler 'converge' (default DEFAULT_CONVERGE_CONFIG); for experiments. */
  converge?: Partial<ConvergeConfig>;
  /** Free-form label copied into the result (e.g. `converge-nofb`). */
  label?: string;
  /**
   * Sample the process's used heap (after a full GC, sim/heap.ts) every this
   * many simulated seconds into `SimResult.heap`; for the
   * `soak` scenario. Measurement only: results do not depend on it. Default off.
   */
  heapSampleS?: number;
}

/** A path of a simulated call: the call report's path fields (no ICE addresses), plus link facts. */
export interface SimPathResult extends Omit<ReportPath, 'localAddress' | 'remoteAddress'> {
  name: string;
  pacerDropped: number;
  /** Mean link capacity over the call (bps) and mean rate actually sent (bps). */
  meanCapacityBps: number;
  meanSendRateBps: number;
  /** Up-link drops by cause. */
  linkDrops: { queue: number; loss: number; blackhole: number };
}

/** The call report's per-second fields, with the simulator's own per-path facts (capacity, pacer queue). */
export interface SimPerSecond extends Omit<PerSecond, 'paths' | 'qoeFeedback'> {
  paths: Array<{ id: number; capacityBps: number; sendRateBps: number; rateBps: number; rttMs: number; lossPct: number; mediaPackets: number; retransmissions: number; pacerQueuedBytes: number; up: boolean; enabled: boolean }>;
}

/** One stream's QoE (report.json names). */
export interface SimStreamResult {
  streamId: number;
  frames: { sent: number; decoded: number; dropped: number };
  fps: number;
  freezes: { count: number; totalMs: number; maxMs: number };
  latencyMs: { mean: number; p50: number; p95: number; p99: number };
  keyframeRequests: number;
  /** Gaps the receiver's frame buffer skipped without a key frame (temporal layers). */
  temporalLayerSkips: number;
  framesOutOfOrder: number;
  goodputBps: number;
  encoderTargetBps: { mean: number; last: number };
  fec: { overheadPct: number; utilizationPct: number; packetsSent: number; recovered: number };
  nack: { nacksSent: number; packetsNacked: number; retransmissionsSent: number; retransmissionsReceived: number };
  retransmissions: number;
  qoeFeedback: { sent: number; received: number; droppedBySim: number };
  /** Decoder-model reference-chain or payload violations (must be 0). */
  decoderViolations: number;
  keyframesSent: number;
  /** Camera frames skipped before encoding (SenderEngine.shouldDropFrame) and stale packets purged for key frames. */
  pushback: { framesDroppedBeforeEncode: number; stalePacketsPurged: number };
  /** Freezes (start s, duration ms), at most 50. */
  freezeList: Array<{ atS: number; ms: number }>;
  /** Encoded resolution / frame rate over time (sim/encoder-model.ts, src/adapt). */
  adaptation: AdaptationStats;
  /** Every encoder target the engine announced (its `targetBitrate` event: changes > 5%), first {@link MAX_TARGET_CHANGES}. */
  targetChanges: Array<{ atS: number; bps: number }>;
}

/** The QoE fields a whole call reports the same way as one stream. */
type CallQoe = Pick<
  SimStreamResult,
  | 'frames'
  | 'fps'
  | 'freezes'
  | 'latencyMs'
  | 'keyframeRequests'
  | 'temporalLayerSkips'
  | 'framesOutOfOrder'
  | 'goodputBps'
  | 'encoderTargetBps'
  | 'fec'
  | 'nack'
  | 'retransmissions'
  | 'decoderViolations'
>;

export interface SimResult extends CallQoe {
  version: 1;
  scenario: string;
  label: string;
  scheduler: SchedulerName;
  singlePath?: number;
  fecPolicy: FecPolicyName;
  qoeFeedback: boolean;
  seed: number;
  durationS: number;
  streams: number;
  camera: { width: number; height: number; fps: number };
  // The CallQoe fields are all streams together (= stream 0 with one stream).
  /** Latency CDF: 51 percentiles 0, 2, ..., 100 (ms). */
  latencyCdfMs: number[];
  perStream: SimStreamResult[];
  paths: SimPathResult[];
  perSecond: SimPerSecond[];
  /** Used heap over the call (opts.heapSampleS): bytes after a full GC at each simulated time; `gc` false when no GC could be forced. */
  heap?: { gc: boolean; samples: Array<{ atS: number; usedBytes: number }> };
  /** Simulator bookkeeping: events processed, datagrams carried. */
  sim: { steps: number; datagramsUp: number; datagramsDown: number; qoeDropped: number; keyframeRequestsPatched: number; datachannel: 'sctp' | 'ideal'; sctp?: Array<{ up: SctpStats; down: SctpStats }> };
}

interface Datagram {
  s: number;
  bytes: Uint8Array;
}
/** What a link carries: an engine datagram ('ideal') or an SCTP packet ('sctp'). */
type Item = Datagram | { sctp: SctpPacket<Datagram> };

interface StreamCtx {
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
  kfPatched: number;
  targets: number[];
  targetChanges: Array<{ atS: number; bps: number }>;
}

/**
 * The engine's receiver always sends its own keyframe requests with streamId 0
 * (ReceiverEngine.releaseFrames -> requestKeyframe('frame-buffer')): with one
 * receiver per stream the simulator rewrites them to the stream's id so a
 * stream != 0 sender does not ignore them (counted in sim.keyframeRequestsPatched).
 */
function senderProxy(sender: SenderEngine, ctx: { s: number; kfPatched: number }): SenderEngine {
  const proxy = {
    onControl(body: PacketBody, via: PathId): void {
      if (body.kind === 'keyframeRequest' && body.keyframeRequest.streamId !== ctx.s) {
        ctx.kfPatched++;
        sender.onControl({ kind: 'keyframeRequest', keyframeRequest: { ...body.keyframeRequest, streamId: ctx.s } }, via);
        return;
      }
      sender.onControl(body, via);
    },
    tick: () => sender.tick(),
    nextWakeUs: () => sender.nextWakeUs(),
  };
  return proxy as unknown as SenderEngine;
}

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

/** Run one simulated call. Deterministic in its options. @throws on an invalid option */
export function simulate(opts: SimOptions): SimResult {
  const scenario = opts.scenario;
  const durationS = opts.durationS ?? scenario.durationS ?? 60;
  if (!(durationS > 0)) throw new RangeError(`simulate: durationS must be > 0, got ${durationS}`);
  const nStreams = opts.streams ?? 1;
  if (!Number.isInteger(nStreams) || nStreams < 1 || nStreams > 3) throw new RangeError(`simulate: streams must be 1..3, got ${nStreams}`);
  const qoeFeedback = opts.qoeFeedback ?? true;
  const dcModel = opts.datachannel ?? 'ideal';
  if (dcModel !== 'sctp' && dcModel !== 'ideal') throw new RangeError(`simulate: datachannel must be 'sctp' or 'ideal', got ${String(dcModel)}`);
  const overhead = opts.linkOverheadBytes ?? (dcModel === 'sctp' ? UDP_IP_OVERHEAD_BYTES : DEFAULT_LINK_OVERHEAD_BYTES);
  if (!(overhead >= 0)) throw new RangeError(`simulate: linkOverheadBytes must be >= 0, got ${overhead}`);
  const endUs = Math.round(durationS * 1e6);
  const clock = new ManualClock(0);
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
  // One SCTP association per path; each direction's SACKs travel on the other direction's link.
  const onLink = (link: Link<Item>) => (p: SctpPacket<Datagram>, bytes: number) => void link.send({ sctp: p }, bytes + overhead, clock.nowUs());
  const chUp = dcModel === 'sctp' ? up.map((l, i) => new SctpChannel<Datagram>(onLink(l), onLink(down[i]))) : [];
  const chDown = dcModel === 'sctp' ? down.map((l, i) => new SctpChannel<Datagram>(onLink(l), onLink(up[i]))) : [];
  const channels = [...chUp, ...chDown];
  /** The datagrams an arriving link item carries (an SCTP packet is handed to its channel first). */
  const unwrap = (i: number, onUp: boolean, item: Item, now: number): Datagram[] => {
    if (!('sctp' in item)) return [item];
    const [dataCh, sackCh] = onUp ? [chUp[i], chDown[i]] : [chDown[i], chUp[i]];
    if (item.sctp.kind === 'data') return dataCh.onData(now, item.sctp);
    sackCh.onSack(now, item.sctp);
    return [];
  };
  const sink = (link: Link<Item>, s: number, isUp: boolean, ch?: SctpChannel<Datagram>): PathSink => ({
    send(bytes: Uint8Array): boolean {
      if (isUp) datagramsUp++;
      else datagramsDown++;
      if (ch) return ch.send(clock.nowUs(), { s, bytes }, bytes.length); // false: send buffer full
      link.send({ s, bytes }, bytes.length + overhead, clock.nowUs());
      return true; // a link drop is network loss, not a refusal by the transport
    },
    bufferedAmount: () => (ch ? ch.bufferedAmount() : 0),
  });

  const streams: StreamCtx[] = [];
  for (let s = 0; s < nStreams; s++) {
    const sender = new SenderEngine({
      clock,
      scheduler: makeScheduler(opts),
      singlePath: opts.singlePath,
      fec: opts.fec,
      maxBitrateBps: opts.maxBitrateBps,
      startBitrateBps: opts.startBitrateBps,
      mtuBytes: opts.mtuBytes,
      streamId: s,
      ...(opts.sender ?? {}),
    });
    const rev = new ReceiverEngine({ clock });
    const rx = new ReceiverEngine({ clock, ...(opts.playout ? { playout: opts.playout } : {}), ...(opts.receiverDefaultRttMs !== undefined ? { defaultRttMs: opts.receiverDefaultRttMs } : {}) });
    const enc = new EncoderModel(opts.encoder ?? {}, sender.targetBitrateBps(), new Rng((seed * 104729 + 17 * s + 3) >>> 0));
    const ctx: StreamCtx = {
      s,
      sender,
      sEp: undefined as unknown as Endpoint,
      rx,
      rEp: new Endpoint(rx),
      enc,
      sWake: 0,
      rWake: 0,
      nextFrameUs: s * 1000, // streams' cameras 1 ms apart
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
      kfPatched: 0,
      targets: [],
      targetChanges: [],
    };
    ctx.sEp = new Endpoint(rev, senderProxy(sender, ctx));
    for (let i = 0; i < nPaths; i++) {
      sender.addPath(i, sink(up[i], s, true, chUp[i]), 'connected');
      rev.addPath(i, sink(up[i], s, true, chUp[i]));
      rx.addPath(i, sink(down[i], s, false, chDown[i]));
    }
    sender.setStreamInfo({ codec: 'h264', width: enc.width, height: enc.height, fps: enc.fps });
    sender.on('keyframeNeeded', () => enc.requestKeyframe());
    sender.on('targetBitrate', (bps) => {
      enc.setTargetBitrate(bps);
      if (ctx.targetChanges.length < MAX_TARGET_CHANGES) ctx.targetChanges.push({ atS: round(clock.nowUs() / 1e6, 3), bps: Math.round(bps) });
    });
    rx.on('frame', (f: DecodableFrame) => onDecodable(ctx, f));
    streams.push(ctx);
  }

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
    ctx.decoded.push({ frameId: id, captureUs: f.captureUs, decodedUs: now, bytes: f.data.length });
    ctx.rx.onFrameDecoded(ctx.s, id, f.captureUs);
  }

  // Per-second samples.
  const samples: Array<{ t: number; snd: SenderStats[]; rxFcd: number; rxIfd: number; cap: number[] }> = [];
  let nextSampleUs = 1_000_000;
  const capacityBps = (link: Link<Item>, fromMs: number, toMs: number): number => {
    let bytes = 0;
    for (let m = fromMs; m < toMs; m++) if (!link.isDownAt(m * 1000)) bytes += link.capacityAtMs(m);
    return (bytes * 8 * 1000) / Math.max(1, toMs - fromMs);
  };

  function takeSample(now: number): void {
    void now;
    const t = nextSampleUs / 1e6;
    const r0 = streams[0].rx.stats(0);
    samples.push({
      t,
      snd: streams.map((c) => c.sender.stats()),
      rxFcd: r0.fcdMs.mean,
      rxIfd: r0.ifdMs.mean,
      cap: up.map((l) => capacityBps(l, (t - 1) * 1000, t * 1000)),
    });
    for (const c of streams) c.targets.push(c.sender.targetBitrateBps());
    nextSampleUs += 1_000_000;
  }

  const heapEveryUs = opts.heapSampleS !== undefined && opts.heapSampleS > 0 ? Math.round(opts.heapSampleS * 1e6) : 0;
  const heap = heapEveryUs > 0 ? { sampler: heapSampler(), nextUs: heapEveryUs, samples: [] as Array<{ atS: number; usedBytes: number }> } : undefined;

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
          for (const g of unwrap(i, true, d.item, now)) streams[g.s].rEp.onDatagram(i, g.bytes);
        }
      }
      if ((down[i].nextEventUs() ?? Infinity) <= now) {
        for (const d of down[i].poll(now)) {
          for (const g of unwrap(i, false, d.item, now)) {
            const c = streams[g.s];
            if (!qoeFeedback && isQoe(g.bytes)) {
              c.qoeDropped++;
              continue;
            }
            c.sEp.onDatagram(i, g.bytes);
            c.sWake = Math.min(c.sWake, c.sEp.nextWakeUs());
          }
        }
      }
    }
    // SCTP timers (T3-rtx, delayed SACK) due now.
    for (const ch of channels) if ((ch.nextTimerUs() ?? Infinity) <= now) ch.onTimer(now);
    // Per-second sample (after the deliveries of that instant).
    if (now >= nextSampleUs) takeSample(now);
    if (now >= endUs) break;
    // 2. Camera frames.
    for (const c of streams) {
      if (c.nextFrameUs <= now) {
        // Camera ticks and frame ids differ once the encoder's frame-rate cap drops frames (src/adapt).
        c.cameraFrames++;
        c.nextFrameUs = c.s * 1000 + Math.round((c.cameraFrames * 1e6) / c.enc.fps);
        // Frame dropping before encoding when the path queues are too long (SenderEngine.shouldDropFrame).
        if (c.sender.shouldDropFrame(c.enc.keyframePending, c.enc.nextTemporalLayer)) continue;
        const fr = c.enc.nextFrame(now);
        if (fr.dropped) continue;
        const id = c.frameIndex++;
        c.sizes[id] = Math.max(24, fr.sizeBytes);
        c.refs[id] = fr.refDistance;
        c.sender.sendFrame({
          streamId: c.s,
          frameId: id,
          keyFrame: fr.keyFrame,
          captureUs: now,
          data: makeAnnexB(fr.sizeBytes, fr.keyFrame, id),
          codec: 'h264',
          ...(fr.temporalLayer !== undefined ? { temporalLayer: fr.temporalLayer } : {}),
          ...(fr.refDistance !== undefined ? { refDistance: fr.refDistance } : {}),
        });
        c.sWake = Math.min(c.sWake, c.sEp.nextWakeUs());
      }
    }
    // 3. Endpoint ticks.
    for (const c of streams) {
      if (c.sWake <= now) {
        c.sEp.tick();
        c.sWake = Math.max(c.sEp.nextWakeUs(), now + MIN_TICK_STEP_US);
      }
      if (c.rWake <= now) {
        c.rEp.tick();
        c.rWake = Math.max(c.rEp.nextWakeUs(), now + MIN_TICK_STEP_US);
      }
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
    for (const c of streams) {
      if (c.nextFrameUs < next) next = c.nextFrameUs;
      if (c.sWake < next) next = c.sWake;
      if (c.rWake < next) next = c.rWake;
    }
    clock.setUs(Math.max(next, now + 1));
    steps++;
  }

  return buildResult();

  function buildResult(): SimResult {
    const nSec = Math.floor(durationS);
    const perStream: SimStreamResult[] = streams.map((c) => {
      const q = streamQoe(c.decoded, c.frameIndex, endUs);
      const snd = c.sender.stats();
      const rs = c.rx.stats(c.s);
      const fz = freezeStats(c.decoded.map((f) => f.decodedUs));
      return {
        streamId: c.s,
        frames: q.frames,
        fps: q.fps,
        freezes: q.freezes,
        latencyMs: q.latencyMs,
        keyframeRequests: rs.keyframeRequestsSent,
        temporalLayerSkips: rs.temporalLayerSkips,
        framesOutOfOrder: q.framesOutOfOrder + c.outOfOrder,
        goodputBps: q.goodputBps,
        encoderTargetBps: { mean: Math.round(mean(c.targets)), last: Math.round(snd.targetBitrateBps) },
        fec: {
          overheadPct: round(snd.fecOverheadPct),
          utilizationPct: round(rs.fecUtilizationPct),
          packetsSent: snd.fecPacketsSent,
          recovered: rs.recoveredByFec,
        },
        nack: {
          nacksSent: rs.nacksSent,
          packetsNacked: rs.nackedPackets,
          retransmissionsSent: snd.retransmissionsSent,
          retransmissionsReceived: rs.retransmissionsReceived,
        },
        retransmissions: snd.retransmissionsSent,
        qoeFeedback: { sent: rs.qoeFeedbackSent, received: snd.qoeFeedbackReceived, droppedBySim: c.qoeDropped },
        decoderViolations: c.violations,
        keyframesSent: snd.keyframesSent,
        pushback: { framesDroppedBeforeEncode: snd.framesDroppedBeforeEncode, stalePacketsPurged: snd.stalePacketsPurged },
        freezeList: fz.list.slice(0, 50).map((f) => ({ atS: round(f.atUs / 1e6, 3), ms: Math.round(f.ms) })),
        adaptation: c.enc.adaptationStats(),
        targetChanges: c.targetChanges,
      };
    });
    const allDecoded = streams.flatMap((c) => c.decoded);
    const sum = (f: (s: SimStreamResult) => number) => perStream.reduce((a, s) => a + f(s), 0);
    const lat = nStreams === 1 ? perStream[0].latencyMs : streamQoe(allDecoded.slice().sort((a, b) => a.decodedUs - b.decodedUs), 0, endUs).latencyMs;
    const latMs = allDecoded.map((f) => (f.decodedUs - f.captureUs) / 1000);
    const fecSent = sum((s) => s.fec.packetsSent);
    const mediaSent = streams.reduce((a, c) => a + c.sender.stats().mediaPacketsSent, 0);
    const rxAll = streams.map((c) => c.rx.stats(c.s));
    const fecRx = rxAll.reduce((a, r) => a + r.fecPacketsReceived, 0);
    const fecUsedApprox = rxAll.reduce((a, r) => a + (r.fecUtilizationPct * r.fecPacketsReceived) / 100, 0);

    // Paths (all streams summed).
    const sndAll = streams.map((c) => c.sender.stats());
    const totalMedia = sndAll.reduce((a, s) => a + s.paths.reduce((b, p) => b + p.mediaPacketsSent, 0), 0);
    const paths: SimPathResult[] = scenario.paths.map((p, i) => {
      const ps = sndAll.map((s) => s.paths.find((x) => x.id === i)).filter((x) => x !== undefined);
      const rp = rxAll.map((r) => r.paths.find((x) => x.id === i)).filter((x) => x !== undefined);
      const ls = up[i].stats();
      const s = (f: (x: (typeof ps)[number]) => number) => ps.reduce((a, x) => a + f(x), 0);
      const rpFecRx = rp.reduce((a, x) => a + x.fecPacketsReceived, 0);
      const rpFecUsed = rp.reduce((a, x) => a + (x.fecUtilizationPct * x.fecPacketsReceived) / 100, 0);
      const media = s((x) => x.mediaPacketsSent);
      return {
        id: i,
        name: p.name,
        packetsSent: s((x) => x.packetsSent),
        bytesSent: s((x) => x.bytesSent),
        mediaPacketsSent: media,
        sharePct: round(totalMedia > 0 ? (100 * media) / totalMedia : 0),
        rttMs: round(ps.length ? s((x) => x.rttMs) / ps.length : 0),
        lossPct: round(ps.length ? s((x) => x.lossPct) / ps.length : 0, 2),
        rateBps: Math.round(s((x) => x.rateBps)),
        goodputBps: Math.round(s((x) => x.goodputBps)),
        fecPacketsSent: s((x) => x.fecPacketsSent),
        retransmissionsSent: s((x) => x.retransmissionsSent),
        probesSent: s((x) => x.probesSent),
        pacerDropped: s((x) => x.pacerDropped),
        fecUtilizationPct: round(rpFecRx > 0 ? (100 * rpFecUsed) / rpFecRx : 0),
        latePackets: rp.reduce((a, x) => a + x.latePackets, 0),
        meanCapacityBps: Math.round(mean(samples.map((x) => x.cap[i]))),
        meanSendRateBps: Math.round((s((x) => x.bytesSent) * 8) / durationS),
        linkDrops: { queue: ls.dropped.queue, loss: ls.dropped.loss, blackhole: ls.dropped.blackhole },
      };
    });

    // Per-second series.
    const qoeSec = streams.map((c) => perSecondQoe(c.decoded, nSec));
    const allFz = streams.map((c) => freezeStats(c.decoded.map((f) => f.decodedUs)).list);
    const perSecond: SimPerSecond[] = samples.slice(0, nSec).map((smp, k) => {
      const prev = k > 0 ? samples[k - 1] : undefined;
      const fzUpTo = allFz.reduce((a, l) => a + l.filter((f) => f.atUs < smp.t * 1e6).length, 0);
      const lat0 = qoeSec[0][k];
      return {
        t: smp.t,
        fps: qoeSec.reduce((a, q) => a + q[k].fps, 0),
        framesDecoded: streams.reduce((a, c) => a + c.decoded.filter((f) => f.decodedUs < smp.t * 1e6).length, 0),
        latencyP50Ms: lat0.latencyP50Ms,
        latencyP95Ms: lat0.latencyP95Ms,
        targetBitrateBps: Math.round(smp.snd.reduce((a, s) => a + s.targetBitrateBps, 0)),
        freezeCount: fzUpTo,
        fcdMeanMs: round(smp.rxFcd, 2),
        ifdMeanMs: lat0.ifdMeanMs,
        paths: scenario.paths.map((_, i) => {
          const cur = smp.snd.map((s) => s.paths.find((x) => x.id === i)).filter((x) => x !== undefined);
          const before = prev ? prev.snd.map((s) => s.paths.find((x) => x.id === i)).filter((x) => x !== undefined) : [];
          const cs = (f: (x: (typeof cur)[number]) => number, l = cur) => l.reduce((a, x) => a + f(x), 0);
          return {
            id: i,
            capacityBps: Math.round(smp.cap[i]),
            sendRateBps: Math.round(cs((x) => x.sendRateBps)),
            rateBps: Math.round(cs((x) => x.rateBps)),
            rttMs: round(cur.length ? cs((x) => x.rttMs) / cur.length : 0),
            lossPct: round(cur.length ? cs((x) => x.lossPct) / cur.length : 0, 2),
            mediaPackets: cs((x) => x.mediaPacketsSent) - cs((x) => x.mediaPacketsSent, before),
            retransmissions: cs((x) => x.retransmissionsSent) - cs((x) => x.retransmissionsSent, before),
            pacerQueuedBytes: cs((x) => x.queuedBytes),
            up: cur.some((x) => x.up),
            enabled: cur.some((x) => x.enabled),
          };
        }),
      };
    });

    const framesSum = { sent: sum((s) => s.frames.sent), decoded: sum((s) => s.frames.decoded), dropped: sum((s) => s.frames.dropped) };
    const fzAll = perStream.map((s) => s.freezes);
    return {
      version: 1,
      scenario: scenario.name,
      label: opts.label ?? (opts.scheduler === 'single' ? `single:${opts.singlePath}` : opts.scheduler),
      scheduler: opts.scheduler,
      ...(opts.singlePath !== undefined ? { singlePath: opts.singlePath } : {}),
      fecPolicy: opts.fec,
      qoeFeedback,
      seed: opts.seed,
      durationS,
      streams: nStreams,
      camera: { width: streams[0].enc.width, height: streams[0].enc.height, fps: streams[0].enc.fps },
      frames: framesSum,
      fps: round(sum((s) => s.fps) / nStreams, 2), // mean per stream
      freezes: { count: sum((s) => s.freezes.count), totalMs: sum((s) => s.freezes.totalMs), maxMs: Math.max(...fzAll.map((f) => f.maxMs)) },
      latencyMs: lat,
      keyframeRequests: sum((s) => s.keyframeRequests),
      temporalLayerSkips: sum((s) => s.temporalLayerSkips),
      framesOutOfOrder: sum((s) => s.framesOutOfOrder),
      goodputBps: sum((s) => s.goodputBps),
      encoderTargetBps: { mean: sum((s) => s.encoderTargetBps.mean), last: sum((s) => s.encoderTargetBps.last) },
      fec: {
        overheadPct: round(mediaSent > 0 ? (100 * fecSent) / mediaSent : 0),
        utilizationPct: round(fecRx > 0 ? (100 * fecUsedApprox) / fecRx : 0),
        packetsSent: fecSent,
        recovered: sum((s) => s.fec.recovered),
      },
      nack: {
        nacksSent: sum((s) => s.nack.nacksSent),
        packetsNacked: sum((s) => s.nack.packetsNacked),
        retransmissionsSent: sum((s) => s.nack.retransmissionsSent),
        retransmissionsReceived: sum((s) => s.nack.retransmissionsReceived),
      },
      retransmissions: sum((s) => s.retransmissions),
      decoderViolations: sum((s) => s.decoderViolations),
      latencyCdfMs: latencyCdf(latMs),
      perStream,
      paths,
      perSecond,
      ...(heap ? { heap: { gc: heap.sampler.collected, samples: heap.samples } } : {}),
      sim: {
        steps,
        datagramsUp,
        datagramsDown,
        datachannel: dcModel,
        ...(dcModel === 'sctp' ? { sctp: chUp.map((c, i) => ({ up: c.stats(), down: chDown[i].stats() })) } : {}),
        qoeDropped: streams.reduce((a, c) => a + c.qoeDropped, 0),
        keyframeRequestsPatched: streams.reduce((a, c) => a + c.kfPatched, 0),
      },
    };
  }
}

/**
 * The scheduler by name, except 'single': src/sched/single.ts reports every
 * path as enabled, so SenderEngine.targetBitrateBps() would sum the GCC rate
 * of the unused path(s) (which never changes without traffic) into the
 * encoder target and overload the single path. The simulator wraps it so
 * only the used path counts (`singlePathTargetFix`, default true).
 */
function makeScheduler(opts: SimOptions): Scheduler | SchedulerName {
  if (opts.scheduler === 'converge' && opts.converge) return new ConvergeScheduler(opts.converge);
  if (opts.scheduler !== 'single' || opts.singlePathTargetFix === false) return opts.scheduler;
  const inner = createScheduler('single', { singlePath: opts.singlePath });
  const path = opts.singlePath;
  return {
    name: 'single',
    schedule: (packets, paths, nowUs) => inner.schedule(packets, paths, nowUs),
    onQoeFeedback: (fb, nowUs) => inner.onQoeFeedback(fb, nowUs),
    isEnabled: (id) => id === path,
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
