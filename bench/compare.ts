/**
 * The `--compare` list every benchmark takes (simulator `npm run bench`,
 * browser `npm run bench:browser`, `tools/compare-calls.ts`): which
 * configurations to run side by side. Entries, comma-separated:
 *
 *   converge | minrtt | mtput | mrtp | roundrobin   our engine with that scheduler (any name
 *                                                   in the scheduler registry, src/sched/factory.ts)
 *   single:N                                        our engine on path N only (registry entries
 *                                                   with needsSinglePath take `:N`)
 *   converge-nofb                                   converge with its QoE feedback dropped (simulator only)
 *   fractal                                         the MPRTP paper's whole sender: the
 *                                                   `fractal` estimator (FRACTaL per subflow, Alg. 1 coupled
 *                                                   ramp-up, Eq. 1 transient rates) with the paper's own
 *                                                   packet scheduler, Alg. 2 = our `mrtp` scheduler (largest
 *                                                   deficit of a path's rate over what it was sent; the
 *                                                   estimator hands it SR_transient as the path rate)
 *   SCHED+EST (e.g. converge+fractal)               any scheduler above with any registered estimator
 *                                                   (src/cc/registry.ts) instead of GCC
 *   single:N+EST (e.g. single:0+gcc-lossv2)         the same for a single-path entry
 *   other estimator names                           converge's scheduler with that estimator
 *   native-webrtc:N                                 plain Chromium WebRTC over path N only (browser only)
 *
 * An optional `@fec` suffix pins our FEC policy for that entry
 * (`converge@none`, `minrtt@webrtc-table`); otherwise the caller's default
 * applies (the browser bench's `--fec`, each of the simulator's `--fec` list).
 */
import { MAX_PATHS } from '../src/core/types.js';
import type { FecPolicyName } from '../src/fec/types.js';
import { fecPolicyNames, isFecPolicyName } from '../src/fec/factory.js';
import { type EstimatorName, estimatorNames } from '../src/cc/registry.js';
import { schedulerEntry, schedulerNames } from '../src/sched/factory.js';
import type { SchedulerName } from '../src/sched/types.js';
import { UsageError } from '../tools/cli.js';
import { registerAllStrategies } from '../src/strategies.js';

// Every shipped strategy by name (the library registers only the defaults).
registerAllStrategies();

/** One configuration of a `--compare` list; `name` is the entry as written (the results' label). */
export type CompareEntry =
  | {
      name: string;
      kind: 'multipath';
      scheduler: SchedulerName;
      singlePath?: number;
      /** The `@fec` suffix, else the caller's `defaultFec` (undefined when neither). */
      fec?: FecPolicyName;
      /** false for `converge-nofb`: the receiver's QoE feedback is dropped. */
      qoeFeedback?: false;
      /** An estimator entry (`fractal`): the per-path bandwidth estimator; absent = the engine's default (gcc). */
      estimator?: EstimatorName;
    }
  | { name: string; kind: 'native'; path: number };

/** The registered schedulers a `--compare` entry may name as is (the others take a path: `single:N`). */
export function multipathSchedulers(): string[] {
  return schedulerNames().filter((n) => !schedulerEntry(n)?.needsSinglePath);
}

/** The registered schedulers that run on one path, written `NAME:N`. */
export function singlePathSchedulers(): string[] {
  return schedulerNames().filter((n) => schedulerEntry(n)?.needsSinglePath === true);
}

/**
 * The scheduler a bare estimator entry runs with: the paper's own where the
 * estimator comes from a paper that defines one (MPRTP Alg. 2 = `mrtp`),
 * else converge.
 */
export const ESTIMATOR_SCHEDULER: Readonly<Record<string, SchedulerName>> = { fractal: 'mrtp' };

/** The registered estimators a `--compare` entry may name as is: all but the default gcc and scheduler names. */
export function estimatorEntries(): string[] {
  const sched = new Set(schedulerNames());
  return estimatorNames().filter((n) => n !== 'gcc' && !sched.has(n));
}

/** `--help` text of the entries our engine runs: `converge|minrtt|...[@fec], single:N[@fec]`. */
export function compareEntriesHelp(): string {
  return `${multipathSchedulers().join('|')}[@fec], ${singlePathSchedulers()
    .map((n) => `${n}:N[@fec]`)
    .join(', ')}`;
}

export interface CompareOptions {
  /** Paths of the scenario: `single:N` / `native-webrtc:N` need N < numPaths (default MAX_PATHS). */
  numPaths?: number;
  /** FEC policy of the entries without `@fec` (default: leave `fec` unset). */
  defaultFec?: string;
  /** Accept `native-webrtc:N` (the browser benchmark). */
  native?: boolean;
  /** Accept `converge-nofb` (the simulator, which can drop feedback on the link). */
  noFeedback?: boolean;
  /** Accept estimator entries (`fractal`: converge + that estimator) and `SCHED+EST`, `single:N+EST`. */
  estimators?: boolean;
}

