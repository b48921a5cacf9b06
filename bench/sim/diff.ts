/**
 * Compare two simulator benchmark runs, paired by (variant, seed)
 * (bench/sim/paired.ts): per half the total freeze per seed on each side, the
 * mean delta +- its standard error over seeds, the worst pair, and issue 10's
 * acceptance on each side.
 *
 *   npm run bench:diff -- --base out/bench/a/results.json --new out/bench/b/results.json [--config converge] [--pairs]
 *
 * `--base` / `--new` take one or more results.json files, comma-separated
 * (e.g. seeds 1-3 and 4-6 of the same code, or converge and single:* runs
 * written separately). Best single paths come from each side's own
 * `single:*` runs, or from the other side's when a side has none.
 * Exit codes: 0 compared, 1 a file is unreadable or holds no run of the
 * config with a partner on the other side, 2 usage.
 */
import { readFileSync } from 'node:fs';
import { UsageError, runCli } from '../../tools/cli.js';
import { type RunRow, pairedDiff, renderPairedDiff, runRows } from './paired.js';

const USAGE = 'usage: npm run bench:diff -- --base A.json[,A2.json] --new B.json[,B2.json] [--config converge] [--pairs]';

function load(list: string | undefined, side: string): RunRow[] {
  if (!list) throw new UsageError(`--${side} is required`);
  return list
    .split(',')
    .filter((f) => f !== '')
    .flatMap((file) => {
      let json: unknown;
      try {
        json = JSON.parse(readFileSync(file, 'utf8'));
      } catch (e) {
        throw new Error(`${file}: ${(e as Error).message}`);
      }
      return runRows(json, file);
    });
}

runCli(
  {
    base: { type: 'string' },
    new: { type: 'string' },
    config: { type: 'string', default: 'converge' },
    pairs: { type: 'boolean', default: false },
  },
  USAGE,
  'bench:diff',
  (v) => {
    const d = pairedDiff(load(v.base, 'base'), load(v.new, 'new'), v.config);
    process.stdout.write(renderPairedDiff(d, { pairs: v.pairs }));
    return 0;
  },
);
