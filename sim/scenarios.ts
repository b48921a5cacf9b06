/**
 * Built-in named scenarios of the simulator and benchmark (as validated
 * {@link Scenario} objects of sim/net/scenario.ts). A named scenario is a
 * list of VARIANTS (e.g. one per loss level or per trace pair); each variant
 * is one network scenario, run for every configuration and seed.
 *
 * | name | what |
 * | --- | --- |
 * | `collapse` | Converge Fig. 11: path 0 25 Mbps / 30 ms; path 1 25 Mbps / 15 ms (the low-RTT path minRTT prefers) collapses to 0.5-2.5 Mbps (new value every second) from 30 to 90 s; 120 s |
 * | `loss-sweep` | two 15 Mbps / 100 ms paths, Bernoulli loss L on both; variants L = 0, 1, 2, 5, 10 % |
 * | `carriers` | Verizon-LTE-short.up (40 ms) + TMobile-LTE-short.up (50 ms), feedback over the matching .down traces; 120 s |
 * | `wifi-cellular` | one variant per PATH_TRIAL pair of ../shared/traces/wifi-cellular (WiFi 15 ms, cellular 40 ms one-way) |
 * | `failover` | 8 Mbps / 30 ms + 6 Mbps / 50 ms; path 0 blackholes (both ways) from 20 to 30 s; 60 s |
 * | `constant` | 6 Mbps / 30 ms + 4 Mbps / 60 ms, drop-tail ~150 ms; 60 s |
 * | `flap` | the `failover` paths (8 Mbps / 30 ms + 6 Mbps / 50 ms); path 0 blackholes (both ways) for 1 s in every 3 s from 10 s on: a WiFi link at the edge of its range or a flaky cellular bearer; 60 s |
 * | `outage` | the same paths, both blackholed from 20 to 23 s: a tunnel, a lift, a WiFi-to-cellular handover with no overlap; 60 s |
 * | `delay-jump` | the same paths; path 0's one-way delay jumps from 30 ms to 250 ms at 20 s and back at 40 s (both ways): a cellular handover to a congested cell or a bufferbloated uplink; 60 s |
 * | `lossy-path` | the same paths; 30% random (Bernoulli) loss on path 0's media direction for the whole call: a WiFi link with heavy interference; 60 s |
 * | `soak` | the `constant` paths for 30 min: long-call stability (no freezes, flat memory; heap sampled every 60 s). No random loss: with 0.5% loss on both paths every lost packet costs a freeze (NACK recovery takes ~250 ms here), which is loss-sweep's subject, not a long call's |
 * | `overlay` | issue 16: two subflows, each direct or through one of K = 3 relays (own synthetic trace: a seeded per-second random walk, and own delay, 45-95 ms); subflow 0's best relay degrades at {@link OVERLAY.degradeAtS} s; 90 s; see {@link overlayScenario} |
 * | `fairness` | MPRTP §V-B fairness tests: two 2 Mbps / 100 ms / 300 ms-queue paths shared with cross traffic (single-path GCC video, bulk CUBIC or Reno); sim/scenarios-fairness.ts |
 * | `cellular` | the public cellular suite (issue 10): every pair of the mahimahi uplinks, every wifi-cellular pair, every 5G + LTE uplink pair of the 5G-uplink set; each variant is in the tune or the check half ({@link cellularHalf}) |
 *
 * Traces are read from `../shared/traces` beside the repository (tests and
 * benchmarks only; never the library). A JSON scenario file (sim/net/scenario.ts
 * format) is also accepted by {@link resolveScenario}.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Rng } from '../src/core/rng.js';
import { type Scenario, loadScenario, parseScenario } from './net/scenario.js';
import { fairnessVariants } from './scenarios-fairness.js';

/** Repository root (this file is sim/scenarios.ts). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Shared traces folder beside the repository. */
export const TRACES_DIR = resolve(REPO_ROOT, '../shared/traces');

