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
 * not made progress (at least `progressBytes` leaving its buffer within one
 * stall time) for longer than the stall time. The scales come from dcSCTP
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
 * 0 when unknown. "Drained" (back to the datachannel) = `bufferedAmount() <=
 * backlogBytes` with progress within the stall time (SACKs flow again; with
 * `drainProgresses` 2, two progresses), or an empty channel for the stall
 * time; or the carrier closed.
 *
 * Progress is measured as bytes that left the channel = bytes written through
 * this sink - `bufferedAmount()`; bytes others write into the same channel
 * (not through this sink) can only delay a detected progress, never fake one.
 *
 * **Rate ceiling**: the carrier is paced by the browser's own GCC, whatever we
 * offer (README answer 3: offered above `availableOutgoingBitrate`, the
 * pacer queue grew to 1.3-2.6 s and key-frame flushes threw it away). On the
 * carrier the sink therefore paces itself: datagrams wait in the sink's own
 * FIFO and go to the carrier as a leaky bucket at `carrier.rateCeilingBps()`
 * allows (a burst of `burstMs` at the ceiling, at least one datagram),
 * released on every call of `send` / `bufferedAmount` (the engine calls the
 * latter every tick). The FIFO is bounded: a datagram that would take it
 * above max(ceiling x `ceilingQueueMs`, `minCeilingQueueBytes`) is refused
 * (counted; the engine counts a send failure). Pacing instead of refusing at
 * the ceiling keeps frames whole: a refused packet in the middle of a key
 * frame costs the whole key frame. Without a known ceiling datagrams go to
 * the carrier at once (only its own queue bound applies).
 *
 * **A stale ceiling**: Chromium's estimate for the carrier moves only with
 * the transport-wide feedback on packets the carrier sent (GCC's AIMD may not
 * rise above 1.5x the acknowledged rate: libwebrtc
 * modules/remote_bitrate_estimator/aimd_rate_control.cc, ClampBitrate), so a
 * carrier that sat idle keeps whatever the last outage left: after AT&T's
 * uplink outage 30-90 kbps, measured in the browser benchmark (docs/results.md,
 * stop 33; the RTP carrier now floors it: rtp-carrier.ts `minBitrateBps`).
 * A switch onto a carrier that carried nothing for `staleCeilingMs` (default
 * 1 s: the estimate then describes no current traffic; always so for a
 * carrier's first use) starts a **stale episode**, which lasts until the
 * sink goes back to the datachannel: the sink then paces at
 * max(ceiling, min(`pathRateBps()`, `staleCeilingFactor` x ceiling)) instead
 * of the ceiling. `pathRateBps` is the path's own rate from our engine
 * (its congestion controller's target, which the datachannel's traffic kept
 * current); `staleCeilingFactor` (default 2.5) is libwebrtc's pacing factor
 * (modules/congestion_controller/goog_cc/goog_cc_network_control.cc,
 * kDefaultPaceMultiplier): Chromium's pacer sends up to 2.5x its estimate
 * without queueing, so what we offer within it goes out at once; above it the
 * pacer's queue would grow until its 2 s queue-time limit makes it drain
 * faster (modules/pacing/pacing_controller.cc, kMaxExpectedQueueLength: ~1.3
 * s of latency at a constant overload), which is too late for our frames.
 * Without `pathRateBps` (or while it is unknown or below the ceiling) the
 * sink paces at the ceiling, as on a fresh one.
 *
 * **What {@link StallFallbackSink.bufferedAmount} reports**: on the
 * datachannel, the channel's `bufferedAmount()` (unchanged behaviour). On the
 * carrier, the bytes ahead of the next datagram there: the sink's FIFO +
 * `carrier.queuedBytes()`, not the stale backlog left in the stalled
 * datachannel, which no new datagram waits behind. Hence the sender engine's
 * pacer (its bufferedAmount budget) keeps what the ceiling does not let
 * through in its own queue (with its deadline drops and priorities), its
 * frame dropping and congestion-window pushback see the carrier's queue, and
 * the single-path "last resort" rule (src/engine/sender-paths.ts
 * `lastResort`, which refuses a path whose sink reports more than
 * DRAIN_BACKLOG_BYTES = 4 kB) lets a single-path call send through a
 * downlink-only outage. That rule asks the sink ({@link StallFallbackSink.stalled},
 * `PathSink.stalled`) rather than comparing `bufferedAmount()` with
 * DRAIN_BACKLOG_BYTES, because a key frame on the carrier takes the
 * carrier's queue above 4 kB at once (its bytes wait for the ceiling): with
 * the comparison the rule dropped whole frames until it drained (simulator,
 * a 3 s downlink-only outage on a single path: 4.2 s frozen; asking the sink:
 * 1.3 s).
 *
 * **Key frame on the switch**: the datagrams left in the stalled datachannel
 * reach the receiver only after the outage, so what follows on the carrier
 * references frames the receiver does not have, and the receiver's key-frame
 * requests cannot reach us over the dead reverse direction. The `onSwitch`
 * callback tells the owner, which should ask the encoder for a key frame on
 * a switch to the carrier (the simulator does).
 *
 * When the sink goes back to the datachannel (drained, or the carrier
 * closed), what still waits in its FIFO is written into the datachannel, in
 * order.
 *
 * **A carrier negotiated on demand**: a stall found while the carrier is not
 * usable (not open, or its ceiling under `minCeilingBps`) calls its optional
 * `wake()` (src/transport/carrier.ts) on every update while it lasts, counted
 * once per stall in `stallsWithoutCarrier`; the sink keeps writing into the
 * datachannel and switches at the first update that finds the carrier open
 * with the stall still on. The RTP carrier's `attach: 'stall'` negotiates
 * its video transceiver then (src/transport/rtp-carrier.ts).
 *
 * No I/O, no timers: the state is re-evaluated on every call of `send` and
 * `bufferedAmount` (the sender engine reads `bufferedAmount` every tick), at
 * the injected clock's time.
 */
import type { Clock } from '../core/clock.js';
import { DRAIN_BACKLOG_BYTES } from '../engine/sender-path.js';
import type { PathSink } from '../engine/types.js';
import type { CarrierSenderStats, DatagramCarrier } from './carrier.js';

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
  /**
   * When something last arrived from the peer on this path (µs, the clock's
   * time base; e.g. the last datachannel message or receiver report of the
   * path), undefined = never. When given, a stall counts only while nothing
   * arrived for the stall time too: SCTP stalls for want of SACKs when the
   * reverse direction is silent (the case the carrier is for), while a
   * backlog behind a slow forward link (SACKs still arrive) is not helped by
   * a carrier on that same link and a switch costs a key frame. Default: not
   * used.
   */
  lastReverseUs?: () => number | undefined;
  /** Fixed stall time (ms); default derived: `stallScale` x max(400 ms, RTT + 200 ms) (see the module doc). */
  stallMs?: number;
  /** Factor on the derived stall time (default 1). */
  stallScale?: number;
  /** A backlog at or below this is drained (bytes). Default 1200: one datagram of ours / one dcSCTP packet. */
  backlogBytes?: number;
  /** Bytes that must leave the datachannel to count as progress. Default 1191 (one dcSCTP MTU: more than a T3-rtx probe packet carries). */
  progressBytes?: number;
  /**
   * Progresses within one stall time that take the sink back from the
   * carrier to its drained datachannel (see `drainedNow`): 1 (default) = any
   * progress, even one lone SACK; 2 (opt-in) = SACKs flow again. An empty
   * channel for the stall time takes it back either way. Measured with 2
   * (docs/results.md, stop 35 `swloss`): simulator, `--datachannel
   * sctp+rtp`, AT&T alone, 18 seeds, frozen 11.47 -> 10.55 s (no seed of
   * 10-18 worse), carriers and T-Mobile identical, att-tmobile converge
   * 2.90 -> 2.93 s (6 seeds); browser benchmark, interleaved, load 7-10 on
   * 2 cores: AT&T alone 13.1 -> 12.9 s frozen (6 + 6 runs, ranges
   * 11.2-16.1 / 10.9-15.9), T-Mobile alone 1.97 -> 2.54 s (4 + 4, one run
   * 3.8): not a clear win in the browser, so not the default yet.
   */
  drainProgresses?: 1 | 2;
  /** Bound of the sink's FIFO on the carrier, in time at the ceiling (ms). Default 500. */
  ceilingQueueMs?: number;
  /** Floor of that bound (bytes). Default 12 000: twice the engine pacer's smallest datachannel budget (6 kB). */
  minCeilingQueueBytes?: number;
  /** Burst handed to the carrier at once, in time at the ceiling (ms; at least one datagram). Default 20. */
  burstMs?: number;
  /**
   * Lowest useful carrier ceiling (bps); default 0 (off). While
   * `carrier.rateCeilingBps()` is known and below it the sink does not use
   * the carrier (and leaves it): a carrier that cannot carry the encoder's
   * lowest output (~140 kbps at 320x240@30, whatever its target; tools/capture-frame-sizes.ts) only
   * turns frames into late or broken ones (Chromium's GCC fell to 30 kbps
   * after AT&T's uplink outage: README answer 4).
   */
  minCeilingBps?: number;
  /** Called on each switch with the pipe now used: on 'carrier' the owner should ask the encoder for a key frame. */
  onSwitch?: (pipe: 'datachannel' | 'carrier') => void;
  /**
   * The path's own rate (bps) from our engine (e.g. its congestion
   * controller's target, PathState.rateBps), undefined = unknown: the rate
   * the sink paces a stale carrier ceiling up to (see the module doc, "A
   * stale ceiling"). Default: none (the sink paces at the ceiling).
   */
  pathRateBps?: () => number | undefined;
  /**
   * The path as our sender engine sees it (PathState: `srttMs`, `rateBps`),
   * undefined = unknown: stands for `rttMs` and `pathRateBps` where those are
   * not given (one read of the engine for both).
   */
  path?: () => { srttMs?: number; rateBps?: number } | undefined;
  /** A switch onto a carrier that carried nothing for this long (ms) starts a stale episode. Default 1000. */
  staleCeilingMs?: number;
  /** In a stale episode, the most the sink paces at, as a multiple of the ceiling. Default 2.5 (libwebrtc's pacing factor). */
  staleCeilingFactor?: number;
}

