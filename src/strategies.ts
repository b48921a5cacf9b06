/**
 * Every strategy the library ships, as opt-in objects (`multipath-rtc/strategies`).
 *
 * A call bundles only what it uses: the defaults (the Converge scheduler,
 * GCC, path-specific FEC, and 'none' FEC) are registered from the start;
 * everything else is imported from here and either passed directly or
 * registered by name:
 *
 * ```ts
 * import { MultipathCall, registerScheduler } from 'multipath-rtc';
 * import { lola, webrtcTableFec } from 'multipath-rtc/strategies';
 * new MultipathCall({ signallingUrl, room, scheduler: lola, fec: webrtcTableFec });
 * // or: registerScheduler(lola); new MultipathCall({ signallingUrl, room, scheduler: 'lola' });
 * ```
 *
 * The simulator, the CLIs, the benchmark pages and the conformance suites
 * call {@link registerAllStrategies} so that every name works there.
 *
 * Adding a scheduler = its own file implementing `Scheduler`, one entry here
 * (and its line in {@link ALL_SCHEDULERS}), its tests.
 */
import { gcc } from './cc/registry.js';
import { type EstimatorOptions, type NamedEstimatorEntry, registerEstimator } from './cc/registry.js';
import { FRACTAL_ESTIMATOR_ENTRY } from './cc/fractal-entry.js';
import { GccLossV2Estimator } from './cc/gcc-lossv2.js';
import { RtcBbrEstimator } from './cc/rtc-bbr.js';
import { MAX_PATHS } from './core/types.js';
import { type NamedFecPolicyEntry, noFec, pathFec, registerFecPolicy } from './fec/factory.js';
import { WebRtcTableFecPolicy, type WebRtcTableFecPolicyOptions } from './fec/webrtc-table-policy.js';
import { AggDelivScheduler } from './sched/aggdeliv.js';
import { BlestScheduler } from './sched/blest.js';
import { EcfScheduler } from './sched/ecf.js';
import { SchedError } from './sched/errors.js';
import { converge, type CreateSchedulerOptions, type NamedSchedulerEntry, registerScheduler } from './sched/factory.js';
import { LolaScheduler } from './sched/lola.js';
import { MinLatencyScheduler } from './sched/min-latency.js';
import { MinRttScheduler } from './sched/minrtt.js';
import { MRtpScheduler } from './sched/mrtp.js';
import { MTputScheduler } from './sched/mtput.js';
import { isValidPathId } from './sched/path-util.js';
import { RoundRobinScheduler } from './sched/roundrobin.js';
import { SinglePathScheduler } from './sched/single.js';

export { converge, gcc, noFec, pathFec };
/** GCC with LossBasedBweV2, and v2 alone, for apps that build their own estimator entry (e.g. with other v2 settings). */
export { GccLossV2Estimator } from './cc/gcc-lossv2.js';
export { DEFAULT_LOSS_BASED_BWE_V2_CONFIG, LossBasedBweV2, type LossBasedBweV2Config, type LossBasedBweV2Stats, type LossV2Packet, type LossV2Result, type LossV2State } from './cc/loss-based-v2.js';

/** Lowest smoothed RTT first (MPTCP's default scheduler; a Converge §6 baseline). */
export const minrtt = {
  name: 'minrtt',
  summary: 'lowest smoothed RTT first, next path when its window is full (MPTCP default; Converge §6 baseline)',
  create: () => new MinRttScheduler(),
} as const satisfies NamedSchedulerEntry;

/** Split in proportion to path rates (Converge §6 baseline M-TPUT). */
export const mtput = { name: 'mtput', summary: 'split in proportion to path rates (Converge §6 baseline M-TPUT)', create: () => new MTputScheduler() } as const satisfies NamedSchedulerEntry;

/** MPRTP-style split by rate and loss (Converge §6 baseline M-RTP). */
export const mrtp = { name: 'mrtp', summary: 'MPRTP-style split by rate and loss (Converge §6 baseline M-RTP)', create: () => new MRtpScheduler() } as const satisfies NamedSchedulerEntry;

/** One packet per path in turn, rate-blind (baseline). */
export const roundrobin = {
  name: 'roundrobin',
  summary: 'one packet per path in turn, rate-blind (baseline)',
  rateAware: false,
  create: () => new RoundRobinScheduler(),
} as const satisfies NamedSchedulerEntry;

/** ECF, earliest completion first (Lim et al., CoNEXT 2017). */
export const ecf = {
  name: 'ecf',
  summary: 'ECF earliest completion first: wait for the fast path when that finishes sooner (Lim et al., CoNEXT 2017)',
  create: () => new EcfScheduler(),
} as const satisfies NamedSchedulerEntry;

/** BLEST blocking estimation (Ferlin et al., IFIP Networking 2016). */
export const blest = {
  name: 'blest',
  summary: 'BLEST blocking estimation: skip the slow path when it would block the fast one (Ferlin et al., IFIP Networking 2016)',
  create: () => new BlestScheduler(),
} as const satisfies NamedSchedulerEntry;

/** LoLa (LoLa §3.2-3.6). */
export const lola = {
  name: 'lola',
  summary: 'LoLa: delay-budget windows, min-max frame arrival, adaptive probing (LoLa §3.2-3.6)',
  maxProbesPerBatch: 2 * MAX_PATHS,
  create: () => new LolaScheduler(),
} as const satisfies NamedSchedulerEntry;

