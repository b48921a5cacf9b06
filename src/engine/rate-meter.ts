/**
 * Bytes-over-a-window rate meter (bps). Bounded: keeps one bucket per 10 ms
 * of the window in a ring, so memory does not grow with the packet rate.
 */
const BUCKET_US = 10_000;

export class RateMeter {
  private readonly buckets: Float64Array;
  private readonly stamps: Float64Array;

  /**
   * @param windowUs averaging window (µs), e.g. 1_000_000 for 1 s.
   * @param originUs time (µs, at most the first `add`) the 10 ms buckets are aligned to: a
   *   rate read some time after the origin does not depend on the clock's epoch (a sender
   *   whose clock is offset makes the same decisions).
   * @throws RangeError when `windowUs` is not > 0.
   */
  constructor(
    private readonly windowUs: number,
    private readonly originUs = 0,
  ) {
    if (!(windowUs > 0)) throw new RangeError('RateMeter: window must be > 0 µs');
    const n = Math.ceil(windowUs / BUCKET_US);
    this.buckets = new Float64Array(n);
    this.stamps = new Float64Array(n).fill(-1);
  }

  /**
   * Count `bytes` at time `nowUs`. A time older than the bucket its ring slot
   * already holds (an old arrival time, e.g. one a receiver report lists
   * again) is outside every window still read: dropped, so it never wipes
   * that newer bucket.
   */
  add(nowUs: number, bytes: number): void {
    const slot = Math.floor((nowUs - this.originUs) / BUCKET_US);
    const i = slot % this.buckets.length;
    if (this.stamps[i] > slot) return;
    if (this.stamps[i] !== slot) {
      this.stamps[i] = slot;
      this.buckets[i] = 0;
    }
    this.buckets[i] += bytes;
  }

  /** Rate over the last window ending at `nowUs` (bps). */
  rateBps(nowUs: number): number {
    const slot = Math.floor((nowUs - this.originUs) / BUCKET_US);
    const oldest = slot - this.buckets.length + 1;
    let sum = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      const s = this.stamps[i];
      if (s >= oldest && s <= slot) sum += this.buckets[i];
    }
    return (sum * 8 * 1e6) / this.windowUs;
  }
}
