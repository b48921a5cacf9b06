/** Options of the {@link import('./frame-buffer.js').FrameBuffer}, their defaults and validation, and its counters. */

/** Options of {@link FrameBuffer}. */
export interface FrameBufferOptions {
  /** Most frames waiting per stream (default 120). */
  maxFrames?: number;
  /** Lower bound of the missing-frame wait, ms (default 50). */
  minWaitMs?: number;
  /** Upper bound of the missing-frame wait, ms (default 1000). */
  maxWaitMs?: number;
  /** Constant part of the wait, ms (default 30): wait = clamp(k * jitter + base + rtt, min, max). */
  baseWaitMs?: number;
  /** Jitter multiplier k of the wait (default 3). */
  jitterMultiplier?: number;
  /** Most streams tracked (default 16); frames of further streams are dropped. */
  maxStreams?: number;
  /** A frameId farther than this from the last decoded one is dropped as bogus (default 16384). */
  maxFrameIdJump?: number;
  /**
   * After this many consecutive "far" frames (none in range between them) the
   * stream is assumed restarted by the sender and resynchronised (default 30).
   */
  resyncAfterFrames?: number;
  /**
   * Bytes all waiting frames may cost together (default 24 MiB: ~4 s of 4K
   * video at 50 Mbps, several 4K key frames). Cost of a frame = data bytes +
   * {@link FRAME_OVERHEAD_BYTES} + {@link FRAGMENT_OVERHEAD_BYTES} per fragment.
   */
  maxBytes?: number;
  /** A frame waiting longer than this is dropped, key frame or not (ms, default 3000). */
  maxAgeMs?: number;
  /**
   * Skip wait for a gap that a later, decodable frame does not depend on
   * (temporal layers): clamp(k * jitter + base + skipWaitRttFactor * rtt, min,
   * max) ms. 0 (default) = the reorder/jitter part only: a lost upper-layer
   * frame costs no NACK round trip of stall; 1 = the full missing-frame wait.
   */
  skipWaitRttFactor?: number;
  /**
   * On a missing-frame timeout, ask for a key frame but keep the waiting
   * frames (default true), as libwebrtc does (video/video_receive_stream2.cc
   * OnDecodableFrameTimeout requests a key frame and leaves its frame buffer
   * as it is): when the missing frame's retransmission arrives after the
   * timeout, decoding goes on from it instead of waiting for the key frame.
   * The request is repeated while the stream stays blocked and stops once a
   * frame is released. false: drop every waiting frame (they all depend on
   * the missing one) and decode nothing until a key frame, the rule before.
   * Waiting frames stay bounded by `maxFrames`, `maxBytes` and `maxAgeMs`.
   * When the missing frame comes, the kept frames are released together
   * (up to `maxAgeMs` of video, a catch-up burst for the decoder), and the
   * key frame already asked for still comes.
   */
  keepOnTimeout?: boolean;
}

/** Estimated fixed heap cost of one waiting frame (object, map entry), bytes. */
export const FRAME_OVERHEAD_BYTES = 256;
/** Estimated heap cost of one fragment's arrival record, bytes. */
export const FRAGMENT_OVERHEAD_BYTES = 64;
/** Default {@link FrameBufferOptions.maxBytes}: 24 MiB. */
export const DEFAULT_FRAME_BUFFER_BYTES = 24 * 1024 * 1024;

/** Counters of {@link FrameBuffer} (monotonic except `waiting` and `streams`). */
export interface FrameBufferStats {
  inserted: number;
  released: number;
  /** Frames waiting now (all streams). */
  waiting: number;
  streams: number;
  duplicates: number;
  stale: number;
  invalid: number;
  /** Dropped: stream table full. */
  droppedNoStream: number;
  /** Dropped: frameId implausibly far from the last decoded one. */
  droppedFar: number;
  /** Dropped: more than `maxFrames` waiting. */
  droppedOverflow: number;
  /** Dropped: dependents of a missing frame whose wait timed out (only with `keepOnTimeout` false). */
  droppedTimeout: number;
  /** Dropped: older than a key frame the buffer jumped to. */
  droppedKeyJump: number;
  /** Dropped: over the `maxBytes` budget (the oldest frame of the largest stream, or a frame larger than the budget). */
  droppedBudget: number;
  /** Dropped: waited longer than `maxAgeMs`. */
  droppedAge: number;
  /** Dropped: undecodable frames before a decodable one the buffer skipped to (temporal layers). */
  droppedSkipped: number;
  /** Gaps skipped without a key frame (temporal layers: a later frame did not depend on the missing ones). */
  skips: number;
  /** Estimated bytes held by waiting frames now. */
  bytes: number;
  /** Missing-frame waits that timed out. */
  timeouts: number;
  /** Streams resynchronised after a frameId jump. */
  resyncs: number;
  /** Total frames dropped (sum of the dropped* counters). */
  dropped: number;
}

/** {@link FrameBufferOptions} with the defaults applied and checked; times in the units named. */
export interface ResolvedFrameBufferOptions {
  maxFrames: number;
  minWaitMs: number;
  maxWaitMs: number;
  baseWaitMs: number;
  jitterMult: number;
  maxStreams: number;
  maxJump: number;
  resyncAfter: number;
  maxBytes: number;
  maxAgeUs: number;
  skipRttFactor: number;
  keepOnTimeout: boolean;
}

/**
 * Apply the defaults and check the ranges.
 * @throws RangeError for non-finite, negative or inconsistent options.
 */
export function resolveFrameBufferOptions(opts: FrameBufferOptions): ResolvedFrameBufferOptions {
  const maxFrames = posInt(opts.maxFrames ?? 120, 'maxFrames');
  const minWaitMs = nonNeg(opts.minWaitMs ?? 50, 'minWaitMs');
  const maxWaitMs = nonNeg(opts.maxWaitMs ?? 1000, 'maxWaitMs');
  const baseWaitMs = nonNeg(opts.baseWaitMs ?? 30, 'baseWaitMs');
  const jitterMult = nonNeg(opts.jitterMultiplier ?? 3, 'jitterMultiplier');
  const maxStreams = posInt(opts.maxStreams ?? 16, 'maxStreams');
  const maxJump = posInt(opts.maxFrameIdJump ?? 1 << 14, 'maxFrameIdJump');
  const resyncAfter = posInt(opts.resyncAfterFrames ?? 30, 'resyncAfterFrames');
  const maxBytes = posInt(opts.maxBytes ?? DEFAULT_FRAME_BUFFER_BYTES, 'maxBytes');
  const maxAgeUs = nonNeg(opts.maxAgeMs ?? 3000, 'maxAgeMs') * 1000;
  const skipRttFactor = nonNeg(opts.skipWaitRttFactor ?? 0, 'skipWaitRttFactor');
  const keepOnTimeout = opts.keepOnTimeout ?? true;
  if (minWaitMs > maxWaitMs) throw new RangeError(`FrameBuffer: minWaitMs ${minWaitMs} > maxWaitMs ${maxWaitMs}`);
  return { maxFrames, minWaitMs, maxWaitMs, baseWaitMs, jitterMult, maxStreams, maxJump, resyncAfter, maxBytes, maxAgeUs, skipRttFactor, keepOnTimeout };
}

function posInt(v: number, name: string): number {
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`FrameBuffer: ${name} must be a positive integer, got ${v}`);
  return v;
}

function nonNeg(v: number, name: string): number {
  if (!Number.isFinite(v) || v < 0) throw new RangeError(`FrameBuffer: ${name} must be a finite number >= 0, got ${v}`);
  return v;
}
