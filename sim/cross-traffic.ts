/**
 * Cross-traffic models of the simulator (scenario field `crossTraffic`,
 * sim/net/scenario.ts): flows that compete with ours for a path's
 * bottleneck queue. They put their packets on the same {@link Link} as our
 * datagrams (same drop-tail queue, same capacity trace, same random loss),
 * so every drop or queueing delay they cause is one our flow sees too.
 *
 * - `reno`: a bulk TCP sender with its own ACK clock. Slow start and
 *   congestion avoidance (RFC 5681 §3.1: cwnd += 1 MSS per ACK below
 *   ssthresh, += MSS²/cwnd above), loss detected by three later segments
 *   being acknowledged (the DupThresh of RFC 5681 §3.2 / RFC 6675; the link
 *   never reorders), one multiplicative decrease per window of data
 *   (ssthresh = max(FlightSize/2, 2 MSS), RFC 5681 Eq. 4, with FlightSize =
 *   cwnd for a bulk sender; NewReno's recovery
 *   point, RFC 6582), retransmission timeout per RFC 6298 (RTO = SRTT + 4
 *   RTTVAR, at least 200 ms as Linux, initial 1 s, doubled on expiry; cwnd
 *   back to 1 MSS). The receiver ACKs every segment (no delayed ACKs);
 *   lost segments are not resent as such: a bulk sender's goodput is what
 *   counts here, so each new segment is new data.
 * - `cubic`: the same sender with CUBIC's window (RFC 9438 §4): W_cubic(t) =
 *   C·(t - K)³ + W_max (Eq. 1), K = ∛(W_max·(1 - β)/C) (Eq. 2), C = 0.4,
 *   β = 0.7; target W_cubic(t + RTT) per ACK (§4.4-4.5, cwnd +=
 *   (target - cwnd)/cwnd), the Reno-friendly estimate W_est (§4.3, α =
 *   3(1 - β)/(1 + β)), fast convergence (§4.7) and cwnd·β on loss (§4.6).
 * - `cbr`: constant bit rate, 1200-byte payloads (+28 bytes UDP/IP) evenly
 *   spaced, no feedback.
 * - `gcc-video` and `fractal-video` are not here: they are our own
 *   SenderEngine/ReceiverEngine (GCC or the `fractal` estimator) on one
 *   path (sim/run-loop.ts builds it like a stream of ours).
 *
 * Deterministic: no randomness; time only from the `nowUs` arguments (µs).
 */
import type { Link } from './net/link.js';
import type { CrossTrafficSpec } from './net/scenario.js';

/** TCP segment on the wire: 1448 bytes of payload + 52 of TCP/IP headers with timestamps (bytes). */
export const TCP_SEGMENT_BYTES = 1500;
/** TCP payload per segment (bytes). */
export const TCP_MSS_BYTES = 1448;
/** A pure ACK on the wire (bytes). */
export const TCP_ACK_BYTES = 52;
/** CBR datagram on the wire: 1200 payload + 28 UDP/IP (bytes). */
export const CBR_PACKET_BYTES = 1228;
/** CUBIC constants (RFC 9438 §4.1, §4.6). */
export const CUBIC_C = 0.4;
export const CUBIC_BETA = 0.7;
/** RTO bounds (µs): RFC 6298 initial 1 s; Linux's 200 ms floor; 60 s ceiling (RFC 6298 §2.5). */
const RTO_INITIAL_US = 1_000_000;
const RTO_MIN_US = 200_000;
const RTO_MAX_US = 60_000_000;
/** Bound of the congestion window and of the outstanding segments (segments). */
const MAX_CWND = 10_000;

/** A cross-traffic packet on a link: flow index, sequence number, data or ACK. */
export interface CrossPacket {
  x: number;
  seq: number;
  ack: boolean;
}

/** Per-flow counters. */
export interface CrossFlowStats {
  kind: CrossTrafficSpec['kind'];
  path: number;
  startS: number;
  stopS: number;
  packetsSent: number;
  bytesSent: number;
  packetsDelivered: number;
  bytesDelivered: number;
  /** TCP: segments detected lost, RTO expiries, last cwnd (segments), last SRTT (ms). */
  lossEvents: number;
  timeouts: number;
  cwnd: number;
  srttMs: number;
}

