/**
 * Receiver frame buffer: holds complete frames (from the depacketizer) until
 * they can be decoded, and releases them strictly in decode order.
 *
 * SOURCE: Converge §2.1 "Receive buffers in WebRTC" (a bounded
 * frame buffer that purges frames it cannot use) and libwebrtc
 * modules/video_coding/frame_buffer2.cc / api/video/frame_buffer.cc (decode
 * order, a key frame is always decodable and makes older frames obsolete,
 * the wait for a missing frame follows the jitter estimate, a key frame is
 * requested when nothing decodable arrives in time).
 *
 * Dependency model: a key frame depends on nothing; delta frame N depends on
 * frame N - refDistance of the same stream (refDistance absent = 1, the simple
 * chain of an encoder without temporal layers). frameIds are uint32 and wrap
 * (RFC 1982 comparisons). A delta frame is released only when the frame it
 * references was released since the last key frame, so the decoder is never
 * fed a frame whose reference it lacks.
 *
 * Temporal layers (scalabilityMode L1T2/L1T3): a base-layer frame references
 * the previous base-layer frame and an upper-layer frame the last frame of a
 * lower layer, so nothing in the base layer depends on an upper-layer frame.
 * When the next frame in decode order is missing but a later frame whose
 * reference was released is waiting, the buffer waits for the gap at most
 * the skip wait (the jitter part of the missing-frame wait, see
 * {@link FrameBufferOptions.skipWaitRttFactor}), then skips it and goes on
 * without a key frame (libwebrtc api/video/frame_buffer.cc likewise decodes
 * the next decodable temporal unit and drops the undecodable ones before
 * it). A lost base-layer frame leaves no such frame: NACK, then the
 * missing-frame timeout and a key frame request, as without layers.
 *
 * Memory bound: besides `maxFrames` per stream and `maxStreams`, all waiting
 * frames together cost at most `maxBytes` (payload plus a per-frame and
 * per-fragment overhead estimate); beyond it the oldest frame of the stream
 * holding the most bytes is dropped. A frame waiting longer than `maxAgeMs` is
 * dropped even when no key frame comes to clear it (a remote peer that sends
 * delta frames only cannot pin memory). Both are counted; under budget and age
 * nothing received is dropped.
 */
import type { AssembledFrame } from '../wire/packetization.js';
import { seqAdd, seqDiff } from '../core/seq.js';
import { DecodedFramesHistory } from './decoded-frames-history.js';
import type { FrameBufferKeyReason, FrameBufferOutput, FrameInsertResult } from './types.js';
import { FRAGMENT_OVERHEAD_BYTES, FRAME_OVERHEAD_BYTES, type FrameBufferOptions, type FrameBufferStats, type ResolvedFrameBufferOptions, resolveFrameBufferOptions } from './frame-buffer-options.js';

export type { FrameBufferKeyReason, FrameBufferOutput, FrameInsertResult } from './types.js';
export { DEFAULT_FRAME_BUFFER_BYTES, FRAGMENT_OVERHEAD_BYTES, FRAME_OVERHEAD_BYTES } from './frame-buffer-options.js';
export type { FrameBufferOptions, FrameBufferStats } from './frame-buffer-options.js';

interface Held {
  frame: AssembledFrame;
  /** When it was stored (µs). */
  atUs: number;
  /** Estimated cost (bytes). */
  bytes: number;
}

interface StreamState {
  /** frameId -> waiting frame; insertion order = arrival order (the age sweep relies on it). */
  readonly frames: Map<number, Held>;
  /** Sum of `bytes` of the waiting frames. */
  bytes: number;
  /** Waiting key frames (skip the key-frame scan when 0). */
  keys: number;
  /** frameId of the last frame released to the decoder. */
  anchor: number | undefined;
  /** frameIds released since the last key frame: the frames a delta frame may reference. */
  readonly released: DecodedFramesHistory;
  /** Waiting delta frames that name their reference explicitly (skip candidates). */
  refs: number;
  /** The decode chain is broken (or never started): only a key frame can continue. */
  needKey: boolean;
  /**
   * A key frame should be requested: the chain is broken (overflow, budget, age, resync, a timeout with
   * `keepOnTimeout` false), or, with `keepOnTimeout`, a missing frame timed out while the chain is whole
   * (cleared when a frame is released).
   */
  keyRequested: boolean;
  /** Why the last key frame request was raised (reported with it, see {@link FrameBufferOutput.keyframeReasons}). */
  keyReason: FrameBufferKeyReason;
  /** Since when (µs) frames are waiting with none decodable. */
  blockedSinceUs: number | undefined;
  /** Consecutive frames far from the anchor. */
  farRun: number;
}

