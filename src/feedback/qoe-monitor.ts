/**
 * Converge multipath-aware QoE feedback, receiver side.
 *
 * SOURCE: Converge §3.2 and §4.2, Fig. 5 and Fig. 8:
 * - FCD (frame construction delay) = time to gather all packets of a frame
 *   = last fragment arrival - first fragment arrival.
 * - IFD (inter-frame delay) = interval between two consecutive frames
 *   entering the frame buffer (their completion times).
 * - IFD_exp = 1 / fps announced by the sender (StreamInfo, the paper's SDES).
 * - For each slow path, count the packets that arrive before and after the
 *   media packets of the fast (reference) path: after = LATE (they delayed
 *   the frame: send fewer there, alpha < 0), before = EARLY (that path could
 *   carry more, alpha > 0).
 * - Feedback only when IFD > IFD_exp: { path id, alpha, FCD }.
 *
 * Our precise definitions (the paper leaves them open):
 * - Reference path of a frame: the fast path. When the engine reports each
 *   path's one-way delay ({@link QoeMonitor.setPathDelay}: arrival minus the
 *   sender's send time, smoothed; the clock offset is the same for every
 *   path, so the values compare), it is the carrying path with the lowest
 *   delay. Without delays: the path that carried most of the frame's
 *   fragments (ties: the one whose last fragment came first, then lower id),
 *   Converge's scheduler giving the fast path the largest share. The delay
 *   rule matters when a slow path carries the larger share: with the count
 *   rule its packets would become the reference and the fast path's "early".
 * - late(p) = fragments of path p that arrived after the reference path's
 *   last fragment; early(p) = fragments of p that arrived before the
 *   reference path's first fragment. Retransmitted and FEC-recovered
 *   fragments are excluded (their delay is loss recovery, not asymmetry).
 * - A QoE drop: IFD > expected + max(ifdToleranceMs, ifdToleranceFraction x expected),
 *   where expected = max(IFD_exp, capture interval of the two frames), so a
 *   sender-side pause or frame skip is not blamed on a path. Without a known
 *   fps the capture interval alone is used.
 * - Blame (our addition): a QoE-drop frame's late packets on path p count
 *   only when p's lag behind the reference (its last fragment minus the
 *   reference's) exceeds what the paths' one-way delays explain
 *   (max(0, OWD_p - OWD_ref) as of the previous frame, so a delay step this
 *   frame's packets just reported still counts; without delays, p's usual
 *   lag, an EWMA) by at
 *   least half the IFD excess, or when p's one-way delay exceeds the
 *   reference's by more than `maxDelayGapMs` (100 ms: a latency cost too
 *   large to keep paying on every frame). The paper counts every late packet; measured
 *   in the simulator (`constant`, 6 + 4 Mbps, 30/60 ms) that reads the slow
 *   path's fixed 30 ms as a QoE problem, disables it over and over and costs
 *   a third of the goodput (5.0 vs 7.5 Mbps).
 * - Frames with a QoE drop accumulate late/early counts per path until the
 *   next feedback. Feedback blames the path with the most late packets,
 *   alpha = -ceil(late / dropFrames) (late packets per bad frame); if no path
 *   was late, the path with the most early packets gets
 *   alpha = +max(1, floor(early / dropFrames)). No attribution, no feedback.
 */
import { MAX_PATHS } from '../core/types.js';
import type { PathId, QoeFeedback } from '../core/types.js';
import { seqAdd } from '../core/seq.js';
import type { AssembledFrame } from '../wire/packetization.js';
import type { FrameQoe, PathFrameQoe } from './types.js';

export type { FrameQoe, PathFrameQoe } from './types.js';

