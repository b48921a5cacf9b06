/**
 * JSON scenario format of the network emulator and simulator, its validator
 * and the builder that turns a link spec into a {@link Link}.
 *
 * ```json
 * { "name": "capacity-drop", "durationS": 60,
 *   "paths": [
 *     { "name": "lte", "up": { "rateMbps": 8, "delayMs": 30, "queue": { "bytes": 150000 } } },
 *     { "up": { "rateMbps": 8, "delayMs": 60,
 *               "schedule": [ { "atS": 20, "rateMbps": 0.5 }, { "atS": 40, "rateMbps": 8 } ] } } ] }
 * ```
 *
 * `up` = media direction (sender -> receiver), `down` = feedback direction
 * (receiver -> sender). When `down` is omitted it is a generous link
 * ({@link DEFAULT_FEEDBACK_RATE_MBPS}, no loss) with the SAME propagation
 * delay as `up` (its `delayMs`/`delayTrace`, the `delayMs` steps of its
 * schedule) and the same `downPeriods` (a dead path is dead both ways).
 *
 * Link spec fields (times in the scenario are seconds unless the name says
 * ms; rates in Mbps = 1e6 bit/s):
 * - capacity: `rateMbps` (> 0) XOR `trace` (file, resolved relative to the
 *   scenario file) with `traceFormat` 'mahimahi' | 'csv' | 'mbps-list'
 *   (default from the extension: .csv -> csv, .list -> mbps-list, else
 *   mahimahi), `traceRun` (Run N of a .list, default 1), `traceSampleMs`
 *   (.list sampling period, default {@link DEFAULT_LIST_SAMPLE_MS}),
 *   `traceStartS` (start offset into the capacity and delay traces);
 * - delay: `delayMs` (default 0) XOR `delayTrace` (a ping `.list`: one-way =
 *   RTT / 2) with `delayTraceRun`, `delayTraceSampleMs`;
 * - `loss`: probability in [0, 1] (Bernoulli) or
 *   `{ "gilbertElliott": { pGoodToBad, pBadToGood, lossGood?, lossBad? } }`;
 * - `queue`: `{ packets?, bytes?, ms? }` drop-tail limits (default 1000 packets);
 * - `downPeriods`: `[[startS, endS], ...]` blackholes;
 * - `schedule`: `[{ atS, rateMbps?, delayMs?, loss? }]` step changes;
 *   `rateMbps: null` / `delayMs: null` return to the base trace / delay.
 *
 * Overlay (issue 16): a path may list `relays: [{ name?, up, down? }]`,
 * candidate routes through relays besides its direct one, and the scenario
 * `relaySwitchMs`, the gap a switch between them costs (sim/run-loop.ts).
 * Cross traffic (simulator only; sim/cross-traffic.ts has the models):
 * `crossTraffic: [{ path, kind, startS, stopS, rateMbps? }]` puts a competing
 * flow on path `path`'s bottleneck queue (its `up` link; its ACKs or reports
 * ride the `down` link) from `startS` to `stopS` (default: the end of the
 * call). `path` is a path index or name; `kind` is `"gcc-video"` (our own
 * single-path sender with the GCC estimator; `rateMbps` caps its encoder),
 * `"fractal-video"` (the same sender with the `fractal` estimator: a
 * single-path FRACTaL source, the competitor of the MPRTP paper's §V-B
 * fairness tests; `audio: true` gives either video flow an audio source
 * like ours when the run has audio), `"reno"` (RFC 5681), `"cubic"` (RFC 9438) or `"cbr"` (constant `rateMbps`,
 * required).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import type { Rng } from '../../src/core/rng.js';
import { MAX_PATHS } from '../../src/core/types.js';
import { Link, type LinkConfig, type ScheduleStep } from './link.js';
import type { LossConfig } from './loss.js';
import { type CapacityTrace, type DelayTrace, DEFAULT_LIST_SAMPLE_MS, constantRate, loadBytesPerSecondCsv, loadMahimahi, loadMbpsList, loadPingList } from './traces.js';

/** Capacity of a default feedback (`down`) link, Mbps. */
export const DEFAULT_FEEDBACK_RATE_MBPS = 100;