/** One runnable variant of a named scenario. */
export interface ScenarioVariant {
  /** Variant label (e.g. `loss-5%`, `7_1`); the scenario name when there is one variant. */
  label: string;
  scenario: Scenario;
  /** Bernoulli loss of the variant (loss-sweep only), 0..1. */
  loss?: number;
  /** `cellular` only: the half of the suite the variant belongs to ({@link cellularHalf}). */
  half?: SuiteHalf;
}

/** Half of a public suite: tune on one, check on the other. */
export type SuiteHalf = 'tune' | 'check';

/**
 * Deterministic tune/check split of a suite: FNV-1a (32 bit) of the variant
 * label, even -> `tune`, odd -> `check`. Depends on nothing but the label, so
 * adding a trace never moves an existing pair to the other half.
 */
export function cellularHalf(label: string): SuiteHalf {
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return (h & 1) === 0 ? 'tune' : 'check';
}

export const SCENARIO_NAMES = [
  'collapse',
  'loss-sweep',
  'carriers',
  'wifi-cellular',
  'failover',
  'constant',
  'cellular',
  'flap',
  'outage',
  'delay-jump',
  'lossy-path',
  'soak',
  'overlay',
  'fairness',
] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

/** The fault scenarios of issue 11 (each has an acceptance line in summary.md, bench/sim/report.ts). */
export const FAULT_SCENARIOS = ['flap', 'outage', 'delay-jump', 'lossy-path', 'soak', 'failover'] as const;

/** `flap`: path 0 is down [t, t + FLAP_DOWN_S) for t = FLAP_FROM_S, FLAP_FROM_S + FLAP_PERIOD_S, ... */
export const FLAP = { fromS: 10, periodS: 3, downS: 1, durationS: 60 } as const;
/** `outage`: both paths down [fromS, toS). */
export const OUTAGE = { fromS: 20, toS: 23, durationS: 60 } as const;
/** `delay-jump`: path 0's one-way delay is `jumpMs` in [fromS, toS), else 30 ms. */
export const DELAY_JUMP = { fromS: 20, toS: 40, jumpMs: 250, durationS: 60 } as const;
/** `lossy-path`: Bernoulli loss on path 0 (media direction). */
export const LOSSY_PATH_LOSS = 0.3;
/** `soak`: call length (s), heap sample interval (simulated s). */
export const SOAK = { durationS: 1800, heapSampleS: 60 } as const;

/** The two paths the fault scenarios share (the `failover` paths), path 0 with extra link fields. */
function faultPaths(path0: Record<string, unknown> = {}, path1: Record<string, unknown> = {}): unknown[] {
  return [
    { name: 'path0', up: { rateMbps: 8, delayMs: 30, queue: { ms: 150 }, ...path0 } },
    { name: 'path1', up: { rateMbps: 6, delayMs: 50, queue: { ms: 150 }, ...path1 } },
  ];
}

/** Loss levels of `loss-sweep` (probability). */
export const LOSS_SWEEP_LEVELS = [0, 0.01, 0.02, 0.05, 0.1];

function trace(rel: string): string {
  const f = resolve(TRACES_DIR, rel);
  if (!existsSync(f)) {
    throw new Error(`trace not found: ${f} (the simulator expects the shared traces at ${TRACES_DIR}, i.e. ../shared/traces beside the repository)`);
  }
  return f;
}

function build(obj: unknown): Scenario {
  return parseScenario(obj, REPO_ROOT);
}

/** Collapse schedule: a new rate in [0.5, 2.5] Mbps every second from 30 to 90 s (fixed seed), then back. */
function collapseSchedule(): Array<{ atS: number; rateMbps: number | null }> {
  const rng = new Rng(11);
  const steps: Array<{ atS: number; rateMbps: number | null }> = [];
  for (let t = 30; t < 90; t++) steps.push({ atS: t, rateMbps: Math.round((0.5 + 2 * rng.next()) * 100) / 100 });
  steps.push({ atS: 90, rateMbps: null });
  return steps;
}

