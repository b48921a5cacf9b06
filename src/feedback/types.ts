/**
 * Shapes shared by the receiver-side feedback pieces (src/feedback). The
 * classes live one per file; this file only holds the data they exchange
 * with the engine.
 */
import type { PathId } from '../core/types.js';
import type { AssembledFrame } from '../wire/packetization.js';

/** What {@link import('./frame-buffer.js').FrameBuffer.poll} hands the engine. */
export interface FrameBufferOutput {
  /** Frames to decode now, in decode order (per stream: frameId order). */
  decodable: AssembledFrame[];
  /** Frames dropped during this poll (timeouts, key-frame jumps). */
  dropped: number;
  /**
   * Some stream asks for a key frame (send a PLI): it cannot continue without one, or (FrameBufferOptions.keepOnTimeout)
   * a missing frame timed out and the frames behind it are kept in case it still arrives.
   */
  keyframeNeeded: boolean;
  /** The streams that need a key frame (subset of known streams, ascending). */
  keyframeNeededStreams: number[];
  /** Why each of {@link keyframeNeededStreams} needs a key frame (same order). */
  keyframeReasons: FrameBufferKeyReason[];
}

/**
 * Why the frame buffer needs a key frame: no key frame yet (`start`), a
 * missing frame's wait timed out (`timeout`), a frame waited longer than
 * `maxAgeMs` (`age`), the frame count (`overflow`) or byte budget (`budget`)
 * was exceeded, or the frameIds jumped (`resync`).
 */
export type FrameBufferKeyReason = 'frame-buffer-start' | 'frame-buffer-timeout' | 'frame-buffer-age' | 'frame-buffer-overflow' | 'frame-buffer-budget' | 'frame-buffer-resync';

/** Result of {@link import('./frame-buffer.js').FrameBuffer.insert}. */
export type FrameInsertResult = 'stored' | 'duplicate' | 'stale' | 'dropped';

/** One NACK message worth of missing flow seqs (maps to the wire `Nack`). */
export interface NackRequest {
  streamId: number;
  flowSeqs: number[];
}

/** Why a key frame is requested (free text allowed for engine-specific causes). */
export type KeyframeRequestReason = 'stream-start' | 'frame-buffer-timeout' | 'frame-buffer-overflow' | 'decoder-error' | 'nack-gave-up' | (string & {});

/** Per-path part of {@link FrameQoe}. */
export interface PathFrameQoe {
  pathId: PathId;
  /** Fragments of the frame that arrived on this path (received, not FEC-recovered). */
  packets: number;
  /** Fragments that arrived after the reference path's last fragment (Converge §4.2). */
  late: number;
  /** Fragments that arrived before the reference path's first fragment. */
  early: number;
  /** Receiver clock (µs) of this path's last fragment of the frame. */
  lastArrivalUs: number;
}

/** Per-frame QoE metrics computed by the QoE monitor (Converge §4.2). */
export interface FrameQoe {
  streamId: number;
  frameId: number;
  /** Frame construction delay: last - first fragment arrival (ms). */
  fcdMs: number;
  /** Inter-frame delay: completion time minus the previous frame's (ms); undefined for a stream's first frame. */
  ifdMs: number | undefined;
  /** IFD the frame was judged against (ms); undefined when unknown. */
  expectedIfdMs: number | undefined;
  /** IFD exceeded the expectation (plus tolerance): a QoE drop. */
  qoeDrop: boolean;
  /** Path whose fragments defined "on time" (most fragments); undefined with fewer than 2 paths. */
  referencePathId: PathId | undefined;
  /** One entry per path that carried fragments, ascending pathId. */
  paths: PathFrameQoe[];
}