export type TraceFormat = 'mahimahi' | 'csv' | 'mbps-list';

export interface GilbertElliottSpec {
  pGoodToBad: number;
  pBadToGood: number;
  lossGood?: number;
  lossBad?: number;
}

/** Bernoulli probability, or a Gilbert-Elliott chain. */
export type LossSpec = number | { gilbertElliott: GilbertElliottSpec };

export interface ScheduleSpec {
  atS: number;
  rateMbps?: number | null;
  delayMs?: number | null;
  loss?: LossSpec;
}

export interface QueueSpec {
  packets?: number;
  bytes?: number;
  ms?: number;
}

/** One link direction as written in a scenario (trace paths absolute after parsing). */
export interface LinkSpec {
  rateMbps?: number;
  trace?: string;
  traceFormat?: TraceFormat;
  traceRun?: number;
  traceSampleMs?: number;
  traceStartS?: number;
  delayMs?: number;
  delayTrace?: string;
  delayTraceRun?: number;
  delayTraceSampleMs?: number;
  loss?: LossSpec;
  queue?: QueueSpec;
  downPeriods?: Array<[number, number]>;
  schedule?: ScheduleSpec[];
  /**
   * Multiplies every capacity of this link (its trace or `rateMbps`, and the
   * `rateMbps` of its schedule steps) by this factor (> 0): the same network
   * shape, slower or faster (e.g. 0.15 turns an LTE uplink into a UMTS-like one).
   * Default 1. Delays and queue sizes in ms are unchanged.
   */
  rateScale?: number;
}

export interface PathSpec {
  name: string;
  /** Media direction: sender (peer A) -> receiver (peer B). */
  up: LinkSpec;
  /** Feedback direction: receiver (peer B) -> sender (peer A). */
  down: LinkSpec;
  /**
   * Overlay (issue 16): candidate routes through relays (TURN servers) this
   * subflow may take instead of its direct route (`up`/`down`, arm 0);
   * relay k is arm k + 1. Each has its own links (`down` defaulted as for a path).
   */
  relays?: RelaySpec[];
}

/** One candidate relay route of a path (sim/run-loop.ts switches between them). */
export interface RelaySpec {
  name: string;
  up: LinkSpec;
  down: LinkSpec;
}

/** Most relays per path. */
export const MAX_RELAYS_PER_PATH = 8;

/** Kinds of cross-traffic flow (see the module doc). */
export const CROSS_TRAFFIC_KINDS = ['gcc-video', 'fractal-video', 'reno', 'cubic', 'cbr'] as const;
export type CrossTrafficKind = (typeof CROSS_TRAFFIC_KINDS)[number];
/** At most this many cross-traffic flows per scenario. */
export const MAX_CROSS_FLOWS = 8;

/** One competing flow on a path's bottleneck (validated: `path` is an index). */
export interface CrossTrafficSpec {
  /** Index into `paths`. */
  path: number;
  kind: CrossTrafficKind;
  /** Start (s of the call). */
  startS: number;
  /** Stop (s of the call), > startS; undefined = until the end. */
  stopS?: number;
  /** cbr: the constant rate (required); gcc-video, fractal-video: encoder cap (default 8). Mbps. */
  rateMbps?: number;
  /**
   * gcc-video, fractal-video: the call sends its own audio too when the run
   * has audio (SimOptions.audio), as ours does. Default false (video only,
   * as the MPRTP paper's flows).
   */
  audio?: boolean;
}