/** WiFi/cellular pairs (PATH_TRIAL) present in the shared traces, sorted. */
export function wifiCellularPairs(): string[] {
  const dir = resolve(TRACES_DIR, 'wifi-cellular');
  if (!existsSync(dir)) throw new Error(`trace folder not found: ${dir} (expected ../shared/traces/wifi-cellular beside the repository)`);
  const files = new Set(readdirSync(dir));
  const pairs: string[] = [];
  for (const f of files) {
    const m = /^(\d+_\d+)_wifi\.csv$/.exec(f);
    if (m && files.has(`${m[1]}_cellular.csv`)) pairs.push(m[1]);
  }
  const key = (p: string) => p.split('_').map(Number);
  return pairs.sort((a, b) => key(a)[0] - key(b)[0] || key(a)[1] - key(b)[1]);
}

function csvSeconds(file: string): number {
  // One line per second; the trace loops after its end, so the shorter pair member bounds the run.
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l: string) => l.trim() !== '').length;
}

/** Longest call of the cellular suite (s); shorter traces bound their pairs. */
export const CELLULAR_MAX_DURATION_S = 120;

/** Mahimahi uplinks of the cellular suite: file stem and one-way propagation delay (ms). */
const MAHIMAHI_UPLINKS: ReadonlyArray<{ stem: string; name: string; delayMs: number }> = [
  { stem: 'Verizon-LTE-short', name: 'verizon', delayMs: 40 },
  { stem: 'TMobile-LTE-short', name: 'tmobile', delayMs: 50 },
  { stem: 'ATT-LTE-driving', name: 'att', delayMs: 60 },
];

/** 5G-uplink runs paired 5G mmWave + LTE (same scenario and position). */
const FIVEG_RUNS: readonly string[] = [
  'walking/away',
  'walking/toward',
  'walking/lateral',
  'static/away_p1',
  'static/away_p2',
  'static/away_p3',
  'static/toward_p1',
  'static/toward_p2',
  'static/toward_p3',
];

/** Samples (1 s each) in Run 1 of a 5G-uplink `.list` file. */
function listRun1Seconds(file: string): number {
  let run = 0;
  let n = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*Run\b/i.test(line)) {
      run++;
      continue;
    }
    if (run === 1) n += line.split(',').filter((x) => x.trim() !== '').length;
  }
  return n;
}

/**
 * The public cellular suite (issue 10 item 5): every pair of mahimahi
 * uplinks (feedback over the matching downlinks, 300 ms drop-tail), every
 * wifi-cellular pair, and 5G mmWave + LTE uplink pairs of the 5G-uplink set
 * (one-way delay from the matching ping run, RTT / 2). Calls last
 * {@link CELLULAR_MAX_DURATION_S} or the shorter trace of the pair.
 */
function cellularSuite(): ScenarioVariant[] {
  const out: ScenarioVariant[] = [];
  const add = (label: string, scenario: Scenario) => out.push({ label, scenario, half: cellularHalf(label) });
  for (let a = 0; a < MAHIMAHI_UPLINKS.length; a++) {
    for (let b = a + 1; b < MAHIMAHI_UPLINKS.length; b++) {
      const paths = [MAHIMAHI_UPLINKS[a], MAHIMAHI_UPLINKS[b]].map((m) => ({
        name: m.name,
        up: { trace: trace(`mahimahi/${m.stem}.up`), traceFormat: 'mahimahi', delayMs: m.delayMs, queue: { ms: 300 } },
        down: { trace: trace(`mahimahi/${m.stem}.down`), traceFormat: 'mahimahi', delayMs: m.delayMs, queue: { ms: 300 } },
      }));
      const label = `mm:${paths[0].name}+${paths[1].name}`;
      add(label, build({ name: `cellular-${label}`, durationS: CELLULAR_MAX_DURATION_S, paths }));
    }
  }
  for (const v of namedScenario('wifi-cellular')) {
    const label = `wc:${v.label}`;
    add(label, { ...v.scenario, name: `cellular-${label}`, durationS: Math.min(CELLULAR_MAX_DURATION_S, v.scenario.durationS ?? CELLULAR_MAX_DURATION_S) });
  }
  for (const run of FIVEG_RUNS) {
    const link = (net: '5g' | 'lte') => ({
      trace: trace(`5g-uplink/throughput/${run.split('/')[0]}/${net}/${run.split('/')[1]}.list`),
      traceFormat: 'mbps-list',
      delayTrace: trace(`5g-uplink/ping/${run.split('/')[0]}/${net}/${run.split('/')[1]}.list`),
      queue: { ms: 200 },
    });
    const up5g = link('5g');
    const upLte = link('lte');
    const secs = Math.min(listRun1Seconds(up5g.trace), listRun1Seconds(upLte.trace), listRun1Seconds(up5g.delayTrace), listRun1Seconds(upLte.delayTrace));
    const label = `5g:${run.replace('/', '-')}`;
    add(
      label,
      build({
        name: `cellular-${label}`,
        durationS: Math.max(10, Math.min(CELLULAR_MAX_DURATION_S, secs - 1)),
        paths: [
          { name: '5g', up: up5g },
          { name: 'lte', up: upLte },
        ],
      }),
    );
  }
  return out;
}