/** Options of {@link QoeMonitor}. */
export interface QoeMonitorOptions {
  /** Paths to account for; fragments from other paths are ignored (default: all ids < MAX_PATHS). */
  pathIds?: readonly PathId[];
  /** Minimum spacing of two feedback messages, ms (default 100). */
  minFeedbackIntervalMs?: number;
  /** Absolute IFD tolerance, ms (default 5). */
  ifdToleranceMs?: number;
  /** Relative IFD tolerance, fraction of the expected IFD (default 0.2). */
  ifdToleranceFraction?: number;
  /** |alpha| cap, packets (default 64). */
  maxAlpha?: number;
  /** A QoE drop older than this is not reported any more, ms (default 1000). */
  maxFeedbackAgeMs?: number;
  /** Most streams tracked for IFD (default 16). */
  maxStreams?: number;
  /** Gain of the per-path EWMA of the lag behind the reference path (default 1/16; 0 = the first lag seen stays). */
  lagEwmaGain?: number;
  /**
   * A path whose one-way delay exceeds the reference path's by more than this
   * (ms) has its late packets blamed at every QoE drop, explained or not: it
   * adds that much latency to every frame it carries part of (default 100,
   * with the fast path's own delay within an interactive one-way budget of
   * about 150 ms, ITU-T G.114).
   */
  maxDelayGapMs?: number;
}

/** Counters of {@link QoeMonitor}. */
export interface QoeMonitorStats {
  frames: number;
  /** Frames whose IFD exceeded the expectation. */
  qoeDrops: number;
  /** Late packets of QoE-drop frames not blamed (their delay explained less than half the IFD excess). */
  lateNotBlamed: number;
  feedbacks: number;
  /** maybeFeedback() calls that had a drop to report but were rate-limited. */
  rateLimited: number;
  /** Drop windows with no late or early packets to blame (no feedback). */
  unattributed: number;
  /** Drop windows discarded because they were older than maxFeedbackAgeMs. */
  expired: number;
  /** Invalid frames / fps values (ignored). */
  invalid: number;
  /** Fragments excluded: retransmitted or FEC-recovered. */
  excludedFragments: number;
  /** Fragments from an unknown or invalid path (ignored). */
  unknownPathFragments: number;
  /** Late / early fragments per path id (index = pathId), all frames. */
  latePackets: number[];
  earlyPackets: number[];
  lastFcdMs: number | undefined;
  lastIfdMs: number | undefined;
  /** Exponential averages (gain 1/16), ms. */
  avgFcdMs: number | undefined;
  avgIfdMs: number | undefined;
  /** Default IFD_exp (ms) from setExpectedFps, undefined if unset. */
  expectedIfdMs: number | undefined;
  lastFeedbackSeq: number;
}

interface StreamIfdState {
  lastCompleteUs: number;
  lastCaptureUs: number;
  lastFrameId: number;
}

/**
 * Per-frame FCD/IFD/late-packet accounting and rate-limited QoE feedback.
 * O(fragments) per frame using fixed per-path arrays (no per-fragment allocation).
 */