/** A validated scenario: names filled in, `down` filled in, trace paths absolute. */
export interface Scenario {
  name: string;
  durationS?: number;
  paths: PathSpec[];
  /**
   * Overlay: what switching a path to another relay costs (ms): the path
   * carries nothing in either direction for this long (an ICE restart: new
   * TURN allocation and connectivity checks). Default {@link DEFAULT_RELAY_SWITCH_MS}.
   */
  relaySwitchMs?: number;
  /**
   * Overlay: how a switch moves the path. `'break'` (default): the path
   * carries nothing in either direction for `relaySwitchMs`, then the new
   * route carries it. `'make-before-break'`: the old route carries the path
   * for `relaySwitchMs` while the new one is set up, then the path moves
   * without a gap, as an ICE restart does (RFC 8445 §9: the old candidate
   * pair carries media until the new pair is selected; src/call/route-handover.ts).
   */
  relayHandover?: 'break' | 'make-before-break';
  /** Competing flows on the paths' bottlenecks (simulator only). */
  crossTraffic?: CrossTrafficSpec[];
}

/**
 * Default cost of a relay switch (ms): an ICE restart onto a TURN server one
 * RTT away needs an Allocate (1 RTT, 2 with the 401 nonce round trip),
 * CreatePermission / ChannelBind and a connectivity check: ~3-4 RTTs of
 * 50-100 ms. We take 300 ms and no make-before-break.
 */
export const DEFAULT_RELAY_SWITCH_MS = 300;

/** A scenario that does not validate; `path` is the JSON path (e.g. `$.paths[1].up.loss`). */
export class ScenarioError extends Error {
  readonly path: string;
  readonly detail: string;
  readonly file: string | undefined;
  constructor(path: string, detail: string, file?: string) {
    super(`${file ? `${file}: ` : ''}${path}: ${detail}`);
    this.name = 'ScenarioError';
    this.path = path;
    this.detail = detail;
    this.file = file;
  }
}

// ---------------------------------------------------------------- validation helpers

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function obj(v: unknown, path: string, allowed: readonly string[]): Obj {
  if (!isObj(v)) throw new ScenarioError(path, `must be an object, got ${describe(v)}`);
  for (const k of Object.keys(v)) {
    if (!allowed.includes(k)) throw new ScenarioError(`${path}.${k}`, `unknown field (allowed: ${allowed.join(', ')})`);
  }
  return v;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
  return typeof v === 'number' ? String(v) : typeof v;
}

interface NumOpts {
  min?: number;
  max?: number;
  /** Exclusive minimum. */
  gt?: number;
  int?: boolean;
}

function num(v: unknown, path: string, o: NumOpts = {}): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new ScenarioError(path, `must be a finite number, got ${describe(v)}`);
  if (o.int && !Number.isInteger(v)) throw new ScenarioError(path, `must be an integer, got ${v}`);
  if (o.min !== undefined && v < o.min) throw new ScenarioError(path, `must be >= ${o.min}, got ${v}`);
  if (o.gt !== undefined && !(v > o.gt)) throw new ScenarioError(path, `must be > ${o.gt}, got ${v}`);
  if (o.max !== undefined && v > o.max) throw new ScenarioError(path, `must be <= ${o.max}, got ${v}`);
  return v;
}

function optNum(v: unknown, path: string, o: NumOpts = {}): number | undefined {
  return v === undefined ? undefined : num(v, path, o);
}

function str(v: unknown, path: string): string {
  if (typeof v !== 'string' || v.trim() === '') throw new ScenarioError(path, `must be a non-empty string, got ${describe(v)}`);
  return v;
}

function prob(v: unknown, path: string): number {
  return num(v, path, { min: 0, max: 1 });
}

function parseLoss(v: unknown, path: string): LossSpec {
  if (typeof v === 'number') return prob(v, path);
  const o = obj(v, path, ['gilbertElliott']);
  const gp = `${path}.gilbertElliott`;
  const g = obj(o.gilbertElliott, gp, ['pGoodToBad', 'pBadToGood', 'lossGood', 'lossBad']);
  const out: GilbertElliottSpec = { pGoodToBad: prob(g.pGoodToBad, `${gp}.pGoodToBad`), pBadToGood: prob(g.pBadToGood, `${gp}.pBadToGood`) };
  if (g.lossGood !== undefined) out.lossGood = prob(g.lossGood, `${gp}.lossGood`);
  if (g.lossBad !== undefined) out.lossBad = prob(g.lossBad, `${gp}.lossBad`);
  return { gilbertElliott: out };
}

