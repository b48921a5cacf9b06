/**
 * Model of one direction of a path's RTP carrier (src/transport/carrier.ts
 * {@link DatagramCarrier}) for the simulator: our datagrams bundled into VP8
 * frames of a video track, sent by Chromium's RTP stack on the path's own
 * RTCPeerConnection, as measured in tools/experiments/rtp-carrier/README.md
 * ("the study" below; "A1".."A4" = its answers 1-4).
 *
 * Sender:
 * - **Frames as send opportunities** (A3, `gen120`): a frame whenever the
 *   queue has data, at most `maxFps` (120) per second; each frame bundles
 *   every datagram queued since the last one (the study's sketch).
 * - **Bytes** of a frame: the 10-byte VP8 key-frame prefix (A1: every carried
 *   frame is marked a key frame, else PLIs and key-frame flushes, A2) + per
 *   datagram a 2-byte length prefix and its bytes. Split into RTP packets of
 *   at most `rtpPacketBytes` (1200: libwebrtc's video max packet size,
 *   media/engine `kVideoMtu`) each: RTP header 12 (RFC 3550 §5.1) + header
 *   extension 8 (RFC 8285 one-byte form: 4-byte block header + transport-wide
 *   sequence number element 3 bytes, padded to 4;
 *   draft-holmer-rmcat-transport-wide-cc-extensions-01 §2) + VP8 payload
 *   descriptor 4 (RFC 7741 §4.2: required byte, X byte, 15-bit PictureID,
 *   which libwebrtc always sends) + frame bytes; then the SRTP auth tag 10
 *   (RFC 3711 AES_CM_128_HMAC_SHA1_80) after the packet. The link charges its
 *   UDP/IP bytes on top (the simulator's `overhead`).
 * - **Pacing**: the RTP packets leave at the pacing rate, libwebrtc's
 *   `kDefaultPaceMultiplier` 2.5 x GCC's target
 *   (goog_cc_network_control.cc GetPacingRates), faster when the pacer queue
 *   exceeds `kMaxExpectedQueueLength` 2 s (pacing_controller.cc: the rate
 *   is raised to drain it in time). Bounded: beyond `maxQueueBytes` in
 *   total, {@link send} refuses.
 * - **Rate ceiling** = GCC's target, modelled by an instance of our own GCC
 *   (src/cc/gcc.ts, libwebrtc goog_cc) fed with the carrier's own
 *   transport-wide feedback, which the receiving end sends every
 *   `feedbackIntervalMs` (100 ms: libwebrtc RemoteEstimatorProxy's default
 *   send interval) on the reverse link. Start 300 kbps (the study's
 *   `rate-1m`: `availableOutgoingBitrate` started at 300 kbps), floor 150 kbps
 *   (the library's `x-google-min-bitrate`, src/transport/rtp-carrier.ts
 *   `minBitrateBps`; Chromium's own floor without it is 30 kbps: A4
 *   `att-follow`, the estimate fell to 30 kbps after AT&T's uplink
 *   outage), feedback timeout 3 s then -20 % per second (A4 `dead-reverse`:
 *   held ~3 s, then 1386 -> 1108 -> 887 -> 709 kbps; our GCC's timeout cuts
 *   20 % once per second). Not modelled: Chromium's initial exponential
 *   probes (3x, 6x the start rate); a carrier idle until the first stall
 *   sends no media for them to ride on, so it starts at 300 kbps and climbs
 *   with GCC's AIMD while used.
 * - **ICE** (A4): the carrier stops (`open` false, its queues dropped) once
 *   nothing has arrived on the reverse link for `iceTimeoutMs` (5.5 s: the
 *   candidate pair went `disconnected` after ~5-6 s without STUN responses)
 *   and opens again when something arrives (any packet of ours on the reverse
 *   link stands for the STUN responses: on AT&T the downlink's ~1 packet/s
 *   kept ICE connected).
 *
 * Receiver: frame assembly as Chromium's packet buffer before the frame
 * transformer (A2: a frame is handed over only complete, later frames are not
 * held by an incomplete one). **NACK/RTX are off** (the study's `loss-nonack`
 * SDP): a lost RTP packet loses its whole frame. Chromium's repair is left out
 * because it is Chromium's retransmission on the same path outside our
 * scheduler's view (A2), our own NACK repairs end to end on any path, and in
 * the stalls the carrier is for, RTX would ride the same link as the loss.
 * Duplicates (RTX padding, A1) do not occur without RTX.
 *
 * No timers: the owner calls {@link onTimer} at {@link nextTimerUs}; the
 * clock is the owner's virtual time (µs).
 */