/**
 * Bounded per-stream frame buffer with jitter-driven missing-frame timeout.
 *
 * Typical wiring: `insert()` every frame the depacketizer completes, then
 * `poll(now, jitterEstimator.jitterMs(), rttMs)` every few ms (and after each
 * insert); decode `decodable` in order; when `keyframeNeeded`, ask the
 * {@link import('./keyframe-requester.js').KeyframeRequester} for a PLI.
 */
export class FrameBuffer {
  private readonly o: ResolvedFrameBufferOptions;
  private totalBytes = 0;
  private readonly streams = new Map<number, StreamState>();
  private droppedSincePoll = 0;
  private readonly st = {
    inserted: 0,
    released: 0,
    duplicates: 0,
    stale: 0,
    invalid: 0,
    droppedNoStream: 0,
    droppedFar: 0,
    droppedOverflow: 0,
    droppedTimeout: 0,
    droppedKeyJump: 0,
    droppedBudget: 0,
    droppedAge: 0,
    droppedSkipped: 0,
    skips: 0,
    timeouts: 0,
    resyncs: 0,
  };

  /** @throws RangeError for non-finite, negative or inconsistent options. */
  constructor(opts: FrameBufferOptions = {}) {
    this.o = resolveFrameBufferOptions(opts);
  }

  /**
   * Missing-frame wait for a given jitter and RTT (ms):
   * clamp(jitterMultiplier * jitterMs + baseWaitMs + rttMs, minWaitMs, maxWaitMs).
   * Non-finite or negative inputs count as 0.
   */
  waitMs(jitterMs: number, rttMs = 0): number {
    const j = Number.isFinite(jitterMs) && jitterMs > 0 ? jitterMs : 0;
    const r = Number.isFinite(rttMs) && rttMs > 0 ? rttMs : 0;
    return Math.min(this.o.maxWaitMs, Math.max(this.o.minWaitMs, this.o.jitterMult * j + this.o.baseWaitMs + r));
  }

