/**
 * Model of one direction of an RTCDataChannel's SCTP association, as Chromium
 * runs it (dcSCTP), for the simulator: an unordered channel with
 * `maxRetransmits: 0` (partial reliability: a lost chunk is abandoned, never
 * retransmitted) over DTLS/UDP/IP. It turns the app's messages into SCTP
 * packets under a congestion window and keeps the rest in a send buffer, so
 * `bufferedAmount()` is what the browser would report.
 *
 * Sources:
 * - RFC 4960 §6.1 (transmission rules: no new data while flight >= cwnd;
 *   Max.Burst), §6.2 / §6.7 (SACK: every 2nd packet, at once on a gap,
 *   else within the delayed-ack time), §6.3 (RTO: SRTT/RTTVAR, Karn, backoff,
 *   T3-rtx), §7.2.1 (slow start: +min(acked, MTU) per SACK that advances the
 *   cumulative TSN while cwnd is fully used), §7.2.2 (congestion avoidance:
 *   +1 MTU per cwnd of acked bytes), §7.2.3 (T3-rtx timeout: ssthresh =
 *   max(cwnd/2, 4 MTU), cwnd = 1 MTU), §7.2.4 (fast retransmit on the 3rd miss
 *   indication: ssthresh = max(cwnd/2, 4 MTU), cwnd = ssthresh, one cut per
 *   recovery period).
 * - RFC 3758 (PR-SCTP): with `maxRetransmits: 0` a chunk that would be
 *   retransmitted is abandoned (with its whole message, also its unsent
 *   fragments) and the receiver's cumulative TSN is moved past it
 *   (FORWARD-TSN, modelled here as a field of every DATA packet). The loss
 *   still cuts cwnd as above.
 * - RFC 7053 (SACK-IMMEDIATELY, the I bit), set by dcSCTP while cwnd is below
 *   `immediate_sack_under_cwnd_mtus`.
 * - dcSCTP defaults (webrtc net/dcsctp/public/dcsctp_options.h): mtu 1191
 *   bytes (whole SCTP packet), cwnd_mtus_initial 10, cwnd_mtus_min 4,
 *   max_burst 4, max_send_buffer_size 2,000,000 bytes, rto_initial 500 ms,
 *   rto_min 400 ms (dcSCTP's own floor above RFC 4960's 1 s minimum), rto_max
 *   60 s, delayed_ack_max_timeout 200 ms, immediate_sack_under_cwnd_mtus
 *   (see {@link DCSCTP_DEFAULTS} for the values used).
 * - T3-rtx backoff as dcSCTP runs it (net/dcsctp/timer/timer.cc
 *   `GetBackoffDuration`, net/dcsctp/tx/retransmission_queue.cc): the RTO
 *   itself is not doubled; the timer's k-th consecutive expiry restarts it
 *   at RTO x 2^k, and the count goes back to 0 when a SACK advances the
 *   cumulative TSN (the timer is stopped). Chromium caps that backoff at
 *   3 s (media/sctp/dcsctp_transport.cc `kMaxTimerBackoffDuration`:
 *   "the time to recover reduces"); without the cap a 10 s outage left the
 *   timer at 6.4-12.8 s and the model recovered seconds later than Chromium.
 *
 * Wire bytes of a DATA packet: SCTP common header 12 + per chunk (DATA chunk
 * header 16 + payload padded to 4) + DTLS 1.2 AES-GCM record overhead 37
 * (13 header + 8 explicit nonce + 16 tag). The UDP/IP headers are NOT
 * included: the simulator's links charge them like the browser's path relay
 * (`linkOverheadBytes`, tools/emulator DEFAULT_OVERHEAD_BYTES = 28). A
 * 1200-byte engine datagram does not fit one 1191-byte SCTP packet: it goes as
 * two chunks, usually bundled with the next message's first fragment.
 *
 * Simplifications: one path per association (no multihoming), no receiver
 * window limit (a browser's receive window of 5 MB never binds at these
 * rates), gap-acked chunks leave the flight at once (as dcSCTP counts
 * `outstanding_bytes`), RTT measured on one chunk at a time. No timers: the
 * owner calls {@link SctpChannel.onTimer} at {@link SctpChannel.nextTimerUs}
 * on its (virtual) clock.
 */

