/**
 * Time source injected into every I/O-free component (cc, sched, fec, feedback,
 * engine). The browser passes {@link monotonicClock}; tests and the simulator
 * pass a {@link ManualClock}. Nothing in the core reads wall-clock time itself.
 */
export interface Clock {
  /** Monotonic time in microseconds (µs). Never decreases. */
  nowUs(): number;
}

/** A clock that only moves when told to: for unit tests and the simulator. */
export class ManualClock implements Clock {
  private t: number;

  /** @param startUs initial time in µs (default 0). */
  constructor(startUs = 0) {
    this.t = startUs;
  }

  nowUs(): number {
    return this.t;
  }

  /** Advance by `us` microseconds. @throws RangeError if `us` is negative or not finite. */
  advanceUs(us: number): void {
    if (!Number.isFinite(us) || us < 0) throw new RangeError(`ManualClock: cannot advance by ${us} µs`);
    this.t += us;
  }

  /** Advance by `ms` milliseconds. */
  advanceMs(ms: number): void {
    this.advanceUs(ms * 1000);
  }

  /** Jump to an absolute time in µs. @throws RangeError when it would go backwards. */
  setUs(us: number): void {
    if (!Number.isFinite(us) || us < this.t) throw new RangeError(`ManualClock: cannot go back from ${this.t} to ${us} µs`);
    this.t = us;
  }
}

/** `performance.now()`-based clock for the browser and Node (µs, monotonic). */
export const monotonicClock: Clock = {
  nowUs: () => Math.round(performance.now() * 1000),
};

/**
 * A view of `clock` in whole microseconds: the wire format carries integer µs,
 * so the engines read time through this (a fractional clock would otherwise
 * produce unencodable timestamps).
 */
export function integerClock(clock: Clock): Clock {
  return { nowUs: () => Math.floor(clock.nowUs()) };
}
