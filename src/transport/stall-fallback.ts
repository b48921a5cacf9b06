/**
 * The stall fallback of one path: a {@link PathSink} over the path's
 * datachannel sink and its {@link DatagramCarrier} (src/transport/carrier.ts).
 * It writes into the datachannel, and into the carrier while the datachannel
 * is **stalled**; it goes back to the datachannel once that has drained.
 *
 * Why: an RTCDataChannel is an SCTP association, which sends only what SACKs
 * arriving on the reverse direction allow (RFC 4960 §6.1 rule B, §7.2). When a
 * path's downlink dies while its uplink works (the AT&T LTE trace: 20.3-23.3,
 * 28-30, 38.3-41.5 s), the channel's `bufferedAmount` stops draining and the
 * call freezes, while an RTP sender, which needs no acknowledgement, keeps
 * delivering (tools/experiments/rtp-carrier/README.md, answer 4). After such
 * an outage SCTP recovers in a few RTTs, a GCC-paced RTP sender in seconds
 * (same README, `att-follow`), so the carrier is used only while the
 * datachannel is stuck.
 *
 * **Stalled** means: `bufferedAmount() > backlogBytes` and the datachannel has
 * not made progress (fewer than `progressBytes` left its buffer since the
 * last progress) for longer than the stall time. The scales come from dcSCTP
 * (webrtc net/dcsctp/public/dcsctp_options.h) as Chromium runs it:
 * - A channel holding a backlog with working SACKs drains within about one
 *   RTT: the receiver SACKs every second packet and at once while the
 *   sender's cwnd is below `immediate_sack_under_cwnd_mtus` (RFC 4960 §6.2,
 *   RFC 7053), else within the delayed-ack time (`delayed_ack_max_timeout`
 *   200 ms). So a healthy gap is at most RTT + 200 ms.
 * - SCTP itself concludes that its SACKs are missing after the RTO, at least
 *   `rto_min` 400 ms (RFC 4960 §6.3.3, T3-rtx). After that it sends one
 *   packet per (doubling) RTO with cwnd = 1 MTU (§7.2.3), which is why one
 *   packet's departure (< 1 MTU, 1191 bytes in dcSCTP) is not progress.
 * Stall time = `stallScale` x max(rto_min 400 ms, RTT + 200 ms) unless
 * `stallMs` fixes it; RTT from the `rttMs` option (e.g. the path's SRTT),
 * 0 when unknown. "Drained" = `bufferedAmount() <= backlogBytes`.
 *
 * Progress is measured as bytes that left the channel = bytes written through
 * this sink - `bufferedAmount()`; bytes others write into the same channel
 * (not through this sink) can only delay a detected progress, never fake one.
 *
 * **What {@link StallFallbackSink.bufferedAmount} reports**: on the
 * datachannel, the channel's `bufferedAmount()` (unchanged behaviour). On the
 * carrier, the bytes ahead of the next datagram on the carrier:
 * max(`carrier.queuedBytes()`, the backlog of the sink's own rate limit at
 * `carrier.rateCeilingBps()`), not the stale backlog left in the stalled
 * datachannel, which no new datagram waits behind. Hence the sender engine's
 * pacer (its bufferedAmount budget), frame dropping and congestion-window
 * pushback see the carrier's queue, and the single-path "last resort" rule
 * (src/engine/sender-paths.ts `lastResort`, which refuses a path whose
 * datachannel holds more than DRAIN_BACKLOG_BYTES = 4 kB) lets a single-path
 * call send through a downlink-only outage as long as the carrier keeps its
 * queue below that (the default rate-limit queue floor, 2.4 kB, does).
 *
 * **Rate ceiling**: the carrier is paced by the browser's own GCC, whatever we
 * offer (README answer 3: offered above `availableOutgoingBitrate`, the
 * pacer queue grew to 1.3-2.6 s). The sink keeps a leaky bucket draining at
 * `carrier.rateCeilingBps()` and refuses a datagram that would take it above
 * max(ceiling x `ceilingQueueMs`, `minCeilingQueueBytes`): a counted refusal
 * (the engine counts a send failure), never an unbounded queue. Without a
 * known ceiling only the carrier's own queue bound applies.
 *
 * No I/O, no timers: the state is re-evaluated on every call of `send` and
 * `bufferedAmount` (the sender engine reads `bufferedAmount` every tick), at
 * the injected clock's time.
 */
