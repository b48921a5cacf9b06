/**
 * `npm run bench -- --scenario FILE.json|NAME [--compare LIST] [--fec LIST] [--streams 1-3]
 *                   [--seeds N] [--first-seed K] [--duration S] [--variants N] [--half tune|check] [--only NAME,...] [--rate-scale K] [--degradation PREF] [--datachannel sctp|sctp+rtp|ideal] [--stall K=V,...] [--clock-skew MS] [--playout K=V,...] [--nack K=V,...] [--temporal-layers 1-3] [--converge K=V,...] [--fractal K=V,...] [--sender K=V,...] [--receiver K=V,...] [--audio on|off] [--explain-freezes] [--path-trace] [--jobs N] [--out DIR]`
 *
 * Runs the simulator (sim/simulator.ts) for every scenario variant x
 * configuration x FEC policy x seed and writes:
 * - DIR/results.json: one entry per run (report.json metric names, plus
 *   `goodputBps` and `fec {overheadPct, utilizationPct}`); `perSecond` is kept
 *   for the first seed of each configuration only (size);
 * - DIR/summary.md: per configuration the mean over seeds of frames dropped,
 *   freezes, fps, p95 latency, goodput, FEC overhead/utilization, keyframe
 *   requests (Converge Tables 1, 3, 4 style), the loss-sweep FEC table, and
 *   the issue's targets checked for the named scenarios;
 * - DIR/report.html: uPlot charts (per-path capacity vs sending rate, fps,
 *   IFD/FCD, latency CDFs).
 *
 * Configurations (`--compare`, default all): converge, converge-nofb
 * (QoE feedback dropped), minrtt, mtput, mrtp, roundrobin, single:N; also
 * `fractal` (the MPRTP paper's sender: mrtp scheduler + fractal estimator) and
 * SCHED+EST pairs (e.g. converge+fractal), not in the default list.
 * `--fec` (default `path`; for loss-sweep `path,webrtc-table,none`).
 * `--variants N` runs only the first N variants (e.g. wifi-cellular pairs).
 * `--only NAME[,NAME]` runs only the variants with those labels (e.g.
 * `--only wc:21_2,mm:tmobile+att`; an unknown name is an error).
 * `--seeds N` runs seeds 1..N; `--first-seed K` starts at K instead (seeds
 * K..K+N-1: tune on `--seeds 3`, check on the held-out `--first-seed 4 --seeds 3`).
 * `--rate-scale K` multiplies both links' capacities of every path by K (> 0;
 * sim/net/scenario.ts LinkSpec.rateScale): the same traces as a slower or faster
 * network, e.g. `--scenario cellular --rate-scale 0.15` for UMTS/EVDO-like
 * rates (a check that a change does not only fit the suite's rates).
 * `--half tune|check` runs only that half of a split suite (`cellular`, see
 * sim/scenarios.ts cellularHalf); `cellular` compares converge with
 * single:0 and single:1 by default. `--duration S` caps every run at S
 * simulated seconds (shorter iterations). `--degradation PREF` sets the
 * encoder model's degradation preference (src/adapt; default its default).
 * `--temporal-layers 1|2|3` sets the encoder model's temporal layers (default
 * the library's, DEFAULT_TEMPORAL_LAYERS; 1 = none). `--converge K=V,...`
 * overrides ConvergeConfig fields (e.g. `baseLayerFastPath=false`), `--fractal K=V,...`
 * FractalConfig fields of every FRACTaL sender of the run (`distortionMarginMs=15`, `distortionMarginScales=true`, `splitStart=true`, `coupledIncrease=off|share|lia`, `coupledIncreaseMaxLoss=0`, `fairShare=true|false`, `fairShareMarginMs=15`; SimOptions.fractal),
 * `--sender K=V,...` SenderEngine fields: frame dropping (e.g. `upperLayerDropFactor=0.5`)
 * and fault handling (`pathHysteresis=false` turns the default hysteresis off, `pathHysteresis.promoteRelative=true` promotes a demoted path relative to the usable paths' loss, `fastFailover=false` the default fast failover off, `outageRestore=total|any|off`,
 * `fallbackEstablishMs=1000`, `probation=true`, `blackholeKeyframe=false`, `pushbackQueueMs=100` the congestion-window pushback's accepted queue instead of libwebrtc's 350 ms), and the FEC code (`fecCode=xor`, src/fec/codes.ts); `--receiver K=V,...` the media
 * receiver's ReceiverEngine fields (`reportCopies=true`).
 * `--clock-skew MS` gives the sender a clock MS ahead of the receiver's (any
 * sign; SimOptions.clockSkewMs): latency then rests on the receiver's clock
 * offset estimate, reported in each result's `clock`.
 * `--datachannel sctp|sctp+rtp|ideal` picks the datachannel model (sim/simulator.ts
 * SimOptions.datachannel; default ideal; 'sctp+rtp' adds an RTP carrier per
 * path used while the datachannel is stalled). `--stall K=V,...` sets the stall
 * fallback's options with 'sctp+rtp' (src/transport/stall-fallback.ts:
 * `stallMs`, `stallScale`, `backlogBytes`, `progressBytes`, `ceilingQueueMs`,
 * `minCeilingQueueBytes`, `burstMs`, `minCeilingBps`, `drainProgresses`; `reverseGate=true` counts a stall
 * only while the path's down link is silent; `keyframeOnSwitch=false` turns off the key
 * frame the simulator asks for on each switch to the carrier). `--playout K=V,...` sets the
 * receiver's playout timing (src/feedback/playout.ts PlayoutOptions, e.g.
 * `maxDelayMs=0` = decode at once; default the engine's). `--nack K=V,...`
 * the receiver's NACK timing (ReceiverEngineConfig.nack: `reorderWindowMs`,
 * `maxReorderWindowMs`, `maxRetries`, `maxNackAgeMs`).
 * Overlay scenarios: `--relay-ucb K=V,...` overrides the overlay-ucb relay
 * selector (src/sched/relay-ucb.ts RelayUcbConfig: `alpha`, `observedWindowMs`,
 * `explorationScale`, `switchMargin`); `--relay-probe off|K=V,...` the ucb
 * policy's probe-based exploration (sim/overlay.ts RelayProbeConfig:
 * `packets`, `bytes`, `offsetMs`, `current`; `off` = explore by moving the
 * media, the paper's; default on); `--relay-handover break|make-before-break` how a relay
 * switch moves a path (sim/overlay.ts; default the scenario's, `break`).
 * `--audio on|off` (default on): an audio source beside the video (SimOptions.audio;
 * 20 ms frames of 70-110 bytes); summary.md gets an audio table, results.json `audio`.
 * `--explain-freezes`: attribute every freeze of stream 0 to a cause
 * (sim/freeze-explain.ts, SimOptions.explainFreezes): results.json gets
 * `freezeCauses` per run, summary.md a "Freeze causes" table per
 * configuration and the longest freezes of each multipath configuration.
 * `--path-trace`: stream 0's per-path trace every 100 ms (sim/path-trace.ts, SimOptions.pathTrace):
 * results.json gets `pathTrace` per run (estimator state, one-way delay, jitter, seq gaps, feedback
 * gaps, and the link's capacity and queue as ground truth), for bench/sim/onset-study.py.
 * `soak` samples the heap every 60 simulated seconds (SimOptions.heapSampleS)
 * and compares converge only by default.
 * Default DIR: out/bench/<scenario>. Runs in parallel worker threads (`--jobs`,
 * default the number of CPUs); results do not depend on it.
 */
