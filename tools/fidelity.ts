/**
 * `npm run fidelity -- [--scenarios constant,carriers,failover,collapse,wifi-cellular]
 *    [--duration S] [--seeds N] [--pair ID] [--max-bitrate BPS] [--synthetic] [--sim-only] [--reuse-browser] [--strict] [--out DIR]
 *    [--datachannel sctp|ideal] [--browser-from DIR]
 *
 * `--reuse-browser` keeps a browser result already in DIR for the same
 * scenario and duration; `--browser-from DIR` reads the browser results of
 * an earlier run's `--out DIR` (both: re-check a simulator calibration
 * without re-running the browser). `--datachannel` picks the simulator's
 * datachannel model (sim/datachannel-model.ts; default sctp).
 *
 * Runs each named scenario in the simulator (sim/simulator.ts, `--seeds`
 * seeds, mean) and in the browser (`npm run bench:browser -- --compare
 * converge`, one run) for the same duration and the same scenario file, and
 * prints fps, freeze total, goodput and p95 latency side by side with the
 * relative difference (tools/fidelity/compare.ts). Writes DIR/fidelity.md and
 * DIR/fidelity.json (default DIR out/fidelity); the scenario files, the
 * simulator's and the browser's own results stay under DIR/<scenario>/.
 *
 * Exit status: 0 when every run produced numbers; 1 when a run failed (or,
 * with `--strict`, when a metric is outside its tolerance); 2 on bad options.
 * Needs ../shared/traces (and, for the browser, Chromium). Start it under the
 * machine's browser lock when other browser runs may be going on.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type CliValues, numberOption, runCli } from './cli.js';
import { type QoeNumbers, compareQoe, meanQoe, renderFidelityMd } from './fidelity/compare.js';
import { REPO_ROOT, namedScenario, wifiCellularPairs } from '../sim/scenarios.js';
import { simulate } from '../sim/simulator.js';
import type { Scenario } from '../sim/net/scenario.js';

const USAGE = `usage: npm run fidelity -- [--scenarios constant,carriers,failover,collapse,wifi-cellular] [--duration S]
       [--seeds N] [--pair ID] [--max-bitrate BPS] [--synthetic] [--sim-only] [--reuse-browser] [--strict] [--out DIR]
       [--datachannel sctp|ideal] (the simulator's datachannel model, default sctp)
       [--browser-from DIR] (reuse the browser results of an earlier run's --out DIR: simulator-only iteration)`;
const DEFAULT_SCENARIOS = 'constant,carriers,failover,collapse,wifi-cellular';

function scenarioFor(name: string, pair: string | undefined): Scenario {
  const variants = namedScenario(name);
  if (name !== 'wifi-cellular') return variants[0].scenario;
  const want = pair ?? wifiCellularPairs()[0];
  const v = variants.find((x) => x.label === want);
  if (!v) throw new Error(`--pair ${want}: no such wifi-cellular pair (have ${variants.map((x) => x.label).join(', ')})`);
  return v.scenario;
}

const OPTIONS = {
  scenarios: { type: 'string', default: DEFAULT_SCENARIOS },
  duration: { type: 'string' },
  seeds: { type: 'string', default: '3' },
  pair: { type: 'string' },
  'max-bitrate': { type: 'string', default: '6000000' },
  synthetic: { type: 'boolean', default: false },
  'sim-only': { type: 'boolean', default: false },
  'reuse-browser': { type: 'boolean', default: false },
  strict: { type: 'boolean', default: false },
  out: { type: 'string', default: 'out/fidelity' },
  datachannel: { type: 'string', default: 'sctp' },
  'browser-from': { type: 'string' },
} as const;

async function main(values: CliValues<typeof OPTIONS>): Promise<number> {
  const seeds = numberOption('seeds', values.seeds, 1, 100);
  const maxBitrateBps = numberOption('max-bitrate', values['max-bitrate'], 100_000, 100e6);
  const durationCap = values.duration === undefined ? undefined : numberOption('duration', values.duration, 3, 3600);
  const outDir = resolve(REPO_ROOT, values.out!);
  const datachannel = values.datachannel;
  if (datachannel !== 'sctp' && datachannel !== 'ideal') {
    process.stderr.write(`--datachannel must be sctp or ideal, got ${datachannel}\n${USAGE}\n`);
    return 2;
  }
  const browserFrom = values['browser-from'] === undefined ? undefined : resolve(REPO_ROOT, values['browser-from']);
  const names = values
    .scenarios!.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const rows: Array<{ scenario: string; durationS: number; comparisons: ReturnType<typeof compareQoe> }> = [];
  const json: unknown[] = [];
  const failures: string[] = [];
  for (const name of names) {
    const base = scenarioFor(name, values.pair);
    const durationS = Math.round(Math.min(base.durationS ?? 60, durationCap ?? Infinity));
    const scenario: Scenario = { ...base, durationS };
    const dir = resolve(outDir, scenario.name ?? name);
    mkdirSync(dir, { recursive: true });
    const file = resolve(dir, 'scenario.json');
    writeFileSync(file, `${JSON.stringify(scenario, null, 1)}\n`);

    process.stderr.write(`[${name}] simulator: ${seeds} seed(s) x ${durationS} s\n`);
    const simRuns: QoeNumbers[] = [];
    for (let seed = 1; seed <= seeds; seed++) {
      const r = simulate({ scenario, scheduler: 'converge', fec: 'path', seed, durationS, maxBitrateBps, datachannel });
      simRuns.push({ fps: r.fps, freezeTotalMs: r.freezes.totalMs, goodputBps: r.goodputBps, latencyP95Ms: r.latencyMs.p95 });
    }
    writeFileSync(resolve(dir, 'sim.json'), `${JSON.stringify(simRuns, null, 1)}\n`);
    const sim = meanQoe(simRuns);
    if (values['sim-only']) {
      json.push({ scenario: name, durationS, sim });
      process.stderr.write(`[${name}] sim: ${JSON.stringify(sim)}\n`);
      continue;
    }

    const browserOut = browserFrom ? resolve(browserFrom, scenario.name ?? name, 'browser') : resolve(dir, 'browser');
    const resultsFile = resolve(browserOut, 'results.json');
    const reusable = values['reuse-browser'] && existsSync(resultsFile) && (JSON.parse(readFileSync(resultsFile, 'utf8')) as { durationS?: number }).durationS === durationS;
    if (browserFrom || reusable) {
      process.stderr.write(`[${name}] browser: reusing ${resultsFile}${browserFrom ? ' (same scenario and duration assumed)' : ''}\n`);
    } else {
      process.stderr.write(`[${name}] browser: bench:browser --compare converge, ${durationS} s\n`);
      const args = [
        '--import',
        'tsx',
        resolve(REPO_ROOT, 'bench/browser/main.ts'),
        '--scenario',
        file,
        '--compare',
        'converge',
        '--duration',
        String(durationS),
        '--max-bitrate',
        String(maxBitrateBps),
        '--out',
        browserOut,
      ];
      if (values.synthetic) args.push('--synthetic');
      const run = spawnSync(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
      if (run.status !== 0) failures.push(`${name}: bench:browser exited with ${run.status ?? run.signal}`);
    }
    if (!existsSync(resultsFile)) {
      failures.push(`${name}: no ${resultsFile}`);
      continue;
    }
    const br = JSON.parse(readFileSync(resultsFile, 'utf8')) as { results: Array<{ name: string; fps: number; freezes: { totalMs: number }; goodputBps: number; latencyMs: { p95: number | null } }> };
    const b = br.results.find((x) => x.name === 'converge');
    if (!b) {
      failures.push(`${name}: no converge result in ${resultsFile}`);
      continue;
    }
    const browser: QoeNumbers = { fps: b.fps, freezeTotalMs: b.freezes.totalMs, goodputBps: b.goodputBps, latencyP95Ms: b.latencyMs.p95 ?? NaN };
    const comparisons = compareQoe(sim, browser);
    rows.push({ scenario: name, durationS, comparisons });
    json.push({ scenario: name, durationS, seeds, sim, simRuns, browser, comparisons });
  }
  mkdirSync(outDir, { recursive: true });
  writeFileSync(resolve(outDir, 'fidelity.json'), `${JSON.stringify(json, null, 1)}\n`);
  if (!values['sim-only']) {
    const md = `# Fidelity: simulator vs browser\n\n${renderFidelityMd(
      rows,
      failures.map((f) => `FAILED ${f}`),
    )}`;
    writeFileSync(resolve(outDir, 'fidelity.md'), md);
    process.stdout.write(`\n${md}\nwrote ${outDir}/fidelity.md, fidelity.json\n`);
  }
  const out = rows.flatMap((r) => r.comparisons.filter((c) => !c.within).map((c) => `${r.scenario} ${c.metric}`));
  if (out.length) process.stderr.write(`outside tolerance: ${out.join(', ')}\n`);
  if (failures.length) return 1;
  return values.strict && out.length ? 1 : 0;
}

runCli(OPTIONS, USAGE, 'fidelity', main);