/**
 * Variants of a built-in scenario.
 * @throws Error for an unknown name or missing traces
 */
export function namedScenario(name: string): ScenarioVariant[] {
  switch (name) {
    case 'collapse':
      return [
        {
          label: 'collapse',
          scenario: build({
            name: 'collapse',
            durationS: 120,
            paths: [
              { name: 'stable', up: { rateMbps: 25, delayMs: 30, queue: { ms: 200 } } },
              { name: 'collapsing', up: { rateMbps: 25, delayMs: 15, queue: { ms: 200 }, schedule: collapseSchedule() } },
            ],
          }),
        },
      ];
    case 'loss-sweep':
      return LOSS_SWEEP_LEVELS.map((loss) => ({
        label: `loss-${Math.round(loss * 100)}%`,
        loss,
        scenario: build({
          name: `loss-sweep-${Math.round(loss * 100)}`,
          durationS: 60,
          paths: [
            { name: 'path0', up: { rateMbps: 15, delayMs: 100, loss, queue: { bytes: 281_250 } } },
            { name: 'path1', up: { rateMbps: 15, delayMs: 100, loss, queue: { bytes: 281_250 } } },
          ],
        }),
      }));
    case 'carriers':
      return [
        {
          label: 'carriers',
          scenario: build({
            name: 'carriers',
            durationS: 120,
            paths: [
              {
                name: 'verizon',
                up: { trace: trace('mahimahi/Verizon-LTE-short.up'), traceFormat: 'mahimahi', delayMs: 40, queue: { ms: 300 } },
                down: { trace: trace('mahimahi/Verizon-LTE-short.down'), traceFormat: 'mahimahi', delayMs: 40, queue: { ms: 300 } },
              },
              {
                name: 'tmobile',
                up: { trace: trace('mahimahi/TMobile-LTE-short.up'), traceFormat: 'mahimahi', delayMs: 50, queue: { ms: 300 } },
                down: { trace: trace('mahimahi/TMobile-LTE-short.down'), traceFormat: 'mahimahi', delayMs: 50, queue: { ms: 300 } },
              },
            ],
          }),
        },
      ];
    case 'wifi-cellular':
      return wifiCellularPairs().map((pair) => {
        const wifi = trace(`wifi-cellular/${pair}_wifi.csv`);
        const cell = trace(`wifi-cellular/${pair}_cellular.csv`);
        const durationS = Math.max(10, Math.min(csvSeconds(wifi), csvSeconds(cell)) - 1);
        return {
          label: pair,
          scenario: build({
            name: `wifi-cellular-${pair}`,
            durationS,
            paths: [
              { name: 'wifi', up: { trace: wifi, traceFormat: 'csv', delayMs: 15, queue: { ms: 200 } } },
              { name: 'cellular', up: { trace: cell, traceFormat: 'csv', delayMs: 40, queue: { ms: 200 } } },
            ],
          }),
        };
      });
    case 'failover':
      return [
        {
          label: 'failover',
          scenario: build({
            name: 'failover',
            durationS: 60,
            paths: [
              { name: 'path0', up: { rateMbps: 8, delayMs: 30, queue: { ms: 150 }, downPeriods: [[20, 30]] } },
              { name: 'path1', up: { rateMbps: 6, delayMs: 50, queue: { ms: 150 } } },
            ],
          }),
        },
      ];
    case 'constant':
      return [
        {
          label: 'constant',
          scenario: build({
            name: 'constant',
            durationS: 60,
            paths: [
              { name: 'path0', up: { rateMbps: 6, delayMs: 30, queue: { bytes: 112_500 } } },
              { name: 'path1', up: { rateMbps: 4, delayMs: 60, queue: { bytes: 75_000 } } },
            ],
          }),
        },
      ];
    case 'cellular':
      return cellularSuite();
    case 'flap': {
      const down: Array<[number, number]> = [];
      for (let t = FLAP.fromS; t + FLAP.downS <= FLAP.durationS; t += FLAP.periodS) down.push([t, t + FLAP.downS]);
      return [{ label: 'flap', scenario: build({ name: 'flap', durationS: FLAP.durationS, paths: faultPaths({ downPeriods: down }) }) }];
    }
    case 'outage': {
      const down = { downPeriods: [[OUTAGE.fromS, OUTAGE.toS]] };
      return [{ label: 'outage', scenario: build({ name: 'outage', durationS: OUTAGE.durationS, paths: faultPaths(down, down) }) }];
    }
    case 'delay-jump': {
      const schedule = [
        { atS: DELAY_JUMP.fromS, delayMs: DELAY_JUMP.jumpMs },
        { atS: DELAY_JUMP.toS, delayMs: null },
      ];
      return [{ label: 'delay-jump', scenario: build({ name: 'delay-jump', durationS: DELAY_JUMP.durationS, paths: faultPaths({ schedule }) }) }];
    }
    case 'lossy-path':
      return [{ label: 'lossy-path', scenario: build({ name: 'lossy-path', durationS: 60, paths: faultPaths({ loss: LOSSY_PATH_LOSS }) }) }];
    case 'overlay':
      return [{ label: 'overlay', scenario: overlayScenario() }];
    case 'soak':
      return [
        {
          label: 'soak',
          scenario: build({
            name: 'soak',
            durationS: SOAK.durationS,
            paths: [
              { name: 'path0', up: { rateMbps: 6, delayMs: 30, queue: { bytes: 112_500 } } },
              { name: 'path1', up: { rateMbps: 4, delayMs: 60, queue: { bytes: 75_000 } } },
            ],
          }),
        },
      ];
    case 'fairness':
      return fairnessVariants().map((f) => ({ label: f.label, half: f.half, scenario: build(f.scenario) }));
    default:
      throw new Error(`unknown scenario "${name}" (built-in: ${SCENARIO_NAMES.join(', ')}; or give a scenario .json file)`);
  }
}