/** Defaults of the optional {@link StallFallbackOptions}. */
export const STALL_FALLBACK_DEFAULTS = Object.freeze({
  stallScale: 1,
  backlogBytes: 1200,
  progressBytes: DCSCTP_MTU_BYTES,
  ceilingQueueMs: 500,
  minCeilingQueueBytes: 12_000,
  burstMs: 20,
  minCeilingBps: 0,
  staleCeilingMs: 1000,
  staleCeilingFactor: 2.5,
  drainProgresses: 1,
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
  /** Of {@link toDatachannel}: the carrier's ceiling fell below `minCeilingBps`. */
  ceilingTooLow: number;
  /** Stalls found while the carrier was not usable (not yet negotiated, closed, ceiling too low): the carrier was woken ({@link DatagramCarrier.wake}). */
  stallsWithoutCarrier: number;
  /** Of those: the last time from such a stall's detection to the switch onto the carrier (ms; the negotiation of an on-demand carrier); undefined before one. */
  lastWakeToCarrierMs: number | undefined;
  /** The carrier's rate ceiling (bps) at each switch onto it, the last 8 (0: unknown). */
  ceilingsAtSwitchBps: number[];
  /** Of {@link toCarrier}: switches that started a stale episode (the carrier had carried nothing for `staleCeilingMs`). */
  staleSwitches: number;
  /** The carrier's rate ceiling now (bps; undefined: unknown or no carrier). */
  ceilingBps: number | undefined;
  /** The rate the sink paces the carrier at now (bps): the ceiling, or above it in a stale episode; undefined when not on the carrier or unknown. */
  paceBps: number | undefined;
  /** The carrier's sender as the browser reports it ({@link DatagramCarrier.senderStats}), when it does. */
  carrierSender?: CarrierSenderStats;
  /** Datagrams the datachannel refused. */
  datachannelRefused: number;
  /** Datagrams the carrier refused (closed, its queue bound): dropped. */
  carrierRefused: number;
  /** Datagrams refused because the sink's FIFO at the carrier's ceiling was full. */
  ceilingRefused: number;
  /** Datagrams moved from the sink's FIFO into the datachannel on a switch back. */
  requeuedToDatachannel: number;
  /** Bytes in the sink's FIFO now. */
  fifoBytes: number;
  /** Time spent on the carrier (ms). */
  carrierMs: number;
}

/** See the module doc. */
export class StallFallbackSink implements PathSink {
  private readonly dc: PathSink;
  private readonly getCarrier: () => DatagramCarrier | undefined;
  private readonly clock: Clock;
  private readonly rttMs: (() => number | undefined) | undefined;
  private readonly lastReverseUs: (() => number | undefined) | undefined;
  private readonly fixedStallMs: number | undefined;
  private readonly stallScale: number;
  private readonly backlogBytes: number;
  private readonly progressBytes: number;
  private readonly ceilingQueueMs: number;
  private readonly minCeilingQueueBytes: number;
  private readonly burstMs: number;
  private readonly minCeilingBps: number;
  private readonly onSwitch: ((pipe: 'datachannel' | 'carrier') => void) | undefined;
  private readonly pathRateBps: (() => number | undefined) | undefined;
  private readonly staleCeilingUs: number;
  private readonly staleCeilingFactor: number;
  /** When this sink last handed a datagram to the carrier (µs); -Infinity before. */
  private lastCarrierUs = Number.NEGATIVE_INFINITY;
  /** On the carrier in a stale episode (see the module doc). */
  private staleEpisode = false;
  /** The last `pathRateBps()` read, and when (µs). */
  private rate: number | undefined;
  private rateAtUs = Number.NEGATIVE_INFINITY;
  /** The sink's FIFO on the carrier (bounded by {@link fifoLimit}); head index and bytes. */
  private fifo: Uint8Array[] = [];
  private fifoHead = 0;
  private fifoBytes = 0;
  private onCarrier = false;
  /** StallFallbackOptions.drainProgresses === 2. */
  private readonly twoProgresses: boolean;
  /** In a stall that found no usable carrier (counted once per stall), since when (µs). */
  private stalledNoCarrier = false;
  private stalledNoCarrierUs = 0;
  /** On the carrier: since when the datachannel's buffer is empty (µs). */
  private emptySinceUs: number | undefined;
  private sinceUs: number;
  /** Bytes this sink wrote into the datachannel. */
  private written = 0;
  /** Departed bytes at the start of the progress count (and when), and the last progress. */
  private mark = 0;
  private markUs: number;
  private lastProgressUs: number;
  /** The progress before the last (µs; see {@link drainedNow}). */
  private prevProgressUs = Number.NEGATIVE_INFINITY;
  /** Leaky bucket at the carrier's ceiling: bytes, as of `bucketUs`. */
  private bucket = 0;
  private bucketUs: number;
  private readonly st: Omit<StallFallbackStats, 'pipe' | 'carrierMs' | 'fifoBytes' | 'ceilingBps' | 'paceBps' | 'carrierSender'> & { carrierUs: number };

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
    const path = opts.path;
    this.rttMs = opts.rttMs ?? (path && (() => path()?.srttMs));
    this.lastReverseUs = opts.lastReverseUs;
    this.fixedStallMs = opts.stallMs === undefined ? undefined : num('stallMs', opts.stallMs, 0, 0, true);
    this.stallScale = num('stallScale', opts.stallScale, d.stallScale, 0, true);
    this.backlogBytes = num('backlogBytes', opts.backlogBytes, d.backlogBytes, 0, false);
    this.progressBytes = num('progressBytes', opts.progressBytes, d.progressBytes, 0, false);
    this.ceilingQueueMs = num('ceilingQueueMs', opts.ceilingQueueMs, d.ceilingQueueMs, 0, true);
    this.minCeilingQueueBytes = num('minCeilingQueueBytes', opts.minCeilingQueueBytes, d.minCeilingQueueBytes, 0, false);
    this.burstMs = num('burstMs', opts.burstMs, d.burstMs, 0, false);
    this.minCeilingBps = num('minCeilingBps', opts.minCeilingBps, d.minCeilingBps, 0, false);
    this.onSwitch = opts.onSwitch;
    const dp = opts.drainProgresses ?? d.drainProgresses;
    if (dp !== 1 && dp !== 2) throw new RangeError(`StallFallbackSink: drainProgresses must be 1 or 2, got ${String(dp)}`);
    this.twoProgresses = dp === 2;
    this.pathRateBps = opts.pathRateBps ?? (path && (() => path()?.rateBps));
    this.staleCeilingUs = num('staleCeilingMs', opts.staleCeilingMs, d.staleCeilingMs, 0, false) * 1000;
    this.staleCeilingFactor = num('staleCeilingFactor', opts.staleCeilingFactor, d.staleCeilingFactor, 1, false);
    const now = this.clock.nowUs();
    this.sinceUs = now;
    this.lastProgressUs = now;
    this.markUs = now;
    this.bucketUs = now;
    this.st = {
      datachannelDatagrams: 0,
      datachannelBytes: 0,
      carrierDatagrams: 0,
      carrierBytes: 0,
      toCarrier: 0,
      toDatachannel: 0,
      carrierLost: 0,
      ceilingTooLow: 0,
      stallsWithoutCarrier: 0,
      lastWakeToCarrierMs: undefined,
      ceilingsAtSwitchBps: [],
      staleSwitches: 0,
      datachannelRefused: 0,
      carrierRefused: 0,
      ceilingRefused: 0,
      requeuedToDatachannel: 0,
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
      const ceiling = this.paceOf(carrier);
      if (ceiling === undefined && this.fifoBytes === 0) return this.toCarrier(carrier, bytes, now);
      if (this.fifoBytes > 0 && this.fifoBytes + bytes.length > this.fifoLimit(ceiling)) {
        st.ceilingRefused++;
        return false;
      }
      this.fifo.push(bytes.slice());
      this.fifoBytes += bytes.length;
      this.release(now);
      return true;
    }
    return this.toDatachannel(bytes);
  }

  /** Hand one datagram to the carrier (counted either way). */
  private toCarrier(carrier: DatagramCarrier | undefined, bytes: Uint8Array, now: number): boolean {
    const st = this.st;
    if (!carrier?.send(bytes)) {
      st.carrierRefused++;
      return false;
    }
    this.lastCarrierUs = now;
    st.carrierDatagrams++;
    st.carrierBytes += bytes.length;
    return true;
  }

  /** Write one datagram into the datachannel (counted either way). */
  private toDatachannel(bytes: Uint8Array): boolean {
    const st = this.st;
    if (!this.dc.send(bytes)) {
      st.datachannelRefused++;
      return false;
    }
    this.written += bytes.length;
    st.datachannelDatagrams++;
    st.datachannelBytes += bytes.length;
    return true;
  }

  /**
   * True while the path's datachannel holds a backlog (`bufferedAmount()` >
   * `stalledBacklogBytes`, default the engine's DRAIN_BACKLOG_BYTES 4 kB)
   * and the sink is not on the carrier: what the sender engine's single-path
   * "last resort" rule (src/engine/sender-paths.ts `lastResort`) means by a
   * stalled datachannel. On the carrier the path is not stalled even when the
   * carrier's queue (reported by {@link bufferedAmount}) holds a key frame.
   * Implements the optional `PathSink.stalled` (see the module doc).
   */
  stalled(stalledBacklogBytes = DRAIN_BACKLOG_BYTES): boolean {
    this.update(this.clock.nowUs());
    return !this.onCarrier && this.dc.bufferedAmount() > stalledBacklogBytes;
  }

  /** See the module doc: the datachannel's bufferedAmount, or on the carrier the bytes ahead on the carrier. */
  bufferedAmount(): number {
    this.update(this.clock.nowUs());
    if (!this.onCarrier) return this.dc.bufferedAmount();
    const q = this.getCarrier()?.queuedBytes() ?? 0;
    return this.fifoBytes + (Number.isFinite(q) && q > 0 ? q : 0);
  }

  stats(): StallFallbackStats {
    const now = this.clock.nowUs();
    this.update(now);
    const { carrierUs, ...rest } = this.st;
    const carrier = this.getCarrier();
    return {
      pipe: this.onCarrier ? 'carrier' : 'datachannel',
      ...rest,
      ceilingBps: ceilingOf(carrier),
      paceBps: this.onCarrier ? this.paceOf(carrier) : undefined,
      carrierSender: carrier?.senderStats?.(),
      ceilingsAtSwitchBps: [...rest.ceilingsAtSwitchBps],
      fifoBytes: this.fifoBytes,
      carrierMs: (carrierUs + (this.onCarrier ? now - this.sinceUs : 0)) / 1000,
    };
  }

  /** Bound of the FIFO (bytes) at the ceiling (bps, undefined = unknown: the floor). */
  private fifoLimit(ceiling: number | undefined): number {
    return Math.max(((ceiling ?? 0) * this.ceilingQueueMs) / 8000, this.minCeilingQueueBytes);
  }

  /**
   * The rate (bps) the sink paces the carrier at: its ceiling, or in a stale
   * episode up to min(path rate, staleCeilingFactor x ceiling) (module doc);
   * undefined when the ceiling is unknown.
   */
  private paceOf(carrier: DatagramCarrier | undefined): number | undefined {
    const ceiling = ceilingOf(carrier);
    if (ceiling === undefined || !this.staleEpisode) return ceiling;
    const r = this.pathRate();
    return typeof r === 'number' && Number.isFinite(r) && r > ceiling ? Math.min(r, this.staleCeilingFactor * ceiling) : ceiling;
  }

  /** `pathRateBps()`, read at most every 100 ms (the owner may compute it). */
  private pathRate(): number | undefined {
    const now = this.clock.nowUs();
    if (now - this.rateAtUs >= 100_000) {
      this.rateAtUs = now;
      this.rate = this.pathRateBps?.();
    }
    return this.rate;
  }

  /** Hand the FIFO's head to the carrier while the leaky bucket at the pacing rate allows. */
  private release(now: number): void {
    const carrier = this.getCarrier();
    const ceiling = this.paceOf(carrier);
    const dt = now - this.bucketUs;
    if (dt > 0) {
      this.bucket = ceiling === undefined ? 0 : Math.max(0, this.bucket - (ceiling * dt) / 8e6);
      this.bucketUs = now;
    }
    const burst = ceiling === undefined ? Number.POSITIVE_INFINITY : (ceiling * this.burstMs) / 8000;
    while (this.fifoHead < this.fifo.length) {
      const b = this.fifo[this.fifoHead];
      if (this.bucket > 0 && this.bucket + b.length > burst) break;
      this.fifoHead++;
      this.fifoBytes -= b.length;
      this.bucket += b.length;
      this.toCarrier(carrier, b, now);
    }
    this.compact();
  }

  private compact(): void {
    if (this.fifoHead === this.fifo.length) {
      this.fifo = [];
      this.fifoHead = 0;
    } else if (this.fifoHead > 256 && this.fifoHead * 2 > this.fifo.length) {
      this.fifo = this.fifo.slice(this.fifoHead);
      this.fifoHead = 0;
    }
  }

  /** The carrier, when it is open and its ceiling (with `minCeilingBps`) is high enough. */
  private usable(): DatagramCarrier | undefined {
    const carrier = this.getCarrier();
    const ceiling = this.minCeilingBps > 0 ? ceilingOf(carrier) : undefined;
    return carrier?.open === true && !(ceiling !== undefined && ceiling < this.minCeilingBps) ? carrier : undefined;
  }

  private update(now: number): void {
    const raw = this.dc.bufferedAmount();
    const buffered = Number.isFinite(raw) && raw > 0 ? raw : 0;
    const departed = this.written - buffered;
    if (departed < this.mark) this.mark = departed; // others' bytes entered the channel
    // The carrier (its `open` reads browser state) is looked at only on it or in a backlog.
    if (buffered <= this.backlogBytes) {
      if (this.onCarrier && this.usable() && !this.drainedNow(now, buffered, departed)) {
        this.release(now); // still on the carrier: its FIFO drains on every call, as documented
        return;
      }
      this.emptySinceUs = undefined;
      this.lastProgressUs = now;
      this.mark = departed;
      this.markUs = now;
      this.stalledNoCarrier = false;
      if (this.onCarrier) this.switchTo(false, now);
      return;
    }
    this.emptySinceUs = undefined;
    this.progress(now, departed);
    if (this.onCarrier) {
      if (!this.usable()) {
        if (this.getCarrier()?.open === true) this.st.ceilingTooLow++;
        else this.st.carrierLost++;
        this.switchTo(false, now);
      } else this.release(now);
      return;
    }
    const stallUs = this.stallTimeMs() * 1000;
    if (now - this.lastProgressUs <= stallUs) return;
    const rev = this.lastReverseUs?.();
    if (this.lastReverseUs && rev !== undefined && now - rev <= stallUs) return; // the reverse direction delivers
    if (this.usable()) {
      if (this.stalledNoCarrier) this.st.lastWakeToCarrierMs = (now - this.stalledNoCarrierUs) / 1000;
      this.stalledNoCarrier = false;
      this.switchTo(true, now);
      return;
    }
    // Stalled without a usable carrier: an on-demand carrier is negotiated now (DatagramCarrier.wake).
    if (!this.stalledNoCarrier) {
      this.stalledNoCarrier = true;
      this.stalledNoCarrierUs = now;
      this.st.stallsWithoutCarrier++;
    }
    this.getCarrier()?.wake?.();
  }

  /**
   * On the carrier with the channel's backlog at or below `backlogBytes`: has
   * it drained? Yes on evidence that SACKs flow again, or when the channel
   * has been empty for the stall time. The evidence: two progresses (see
   * {@link progress}) within one stall time, the latest within the last: a
   * working reverse direction brings a SACK at least every second packet or
   * delayed-ack time (RFC 4960 §6.2; dcSCTP `delayed_ack_max_timeout` 200
   * ms), so a draining channel progresses again within RTT + 200 ms, while
   * one SACK through a reverse direction that still passes ~1 packet/s (the
   * AT&T trace's downlink-only outages) acks everything outstanding at once
   * and then nothing. Going back on such a lone SACK wrote a new backlog
   * into the dead channel: another stall, its detection time and another key
   * frame (simulator, `--datachannel sctp+rtp`, AT&T alone, 18 seeds: frozen
   * 11.47 -> 10.55 s with two progresses required). Opt-in:
   * `drainProgresses` 2; by default one progress is enough. Nor is a retransmission-timeout packet that takes the last
   * bytes of the backlog (one packet per backed-off RTO while the reverse
   * direction is dead) such evidence (AT&T: a T3 packet at 27.5 s, in the
   * uplink outage).
   */
  /**
   * Progress = at least `progressBytes` left the channel within one stall
   * time (the count restarts every stall time, so a trickle of one
   * retransmission-timeout packet per RTO never adds up to progress).
   */
  private progress(now: number, departed: number): void {
    if (departed - this.mark >= this.progressBytes) {
      this.stalledNoCarrier = false;
      this.prevProgressUs = this.lastProgressUs;
      this.lastProgressUs = now;
      this.mark = departed;
      this.markUs = now;
    } else if (now - this.markUs > this.stallTimeMs() * 1000) {
      this.mark = departed;
      this.markUs = now;
    }
  }

  private drainedNow(now: number, buffered: number, departed: number): boolean {
    this.progress(now, departed);
    if (buffered > 0) this.emptySinceUs = undefined;
    else if (this.emptySinceUs === undefined) this.emptySinceUs = now;
    const stallUs = this.stallTimeMs() * 1000;
    // SACKs flow again: two progresses within the stall time (one SACK through a reverse direction that passes ~1 packet/s acks all at once).
    return (
      (now - this.lastProgressUs <= stallUs && (!this.twoProgresses || this.lastProgressUs - this.prevProgressUs <= stallUs)) || (this.emptySinceUs !== undefined && now - this.emptySinceUs > stallUs)
    );
  }

  private switchTo(carrier: boolean, now: number): void {
    if (this.onCarrier) this.st.carrierUs += now - this.sinceUs;
    this.onCarrier = carrier;
    this.sinceUs = now;
    if (carrier) {
      this.st.toCarrier++;
      this.staleEpisode = now - this.lastCarrierUs > this.staleCeilingUs;
      if (this.staleEpisode) this.st.staleSwitches++;
      const c = this.st.ceilingsAtSwitchBps;
      if (c.length >= 8) c.shift();
      c.push(Math.round(ceilingOf(this.getCarrier()) ?? 0));
      this.bucket = 0;
      this.bucketUs = now;
    } else {
      this.staleEpisode = false;
      this.st.toDatachannel++;
      // What still waits for the carrier goes into the datachannel, in order.
      while (this.fifoHead < this.fifo.length) {
        const b = this.fifo[this.fifoHead++];
        this.st.requeuedToDatachannel++;
        this.toDatachannel(b);
      }
      this.fifo = [];
      this.fifoHead = 0;
      this.fifoBytes = 0;
    }
    this.onSwitch?.(carrier ? 'carrier' : 'datachannel');
  }
}

/** The carrier's rate ceiling (bps) when known (finite and > 0). */
function ceilingOf(carrier: DatagramCarrier | undefined): number | undefined {
  const c = carrier?.rateCeilingBps();
  return typeof c === 'number' && Number.isFinite(c) && c > 0 ? c : undefined;
}
