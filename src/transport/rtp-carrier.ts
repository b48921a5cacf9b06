/**
 * The RTP carrier: a {@link DatagramCarrier} that carries a path's datagrams
 * inside encoded VP8 frames of a tiny video track on the path's own
 * RTCPeerConnection, through `RTCRtpScriptTransform` (W3C WebRTC Encoded
 * Transform), so that they need no acknowledgement on the reverse direction
 * (src/transport/carrier.ts). Built after the feasibility study in Chromium
 * (tools/experiments/rtp-carrier/README.md, "Sketch: an RTP carrier
 * transport"); loaded lazily (`import()`) by {@link SimplePeerPath} when its
 * option `rtpCarrier` is set (MultipathCall sets it by default, attach
 * 'stall'; `rtpCarrier: false` turns it off).
 *
 * Each path's carrier tells the remote peer it exists once the path
 * connects (the signal `{ rtpCarrier: 1 }`, consumed by the remote
 * SimplePeerPath: `remoteRtpCarrier`). With attach 'stall' a carrier neither
 * offers nor asks for its transceiver before that, so a peer without one
 * (rtpCarrier off, or Firefox / Safari: {@link rtpCarrierUnsupported}) is
 * never offered video.
 *
 * Set-up, on both peers of a path:
 * - one video transceiver, `sendrecv`, VP8 only (`setCodecPreferences`,
 *   without RTX), negotiated after the path's first negotiation (the video
 *   m-section then joins the datachannel's BUNDLE group, one ICE transport,
 *   no new candidates: path pinning holds). When (`attach`):
 *   - 'connect' (default of this class, also for `rtpCarrier: true`; both
 *     peers must opt in, it is not gated): the initiator adds
 *     it when this chunk has loaded, and renegotiates when its first offer
 *     went out without it (the usual case: measured in Chromium 156, even a
 *     cached chunk's `import()` resolves after simple-peer's first
 *     `createOffer`); with `connectDelayMs`, that long after ICE first
 *     connects instead (as on a stall, below).
 *   - 'stall': on demand. Until the path's stall fallback calls
 *     {@link RtpCarrier.wake} (its datachannel stalled) the peer connection
 *     holds no video, and no worker or track exists: an idle carrier costs
 *     nothing. On wake the initiator adds the transceiver and renegotiates;
 *     the answerer asks the initiator to (simple-peer's `transceiverRequest`
 *     signal, again after 5 s if nothing came, at most 3 times). Either side
 *     may be the stalled sender; the offer and answer travel over the
 *     signalling channel, not the stalled path. Every video transceiver the
 *     initiator's peer connection gets is the carrier's (a second request
 *     gets the same one). An initiator without a carrier (it did not opt in,
 *     or its browser cannot run one) refuses the request
 *     (SimplePeerPath.signal: counted in `badSignalsIn`, an 'error' event):
 *     the answerer's carrier then never opens. The fallback keeps using the datachannel until the
 *     carrier is `open` (130-900 ms after the stall was found, in the
 *     browser benchmark on AT&T).
 *
 *   Measured in Chromium 156 (`npm run bench:browser`, interleaved runs on
 *   a 2-core machine loaded by other jobs, load 5-10; docs/results.md, stop
 *   34), with the estimate floor (`minBitrateBps`) and the stall fallback's
 *   stale-ceiling pacing: AT&T alone (`att-tmobile` single:0, 60 s), frozen
 *   s: off 19.0 (11 runs, 17.6-21.3), 'connect' 13.4 (7 runs, 10.5-20.5),
 *   'stall' 12.8 (6 runs, 11.5-17.4); Chromium's own WebRTC 12.7 (4 runs,
 *   10.6-14.5). Without the floor: 'connect' 16.5, 'stall' 19.9 (5 / 4
 *   runs). T-Mobile alone (`carriers` single:1): frozen off 3.4, 'connect'
 *   3.7, 'stall' 3.9 s (3 runs each, ranges overlap), goodput 0.47-1.48 Mbps
 *   in every arm (noise). `carriers` converge (20 s): off 2.7, 'connect'
 *   2.2, 'stall' 2.1 s (2 runs each). Hence 'stall' as MultipathCall's
 *   default (nothing negotiated where no path stalls).
 *
 *   Before (stop 33), run to run noise was about as large as any difference:
 *   - T-Mobile alone (`carriers` single:1, 60 s), goodput: off 1.29 / 1.57
 *     / 0.99 / 1.12, 'connect' 1.14 / 2.00 / 1.26 / 1.00, 'stall' 1.74 /
 *     1.27 / 1.37 / 1.54 Mbps. The halving seen once (2.29 vs 1.10) did not
 *     repeat: no idle cost could be told from the noise.
 *   - AT&T alone (`att-tmobile` single:0, 60 s), frozen s (in downlink-only
 *     outages): off 18.9 / 19.3 / 19.5 (8.4 each); 'connect' 15.4 / 12.0 /
 *     26.4 / 12.6 / 13.4 / 15.6 (mean 4.6); 'connect' with connectDelayMs
 *     3000 17.2 / 18.7 (mean 6.6); 'stall' 16.7 / 20.9 / 17.9 / 17.2 / 13.0
 *     / 18.5 / 19.8 / 20.3 (mean 6.6).
 *   - `carriers` converge (20 s, so the call's start weighs), goodput: off
 *     2.05 / 0.66 / 1.65 / 1.48, 'connect' 1.13 / 0.39 / 0.71, with
 *     connectDelayMs 3000 1.38 / 0.99 / 1.01, 'stall' 2.32 / 1.92 / 0.69 /
 *     1.73 Mbps: the renegotiation at connect may cost the start-up's
 *     bandwidth probes (their results were missing in the worst runs of
 *     every mode, off included).
 *   The worst AT&T runs of every mode had Chromium's estimate for the
 *   carrier (its rate ceiling) left at 40-90 kbps after the uplink outage:
 *   an idle carrier gets no feedback, so its estimate stays there until the
 *   next outage (hence the floor, "Rate" below).
 *
 *   The answerer takes the transceiver the remote offer made and turns it
 *   `sendrecv` before its answer (or asks the initiator to renegotiate when
 *   its answer went out first). Were the transceiver in the first offer,
 *   Chromium's default bundle policy ('balanced') would gather candidates
 *   for the video m-section too until the answer accepts BUNDLE; they pass
 *   the path's candidate filter like the others;
 * - its sender's track: a 16x16 `MediaStreamTrackGenerator` (Chromium's
 *   breakout box) that gets a frame whenever the queue holds data, at most
 *   `maxFrameRate` per second (Chromium only: {@link rtpCarrierUnsupported});
 * - both transforms run in one module worker per carrier
 *   (src/transport/rtp-carrier-worker.ts), which keeps the send queue.
 *
 * Chromium's own repair is off: no RTX in the codec preferences, and the
 * `nack`, `nack pli` and `ccm fir` feedback removed from the video m-section
 * of every offer and answer (`withoutVideoRepair`). Why: its NACKs travel on
 * the reverse direction, which is what is failing when a path needs this
 * carrier; its RTX padding re-sends recent frames (duplicates, rate outside
 * our scheduler's view); after an outage it would retransmit stale frames;
 * our own NACK and FEC repair end to end on any path. The price: one lost
 * RTP packet loses its whole frame, so frames carry at most `maxDatagrams`
 * (default 2) datagrams (README answer 2: 79 % of frames at 5 % packet loss
 * without repair, 3-4 RTP packets per frame there).
 *
 * Rate: Chromium's pacer sends at about its GCC estimate whatever we queue
 * (README answer 3); {@link RtpCarrier.rateCeilingBps} is that estimate
 * (`availableOutgoingBitrate` of the selected candidate pair, polled once a
 * second), and the caller must keep its offered rate below it. Send
 * opportunities are frames: at most `maxFrameRate` (120/s) x `maxDatagrams`.
 * After an uplink outage that estimate falls to 30-90 kbps, and an idle
 * carrier gets no feedback to raise it: measured in the browser benchmark on
 * AT&T (docs/results.md, stop 33). The later switches that found 300-340
 * kbps there found Chromium's start rate (300 kbps), to which it resets its
 * estimate when the route's `connected` flag changes (libwebrtc
 * call/rtp_transport_controller_send.cc, IsRelevantRouteChange /
 * OnNetworkRouteChanged): probably ICE went `disconnected` in those runs'
 * uplink outage (not recorded); in the others it stayed low. So
 * every offer and answer the carrier makes carries a floor for that
 * estimate, `minBitrateBps` (default 150 kbps, what a VGA camera's smallest regular step,
 * 320x240@30, makes at any lower target (tools/capture-frame-sizes.ts):
 * `x-google-min-bitrate`, rtp-carrier-frame.ts `withoutVideoRepair`), which
 * the remote peer's Chromium applies to what it sends (it reads the send
 * codec's parameters from the remote description); both peers run the
 * carrier, so both directions get it. Measured (same benchmark, one run):
 * the ceiling stayed >= 150 kbps through the outages where it had fallen to
 * 30-60 kbps, and no datagram was refused at it. The path's peer
 * connection carries no other RTP, so the floor binds the carrier alone;
 * our own congestion control still sets what we offer.
 * Chromium's encoder drops some of the carrier's frames at a low target
 * (framesEncoded 50-70 % of the frames pushed at a 30-100 kbps target, in
 * the same runs): fewer send opportunities, not fewer datagrams (each frame
 * takes up to `maxDatagrams` of them).
 *
 * Limits (Chromium behaviour we rely on, not specified; README "Risks"): the
 * receive transform sits after frame assembly, so a lost frame does not hold
 * later ones; ICE stops sending ~5 s after the reverse direction goes
 * completely dead (`open` turns false with ICE `disconnected`); a page timer
 * paces the frames, so a background tab's throttled timers slow the carrier.
 * The path's peer connection must carry no other video.
 */