  /**
   * Offer a complete frame.
   * @param nowUs receiver clock (µs), starts the missing-frame wait.
   * @returns 'stored' (waiting or decodable at the next poll), 'duplicate'
   *   (already stored or just decoded), 'stale' (older than the last decoded
   *   frame), 'dropped' (invalid, stream table full, implausible frameId,
   *   larger than the byte budget, or evicted at once because the buffer is
   *   full and it is the oldest).
   *   Never throws.
   */
  insert(frame: AssembledFrame, nowUs: number): FrameInsertResult {
    if (!isValidFrame(frame)) {
      this.st.invalid++;
      return 'dropped';
    }
    let s = this.streams.get(frame.streamId);
    if (s === undefined) {
      if (this.streams.size >= this.o.maxStreams) {
        this.st.droppedNoStream++;
        this.droppedSincePoll++;
        return 'dropped';
      }
      s = {
        frames: new Map(),
        bytes: 0,
        keys: 0,
        anchor: undefined,
        released: new DecodedFramesHistory(),
        refs: 0,
        needKey: true,
        keyRequested: false,
        keyReason: 'frame-buffer-start',
        blockedSinceUs: undefined,
        farRun: 0,
      };
      this.streams.set(frame.streamId, s);
    }
    const id = frame.frameId;
    if (s.anchor !== undefined) {
      const d = seqDiff(s.anchor, id);
      if (d > this.o.maxJump || d < -this.o.maxJump) {
        if (++s.farRun < this.o.resyncAfter) {
          this.st.droppedFar++;
          this.droppedSincePoll++;
          return 'dropped';
        }
        this.resync(s);
      } else {
        s.farRun = 0;
        if (d === 0) {
          this.st.duplicates++;
          return 'duplicate';
        }
        if (d < 0) {
          this.st.stale++;
          return 'stale';
        }
      }
    }
    const held = s.frames.get(id);
    if (held !== undefined) {
      // Same id again. A key frame replaces a waiting delta of that id (a
      // lying or mislabelled copy must not shadow the real key frame); any
      // other copy is a duplicate.
      if (!(frame.keyFrame && !held.frame.keyFrame)) {
        this.st.duplicates++;
        return 'duplicate';
      }
      this.take(s, id);
      this.st.duplicates++;
    }
    const bytes = frameCost(frame);
    if (bytes > this.o.maxBytes) {
      this.st.droppedBudget++;
      this.droppedSincePoll++;
      s.needKey = true;
      s.keyRequested = true;
      s.keyReason = 'frame-buffer-budget';
      return 'dropped';
    }
    const decodableNow = frame.keyFrame || (!s.needKey && s.anchor !== undefined && id === seqAdd(s.anchor, 1) && this.refReleased(s, frame));
    if (s.frames.size >= this.o.maxFrames) {
      const victim = oldestId(s.frames);
      // Drop the oldest waiting frame; the incoming one if it is older still and not decodable.
      s.needKey = true;
      s.keyRequested = true;
      s.keyReason = 'frame-buffer-overflow';
      this.st.droppedOverflow++;
      this.droppedSincePoll++;
      if (!decodableNow && victim !== undefined && seqDiff(victim, id) < 0) return 'dropped';
      if (victim !== undefined) this.take(s, victim);
    }
    const now = finiteOr(nowUs, 0);
    s.frames.set(id, { frame, atUs: now, bytes });
    s.bytes += bytes;
    this.totalBytes += bytes;
    if (frame.keyFrame) s.keys++;
    else if (hasExplicitRef(frame)) s.refs++;
    // Byte budget: drop the oldest frame of the stream holding the most bytes until under it.
    while (this.totalBytes > this.o.maxBytes) {
      let big: StreamState = s;
      for (const o of this.streams.values()) if (o.bytes > big.bytes) big = o;
      const victim = oldestId(big.frames);
      if (victim === undefined) break;
      this.take(big, victim);
      big.needKey = true;
      big.keyRequested = true;
      big.keyReason = 'frame-buffer-budget';
      this.st.droppedBudget++;
      this.droppedSincePoll++;
      if (big === s && victim === id) return 'dropped';
    }
    this.st.inserted++;
    if (!decodableNow && s.blockedSinceUs === undefined) s.blockedSinceUs = now;
    return 'stored';
  }

  /** Remove a waiting frame and its byte / key accounting; returns it. */
  private take(s: StreamState, id: number): AssembledFrame | undefined {
    const h = s.frames.get(id);
    if (h === undefined) return undefined;
    s.frames.delete(id);
    s.bytes -= h.bytes;
    this.totalBytes -= h.bytes;
    if (h.frame.keyFrame) s.keys--;
    else if (hasExplicitRef(h.frame)) s.refs--;
    return h.frame;
  }

  private clearStream(s: StreamState): number {
    const n = s.frames.size;
    s.frames.clear();
    this.totalBytes -= s.bytes;
    s.bytes = 0;
    s.keys = 0;
    s.refs = 0;
    return n;
  }

  /** Drop frames of `s` stored before `limitUs` (front of the insertion-ordered map). */
  private expire(s: StreamState, limitUs: number): void {
    for (const [id, h] of s.frames) {
      if (h.atUs >= limitUs) break;
      this.take(s, id);
      this.st.droppedAge++;
      this.droppedSincePoll++;
      s.needKey = true;
      s.keyRequested = true;
      s.keyReason = 'frame-buffer-age';
    }
  }

