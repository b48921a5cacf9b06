/**
 * Build a {@link Scheduler} by name, for the engine, the simulator and the
 * benchmarks (Converge §6 compares converge with SRTT/minRTT, M-TPUT, M-RTP
 * and single-path WebRTC).
 */
import type { PathId } from '../core/types.js';
import { MAX_PATHS } from '../core/types.js';
import { ConvergeScheduler } from './converge.js';
import { SchedError } from './errors.js';
import { MinRttScheduler } from './minrtt.js';
import { MRtpScheduler } from './mrtp.js';
import { MTputScheduler } from './mtput.js';
import { isValidPathId } from './path-util.js';
import { RoundRobinScheduler } from './roundrobin.js';
import { SinglePathScheduler } from './single.js';
import type { ConvergeConfig, Scheduler, SchedulerName } from './types.js';

/** Every scheduler name `createScheduler` accepts. */
export const SCHEDULER_NAMES: readonly SchedulerName[] = Object.freeze(['converge', 'minrtt', 'mtput', 'mrtp', 'roundrobin', 'single'] as const);

export interface CreateSchedulerOptions {
  /** Required for 'single': the only path used. */
  singlePath?: PathId;
  /** Overrides for 'converge' (ignored by the others). */
  converge?: Partial<ConvergeConfig>;
}

/**
 * @throws SchedError `unknown-scheduler` for a name not in {@link SCHEDULER_NAMES};
 *   `missing-single-path` when name is 'single' and `opts.singlePath` is absent;
 *   `invalid-path-id` when `singlePath` is not an integer in [0, MAX_PATHS);
 *   `invalid-config` for bad converge overrides.
 */
export function createScheduler(name: SchedulerName, opts: CreateSchedulerOptions = {}): Scheduler {
  switch (name) {
    case 'converge':
      return new ConvergeScheduler(opts.converge ?? {});
    case 'minrtt':
      return new MinRttScheduler();
    case 'mtput':
      return new MTputScheduler();
    case 'mrtp':
      return new MRtpScheduler();
    case 'roundrobin':
      return new RoundRobinScheduler();
    case 'single': {
      const id = opts?.singlePath;
      if (id === undefined || id === null) throw SchedError.missingSinglePath();
      if (!isValidPathId(id)) throw SchedError.invalidPathId(id, MAX_PATHS);
      return new SinglePathScheduler(id);
    }
    default:
      throw SchedError.unknownScheduler(name, SCHEDULER_NAMES);
  }
}

/** Type guard for user input (CLI flags, URL parameters). */
export function isSchedulerName(x: unknown): x is SchedulerName {
  return typeof x === 'string' && (SCHEDULER_NAMES as readonly string[]).includes(x);
}