export class QoeMonitor {
  private readonly allowed: Uint8Array;
  /** Smoothed relative one-way delay per path (ms); NaN = unknown. */
  private readonly pathDelayMs = new Float64Array(MAX_PATHS).fill(NaN);
  /** pathDelayMs as of the end of the previous frame (the lag baseline). */
  private readonly prevDelayMs = new Float64Array(MAX_PATHS).fill(NaN);
  private readonly minIntervalUs: number;
  private readonly tolMs: number;
  private readonly tolFrac: number;
  private readonly maxAlpha: number;
  private readonly maxAgeUs: number;
  private readonly maxStreams: number;
  private defaultIfdExpMs: number | undefined = undefined;
  private readonly streamIfdExpMs = new Map<number, number>();
  private readonly streams = new Map<number, StreamIfdState>();
  // Per-frame scratch.
  private readonly cnt = new Int32Array(MAX_PATHS);
  private readonly first = new Float64Array(MAX_PATHS);
  private readonly last = new Float64Array(MAX_PATHS);
  private readonly late = new Int32Array(MAX_PATHS);
  private readonly early = new Int32Array(MAX_PATHS);
  private readonly excessLag = new Float64Array(MAX_PATHS);
  /** Per path: one-way delay minus the reference path's (ms, >= 0; 0 when unknown). */
  private readonly delayGapMs = new Float64Array(MAX_PATHS);
  private readonly maxDelayGapMs: number;
  /** Per path: EWMA of how far (µs) its last fragment comes after the reference path's; NaN = not seen yet. */
  private readonly typicalLagUs = new Float64Array(MAX_PATHS).fill(NaN);
  private readonly lagGain: number;
  // Feedback window (frames with a QoE drop since the last feedback).
  private readonly winLate = new Float64Array(MAX_PATHS);
  private readonly winEarly = new Float64Array(MAX_PATHS);
  private winFrames = 0;
  private winFcdMs = 0;
  /** FCD of the newest drop frame up to the reference path's last fragment (ms). */
  private winFcdRefMs = 0;
  private winLastUs = 0;
  private lastFeedbackUs: number | undefined = undefined;
  private seq = 0;
  private readonly st: QoeMonitorStats = {
    frames: 0,
    qoeDrops: 0,
    lateNotBlamed: 0,
    feedbacks: 0,
    rateLimited: 0,
    unattributed: 0,
    expired: 0,
    invalid: 0,
    excludedFragments: 0,
    unknownPathFragments: 0,
    latePackets: new Array<number>(MAX_PATHS).fill(0),
    earlyPackets: new Array<number>(MAX_PATHS).fill(0),
    lastFcdMs: undefined,
    lastIfdMs: undefined,
    avgFcdMs: undefined,
    avgIfdMs: undefined,
    expectedIfdMs: undefined,
    lastFeedbackSeq: 0,
  };

  /** @throws RangeError for a path id outside [0, MAX_PATHS) or a bad option. */
  constructor(opts: QoeMonitorOptions = {}) {
    this.allowed = new Uint8Array(MAX_PATHS);
    if (opts.pathIds === undefined) this.allowed.fill(1);
    else
      for (const p of opts.pathIds) {
        if (!Number.isInteger(p) || p < 0 || p >= MAX_PATHS) throw new RangeError(`QoeMonitor: pathId ${p} outside [0, ${MAX_PATHS})`);
        this.allowed[p] = 1;
      }
    this.minIntervalUs = nonNeg(opts.minFeedbackIntervalMs ?? 100, 'minFeedbackIntervalMs') * 1000;
    this.tolMs = nonNeg(opts.ifdToleranceMs ?? 5, 'ifdToleranceMs');
    this.tolFrac = nonNeg(opts.ifdToleranceFraction ?? 0.2, 'ifdToleranceFraction');
    this.maxAlpha = nonNeg(opts.maxAlpha ?? 64, 'maxAlpha');
    this.maxAgeUs = nonNeg(opts.maxFeedbackAgeMs ?? 1000, 'maxFeedbackAgeMs') * 1000;
    this.maxStreams = nonNeg(opts.maxStreams ?? 16, 'maxStreams');
    this.lagGain = nonNeg(opts.lagEwmaGain ?? 1 / 16, 'lagEwmaGain');
    this.maxDelayGapMs = nonNeg(opts.maxDelayGapMs ?? 100, 'maxDelayGapMs');
    if (this.lagGain > 1) throw new RangeError(`QoeMonitor: lagEwmaGain must be in [0, 1], got ${this.lagGain}`);
  }

  /**
   * The current one-way delay of a path (ms, any constant offset common to
   * all paths is fine: only comparisons are made). It picks each frame's
   * reference (fast) path. NaN or an unknown path clears / is ignored.
   */
  setPathDelay(pathId: PathId, delayMs: number): void {
    if (!(pathId >= 0 && pathId < MAX_PATHS && (pathId | 0) === pathId)) return;
    this.pathDelayMs[pathId] = Number.isFinite(delayMs) ? delayMs : NaN;
  }