/** Tunables; all byte sizes are SCTP-layer bytes. */
export interface SctpOptions {
  /** Largest SCTP packet (common header + chunks), bytes. */
  mtuBytes: number;
  /** Initial cwnd, in MTUs. */
  initialCwndMtus: number;
  /** Floor of ssthresh / cwnd after a loss, in MTUs. */
  minCwndMtus: number;
  /** Max packets sent per send opportunity (RFC 4960 §6.1 Max.Burst). */
  maxBurst: number;
  /** Send buffer bound (bytes of queued message payload); a message that does not fit is refused. */
  sendBufferBytes: number;
  rtoInitialMs: number;
  rtoMinMs: number;
  rtoMaxMs: number;
  /**
   * Upper bound of the T3-rtx timer's exponential backoff (ms; Infinity: none,
   * RFC 4960 §6.3.3 E2 up to `rtoMaxMs`). The un-backed-off RTO is not capped.
   */
  maxTimerBackoffMs: number;
  /** Longest delay of a delayed SACK (ms); the delay is min(this, RTO/2). */
  delayedAckMaxMs: number;
  /** The sender sets the I bit (SACK at once) while cwnd < this many MTUs. */
  immediateSackUnderCwndMtus: number;
  /** Bytes added to each SCTP packet below SCTP (DTLS record), not counting UDP/IP. */
  dtlsOverheadBytes: number;
}

/** dcSCTP's defaults as Chromium uses them for RTCDataChannel. */
export const DCSCTP_DEFAULTS: Readonly<SctpOptions> = Object.freeze({
  mtuBytes: 1191,
  initialCwndMtus: 10,
  minCwndMtus: 4,
  maxBurst: 4,
  sendBufferBytes: 2_000_000,
  rtoInitialMs: 500,
  rtoMinMs: 400,
  rtoMaxMs: 60_000,
  maxTimerBackoffMs: 3000,
  delayedAckMaxMs: 200,
  immediateSackUnderCwndMtus: 10,
  dtlsOverheadBytes: 37,
});

export const SCTP_COMMON_HEADER_BYTES = 12;
export const SCTP_DATA_CHUNK_HEADER_BYTES = 16;
/** SACK chunk header (type, flags, length, cum TSN, a_rwnd, #gaps, #dups). */
export const SCTP_SACK_CHUNK_BYTES = 16;
/** Bound on remembered partially received messages at the receiver. */
export const MAX_PARTIAL_MESSAGES = 4096;
/** Bound on gap-ack blocks in one SACK. */
export const MAX_GAP_BLOCKS = 64;

const pad4 = (n: number): number => (n + 3) & ~3;

interface Message<M> {
  id: number;
  msg: M;
  size: number;
  /** Payload bytes not yet put in a chunk. */
  unsent: number;
  /** Chunks produced so far. */
  chunks: number;
  abandoned: boolean;
}

/** One DATA chunk on the wire. */
export interface SctpChunk<M> {
  tsn: number;
  msgId: number;
  payloadBytes: number;
  /** Set on the message's last fragment: the total number of its chunks, and the message. */
  last?: { chunks: number; msg: M };
}

export type SctpPacket<M> = { kind: 'data'; chunks: SctpChunk<M>[]; immediateSack: boolean; forwardTsn: number } | { kind: 'sack'; cumTsn: number; gaps: Array<[number, number]> };

interface Outstanding<M> {
  tsn: number;
  bytes: number;
  sentUs: number;
  misses: number;
  m: Message<M>;
}

/** Counters of one channel direction. */
export interface SctpStats {
  packetsSent: number;
  wireBytesSent: number;
  sacksSent: number;
  messagesSent: number;
  messagesRefused: number;
  messagesDelivered: number;
  messagesAbandoned: number;
  chunksAbandoned: number;
  fastRetransmitCuts: number;
  t3Timeouts: number;
  cwndBytes: number;
  ssthreshBytes: number;
  /** The T3-rtx timer's duration now (ms): the RTO with the current backoff (see `maxTimerBackoffMs`). */
  rtoMs: number;
  srttMs: number | undefined;
}

/**
 * One direction of a datachannel: the sending end (cwnd, send buffer, T3-rtx)
 * and the receiving end (reassembly, SACK policy). DATA packets go out
 * through `dataOut`, SACKs (from the receiving end) through `sackOut`; each
 * gets the packet and its size in bytes without UDP/IP. The owner delivers
 * what the network delivers: DATA to {@link onData}, SACKs to {@link onSack}.
 */
