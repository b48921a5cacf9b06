/**
 * The sender's side of NACK (the receiver's side is src/feedback/nack.ts, as
 * pion keeps both in pkg/nack): a bounded history of the media packets sent,
 * indexed by flow sequence number, and the rules that decide which NACKed
 * packets are worth a retransmission (RFC 4585 §6.2.1 generic NACK;
 * libwebrtc modules/rtp_rtcp/source/rtp_packet_history.cc keeps the same
 * kind of ring and the same "once per RTT" rule).
 *
 * I/O-free: times are passed in (µs). Memory: one entry per slot of a ring of
 * `capacity` packets (default 4096); an entry holds the packet's body, which
 * the sender keeps anyway for FEC.
 */
import { seqDiff } from '../core/seq.js';
import { Priority } from '../core/types.js';
import type { OutgoingPacket, PathId } from '../core/types.js';

/** One sent media packet as the history keeps it. */
export interface SentPacketRecord {
  flowSeq: number;
  body: Uint8Array;
  /** Datagram size the pacer charges (bytes). */
  sizeBytes: number;
  frameId: number;
  priority: Priority;
  nalClass: number;
  /** Path of the first send. */
  pathId: PathId;
  /** Time of the first send (µs). */
  sentUs: number;
  /** Retransmissions (and failover duplicates) sent so far. */
  rtxCount: number;
  /** Time of the last retransmission (µs), -Infinity before any. */
  lastRtxUs: number;
  /** Some copy of it (original, retransmission, probe or failover duplicate) was reported delivered on some path. */
  delivered: boolean;
}

/** Counters of {@link NackResponder}. */
export interface NackResponderStats {
  /** NACKed sequence numbers received (every copy counts). */
  nacksReceived: number;
  /** NACKed packets no longer in the history. */
  retransmissionsUnavailable: number;
  /** NACKed packets older than the retransmission age limit or from before the newest key frame. */
  retransmissionsTooOld: number;
}

/** At most this many retransmissions of one packet. */
export const MAX_RTX_PER_PACKET = 3;
/** No retransmission for a packet first sent longer ago than this (µs). */
export const MAX_RTX_AGE_US = 1_000_000;

export class NackResponder {
  private readonly ring: (SentPacketRecord | undefined)[];
  private readonly c: NackResponderStats = { nacksReceived: 0, retransmissionsUnavailable: 0, retransmissionsTooOld: 0 };

  /**
   * @param capacity history size in packets (a ring indexed by flowSeq).
   * @throws RangeError for a capacity that is not an integer >= 1.
   */
  constructor(capacity = 4096) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`NackResponder: capacity must be an integer >= 1, got ${capacity}`);
    this.ring = new Array(capacity);
  }

  /** Remember a media packet's first send on `pathId` at `nowUs`. */
  record(p: OutgoingPacket, pathId: PathId, nowUs: number): void {
    this.ring[p.flowSeq % this.ring.length] = {
      flowSeq: p.flowSeq,
      body: p.body,
      sizeBytes: p.sizeBytes,
      frameId: p.frameId,
      priority: p.priority,
      nalClass: p.nalClass,
      pathId,
      sentUs: nowUs,
      rtxCount: 0,
      lastRtxUs: -Infinity,
      delivered: false,
    };
  }

  /** The record of `flowSeq`, undefined when it left the ring. */
  get(flowSeq: number): SentPacketRecord | undefined {
    const h = this.ring[flowSeq % this.ring.length];
    return h && h.flowSeq === flowSeq ? h : undefined;
  }

  /** A path's report says a datagram carrying `flowSeq` arrived: the sender's own loss detection no longer resends it. */
  onDelivered(flowSeq: number): void {
    const h = this.get(flowSeq);
    if (h) h.delivered = true;
  }

  /** The packet was given up on (too late already): its NACKs are not answered. */
  abandon(flowSeq: number): void {
    const h = this.get(flowSeq);
    if (h) h.rtxCount = MAX_RTX_PER_PACKET;
  }

  /**
   * The packets of a NACK worth retransmitting, as retransmission packets
   * (the attempt is counted). The same NACK arrives on every path: a packet
   * is answered at most once per `guardUs` (0.75 x the lowest RTT) and
   * {@link MAX_RTX_PER_PACKET} times, not when older than
   * {@link MAX_RTX_AGE_US}, and not when its frame precedes the newest key
   * frame `lastKeyFrameId` (which no longer needs it).
   * The same rules answer the sender's own loss detection (RACK per path,
   * src/feedback/path-rack.ts) with `fromNack` false: then the NACKs that
   * follow for the same packet find it answered within `guardUs`, and a
   * packet some path already reported delivered (a copy) is not resent.
   * @param onFirstNack called once per packet NACKed (or detected lost) for the first time, with its path (for the FEC policy).
   * @param fromNack false when the sequence numbers come from the sender's loss detection (not counted as NACKs received).
   */
  onNack(seqs: readonly number[], nowUs: number, guardUs: number, lastKeyFrameId: number, streamId: number, onFirstNack: (pathId: PathId) => void, fromNack = true): OutgoingPacket[] {
    if (fromNack) this.c.nacksReceived += seqs.length;
    const rtx: OutgoingPacket[] = [];
    for (const seq of seqs) {
      const h = this.get(seq);
      if (!h) {
        this.c.retransmissionsUnavailable++;
        continue;
      }
      if (h.rtxCount >= MAX_RTX_PER_PACKET || nowUs - h.lastRtxUs < guardUs || (!fromNack && h.delivered)) continue;
      if (nowUs - h.sentUs > MAX_RTX_AGE_US || seqDiff(lastKeyFrameId, h.frameId) < 0) {
        this.c.retransmissionsTooOld++;
        continue;
      }
      if (h.rtxCount === 0) onFirstNack(h.pathId);
      rtx.push(this.retransmission(h, nowUs, streamId));
    }
    return rtx;
  }

  /**
   * Media first sent on `pathId` at or after `fromUs` that may still be
   * retransmitted (fewer than {@link MAX_RTX_PER_PACKET} attempts, not from
   * before the newest key frame), oldest first. For fast failover.
   */
  sentOnPathSince(pathId: PathId, fromUs: number, lastKeyFrameId: number): SentPacketRecord[] {
    const picked: SentPacketRecord[] = [];
    for (const h of this.ring) {
      if (!h || h.pathId !== pathId || h.sentUs < fromUs || h.rtxCount >= MAX_RTX_PER_PACKET) continue;
      if (seqDiff(lastKeyFrameId, h.frameId) < 0) continue;
      picked.push(h);
    }
    picked.sort((a, b) => seqDiff(b.flowSeq, a.flowSeq));
    return picked;
  }

  /** A history record as a retransmission packet (counts the attempt). Same bytes: FEC parity and the receiver's dedup stay valid. */
  retransmission(h: SentPacketRecord, nowUs: number, streamId: number): OutgoingPacket {
    h.rtxCount++;
    h.lastRtxUs = nowUs;
    return {
      streamId,
      flowSeq: h.flowSeq,
      frameId: h.frameId,
      priority: Priority.Retransmission,
      nalClass: h.nalClass,
      sizeBytes: h.sizeBytes,
      body: h.body,
      isRetransmission: true,
    };
  }

  /** Copy of the counters. */
  stats(): NackResponderStats {
    return { ...this.c };
  }
}