function resolveFile(v: unknown, path: string, baseDir: string): string {
  const f = resolve(baseDir, str(v, path));
  if (!existsSync(f)) throw new ScenarioError(path, `file not found: ${f}`);
  return f;
}

const LINK_FIELDS = [
  'rateMbps',
  'trace',
  'traceFormat',
  'traceRun',
  'traceSampleMs',
  'traceStartS',
  'delayMs',
  'delayTrace',
  'delayTraceRun',
  'delayTraceSampleMs',
  'loss',
  'queue',
  'downPeriods',
  'schedule',
  'rateScale',
] as const;

/** Validate one link spec. @throws ScenarioError */
export function parseLinkSpec(v: unknown, path: string, baseDir: string): LinkSpec {
  const o = obj(v, path, LINK_FIELDS);
  const out: LinkSpec = {};
  if (o.rateMbps !== undefined && o.trace !== undefined) throw new ScenarioError(path, 'give either rateMbps or trace, not both');
  if (o.rateMbps === undefined && o.trace === undefined) throw new ScenarioError(path, 'needs a capacity: rateMbps or trace');
  if (o.rateMbps !== undefined) out.rateMbps = num(o.rateMbps, `${path}.rateMbps`, { gt: 0 });
  for (const k of ['traceFormat', 'traceRun', 'traceSampleMs', 'traceStartS'] as const) {
    if (o[k] !== undefined && o.trace === undefined) throw new ScenarioError(`${path}.${k}`, 'only allowed with trace');
  }
  if (o.trace !== undefined) {
    out.trace = resolveFile(o.trace, `${path}.trace`, baseDir);
    if (o.traceFormat !== undefined) {
      if (o.traceFormat !== 'mahimahi' && o.traceFormat !== 'csv' && o.traceFormat !== 'mbps-list') {
        throw new ScenarioError(`${path}.traceFormat`, `must be "mahimahi", "csv" or "mbps-list", got ${describe(o.traceFormat)}`);
      }
      out.traceFormat = o.traceFormat;
    } else out.traceFormat = inferFormat(out.trace);
    if (o.traceRun !== undefined) out.traceRun = num(o.traceRun, `${path}.traceRun`, { min: 0, int: true });
    if (o.traceSampleMs !== undefined) out.traceSampleMs = num(o.traceSampleMs, `${path}.traceSampleMs`, { min: 1, int: true });
    if (o.traceStartS !== undefined) out.traceStartS = num(o.traceStartS, `${path}.traceStartS`, { min: 0 });
  }
  if (o.delayMs !== undefined && o.delayTrace !== undefined) throw new ScenarioError(path, 'give either delayMs or delayTrace, not both');
  for (const k of ['delayTraceRun', 'delayTraceSampleMs'] as const) {
    if (o[k] !== undefined && o.delayTrace === undefined) throw new ScenarioError(`${path}.${k}`, 'only allowed with delayTrace');
  }
  if (o.delayTrace !== undefined) {
    out.delayTrace = resolveFile(o.delayTrace, `${path}.delayTrace`, baseDir);
    if (o.delayTraceRun !== undefined) out.delayTraceRun = num(o.delayTraceRun, `${path}.delayTraceRun`, { min: 0, int: true });
    if (o.delayTraceSampleMs !== undefined) out.delayTraceSampleMs = num(o.delayTraceSampleMs, `${path}.delayTraceSampleMs`, { min: 1, int: true });
  } else out.delayMs = optNum(o.delayMs, `${path}.delayMs`, { min: 0 }) ?? 0;
  if (o.loss !== undefined) out.loss = parseLoss(o.loss, `${path}.loss`);
  if (o.queue !== undefined) {
    const q = obj(o.queue, `${path}.queue`, ['packets', 'bytes', 'ms']);
    const qs: QueueSpec = {};
    if (q.packets !== undefined) qs.packets = num(q.packets, `${path}.queue.packets`, { min: 1, int: true });
    if (q.bytes !== undefined) qs.bytes = num(q.bytes, `${path}.queue.bytes`, { min: 1 });
    if (q.ms !== undefined) qs.ms = num(q.ms, `${path}.queue.ms`, { gt: 0 });
    if (Object.keys(qs).length === 0) throw new ScenarioError(`${path}.queue`, 'needs at least one of packets, bytes, ms');
    out.queue = qs;
  }
  if (o.downPeriods !== undefined) {
    const dp = `${path}.downPeriods`;
    if (!Array.isArray(o.downPeriods)) throw new ScenarioError(dp, `must be an array of [startS, endS], got ${describe(o.downPeriods)}`);
    out.downPeriods = o.downPeriods.map((p: unknown, i: number) => {
      const pp = `${dp}[${i}]`;
      if (!Array.isArray(p) || p.length !== 2) throw new ScenarioError(pp, `must be [startS, endS], got ${describe(p)}`);
      const s = num(p[0], `${pp}[0]`, { min: 0 });
      const e = num(p[1], `${pp}[1]`, { gt: s });
      return [s, e] as [number, number];
    });
  }
  if (o.schedule !== undefined) {
    const sp = `${path}.schedule`;
    if (!Array.isArray(o.schedule)) throw new ScenarioError(sp, `must be an array of steps, got ${describe(o.schedule)}`);
    out.schedule = o.schedule.map((s: unknown, i: number) => {
      const p = `${sp}[${i}]`;
      const so = obj(s, p, ['atS', 'rateMbps', 'delayMs', 'loss']);
      const step: ScheduleSpec = { atS: num(so.atS, `${p}.atS`, { min: 0 }) };
      if (so.rateMbps !== undefined) step.rateMbps = so.rateMbps === null ? null : num(so.rateMbps, `${p}.rateMbps`, { min: 0 });
      if (so.delayMs !== undefined) step.delayMs = so.delayMs === null ? null : num(so.delayMs, `${p}.delayMs`, { min: 0 });
      if (so.loss !== undefined) step.loss = parseLoss(so.loss, `${p}.loss`);
      if (step.rateMbps === undefined && step.delayMs === undefined && step.loss === undefined) {
        throw new ScenarioError(p, 'a step needs at least one of rateMbps, delayMs, loss');
      }
      return step;
    });
  }
  if (o.rateScale !== undefined) out.rateScale = num(o.rateScale, `${path}.rateScale`, { gt: 0 });
  return out;
}

