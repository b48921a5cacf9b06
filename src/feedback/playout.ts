/**
 * Playout timing: when a complete, decodable frame goes to the decoder.
 *
 * Without it a frame is decoded the moment it is complete, so every delay
 * variation of the network (a capacity dip, a NACK round trip) shows up as a
 * gap between decoded frames, i.e. as a freeze. A real-time receiver instead
 * plays frames out at `expected arrival + current delay`, where the current
 * delay follows a target sized to the measured jitter: a frame that is late
 * by less than that delay costs no freeze, at the price of that much latency.
 * After libwebrtc modules/video_coding/timing/timing.cc (`VCMTiming`:
 * `RenderTime`, `TargetVideoDelay`, `UpdateCurrentDelay` with
 * kDelayMaxChangeMsPerS = 100) and the NACK term of
 * jitter_estimator.cc (`GetJitterEstimate`: + RTT once NACKs are frequent).
 *
 * Our simplifications, each documented where it is used:
 * - Expected arrival = capture time + the lowest (arrival - capture) offset of
 *   the last `offsetWindowMs` of frames (libwebrtc fits a Kalman-filtered
 *   timestamp extrapolator; the windowed minimum needs no clock sync and
 *   follows path changes within the window).
 * - libwebrtc adds one RTT to the target once 3 frames needed NACKs (for
 *   good). Here that term is optional (`nackHoldMs` > 0: on while a NACK
 *   was sent within the last `nackHoldMs`) and off by default: in the
 *   simulator's cellular suite (tune half, 3 seeds) it cut converge's total
 *   freeze 23.2 -> 20.3 s but raised p95 latency 113 -> 229 ms (no playout
 *   timing: 26.0 s, 83 ms), and on `failover` it raised p95 to 365 ms.
 * - A steadier form of the NACK term (`nackSteadyBins` > 0, on by default): the RTT is
 *   added only while NACK recoveries (a NACKed packet that arrived) are
 *   frequent and spread out: at least `nackSteadyBins` of the last
 *   `nackSteadyWindowS` one-second bins saw one. Random loss recovers
 *   something nearly every second; the drop-tail burst of a queueing path or
 *   a failing path fills one or two bins. The frequency condition is
 *   libwebrtc's "3 frames needed NACKs" (jitter_estimator.cc
 *   kNackLimit) made to come back down when the recoveries stop. It also
 *   needs the RTT to be within `nackSteadyMaxQueueMs` of the lowest path RTT
 *   of the last 30 s (no standing queue): loss on a saturated path is
 *   congestion, which the rate controller ends, and its RTT is inflated by
 *   the queue (in the cellular suite the term without that test fired only
 *   on two WiFi-fade pairs, 3 of 87 runs: +23 to +221 ms of p95 there and
 *   +0.5 s of freezes in total).
 *   Simulator, converge, `loss-sweep` (two 15 Mbps / 100 ms paths, Bernoulli
 *   loss 1-10 %, seed 1): frozen 16.5 -> 8.8 s per call (without the queue
 *   test 3.2 s); cellular suite and the named fault scenarios: unchanged
 *   except one check-half run (docs/results.md, "Where the targets stand").
 *   The queue test's base never learns an unmeasured RTT (the receiver's
 *   default, 100 ms, before the clock exchange's first sample): learned, it
 *   held the term off for the first 30 s of every loss-sweep call (path RTT
 *   200 ms > 100 + 50), which was the "NACK RTT > 50 ms over the path RTT"
 *   of stop 27; the NACK RTT itself is 200-213 ms there (p5-max, 1 % loss).
 *   Without that: loss-sweep frozen 13.7 / 14.9 / 7.7 / 7.8 -> 3.9 / 2.4 /
 *   3.1 / 3.5 s at 1 / 2 / 5 / 10 % loss.
 *
 * I/O-free: the caller passes times (µs, receiver clock; capture times in the
 * sender's clock, the offset absorbs the difference).
 */