import type { Clock } from '../core/clock.js';
import type { PathSink } from '../engine/types.js';
import type { DatagramCarrier } from './carrier.js';

/** dcSCTP's minimum RTO (ms): webrtc net/dcsctp/public/dcsctp_options.h `rto_min`. */
export const DCSCTP_RTO_MIN_MS = 400;
/** dcSCTP's longest delayed SACK (ms): dcsctp_options.h `delayed_ack_max_timeout`. */
export const DCSCTP_DELAYED_ACK_MAX_MS = 200;
/** dcSCTP's MTU (bytes of a whole SCTP packet): dcsctp_options.h `mtu`. */
export const DCSCTP_MTU_BYTES = 1191;

/** Options of {@link StallFallbackSink}; only `datachannel`, `carrier` and `clock` are required. */
export interface StallFallbackOptions {
  /** The path's datachannel sink (RTCDataChannel: `send` and `bufferedAmount`). */
  datachannel: PathSink;
  /**
   * The path's carrier, or a getter for the current one (a path's transport
   * may be replaced: a new generation brings a new carrier); undefined = none
   * (the sink then only passes through to the datachannel).
   */
  carrier: DatagramCarrier | (() => DatagramCarrier | undefined) | undefined;
  /** Time source (µs). */
  clock: Clock;
  /** The path's RTT (ms), e.g. the engine's SRTT or ICE's currentRoundTripTime; undefined = unknown (0 is used). */
  rttMs?: () => number | undefined;
  /** Fixed stall time (ms); default derived: `stallScale` x max(400 ms, RTT + 200 ms) (see the module doc). */
  stallMs?: number;
  /** Factor on the derived stall time (default 1). */
  stallScale?: number;
  /** A backlog at or below this is drained (bytes). Default 1200: one datagram of ours / one dcSCTP packet. */
  backlogBytes?: number;
  /** Bytes that must leave the datachannel to count as progress. Default 1191 (one dcSCTP MTU: more than a T3-rtx probe packet carries). */
  progressBytes?: number;
  /** Longest wait in the sink's rate limit at the carrier's ceiling (ms). Default 100. */
  ceilingQueueMs?: number;
  /** Floor of that limit (bytes). Default 2400: two full datagrams, below the engine's 4 kB last-resort limit. */
  minCeilingQueueBytes?: number;
}

/** Defaults of the optional {@link StallFallbackOptions}. */
export const STALL_FALLBACK_DEFAULTS = Object.freeze({
  stallScale: 1,
  backlogBytes: 1200,
  progressBytes: DCSCTP_MTU_BYTES,
  ceilingQueueMs: 100,
  minCeilingQueueBytes: 2400,
});

/** Counters of one {@link StallFallbackSink} (getStats-style; bytes are datagram bytes). */
export interface StallFallbackStats {
  /** Where the next datagram goes. */
  pipe: 'datachannel' | 'carrier';
  datachannelDatagrams: number;
  datachannelBytes: number;
  carrierDatagrams: number;
  carrierBytes: number;
  /** Switches datachannel -> carrier (stall detected). */
  toCarrier: number;
  /** Switches carrier -> datachannel (drained, or the carrier closed: `carrierLost`). */
  toDatachannel: number;
  /** Of {@link toDatachannel}: the carrier closed while the datachannel was still stalled. */
  carrierLost: number;
  /** Datagrams the datachannel refused. */
  datachannelRefused: number;
  /** Datagrams the carrier refused (closed, its queue bound). */
  carrierRefused: number;
  /** Datagrams refused by the rate limit at the carrier's ceiling. */
  ceilingRefused: number;
  /** Time spent on the carrier (ms). */
  carrierMs: number;
}

