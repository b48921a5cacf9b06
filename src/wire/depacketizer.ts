/**
 * Receiver-side depacketizer: reassembles Media fragments that arrive in any
 * order, on any path, possibly duplicated (retransmission, probe duplicate,
 * FEC recovery), into whole frames, each emitted exactly once.
 *
 * Defensive against lying / corrupt fragments (counted, never thrown):
 *  - a fragment whose frag_count / key_frame / capture_us disagrees with the
 *    frame's first fragment is rejected without touching that frame;
 *  - a frame id more than {@link FAR_AHEAD_FRAMES} ahead of the newest seen is
 *    rejected (after {@link RESYNC_AFTER} such fragments in a row with nothing
 *    accepted in between, the stream resynchronises on the new ids, so a
 *    single bogus first packet or a sender restart cannot wedge a stream);
 *  - frames older than the stream's floor (raised by {@link Depacketizer.dropBefore},
 *    by eviction, and by the bounded completed-id window) or more than
 *    FAR_AHEAD_FRAMES behind the newest are 'stale'.
 *
 * Bounds: maxPackets stored fragments and maxFrames incomplete frames in
 * total; exceeding either evicts the OLDEST incomplete frame (by frame id
 * relative to its stream's newest), never a newer one; completed frames are
 * handed out immediately and never held. maxFrameBytes per frame; maxStreams
 * stream states (least recently active evicted; its completed-id memory goes
 * with it). Completed frame ids are remembered in a window of
 * `completedWindow` ids per stream; when an id leaves the window the floor
 * moves past it, so a late duplicate can never re-emit a frame.
 *
 * Note on 'stale': a completed frame id is NOT a floor by itself, because over
 * several paths frames complete out of order (frame 5 may complete before 4).
 * A consumer that decodes or skips past a frame may call dropBefore() to make
 * older fragments stale at once; the ReceiverEngine does not (the frame
 * buffer refuses frames behind its last decoded one, and the incomplete ones
 * age out by `maxAgeMs`).
 *
 * Memory: stored fragments cost their payload bytes plus
 * {@link FRAGMENT_OVERHEAD_BYTES}; all incomplete frames together stay under
 * `maxBytes` (oldest incomplete frame evicted first, as for the other bounds);
 * an incomplete frame older than `maxAgeMs` (first fragment's arrival) is
 * evicted even if nothing newer comes (counted in `framesExpired`). A payload
 * that is a small view of a much larger buffer (a whole datagram, a pooled
 * socket slab) is copied so a stored fragment never pins more than itself.
 *
 * Frame ids are uint32 serial numbers (RFC 1982, src/core/seq.ts). Design
 * after libwebrtc modules/video_coding/packet_buffer.cc (bounded buffer,
 * frame assembled when all packets of it are present) adapted to explicit
 * frag_index / frag_count.
 */
import type { PathId } from '../core/types.js';
import { seqDiff, seqNewer, seqAdd } from '../core/seq.js';
import { WireError } from './errors.js';
import type { AssembledFrame, FragmentArrival } from './packetization.js';
import { type DepacketizerOptions, type DepacketizerStats, type InsertResult, zeroDepacketizerStats } from './depacketizer-types.js';
import { assembleFrame } from './frame-assembly.js';
import { DEFAULT_WIRE_LIMITS, type MediaMessage } from './types.js';
import { fragmentProblem, isU32 } from './validate.js';

export type { DepacketizerOptions, DepacketizerStats, InsertResult, InsertStatus } from './depacketizer-types.js';

/** A frame id further than this ahead of the newest seen is rejected. */
export const FAR_AHEAD_FRAMES = 10_000;
/** Consecutive far-ahead fragments (nothing accepted between) that trigger a resync. */
export const RESYNC_AFTER = 64;
/** Estimated heap cost of one stored fragment besides its payload (arrival record, array slots), bytes. */
export const FRAGMENT_OVERHEAD_BYTES = 96;
/** Default {@link DepacketizerOptions.maxBytes}: 16 MiB (four 4 MiB frames in flight). */
export const DEFAULT_DEPACKETIZER_BYTES = 16 * 1024 * 1024;
/** A payload whose underlying buffer is larger than its length by more than this is copied before it is stored. */
const PIN_SLACK_BYTES = 1024;