  /**
   * Set the sender's frame rate (from StreamInfo): IFD_exp = 1000 / fps ms.
   * With `streamId` it applies to that stream only, otherwise to all streams
   * without their own value. Values outside (0, 1000] fps are ignored and counted.
   */
  setExpectedFps(fps: number, streamId?: number): void {
    if (!Number.isFinite(fps) || fps <= 0 || fps > 1000) {
      this.st.invalid++;
      return;
    }
    const ms = 1000 / fps;
    if (streamId === undefined) {
      this.defaultIfdExpMs = ms;
      this.st.expectedIfdMs = ms;
    } else if (this.streamIfdExpMs.has(streamId) || this.streamIfdExpMs.size < this.maxStreams) {
      this.streamIfdExpMs.set(streamId, ms);
    } else {
      this.st.invalid++;
    }
  }

  /**
   * Account one frame as it enters the frame buffer.
   * @param frame the complete frame (fragment arrivals on the receiver clock).
   * @param completeUs receiver clock (µs) when it entered the frame buffer
   *   (normally its last fragment arrival).
   * @returns the frame's metrics (never throws; invalid input gives zeros and is counted).
   */
  onFrame(frame: AssembledFrame, completeUs: number): FrameQoe {
    if (!validFrame(frame) || !Number.isFinite(completeUs)) {
      this.st.invalid++;
      return {
        streamId: frame?.streamId ?? 0,
        frameId: frame?.frameId ?? 0,
        fcdMs: 0,
        ifdMs: undefined,
        expectedIfdMs: undefined,
        qoeDrop: false,
        referencePathId: undefined,
        paths: [],
      };
    }
    this.st.frames++;
    // FCD.
    let fcdUs = frame.lastArrivalUs - frame.firstArrivalUs;
    if (!Number.isFinite(fcdUs) || fcdUs < 0) fcdUs = 0;
    const fcdMs = fcdUs / 1000;

    // Per-path counts and first/last arrivals.
    const { cnt, first, last, late, early, excessLag, delayGapMs } = this;
    cnt.fill(0);
    late.fill(0);
    early.fill(0);
    excessLag.fill(0);
    delayGapMs.fill(0);
    const arr = frame.arrivals;
    for (let i = 0; i < arr.length; i++) {
      const a = arr[i];
      if (a.retransmission || a.recovered) {
        this.st.excludedFragments++;
        continue;
      }
      const p = a.pathId;
      if (!(p >= 0 && p < MAX_PATHS && (p | 0) === p) || this.allowed[p] === 0 || !Number.isFinite(a.arrivalUs)) {
        this.st.unknownPathFragments++;
        continue;
      }
      if (cnt[p] === 0) {
        first[p] = a.arrivalUs;
        last[p] = a.arrivalUs;
      } else {
        if (a.arrivalUs < first[p]) first[p] = a.arrivalUs;
        if (a.arrivalUs > last[p]) last[p] = a.arrivalUs;
      }
      cnt[p]++;
    }
    let npaths = 0;
    let ref = -1;
    for (let p = 0; p < MAX_PATHS; p++) {
      if (cnt[p] === 0) continue;
      npaths++;
      if (ref < 0) {
        ref = p;
        continue;
      }
      const dp = this.pathDelayMs[p];
      const dr = this.pathDelayMs[ref];
      if (Number.isFinite(dp) && Number.isFinite(dr)) {
        if (dp < dr) ref = p;
      } else if (Number.isFinite(dp)) {
        ref = p;
      } else if (!Number.isFinite(dr) && (cnt[p] > cnt[ref] || (cnt[p] === cnt[ref] && last[p] < last[ref]))) {
        ref = p;
      }
    }
    if (npaths >= 2) {
      const refFirst = first[ref];
      const refLast = last[ref];
      for (let i = 0; i < arr.length; i++) {
        const a = arr[i];
        const p = a.pathId;
        if (p === ref || a.retransmission || a.recovered || !(p >= 0 && p < MAX_PATHS && (p | 0) === p) || this.allowed[p] === 0) continue;
        if (a.arrivalUs > refLast) late[p]++;
        else if (a.arrivalUs < refFirst) early[p]++;
      }
      // Lag behind the reference, and the part of it the paths' one-way delays
      // do not explain (µs). Without delays: the excess over the path's usual lag.
      const g = this.lagGain;
      // The delays as they were before this frame's packets moved them: a delay
      // step is in this frame's lag but not yet in the baseline.
      const dRef = this.prevDelayMs[ref];
      for (let p = 0; p < MAX_PATHS; p++) {
        if (cnt[p] === 0 || p === ref) continue;
        const lagUs = last[p] > refLast ? last[p] - refLast : 0;
        const dp = this.prevDelayMs[p];
        if (Number.isFinite(dp) && Number.isFinite(dRef)) {
          delayGapMs[p] = Math.max(0, dp - dRef);
          excessLag[p] = lagUs - delayGapMs[p] * 1000;
          continue;
        }
        const typical = this.typicalLagUs[p];
        if (Number.isNaN(typical)) {
          this.typicalLagUs[p] = lagUs;
        } else {
          excessLag[p] = lagUs - typical;
          this.typicalLagUs[p] = typical + g * (lagUs - typical);
        }
      }
    }
    this.prevDelayMs.set(this.pathDelayMs);
    const paths: PathFrameQoe[] = [];
    for (let p = 0; p < MAX_PATHS; p++) {
      if (cnt[p] === 0) continue;
      paths.push({ pathId: p, packets: cnt[p], late: late[p], early: early[p], lastArrivalUs: last[p] });
      this.st.latePackets[p] += late[p];
      this.st.earlyPackets[p] += early[p];
    }

    // IFD and its expectation.
    let ifdMs: number | undefined;
    let expected: number | undefined;
    const prev = this.streams.get(frame.streamId);
    if (prev !== undefined) {
      ifdMs = Math.max(0, (completeUs - prev.lastCompleteUs) / 1000);
      expected = this.streamIfdExpMs.get(frame.streamId) ?? this.defaultIfdExpMs;
      const captureMs = (frame.captureUs - prev.lastCaptureUs) / 1000;
      if (Number.isFinite(captureMs) && captureMs > 0 && captureMs < 2000) {
        expected = expected === undefined ? captureMs : Math.max(expected, captureMs);
      }
      prev.lastCompleteUs = completeUs;
      prev.lastCaptureUs = frame.captureUs;
      prev.lastFrameId = frame.frameId;
    } else if (this.streams.size < this.maxStreams) {
      this.streams.set(frame.streamId, { lastCompleteUs: completeUs, lastCaptureUs: frame.captureUs, lastFrameId: frame.frameId });
    }
    const qoeDrop = ifdMs !== undefined && expected !== undefined && ifdMs > expected + Math.max(this.tolMs, this.tolFrac * expected);

    this.st.lastFcdMs = fcdMs;
    this.st.avgFcdMs = this.st.avgFcdMs === undefined ? fcdMs : this.st.avgFcdMs + (fcdMs - this.st.avgFcdMs) / 16;
    if (ifdMs !== undefined) {
      this.st.lastIfdMs = ifdMs;
      this.st.avgIfdMs = this.st.avgIfdMs === undefined ? ifdMs : this.st.avgIfdMs + (ifdMs - this.st.avgIfdMs) / 16;
    }
    if (qoeDrop) {
      this.st.qoeDrops++;
      // Blame a path's late packets only when the part of its lag behind the
      // reference path that the one-way delay difference does not explain
      // (packets queued behind its rate: over-scheduling, or a delay rising
      // faster than its average) is at least half the IFD excess. The delay
      // difference itself is a latency cost that every frame using the path
      // pays alike (Eq. 3 weighs it against FCD when re-enabling), unless it is
      // larger than maxDelayGapMs; and a path
      // a few ms behind is not why a frame came 40 ms late (encoder or network
      // jitter is). Moving packets away in those cases only starves the path
      // (and its GCC estimate) and the encoder for nothing.
      const excessMs = (ifdMs as number) - (expected as number);
      for (let p = 0; p < MAX_PATHS; p++) {
        if (late[p] > 0 && (excessLag[p] / 1000 >= 0.5 * excessMs || delayGapMs[p] > this.maxDelayGapMs)) this.winLate[p] += late[p];
        else if (late[p] > 0) this.st.lateNotBlamed += late[p];
        this.winEarly[p] += early[p];
      }
      this.winFrames++;
      this.winFcdMs = fcdMs;
      this.winFcdRefMs = npaths >= 2 ? Math.max(0, (last[ref] - frame.firstArrivalUs) / 1000) : fcdMs;
      this.winLastUs = completeUs;
    }
    return {
      streamId: frame.streamId,
      frameId: frame.frameId,
      fcdMs,
      ifdMs,
      expectedIfdMs: expected,
      qoeDrop,
      referencePathId: npaths >= 2 ? ref : undefined,
      paths,
    };
  }