export class SctpChannel<M> {
  readonly opts: SctpOptions;
  // Sender.
  private queue: Message<M>[] = [];
  private queueHead = 0;
  private buffered = 0;
  private nextMsgId = 0;
  private nextTsn = 0;
  private outstanding: Outstanding<M>[] = [];
  private flight = 0;
  private cwnd: number;
  private ssthresh = Number.POSITIVE_INFINITY;
  private partialBytesAcked = 0;
  private recoveryExitTsn: number | undefined;
  private srttMs: number | undefined;
  private rttvarMs = 0;
  private rtoMs: number;
  /** Consecutive T3-rtx expiries without a SACK advancing the cumulative TSN (the timer's backoff exponent). */
  private t3Backoffs = 0;
  private t3DueUs: number | undefined;
  private rttProbe: { tsn: number; sentUs: number } | undefined;
  /** Highest TSN abandoned with everything below acked or abandoned (the FORWARD-TSN point). */
  private advancedPeerAckPoint = -1;
  // Receiver.
  private rxCum = -1;
  private rxAbove = new Set<number>();
  private rxPartial = new Map<number, number>();
  private rxDone = new Set<number>();
  private rxLast = new Map<number, { chunks: number; msg: M }>();
  private rxUnacked = 0;
  private sackDueUs: number | undefined;
  private readonly st: SctpStats;

  constructor(
    private readonly dataOut: (p: SctpPacket<M>, bytes: number) => void,
    private readonly sackOut: (p: SctpPacket<M>, bytes: number) => void,
    opts: Partial<SctpOptions> = {},
  ) {
    this.opts = { ...DCSCTP_DEFAULTS, ...opts };
    const o = this.opts;
    if (!(o.mtuBytes > SCTP_COMMON_HEADER_BYTES + SCTP_DATA_CHUNK_HEADER_BYTES + 4)) throw new RangeError(`SctpChannel: mtuBytes too small: ${o.mtuBytes}`);
    for (const k of ['initialCwndMtus', 'minCwndMtus', 'maxBurst', 'sendBufferBytes', 'rtoInitialMs', 'rtoMinMs', 'rtoMaxMs'] as const) {
      if (!(o[k] > 0) || !Number.isFinite(o[k])) throw new RangeError(`SctpChannel: ${k} must be a finite number > 0, got ${o[k]}`);
    }
    if (!(o.maxTimerBackoffMs > 0)) throw new RangeError(`SctpChannel: maxTimerBackoffMs must be > 0 (Infinity: no cap), got ${o.maxTimerBackoffMs}`);
    this.cwnd = o.initialCwndMtus * o.mtuBytes;
    this.rtoMs = o.rtoInitialMs;
    this.st = {
      packetsSent: 0,
      wireBytesSent: 0,
      sacksSent: 0,
      messagesSent: 0,
      messagesRefused: 0,
      messagesDelivered: 0,
      messagesAbandoned: 0,
      chunksAbandoned: 0,
      fastRetransmitCuts: 0,
      t3Timeouts: 0,
      cwndBytes: this.cwnd,
      ssthreshBytes: Infinity,
      rtoMs: this.rtoMs,
      srttMs: undefined,
    };
  }

  /** RTCDataChannel.bufferedAmount: payload bytes accepted but not yet sent (bytes). */
  bufferedAmount(): number {
    return this.buffered;
  }

  /** Bytes of DATA chunks in flight. */
  flightBytes(): number {
    return this.flight;
  }

  cwndBytes(): number {
    return this.cwnd;
  }

  /** Smoothed RTT (ms, RFC 4960 §6.3.1), undefined before the first measurement. */
  smoothedRttMs(): number | undefined {
    return this.srttMs;
  }

  /** Queue one message of `sizeBytes` and send what cwnd allows. Returns false (refused, nothing queued) when the send buffer is full. */
  send(nowUs: number, msg: M, sizeBytes: number): boolean {
    if (!(sizeBytes > 0)) throw new RangeError(`SctpChannel.send: sizeBytes must be > 0, got ${sizeBytes}`);
    if (this.buffered + sizeBytes > this.opts.sendBufferBytes) {
      this.st.messagesRefused++;
      return false;
    }
    this.queue.push({ id: this.nextMsgId++, msg, size: sizeBytes, unsent: sizeBytes, chunks: 0, abandoned: false });
    this.buffered += sizeBytes;
    this.st.messagesSent++;
    this.pump(nowUs);
    return true;
  }

