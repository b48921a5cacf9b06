/**
 * The bandwidth estimator registry: one name -> factory table for the
 * per-path congestion controllers `SenderEngine` builds (one per path).
 * Adding an estimator = its own file implementing {@link BandwidthEstimator},
 * one line in {@link BUILTIN_ESTIMATORS}, its tests; the conformance suite
 * (tests/unit/cc/conformance.test.ts) runs every registered one. Probing is
 * a capability an estimator declares (`BandwidthEstimator.createProber`),
 * never inferred from its class.
 */
import { Registry } from '../core/registry.js';
import { GccEstimator } from './gcc.js';
import type { BandwidthEstimator } from './types.js';

/** What the sender gives every estimator it builds (rates in bps). */
export interface EstimatorOptions {
  /** Initial target rate (bps). */
  startBps: number;
  /** Ceiling of the target (bps). */
  maxBps: number;
  /**
   * State shared by the estimators of one sender (one map per SenderEngine,
   * the same for all its paths), keyed by estimator name: coupled estimators
   * keep their coordinator in it (FRACTaL's MRCM couples the subflows).
   * Absent: every estimator stands alone.
   */
  group?: Map<string, unknown>;
}

/** One registry entry. */
export interface EstimatorEntry {
  /** One line for `--help` texts and docs. */
  readonly summary: string;
  /** A fresh estimator for one path. */
  create(opts: EstimatorOptions): BandwidthEstimator;
}

/** A registry entry with its name: what src/strategies.ts exports and {@link registerEstimator} takes alone. */
export interface NamedEstimatorEntry extends EstimatorEntry {
  readonly name: string;
}

/** GCC, the default estimator, always registered. */
export const gcc = {
  name: 'gcc',
  summary: 'Google Congestion Control: trendline delay-based + loss-based AIMD, probing (draft-ietf-rmcat-gcc-02; libwebrtc goog_cc)',
  create: (o: EstimatorOptions) => new GccEstimator({ startBps: o.startBps, maxBps: o.maxBps }),
} as const satisfies NamedEstimatorEntry;

/** The estimators registered from the start (the others, if any: src/strategies.ts). */
export const BUILTIN_ESTIMATORS: Readonly<Record<string, EstimatorEntry>> = { gcc };

/** A shipped estimator's name. */
export type BuiltinEstimatorName = 'gcc';
/** An estimator's registry name: a built-in one or one added with {@link registerEstimator}. */
export type EstimatorName = BuiltinEstimatorName | (string & {});

/** Thrown for an unknown name, or a bad or taken name at registration. */
export class EstimatorRegistryError extends Error {
  constructor(
    readonly code: 'unknown-estimator' | 'invalid-name',
    message: string,
  ) {
    super(message);
    this.name = 'EstimatorRegistryError';
  }
}

const registry = new Registry<EstimatorEntry>(
  'bandwidth estimator',
  BUILTIN_ESTIMATORS,
  (name, reason) => new EstimatorRegistryError('invalid-name', `bad estimator name ${JSON.stringify(name)}: ${reason}`),
);

/**
 * Add an estimator for every later {@link createEstimator} call:
 * `registerEstimator(entry)` with a {@link NamedEstimatorEntry}, or
 * `registerEstimator(name, entry)`. The same entry again is a no-op.
 * @throws EstimatorRegistryError `invalid-name` when the name is not `[a-z0-9-]+` or taken by another entry.
 */
export function registerEstimator(entry: NamedEstimatorEntry): void;
export function registerEstimator(name: string, entry: EstimatorEntry): void;
export function registerEstimator(a: string | NamedEstimatorEntry, entry?: EstimatorEntry): void {
  if (typeof a === 'string') registry.register(a, entry as EstimatorEntry);
  else registry.register(a?.name, a);
}

/** Every registered name (built-ins first). */
export function estimatorNames(): string[] {
  return registry.names();
}

/** Type guard for user input: a registered name. */
export function isEstimatorName(x: unknown): x is EstimatorName {
  return registry.has(x);
}

/**
 * A fresh estimator for one path.
 * @throws EstimatorRegistryError `unknown-estimator` for a name not registered.
 */
export function createEstimator(name: EstimatorName, opts: EstimatorOptions): BandwidthEstimator {
  const entry = registry.get(name);
  if (!entry) throw new EstimatorRegistryError('unknown-estimator', `unknown bandwidth estimator ${JSON.stringify(name)}; known: ${registry.names().join(', ')}`);
  return entry.create(opts);
}

/** What an estimator option takes: a registered name or an entry (a factory: one estimator per path). */
export type EstimatorSpec = EstimatorName | EstimatorEntry;

/**
 * A fresh estimator for one path from a name or an entry.
 * @throws EstimatorRegistryError `unknown-estimator` for a name not registered, `invalid-name` for a value that is neither.
 */
export function resolveEstimator(spec: EstimatorSpec, opts: EstimatorOptions): BandwidthEstimator {
  if (typeof spec === 'string') return createEstimator(spec, opts);
  if (spec && typeof spec.create === 'function') return spec.create(opts);
  throw new EstimatorRegistryError('invalid-name', `estimator must be a registered name or an entry with create(), got ${String(spec)}`);
}