/** Options of {@link PlayoutTiming}. */
export interface PlayoutOptions {
  /** Lower bound of the playout delay (ms, default 0 = as soon as possible when the network is steady). */
  minDelayMs?: number;
  /**
   * Upper bound of the playout delay (ms, default 400). 0 turns playout timing
   * off: frames go to the decoder as soon as they are decodable.
   */
  maxDelayMs?: number;
  /** Most the current delay moves per second of elapsed time (ms/s, default 100, libwebrtc kDelayMaxChangeMsPerS). */
  maxChangeMsPerS?: number;
  /** Window of the arrival-offset minimum (ms, default 5000). */
  offsetWindowMs?: number;
  /** The RTT (NACK) term stays on this long after the last NACK sent (ms, default 0 = off; see the module comment). */
  nackHoldMs?: number;
  /** Decode + render allowance added to the target (ms, default 10; libwebrtc's render delay). */
  renderDelayMs?: number;
  /**
   * Steady NACK term: the target includes one RTT while at least this many of
   * the last `nackSteadyWindowS` one-second bins saw a NACK recovery
   * ({@link PlayoutTiming.onNackRecovered}); default 5, 0 = off (see the module comment).
   */
  nackSteadyBins?: number;
  /** Window of the steady NACK term, in one-second bins (s, default 10, at most 60). */
  nackSteadyWindowS?: number;
  /**
   * The steady NACK term needs the RTT to be within this of the lowest path
   * RTT of the last 30 s (ms, default 50; see {@link PlayoutTiming.update}):
   * no standing queue, so the losses are not congestion.
   */
  nackSteadyMaxQueueMs?: number;
}

/** Snapshot for stats (ms). */
export interface PlayoutStats {
  /** Delay the frames are played out with now (ms). */
  currentDelayMs: number;
  /** Where the current delay is heading (ms). */
  targetDelayMs: number;
  /** Frames that arrived after their playout time (played at once). */
  lateFrames: number;
  /** Extra delay asked by A/V sync, included in the target (ms). */
  extraDelayMs: number;
}

const DEFAULTS: Required<PlayoutOptions> = {
  minDelayMs: 0,
  maxDelayMs: 400,
  maxChangeMsPerS: 100,
  offsetWindowMs: 5000,
  nackHoldMs: 0,
  renderDelayMs: 10,
  nackSteadyBins: 5,
  nackSteadyWindowS: 10,
  nackSteadyMaxQueueMs: 50,
};

/** Window of the lowest RTT the steady NACK term compares with (s). */
const RTT_MIN_WINDOW_S = 30;

/** Most one-second bins of the steady NACK term's window. */
const MAX_STEADY_WINDOW_S = 60;

/** Most offset samples kept (bounds memory whatever the frame rate). */
const MAX_OFFSET_SAMPLES = 2048;

function checkMs(name: string, v: number): number {
  if (!Number.isFinite(v) || v < 0) throw new RangeError(`PlayoutTiming: ${name} must be a finite number >= 0, got ${v}`);
  return v;
}

/** See the module comment. */
export class PlayoutTiming {
  private readonly o: Required<PlayoutOptions>;
  /** Monotonic deque of (arrivalUs, offsetUs): offsets increasing, so the head is the window's minimum. */
  private readonly offsets: Array<{ atUs: number; offsetUs: number }> = [];
  private currentDelayMs = 0;
  private targetDelayMs = 0;
  private lastUpdateUs: number | undefined;
  private lastNackUs = -Infinity;
  private late = 0;
  private extraMs = 0;
  /** Seconds (floor of µs / 1e6) that saw a NACK recovery, newest last; at most nackSteadyWindowS entries. */
  private readonly recoveryBins: number[] = [];
  /** Lowest RTT per second of the last RTT_MIN_WINDOW_S seconds (at most that many entries). */
  private readonly rttMinBins: Array<{ s: number; ms: number }> = [];