import { fecCodeNames } from '../../src/fec/codes.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { DegradationPreference } from '../../src/adapt/index.js';
import type { PlayoutOptions } from '../../src/feedback/playout.js';
import { fecPolicyNames, isFecPolicyName } from '../../src/fec/factory.js';
import type { FecPolicyName } from '../../src/fec/types.js';
import { DEFAULT_CONVERGE_CONFIG } from '../../src/sched/converge.js';
import type { ConvergeConfig } from '../../src/sched/types.js';
import { type CliValues, UsageError, choiceOption, intOption, numberOption, runCli } from '../../tools/cli.js';
import { type CompareEntry, compareEntriesHelp, estimatorEntries, multipathSchedulers, parseCompare } from '../compare.js';
import { renderHtml } from './report-html.js';
import { type BenchEntry, renderSummary } from './report.js';
import { REPO_ROOT, SOAK, type SuiteHalf, resolveScenario } from '../../sim/scenarios.js';
import { scaleScenarioRates } from '../../sim/net/scenario.js';
import type { SimOptions, SimResult } from '../../sim/simulator.js';
import { OverlayRoutes, renderOverlay } from '../../sim/overlay.js';

/** Default `--compare`: every registered multipath scheduler, converge without feedback, and each path alone. */
export const ALL_CONFIGS = [...multipathSchedulers().flatMap((n) => (n === 'converge' ? [n, 'converge-nofb'] : [n])), 'single:0', 'single:1'];
const DEGRADATION_PREFERENCES: readonly DegradationPreference[] = ['maintain-framerate', 'maintain-resolution', 'balanced'];
const PLAYOUT_KEYS = ['minDelayMs', 'maxDelayMs', 'maxChangeMsPerS', 'offsetWindowMs', 'nackHoldMs', 'renderDelayMs', 'nackSteadyBins', 'nackSteadyWindowS', 'nackSteadyMaxQueueMs'] as const;
const RECEIVER_KEYS = ['reportCopies', 'keyframeOnNackGiveUp', 'keyframeRepeat', 'keepFramesOnTimeout'];
const SENDER_KEYS = [
  'dropQueueFrames',
  'maxConsecutiveDrops',
  'holdKeyFrameWhileBuffered',
  'departureTimes',
  'queuedDeliveryMs',
  'queuedDeliveryRatio',
  'protectionOverheadMax',
  'upperLayerDropFactor',
  'cwndPushback',
  'pushbackQueueMs',
  'pathHysteresis',
  'fastFailover',
  'rack',
  'outageRestore',
  'fallbackEstablishMs',
  'probation',
  'probationMinAltFraction',
  'gapMinAltFraction',
  'cleanReturn',
  'blackholeKeyframe',
  'gapKeepMs',
  'fecCode',
  'keyframeCoalesceTransmit',
  'minBitrateBps',
  'audioRate',
  'pacer.burstMs',
  'pacer.pacingFactor',
  'pathHysteresis.promoteRelative',
];