import { GccEstimator } from '../src/cc/gcc.js';
import type { DatagramCarrier } from '../src/transport/carrier.js';

/** Tunables (see the module doc for the sources). */
export interface RtpCarrierOptions {
  /** Most frames per second (send opportunities). */
  maxFps: number;
  /** Largest RTP packet before SRTP (header + extension + descriptor + payload), bytes. */
  rtpPacketBytes: number;
  /** RTP fixed header, bytes. */
  rtpHeaderBytes: number;
  /** Header extension block with the transport-wide sequence number, bytes. */
  rtpExtensionBytes: number;
  /** VP8 payload descriptor, bytes. */
  vp8DescriptorBytes: number;
  /** VP8 key-frame prefix at the start of each frame, bytes. */
  keyPrefixBytes: number;
  /** Length prefix per bundled datagram, bytes. */
  lengthPrefixBytes: number;
  /** SRTP authentication tag, bytes. */
  srtpTagBytes: number;
  /** Pacing rate / GCC target. */
  pacingFactor: number;
  /** Pacer queue time limit (ms): above it the pacer drains faster. */
  maxPacerQueueMs: number;
  /** Bound on bytes accepted and not yet sent (datagram queue + pacer), bytes. */
  maxQueueBytes: number;
  /** Transport feedback interval (ms). */
  feedbackIntervalMs: number;
  /** GCC start / floor / ceiling (bps) and feedback timeout (ms). */
  gccStartBps: number;
  gccMinBps: number;
  gccMaxBps: number;
  gccFeedbackTimeoutMs: number;
  /** No packet on the reverse link for this long: ICE disconnected, the carrier stops (ms). */
  iceTimeoutMs: number;
}

export const RTP_CARRIER_DEFAULTS: Readonly<RtpCarrierOptions> = Object.freeze({
  maxFps: 120,
  rtpPacketBytes: 1200,
  rtpHeaderBytes: 12,
  rtpExtensionBytes: 8,
  vp8DescriptorBytes: 4,
  keyPrefixBytes: 10,
  lengthPrefixBytes: 2,
  srtpTagBytes: 10,
  pacingFactor: 2.5,
  maxPacerQueueMs: 2000,
  maxQueueBytes: 200_000,
  feedbackIntervalMs: 100,
  gccStartBps: 300_000,
  gccMinBps: 150_000,
  gccMaxBps: 10_000_000,
  gccFeedbackTimeoutMs: 3000,
  iceTimeoutMs: 5500,
});

/** Bound on frames being assembled at the receiver. */
export const MAX_PARTIAL_FRAMES = 256;
/** Bound on arrivals in one feedback packet (the rest go in the next). */
export const MAX_FEEDBACK_ARRIVALS = 1000;
/** Bound on datagrams waiting for a frame. */
export const MAX_QUEUED_DATAGRAMS = 4096;

/** One RTP packet on the wire: its transport-wide seq and frame; the last packet of a frame carries the frame's datagrams. */
export interface RtpPacket {
  seq: number;
  frame: number;
  packets: number;
  datagrams?: Array<{ tag: number; bytes: Uint8Array }>;
}

/** A transport-wide feedback packet (RTCP), receiver -> sender. */
export interface RtpFeedback {
  arrivals: Array<{ seq: number; arrivalUs: number }>;
  reportUs: number;
}

/** Counters of one carrier direction. */
export interface RtpCarrierStats {
  datagramsAccepted: number;
  datagramsRefused: number;
  /** Datagrams dropped from the queues when ICE stopped the carrier. */
  datagramsDroppedClosed: number;
  datagramsDelivered: number;
  frames: number;
  framesDelivered: number;
  rtpPackets: number;
  wireBytes: number;
  feedbackPackets: number;
  feedbackDelivered: number;
  /** Times ICE stopped the carrier (reverse link silent for iceTimeoutMs). */
  iceDisconnects: number;
  ceilingBps: number;
}

interface Queued {
  tag: number;
  bytes: Uint8Array;
}