  /** @throws RangeError for a negative or non-finite option, or minDelayMs > maxDelayMs */
  constructor(opts: PlayoutOptions = {}) {
    this.o = { ...DEFAULTS, ...opts };
    for (const k of Object.keys(DEFAULTS) as Array<keyof PlayoutOptions>) checkMs(k, this.o[k]);
    if (!Number.isInteger(this.o.nackSteadyWindowS) || this.o.nackSteadyWindowS < 1 || this.o.nackSteadyWindowS > MAX_STEADY_WINDOW_S)
      throw new RangeError(`PlayoutTiming: nackSteadyWindowS must be an integer in [1, ${MAX_STEADY_WINDOW_S}], got ${this.o.nackSteadyWindowS}`);
    if (this.o.minDelayMs > this.o.maxDelayMs) throw new RangeError(`PlayoutTiming: minDelayMs ${this.o.minDelayMs} > maxDelayMs ${this.o.maxDelayMs}`);
    this.currentDelayMs = this.o.minDelayMs;
  }

  /** False when `maxDelayMs` is 0: frames are decoded as soon as they are decodable. */
  get enabled(): boolean {
    return this.o.maxDelayMs > 0;
  }

  /** A frame completed: learn its arrival offset (capture in the sender's clock, arrival in ours; µs). */
  onFrameComplete(captureUs: number, arrivalUs: number): void {
    if (!Number.isFinite(captureUs) || !Number.isFinite(arrivalUs)) return;
    const offsetUs = arrivalUs - captureUs;
    while (this.offsets.length > 0 && this.offsets[this.offsets.length - 1].offsetUs >= offsetUs) this.offsets.pop();
    this.offsets.push({ atUs: arrivalUs, offsetUs });
    if (this.offsets.length > MAX_OFFSET_SAMPLES) this.offsets.shift();
    this.expire(arrivalUs);
  }

  /**
   * Add `ms` to the target (A/V sync: src/feedback/av-sync.ts; libwebrtc
   * VCMTiming::set_min_playout_delay). The current delay moves there at the
   * usual rate (`maxChangeMsPerS`). Ignored while playout timing is off.
   * @throws RangeError for a negative or non-finite value.
   */
  setExtraDelayMs(ms: number): void {
    this.extraMs = checkMs('extra delay', ms);
  }

  /** The receiver sent a NACK: the target includes one RTT for a while (see the module comment). */
  onNackSent(nowUs: number): void {
    this.lastNackUs = nowUs;
  }

  /**
   * A NACKed packet arrived (its retransmission, or a late original): counts
   * toward the steady NACK term (`nackSteadyBins`).
   */
  onNackRecovered(nowUs: number): void {
    if (!Number.isFinite(nowUs)) return;
    const bin = Math.floor(nowUs / 1e6);
    const last = this.recoveryBins[this.recoveryBins.length - 1];
    if (last !== undefined && bin <= last) return;
    this.recoveryBins.push(bin);
    if (this.recoveryBins.length > this.o.nackSteadyWindowS) this.recoveryBins.shift();
  }

  /** True while the steady NACK term is on: enough of the window's one-second bins saw a NACK recovery. */
  nackSteady(nowUs: number): boolean {
    if (this.o.nackSteadyBins <= 0) return false;
    const oldest = Math.floor(nowUs / 1e6) - this.o.nackSteadyWindowS;
    let n = 0;
    for (const b of this.recoveryBins) if (b > oldest) n++;
    return n >= this.o.nackSteadyBins;
  }

  /** Lowest RTT of the last {@link RTT_MIN_WINDOW_S} seconds (ms; Infinity before the first). */
  baseRttMs(): number {
    let m = Infinity;
    for (const b of this.rttMinBins) m = Math.min(m, b.ms);
    return m;
  }

