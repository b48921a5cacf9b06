/**
 * Signalling reconnect policy of {@link import('./multipath-call.js').MultipathCall}:
 * the delays between attempts and the option's validation.
 */
import { CallError, type MultipathCallOptions, type ReconnectPolicy } from './types.js';

/**
 * Delay (ms) before signalling reconnect attempt `attempt` (1-based):
 * 0 for the first, then exponential backoff base x 2^(attempt-2) capped at `maxMs`, with "equal
 * jitter" (half fixed, half uniform: AWS Architecture Blog, "Exponential
 * Backoff And Jitter") so clients dropped together by a server restart do not
 * all come back at once; the first attempt goes at once (like livekit's
 * DefaultReconnectPolicy, whose first retry has no delay).
 * @param random a number in [0, 1) (Math.random()).
 */
export function reconnectDelayMs(attempt: number, baseMs: number, maxMs: number, random: number): number {
  if (attempt <= 1) return 0;
  const d = Math.min(maxMs, baseMs * 2 ** Math.min(30, attempt - 2));
  return Math.round(d / 2 + (d / 2) * Math.min(Math.max(random, 0), 1));
}

/** The policy with its defaults; undefined for `reconnect: false`. @throws CallError 'bad-options'. */
export function resolveReconnectPolicy(p: MultipathCallOptions['reconnect']): Required<ReconnectPolicy> | undefined {
  if (p === false) return undefined;
  const r = { maxAttempts: p?.maxAttempts ?? 10, baseDelayMs: p?.baseDelayMs ?? 500, maxDelayMs: p?.maxDelayMs ?? 10_000 };
  if (!(Number.isInteger(r.maxAttempts) && r.maxAttempts >= 1)) throw CallError.badOptions(`reconnect.maxAttempts must be an integer >= 1, got ${r.maxAttempts}`);
  if (!(r.baseDelayMs > 0 && Number.isFinite(r.baseDelayMs))) throw CallError.badOptions(`reconnect.baseDelayMs must be > 0, got ${r.baseDelayMs}`);
  if (!(r.maxDelayMs >= r.baseDelayMs && Number.isFinite(r.maxDelayMs))) throw CallError.badOptions(`reconnect.maxDelayMs must be finite and >= baseDelayMs, got ${r.maxDelayMs}`);
  return r;
}