/** A model flow driven by the run loop. */
export interface CrossFlow {
  readonly index: number;
  readonly spec: CrossTrafficSpec;
  /** Size of its data packets on the wire (bytes). */
  readonly packetBytes: number;
  /** Next time (µs) the flow wants {@link onTimer}, Infinity when none. */
  nextWakeUs(): number;
  onTimer(nowUs: number): void;
  /** One of its packets came out of a link at `nowUs` (data on the up link, ACKs on the down link). */
  onDelivered(p: CrossPacket, nowUs: number): void;
  stats(): CrossFlowStats;
}

/** The links of the flow's path: data goes up, ACKs come back down. */
export interface CrossLinks<T> {
  up: Link<T>;
  down: Link<T>;
  /** Wrap a cross packet into the link's item type. */
  wrap(p: CrossPacket): T;
}

abstract class BaseFlow<T> implements CrossFlow {
  abstract readonly packetBytes: number;
  protected readonly startUs: number;
  protected readonly stopUs: number;
  protected readonly st: CrossFlowStats;
  constructor(
    readonly index: number,
    readonly spec: CrossTrafficSpec,
    protected readonly links: CrossLinks<T>,
    endUs: number,
  ) {
    this.startUs = Math.round(spec.startS * 1e6);
    this.stopUs = Math.min(endUs, spec.stopS === undefined ? Number.POSITIVE_INFINITY : Math.round(spec.stopS * 1e6));
    this.st = {
      kind: spec.kind,
      path: spec.path,
      startS: spec.startS,
      stopS: this.stopUs / 1e6,
      packetsSent: 0,
      bytesSent: 0,
      packetsDelivered: 0,
      bytesDelivered: 0,
      lossEvents: 0,
      timeouts: 0,
      cwnd: 0,
      srttMs: 0,
    };
  }
  protected active(nowUs: number): boolean {
    return nowUs >= this.startUs && nowUs < this.stopUs;
  }
  protected sendData(seq: number, bytes: number, nowUs: number): void {
    this.st.packetsSent++;
    this.st.bytesSent += bytes;
    this.links.up.send(this.links.wrap({ x: this.index, seq, ack: false }), bytes, nowUs);
  }
  abstract nextWakeUs(): number;
  abstract onTimer(nowUs: number): void;
  abstract onDelivered(p: CrossPacket, nowUs: number): void;
  stats(): CrossFlowStats {
    return { ...this.st };
  }
}

/** Constant bit rate flow. */
class CbrFlow<T> extends BaseFlow<T> {
  readonly packetBytes = CBR_PACKET_BYTES;
  private nextUs: number;
  private seq = 0;
  private readonly intervalUs: number;
  constructor(index: number, spec: CrossTrafficSpec, links: CrossLinks<T>, endUs: number) {
    super(index, spec, links, endUs);
    this.intervalUs = (CBR_PACKET_BYTES * 8) / (spec.rateMbps ?? 1);
    this.nextUs = this.startUs;
  }
  nextWakeUs(): number {
    return this.nextUs < this.stopUs ? this.nextUs : Number.POSITIVE_INFINITY;
  }
  onTimer(nowUs: number): void {
    while (this.nextUs <= nowUs && this.nextUs < this.stopUs) {
      this.sendData(this.seq++, CBR_PACKET_BYTES, nowUs);
      this.nextUs += this.intervalUs;
    }
  }
  onDelivered(p: CrossPacket): void {
    if (p.ack) return;
    this.st.packetsDelivered++;
    this.st.bytesDelivered += CBR_PACKET_BYTES;
  }
}

/** Bulk TCP sender + receiver (Reno or CUBIC window; see the module doc). */
class TcpFlow<T> extends BaseFlow<T> {
  readonly packetBytes = TCP_SEGMENT_BYTES;
  private readonly cubic: boolean;
  private cwnd = 10; // RFC 6928 initial window
  private ssthresh = Number.POSITIVE_INFINITY;
  private nextSeq = 0;
  private recoveryPoint = -1;
  // Outstanding segments in send order: seq, send time, acked flag (a deque over arrays).
  private outSeq: number[] = [];
  private outSent: number[] = [];
  private outAcked: boolean[] = [];
  private outHead = 0;
  private srttUs = 0;
  private rttvarUs = 0;
  private rtoUs = RTO_INITIAL_US;
  private rtoDeadlineUs = Number.POSITIVE_INFINITY;
  private started = false;
  // CUBIC state (RFC 9438 §4).
  private wMax = 0;
  private wLastMax = 0;
  private epochStartUs = -1;
  private k = 0;
  private wEst = 0;

