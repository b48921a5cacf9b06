/**
 * The scheduler registry: one name -> factory table used by `SenderEngine`,
 * `MultipathCall`, the simulator and every CLI (`--compare`, `--scheduler`).
 *
 * Adding a scheduler = its own file implementing {@link Scheduler}, one line
 * in {@link BUILTIN_SCHEDULERS}, and its tests; the conformance suite
 * (tests/unit/sched/conformance.test.ts) runs it automatically. An app can
 * add its own at run time with {@link registerScheduler}.
 *
 * Built-ins: Converge (Converge §4) and the baselines Converge §6 compares
 * against (SRTT/minRTT, M-TPUT, M-RTP, round robin, single-path WebRTC).
 */
import type { PathId } from '../core/types.js';
import { MAX_PATHS } from '../core/types.js';
import { Registry } from '../core/registry.js';
import { AggDelivScheduler } from './aggdeliv.js';
import { BlestScheduler } from './blest.js';
import { ConvergeScheduler } from './converge.js';
import { EcfScheduler } from './ecf.js';
import { LolaScheduler } from './lola.js';
import { SchedError } from './errors.js';
import { MinLatencyScheduler } from './min-latency.js';
import { MinRttScheduler } from './minrtt.js';
import { MRtpScheduler } from './mrtp.js';
import { MTputScheduler } from './mtput.js';
import { isValidPathId } from './path-util.js';
import { RoundRobinScheduler } from './roundrobin.js';
import { SinglePathScheduler } from './single.js';
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
   * with; the sender uses it unless its config names one. Default 'gcc'.
   */
  readonly estimator?: string;
  /**
   * Build a fresh instance (one per call and peer: schedulers keep state).
   * @throws SchedError `invalid-config` for bad options.
   */
  create(opts: CreateSchedulerOptions): Scheduler;
}

/** The schedulers this library ships. */
export const BUILTIN_SCHEDULERS = {
  converge: { summary: 'Converge: QoE-driven split with path-specific FEC (Converge §4)', maxProbesPerBatch: 1, create: (o) => new ConvergeScheduler(o.converge ?? {}) },
  minrtt: { summary: 'lowest smoothed RTT first, next path when its window is full (MPTCP default; Converge §6 baseline)', create: () => new MinRttScheduler() },
  mtput: { summary: 'split in proportion to path rates (Converge §6 baseline M-TPUT)', create: () => new MTputScheduler() },
  mrtp: { summary: 'MPRTP-style split by rate and loss (Converge §6 baseline M-RTP)', create: () => new MRtpScheduler() },
  roundrobin: { summary: 'one packet per path in turn, rate-blind (baseline)', rateAware: false, create: () => new RoundRobinScheduler() },
  ecf: { summary: 'ECF earliest completion first: wait for the fast path when that finishes sooner (Lim et al., CoNEXT 2017)', create: () => new EcfScheduler() },
  blest: { summary: 'BLEST blocking estimation: skip the slow path when it would block the fast one (Ferlin et al., IFIP Networking 2016)', create: () => new BlestScheduler() },
  lola: { summary: 'LoLa: delay-budget windows, min-max frame arrival, adaptive probing (LoLa §3.2-3.6)', maxProbesPerBatch: 2 * MAX_PATHS, create: () => new LolaScheduler() },
  aggdeliv: { summary: 'AggDeliv: periodical-window routing probabilities with RTT limiting (AggDeliv §III-B, Eq. 1-3)', create: () => new AggDelivScheduler() },
  // --- overlay (issue 16) ---
  'overlay-ucb': {
    summary: 'overlay: min expected latency SRTT/2 + Q/bw per packet over RTC-BBR paths, frames dropped at 400 ms; relays chosen by discounted UCB (Zhang & Lei §3.1.3 Eq. 4-5, §3.2, §3.3 Eq. 14-15)',
    estimator: 'rtc-bbr',
    create: () => new MinLatencyScheduler(),
  },
  // --- end overlay ---
  single: { summary: 'everything on one path (single-path WebRTC; Converge §6 baseline)', needsSinglePath: true, create: singlePath },
} as const satisfies Record<string, SchedulerEntry>;

/** A built-in scheduler's name (`SchedulerName` in types.ts also takes registered ones). */
export type BuiltinSchedulerName = keyof typeof BUILTIN_SCHEDULERS;

/** Every built-in scheduler name. */
export const SCHEDULER_NAMES: readonly BuiltinSchedulerName[] = Object.freeze(Object.keys(BUILTIN_SCHEDULERS) as BuiltinSchedulerName[]);

const registry = new Registry<SchedulerEntry>('scheduler', BUILTIN_SCHEDULERS, (name, reason) => SchedError.invalidConfig('name', name, reason));

function singlePath(o: CreateSchedulerOptions): Scheduler {
  const id = o.singlePath;
  if (id === undefined || id === null) throw SchedError.missingSinglePath();
  if (!isValidPathId(id)) throw SchedError.invalidPathId(id, MAX_PATHS);
  return new SinglePathScheduler(id);
}

/**
 * Add a scheduler under `name` for every later {@link createScheduler} call
 * (and so for `MultipathCallOptions.scheduler` and the CLIs of this process).
 * @throws SchedError `invalid-config` when `name` is empty, has characters
 *   other than `[a-z0-9-]`, or is already registered.
 */
export function registerScheduler(name: string, entry: SchedulerEntry): void {
  registry.register(name, entry);
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

/** Type guard for user input (CLI flags, URL parameters): a registered name. */
export function isSchedulerName(x: unknown): x is SchedulerName {
  return registry.has(x);
}