const USAGE = `usage: npm run bench -- --scenario FILE.json|NAME [--compare LIST] [--fec LIST] [--streams 1-3] [--seeds N] [--first-seed K] [--duration S] [--variants N] [--half tune|check] [--only NAME,...] [--rate-scale K] [--degradation PREF] [--datachannel sctp|sctp+rtp|ideal] [--stall K=V,...] [--clock-skew MS] [--playout K=V,...] [--nack K=V,...] [--temporal-layers 1-3] [--converge K=V,...] [--fractal K=V,...] [--sender K=V,...] [--receiver K=V,...] [--audio on|off] [--explain-freezes] [--path-trace] [--jobs N] [--out DIR]
  --compare entries: ${compareEntriesHelp()}, converge-nofb, ${estimatorEntries().join('|')} (that estimator with its paper's scheduler: fractal = mrtp + fractal), SCHED+EST (e.g. converge+fractal) (bench/compare.ts)`;

const OPTIONS = {
  scenario: { type: 'string' },
  compare: { type: 'string' },
  fec: { type: 'string' },
  streams: { type: 'string' },
  seeds: { type: 'string' },
  'first-seed': { type: 'string' },
  duration: { type: 'string' },
  variants: { type: 'string' },
  half: { type: 'string' },
  'rate-scale': { type: 'string' },
  only: { type: 'string' },
  degradation: { type: 'string' },
  datachannel: { type: 'string' },
  stall: { type: 'string' },
  'clock-skew': { type: 'string' },
  playout: { type: 'string' },
  nack: { type: 'string' },
  'relay-ucb': { type: 'string' },
  'relay-probe': { type: 'string' },
  'relay-handover': { type: 'string' },
  'temporal-layers': { type: 'string' },
  converge: { type: 'string' },
  fractal: { type: 'string' },
  sender: { type: 'string' },
  receiver: { type: 'string' },
  audio: { type: 'string' },
  'explain-freezes': { type: 'boolean' },
  'path-trace': { type: 'boolean' },
  jobs: { type: 'string' },
  out: { type: 'string' },
} as const;