/** `spec` with its capacities multiplied by `k` (composes with an existing {@link LinkSpec.rateScale}). @throws RangeError unless k > 0 and finite. */
export function scaleLinkSpec(spec: LinkSpec, k: number): LinkSpec {
  if (!(k > 0 && Number.isFinite(k))) throw new RangeError(`rate scale must be > 0, got ${k}`);
  return { ...spec, rateScale: (spec.rateScale ?? 1) * k };
}

/** `sc` with both links of every path (media up, feedback down) scaled by `k` ({@link scaleLinkSpec}). Relays and cross traffic are unchanged. */
export function scaleScenarioRates(sc: Scenario, k: number): Scenario {
  return { ...sc, paths: sc.paths.map((p) => ({ ...p, up: scaleLinkSpec(p.up, k), down: scaleLinkSpec(p.down, k) })) };
}

function inferFormat(file: string): TraceFormat {
  const ext = extname(file).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.list') return 'mbps-list';
  return 'mahimahi';
}

/** The feedback link used when a path has no `down` (see module doc). */
export function defaultDownSpec(up: LinkSpec): LinkSpec {
  const d: LinkSpec = { rateMbps: DEFAULT_FEEDBACK_RATE_MBPS, queue: { packets: 1000 } };
  if (up.delayTrace !== undefined) {
    d.delayTrace = up.delayTrace;
    if (up.delayTraceRun !== undefined) d.delayTraceRun = up.delayTraceRun;
    if (up.delayTraceSampleMs !== undefined) d.delayTraceSampleMs = up.delayTraceSampleMs;
  } else d.delayMs = up.delayMs ?? 0;
  if (up.downPeriods) d.downPeriods = up.downPeriods.map(([s, e]) => [s, e] as [number, number]);
  const delaySteps = (up.schedule ?? []).filter((s) => s.delayMs !== undefined).map((s) => ({ atS: s.atS, delayMs: s.delayMs }));
  if (delaySteps.length > 0) d.schedule = delaySteps;
  return d;
}