  /**
   * Release what can be decoded now and run the missing-frame timeouts.
   * @param nowUs receiver clock (µs).
   * @param jitterMs current jitter estimate (ms), see {@link JitterEstimator}.
   * @param rttMs optional RTT (ms) added to the wait so a NACKed packet can
   *   still arrive (default 0).
   */
  poll(nowUs: number, jitterMs: number, rttMs = 0): FrameBufferOutput {
    const now = finiteOr(nowUs, 0);
    const timeoutUs = this.waitMs(jitterMs, rttMs) * 1000;
    const skipWaitUs = this.waitMs(jitterMs, this.o.skipRttFactor * (Number.isFinite(rttMs) && rttMs > 0 ? rttMs : 0)) * 1000;
    const decodable: AssembledFrame[] = [];
    const keyStreams: number[] = [];
    const keyReasons = new Map<number, FrameBufferKeyReason>();
    for (const [streamId, s] of this.streams) {
      let progressed = false;
      for (;;) {
        if (!s.needKey && s.anchor !== undefined) {
          const next = seqAdd(s.anchor, 1);
          const f = s.frames.get(next);
          if (f !== undefined && (f.frame.keyFrame || this.refReleased(s, f.frame))) {
            this.release(s, f.frame, decodable);
            progressed = true;
            continue;
          }
        }
        if (s.keys > 0) {
          const key = earliestKey(s.frames);
          if (key !== undefined) {
            this.jumpTo(s, key);
            this.release(s, key, decodable);
            s.needKey = false;
            s.keyRequested = false;
            progressed = true;
            continue;
          }
        }
        // Temporal layers: skip a gap no later frame needs, once the skip wait has passed.
        if (s.refs === 0 || s.needKey || s.anchor === undefined) break;
        if (s.blockedSinceUs !== undefined && now - s.blockedSinceUs < skipWaitUs) break;
        const to = this.earliestByReference(s);
        if (to === undefined) break;
        this.skipTo(s, to);
        this.release(s, to, decodable);
        progressed = true;
      }
      if (s.frames.size > 0 && this.o.maxAgeUs > 0) this.expire(s, now - this.o.maxAgeUs);
      if (s.frames.size === 0) s.blockedSinceUs = undefined;
      else if (progressed || s.blockedSinceUs === undefined) s.blockedSinceUs = now;
      // keepOnTimeout: a released frame ends the request a timeout raised while the chain was whole.
      if (progressed && !s.needKey) s.keyRequested = false;
      if (s.blockedSinceUs !== undefined && now - s.blockedSinceUs > timeoutUs) {
        this.st.timeouts++;
        if (!s.needKey && !this.o.keepOnTimeout) {
          // Every waiting frame depends on the missing one (no key frame is waiting, or we would have jumped).
          const n = this.clearStream(s);
          this.st.droppedTimeout += n;
          this.droppedSincePoll += n;
          s.needKey = true;
        }
        s.keyRequested = true;
        s.keyReason = 'frame-buffer-timeout';
        s.blockedSinceUs = s.frames.size > 0 ? now : undefined;
      }
      if (s.keyRequested) {
        keyStreams.push(streamId);
        keyReasons.set(streamId, s.keyReason);
      }
    }
    keyStreams.sort((a, b) => a - b);
    const dropped = this.droppedSincePoll;
    this.droppedSincePoll = 0;
    return { decodable, dropped, keyframeNeeded: keyStreams.length > 0, keyframeNeededStreams: keyStreams, keyframeReasons: keyStreams.map((id) => keyReasons.get(id) as FrameBufferKeyReason) };
  }

  /** frameId of the last frame released for `streamId`, undefined if none. */
  lastDecodedFrameId(streamId: number): number | undefined {
    return this.streams.get(streamId)?.anchor;
  }

  /** Frames waiting for `streamId` (0 for an unknown stream). */
  waitingFrames(streamId: number): number {
    return this.streams.get(streamId)?.frames.size ?? 0;
  }

  /** Forget a stream (its waiting frames are counted as dropped at the next poll). */
  removeStream(streamId: number): void {
    const s = this.streams.get(streamId);
    if (s === undefined) return;
    const n = this.clearStream(s);
    this.droppedSincePoll += n;
    this.st.droppedOverflow += n;
    this.streams.delete(streamId);
  }

  /** Counters (a copy). */
  stats(): FrameBufferStats {
    let waiting = 0;
    for (const s of this.streams.values()) waiting += s.frames.size;
    const c = this.st;
    return {
      ...c,
      waiting,
      streams: this.streams.size,
      bytes: this.totalBytes,
      dropped: c.droppedNoStream + c.droppedFar + c.droppedOverflow + c.droppedTimeout + c.droppedKeyJump + c.droppedBudget + c.droppedAge + c.droppedSkipped,
    };
  }

