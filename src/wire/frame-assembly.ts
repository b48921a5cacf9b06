/**
 * The frames the depacketizer hands out: a completed multi-fragment frame
 * whose contiguous bytes are built only when read, and the copy of its
 * temporal-layer fields.
 */
import type { AssembledFrame, FragmentArrival } from './packetization.js';

/** The temporal-layer fields of a frame as they arrived (undefined = absent on the wire). */
export interface FrameLayering {
  temporalLayer: number | undefined;
  refDistance: number | undefined;
}

/** Every fragment of one frame, in arrival order (parallel arrays). */
export interface CompleteFragments extends FrameLayering {
  frameId: number;
  fragCount: number;
  keyFrame: boolean;
  captureUs: number;
  payloads: Uint8Array[];
  arrivals: FragmentArrival[];
  /** Sum of the payload lengths. */
  bytes: number;
}

/**
 * The frame made of `f`'s fragments, in fragment order. A single-fragment
 * frame hands out its (unpinned) payload itself, no copy; a larger one is a
 * {@link LazyFrame}.
 */
export function assembleFrame(streamId: number, f: CompleteFragments): AssembledFrame {
  if (f.fragCount === 1) {
    const at = f.arrivals[0].arrivalUs;
    return withLayering(
      {
        streamId,
        frameId: f.frameId,
        keyFrame: f.keyFrame,
        captureUs: f.captureUs,
        data: f.payloads[0],
        firstArrivalUs: at,
        lastArrivalUs: at,
        arrivals: f.arrivals,
      },
      f,
    );
  }
  const ordered = new Array<Uint8Array>(f.fragCount);
  let first = Infinity;
  let last = -Infinity;
  for (let k = 0; k < f.payloads.length; k++) {
    const a = f.arrivals[k];
    ordered[a.fragIndex] = f.payloads[k];
    if (a.arrivalUs < first) first = a.arrivalUs;
    if (a.arrivalUs > last) last = a.arrivalUs;
  }
  const lazy = new LazyFrame(streamId, f.frameId, f.keyFrame, f.captureUs, ordered, f.bytes, first, last, f.arrivals);
  return withLayering(lazy, f);
}

/** Copies the frame's temporal-layer fields (when present on the wire) onto the assembled frame. */
export function withLayering<T extends AssembledFrame>(out: T, f: FrameLayering): T {
  if (f.temporalLayer !== undefined) out.temporalLayer = f.temporalLayer;
  if (f.refDistance !== undefined) out.refDistance = f.refDistance;
  return out;
}

/**
 * A completed multi-fragment frame whose contiguous `data` is built on first
 * read: a frame the frame buffer drops (over budget, too old, behind a key
 * frame) is never copied. Holds its fragments until then.
 */
export class LazyFrame implements AssembledFrame {
  temporalLayer?: number;
  refDistance?: number;
  private parts: Uint8Array[] | undefined;
  private buf: Uint8Array | undefined;

  constructor(
    readonly streamId: number,
    readonly frameId: number,
    readonly keyFrame: boolean,
    readonly captureUs: number,
    parts: Uint8Array[],
    readonly dataBytes: number,
    readonly firstArrivalUs: number,
    readonly lastArrivalUs: number,
    readonly arrivals: FragmentArrival[],
  ) {
    this.parts = parts;
  }

  get data(): Uint8Array {
    if (this.buf === undefined) {
      const buf = new Uint8Array(this.dataBytes);
      let off = 0;
      for (const p of this.parts ?? []) {
        buf.set(p, off);
        off += p.length;
      }
      this.buf = buf;
      this.parts = undefined;
    }
    return this.buf;
  }
}