  /**
   * Earliest timer (T3-rtx or delayed SACK), µs, or undefined. A whole
   * microsecond: the RTO (SRTT + 4 RTTVAR, smoothed) is fractional, and the
   * simulator's clock, which steps to this time, must stay integral.
   */
  nextTimerUs(): number | undefined {
    const t = this.t3DueUs === undefined ? this.sackDueUs : this.sackDueUs === undefined ? this.t3DueUs : Math.min(this.t3DueUs, this.sackDueUs);
    return t === undefined ? undefined : Math.ceil(t);
  }

  /** Run timers due at `nowUs`. */
  onTimer(nowUs: number): void {
    if (this.sackDueUs !== undefined && this.sackDueUs <= nowUs) this.sendSack();
    if (this.t3DueUs !== undefined && this.t3DueUs <= nowUs) this.onT3(nowUs);
  }

  /** Receiving end: a DATA packet arrived. Returns the messages it completed. */
  onData(nowUs: number, p: SctpPacket<M>): M[] {
    if (p.kind !== 'data') throw new TypeError('SctpChannel.onData: not a DATA packet');
    const out: M[] = [];
    let gap = false;
    // FORWARD-TSN (RFC 3758 §3.6): skip abandoned TSNs.
    if (p.forwardTsn > this.rxCum) {
      for (const t of this.rxAbove) if (t <= p.forwardTsn) this.rxAbove.delete(t);
      this.rxCum = p.forwardTsn;
    }
    for (const c of p.chunks) {
      if (c.tsn <= this.rxCum || this.rxAbove.has(c.tsn)) continue; // duplicate
      if (c.tsn !== this.rxCum + 1) gap = true;
      this.rxAbove.add(c.tsn);
      if (this.rxDone.has(c.msgId)) continue;
      const got = (this.rxPartial.get(c.msgId) ?? 0) + 1;
      if (c.last) this.rxLast.set(c.msgId, c.last);
      const last = this.rxLast.get(c.msgId);
      if (last && got === last.chunks) {
        out.push(last.msg);
        this.rxPartial.delete(c.msgId);
        this.rxLast.delete(c.msgId);
        this.rxDone.add(c.msgId);
        this.st.messagesDelivered++;
      } else {
        this.rxPartial.set(c.msgId, got);
      }
    }
    while (this.rxAbove.has(this.rxCum + 1)) this.rxAbove.delete(++this.rxCum);
    if (this.rxAbove.size > 0) gap = true;
    this.boundReceiver();
    this.rxUnacked++;
    if (gap || p.immediateSack || this.rxUnacked >= 2) this.sendSack();
    else if (this.sackDueUs === undefined) this.sackDueUs = nowUs + Math.round(Math.min(this.opts.delayedAckMaxMs, this.rtoMs / 2) * 1000);
    return out;
  }

  private boundReceiver(): void {
    const trim = <K, V>(m: Map<K, V> | Set<K>): void => {
      while (m.size > MAX_PARTIAL_MESSAGES) {
        const k = m.keys().next().value as K;
        m.delete(k);
      }
    };
    trim(this.rxPartial);
    trim(this.rxLast);
    trim(this.rxDone);
  }

  private sendSack(): void {
    this.sackDueUs = undefined;
    this.rxUnacked = 0;
    const above = [...this.rxAbove].sort((a, b) => a - b);
    const gaps: Array<[number, number]> = [];
    for (const t of above) {
      const g = gaps[gaps.length - 1];
      if (g && g[1] === t - 1) g[1] = t;
      else if (gaps.length < MAX_GAP_BLOCKS) gaps.push([t, t]);
    }
    this.st.sacksSent++;
    this.sackOut({ kind: 'sack', cumTsn: this.rxCum, gaps }, SCTP_COMMON_HEADER_BYTES + SCTP_SACK_CHUNK_BYTES + 4 * gaps.length + this.opts.dtlsOverheadBytes);
  }