/** AggDeliv (AggDeliv §III-B, Eq. 1-3). */
export const aggdeliv = {
  name: 'aggdeliv',
  summary: 'AggDeliv: periodical-window routing probabilities with RTT limiting (AggDeliv §III-B, Eq. 1-3)',
  create: () => new AggDelivScheduler(),
} as const satisfies NamedSchedulerEntry;

/** FRACTaL per subflow with the MPRTP coupling (Kreith & Drozdy, Multipath Rate Control for Real-Time Media: Alg. 1, Eq. 1). */
export const fractal = FRACTAL_ESTIMATOR_ENTRY;

/** RTC-BBR (Zhang & Lei, overlay path selection, §3.1.1 Alg. 1): BBR with probe-up gain 1.1, probe-down 0.85, a randomized 2-8 RTT cycle. */
export const rtcBbr = {
  name: 'rtc-bbr',
  summary: 'RTC-BBR: BBR with probe-up gain 1.1, probe-down 0.85 and a randomized 2-8 RTT gain cycle (Zhang & Lei, overlay path selection, §3.1.1 Alg. 1)',
  create: (o: EstimatorOptions) => new RtcBbrEstimator({ startBps: o.startBps, maxBps: o.maxBps }),
} as const satisfies NamedEstimatorEntry;

/**
 * GCC with libwebrtc's LossBasedBweV2 as its loss-based bound, as upstream
 * runs it by default (src/cc/gcc-lossv2.ts, src/cc/loss-based-v2.ts). Not our default: in the simulator's cellular suite it
 * froze longer than the classic rule (docs/results.md, stop 42).
 */
export const gccLossV2 = {
  name: 'gcc-lossv2',
  summary: "GCC with libwebrtc's LossBasedBweV2 loss-based bound (goog_cc loss_based_bwe_v2.cc: loss-limited bandwidth by maximum likelihood over candidates)",
  create: (o: EstimatorOptions) => new GccLossV2Estimator({ startBps: o.startBps, maxBps: o.maxBps }),
} as const satisfies NamedEstimatorEntry;

/**
 * Overlay-MAB's packet distribution (issue 16): minimum expected latency
 * per packet over RTC-BBR paths, frames dropped at 400 ms; relays chosen by
 * discounted UCB (src/sched/relay-ucb.ts). Zhang & Lei §3.1.3 Eq. 4-5, §3.2, §3.3 Eq. 14-15.
 */
export const overlayUcb = {
  name: 'overlay-ucb',
  summary: 'overlay: min expected latency SRTT/2 + Q/bw per packet over RTC-BBR paths, frames dropped at 400 ms; relays chosen by discounted UCB (Zhang & Lei §3.1.3 Eq. 4-5, §3.2, §3.3 Eq. 14-15)',
  estimator: rtcBbr,
  create: () => new MinLatencyScheduler(),
} as const satisfies NamedSchedulerEntry;

/**
 * Everything on one path (single-path WebRTC; a Converge §6 baseline).
 * @throws SchedError `missing-single-path` without `opts.singlePath`, `invalid-path-id` outside [0, MAX_PATHS).
 */
export const single = {
  name: 'single',
  summary: 'everything on one path (single-path WebRTC; Converge §6 baseline)',
  needsSinglePath: true,
  create: (o: CreateSchedulerOptions) => {
    const id = o.singlePath;
    if (id === undefined || id === null) throw SchedError.missingSinglePath();
    if (!isValidPathId(id)) throw SchedError.invalidPathId(id, MAX_PATHS);
    return new SinglePathScheduler(id);
  },
} as const satisfies NamedSchedulerEntry;

/** libwebrtc's media_opt_util.cc protection table FEC (loss x rate). */
export const webrtcTableFec = {
  name: 'webrtc-table',
  summary: 'libwebrtc media_opt_util.cc protection table (loss x rate)',
  create: (o?: WebRtcTableFecPolicyOptions) => new WebRtcTableFecPolicy(o),
} as const satisfies NamedFecPolicyEntry;

/** Every scheduler the library ships, in listing order (`--help`, `--compare` defaults). */
export const ALL_SCHEDULERS = [converge, minrtt, mtput, mrtp, roundrobin, ecf, blest, lola, aggdeliv, overlayUcb, single] as const;
/** Every FEC policy the library ships. */
export const ALL_FEC_POLICIES = [pathFec, webrtcTableFec, noFec] as const;
/** Every bandwidth estimator the library ships. */
export const ALL_ESTIMATORS = [gcc, gccLossV2, rtcBbr, fractal] as const;

/** A shipped scheduler's name (`SchedulerName` also takes registered ones). */
export type BuiltinSchedulerName = (typeof ALL_SCHEDULERS)[number]['name'];
/** A shipped FEC policy's name (`FecPolicyName` also takes registered ones). */
export type BuiltinFecPolicyName = (typeof ALL_FEC_POLICIES)[number]['name'];

/** Every shipped scheduler name, in {@link ALL_SCHEDULERS} order. */
export const SCHEDULER_NAMES: readonly BuiltinSchedulerName[] = Object.freeze(ALL_SCHEDULERS.map((e) => e.name));

/**
 * Register every shipped scheduler, FEC policy and estimator by name, so
 * that any of their names works (`scheduler: 'lola'`, `--compare lola`).
 * Idempotent. Pulls all of them into a page's bundle: apps that want a small
 * bundle register (or pass) only the ones they use.
 */
export function registerAllStrategies(): void {
  for (const e of ALL_SCHEDULERS) registerScheduler(e);
  for (const e of ALL_FEC_POLICIES) registerFecPolicy(e);
  for (const e of ALL_ESTIMATORS) registerEstimator(e);
}