  constructor(index: number, spec: CrossTrafficSpec, links: CrossLinks<T>, endUs: number) {
    super(index, spec, links, endUs);
    this.cubic = spec.kind === 'cubic';
  }

  nextWakeUs(): number {
    if (!this.started) return this.startUs < this.stopUs ? this.startUs : Number.POSITIVE_INFINITY;
    return this.rtoDeadlineUs;
  }

  onTimer(nowUs: number): void {
    if (!this.started) {
      if (nowUs < this.startUs) return;
      this.started = true;
      this.fill(nowUs);
      return;
    }
    if (nowUs < this.rtoDeadlineUs) return;
    // RTO expired (RFC 6298 §5.4-5.7; RFC 5681 Eq. 4 and cwnd = 1 MSS): everything outstanding is lost.
    this.st.timeouts++;
    const flight = this.outstanding();
    this.ssthresh = Math.max(flight / 2, 2);
    if (this.cubic) this.cubicLoss();
    this.cwnd = 1;
    this.outSeq = [];
    this.outSent = [];
    this.outAcked = [];
    this.outHead = 0;
    this.recoveryPoint = this.nextSeq - 1;
    this.rtoUs = Math.min(RTO_MAX_US, this.rtoUs * 2);
    this.rtoDeadlineUs = Number.POSITIVE_INFINITY;
    this.fill(nowUs);
  }

  onDelivered(p: CrossPacket, nowUs: number): void {
    if (!p.ack) {
      // Receiver: count the data, ACK it at once on the reverse link.
      this.st.packetsDelivered++;
      this.st.bytesDelivered += TCP_SEGMENT_BYTES;
      this.links.down.send(this.links.wrap({ x: this.index, seq: p.seq, ack: true }), TCP_ACK_BYTES, nowUs);
      return;
    }
    this.onAck(p.seq, nowUs);
  }

  private outstanding(): number {
    return this.outSeq.length - this.outHead;
  }

  private onAck(seq: number, nowUs: number): void {
    const base = this.outHead < this.outSeq.length ? this.outSeq[this.outHead] : undefined;
    if (base === undefined || seq < base) return; // for a segment written off by an RTO
    const i = this.outHead + (seq - base);
    if (i >= this.outSeq.length || this.outSeq[i] !== seq || this.outAcked[i]) return;
    this.outAcked[i] = true;
    // RTT sample (RFC 6298 §2; every segment is sent once, so Karn's rule never applies).
    const r = nowUs - this.outSent[i];
    if (this.srttUs === 0) {
      this.srttUs = r;
      this.rttvarUs = r / 2;
    } else {
      this.rttvarUs = 0.75 * this.rttvarUs + 0.25 * Math.abs(this.srttUs - r);
      this.srttUs = 0.875 * this.srttUs + 0.125 * r;
    }
    this.rtoUs = Math.min(RTO_MAX_US, Math.max(RTO_MIN_US, this.srttUs + 4 * this.rttvarUs));
    // Window growth for a segment sent after the last recovery point.
    if (seq > this.recoveryPoint) this.grow(nowUs);
    // Retire acknowledged segments; a segment with 3 later ones acknowledged is lost (DupThresh).
    let lost = false;
    let lostSeq = -1;
    while (this.outHead < this.outSeq.length) {
      const s = this.outSeq[this.outHead];
      if (this.outAcked[this.outHead]) this.outHead++;
      else if (s + 3 <= seq) {
        lost = true;
        lostSeq = s;
        this.outHead++;
      } else break;
    }
    if (this.outHead > 4096 && this.outHead * 2 > this.outSeq.length) {
      this.outSeq = this.outSeq.slice(this.outHead);
      this.outSent = this.outSent.slice(this.outHead);
      this.outAcked = this.outAcked.slice(this.outHead);
      this.outHead = 0;
    }
    if (lost) {
      this.st.lossEvents++;
      if (lostSeq > this.recoveryPoint) {
        // One decrease per window (RFC 6582 recovery point).
        this.recoveryPoint = this.nextSeq - 1;
        if (this.cubic) {
          this.cubicLoss();
          this.cwnd = Math.max(this.cwnd * CUBIC_BETA, 2);
          this.ssthresh = this.cwnd;
        } else {
          this.ssthresh = Math.max(this.cwnd / 2, 2);
          this.cwnd = this.ssthresh;
        }
      }
    }
    this.rtoDeadlineUs = this.outstanding() > 0 ? nowUs + this.rtoUs : Number.POSITIVE_INFINITY;
    this.fill(nowUs);
  }