/**
 * One direction of a path's RTP carrier (sender and receiving end). RTP
 * packets go out through `rtpOut`, feedback (from the receiving end) through
 * `feedbackOut`, each with its size in bytes without UDP/IP; the owner hands
 * what the network delivers to {@link onRtp} and {@link onFeedback}, and calls
 * {@link onReverseArrival} for every packet arriving on the reverse link.
 */
export class RtpCarrierModel implements DatagramCarrier {
  readonly opts: RtpCarrierOptions;
  private readonly gcc: GccEstimator;
  private isOpen = true;
  private closedByOwner = false;
  private lastReverseUs: number;
  // Sender.
  private queue: Queued[] = [];
  private queueBytes = 0;
  private nextFrameUs = 0;
  private frameNo = 0;
  private seq = 0;
  private pacer: Array<{ pkt: RtpPacket; wire: number; dataBytes: number }> = [];
  private pacerHead = 0;
  private pacerBytes = 0;
  private pacerDataBytes = 0;
  private pacerFreeUs = 0;
  private lastTickUs = Number.NEGATIVE_INFINITY;
  // Receiver.
  /** Frames being assembled: packets received, and the bundle once its packet arrived. */
  private partial = new Map<number, { got: number; datagrams?: Array<{ tag: number; bytes: Uint8Array }> }>();
  private pending: Array<{ seq: number; arrivalUs: number }> = [];
  private feedbackDueUs: number | undefined;
  private readonly listeners = new Set<(bytes: Uint8Array, ageUs?: number) => void>();
  private readonly st: RtpCarrierStats;

  /**
   * @param nowUs the owner's clock (µs)
   * @throws RangeError when an option is not a finite number > 0 (rtpPacketBytes must leave room for payload)
   */
  constructor(
    private readonly rtpOut: (p: RtpPacket, bytes: number) => void,
    private readonly feedbackOut: (f: RtpFeedback, bytes: number) => void,
    private readonly nowUs: () => number,
    opts: Partial<RtpCarrierOptions> = {},
  ) {
    this.opts = { ...RTP_CARRIER_DEFAULTS, ...opts };
    const o = this.opts;
    for (const [k, v] of Object.entries(o)) if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new RangeError(`RtpCarrierModel: ${k} must be a finite number >= 0, got ${String(v)}`);
    for (const k of ['maxFps', 'pacingFactor', 'maxPacerQueueMs', 'maxQueueBytes', 'feedbackIntervalMs', 'iceTimeoutMs'] as const)
      if (!(o[k] > 0)) throw new RangeError(`RtpCarrierModel: ${k} must be > 0`);
    if (!(this.payloadPerPacket() > 0)) throw new RangeError('RtpCarrierModel: rtpPacketBytes leaves no room for payload');
    this.gcc = new GccEstimator({ startBps: o.gccStartBps, minBps: o.gccMinBps, maxBps: o.gccMaxBps, feedbackTimeoutMs: o.gccFeedbackTimeoutMs });
    this.lastReverseUs = nowUs();
    this.st = {
      datagramsAccepted: 0,
      datagramsRefused: 0,
      datagramsDroppedClosed: 0,
      datagramsDelivered: 0,
      frames: 0,
      framesDelivered: 0,
      rtpPackets: 0,
      wireBytes: 0,
      feedbackPackets: 0,
      feedbackDelivered: 0,
      iceDisconnects: 0,
      ceilingBps: o.gccStartBps,
    };
  }

  private payloadPerPacket(): number {
    const o = this.opts;
    return o.rtpPacketBytes - o.rtpHeaderBytes - o.rtpExtensionBytes - o.vp8DescriptorBytes;
  }

  get open(): boolean {
    this.checkIce(this.nowUs());
    return this.isOpen;
  }

  /** Queue one datagram (`tag`: the owner's label, e.g. the stream, handed back on delivery). False when not open or over the bound. */
  send(bytes: Uint8Array, tag = 0): boolean {
    const now = this.nowUs();
    this.checkIce(now);
    if (!this.isOpen || this.queueBytes + this.pacerDataBytes + bytes.length > this.opts.maxQueueBytes || this.queue.length >= MAX_QUEUED_DATAGRAMS) {
      this.st.datagramsRefused++;
      return false;
    }
    this.queue.push({ tag, bytes: bytes.slice() });
    this.queueBytes += bytes.length;
    this.st.datagramsAccepted++;
    return true;
  }