/**
 * Parse a comma-separated `--compare` list.
 * @throws UsageError naming the bad entry (unknown configuration, one this benchmark
 *   cannot run, unknown FEC policy, bad or out-of-range path index, an entry
 *   given twice, an empty list).
 */
export function parseCompare(list: string, opts: CompareOptions = {}): CompareEntry[] {
  const numPaths = opts.numPaths ?? MAX_PATHS;
  if (opts.defaultFec !== undefined && !isFec(opts.defaultFec)) throw new UsageError(`--fec: FEC policy must be one of ${fecPolicyNames().join(', ')}, got ${opts.defaultFec}`);
  const known = [
    ...multipathSchedulers(),
    ...singlePathSchedulers().map((n) => `${n}:N`),
    ...(opts.noFeedback ? ['converge-nofb'] : []),
    ...(opts.estimators ? [...estimatorEntries(), 'SCHED+EST', ...singlePathSchedulers().map((n) => `${n}:N+EST`)] : []),
    ...(opts.native ? ['native-webrtc:N'] : []),
  ];
  const out: CompareEntry[] = [];
  const names = new Set<string>();
  const pathIndex = (s: string, entry: string): number => {
    const n = Number(s);
    if (!/^\d+$/.test(s) || n >= numPaths) throw new UsageError(`--compare ${entry}: path must be 0..${numPaths - 1}`);
    return n;
  };
  for (const raw of list.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    if (names.has(entry)) throw new UsageError(`--compare: ${entry} given twice`);
    names.add(entry);
    const [base, fecPart] = entry.split('@');
    if (fecPart !== undefined && !isFec(fecPart)) throw new UsageError(`--compare ${entry}: FEC policy must be one of ${fecPolicyNames().join(', ')}`);
    const fec = (fecPart ?? opts.defaultFec) as FecPolicyName | undefined;
    const withFec = fec !== undefined ? { fec } : {};
    const [kind, arg] = base.split(':');
    if (kind === 'native-webrtc' && opts.native) {
      if (fecPart !== undefined) throw new UsageError(`--compare ${entry}: native-webrtc takes no @fec`);
      if (arg === undefined) throw new UsageError(`--compare ${entry}: say which path, e.g. native-webrtc:0`);
      out.push({ name: entry, kind: 'native', path: pathIndex(arg, entry) });
    } else if (singlePathSchedulers().includes(kind)) {
      if (arg === undefined) throw new UsageError(`--compare ${entry}: say which path, e.g. ${kind}:0`);
      const [pathArg, est, extra] = arg.split('+');
      if (extra !== undefined) throw new UsageError(`--compare ${entry}: one +estimator at most`);
      if (est !== undefined && !(opts.estimators && estimatorNames().includes(est))) {
        throw new UsageError(`--compare ${entry}: ${opts.estimators ? `unknown estimator ${JSON.stringify(est)} (use ${estimatorNames().join(', ')})` : 'this benchmark takes no +estimator'}`);
      }
      out.push({ name: entry, kind: 'multipath', scheduler: kind, singlePath: pathIndex(pathArg, entry), ...withFec, ...(est !== undefined ? { estimator: est } : {}) });
    } else if (kind === 'converge-nofb' && opts.noFeedback && arg === undefined) {
      out.push({ name: entry, kind: 'multipath', scheduler: 'converge', ...withFec, qoeFeedback: false });
    } else if (multipathSchedulers().includes(kind) && arg === undefined) {
      out.push({ name: entry, kind: 'multipath', scheduler: kind, ...withFec });
    } else if (opts.estimators && estimatorEntries().includes(kind) && arg === undefined) {
      out.push({ name: entry, kind: 'multipath', scheduler: ESTIMATOR_SCHEDULER[kind] ?? 'converge', estimator: kind, ...withFec });
    } else if (opts.estimators && kind.includes('+') && arg === undefined) {
      const [sched, est] = kind.split('+');
      if (!multipathSchedulers().includes(sched)) throw new UsageError(`--compare ${entry}: unknown multipath scheduler ${JSON.stringify(sched)} (use ${multipathSchedulers().join(', ')})`);
      if (!estimatorNames().includes(est)) throw new UsageError(`--compare ${entry}: unknown estimator ${JSON.stringify(est)} (use ${estimatorNames().join(', ')})`);
      out.push({ name: entry, kind: 'multipath', scheduler: sched, estimator: est, ...withFec });
    } else {
      throw new UsageError(`--compare: unknown configuration ${JSON.stringify(entry)} (use ${known.join(', ')}, optionally with @fec)`);
    }
  }
  if (out.length === 0) throw new UsageError('--compare: empty list');
  return out;
}

function isFec(s: string): s is FecPolicyName {
  return isFecPolicyName(s);
}