/** A built-in name or a scenario JSON file. @throws Error / ScenarioError */
export function resolveScenario(nameOrFile: string): ScenarioVariant[] {
  if ((SCENARIO_NAMES as readonly string[]).includes(nameOrFile)) return namedScenario(nameOrFile);
  if (nameOrFile.endsWith('.json') || existsSync(nameOrFile)) {
    const s = loadScenario(nameOrFile);
    return [{ label: s.name, scenario: s }];
  }
  return namedScenario(nameOrFile);
}

// --- overlay (issue 16) ---

/** `overlay`: call length, when relay `r1` of subflow 0 degrades, and to what. */
export const OVERLAY = { durationS: 90, degradeAtS: 40, degradedMbps: 0.8, degradedDelayMs: 160 } as const;

/**
 * A synthetic capacity trace as scenario schedule steps: a new rate every
 * second, a random walk of +/-15 % steps kept within [0.7, 1.3] x the mean
 * (seeded: the same trace every run).
 */
function walkSchedule(meanMbps: number, seed: number, durationS: number): Array<{ atS: number; rateMbps: number }> {
  const rng = new Rng(seed);
  let x = 1;
  const out: Array<{ atS: number; rateMbps: number }> = [];
  for (let t = 1; t < durationS; t++) {
    x = Math.min(1.3, Math.max(0.7, x + (rng.next() - 0.5) * 0.3));
    out.push({ atS: t, rateMbps: Math.round(meanMbps * x * 100) / 100 });
  }
  return out;
}