  /** Datagram bytes accepted and not yet sent on the link (waiting for a frame or in the pacer). */
  queuedBytes(): number {
    return this.queueBytes + this.pacerDataBytes;
  }

  /** GCC's target (bps), as `availableOutgoingBitrate`. */
  rateCeilingBps(): number {
    this.tick(this.nowUs());
    return this.gcc.targetRateBps();
  }

  on(_event: 'message', cb: (bytes: Uint8Array, ageUs?: number) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  close(): void {
    this.closedByOwner = true;
    this.setOpen(false);
  }

  /**
   * Earliest time (µs, a whole microsecond: the simulator's clock never goes
   * fractional) something is due: a frame, a pacer release, a feedback packet.
   */
  nextTimerUs(): number | undefined {
    let t = this.feedbackDueUs ?? Number.POSITIVE_INFINITY;
    if (this.pacerHead < this.pacer.length) t = Math.min(t, this.pacerFreeUs);
    if (this.queue.length > 0) t = Math.min(t, this.nextFrameUs);
    // The pacer's release time is fractional (bytes x 8e6 / rate): waking at it made the run's
    // clock fractional, and a camera frame captured then failed the packetizer's integer check.
    return Number.isFinite(t) ? Math.ceil(t) : undefined;
  }

  /** Run what is due at `now`. */
  onTimer(now: number): void {
    this.checkIce(now);
    this.tick(now);
    if (this.queue.length > 0 && now >= this.nextFrameUs && this.isOpen) this.makeFrame(now);
    this.releasePacer(now);
    if (this.feedbackDueUs !== undefined && now >= this.feedbackDueUs) this.sendFeedback(now);
  }

  /** Receiving end: an RTP packet arrived. Returns the datagrams of the frame it completed (also given to 'message' listeners). */
  onRtp(now: number, p: RtpPacket): Array<{ tag: number; bytes: Uint8Array }> {
    if (this.pending.length < MAX_FEEDBACK_ARRIVALS * 4) this.pending.push({ seq: p.seq, arrivalUs: now });
    if (this.feedbackDueUs === undefined) this.feedbackDueUs = now + this.opts.feedbackIntervalMs * 1000;
    const prev = this.partial.get(p.frame);
    const got = (prev?.got ?? 0) + 1;
    const datagrams = p.datagrams ?? prev?.datagrams;
    if (got < p.packets) {
      this.partial.set(p.frame, { got, ...(datagrams ? { datagrams } : {}) });
      if (this.partial.size > MAX_PARTIAL_FRAMES) this.partial.delete(this.partial.keys().next().value as number);
      return [];
    }
    this.partial.delete(p.frame);
    const out = datagrams ?? [];
    this.st.framesDelivered++;
    this.st.datagramsDelivered += out.length;
    for (const d of out) for (const cb of this.listeners) cb(d.bytes);
    return out;
  }

  /** Sending end: a feedback packet arrived: GCC learns from it. */
  onFeedback(now: number, f: RtpFeedback): void {
    this.st.feedbackDelivered++;
    if (f.arrivals.length === 0) return;
    let lo = f.arrivals[0].seq;
    let hi = lo;
    for (const a of f.arrivals) {
      lo = Math.min(lo, a.seq);
      hi = Math.max(hi, a.seq);
    }
    this.gcc.onReport({ pathId: 0, beginSeq: lo, endSeq: hi, arrivals: f.arrivals.map((a) => ({ pathSeq: a.seq, arrivalUs: a.arrivalUs })), reportTimeUs: f.reportUs }, now);
    this.st.ceilingBps = this.gcc.targetRateBps();
  }

  /** Something of ours arrived on the reverse link (it stands for ICE's STUN responses). */
  onReverseArrival(now: number): void {
    this.lastReverseUs = now;
    if (!this.isOpen && !this.closedByOwner) this.setOpen(true);
  }

  stats(): RtpCarrierStats {
    return { ...this.st, ceilingBps: this.gcc.targetRateBps() };
  }

  private checkIce(now: number): void {
    if (this.isOpen && now - this.lastReverseUs > this.opts.iceTimeoutMs * 1000) {
      this.st.iceDisconnects++;
      this.setOpen(false);
    }
  }

  private setOpen(open: boolean): void {
    if (open === this.isOpen) return;
    this.isOpen = open;
    if (open) return;
    // Chromium stops sending media on a disconnected pair: what waits is lost.
    let n = this.queue.length;
    for (let i = this.pacerHead; i < this.pacer.length; i++) n += this.pacer[i].pkt.datagrams?.length ?? 0;
    this.st.datagramsDroppedClosed += n;
    this.queue = [];
    this.queueBytes = 0;
    this.pacer = [];
    this.pacerHead = 0;
    this.pacerBytes = 0;
    this.pacerDataBytes = 0;
  }

  /** GCC's time-based parts (feedback timeout), at most every 10 ms. */
  private tick(now: number): void {
    if (now - this.lastTickUs < 10_000) return;
    this.lastTickUs = now;
    this.gcc.onTick(now);
  }

  private makeFrame(now: number): void {
    const o = this.opts;
    const datagrams = this.queue;
    this.queue = [];
    const dataBytes = this.queueBytes;
    this.queueBytes = 0;
    const frameBytes = o.keyPrefixBytes + datagrams.reduce((a, d) => a + o.lengthPrefixBytes + d.bytes.length, 0);
    const per = this.payloadPerPacket();
    const n = Math.max(1, Math.ceil(frameBytes / per));
    const frame = this.frameNo++;
    this.st.frames++;
    let left = frameBytes;
    for (let k = 0; k < n; k++) {
      const payload = Math.min(per, left);
      left -= payload;
      const wire = o.rtpHeaderBytes + o.rtpExtensionBytes + o.vp8DescriptorBytes + payload + o.srtpTagBytes;
      const pkt: RtpPacket = { seq: this.seq++, frame, packets: n, ...(k === n - 1 ? { datagrams } : {}) };
      // The frame's datagram bytes count as queued until its last packet leaves.
      const db = k === n - 1 ? dataBytes : 0;
      this.pacer.push({ pkt, wire, dataBytes: db });
      this.pacerBytes += wire;
      this.pacerDataBytes += db;
    }
    this.nextFrameUs = now + Math.ceil(1e6 / o.maxFps);
    if (this.pacerHead === this.pacer.length - n) this.pacerFreeUs = Math.max(this.pacerFreeUs, now);
  }

  private releasePacer(now: number): void {
    const o = this.opts;
    while (this.pacerHead < this.pacer.length && this.pacerFreeUs <= now) {
      const e = this.pacer[this.pacerHead++];
      this.pacerBytes -= e.wire;
      this.pacerDataBytes -= e.dataBytes;
      this.gcc.onPacketSent({ pathSeq: e.pkt.seq, sizeBytes: e.wire, sendTimeUs: now });
      this.st.rtpPackets++;
      this.st.wireBytes += e.wire;
      this.rtpOut(e.pkt, e.wire);
      // Pacing rate: factor x target, raised to drain the queue within maxPacerQueueMs.
      const rate = Math.max(o.pacingFactor * this.gcc.targetRateBps(), (this.pacerBytes * 8e3) / o.maxPacerQueueMs);
      this.pacerFreeUs = Math.max(this.pacerFreeUs, now - 5_000) + (e.wire * 8e6) / rate;
    }
    if (this.pacerHead > 1024 && this.pacerHead * 2 > this.pacer.length) {
      this.pacer = this.pacer.slice(this.pacerHead);
      this.pacerHead = 0;
    }
    if (this.pacerHead === this.pacer.length) this.pacerFreeUs = Math.max(this.pacerFreeUs, now);
  }

  private sendFeedback(now: number): void {
    const arrivals = this.pending.splice(0, MAX_FEEDBACK_ARRIVALS);
    this.feedbackDueUs = this.pending.length > 0 ? now + this.opts.feedbackIntervalMs * 1000 : undefined;
    if (arrivals.length === 0) return;
    // RTCP transport feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1): header 20 +
    // 2-byte status chunks (~7 packets each) + 1-byte deltas; SRTCP index 4 + tag 10.
    const bytes = 20 + 2 * Math.ceil(arrivals.length / 7) + arrivals.length + 14;
    this.st.feedbackPackets++;
    this.feedbackOut({ arrivals, reportUs: now }, bytes);
  }
}