  private release(s: StreamState, f: AssembledFrame, out: AssembledFrame[]): void {
    this.take(s, f.frameId);
    s.anchor = f.frameId;
    s.released.insert(f.frameId, f.keyFrame);
    out.push(f);
    this.st.released++;
  }

  /** The frame a delta frame references was released since the last key frame. */
  private refReleased(s: StreamState, f: AssembledFrame): boolean {
    const d = f.refDistance ?? 1;
    return s.released.has(seqAdd(f.frameId, -d));
  }

  /** Earliest waiting delta frame after the anchor whose (explicit) reference was released. */
  private earliestByReference(s: StreamState): AssembledFrame | undefined {
    const anchor = s.anchor as number;
    let best: AssembledFrame | undefined;
    for (const { frame: f } of s.frames.values()) {
      if (f.keyFrame || !hasExplicitRef(f) || seqDiff(anchor, f.frameId) <= 0) continue;
      if (best !== undefined && seqDiff(best.frameId, f.frameId) >= 0) continue;
      if (this.refReleased(s, f)) best = f;
    }
    return best;
  }

  /** Drop the waiting frames before `to` (they cannot be decoded once `to` is). */
  private skipTo(s: StreamState, to: AssembledFrame): void {
    this.st.skips++;
    for (const id of s.frames.keys()) {
      if (seqDiff(to.frameId, id) < 0) {
        this.take(s, id);
        this.st.droppedSkipped++;
        this.droppedSincePoll++;
      }
    }
  }

  /** Drop every waiting frame older than `key`, and any implausibly far ahead of it. */
  private jumpTo(s: StreamState, key: AssembledFrame): void {
    for (const id of s.frames.keys()) {
      const d = seqDiff(key.frameId, id);
      if (d < 0) {
        this.take(s, id);
        this.st.droppedKeyJump++;
        this.droppedSincePoll++;
      } else if (d > this.o.maxJump) {
        this.take(s, id);
        this.st.droppedFar++;
        this.droppedSincePoll++;
      }
    }
  }

  /** Sender restarted numbering: forget the anchor, drop what waits. */
  private resync(s: StreamState): void {
    this.st.resyncs++;
    const n = this.clearStream(s);
    this.st.droppedFar += n;
    this.droppedSincePoll += n;
    s.anchor = undefined;
    s.needKey = true;
    s.keyRequested = true;
    s.keyReason = 'frame-buffer-resync';
    s.blockedSinceUs = undefined;
    s.farRun = 0;
  }
}

/** A delta frame that names its reference (temporal layers): a candidate to skip a gap to. */
function hasExplicitRef(f: AssembledFrame): boolean {
  return f.refDistance !== undefined && f.refDistance !== 1;
}

/** Earliest (decode order) waiting key frame, undefined when none. */
function earliestKey(frames: Map<number, Held>): AssembledFrame | undefined {
  let best: AssembledFrame | undefined;
  for (const { frame: f } of frames.values()) {
    if (f.keyFrame && (best === undefined || seqDiff(best.frameId, f.frameId) < 0)) best = f;
  }
  return best;
}

function oldestId(frames: Map<number, Held>): number | undefined {
  let best: number | undefined;
  for (const id of frames.keys()) {
    if (best === undefined || seqDiff(best, id) < 0) best = id;
  }
  return best;
}

function isValidFrame(f: AssembledFrame): boolean {
  return (
    typeof f === 'object' &&
    f !== null &&
    f.streamId >>> 0 === f.streamId &&
    f.frameId >>> 0 === f.frameId &&
    typeof f.keyFrame === 'boolean' &&
    (Number.isInteger(f.dataBytes) ? (f.dataBytes as number) >= 0 : f.data instanceof Uint8Array)
  );
}

/** Estimated heap cost of holding `f` (bytes). */
function frameCost(f: AssembledFrame): number {
  const frags = Array.isArray(f.arrivals) ? f.arrivals.length : 0;
  return (f.dataBytes ?? f.data.byteLength) + FRAME_OVERHEAD_BYTES + FRAGMENT_OVERHEAD_BYTES * frags;
}

function finiteOr(v: number, d: number): number {
  return Number.isFinite(v) ? v : d;
}