interface PendingFrame {
  stream: StreamState;
  frameId: number;
  fragCount: number;
  keyFrame: boolean;
  captureUs: number;
  /** Temporal layer and reference distance of the first fragment (undefined = absent on the wire). */
  temporalLayer: number | undefined;
  refDistance: number | undefined;
  /** Presence bitset over frag_index. */
  have: Uint32Array;
  /** Payloads and arrivals in arrival order (parallel arrays). */
  payloads: Uint8Array[];
  arrivals: FragmentArrival[];
  bytes: number;
  /** Estimated heap cost held (payload bytes + fragment overhead). */
  cost: number;
  /** Arrival (µs) of the first fragment, for the age bound. */
  firstUs: number;
  /** Creation order, tie-break for eviction. */
  order: number;
}

interface StreamState {
  id: number;
  newest: number;
  hasNewest: boolean;
  floor: number;
  hasFloor: boolean;
  pending: Map<number, PendingFrame>;
  completed: Set<number>;
  /** Ring of completed ids in completion order (size completedWindow). */
  ring: Uint32Array;
  ringHead: number;
  ringCount: number;
  farAheadStreak: number;
  lastActive: number;
}

const STORED: InsertResult = Object.freeze({ status: 'stored' }) as InsertResult;

function intOption(name: string, v: number | undefined, def: number, min: number): number {
  if (v === undefined) return def;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) throw WireError.invalidOption(name, v, `an integer >= ${min}`);
  return v;
}

export class Depacketizer {
  private readonly maxPackets: number;
  private readonly maxFrames: number;
  private readonly maxFrameBytes: number;
  private readonly maxStreams: number;
  private readonly completedWindow: number;
  private readonly maxBytes: number;
  private readonly maxAgeUs: number;
  private nBytes = 0;
  private lastSweepUs = -Infinity;
  private readonly maxFragments = DEFAULT_WIRE_LIMITS.maxFragments;
  private readonly streams = new Map<number, StreamState>();
  private nPackets = 0;
  private nFrames = 0;
  private tick = 0;
  private readonly s: DepacketizerStats = zeroDepacketizerStats();
  /** @throws WireError ERR_INVALID_OPTION for a non-integer or too small bound. */
  constructor(opts: DepacketizerOptions = {}) {
    this.maxPackets = intOption('maxPackets', opts.maxPackets, 4096, 1);
    this.maxFrames = intOption('maxFrames', opts.maxFrames, 256, 1);
    this.maxFrameBytes = intOption('maxFrameBytes', opts.maxFrameBytes, 4 * 1024 * 1024, 1);
    this.maxStreams = intOption('maxStreams', opts.maxStreams, 16, 1);
    this.completedWindow = intOption('completedWindow', opts.completedWindow, 1024, 1);
    this.maxBytes = intOption('maxBytes', opts.maxBytes, DEFAULT_DEPACKETIZER_BYTES, 1);
    this.maxAgeUs = intOption('maxAgeMs', opts.maxAgeMs, 3000, 0) * 1000;
  }