interface Args {
  scenario: string;
  compare: CompareEntry[];
  fec: FecPolicyName[];
  streams: number;
  seeds: number;
  /** First seed: the runs use seeds firstSeed .. firstSeed + seeds - 1 (held-out seeds: `--first-seed 4 --seeds 3`). */
  firstSeed: number;
  duration?: number;
  variants?: number;
  half?: SuiteHalf;
  /** Capacity factor applied to every path's links (`--rate-scale`); undefined = 1. */
  rateScale?: number;
  only?: string[];
  degradation?: DegradationPreference;
  datachannel?: 'sctp' | 'ideal' | 'sctp+rtp';
  stallFallback?: SimOptions['stallFallback'];
  clockSkewMs?: number;
  temporalLayers?: number;
  converge?: Partial<ConvergeConfig>;
  fractal?: SimOptions['fractal'];
  sender?: SimOptions['sender'];
  receiver?: SimOptions['receiver'];
  playout?: PlayoutOptions;
  nack?: SimOptions['nack'];
  relayUcb?: SimOptions['relayUcb'];
  relayProbe?: SimOptions['relayProbe'];
  relayHandover?: SimOptions['relayHandover'];
  audio: boolean;
  explainFreezes: boolean;
  pathTrace: boolean;
  jobs: number;
  out?: string;
}

/** `k=v,k=v` with known keys to an object of numbers / booleans; undefined when absent. @throws UsageError naming the flag */
function parseOverrides(arg: string | undefined, flag: string, keys: string[], strings: Record<string, readonly string[]> = {}): Record<string, number | boolean | string> | undefined {
  if (arg === undefined) return undefined;
  const out: Record<string, number | boolean | string> = {};
  for (const kv of arg.split(',').filter(Boolean)) {
    const [k, v] = kv.split('=');
    if (!keys.includes(k) || v === undefined) throw new UsageError(`${flag}: unknown or valueless entry "${kv}" (keys: ${keys.join(', ')})`);
    const choices = strings[k];
    if (choices) {
      if (!choices.includes(v)) throw new UsageError(`${flag}: ${k} must be one of ${choices.join(', ')}, got ${v}`);
      out[k] = v;
      continue;
    }
    const val = v === 'true' ? true : v === 'false' ? false : Number(v);
    if (typeof val === 'number' && !Number.isFinite(val)) throw new UsageError(`${flag}: ${k} must be a number or true/false, got ${v}`);
    out[k] = val;
  }
  return out;
}

