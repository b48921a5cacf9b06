/**
 * `MultipathCallOptions.relaySelection` and its check; the selection itself
 * is src/call/relay-selection.ts (loaded only when a call uses it).
 */
import type { RelayUcbConfig } from '../sched/relay-ucb.js';

/** `MultipathCallOptions.relaySelection` in full. */
export interface RelaySelectionConfig {
  policy: 'ucb';
  /** Decision slot (ms, default 1000). */
  intervalMs?: number;
  /** Least time on a relay before the path may switch again (ms, default 10_000). */
  minDwellMs?: number;
  /** The relays (indices in `relays`) each path may use; default every relay for every path. */
  relaysOf?: number[][];
  /** Tuning of the bandit (src/sched/relay-ucb.ts; defaults are the paper's). */
  ucb?: Partial<RelayUcbConfig>;
}

export type RelaySelectionOption = 'ucb' | RelaySelectionConfig;

/** The option with its defaults filled in. */
export type ResolvedRelaySelection = Required<Omit<RelaySelectionConfig, 'ucb'>> & { ucb: Partial<RelayUcbConfig> };

/** Resolve and check the option. @throws RangeError naming the bad field. */
export function resolveRelaySelection(o: RelaySelectionOption, numPaths: number, numRelays: number): ResolvedRelaySelection {
  const c: RelaySelectionConfig = o === 'ucb' ? { policy: 'ucb' } : o;
  if (c?.policy !== 'ucb') throw new RangeError(`relaySelection: policy must be 'ucb', got ${JSON.stringify((c as { policy?: unknown })?.policy)}`);
  if (numRelays < 1) throw new RangeError('relaySelection needs relays');
  const intervalMs = c.intervalMs ?? 1000;
  const minDwellMs = c.minDwellMs ?? 10_000;
  if (!(Number.isFinite(intervalMs) && intervalMs >= 50)) throw new RangeError(`relaySelection.intervalMs must be >= 50, got ${intervalMs}`);
  if (!(Number.isFinite(minDwellMs) && minDwellMs >= 0)) throw new RangeError(`relaySelection.minDwellMs must be >= 0, got ${minDwellMs}`);
  const all = Array.from({ length: numRelays }, (_, k) => k);
  const relaysOf = Array.from({ length: numPaths }, (_, p) => c.relaysOf?.[p] ?? all);
  for (const [p, arms] of relaysOf.entries()) {
    if (!Array.isArray(arms) || arms.length === 0 || arms.some((k) => !Number.isInteger(k) || k < 0 || k >= numRelays) || new Set(arms).size !== arms.length)
      throw new RangeError(`relaySelection.relaysOf[${p}] must be distinct relay indices in 0..${numRelays - 1}, got ${JSON.stringify(arms)}`);
  }
  return { policy: 'ucb', intervalMs, minDwellMs, relaysOf, ucb: c.ucb ?? {} };
}