  /**
   * Offers one Media fragment (received, retransmitted or FEC-recovered).
   * @param pathId path it arrived on (< MAX_PATHS)
   * @param arrivalUs receiver clock (µs)
   * @param recovered true when rebuilt by FEC rather than received
   * @returns 'completed' with the frame when this fragment completes it (once
   *   per frame), 'stored', or a counted drop: 'duplicate', 'stale', 'rejected'.
   *   Never throws on bad data.
   */
  insert(media: MediaMessage, pathId: PathId, arrivalUs: number, recovered = false): InsertResult {
    this.s.packetsIn++;
    const bad = fragmentProblem(media, pathId, arrivalUs, this.maxFragments, this.maxPackets);
    if (bad !== null) return this.reject('invalid', bad);
    if (this.maxAgeUs > 0 && this.nFrames > 0 && arrivalUs - this.lastSweepUs >= this.maxAgeUs / 8) this.expire(arrivalUs);
    const st = this.stream(media.streamId);
    st.lastActive = ++this.tick;
    const frameId = media.frameId;
    let f = st.pending.get(frameId);
    if (f !== undefined) {
      if (f.fragCount !== media.fragCount || f.keyFrame !== media.keyFrame || f.captureUs !== media.captureUs || f.temporalLayer !== media.temporalLayer || f.refDistance !== media.refDistance) {
        return this.reject('conflict', `fragment of frame ${frameId} disagrees with its first fragment`);
      }
      if ((f.have[media.fragIndex >>> 5] & (1 << (media.fragIndex & 31))) !== 0) {
        this.s.duplicates++;
        return { status: 'duplicate', reason: 'fragment already stored', lateForCompletedFrame: false };
      }
      if (f.bytes + media.payload.length > this.maxFrameBytes) return this.tooLarge();
    } else {
      if (st.completed.has(frameId)) {
        this.s.duplicates++;
        this.s.duplicatesAfterComplete++;
        return { status: 'duplicate', reason: 'frame already completed', lateForCompletedFrame: true };
      }
      if (st.hasFloor && seqDiff(st.floor, frameId) < 0) return this.stale('frame older than the drop floor');
      if (st.hasNewest) {
        const d = seqDiff(st.newest, frameId);
        if (d > FAR_AHEAD_FRAMES) {
          if (++st.farAheadStreak < RESYNC_AFTER) {
            return this.reject('far-ahead', `frame ${frameId} is ${d} frames ahead of the newest ${st.newest}`);
          }
          this.resync(st);
        } else if (d < -FAR_AHEAD_FRAMES) {
          return this.stale(`frame ${frameId} is ${-d} frames behind the newest`);
        }
      }
      if (this.nFrames >= this.maxFrames) {
        const victim = this.oldest();
        if (victim !== undefined && this.isOlder(frameId, st, victim)) {
          return this.stale('frame buffer full and this frame is older than every buffered frame');
        }
        if (victim !== undefined) this.evict(victim);
      }
      if (media.payload.length > this.maxFrameBytes) return this.tooLarge();
      f = this.create(st, media, arrivalUs);
    }
    const cost = media.payload.length + FRAGMENT_OVERHEAD_BYTES;
    while (this.nPackets >= this.maxPackets || this.nBytes + cost > this.maxBytes) {
      const victim = this.oldest();
      if (victim === undefined) break;
      const budget = this.nPackets < this.maxPackets;
      this.evict(victim);
      if (budget) this.s.framesEvictedBudget++;
      if (victim === f) return this.stale('packet buffer full and this frame was the oldest (evicted)');
    }
    let payload = media.payload;
    if (payload.buffer.byteLength > payload.byteLength + PIN_SLACK_BYTES) {
      payload = payload.slice();
      this.s.payloadsCopied++;
    }
    st.farAheadStreak = 0;
    if (!st.hasNewest || seqNewer(frameId, st.newest)) {
      st.newest = frameId;
      st.hasNewest = true;
    }
    f.have[media.fragIndex >>> 5] |= 1 << (media.fragIndex & 31);
    f.payloads.push(payload);
    f.arrivals.push({
      fragIndex: media.fragIndex,
      pathId,
      arrivalUs,
      nalClass: media.nalClass,
      retransmission: media.retransmission === true,
      recovered,
    });
    f.bytes += payload.length;
    f.cost += cost;
    this.nBytes += cost;
    this.nPackets++;
    this.s.packetsStored++;
    if (recovered) this.s.packetsRecovered++;
    if (f.payloads.length < f.fragCount) return STORED;
    return { status: 'completed', frame: this.complete(f) };
  }