  /** Sending end: a SACK arrived (RFC 4960 §6.2.1, §7.2). */
  onSack(nowUs: number, p: SctpPacket<M>): void {
    if (p.kind !== 'sack') throw new TypeError('SctpChannel.onSack: not a SACK');
    const o = this.opts;
    const flightBefore = this.flight;
    const cumAdvanced = this.outstanding.length > 0 && p.cumTsn >= this.outstanding[0].tsn;
    const acked = (t: number): boolean => t <= p.cumTsn || p.gaps.some(([a, b]) => t >= a && t <= b);
    const highestGap = p.gaps.length ? p.gaps[p.gaps.length - 1][1] : -1;
    let ackedBytes = 0;
    let lost = false;
    const keep: Outstanding<M>[] = [];
    for (const c of this.outstanding) {
      if (acked(c.tsn)) {
        ackedBytes += c.bytes;
        if (this.rttProbe && this.rttProbe.tsn === c.tsn) this.onRtt((nowUs - this.rttProbe.sentUs) / 1000);
        continue;
      }
      if (c.tsn < highestGap && ++c.misses >= 3) {
        // §7.2.4 fast retransmit; PR-SCTP with maxRetransmits 0: abandon instead.
        this.abandon(c.m);
        this.st.chunksAbandoned++;
        lost = true;
        continue;
      }
      keep.push(c);
    }
    this.outstanding = keep;
    this.flight = keep.reduce((a, c) => a + c.bytes, 0);
    if (this.rttProbe && !keep.some((c) => c.tsn === this.rttProbe!.tsn)) this.rttProbe = undefined;
    this.updateAdvancedPeerAckPoint(p.cumTsn);
    if (this.recoveryExitTsn !== undefined && p.cumTsn >= this.recoveryExitTsn) this.recoveryExitTsn = undefined;
    if (lost && this.recoveryExitTsn === undefined) {
      this.ssthresh = Math.max(this.cwnd / 2, o.minCwndMtus * o.mtuBytes);
      this.cwnd = this.ssthresh;
      this.partialBytesAcked = 0;
      this.recoveryExitTsn = this.nextTsn - 1;
      this.st.fastRetransmitCuts++;
    } else if (cumAdvanced && ackedBytes > 0 && this.recoveryExitTsn === undefined) {
      const fullyUsed = flightBefore + o.mtuBytes >= this.cwnd;
      if (this.cwnd <= this.ssthresh) {
        if (fullyUsed) this.cwnd += Math.min(ackedBytes, o.mtuBytes); // §7.2.1
      } else {
        this.partialBytesAcked += ackedBytes; // §7.2.2
        if (this.partialBytesAcked >= this.cwnd && fullyUsed) {
          this.partialBytesAcked -= this.cwnd;
          this.cwnd += o.mtuBytes;
        }
      }
    }
    // T3-rtx (§6.3.2 R2/R3): stop when nothing is outstanding, restart when the cum TSN advanced.
    if (cumAdvanced) this.t3Backoffs = 0;
    if (this.outstanding.length === 0) {
      this.t3DueUs = undefined; // the timer stops, which resets its backoff (dcSCTP Timer::Stop)
      this.t3Backoffs = 0;
    } else if (cumAdvanced || this.t3DueUs === undefined) this.t3DueUs = nowUs + this.t3DurationMs() * 1000;
    this.pump(nowUs);
  }

  /** RFC 4960 §6.3.1 RTO computation. */
  private onRtt(rttMs: number): void {
    this.rttProbe = undefined;
    if (this.srttMs === undefined) {
      this.srttMs = rttMs;
      this.rttvarMs = rttMs / 2;
    } else {
      this.rttvarMs = 0.75 * this.rttvarMs + 0.25 * Math.abs(this.srttMs - rttMs);
      this.srttMs = 0.875 * this.srttMs + 0.125 * rttMs;
    }
    this.rtoMs = Math.min(this.opts.rtoMaxMs, Math.max(this.opts.rtoMinMs, this.srttMs + 4 * this.rttvarMs));
  }

  /**
   * The T3-rtx timer's duration now (ms): the RTO doubled once per
   * consecutive expiry, at most `maxTimerBackoffMs` once doubled
   * (net/dcsctp/timer/timer.cc `GetBackoffDuration`), never above `rtoMaxMs`.
   */
  private t3DurationMs(): number {
    let d = this.rtoMs;
    for (let k = 0; k < this.t3Backoffs; k++) {
      d *= 2;
      if (d > this.opts.maxTimerBackoffMs) return Math.min(this.opts.maxTimerBackoffMs, this.opts.rtoMaxMs);
      if (d >= this.opts.rtoMaxMs) return this.opts.rtoMaxMs;
    }
    return d;
  }