/** The checked options. @throws UsageError naming the bad option */
function parseOptions(v: CliValues<typeof OPTIONS>): Args {
  const scenario = v.scenario;
  if (!scenario) throw new UsageError('--scenario is required');
  const isSweep = scenario === 'loss-sweep';
  // The trace grows with the call (62 numbers per path per 100 ms): a 30 min soak would put ~10 MB into the heap it measures.
  if (v['path-trace'] === true && scenario === 'soak') throw new Error('--path-trace: not with --scenario soak (it would grow the heap the soak measures)');
  const defaultCompare = isSweep || scenario === 'soak' ? 'converge' : scenario === 'cellular' ? 'converge,single:0,single:1' : ALL_CONFIGS.join(',');
  const compare = parseCompare(v.compare ?? defaultCompare, { noFeedback: true, estimators: true });
  const fec = (v.fec ?? (isSweep ? 'path,webrtc-table,none' : 'path')).split(',').filter(Boolean);
  for (const f of fec) if (!isFecPolicyName(f)) throw new UsageError(`unknown FEC policy "${f}" (use ${fecPolicyNames().join(', ')})`);
  const int = (k: keyof typeof OPTIONS, d: number, lo: number, hi: number): number => (v[k] === undefined ? d : intOption(k, v[k] as string, lo, hi));
  const tl = choiceOption('temporal-layers', v['temporal-layers'], ['1', '2', '3']);
  // --converge / --sender key=value,...: ConvergeConfig / SenderEngine overrides (numbers or true/false), for experiments.
  const converge = parseOverrides(v.converge, '--converge', Object.keys(DEFAULT_CONVERGE_CONFIG)) as Partial<ConvergeConfig> | undefined;
  const sender = parseOverrides(v.sender, '--sender', SENDER_KEYS, { outageRestore: ['total', 'any', 'off'], fecCode: fecCodeNames(), probation: ['true', 'false', 'down'] }) as SimOptions['sender'];
  if (sender?.probation !== undefined && sender.probation !== 'down') sender.probation = (sender.probation as unknown) === 'true';
  // pacer.K=V: SenderEngineConfig.pacer fields; pathHysteresis.K=V: PathHysteresisConfig fields.
  for (const k of Object.keys(sender ?? {})) {
    if (!sender) continue;
    const flat = sender as Record<string, unknown>;
    if (k.startsWith('pacer.')) sender.pacer = { ...sender.pacer, [k.slice(6)]: flat[k] };
    else if (k.startsWith('pathHysteresis.')) sender.pathHysteresis = { ...(typeof sender.pathHysteresis === 'object' ? sender.pathHysteresis : {}), [k.slice(15)]: flat[k] };
    else continue;
    delete flat[k];
  }
  if (v.duration !== undefined && !(Number(v.duration) > 0)) throw new UsageError(`--duration must be > 0 s, got ${v.duration}`);
  return {
    scenario,
    compare,
    fec: fec as FecPolicyName[],
    streams: int('streams', 1, 1, 3),
    seeds: int('seeds', 5, 1, 1000),
    firstSeed: int('first-seed', 1, 1, 1_000_000),
    duration: v.duration === undefined ? undefined : Number(v.duration),
    variants: v.variants === undefined ? undefined : int('variants', 1, 1, 1000),
    half: choiceOption('half', v.half, ['tune', 'check'] as const),
    ...(v['rate-scale'] !== undefined ? { rateScale: numberOption('rate-scale', v['rate-scale'], 0.001, 1000) } : {}),
    only: v.only === undefined ? undefined : v.only.split(',').filter(Boolean),
    degradation: choiceOption('degradation', v.degradation, DEGRADATION_PREFERENCES),
    datachannel: choiceOption('datachannel', v.datachannel, ['sctp', 'sctp+rtp', 'ideal'] as const),
    stallFallback: parseOverrides(v.stall, '--stall', [
      'stallMs',
      'stallScale',
      'backlogBytes',
      'progressBytes',
      'ceilingQueueMs',
      'minCeilingQueueBytes',
      'burstMs',
      'minCeilingBps',
      'drainProgresses',
      'keyframeOnSwitch',
      'reverseGate',
    ]) as SimOptions['stallFallback'],
    ...(v['clock-skew'] !== undefined ? { clockSkewMs: numberOption('clock-skew', v['clock-skew'], -86_400_000, 86_400_000) } : {}),
    temporalLayers: tl === undefined ? undefined : Number(tl),
    converge,
    fractal: parseOverrides(v.fractal, '--fractal', ['splitStart', 'distortionMarginMs', 'distortionMarginScales', 'coupledIncrease', 'coupledIncreaseMaxLoss', 'fairShare', 'fairShareMarginMs'], {
      coupledIncrease: ['off', 'share', 'lia'],
    }) as SimOptions['fractal'],
    sender,
    receiver: parseOverrides(v.receiver, '--receiver', RECEIVER_KEYS) as SimOptions['receiver'],
    playout: parseOverrides(v.playout, '--playout', [...PLAYOUT_KEYS]) as PlayoutOptions | undefined,
    nack: parseOverrides(v.nack, '--nack', ['reorderWindowMs', 'maxReorderWindowMs', 'maxRetries', 'maxNackAgeMs']) as SimOptions['nack'],
    relayUcb: parseOverrides(v['relay-ucb'], '--relay-ucb', ['alpha', 'observedWindowMs', 'explorationScale', 'switchMargin']) as SimOptions['relayUcb'],
    relayProbe: v['relay-probe'] === 'off' ? false : (parseOverrides(v['relay-probe'], '--relay-probe', ['packets', 'bytes', 'offsetMs', 'current']) as SimOptions['relayProbe']),
    relayHandover: choiceOption('relay-handover', v['relay-handover'], ['break', 'make-before-break'] as const),
    audio: (choiceOption('audio', v.audio, ['on', 'off'] as const) ?? 'on') === 'on',
    explainFreezes: v['explain-freezes'] === true,
    pathTrace: v['path-trace'] === true,
    jobs: int('jobs', availableParallelism(), 1, 64),
    out: v.out,
  };
}