  private grow(nowUs: number): void {
    if (this.cwnd < this.ssthresh) {
      this.cwnd = Math.min(MAX_CWND, this.cwnd + 1); // slow start
      return;
    }
    if (!this.cubic) {
      this.cwnd = Math.min(MAX_CWND, this.cwnd + 1 / this.cwnd); // RFC 5681 congestion avoidance
      return;
    }
    // RFC 9438 §4.2-4.5.
    if (this.epochStartUs < 0) {
      this.epochStartUs = nowUs;
      if (this.cwnd < this.wMax) this.k = Math.cbrt((this.wMax * (1 - CUBIC_BETA)) / CUBIC_C);
      else {
        this.k = 0;
        this.wMax = this.cwnd;
      }
      this.wEst = this.cwnd;
    }
    const t = (nowUs - this.epochStartUs) / 1e6;
    const rttS = (this.srttUs || 100_000) / 1e6;
    const target = CUBIC_C * (t + rttS - this.k) ** 3 + this.wMax;
    const alpha = (3 * (1 - CUBIC_BETA)) / (1 + CUBIC_BETA);
    this.wEst += alpha / this.cwnd;
    let next: number;
    if (this.wEst > target) next = this.cwnd + (this.wEst - this.cwnd) / this.cwnd;
    else if (target > this.cwnd) next = this.cwnd + (Math.min(target, 1.5 * this.cwnd) - this.cwnd) / this.cwnd;
    else next = this.cwnd + 0.01 / this.cwnd;
    this.cwnd = Math.min(MAX_CWND, next);
  }

  /** CUBIC's W_max with fast convergence (RFC 9438 §4.6-4.7); a new epoch starts with the next ACK. */
  private cubicLoss(): void {
    this.wMax = this.cwnd < this.wLastMax ? (this.cwnd * (1 + CUBIC_BETA)) / 2 : this.cwnd;
    this.wLastMax = this.cwnd;
    this.epochStartUs = -1;
  }

  /** Send new segments while the window allows (and the flow is active). */
  private fill(nowUs: number): void {
    this.st.cwnd = Math.round(this.cwnd * 10) / 10;
    this.st.srttMs = Math.round(this.srttUs / 100) / 10;
    if (!this.active(nowUs)) return;
    while (this.outstanding() < Math.floor(this.cwnd)) {
      const seq = this.nextSeq++;
      this.outSeq.push(seq);
      this.outSent.push(nowUs);
      this.outAcked.push(false);
      this.sendData(seq, TCP_SEGMENT_BYTES, nowUs);
    }
    if (this.outstanding() > 0 && this.rtoDeadlineUs === Number.POSITIVE_INFINITY) this.rtoDeadlineUs = nowUs + this.rtoUs;
  }
}

/**
 * Build the model flow of a validated spec (`gcc-video` and `fractal-video`
 * are built by the run loop, not here).
 * @throws RangeError for `gcc-video` and `fractal-video`
 */
export function createCrossFlow<T>(index: number, spec: CrossTrafficSpec, links: CrossLinks<T>, endUs: number): CrossFlow {
  switch (spec.kind) {
    case 'cbr':
      return new CbrFlow(index, spec, links, endUs);
    case 'reno':
    case 'cubic':
      return new TcpFlow(index, spec, links, endUs);
    default:
      throw new RangeError(`createCrossFlow: ${spec.kind} is built by the run loop`);
  }
}