/** See the module doc. */
export class StallFallbackSink implements PathSink {
  private readonly dc: PathSink;
  private readonly getCarrier: () => DatagramCarrier | undefined;
  private readonly clock: Clock;
  private readonly rttMs: (() => number | undefined) | undefined;
  private readonly fixedStallMs: number | undefined;
  private readonly stallScale: number;
  private readonly backlogBytes: number;
  private readonly progressBytes: number;
  private readonly ceilingQueueMs: number;
  private readonly minCeilingQueueBytes: number;
  private onCarrier = false;
  private sinceUs: number;
  /** Bytes this sink wrote into the datachannel. */
  private written = 0;
  /** Departed bytes at the last progress, and when. */
  private mark = 0;
  private lastProgressUs: number;
  /** Leaky bucket at the carrier's ceiling: bytes, as of `bucketUs`. */
  private bucket = 0;
  private bucketUs: number;
  private readonly st: Omit<StallFallbackStats, 'pipe' | 'carrierMs'> & { carrierUs: number };

  /**
   * @throws RangeError when a number option is not finite or out of range
   *   (stallMs, stallScale, ceilingQueueMs > 0; the byte sizes >= 0).
   */
  constructor(opts: StallFallbackOptions) {
    const d = STALL_FALLBACK_DEFAULTS;
    const num = (k: string, v: number | undefined, dflt: number, min: number, strict: boolean): number => {
      const x = v ?? dflt;
      if (typeof x !== 'number' || !Number.isFinite(x) || x < min || (strict && x === min))
        throw new RangeError(`StallFallbackSink: ${k} must be a finite number ${strict ? '>' : '>='} ${min}, got ${String(v)}`);
      return x;
    };
    this.dc = opts.datachannel;
    const c = opts.carrier;
    this.getCarrier = typeof c === 'function' ? c : () => c;
    this.clock = opts.clock;
    this.rttMs = opts.rttMs;
    this.fixedStallMs = opts.stallMs === undefined ? undefined : num('stallMs', opts.stallMs, 0, 0, true);
    this.stallScale = num('stallScale', opts.stallScale, d.stallScale, 0, true);
    this.backlogBytes = num('backlogBytes', opts.backlogBytes, d.backlogBytes, 0, false);
    this.progressBytes = num('progressBytes', opts.progressBytes, d.progressBytes, 0, false);
    this.ceilingQueueMs = num('ceilingQueueMs', opts.ceilingQueueMs, d.ceilingQueueMs, 0, true);
    this.minCeilingQueueBytes = num('minCeilingQueueBytes', opts.minCeilingQueueBytes, d.minCeilingQueueBytes, 0, false);
    const now = this.clock.nowUs();
    this.sinceUs = now;
    this.lastProgressUs = now;
    this.bucketUs = now;
    this.st = {
      datachannelDatagrams: 0,
      datachannelBytes: 0,
      carrierDatagrams: 0,
      carrierBytes: 0,
      toCarrier: 0,
      toDatachannel: 0,
      carrierLost: 0,
      datachannelRefused: 0,
      carrierRefused: 0,
      ceilingRefused: 0,
      carrierUs: 0,
    };
  }

  /** The stall time now (ms): `stallMs`, or `stallScale` x max(rto_min, RTT + delayed-ack max). */
  stallTimeMs(): number {
    if (this.fixedStallMs !== undefined) return this.fixedStallMs;
    const r = this.rttMs?.();
    const rtt = typeof r === 'number' && Number.isFinite(r) && r > 0 ? r : 0;
    return this.stallScale * Math.max(DCSCTP_RTO_MIN_MS, rtt + DCSCTP_DELAYED_ACK_MAX_MS);
  }