import { Emitter } from '../core/emitter.js';
import type { CarrierSenderStats, DatagramCarrier } from './carrier.js';
import { carrierCodecs, MAX_CARRIED_DATAGRAM_BYTES, withoutVideoRepair } from './rtp-carrier-frame.js';
import type { RtpCarrierWorkerStats } from './rtp-carrier-worker.js';
import { selectedPairFromStats, type StatsEntry } from './selected-pair.js';
import type { SimplePeerPath } from './simple-peer-path.js';
import type { PathTransportEvents } from './types.js';

export type { RtpCarrierWorkerStats } from './rtp-carrier-worker.js';

/** Options of an {@link RtpCarrier} (all optional). */
export interface RtpCarrierOptions {
  /**
   * When the carrier's video transceiver is negotiated (see the module doc).
   * 'connect' (default here; MultipathCall's default is 'stall'): right after the path connects (one renegotiation
   * at connect). 'stall': only when the path's stall fallback first finds
   * the datachannel stalled ({@link RtpCarrier.wake}: one renegotiation
   * then, over the signalling channel, not the stalled path); until then the
   * path's peer connection holds no video, no worker and no track.
   */
  attach?: 'connect' | 'stall';
  /**
   * With attach 'connect': how long after ICE first connects the initiator
   * negotiates the carrier (ms; default 0: at once, when this chunk has
   * loaded). A delay (e.g. 3000) keeps the renegotiation and the worker's
   * start out of the call's start-up, where our initial bandwidth probes go
   * out (see the module doc for what it measured).
   */
  connectDelayMs?: number;
  /** Bound on the bytes queued and not yet in a frame (default 262 144); send() beyond it returns false. */
  maxQueuedBytes?: number;
  /** Bound on the datagrams queued (default 1024). */
  maxQueuedDatagrams?: number;
  /** Datagrams queued longer than this (ms) are dropped, counted (default 1000). */
  maxQueueDelayMs?: number;
  /** Most datagrams in one frame (default 2: a lost RTP packet loses the whole frame). */
  maxDatagramsPerFrame?: number;
  /** Most bytes of one frame when it holds more than one datagram (default 2600). */
  maxFrameBytes?: number;
  /** Most frames pushed into the track per second (default 120; README answer 3, `gen120`). */
  maxFrameRate?: number;
  /** Period of the `getStats()` poll for `availableOutgoingBitrate`, ms (default 1000). */
  statsIntervalMs?: number;
  /**
   * Floor of Chromium's bandwidth estimate for the path's peer connection
   * (bps; default 150 000, what Chromium's encoder makes at 320x240@30 under
   * any lower target, the floor the datachannel's encoder target had before its
   * ladder's floor steps; 0 = none): `x-google-min-bitrate` on
   * the carrier's VP8 payload type in every offer and answer (see the module
   * doc, "Rate"). That parameter is in whole kbps: a value in (0, 1000) is a
   * bad option (RangeError: {@link attachRtpCarrier} returns it as the reason
   * the path has no carrier).
   */
  minBitrateBps?: number;
}