/** Run jobs on `n` worker threads; results come back in job order. */
export async function runPool(jobs: SimOptions[], n: number, onDone?: (i: number, wallMs: number) => void): Promise<Array<{ result: SimResult; wallMs: number }>> {
  const out: Array<{ result: SimResult; wallMs: number }> = new Array(jobs.length);
  let next = 0;
  let failed: Error | undefined;
  // Workers do not inherit the tsx loader: register it, then load the TypeScript worker.
  const api = import.meta.resolve('tsx/esm/api');
  const worker = new URL('./worker.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(worker)}); });`;
  const workers = Array.from({ length: Math.min(n, jobs.length) }, () => new Worker(boot, { eval: true }));
  await Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((res) => {
          const feed = (): void => {
            if (failed || next >= jobs.length) {
              void w.terminate();
              res();
              return;
            }
            const id = next++;
            w.postMessage({ id, opts: jobs[id] });
          };
          w.on('message', (m: { id: number; result?: SimResult; wallMs?: number; error?: string }) => {
            if (m.error) failed = new Error(`run ${m.id} (${jobs[m.id].label} seed ${jobs[m.id].seed}) failed: ${m.error}`);
            else {
              out[m.id] = { result: m.result as SimResult, wallMs: m.wallMs ?? 0 };
              onDone?.(m.id, m.wallMs ?? 0);
            }
            feed();
          });
          w.on('error', (e) => {
            failed = e;
            res();
          });
          feed();
        }),
    ),
  );
  if (failed) throw failed;
  return out;
}