  private learnRtt(nowUs: number, rttMs: number): void {
    const s = Math.floor(nowUs / 1e6);
    const last = this.rttMinBins[this.rttMinBins.length - 1];
    if (last !== undefined && last.s === s) last.ms = Math.min(last.ms, rttMs);
    else this.rttMinBins.push({ s, ms: rttMs });
    while (this.rttMinBins.length > 0 && this.rttMinBins[0].s <= s - RTT_MIN_WINDOW_S) this.rttMinBins.shift();
  }

  /**
   * Move the current delay toward the target (at most `maxChangeMsPerS`).
   * @param jitterMs the frame jitter estimate (ms, {@link JitterEstimator.jitterMs})
   * @param rttMs the receiver's RTT estimate (ms)
   * @param pathRttMs the smallest per-path RTT (ms, e.g. the clock exchange's):
   *   the steady NACK term's queue test compares `rttMs` with its lowest value
   *   of the last 30 s; without it (undefined), with the lowest `rttMs`. NaN:
   *   no RTT measured yet (`rttMs` is a default), nothing is learned. Learning
   *   a default once held the test off for 30 s wherever the real RTT exceeds
   *   the default by more than `nackSteadyMaxQueueMs` (loss-sweep: default
   *   100 ms, path RTT 200 ms: the term was off until 30 s into every call).
   */
  update(nowUs: number, jitterMs: number, rttMs: number, pathRttMs?: number): void {
    if (!this.enabled) return;
    const j = Number.isFinite(jitterMs) && jitterMs > 0 ? jitterMs : 0;
    const rttOk = Number.isFinite(rttMs) && rttMs > 0;
    const base = pathRttMs === undefined ? (rttOk ? rttMs : undefined) : Number.isFinite(pathRttMs) && pathRttMs > 0 ? pathRttMs : undefined;
    if (base !== undefined) this.learnRtt(nowUs, base);
    const steady = rttOk && this.nackSteady(nowUs) && rttMs <= this.baseRttMs() + this.o.nackSteadyMaxQueueMs;
    const nackOn = (this.o.nackHoldMs > 0 && nowUs - this.lastNackUs <= this.o.nackHoldMs * 1000) || steady;
    const nack = nackOn && rttOk ? rttMs : 0;
    this.targetDelayMs = Math.min(this.o.maxDelayMs, Math.max(this.o.minDelayMs, j + nack + this.o.renderDelayMs)) + this.extraMs;
    const dtS = this.lastUpdateUs === undefined ? 0 : Math.max(0, (nowUs - this.lastUpdateUs) / 1e6);
    this.lastUpdateUs = nowUs;
    const step = this.o.maxChangeMsPerS * dtS;
    const diff = this.targetDelayMs - this.currentDelayMs;
    this.currentDelayMs += Math.max(-step, Math.min(step, diff));
  }

  /**
   * When the frame captured at `captureUs` (sender clock) should go to the
   * decoder (integer µs, receiver clock); -Infinity before the first frame or when
   * playout timing is off (play at once).
   */
  playoutTimeUs(captureUs: number): number {
    if (!this.enabled || this.offsets.length === 0) return -Infinity;
    return Math.ceil(captureUs + this.offsets[0].offsetUs + this.currentDelayMs * 1000);
  }

  /** A frame went to the decoder after its playout time. */
  countLate(): void {
    this.late++;
  }

  stats(): PlayoutStats {
    return { currentDelayMs: Math.round(this.currentDelayMs * 10) / 10, targetDelayMs: Math.round(this.targetDelayMs * 10) / 10, lateFrames: this.late, extraDelayMs: this.extraMs };
  }

  private expire(nowUs: number): void {
    const oldest = nowUs - this.o.offsetWindowMs * 1000;
    // Keep at least the newest sample so a paused stream still has an offset.
    while (this.offsets.length > 1 && this.offsets[0].atUs < oldest) this.offsets.shift();
  }
}