/** Counters of one {@link RtpCarrier} (page side; the worker's are {@link RtpCarrier.workerStats}). */
export interface RtpCarrierCounters {
  /** send() calls accepted / refused (not open, bad size, queue bound). */
  sent: number;
  sendRefused: number;
  /** Datagrams the worker dropped from its queue (stale or over its bound). */
  queueDrops: number;
  /** Frames pushed into the track. */
  framesPushed: number;
  /** Frames the track source refused (its writer had no room). */
  framesNotPushed: number;
  /** Datagrams delivered to 'message' listeners. */
  received: number;
  /** Renegotiations asked of simple-peer (the transceiver missed an offer or an answer). */
  renegotiations: number;
  /** Times the carrier was asked for while not negotiated ({@link RtpCarrier.wake} that acted). */
  wakes: number;
  /** Errors caught: worker, replaceTrack, getStats, listeners. */
  errors: number;
}

/** The simple-peer members the carrier uses (simple-peer-light v9). */
export interface CarrierPeer {
  _pc?: RTCPeerConnection | null;
  readonly destroyed: boolean;
  negotiate(): void;
  /** The initiator adds a transceiver and renegotiates; the other side asks the initiator to (a `transceiverRequest` signal). */
  addTransceiver(kind: string, init?: RTCRtpTransceiverInit): void;
  // biome-ignore lint/suspicious/noExplicitAny: simple-peer's event payloads differ per event
  on(event: string, cb: (...args: any[]) => void): unknown;
}

type Transformable = { transform: unknown };
type ScriptTransformCtor = new (worker: Worker, options?: unknown) => unknown;
type TrackGeneratorCtor = new (init: { kind: 'video' }) => MediaStreamTrack & { writable: WritableStream<VideoFrame> };

