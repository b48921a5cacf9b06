/**
 * Clock offset and RTT from timestamp exchanges, as NTP and RTCP SR/RR do.
 *
 * One exchange has four timestamps (RFC 5905 §8, "on-wire protocol"): t1 the
 * local send time of a packet (local clock), t2 its arrival at the remote and
 * t3 the remote's reply send time (remote clock), t4 the reply's arrival (local
 * clock). Then
 *
 *   RTT    δ = (t4 - t1) - (t3 - t2)
 *   offset θ = ((t2 - t1) + (t3 - t4)) / 2      (remote clock - local clock)
 *
 * θ is exact when both legs take the same time; otherwise its error is half
 * the asymmetry of the two legs, so |error| <= δ / 2 (RFC 5905 §8). As NTP's
 * clock filter (RFC 5905 §10) does, the estimate takes the sample with the
 * smallest RTT among the recent ones (least queueing, so the tightest bound)
 * and smooths the selected offsets with an EWMA. RTT is tracked per path
 * (RFC 6298 §2 SRTT, gain 1/8). In multipath-rtc the exchange is a
 * PathReport (t1 = its `sendTimeUs`) answered by a `ClockEcho` (RFC 3550
 * §6.4.1 LSR/DLSR: `echoUs` = t1, `holdUs` = t3 - t2).
 *
 * State is bounded: `window` samples and one SRTT per path id seen (ids are
 * checked by the caller against MAX_PATHS). Samples with a negative or
 * over-long RTT are counted as rejected, never used. I/O-free: all times are
 * given by the caller (µs).
 */

/** Options of {@link ClockSync}. */
export interface ClockSyncOptions {
  /** Most recent samples the min-RTT selection looks at (default 16). */
  window?: number;
  /** Samples older than this (ms) are not selected (default 30 000: clocks drift by tens of ppm). */
  maxAgeMs?: number;
  /** EWMA gain applied to the selected offset per accepted sample (default 1/4). */
  gain?: number;
  /** Samples with an RTT above this (ms) are rejected (default 10 000). */
  maxRttMs?: number;
}

/** A snapshot of the estimate. */
export interface ClockSyncStats {
  /** Estimated remote clock - local clock (ms); undefined before the first sample. */
  offsetMs: number | undefined;
  /** Half the RTT of the selected sample (ms): a bound on the offset's error; undefined before the first sample. */
  offsetErrorBoundMs: number | undefined;
  /** Accepted samples. */
  samples: number;
  /** Samples rejected (negative RTT, RTT above `maxRttMs`, non-finite input). */
  rejected: number;
}

interface Sample {
  atUs: number;
  rttUs: number;
  offsetUs: number;
}

/** See the module comment. */
export class ClockSync {
  private readonly window: number;
  private readonly maxAgeUs: number;
  private readonly gain: number;
  private readonly maxRttUs: number;
  private readonly ring: Sample[] = [];
  private head = 0;
  private smoothedUs: number | undefined;
  private boundUs: number | undefined;
  private readonly srttUs = new Map<number, number>();
  private accepted = 0;
  private rejectedCount = 0;

  /** @throws RangeError for a non-positive window/maxAgeMs/maxRttMs or a gain outside (0, 1]. */
  constructor(opts: ClockSyncOptions = {}) {
    this.window = opts.window ?? 16;
    this.maxAgeUs = (opts.maxAgeMs ?? 30_000) * 1000;
    this.gain = opts.gain ?? 0.25;
    this.maxRttUs = (opts.maxRttMs ?? 10_000) * 1000;
    if (!Number.isInteger(this.window) || this.window < 1) throw new RangeError(`ClockSync: window ${this.window} not a positive integer`);
    if (!(this.maxAgeUs > 0) || !(this.maxRttUs > 0)) throw new RangeError('ClockSync: maxAgeMs and maxRttMs must be > 0');
    if (!(this.gain > 0 && this.gain <= 1)) throw new RangeError(`ClockSync: gain ${this.gain} not in (0, 1]`);
  }

  /**
   * One exchange (µs). t1, t4 on the local clock; t2, t3 on the remote clock.
   * @param pathId the path it travelled (for the per-path RTT).
   * @returns whether the sample was accepted.
   */
  addExchange(pathId: number, t1: number, t2: number, t3: number, t4: number): boolean {
    const rttUs = t4 - t1 - (t3 - t2);
    const offsetUs = (t2 - t1 + (t3 - t4)) / 2;
    if (!Number.isFinite(rttUs) || !Number.isFinite(offsetUs) || rttUs < 0 || rttUs > this.maxRttUs || t3 < t2) {
      this.rejectedCount++;
      return false;
    }
    this.accepted++;
    const prev = this.srttUs.get(pathId);
    this.srttUs.set(pathId, prev === undefined ? rttUs : prev + (rttUs - prev) / 8);
    const s: Sample = { atUs: t4, rttUs, offsetUs };
    if (this.ring.length < this.window) this.ring.push(s);
    else {
      this.ring[this.head] = s;
      this.head = (this.head + 1) % this.window;
    }
    let best: Sample = s;
    for (const x of this.ring) if (t4 - x.atUs <= this.maxAgeUs && x.rttUs < best.rttUs) best = x;
    this.smoothedUs = this.smoothedUs === undefined ? best.offsetUs : this.smoothedUs + this.gain * (best.offsetUs - this.smoothedUs);
    this.boundUs = best.rttUs / 2;
    return true;
  }

  /** Estimated remote clock - local clock (µs); undefined before the first accepted sample. */
  offsetUs(): number | undefined {
    return this.smoothedUs;
  }

  /** Bound (µs) on the error of {@link offsetUs}: half the RTT of the selected sample; undefined before the first. */
  offsetErrorBoundUs(): number | undefined {
    return this.boundUs;
  }

  /** Smoothed RTT of `pathId` (ms); undefined without a sample on it. */
  rttMs(pathId: number): number | undefined {
    const r = this.srttUs.get(pathId);
    return r === undefined ? undefined : r / 1000;
  }

  /** Smallest per-path smoothed RTT (ms); undefined without any sample. */
  minRttMs(): number | undefined {
    let m = Infinity;
    for (const r of this.srttUs.values()) m = Math.min(m, r);
    return Number.isFinite(m) ? m / 1000 : undefined;
  }

  stats(): ClockSyncStats {
    return {
      offsetMs: this.smoothedUs === undefined ? undefined : this.smoothedUs / 1000,
      offsetErrorBoundMs: this.boundUs === undefined ? undefined : this.boundUs / 1000,
      samples: this.accepted,
      rejected: this.rejectedCount,
    };
  }
}