  /**
   * Feedback to send now, if QoE dropped since the last one and the rate
   * limit allows. The engine sends it on every path (the sender ignores
   * duplicates by `seq`).
   * @param nowUs receiver clock (µs).
   * @returns `{ pathId, alpha, fcdMs, seq }` (see class doc) or undefined.
   */
  maybeFeedback(nowUs: number): QoeFeedback | undefined {
    if (this.winFrames === 0) return undefined;
    if (nowUs - this.winLastUs > this.maxAgeUs) {
      this.st.expired++;
      this.clearWindow();
      return undefined;
    }
    if (this.lastFeedbackUs !== undefined && nowUs - this.lastFeedbackUs < this.minIntervalUs) {
      this.st.rateLimited++;
      return undefined;
    }
    let best = -1;
    for (let p = 0; p < MAX_PATHS; p++) if (this.winLate[p] > 0 && (best < 0 || this.winLate[p] > this.winLate[best])) best = p;
    let alpha: number;
    if (best >= 0) {
      alpha = -Math.ceil(this.winLate[best] / this.winFrames);
    } else {
      for (let p = 0; p < MAX_PATHS; p++) if (this.winEarly[p] > 0 && (best < 0 || this.winEarly[p] > this.winEarly[best])) best = p;
      if (best < 0) {
        this.st.unattributed++;
        this.clearWindow();
        return undefined;
      }
      alpha = Math.max(1, Math.floor(this.winEarly[best] / this.winFrames));
    }
    alpha = Math.max(-this.maxAlpha, Math.min(this.maxAlpha, alpha));
    this.seq = seqAdd(this.seq, 1);
    // Negative feedback reports the FCD without the blamed path's tail: the sender's
    // Eq. 3 re-enables that path once its delay gap fits within FCD, and an FCD
    // stretched by the path's own lateness would always let it back in.
    const fcdMs = alpha < 0 ? this.winFcdRefMs : this.winFcdMs;
    const fb: QoeFeedback = { pathId: best, alpha, fcdMs, seq: this.seq };
    this.clearWindow();
    this.lastFeedbackUs = nowUs;
    this.st.feedbacks++;
    this.st.lastFeedbackSeq = this.seq;
    return fb;
  }

  /** Smoothed FCD (ms, EWMA gain 1/16 over frames) or undefined before any frame. */
  smoothedFcdMs(): number | undefined {
    return this.st.avgFcdMs;
  }

  /** Counters (a copy). */
  stats(): QoeMonitorStats {
    return { ...this.st, latePackets: this.st.latePackets.slice(), earlyPackets: this.st.earlyPackets.slice() };
  }

  private clearWindow(): void {
    this.winLate.fill(0);
    this.winEarly.fill(0);
    this.winFrames = 0;
  }
}

function validFrame(f: AssembledFrame): boolean {
  return typeof f === 'object' && f !== null && Number.isInteger(f.streamId) && Number.isInteger(f.frameId) && Array.isArray(f.arrivals);
}

function nonNeg(v: number, name: string): number {
  if (!Number.isFinite(v) || v < 0) throw new RangeError(`QoeMonitor: ${name} must be a finite number >= 0, got ${v}`);
  return v;
}