  /**
   * The consumer has decoded or skipped everything before `frameId` on this
   * stream: discards incomplete frames older than `frameId` (counted) and
   * makes later fragments of them 'stale'.
   * @returns the number of incomplete frames discarded.
   * @throws WireError ERR_INVALID_OPTION if streamId / frameId are not uint32.
   */
  dropBefore(streamId: number, frameId: number): number {
    if (!isU32(streamId)) throw WireError.invalidOption('streamId', streamId, 'a uint32');
    if (!isU32(frameId)) throw WireError.invalidOption('frameId', frameId, 'a uint32');
    const st = this.stream(streamId);
    this.raiseFloor(st, frameId);
    let n = 0;
    for (const f of st.pending.values()) {
      if (seqDiff(frameId, f.frameId) < 0) {
        this.s.framesDropped++;
        this.s.packetsDropped += f.payloads.length;
        this.remove(f);
        n++;
      }
    }
    return n;
  }

  /**
   * Evict incomplete frames whose first fragment arrived before
   * `nowUs - maxAgeMs` (counted in `framesExpired`). {@link insert} runs it
   * every maxAgeMs/8 of arrival time; call it from a periodic tick so memory
   * is released while nothing arrives.
   * @returns frames evicted.
   */
  expire(nowUs: number): number {
    if (this.maxAgeUs <= 0 || !Number.isFinite(nowUs)) return 0;
    this.lastSweepUs = nowUs;
    if (this.nFrames === 0) return 0;
    const limit = nowUs - this.maxAgeUs;
    let n = 0;
    for (const st of this.streams.values()) {
      for (const f of st.pending.values()) {
        if (f.firstUs >= limit) continue;
        this.evict(f);
        this.s.framesEvicted--; // counted as expired, not evicted
        this.s.framesExpired++;
        n++;
      }
    }
    return n;
  }

  /** Estimated bytes held by incomplete frames (payloads + per-fragment overhead). */
  pendingBytes(): number {
    return this.nBytes;
  }

  /** A snapshot copy of the counters. */
  stats(): DepacketizerStats {
    return { ...this.s };
  }

  /** Incomplete frames held (all streams). */
  pendingFrames(): number {
    return this.nFrames;
  }

  /** Fragments held in incomplete frames (all streams). */
  pendingPackets(): number {
    return this.nPackets;
  }

  // -------------------------------------------------------------------------

  private reject(kind: 'invalid' | 'conflict' | 'far-ahead', reason: string): InsertResult {
    this.s.rejected++;
    if (kind === 'invalid') this.s.rejectedInvalid++;
    else if (kind === 'conflict') this.s.rejectedConflict++;
    else this.s.rejectedFarAhead++;
    return { status: 'rejected', reason };
  }

  private tooLarge(): InsertResult {
    this.s.rejected++;
    this.s.rejectedTooLarge++;
    return { status: 'rejected', reason: `frame would exceed ${this.maxFrameBytes} bytes` };
  }

  private stale(reason: string): InsertResult {
    this.s.stale++;
    return { status: 'stale', reason };
  }

  private stream(id: number): StreamState {
    let st = this.streams.get(id);
    if (st !== undefined) return st;
    if (this.streams.size >= this.maxStreams) {
      let lru: StreamState | undefined;
      for (const s of this.streams.values()) if (lru === undefined || s.lastActive < lru.lastActive) lru = s;
      if (lru !== undefined) {
        for (const f of lru.pending.values()) {
          this.s.framesEvicted++;
          this.s.packetsEvicted += f.payloads.length;
          this.remove(f);
        }
        this.streams.delete(lru.id);
        this.s.streamsEvicted++;
      }
    }
    st = {
      id,
      newest: 0,
      hasNewest: false,
      floor: 0,
      hasFloor: false,
      pending: new Map(),
      completed: new Set(),
      ring: new Uint32Array(this.completedWindow),
      ringHead: 0,
      ringCount: 0,
      farAheadStreak: 0,
      lastActive: this.tick,
    };
    this.streams.set(id, st);
    return st;
  }

