/**
 * Token buckets of the signalling server's rate limits: per connection, per
 * client, and per client for new connections (that last one outlives the
 * client's connections, so its table is bounded). Times in ms
 * (`performance.now()`).
 */
import type { RateLimit } from './server-options.js';

/** A token bucket's state. */
export interface Bucket {
  tokens: number;
  lastRefillMs: number;
}

/** A full bucket for `limit`, stamped `nowMs`. */
export function fullBucket(limit: RateLimit, nowMs: number): Bucket {
  return { tokens: limit.burst, lastRefillMs: nowMs };
}

/** Add the tokens earned since the last refill (capped at `burst`). */
export function refill(b: Bucket, limit: RateLimit, now: number): void {
  b.tokens = Math.min(limit.burst, b.tokens + ((now - b.lastRefillMs) / 1000) * limit.perSecond);
  b.lastRefillMs = now;
}

/** Connect-rate buckets kept for at most this many clients; full (idle) buckets are pruned first. */
export const MAX_CONNECT_BUCKETS = 10_000;

/** Per-client new-connection buckets (bounded by {@link MAX_CONNECT_BUCKETS}). */
export class ConnectRateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly limit: RateLimit) {}

  /** Take a new-connection token for `key`; false when the client reconnects too fast. */
  take(key: string, now: number): boolean {
    const connectRate = this.limit;
    const connectBuckets = this.buckets;
    let b = connectBuckets.get(key);
    if (b === undefined) {
      if (connectBuckets.size >= MAX_CONNECT_BUCKETS) {
        for (const [k, o] of connectBuckets) {
          refill(o, connectRate, now);
          if (o.tokens >= connectRate.burst) connectBuckets.delete(k);
        }
        // Still full: forget the oldest entries (insertion order) rather than grow.
        for (const k of connectBuckets.keys()) {
          if (connectBuckets.size < MAX_CONNECT_BUCKETS) break;
          connectBuckets.delete(k);
        }
      }
      b = fullBucket(connectRate, now);
      connectBuckets.set(key, b);
    }
    refill(b, connectRate, now);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
}
