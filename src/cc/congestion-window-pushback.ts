/**
 * Congestion-window pushback of the encoder target. Following libwebrtc
 * modules/congestion_controller/goog_cc/congestion_window_pushback_controller.cc
 * (facts, our code): the data window = sum over the usable paths of
 * S_i x (SRTT_i + an accepted queue: SenderEngineConfig.pushbackQueueMs,
 * default libwebrtc's 350 ms, PUSHBACK_QUEUE_MS); fill = (bytes in flight + bytes
 * queued at the sender: the pacer queue and the datachannel's bufferedAmount) / window
 * (libwebrtc counts the bytes in flight only unless
 * WebRTC-AddPacingToCongestionWindowPushback is on; our in-flight bytes already
 * hold what the datachannel buffers, since the estimator learns a send when
 * the datachannel takes it, so that part counts twice: without it, a tie,
 * docs/results.md stop 41); fill > 1.5 -> ratio x 0.9, > 1 -> x 0.95,
 * < 0.1 -> 1, else x 1.05 (at most 1). The encoder target is multiplied by
 * the ratio. Updated at most every 25 ms (the libwebrtc process interval).
 * I/O-free: times are passed in (µs).
 */

/** Update spacing (µs; libwebrtc process interval, 25 ms). */
const PUSHBACK_INTERVAL_US = 25_000;
/** Default accepted queue added to the RTT in the data window (ms; libwebrtc CongestionWindowConfig default; SenderEngineConfig.pushbackQueueMs). */
export const PUSHBACK_QUEUE_MS = 350;
/** Smallest data window (bytes; libwebrtc kMinCwndBytes 2 x 1500). */
const PUSHBACK_MIN_WINDOW_BYTES = 3000;
/** Floor of the ratio (the encoder target is floored at its minimum anyway). */
const PUSHBACK_MIN_RATIO = 0.1;

export class CongestionWindowPushback {
  private r = 1;
  private lastUs = -Infinity;

  /** encoding_rate_ratio, (0..1]: the factor on the encoder target. */
  get ratio(): number {
    return this.r;
  }

  /** True when an update is due at `nowUs` (25 ms since the last one); marks it done. */
  due(nowUs: number): boolean {
    if (nowUs - this.lastUs < PUSHBACK_INTERVAL_US) return false;
    this.lastUs = nowUs;
    return true;
  }

  /**
   * One update from the data window and the bytes outstanding (in flight +
   * queued at the sender), both in bytes. A window <= 0 (no usable path)
   * leaves the ratio as it is.
   */
  update(windowBytes: number, outstandingBytes: number): void {
    if (windowBytes <= 0) return;
    const fill = outstandingBytes / Math.max(windowBytes, PUSHBACK_MIN_WINDOW_BYTES);
    let r = this.r;
    if (fill > 1.5) r *= 0.9;
    else if (fill > 1) r *= 0.95;
    else if (fill < 0.1) r = 1;
    else r *= 1.05;
    this.r = Math.min(1, Math.max(PUSHBACK_MIN_RATIO, r));
  }
}