/** Most renegotiations one carrier asks for (the remote may not have opted in). */
const MAX_RENEGOTIATIONS = 2;
/** Most {@link RtpCarrier.wake} requests that act, and the least time between two (ms): a lost request is asked again. */
const MAX_WAKES = 3;
const WAKE_RETRY_MS = 5000;
/** A worker arrival stamp older than this (µs) is clamped (as src/transport/datachannel-worker.ts). */
const MAX_ARRIVAL_AGE_US = 2_000_000;
/**
 * A carrier whose worker took nothing from its queue (no frame out, no drop)
 * for this long (ms) while at least {@link STUCK_FRAMES} frames were pushed
 * has stopped carrying: it fails (`open` false for good), so the stall
 * fallback leaves it. Seen once in ~20 browser benchmark runs: the encoder
 * sent its own tiny frames for 43 s (framesSent 4003, 45 bytes per packet)
 * while the worker's transform took none of them and the page kept pushing.
 * The failure is permanent for the call, by choice: a reopening after an
 * ICE-down spell already restarts the count (a closed spell is no stuck
 * worker), so what fails here failed with ICE up, in the transform chain,
 * which nothing we do resets (the transforms stay attached to the
 * transceiver; a new worker would need a new transceiver and a
 * renegotiation). Re-arming would switch the fallback back onto a dead
 * carrier at every later stall, each switch costing a key frame and the
 * stall's frames; failed, the path keeps its datachannel alone (the
 * fallback counts its stalls in `stallsWithoutCarrier`) and `failure` says why.
 */
const STUCK_MS = 5000;
const STUCK_FRAMES = 100;
const SIDE = 16;

/**
 * Why this browser cannot run the RTP carrier, or undefined when it can:
 * it needs RTCPeerConnection, `RTCRtpScriptTransform` with a `transform`
 * member on senders and receivers, module Workers, a VP8 video codec, and a
 * track source (`MediaStreamTrackGenerator` + `VideoFrame`: Chromium's;
 * Firefox and Safari, where the carrier was never tried, are screened out
 * here). Never throws.
 */