/**
 * Validate a parsed JSON scenario. Trace paths are resolved against
 * `baseDir` and must exist (their content is read by {@link buildLink}).
 *
 * @throws ScenarioError with the JSON path of the first problem
 */
export function parseScenario(v: unknown, baseDir: string, file?: string): Scenario {
  try {
    const o = obj(v, '$', ['name', 'durationS', 'paths', 'crossTraffic', '$schema', 'description', 'relaySwitchMs', 'relayHandover']);
    const out: Scenario = { name: str(o.name, '$.name'), paths: [] };
    if (o.durationS !== undefined) out.durationS = num(o.durationS, '$.durationS', { gt: 0 });
    if (o.relaySwitchMs !== undefined) out.relaySwitchMs = num(o.relaySwitchMs, '$.relaySwitchMs', { min: 0, max: 10_000 });
    if (o.relayHandover !== undefined) {
      if (o.relayHandover !== 'break' && o.relayHandover !== 'make-before-break')
        throw new ScenarioError('$.relayHandover', `must be "break" or "make-before-break", got ${describe(o.relayHandover)}`);
      out.relayHandover = o.relayHandover;
    }
    if (!Array.isArray(o.paths) || o.paths.length === 0) throw new ScenarioError('$.paths', `must be a non-empty array, got ${describe(o.paths)}`);
    if (o.paths.length > MAX_PATHS) throw new ScenarioError('$.paths', `at most ${MAX_PATHS} paths, got ${o.paths.length}`);
    o.paths.forEach((p: unknown, i: number) => {
      const pp = `$.paths[${i}]`;
      const po = obj(p, pp, ['name', 'up', 'down', 'relays']);
      const up = parseLinkSpec(po.up, `${pp}.up`, baseDir);
      const down = po.down === undefined ? defaultDownSpec(up) : parseLinkSpec(po.down, `${pp}.down`, baseDir);
      const path: PathSpec = { name: po.name === undefined ? `path${i}` : str(po.name, `${pp}.name`), up, down };
      if (po.relays !== undefined) {
        const rp = `${pp}.relays`;
        if (!Array.isArray(po.relays) || po.relays.length === 0) throw new ScenarioError(rp, `must be a non-empty array of relays, got ${describe(po.relays)}`);
        if (po.relays.length > MAX_RELAYS_PER_PATH) throw new ScenarioError(rp, `at most ${MAX_RELAYS_PER_PATH} relays, got ${po.relays.length}`);
        path.relays = po.relays.map((r: unknown, k: number) => {
          const ro = obj(r, `${rp}[${k}]`, ['name', 'up', 'down']);
          const rUp = parseLinkSpec(ro.up, `${rp}[${k}].up`, baseDir);
          const rDown = ro.down === undefined ? defaultDownSpec(rUp) : parseLinkSpec(ro.down, `${rp}[${k}].down`, baseDir);
          return { name: ro.name === undefined ? `relay${k}` : str(ro.name, `${rp}[${k}].name`), up: rUp, down: rDown };
        });
      }
      out.paths.push(path);
    });
    if (o.crossTraffic !== undefined) out.crossTraffic = parseCrossTraffic(o.crossTraffic, out.paths, out.durationS);
    return out;
  } catch (e) {
    if (e instanceof ScenarioError && file && !e.file) throw new ScenarioError(e.path, e.detail, file);
    throw e;
  }
}

