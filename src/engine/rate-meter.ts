/**
 * Bytes-over-a-window rate meter (bps). Bounded: keeps one bucket per 10 ms
 * of the window in a ring, so memory does not grow with the packet rate.
 */
export class RateMeter {
  private readonly bucketUs: number;
  private readonly buckets: Float64Array;
  private readonly stamps: Float64Array;

  /** @param windowUs averaging window (µs), e.g. 1_000_000 for 1 s. */
  constructor(
    private readonly windowUs: number,
    bucketUs = 10_000,
  ) {
    if (!(windowUs > 0) || !(bucketUs > 0)) throw new RangeError('RateMeter: window and bucket must be > 0 µs');
    this.bucketUs = bucketUs;
    const n = Math.max(1, Math.ceil(windowUs / bucketUs));
    this.buckets = new Float64Array(n);
    this.stamps = new Float64Array(n).fill(-1);
  }

  /** Count `bytes` at time `nowUs`. */
  add(nowUs: number, bytes: number): void {
    const slot = Math.floor(nowUs / this.bucketUs);
    const i = slot % this.buckets.length;
    if (this.stamps[i] !== slot) {
      this.stamps[i] = slot;
      this.buckets[i] = 0;
    }
    this.buckets[i] += bytes;
  }

  /** Rate over the last window ending at `nowUs` (bps). */
  rateBps(nowUs: number): number {
    const slot = Math.floor(nowUs / this.bucketUs);
    const oldest = slot - this.buckets.length + 1;
    let sum = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      const s = this.stamps[i];
      if (s >= oldest && s <= slot) sum += this.buckets[i];
    }
    return (sum * 8 * 1e6) / this.windowUs;
  }
}
