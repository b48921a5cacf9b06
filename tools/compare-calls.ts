/**
 * Run several real browser calls on one scenario and print one table row per
 * configuration (the numbers the issues' closing notes ask for).
 *
 *   node --import tsx tools/compare-calls.ts --scenario sim/net/scenarios/default.json \
 *        --configs converge,minrtt,single:0 [--fec path] [--duration 30] [--out out/compare]
 *
 * A config is a scheduler name, `single:N`, or `fec:POLICY` (converge with that FEC policy).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runCall } from './harness/run-call.js';
import type { CallReport } from './harness/report.js';

const { values } = parseArgs({
  options: {
    scenario: { type: 'string' },
    configs: { type: 'string', default: 'converge,minrtt,single:0' },
    fec: { type: 'string', default: 'path' },
    duration: { type: 'string', default: '30' },
    out: { type: 'string', default: 'out/compare' },
  },
});

const rows: string[] = [
  '| config | fps | frames sent / decoded / dropped | freezes (ms) | latency p50 / p95 ms | share % per path | FEC overhead / utilization % | NACKed | keyframe req. |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
];
const reports: Record<string, CallReport> = {};
for (const config of (values.configs ?? '').split(',').filter(Boolean)) {
  let scheduler = config;
  let singlePath: number | undefined;
  let fec = values.fec ?? 'path';
  if (config.startsWith('single:')) {
    scheduler = 'single';
    singlePath = Number(config.slice(7));
  } else if (config.startsWith('fec:')) {
    scheduler = 'converge';
    fec = config.slice(4);
  }
  const { report: r } = await runCall({
    scenario: values.scenario,
    durationS: Number(values.duration),
    scheduler,
    singlePath,
    fec,
    out: join(values.out ?? 'out/compare', config.replace(':', '-')),
  });
  reports[config] = r;
  const row = `| ${config} | ${r.fps} | ${r.frames.sent} / ${r.frames.decoded} / ${r.frames.dropped} | ${r.freezes.count} (${r.freezes.totalMs}) | ${r.latencyMs.p50} / ${r.latencyMs.p95} | ${r.paths.map((p) => p.sharePct).join(' / ')} | ${r.fec.overheadPct} / ${r.fec.utilizationPct} | ${r.nack.packetsNacked} | ${r.keyframeRequests} |`;
  rows.push(row);
  process.stderr.write(`${row}\n`);
}
mkdirSync(values.out ?? 'out/compare', { recursive: true });
writeFileSync(join(values.out ?? 'out/compare', 'summary.md'), `${rows.join('\n')}\n`);
process.stdout.write(`${rows.join('\n')}\n`);