  private create(st: StreamState, m: MediaMessage, arrivalUs: number): PendingFrame {
    const f: PendingFrame = {
      stream: st,
      frameId: m.frameId,
      fragCount: m.fragCount,
      keyFrame: m.keyFrame,
      captureUs: m.captureUs,
      temporalLayer: m.temporalLayer,
      refDistance: m.refDistance,
      have: new Uint32Array((m.fragCount + 31) >>> 5),
      payloads: [],
      arrivals: [],
      bytes: 0,
      cost: 0,
      firstUs: arrivalUs,
      order: this.tick,
    };
    st.pending.set(m.frameId, f);
    this.nFrames++;
    return f;
  }

  private remove(f: PendingFrame): void {
    f.stream.pending.delete(f.frameId);
    this.nFrames--;
    this.nPackets -= f.payloads.length;
    this.nBytes -= f.cost;
  }

  /** Age of a frame: how many frames it is behind its stream's newest. */
  private age(frameId: number, st: StreamState): number {
    return st.hasNewest ? seqDiff(frameId, st.newest) : 0;
  }

  /** True when (frameId, st) is older than the buffered frame `v`. */
  private isOlder(frameId: number, st: StreamState, v: PendingFrame): boolean {
    return this.age(frameId, st) > this.age(v.frameId, v.stream);
  }

  /** The oldest incomplete frame over all streams (O(pending frames); only on overflow). */
  private oldest(): PendingFrame | undefined {
    let best: PendingFrame | undefined;
    let bestAge = -Infinity;
    for (const st of this.streams.values()) {
      for (const f of st.pending.values()) {
        const a = this.age(f.frameId, st);
        if (a > bestAge || (a === bestAge && best !== undefined && f.order < best.order)) {
          best = f;
          bestAge = a;
        }
      }
    }
    return best;
  }

  private evict(f: PendingFrame): void {
    this.s.framesEvicted++;
    this.s.packetsEvicted += f.payloads.length;
    this.remove(f);
    // Giving up on the oldest frame: later fragments of it (or older) are stale.
    this.raiseFloor(f.stream, seqAdd(f.frameId, 1));
  }

  private raiseFloor(st: StreamState, floor: number): void {
    if (!st.hasFloor || seqNewer(floor, st.floor)) {
      st.floor = floor;
      st.hasFloor = true;
    }
  }

  private resync(st: StreamState): void {
    this.s.resyncs++;
    for (const f of st.pending.values()) {
      this.s.framesEvicted++;
      this.s.packetsEvicted += f.payloads.length;
      this.remove(f);
    }
    st.completed.clear();
    st.ringCount = 0;
    st.ringHead = 0;
    st.hasFloor = false;
    st.hasNewest = false;
    st.farAheadStreak = 0;
  }

  private complete(f: PendingFrame): AssembledFrame {
    this.remove(f);
    this.markCompleted(f.stream, f.frameId);
    this.s.framesCompleted++;
    return assembleFrame(f.stream.id, f);
  }

  private markCompleted(st: StreamState, frameId: number): void {
    const W = st.ring.length;
    if (st.ringCount === W) {
      // Forget the oldest completed id; frames up to it become stale instead.
      const old = st.ring[st.ringHead];
      st.completed.delete(old);
      this.raiseFloor(st, seqAdd(old, 1));
      st.ring[st.ringHead] = frameId;
      st.ringHead = (st.ringHead + 1) % W;
    } else {
      st.ring[(st.ringHead + st.ringCount) % W] = frameId;
      st.ringCount++;
    }
    st.completed.add(frameId);
  }
}
