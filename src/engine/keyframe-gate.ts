/**
 * Keyframe economy on the sender: a key frame request (PLI,
 * RFC 4585 §6.3.1) that arrives while the last key frame can still answer it
 * is coalesced, not forwarded to the encoder. A key frame answers requests
 * for max(500 ms, 2 x RTT) after it was sent; the sender also coalesces
 * while it still waits in its pacer or datachannel (SenderPaths.holdsFrame).
 * With `coalesceTransmit` (SenderEngineConfig.keyframeCoalesceTransmit, off
 * by default) also for its transmit time at the encoder target plus an RTT:
 * that estimate outlives a key frame lost on a dying path by up to 3 s. On
 * a congested path a key frame per request only deepens the congestion
 * (libwebrtc's RtpVideoSender / VideoSendStream likewise ignore requests
 * while a key frame is pending). A request the receiver sent after the last
 * key frame was complete at its end is about a later frame, which that key
 * frame cannot answer: {@link KeyFrameDelivery} tells the sender to forward it.
 * I/O-free: times are passed in (µs).
 */

/** PLIs within this long (or 2 x RTT) of the last key frame are answered by it (µs). */
const KEYFRAME_MIN_INTERVAL_US = 500_000;
/** Longest key frame transmit time the sender coalesces requests for (µs). */
const MAX_KEYFRAME_TX_US = 3_000_000;

export class KeyframeRequestGate {
  /** Frame id of the newest key frame sent (0 before any). */
  lastKeyFrameId = 0;
  private lastKeyFrameUs = -Infinity;
  /** Transmit time of the last key frame at the encoder target (µs). */
  private lastKeyFrameTxUs = 0;

  /**
   * @param coalesceTransmit also coalesce for the key frame's transmit time
   *   at the encoder target plus an RTT (SenderEngineConfig.keyframeCoalesceTransmit;
   *   false, the default: only max(500 ms, 2 x RTT), the sender checking
   *   separately whether the key frame still waits in its queues).
   */
  constructor(private readonly coalesceTransmit = false) {}

  /** A key frame of `bytes` was sent at `nowUs` while the encoder target was `targetBps`. */
  onKeyFrameSent(frameId: number, bytes: number, targetBps: number, nowUs: number): void {
    this.lastKeyFrameId = frameId;
    this.lastKeyFrameUs = nowUs;
    this.lastKeyFrameTxUs = Math.min(MAX_KEYFRAME_TX_US, (bytes * 8e6) / Math.max(1, targetBps));
  }

  /** True when a key frame was sent at or after `us` (µs). */
  sentSince(us: number): boolean {
    return this.lastKeyFrameUs >= us;
  }

  /**
   * A key frame request arrived: true = ask the encoder, false = the last
   * key frame answers it (coalesced).
   * @param minSrttMs the lowest SRTT over the up paths (ms)
   */
  admit(nowUs: number, minSrttMs: number): boolean {
    const txUs = this.coalesceTransmit ? this.lastKeyFrameTxUs + 1000 * minSrttMs : 0;
    return !(nowUs - this.lastKeyFrameUs < Math.max(KEYFRAME_MIN_INTERVAL_US, 2000 * minSrttMs, txUs));
  }
}

/** Fragments of one key frame tracked for {@link KeyFrameDelivery} (larger key frames are not tracked). */
const MAX_KEY_FRAGMENTS = 1024;

/**
 * When the newest key frame reached the receiver, on the receiver's clock:
 * the latest arrival time (µs, from the path reports) of its fragments, known
 * once every fragment was reported delivered. A key frame request the
 * receiver sent after that moment (its packet's send time, the same clock)
 * is about a frame after the key frame, which that key frame cannot answer:
 * {@link KeyframeRequestGate} must not coalesce it. No clock sync is needed:
 * both times are the receiver's.
 */
export class KeyFrameDelivery {
  private readonly pending = new Set<number>();
  /** Latest arrival (µs) of the fragments reported so far; NaN once one came without an arrival time. */
  private latestArrivalUs = Number.NEGATIVE_INFINITY;
  private completeUs: number | undefined;

  /** Receiver time (µs) the newest key frame was complete at the receiver; undefined while unknown. */
  get deliveredAtUs(): number | undefined {
    return this.completeUs;
  }

  /** A key frame was packetized into media packets with these flowSeqs. */
  onKeyFrame(flowSeqs: readonly number[]): void {
    this.pending.clear();
    this.completeUs = undefined;
    this.latestArrivalUs = Number.NEGATIVE_INFINITY;
    if (flowSeqs.length > MAX_KEY_FRAGMENTS) return;
    for (const f of flowSeqs) this.pending.add(f);
  }

  /** A report showed media packet `flowSeq` delivered at receiver time `arrivalUs` (µs; not finite: unknown, and so is the key frame's completion). */
  onDelivered(flowSeq: number, arrivalUs: number): void {
    if (!this.pending.delete(flowSeq)) return;
    this.latestArrivalUs = Number.isFinite(arrivalUs) ? Math.max(this.latestArrivalUs, arrivalUs) : Number.NaN;
    if (this.pending.size === 0 && Number.isFinite(this.latestArrivalUs)) this.completeUs = this.latestArrivalUs;
  }

  /** Whether a request sent at receiver time `sendTimeUs` (µs) left after the newest key frame was complete there. */
  askedAfter(sendTimeUs: number | undefined): boolean {
    return this.completeUs !== undefined && sendTimeUs !== undefined && Number.isFinite(sendTimeUs) && sendTimeUs > this.completeUs;
  }
}
