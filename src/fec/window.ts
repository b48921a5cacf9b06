/**
 * Per-path list of media packets sent since the path's last FEC packet, so a
 * policy that emits FEC only every few frames (fractional credit, Converge
 * §4.3 at low loss) protects all of them rather than one frame. Same idea as
 * libwebrtc's UlpfecGenerator collecting up to `max_fec_frames` frames and at
 * most 48 media packets (kUlpfecMaxMediaPackets) per FEC block.
 *
 * Engine use, per path i: `push(i, seq, body, now)` for each media packet sent
 * on i; after a frame, `n = policy.fecCount(ctx, now)`; if n > 0,
 * `makeFecPackets({ packets: window.take(i, now), count: n, ... })`.
 */
import { MAX_PATHS, type PathId } from '../core/types.js';
import { seqDiff } from '../core/seq.js';
import { numOption } from './errors.js';
import { FEC_MAX_MASK_BITS } from './xor.js';

export interface FecProtectionWindowOptions {
  /** Packets kept per path (default 48, max 64). */
  maxPackets?: number;
  /** Packets older than this are not protected any more, µs (default 200_000). */
  maxAgeUs?: number;
}

interface Entry {
  flowSeq: number;
  body: Uint8Array;
  sentUs: number;
}

export class FecProtectionWindow {
  private readonly maxPackets: number;
  private readonly maxAgeUs: number;
  private readonly lists: Entry[][] = [];
  private unprotectedCount = 0;

  /** @throws FecError on out-of-range options. */
  constructor(opts: FecProtectionWindowOptions = {}) {
    this.maxPackets = numOption('maxPackets', opts.maxPackets, 48, 1, FEC_MAX_MASK_BITS, true);
    this.maxAgeUs = numOption('maxAgeUs', opts.maxAgeUs, 200_000, 0, 60_000_000);
    for (let p = 0; p < MAX_PATHS; p++) this.lists.push([]);
  }

  /** A media packet was sent on `pathId` (unknown path ids are ignored). Oldest beyond `maxPackets` leave unprotected. */
  push(pathId: PathId, flowSeq: number, body: Uint8Array, nowUs: number): void {
    const list = this.list(pathId);
    if (list === undefined) return;
    list.push({ flowSeq, body, sentUs: nowUs });
    if (list.length > this.maxPackets) {
      list.shift();
      this.unprotectedCount++;
    }
  }

  /**
   * Packets of `pathId` to protect now (sent within `maxAgeUs` and within 64
   * flow seqs of the newest), oldest first; empties the path's list.
   */
  take(pathId: PathId, nowUs: number): Array<{ flowSeq: number; body: Uint8Array }> {
    const list = this.list(pathId);
    if (list === undefined || list.length === 0) return [];
    const newest = list[list.length - 1].flowSeq;
    const out: Array<{ flowSeq: number; body: Uint8Array }> = [];
    for (const e of list) {
      const d = seqDiff(e.flowSeq, newest);
      if (nowUs - e.sentUs > this.maxAgeUs || d < 0 || d >= FEC_MAX_MASK_BITS) this.unprotectedCount++;
      else out.push({ flowSeq: e.flowSeq, body: e.body });
    }
    list.length = 0;
    return out;
  }

  /** Packets that left the window without FEC protection (count since creation). */
  unprotected(): number {
    return this.unprotectedCount;
  }

  private list(pathId: PathId): Entry[] | undefined {
    return Number.isInteger(pathId) && pathId >= 0 && pathId < MAX_PATHS ? this.lists[pathId] : undefined;
  }
}