  /** §6.3.3 T3-rtx expiry: cwnd to 1 MTU, the timer backs off ({@link t3DurationMs}); every outstanding chunk is abandoned (maxRetransmits 0). */
  private onT3(nowUs: number): void {
    const o = this.opts;
    this.st.t3Timeouts++;
    this.ssthresh = Math.max(this.cwnd / 2, o.minCwndMtus * o.mtuBytes);
    this.cwnd = o.mtuBytes;
    this.partialBytesAcked = 0;
    this.recoveryExitTsn = undefined;
    this.t3Backoffs = Math.min(this.t3Backoffs + 1, 32);
    for (const c of this.outstanding) {
      this.abandon(c.m);
      this.st.chunksAbandoned++;
    }
    this.outstanding = [];
    this.flight = 0;
    this.rttProbe = undefined;
    this.advancedPeerAckPoint = this.nextTsn - 1;
    this.t3DueUs = undefined;
    this.pump(nowUs);
  }

  private abandon(m: Message<M>): void {
    if (m.abandoned) return;
    m.abandoned = true;
    this.st.messagesAbandoned++;
    if (m.unsent > 0) {
      this.buffered -= m.unsent;
      m.unsent = 0;
    }
  }

  private updateAdvancedPeerAckPoint(cumTsn: number): void {
    const lowestOutstanding = this.outstanding.length ? this.outstanding[0].tsn : this.nextTsn;
    // Everything below the lowest outstanding chunk is acked or abandoned.
    this.advancedPeerAckPoint = Math.max(this.advancedPeerAckPoint, cumTsn, lowestOutstanding - 1);
  }

  /** Send new data while cwnd allows (§6.1 rule B), at most Max.Burst packets per opportunity. */
  private pump(nowUs: number): void {
    const o = this.opts;
    for (let burst = 0; burst < o.maxBurst; burst++) {
      if (this.flight >= this.cwnd) break;
      this.skipDone();
      if (this.queueHead >= this.queue.length) break;
      // As dcSCTP: a packet carries at most what cwnd still allows (§6.1 rule B, no overshoot).
      let room = Math.min(o.mtuBytes - SCTP_COMMON_HEADER_BYTES, this.cwnd - this.flight);
      if (room <= SCTP_DATA_CHUNK_HEADER_BYTES + 4) break;
      const chunks: SctpChunk<M>[] = [];
      let bytes = 0;
      while (this.queueHead < this.queue.length && room > SCTP_DATA_CHUNK_HEADER_BYTES + 4) {
        const m = this.queue[this.queueHead];
        const take = Math.min(m.unsent, (room - SCTP_DATA_CHUNK_HEADER_BYTES) & ~3);
        m.unsent -= take;
        m.chunks++;
        this.buffered -= take;
        const c: SctpChunk<M> = { tsn: this.nextTsn++, msgId: m.id, payloadBytes: take };
        if (m.unsent === 0) {
          c.last = { chunks: m.chunks, msg: m.msg };
          this.queueHead++;
        }
        const cb = SCTP_DATA_CHUNK_HEADER_BYTES + pad4(take);
        room -= cb;
        bytes += cb;
        chunks.push(c);
        this.outstanding.push({ tsn: c.tsn, bytes: cb, sentUs: nowUs, misses: 0, m });
        this.flight += cb;
        this.skipDone();
      }
      if (!this.rttProbe) this.rttProbe = { tsn: chunks[0].tsn, sentUs: nowUs };
      if (this.t3DueUs === undefined) this.t3DueUs = nowUs + this.t3DurationMs() * 1000;
      const wire = SCTP_COMMON_HEADER_BYTES + bytes + o.dtlsOverheadBytes;
      this.st.packetsSent++;
      this.st.wireBytesSent += wire;
      this.dataOut({ kind: 'data', chunks, immediateSack: this.cwnd < o.immediateSackUnderCwndMtus * o.mtuBytes, forwardTsn: this.advancedPeerAckPoint }, wire);
    }
    if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.queueHead);
      this.queueHead = 0;
    }
  }

  private skipDone(): void {
    while (this.queueHead < this.queue.length && this.queue[this.queueHead].unsent === 0) this.queueHead++;
  }

  stats(): SctpStats {
    return { ...this.st, cwndBytes: this.cwnd, ssthreshBytes: this.ssthresh, rtoMs: this.t3DurationMs(), srttMs: this.srttMs };
  }
}