export function rtpCarrierUnsupported(): string | undefined {
  try {
    const g = globalThis as unknown as Record<string, unknown>;
    if (typeof g.RTCPeerConnection !== 'function') return 'no RTCPeerConnection';
    if (typeof g.RTCRtpScriptTransform !== 'function') return 'no RTCRtpScriptTransform (WebRTC encoded transform)';
    if (!('transform' in RTCRtpSender.prototype) || !('transform' in RTCRtpReceiver.prototype)) return 'RTCRtpSender/RTCRtpReceiver have no transform';
    if (typeof g.Worker !== 'function') return 'no Worker';
    const caps = RTCRtpReceiver.getCapabilities?.('video');
    if (!caps || carrierCodecs(caps.codecs).length === 0) return 'no VP8 codec';
    // Chromium's breakout box: the one track source the carrier was measured with. It also screens out the
    // browsers where the carrier was never tried (Firefox, Safari: the VP8 packetizer and depacketizer
    // behaviour it relies on is Chromium's, tools/experiments/rtp-carrier/README.md).
    if (typeof g.MediaStreamTrackGenerator === 'function' && typeof g.VideoFrame === 'function') return undefined;
    return 'no MediaStreamTrackGenerator (the RTP carrier runs in Chromium only)';
  } catch (e) {
    return `feature detection failed: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/** The carrier's video source: a frame on demand. */
interface FrameSource {
  track: MediaStreamTrack;
  /** Push one frame; false when the source had no room. */
  push(): boolean;
  stop(): void;
}

function makeSource(): FrameSource {
  const Gen = (globalThis as unknown as { MediaStreamTrackGenerator: TrackGeneratorCtor }).MediaStreamTrackGenerator;
  const gen = new Gen({ kind: 'video' });
  const writer = gen.writable.getWriter();
  const pixels = new Uint8Array((SIDE * SIDE * 3) / 2); // I420, black enough
  let n = 0;
  return {
    track: gen,
    push() {
      if (writer.desiredSize !== null && writer.desiredSize <= 0) return false;
      pixels[n++ % pixels.length] ^= 0xff; // never two identical frames
      const f = new VideoFrame(pixels, { format: 'I420', codedWidth: SIDE, codedHeight: SIDE, timestamp: Math.round(performance.now() * 1000) });
      writer.write(f).catch(() => f.close());
      return true;
    },
    stop() {
      writer.close().catch(() => undefined);
      gen.stop();
    },
  };
}

function posInt(v: number | undefined, dflt: number, name: string): number {
  if (v === undefined) return dflt;
  if (!Number.isFinite(v) || v <= 0) throw new RangeError(`RtpCarrier: ${name} must be > 0, got ${v}`);
  return v;
}

/**
 * One path's RTP carrier (see the module doc). Made by {@link attachRtpCarrier}.
 */
export class RtpCarrier implements DatagramCarrier {
  readonly counters: RtpCarrierCounters = { sent: 0, sendRefused: 0, queueDrops: 0, framesPushed: 0, framesNotPushed: 0, received: 0, renegotiations: 0, wakes: 0, errors: 0 };
  /** Why the carrier stopped for good (worker error, a set-up step the browser refused), if it did. */
  failure: string | undefined;
  private readonly events = new Emitter<{ message: (bytes: Uint8Array, ageUs?: number) => void }>({ onListenerError: () => this.counters.errors++ });
  /** The worker and the track source: made when the transceiver is (at connect, or on the first stall). */
  private worker: Worker | undefined;
  private source: FrameSource | undefined;
  private transceiver: RTCRtpTransceiver | undefined;
  private readonly running = { send: false, recv: false };
  private queued = 0;
  private queuedDatagrams = 0;
  private closed = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastPushMs = -Infinity;
  private wakeMs = -Infinity;
  private readonly remoteReady: (() => boolean) | undefined;
  /** When the worker last took from the queue (or the queue last filled from empty), and framesPushed then. */
  private progressMs = 0;
  /** The last pump found the carrier closed (see {@link pump}). */
  private closedSpell = false;
  private pushedAtProgress = 0;
  private connectTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly minIntervalMs: number;
  private readonly maxQueuedBytes: number;
  private readonly maxQueuedDatagrams: number;
  private readonly cfg: Record<string, unknown>;
  private readonly statsMs: number;
  private statsTimer: ReturnType<typeof setInterval> | undefined;
  private ceiling: number | undefined;
  private sender: CarrierSenderStats | undefined;
  private readonly statsWaiters: Array<(s: RtpCarrierWorkerStats & { queued: number; queuedBytes: number }) => void> = [];

  /**
   * @throws RangeError on a bad option; DOMException / TypeError when the
   *   browser refuses a step (use {@link attachRtpCarrier}, which never throws).
   */
  constructor(
    private readonly peer: CarrierPeer,
    private readonly pc: RTCPeerConnection,
    private readonly initiator: boolean,
    opts: RtpCarrierOptions = {},
    remoteReady?: () => boolean,
  ) {
    // attach 'stall': wake() acts only once the remote peer said it has a carrier (when the owner can tell).
    this.remoteReady = opts.attach === 'stall' ? remoteReady : undefined;
    if (opts.attach !== undefined && opts.attach !== 'connect' && opts.attach !== 'stall') throw new RangeError(`RtpCarrier: attach must be 'connect' or 'stall', got ${String(opts.attach)}`);
    this.maxQueuedBytes = posInt(opts.maxQueuedBytes, 262_144, 'maxQueuedBytes');
    this.maxQueuedDatagrams = Math.floor(posInt(opts.maxQueuedDatagrams, 1024, 'maxQueuedDatagrams'));
    this.minIntervalMs = 1000 / posInt(opts.maxFrameRate, 120, 'maxFrameRate');
    this.cfg = {
      t: 'cfg',
      maxQueueBytes: this.maxQueuedBytes,
      maxQueueDatagrams: this.maxQueuedDatagrams,
      maxQueueDelayMs: posInt(opts.maxQueueDelayMs, 1000, 'maxQueueDelayMs'),
      maxDatagrams: Math.floor(posInt(opts.maxDatagramsPerFrame, 2, 'maxDatagramsPerFrame')),
      maxFrameBytes: posInt(opts.maxFrameBytes, 2600, 'maxFrameBytes'),
    };
    this.statsMs = posInt(opts.statsIntervalMs, 1000, 'statsIntervalMs');
    const minBps = opts.minBitrateBps === 0 ? 0 : posInt(opts.minBitrateBps, 150_000, 'minBitrateBps');
    // x-google-min-bitrate is in kbps: a floor under 1 kbps would be left out of the SDP.
    if (minBps > 0 && minBps < 1000) throw new RangeError(`RtpCarrier: minBitrateBps must be 0 (none) or >= 1000, got ${minBps}`);
    const minKbps = minBps / 1000;
    // Offers and answers made from now on carry no NACK / PLI / FIR for video, and the estimate's floor.
    for (const k of ['createOffer', 'createAnswer'] as const) {
      const make = pc[k].bind(pc) as (o?: RTCOfferOptions) => Promise<RTCSessionDescriptionInit>;
      (pc as unknown as Record<string, unknown>)[k] = (o?: RTCOfferOptions) => make(o).then((d) => (d.sdp ? { type: d.type, sdp: withoutVideoRepair(d.sdp, minKbps) } : d));
    }
    if (initiator) {
      // Every video transceiver of the initiator is the carrier's: the one wake() adds and the one the
      // remote asks for (simple-peer's `transceiverRequest` lands in pc.addTransceiver('video', ...)).
      // Never throws (simple-peer would destroy the peer): a refused step is the carrier's failure.
      const add = pc.addTransceiver.bind(pc);
      pc.addTransceiver = (what: MediaStreamTrack | string, init?: RTCRtpTransceiverInit): RTCRtpTransceiver => {
        if ((typeof what === 'string' ? what : what.kind) !== 'video') return add(what, init);
        if (this.transceiver) return this.transceiver;
        try {
          const source = this.bringUp();
          this.adopt(add(source.track, { direction: 'sendrecv' }));
          return this.transceiver as unknown as RTCRtpTransceiver;
        } catch (e) {
          this.fail(e);
          return add('video', { direction: 'inactive' });
        }
      };
    } else pc.addEventListener('track', (e) => !this.transceiver && e.track.kind === 'video' && this.adoptSafely(e.transceiver));
    pc.addEventListener('signalingstatechange', () => this.checkNegotiated());
    peer.on('close', () => this.close());
    if (opts.attach === 'stall') return;
    const delayMs = opts.connectDelayMs ?? 0;
    if (!(Number.isFinite(delayMs) && delayMs >= 0)) throw new RangeError(`RtpCarrier: connectDelayMs must be >= 0, got ${delayMs}`);
    if (delayMs > 0) {
      // 'connect', after the call's start-up: the initiator wakes the carrier `delayMs` after ICE first connects.
      if (!initiator) return;
      const arm = () => {
        const ice = pc.iceConnectionState;
        if (this.connectTimer !== undefined || this.closed || (ice !== 'connected' && ice !== 'completed')) return;
        this.connectTimer = setTimeout(() => this.wake(), delayMs);
      };
      pc.addEventListener('iceconnectionstatechange', arm);
      arm();
      return;
    }
    // At connect: the worker and the source now, the transceiver on the initiator now (the answerer
    // takes the one the offer brings); a refused step is thrown to attachRtpCarrier.
    try {
      this.bringUp();
      if (initiator) {
        pc.addTransceiver('video');
        if (this.failure) throw new Error(this.failure);
      } else {
        const made = pc.getTransceivers().find((t) => t.receiver.track?.kind === 'video' && !(t as { stopped?: boolean }).stopped);
        if (made) this.adopt(made);
      }
    } catch (e) {
      this.close();
      throw e;
    }
    if (pc.signalingState === 'stable' && pc.currentRemoteDescription) this.checkNegotiated();
  }

  /** True once negotiated `sendrecv`, both transforms run and ICE is connected; false after close(). */
  get open(): boolean {
    if (this.closed || !this.running.send || !this.running.recv || this.failure) return false;
    const ice = this.pc.iceConnectionState;
    return this.transceiver?.currentDirection === 'sendrecv' && (ice === 'connected' || ice === 'completed');
  }

  /**
   * The path needs the carrier (its stall fallback found the datachannel
   * stalled): when no transceiver is negotiated yet, the initiator adds it and
   * renegotiates, the other side asks the initiator to (simple-peer's
   * `transceiverRequest` signal), at most 3 times 5 s apart (a lost request).
   * Cheap when there is nothing to do; never throws.
   */
  wake(): void {
    if (this.transceiver || this.closed || this.failure || this.counters.wakes >= MAX_WAKES || this.peer.destroyed || this.remoteReady?.() === false) return;
    const now = performance.now();
    if (now - this.wakeMs < WAKE_RETRY_MS) return;
    this.wakeMs = now;
    this.counters.wakes++;
    try {
      this.peer.addTransceiver('video', { direction: 'sendrecv' });
    } catch (e) {
      this.fail(e);
    }
  }

  /**
   * Queue one datagram (1..65535 bytes; copied). @returns false (counted in
   * `sendRefused`) when not open, the size is bad, or a queue bound (bytes,
   * datagrams) would be exceeded. Never throws.
   */
  send(bytes: Uint8Array): boolean {
    const n = bytes?.length;
    const worker = this.worker;
    if (!worker || !this.open || !(n >= 1 && n <= MAX_CARRIED_DATAGRAM_BYTES) || this.queued + n > this.maxQueuedBytes || this.queuedDatagrams >= this.maxQueuedDatagrams) {
      this.counters.sendRefused++;
      return false;
    }
    const copy = bytes.slice().buffer;
    try {
      worker.postMessage({ t: 'send', d: copy }, [copy]);
    } catch {
      this.counters.errors++;
      this.counters.sendRefused++;
      return false;
    }
    if (this.queued === 0) this.progressed();
    this.queued += n;
    this.queuedDatagrams++;
    this.counters.sent++;
    if (this.timer === undefined) this.pump();
    return true;
  }

  /** Bytes accepted by send() that the worker has not yet put into a frame or dropped. */
  queuedBytes(): number {
    return this.queued;
  }

  /** Chromium's GCC estimate for the path (bps, `availableOutgoingBitrate`), polled every `statsIntervalMs` once the transceiver exists; undefined before the first value. */
  rateCeilingBps(): number | undefined {
    return this.ceiling;
  }

  /** The carrier's video sender as of the last `getStats()` poll (outbound-rtp, the selected pair's estimate); undefined before one. */
  senderStats(): CarrierSenderStats | undefined {
    return this.sender && { ...this.sender, framesPushed: this.counters.framesPushed };
  }

  /** A datagram arrived; `ageUs` = time since the worker saw its frame (µs, clamped to [0, 2 s]). */
  on(event: 'message', cb: (bytes: Uint8Array, ageUs?: number) => void): () => void {
    return this.events.on(event, cb);
  }

  /** The worker's counters (frames, bundles, drops, CPU µs); undefined before the worker exists, after close, or when it does not answer within 2 s. */
  workerStats(): Promise<(RtpCarrierWorkerStats & { queued: number; queuedBytes: number }) | undefined> {
    const worker = this.worker;
    if (this.closed || !worker) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(undefined), 2000);
      this.statsWaiters.push((s) => {
        clearTimeout(t);
        resolve(s);
      });
      worker.postMessage({ t: 'stats' });
    });
  }

  /** Stop the track, the worker and the timers (idempotent); the transceiver stays negotiated but sends nothing. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.statsTimer);
    clearTimeout(this.connectTimer);
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    try {
      this.source?.stop();
    } catch {
      /* already stopped */
    }
    this.worker?.terminate();
    this.queued = 0;
    this.queuedDatagrams = 0;
  }

  /**
   * The worker, the track source and the stats poll (once).
   * @throws what `new Worker` or the source throws (the worker is then terminated)
   */
  private bringUp(): FrameSource {
    if (this.source) return this.source;
    const worker = new Worker(new URL('./rtp-carrier-worker.js', import.meta.url), { type: 'module', name: 'mprtc-rtp-carrier' });
    worker.onmessage = (e: MessageEvent) => this.onWorkerMessage(e.data as Record<string, unknown>);
    worker.onerror = (e) => {
      this.counters.errors++;
      this.failure = `RTP carrier worker failed: ${(e as ErrorEvent).message || 'error'}`;
    };
    worker.postMessage(this.cfg);
    try {
      this.source = makeSource();
    } catch (e) {
      worker.terminate();
      throw e;
    }
    this.worker = worker;
    this.statsTimer = setInterval(() => this.pollStats(), this.statsMs);
    return this.source;
  }

  /** The worker took from the queue (or the queue filled from empty): see {@link STUCK_MS}. */
  private progressed(): void {
    this.progressMs = performance.now();
    this.pushedAtProgress = this.counters.framesPushed;
  }

  private fail(e: unknown): void {
    this.counters.errors++;
    this.failure = `RTP carrier set-up failed: ${e instanceof Error ? e.message : String(e)}`;
  }

  private adoptSafely(t: RTCRtpTransceiver): void {
    try {
      this.bringUp();
      this.adopt(t);
    } catch (e) {
      this.fail(e);
    }
  }

  /** Make `t` the carrier's transceiver: VP8 only, `sendrecv`, the source's track, both transforms (after bringUp). */
  private adopt(t: RTCRtpTransceiver): void {
    const source = this.source as FrameSource;
    this.transceiver = t;
    const caps = RTCRtpReceiver.getCapabilities('video');
    if (caps) t.setCodecPreferences(carrierCodecs(caps.codecs));
    if (t.direction !== 'sendrecv') t.direction = 'sendrecv';
    if (t.sender.track !== source.track) t.sender.replaceTrack(source.track).catch(() => this.counters.errors++);
    const Transform = (globalThis as unknown as { RTCRtpScriptTransform: ScriptTransformCtor }).RTCRtpScriptTransform;
    (t.sender as unknown as Transformable).transform = new Transform(this.worker as Worker, { side: 'send' });
    (t.receiver as unknown as Transformable).transform = new Transform(this.worker as Worker, { side: 'recv' });
  }

  /**
   * After a negotiation: renegotiate (at most twice) when the initiator's
   * transceiver missed the offer (no mid) or the answerer's answer went out
   * before it was `sendrecv`.
   */
  private checkNegotiated(): void {
    const t = this.transceiver;
    if (this.closed || !t || this.pc.signalingState !== 'stable') return;
    // A fresh video sender: its rate ceiling now rather than at the next poll (on demand, a stall waits for it).
    this.pollStats();
    if (this.counters.renegotiations >= MAX_RENEGOTIATIONS || this.peer.destroyed) return;
    const missed = this.initiator ? t.mid === null : t.currentDirection === 'recvonly' || t.currentDirection === 'inactive';
    if (!missed) return;
    this.counters.renegotiations++;
    try {
      this.peer.negotiate();
    } catch {
      this.counters.errors++;
    }
  }

  /**
   * Push a frame now if the queue holds data and the last push is `minIntervalMs` old; re-arm while data is
   * queued and the carrier is open (a closed ICE transport or a dead worker would never take it: the next
   * accepted send() re-arms it; the worker drops what waits longer than `maxQueueDelayMs`).
   */
  private pump = (): void => {
    this.timer = undefined;
    if (this.queued <= 0) return;
    if (!this.open) {
      this.progressed(); // a closed spell (ICE down) is no stuck worker
      this.closedSpell = true;
      return;
    }
    if (this.closedSpell) {
      this.closedSpell = false;
      this.progressed(); // the watchdog counts from the reopening, not from the last pump before the spell
    }
    const now = performance.now();
    if (now - this.progressMs > STUCK_MS && this.counters.framesPushed - this.pushedAtProgress >= STUCK_FRAMES) {
      this.counters.errors++;
      this.failure = `RTP carrier stopped: no frame took a datagram for ${Math.round(now - this.progressMs)} ms (${this.counters.framesPushed - this.pushedAtProgress} frames pushed)`;
      return;
    }
    const wait = this.lastPushMs + this.minIntervalMs - now;
    if (wait <= 0) {
      this.lastPushMs = now;
      if (this.source?.push()) this.counters.framesPushed++;
      else this.counters.framesNotPushed++;
    }
    this.timer = setTimeout(this.pump, Math.max(1, wait > 0 ? wait : this.minIntervalMs));
  };

  private onWorkerMessage(m: Record<string, unknown>): void {
    switch (m.t) {
      case 'in': {
        const list = m.d as ArrayBuffer[];
        const age = Math.round((performance.timeOrigin + performance.now() - (m.at as number)) * 1000);
        const ageUs = Math.min(Math.max(age, 0), MAX_ARRIVAL_AGE_US);
        for (const d of list) {
          this.counters.received++;
          if (!this.closed) this.events.emit('message', new Uint8Array(d), ageUs);
        }
        break;
      }
      case 'out':
        this.progressed();
        this.queued = Math.max(0, this.queued - (m.n as number));
        this.queuedDatagrams = Math.max(0, this.queuedDatagrams - (m.k as number));
        break;
      case 'drop':
        this.progressed();
        this.queued = Math.max(0, this.queued - (m.n as number));
        this.queuedDatagrams = Math.max(0, this.queuedDatagrams - (m.k as number));
        this.counters.queueDrops += m.k as number;
        break;
      case 'run':
        this.running[m.side === 'send' ? 'send' : 'recv'] = true;
        break;
      case 'stats':
        for (const w of this.statsWaiters.splice(0)) w(m.s as RtpCarrierWorkerStats & { queued: number; queuedBytes: number });
        break;
    }
  }

  private pollStats(): void {
    if (this.closed) return;
    this.pc.getStats().then(
      (report) => {
        this.ceiling = selectedPairFromStats(report.values() as Iterable<StatsEntry>)?.availableOutgoingBps;
        const out: CarrierSenderStats = { availableOutgoingBitrate: this.ceiling };
        for (const r of report.values() as Iterable<Record<string, unknown>>)
          if (r.type === 'outbound-rtp' && r.kind === 'video')
            for (const k of ['targetBitrate', 'framesEncoded', 'framesSent', 'bytesSent', 'packetsSent', 'qualityLimitationReason'] as const)
              if (r[k] !== undefined) (out as Record<string, unknown>)[k] = r[k];
        this.sender = out;
      },
      () => this.counters.errors++,
    );
  }
}

/**
 * Set up the RTP carrier on a simple-peer instance's RTCPeerConnection (see
 * the module doc), with the path's `initiator` and `rtpCarrier` options
 * (`true`: the defaults). Never throws.
 * @returns the carrier, or why there is none (unsupported browser, closed
 *   peer, a step the browser refused, a bad option).
 */
export function attachRtpCarrier(peer: CarrierPeer, pathOptions: { initiator: boolean; rtpCarrier?: RtpCarrierOptions | boolean }, remoteReady?: () => boolean): RtpCarrier | string {
  const options = pathOptions.rtpCarrier;
  const why = rtpCarrierUnsupported();
  if (why) return why;
  const pc = peer._pc;
  if (!pc || peer.destroyed) return 'the path is closed';
  try {
    return new RtpCarrier(peer, pc, pathOptions.initiator, typeof options === 'object' ? options : {}, remoteReady);
  } catch (e) {
    return `RTP carrier set-up failed: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/**
 * {@link attachRtpCarrier} for a {@link SimplePeerPath} (what its option
 * `rtpCarrier` runs once this chunk has loaded): sets `path.rtpCarrier` to
 * the carrier or to why there is none. Never throws.
 */
export function carrierForPath(path: SimplePeerPath, pathOptions: { initiator: boolean; rtpCarrier?: RtpCarrierOptions | boolean }): void {
  const c = attachRtpCarrier((path as unknown as { peer: CarrierPeer }).peer, pathOptions, () => path.remoteRtpCarrier);
  path.rtpCarrier = c;
  if (typeof c !== 'object') return;
  // The carrier's datagrams reach the path's listeners as the datachannel's do (same `ageUs` meaning).
  c.on('message', (bytes, ageUs) => (path as unknown as { events: Emitter<PathTransportEvents> }).events.emit('message', bytes, ageUs));
  // Tell the remote peer, once the path is connected (both path objects exist then): its carrier with
  // attach 'stall' waits for this before it offers or asks (SimplePeerPath.remoteRtpCarrier).
  let told = false;
  const tell = () => {
    if (told || path.state !== 'connected') return;
    told = true;
    try {
      (path as unknown as { onSignalCb(d: unknown): void }).onSignalCb({ rtpCarrier: 1 });
    } catch {
      c.counters.errors++;
    }
  };
  path.on('state', tell);
  tell();
}
