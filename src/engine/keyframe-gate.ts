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
 * while a key frame is pending).
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
