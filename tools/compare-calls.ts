/**
 * Run several real browser calls on one scenario and print one table row per
 * configuration (the numbers the issues' closing notes ask for).
 *
 *   node --import tsx tools/compare-calls.ts --scenario sim/net/scenarios/default.json \
 *        --compare converge,minrtt,single:0 [--fec path] [--duration 30] [--out out/compare]
 *
 * `--compare` takes the benchmarks' list (bench/compare.ts: a scheduler name,
 * `single:N`, an optional `@fec` suffix); `--configs` is its older name, and
 * there `fec:POLICY` still means `converge@POLICY`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareEntriesHelp, parseCompare } from '../bench/compare.js';
import { fecPolicyNames } from '../src/fec/factory.js';
import { DEFAULT_SCENARIO, loadScenario } from '../sim/net/scenario.js';
import { scenarioFile } from '../sim/net/scenario-files.js';
import { numberOption, runCli } from './cli.js';
import { runCall } from './harness/run-call.js';

const USAGE = `usage: node --import tsx tools/compare-calls.ts [--scenario NAME|FILE.json] [--compare LIST] [--fec ${fecPolicyNames().join('|')}] [--duration S] [--out DIR]
  --compare entries: ${compareEntriesHelp()} (default converge,minrtt,single:0); --configs: the same (fec:POLICY = converge@POLICY)`;

runCli(
  {
    scenario: { type: 'string' },
    compare: { type: 'string' },
    configs: { type: 'string' },
    fec: { type: 'string', default: 'path' },
    duration: { type: 'string', default: '30' },
    out: { type: 'string', default: 'out/compare' },
  },
  USAGE,
  'compare-calls',
  async (values) => {
    if (values.compare !== undefined && values.configs !== undefined) throw new Error('--compare and --configs are the same option: give one');
    const list = (values.compare ?? values.configs ?? 'converge,minrtt,single:0').replace(/(^|,)\s*fec:/g, '$1converge@');
    const scenarioPath = values.scenario === undefined ? undefined : scenarioFile(values.scenario);
    const scenario = scenarioPath === undefined ? DEFAULT_SCENARIO : loadScenario(scenarioPath);
    const configs = parseCompare(list, { numPaths: scenario.paths.length, defaultFec: values.fec });
    const durationS = numberOption('duration', values.duration, 3, 3600);
    const outRoot = values.out!;
    const rows: string[] = [
      '| config | fps | frames sent / decoded / dropped | freezes (ms) | latency p50 / p95 ms | share % per path | FEC overhead / utilization % | NACKed | keyframe req. |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ];
    for (const c of configs) {
      if (c.kind !== 'multipath') continue; // parseCompare without `native` returns none
      const { report: r } = await runCall({
        scenario: scenarioPath,
        durationS,
        scheduler: c.scheduler,
        singlePath: c.singlePath,
        fec: c.fec,
        out: join(outRoot, c.name.replace(/[:@]/g, '-')),
      });
      const row = `| ${c.name} | ${r.fps} | ${r.frames.sent} / ${r.frames.decoded} / ${r.frames.dropped} | ${r.freezes.count} (${r.freezes.totalMs}) | ${r.latencyMs.p50} / ${r.latencyMs.p95} | ${r.paths.map((p) => p.sharePct).join(' / ')} | ${r.fec.overheadPct} / ${r.fec.utilizationPct} | ${r.nack.packetsNacked} | ${r.keyframeRequests} |`;
      rows.push(row);
      process.stderr.write(`${row}\n`);
    }
    mkdirSync(outRoot, { recursive: true });
    writeFileSync(join(outRoot, 'summary.md'), `${rows.join('\n')}\n`);
    process.stdout.write(`${rows.join('\n')}\n`);
    return 0;
  },
);