/**
 * The `overlay` scenario (Zhang & Lei §4.2's setting, our numbers): two
 * subflows (multi-homed sender: `wifi`, `lte`), each can go direct or through
 * one of K = 3 relays. Every route has its own synthetic trace around its mean
 * rate and its own one-way delay within the paper's 50-100 ms (one direct
 * route at 45 ms); drop-tail queues of 200 ms. Means (Mbps / one-way ms):
 *
 * | subflow | direct | r1 | r2 | r3 |
 * | --- | --- | --- | --- | --- |
 * | wifi | 1.5 / 45 | 4 / 60 -> 0.8 / 160 at 40 s | 3 / 70 | 2 / 90 |
 * | lte | 2 / 55 | 1 / 60 | 3.5 / 80 | 2.5 / 65 |
 *
 * Subflow wifi's best relay r1 degrades at {@link OVERLAY.degradeAtS} s
 * (capacity and delay: an overloaded relay), after which r2 is its best.
 * A relay switch costs the default gap (DEFAULT_RELAY_SWITCH_MS).
 */
export function overlayScenario(): Scenario {
  const d = OVERLAY.durationS;
  const route = (name: string, mbps: number, delayMs: number, seed: number, extra: Array<Record<string, unknown>> = []) => ({
    name,
    up: {
      rateMbps: mbps,
      delayMs,
      queue: { ms: 200 },
      schedule: [...walkSchedule(mbps, seed, d).filter((st) => !extra.some((e) => (e.atS as number) <= st.atS)), ...extra],
    },
  });
  const degraded = [{ atS: OVERLAY.degradeAtS, rateMbps: OVERLAY.degradedMbps, delayMs: OVERLAY.degradedDelayMs }];
  const wifiDirect = route('wifi', 1.5, 45, 101);
  const lteDirect = route('lte', 2, 55, 201);
  return build({
    name: 'overlay',
    durationS: d,
    paths: [
      { ...wifiDirect, relays: [route('wifi:r1', 4, 60, 102, degraded), route('wifi:r2', 3, 70, 103), route('wifi:r3', 2, 90, 104)] },
      { ...lteDirect, relays: [route('lte:r1', 1, 60, 202), route('lte:r2', 3.5, 80, 203), route('lte:r3', 2.5, 65, 204)] },
    ],
  });
}

/** The relay switch mid-call (issue 16): when the relay grows and the oracle moves path a onto it (s). */
export const RELAY_SWITCH_AT_S = 5;

/**
 * A relay switch mid-call: path a goes direct (1 Mbps) until its relay grows
 * from 0.5 to 4 Mbps at RELAY_SWITCH_AT_S, where the oracle relay policy moves
 * it there; path b 1.5 Mbps; 200 ms drop-tail queues. Used by
 * tests/unit/sim/overlay.test.ts and `npm run bench:relay-ramp`
 * (bench/sim/relay-ramp.ts).
 */
export function relaySwitchScenario(durationS = 12): Scenario {
  return parseScenario(
    {
      name: 'switch',
      durationS,
      paths: [
        {
          name: 'a',
          up: { rateMbps: 1, delayMs: 40, queue: { ms: 200 } },
          relays: [{ name: 'a:r', up: { rateMbps: 0.5, delayMs: 50, queue: { ms: 200 }, schedule: [{ atS: RELAY_SWITCH_AT_S, rateMbps: 4 }] } }],
        },
        { name: 'b', up: { rateMbps: 1.5, delayMs: 50, queue: { ms: 200 } } },
      ],
    },
    '.',
  );
}