async function main(values: CliValues<typeof OPTIONS>): Promise<number> {
  const a = parseOptions(values);
  let variants = resolveScenario(a.scenario);
  if (a.half !== undefined) {
    if (!variants.some((v) => v.half !== undefined)) throw new Error(`--half: scenario "${a.scenario}" is not split into halves`);
    variants = variants.filter((v) => v.half === a.half);
  }
  if (a.only !== undefined) {
    const only = a.only;
    const unknown = only.filter((n) => !variants.some((v) => v.label === n));
    if (unknown.length > 0) throw new UsageError(`--only: no variant ${unknown.join(', ')} in "${a.scenario}"${a.half ? ` (half ${a.half})` : ''} (have: ${variants.map((v) => v.label).join(', ')})`);
    variants = variants.filter((v) => only.includes(v.label));
  }
  if (a.variants !== undefined) variants = variants.slice(0, a.variants);
  if (a.rateScale !== undefined && a.rateScale !== 1) {
    const k = a.rateScale;
    variants = variants.map((v) => ({ ...v, scenario: scaleScenarioRates(v.scenario, k) }));
    console.log(`bench: every path's capacities x ${k} (--rate-scale)`);
  }
  const scenarioLabel = a.scenario.endsWith('.json') ? basename(a.scenario, '.json') : a.scenario;
  const outDir = resolve(a.out ?? resolve(REPO_ROOT, 'out/bench', scenarioLabel));
  mkdirSync(outDir, { recursive: true });
  const configs = a.compare.filter((c) => c.kind === 'multipath');
  const jobs: SimOptions[] = [];
  const meta: Array<{ variant: string; config: string; loss?: number; half?: SuiteHalf }> = [];
  for (const v of variants) {
    for (const c of configs) {
      if (c.singlePath !== undefined && c.singlePath >= v.scenario.paths.length) continue;
      // An entry's @fec pins its policy; the others run once per --fec policy.
      for (const fec of c.fec ? [c.fec] : a.fec) {
        for (let seed = a.firstSeed; seed < a.firstSeed + a.seeds; seed++) {
          const label = a.fec.length > 1 && !c.fec ? `${c.name}/${fec}` : c.name;
          jobs.push({
            scenario: v.scenario,
            scheduler: c.scheduler,
            singlePath: c.singlePath,
            fec,
            seed,
            durationS: a.duration,
            streams: a.streams,
            qoeFeedback: c.qoeFeedback ?? true,
            ...(a.degradation || a.temporalLayers
              ? { encoder: { ...(a.degradation ? { degradationPreference: a.degradation } : {}), ...(a.temporalLayers ? { temporalLayers: a.temporalLayers } : {}) } }
              : {}),
            ...(c.estimator ? { estimator: c.estimator } : {}),
            ...(a.converge ? { converge: a.converge } : {}),
            ...(a.fractal ? { fractal: a.fractal } : {}),
            ...(a.sender ? { sender: a.sender } : {}),
            ...(a.receiver ? { receiver: a.receiver } : {}),
            ...(a.datachannel ? { datachannel: a.datachannel } : {}),
            ...(a.stallFallback ? { stallFallback: a.stallFallback } : {}),
            ...(a.clockSkewMs !== undefined ? { clockSkewMs: a.clockSkewMs } : {}),
            ...(a.playout ? { playout: a.playout } : {}),
            ...(a.nack ? { nack: a.nack } : {}),
            ...(a.relayUcb ? { relayUcb: a.relayUcb } : {}),
            ...(a.relayProbe !== undefined ? { relayProbe: a.relayProbe } : {}),
            ...(a.relayHandover ? { relayHandover: a.relayHandover } : {}),
            ...(a.scenario === 'soak' ? { heapSampleS: SOAK.heapSampleS } : {}),
            audio: a.audio,
            ...(a.explainFreezes ? { explainFreezes: true } : {}),
            ...(a.pathTrace ? { pathTrace: true } : {}),
            label,
          });
          meta.push({ variant: v.label, config: label, loss: v.loss, half: v.half });
          // Overlay (issue 16): each overlay-ucb run gets a twin whose relays an oracle picks (sim/overlay.ts).
          if (OverlayRoutes.wanted(v.scenario) && c.scheduler === 'overlay-ucb') {
            jobs.push({ ...jobs[jobs.length - 1], relayPolicy: 'oracle', label: `${label}+oracle` });
            meta.push({ variant: v.label, config: `${label}+oracle`, loss: v.loss, half: v.half });
          }
        }
      }
    }
  }
  console.log(
    `bench ${scenarioLabel}: ${variants.length} variant(s) x ${configs.length} configuration(s) x ${a.fec.length} FEC x ${a.seeds} seed(s) = ${jobs.length} runs on ${Math.min(a.jobs, jobs.length)} thread(s)`,
  );
  const t0 = performance.now();
  let done = 0;
  const runs = await runPool(jobs, a.jobs, () => {
    done++;
    if (done % Math.max(1, Math.floor(jobs.length / 10)) === 0 || done === jobs.length) console.log(`  ${done}/${jobs.length} runs`);
  });
  const wallS = (performance.now() - t0) / 1000;
  const entries: BenchEntry[] = runs.map((r, i) => ({ variant: meta[i].variant, config: meta[i].config, loss: meta[i].loss, half: meta[i].half, wallMs: Math.round(r.wallMs), result: r.result }));
  // results.json: perSecond only for the first seed of each (variant, config).
  const firstSeed = new Set<string>();
  const json = entries.map((e, i) => {
    const key = `${e.variant}|${e.config}`;
    const keep = !firstSeed.has(key);
    firstSeed.add(key);
    const { result, ...rest } = e;
    const { perSecond, ...res } = result;
    // The overrides the run was given (--sender, --receiver, --converge, --datachannel), so a results file says what it measured.
    const j = jobs[i];
    const options = {
      ...(j.sender ? { sender: j.sender } : {}),
      ...(j.receiver ? { receiver: j.receiver } : {}),
      ...(j.converge ? { converge: j.converge } : {}),
      ...(j.datachannel ? { datachannel: j.datachannel } : {}),
    };
    return { variant: rest.variant, ...(rest.half ? { half: rest.half } : {}), config: rest.config, ...(Object.keys(options).length > 0 ? { options } : {}), ...res, ...(keep ? { perSecond } : {}) };
  });
  writeFileSync(resolve(outDir, 'results.json'), JSON.stringify(json, null, 1) + '\n');
  const summary =
    renderSummary(scenarioLabel, entries, { seeds: a.seeds, streams: a.streams, wallS, fec: a.fec, ...(a.rateScale !== undefined ? { rateScale: a.rateScale } : {}) }) + renderOverlay(entries);
  writeFileSync(resolve(outDir, 'summary.md'), summary);
  writeFileSync(resolve(outDir, 'report.html'), renderHtml(scenarioLabel, entries));
  console.log(summary);
  console.log(`wrote ${outDir}/{results.json,summary.md,report.html} in ${wallS.toFixed(1)} s`);
  // Runs whose own assumptions broke (sim/overlay.ts overlayChecks, sim/fairness.ts fairnessChecks): their numbers mean nothing.
  if (summary.includes('- BROKEN: ')) {
    console.error('broken assumptions (see "Assumptions" in summary.md)');
    return 1;
  }
  return 0;
}

// Run only as a script (the module's exports stay importable).
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) runCli(OPTIONS, USAGE, 'bench', main);
