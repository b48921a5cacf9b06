/**
 * Built-in named scenarios of the simulator and benchmark (as validated
 * {@link Scenario} objects of tools/net/scenario.ts). A named scenario is a
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
 * | `cellular` | the public cellular suite ({@link cellularVariants}): every pair of the mahimahi LTE uplinks, every wifi-cellular pair, every 5G mmWave + LTE uplink pair; split into a tune half and a check half ({@link cellularHalf}) |
 *
 * Traces are read from `../shared/traces` beside the repository (tests and
 * benchmarks only; never the library). A JSON scenario file (tools/net/scenario.ts
 * format) is also accepted by {@link resolveScenario}.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Rng } from '../src/core/rng.js';
import { type Scenario, loadScenario, parseScenario } from '../tools/net/scenario.js';

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
}

export const SCENARIO_NAMES = ['collapse', 'loss-sweep', 'carriers', 'wifi-cellular', 'failover', 'constant', 'cellular'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

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
  return readFileSync(file, 'utf8').split('\n').filter((l: string) => l.trim() !== '').length;
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
      return cellularVariants();
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

/** One-way delays (ms) given to the mahimahi LTE uplinks (the traces carry capacity only; as `carriers`). */
const LTE_DELAY_MS: Record<string, number> = { Verizon: 40, TMobile: 50, ATT: 60 };

/**
 * Which half of the cellular suite a pair belongs to: `tune` (change the code
 * while looking at these) or `check` (look only to confirm). Deterministic:
 * the parity of the FNV-1a hash of the pair's label, so a new trace lands in
 * a half without moving the others.
 */
export function cellularHalf(label: string): 'tune' | 'check' {
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % 2 === 0 ? 'tune' : 'check';
}

/**
 * The public cellular suite: every two-path pair that can be drawn from
 * ../shared/traces of the same kind the acceptance traces are (issue "Adapt
 * the media to the network", item 5):
 * - `lte:A+B`: each pair of the mahimahi LTE uplinks (Verizon, T-Mobile,
 *   AT&T driving), feedback over the matching downlinks, one-way delays
 *   40/50/60 ms, 300 ms drop-tail queues; 120 s;
 * - `wc:P_T`: each wifi-cellular pair (as the `wifi-cellular` scenario);
 * - `5g:S/N`: 5G mmWave + LTE uplink of the same place and run (run 1 of
 *   each `.list`, one-way delay from the matching ping trace), 200 ms
 *   queues; 60 s.
 * @throws Error when a trace folder is missing
 */
export function cellularVariants(): ScenarioVariant[] {
  const out: ScenarioVariant[] = [];
  const carriers = ['Verizon-LTE-short', 'TMobile-LTE-short', 'ATT-LTE-driving'];
  const short = (c: string) => c.split('-')[0];
  for (let i = 0; i < carriers.length; i++) {
    for (let j = i + 1; j < carriers.length; j++) {
      const path = (c: string) => ({
        name: short(c),
        up: { trace: trace(`mahimahi/${c}.up`), traceFormat: 'mahimahi', delayMs: LTE_DELAY_MS[short(c)], queue: { ms: 300 } },
        down: { trace: trace(`mahimahi/${c}.down`), traceFormat: 'mahimahi', delayMs: LTE_DELAY_MS[short(c)], queue: { ms: 300 } },
      });
      const label = `lte:${short(carriers[i])}+${short(carriers[j])}`;
      out.push({ label, scenario: build({ name: label, durationS: 120, paths: [path(carriers[i]), path(carriers[j])] }) });
    }
  }
  for (const v of namedScenario('wifi-cellular')) out.push({ label: `wc:${v.label}`, scenario: { ...v.scenario, name: `wc:${v.label}` } });
  const g = resolve(TRACES_DIR, '5g-uplink/throughput');
  if (!existsSync(g)) throw new Error(`trace folder not found: ${g} (expected ../shared/traces/5g-uplink beside the repository)`);
  for (const mobility of readdirSync(g).sort()) {
    const fiveG = resolve(g, mobility, '5g');
    if (!existsSync(fiveG)) continue;
    for (const f of readdirSync(fiveG).filter((x) => x.endsWith('.list')).sort()) {
      const lte = `5g-uplink/throughput/${mobility}/lte/${f}`;
      if (!existsSync(resolve(TRACES_DIR, lte))) continue;
      const ping = (net: string) => {
        const p = `5g-uplink/ping/${mobility}/${net}/${f}`;
        return existsSync(resolve(TRACES_DIR, p)) ? { delayTrace: trace(p) } : { delayMs: net === '5g' ? 15 : 30 };
      };
      const label = `5g:${mobility}/${f.replace(/\.list$/, '')}`;
      out.push({
        label,
        scenario: build({
          name: label,
          durationS: 60,
          paths: [
            { name: '5g', up: { trace: trace(`5g-uplink/throughput/${mobility}/5g/${f}`), traceFormat: 'mbps-list', traceRun: 1, ...ping('5g'), queue: { ms: 200 } } },
            { name: 'lte', up: { trace: trace(lte), traceFormat: 'mbps-list', traceRun: 1, ...ping('lte'), queue: { ms: 200 } } },
          ],
        }),
      });
    }
  }
  return out;
}