/** Validate `$.crossTraffic` against the scenario's paths. @throws ScenarioError */
function parseCrossTraffic(v: unknown, paths: readonly PathSpec[], durationS: number | undefined): CrossTrafficSpec[] {
  const p0 = '$.crossTraffic';
  if (!Array.isArray(v)) throw new ScenarioError(p0, `must be an array of flows, got ${describe(v)}`);
  if (v.length > MAX_CROSS_FLOWS) throw new ScenarioError(p0, `at most ${MAX_CROSS_FLOWS} flows, got ${v.length}`);
  return v.map((f: unknown, i: number) => {
    const p = `${p0}[${i}]`;
    const o = obj(f, p, ['path', 'kind', 'startS', 'stopS', 'rateMbps', 'audio']);
    let path: number;
    if (typeof o.path === 'string') {
      path = paths.findIndex((x) => x.name === o.path);
      if (path < 0) throw new ScenarioError(`${p}.path`, `no path named ${JSON.stringify(o.path)} (paths: ${paths.map((x) => x.name).join(', ')})`);
    } else path = num(o.path, `${p}.path`, { min: 0, max: paths.length - 1, int: true });
    if (!(CROSS_TRAFFIC_KINDS as readonly unknown[]).includes(o.kind)) {
      throw new ScenarioError(`${p}.kind`, `must be one of ${CROSS_TRAFFIC_KINDS.map((k) => `"${k}"`).join(', ')}, got ${describe(o.kind)}`);
    }
    const kind = o.kind as CrossTrafficKind;
    const out: CrossTrafficSpec = { path, kind, startS: optNum(o.startS, `${p}.startS`, { min: 0 }) ?? 0 };
    if (o.stopS !== undefined) out.stopS = num(o.stopS, `${p}.stopS`, { gt: out.startS });
    if (durationS !== undefined && out.startS >= durationS) throw new ScenarioError(`${p}.startS`, `must be < durationS ${durationS}, got ${out.startS}`);
    if (o.rateMbps !== undefined) {
      if (kind === 'reno' || kind === 'cubic') throw new ScenarioError(`${p}.rateMbps`, `not allowed for ${kind} (a bulk flow takes what its congestion window gives)`);
      out.rateMbps = num(o.rateMbps, `${p}.rateMbps`, { gt: 0, max: 10_000 });
    } else if (kind === 'cbr') throw new ScenarioError(`${p}.rateMbps`, 'required for cbr');
    if (o.audio !== undefined) {
      if (kind !== 'gcc-video' && kind !== 'fractal-video') throw new ScenarioError(`${p}.audio`, `only for gcc-video and fractal-video, not ${kind}`);
      if (typeof o.audio !== 'boolean') throw new ScenarioError(`${p}.audio`, `must be true or false, got ${describe(o.audio)}`);
      out.audio = o.audio;
    }
    return out;
  });
}

/** Read, parse and validate a scenario file; traces resolve relative to its folder. @throws ScenarioError */
export function loadScenario(file: string): Scenario {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ScenarioError('$', `cannot read scenario: ${(e as Error).message}`, file);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ScenarioError('$', `invalid JSON: ${(e as Error).message}`, file);
  }
  return parseScenario(json, dirname(resolve(file)), file);
}

// ---------------------------------------------------------------- building links

const traceCache = new Map<string, CapacityTrace | DelayTrace>();
const TRACE_CACHE_MAX = 32;

function cached<X extends CapacityTrace | DelayTrace>(key: string, load: () => X): X {
  const hit = traceCache.get(key);
  if (hit) return hit as X;
  const t = load();
  if (traceCache.size >= TRACE_CACHE_MAX) traceCache.delete(traceCache.keys().next().value as string);
  traceCache.set(key, t);
  return t;
}