  /** True while datagrams go on the carrier. */
  get onCarrierNow(): boolean {
    this.update(this.clock.nowUs());
    return this.onCarrier;
  }

  send(bytes: Uint8Array): boolean {
    const now = this.clock.nowUs();
    this.update(now);
    const st = this.st;
    if (this.onCarrier) {
      const carrier = this.getCarrier();
      const limit = this.bucketLimit(carrier);
      if (limit !== undefined && this.bucket > 0 && this.bucket + bytes.length > limit) {
        st.ceilingRefused++;
        return false;
      }
      if (!carrier?.send(bytes)) {
        st.carrierRefused++;
        return false;
      }
      if (limit !== undefined) this.bucket += bytes.length;
      st.carrierDatagrams++;
      st.carrierBytes += bytes.length;
      return true;
    }
    if (!this.dc.send(bytes)) {
      st.datachannelRefused++;
      return false;
    }
    this.written += bytes.length;
    st.datachannelDatagrams++;
    st.datachannelBytes += bytes.length;
    return true;
  }

  /** See the module doc: the datachannel's bufferedAmount, or on the carrier the bytes ahead on the carrier. */
  bufferedAmount(): number {
    this.update(this.clock.nowUs());
    if (!this.onCarrier) return this.dc.bufferedAmount();
    const q = this.getCarrier()?.queuedBytes() ?? 0;
    return Math.max(Number.isFinite(q) && q > 0 ? q : 0, this.bucket);
  }

  stats(): StallFallbackStats {
    const now = this.clock.nowUs();
    this.update(now);
    const { carrierUs, ...rest } = this.st;
    return { pipe: this.onCarrier ? 'carrier' : 'datachannel', ...rest, carrierMs: (carrierUs + (this.onCarrier ? now - this.sinceUs : 0)) / 1000 };
  }

  /** Bucket bound (bytes) at the carrier's ceiling, undefined when the ceiling is unknown. */
  private bucketLimit(carrier: DatagramCarrier | undefined): number | undefined {
    const c = carrier?.rateCeilingBps();
    if (typeof c !== 'number' || !Number.isFinite(c) || c <= 0) return undefined;
    return Math.max((c * this.ceilingQueueMs) / 8000, this.minCeilingQueueBytes);
  }

  private update(now: number): void {
    // The rate-limit bucket drains at the ceiling (nothing drains it without one).
    const carrier = this.getCarrier();
    const c = carrier?.rateCeilingBps();
    const dt = now - this.bucketUs;
    if (dt > 0) {
      this.bucket = typeof c === 'number' && Number.isFinite(c) && c > 0 ? Math.max(0, this.bucket - (c * dt) / 8e6) : 0;
      this.bucketUs = now;
    }
    const open = carrier?.open === true;
    const raw = this.dc.bufferedAmount();
    const buffered = Number.isFinite(raw) && raw > 0 ? raw : 0;
    const departed = this.written - buffered;
    if (departed < this.mark) this.mark = departed; // others' bytes entered the channel
    if (buffered <= this.backlogBytes) {
      this.lastProgressUs = now;
      this.mark = departed;
      if (this.onCarrier) this.switchTo(false, now);
      return;
    }
    if (departed - this.mark >= this.progressBytes) {
      this.lastProgressUs = now;
      this.mark = departed;
    }
    if (this.onCarrier) {
      if (!open) {
        this.st.carrierLost++;
        this.switchTo(false, now);
      }
      return;
    }
    if (open && now - this.lastProgressUs > this.stallTimeMs() * 1000) this.switchTo(true, now);
  }

  private switchTo(carrier: boolean, now: number): void {
    if (this.onCarrier) this.st.carrierUs += now - this.sinceUs;
    this.onCarrier = carrier;
    this.sinceUs = now;
    if (carrier) {
      this.st.toCarrier++;
      this.bucket = 0;
      this.bucketUs = now;
    } else this.st.toDatachannel++;
  }
}
