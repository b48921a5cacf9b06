/**
 * The scheduler registry: one name -> factory table used by `SenderEngine`,
 * `MultipathCall`, the simulator and every CLI (`--compare`, `--scheduler`).
 *
 * Only the default, Converge (Converge §4), is registered from the start, so
 * a page that makes a call with the defaults bundles no other scheduler. The
 * others the library ships are opt-in objects in src/strategies.ts
 * (`multipath-rtc/strategies`): pass one as `MultipathCallOptions.scheduler`
 * or register it by name with {@link registerScheduler}; the simulator, the
 * CLIs and the conformance suite register them all (`registerAllStrategies`).
 *
 * Adding a scheduler = its own file implementing {@link Scheduler}, one entry
 * in src/strategies.ts, and its tests; the conformance suite
 * (tests/unit/sched/conformance.test.ts) runs it automatically.
 */
import type { EstimatorSpec } from '../cc/registry.js';
import type { PathId } from '../core/types.js';
import { Registry } from '../core/registry.js';
import { ConvergeScheduler } from './converge.js';
import { SchedError } from './errors.js';
import type { ConvergeConfig, Scheduler, SchedulerName } from './types.js';

export interface CreateSchedulerOptions {
  /** Required by entries with `needsSinglePath` ('single'): the only path used. */
  singlePath?: PathId;
  /** Overrides for 'converge' (ignored by the others). */
  converge?: Partial<ConvergeConfig>;
}

/** One registry entry. */
export interface SchedulerEntry {
  /** One line for `--help` texts and docs: what it does and where it comes from. */
  readonly summary: string;
  /**
   * The scheduler sends on one given path only (`opts.singlePath`); CLIs
   * spell it `NAME:N`. Default false.
   */
  readonly needsSinglePath?: boolean;
  /**
   * The scheduler shifts traffic away from a path whose rate drops (false
   * for rate-blind baselines such as round robin; the conformance suite
   * skips its rate-reaction check for them). Default true.
   */
  readonly rateAware?: boolean;
  /**
   * Most probe duplicates (`Assignment.probe`) one `schedule` call may add
   * (Converge: one per batch; LoLa: a pair per path). Default 0.
   */
  readonly maxProbesPerBatch?: number;
  /**
   * The bandwidth estimator (src/cc/registry.ts) the scheduler is designed
   * with, a registered name or an entry (an entry needs no registration); the
   * sender uses it unless its config names one. Default 'gcc'.
   */
  readonly estimator?: EstimatorSpec;
  /**
   * Build a fresh instance (one per call and peer: schedulers keep state).
   * @throws SchedError `invalid-config` for bad options.
   */
  create(opts: CreateSchedulerOptions): Scheduler;
}

/** A registry entry with its name: what src/strategies.ts exports and {@link registerScheduler} takes alone. */
export interface NamedSchedulerEntry extends SchedulerEntry {
  /** Registry name (`[a-z0-9][a-z0-9-]*`); the scheduler's `Scheduler.name`. */
  readonly name: string;
}

/** Converge (Converge §4): the default scheduler, always registered. */
export const converge = {
  name: 'converge',
  summary: 'Converge: QoE-driven split with path-specific FEC (Converge §4)',
  maxProbesPerBatch: 1,
  create: (o: CreateSchedulerOptions) => new ConvergeScheduler(o.converge ?? {}),
} as const satisfies NamedSchedulerEntry;

/** The schedulers registered from the start (the others: src/strategies.ts). */
export const BUILTIN_SCHEDULERS: Readonly<Record<string, SchedulerEntry>> = { converge };

const registry = new Registry<SchedulerEntry>('scheduler', BUILTIN_SCHEDULERS, (name, reason) => SchedError.invalidConfig('name', name, reason));

/**
 * Add a scheduler for every later {@link createScheduler} call (and so for
 * `MultipathCallOptions.scheduler` given as a name, and the CLIs of this
 * process): `registerScheduler(lola)` with an entry of src/strategies.ts (or
 * any {@link NamedSchedulerEntry}), or `registerScheduler(name, entry)`.
 * Registering the same entry under the same name again is a no-op.
 * @throws SchedError `invalid-config` when the name is empty, has characters
 *   other than `[a-z0-9-]`, or is taken by another entry.
 */
export function registerScheduler(entry: NamedSchedulerEntry): void;
export function registerScheduler(name: string, entry: SchedulerEntry): void;
export function registerScheduler(a: string | NamedSchedulerEntry, entry?: SchedulerEntry): void {
  if (typeof a === 'string') registry.register(a, entry as SchedulerEntry);
  else registry.register(a?.name, a);
}

/** Every registered name (built-ins first, then the app's, in registration order). */
export function schedulerNames(): string[] {
  return registry.names();
}

/** The registry entry of `name`, or undefined. */
export function schedulerEntry(name: string): SchedulerEntry | undefined {
  return registry.get(name);
}

/**
 * @throws SchedError `unknown-scheduler` for a name not registered;
 *   `missing-single-path` when the entry needs a path and `opts.singlePath` is absent;
 *   `invalid-path-id` when `singlePath` is not an integer in [0, MAX_PATHS);
 *   `invalid-config` for bad converge overrides.
 */
export function createScheduler(name: string, opts: CreateSchedulerOptions = {}): Scheduler {
  const entry = registry.get(name);
  if (!entry) throw SchedError.unknownScheduler(name, schedulerNames());
  return entry.create(opts);
}

/** What a scheduler option takes: a registered name, an entry (a factory, one instance per call and peer) or, for one engine, an instance. */
export type SchedulerSpec = SchedulerName | SchedulerEntry | Scheduler;

/**
 * The scheduler `spec` stands for: the instance itself, a fresh one from an
 * entry, or {@link createScheduler} of a name.
 * @throws SchedError as {@link createScheduler}, and `invalid-config` for a value that is none of these.
 */
export function resolveScheduler(spec: SchedulerSpec, opts: CreateSchedulerOptions = {}): Scheduler {
  if (typeof spec === 'string') return createScheduler(spec, opts);
  if (spec && typeof (spec as SchedulerEntry).create === 'function') return (spec as SchedulerEntry).create(opts);
  if (spec && typeof (spec as Scheduler).schedule === 'function') return spec as Scheduler;
  throw SchedError.invalidConfig('scheduler', spec, 'a registered name, a scheduler entry (create) or a Scheduler');
}

/** Type guard for user input (CLI flags, URL parameters): a registered name. */
export function isSchedulerName(x: unknown): x is SchedulerName {
  return registry.has(x);
}