function toLoss(spec: LossSpec | undefined): LossConfig | undefined {
  if (spec === undefined) return undefined;
  if (typeof spec === 'number') return spec > 0 ? { kind: 'bernoulli', p: spec } : { kind: 'none' };
  return { kind: 'gilbertElliott', ...spec.gilbertElliott };
}

/**
 * Turn a validated link spec into a {@link LinkConfig}: loads the traces
 * (cached by file and options) and converts s -> ms, Mbps -> bps.
 *
 * @throws TraceError if a trace file is malformed
 */
export function linkConfigFromSpec(spec: LinkSpec): LinkConfig {
  let capacity: CapacityTrace;
  if (spec.trace !== undefined) {
    const fmt = spec.traceFormat ?? inferFormat(spec.trace);
    const file = spec.trace;
    const run = spec.traceRun ?? 1;
    const sampleMs = spec.traceSampleMs ?? DEFAULT_LIST_SAMPLE_MS;
    capacity = cached(`cap|${fmt}|${file}|${run}|${sampleMs}`, () => (fmt === 'csv' ? loadBytesPerSecondCsv(file) : fmt === 'mbps-list' ? loadMbpsList(file, { run, sampleMs }) : loadMahimahi(file)));
  } else capacity = constantRate((spec.rateMbps ?? DEFAULT_FEEDBACK_RATE_MBPS) * 1e6);
  const k = spec.rateScale ?? 1;
  if (k !== 1) capacity = { name: `${capacity.name} x${k}`, periodMs: capacity.periodMs, bytesPerMs: capacity.bytesPerMs.map((b) => b * k) };
  let delay: number | DelayTrace = spec.delayMs ?? 0;
  if (spec.delayTrace !== undefined) {
    const file = spec.delayTrace;
    const run = spec.delayTraceRun ?? 1;
    const sampleMs = spec.delayTraceSampleMs ?? DEFAULT_LIST_SAMPLE_MS;
    delay = cached(`delay|${file}|${run}|${sampleMs}`, () => loadPingList(file, { run, sampleMs }));
  }
  const cfg: LinkConfig = { capacity, delay };
  const loss = toLoss(spec.loss);
  if (loss) cfg.loss = loss;
  if (spec.queue) cfg.queue = { ...spec.queue };
  if (spec.downPeriods) cfg.downPeriods = spec.downPeriods.map(([s, e]) => [s * 1000, e * 1000] as const);
  if (spec.schedule) {
    cfg.schedule = spec.schedule.map((s) => {
      const step: ScheduleStep = { atMs: s.atS * 1000 };
      if (s.rateMbps !== undefined) step.rateBps = s.rateMbps === null ? null : s.rateMbps * 1e6 * k;
      if (s.delayMs !== undefined) step.delayMs = s.delayMs;
      const l = toLoss(s.loss);
      if (l) step.loss = l;
      return step;
    });
  }
  if (spec.traceStartS !== undefined) cfg.traceOffsetMs = Math.round(spec.traceStartS * 1000);
  return cfg;
}

/**
 * Build the {@link Link} of a validated link spec.
 *
 * @param rng seeded random source for its loss model (give each link its own)
 * @throws TraceError if a trace file is malformed; RangeError on an invalid config
 */
export function buildLink<T>(spec: LinkSpec, rng: Rng): Link<T> {
  return new Link<T>(linkConfigFromSpec(spec), rng);
}

/**
 * Built-in two-path scenario: path0 8 Mbps / 30 ms one-way, path1 4 Mbps /
 * 60 ms one-way with 1% Bernoulli loss; drop-tail queues hold ~150 ms at the
 * link rate (150 000 and 75 000 bytes). Same as `scenarios/default.json`.
 */
export const DEFAULT_SCENARIO: Scenario = parseScenario(
  {
    name: 'default',
    durationS: 60,
    paths: [
      { name: 'path0', up: { rateMbps: 8, delayMs: 30, queue: { bytes: 150_000 } } },
      { name: 'path1', up: { rateMbps: 4, delayMs: 60, loss: 0.01, queue: { bytes: 75_000 } } },
    ],
  },
  '.',
);
