/**
 * Scenario arguments of the browser CLIs: a JSON file, or the name of one in
 * sim/net/scenarios (`carriers` -> sim/net/scenarios/carriers.json).
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of the bundled scenario files. */
export const SCENARIO_DIR = resolve(dirname(fileURLToPath(import.meta.url)), 'scenarios');

/**
 * A path to an existing file as given; else `SCENARIO_DIR/<arg>.json`.
 * @throws Error naming the bundled scenarios when neither exists
 */
export function scenarioFile(arg: string): string {
  if (existsSync(arg)) return arg;
  const named = resolve(SCENARIO_DIR, `${arg.replace(/\.json$/, '')}.json`);
  if (existsSync(named)) return named;
  const have = readdirSync(SCENARIO_DIR)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.replace(/\.json$/, ''));
  throw new Error(`--scenario ${arg}: no such file, and not a bundled scenario (${have.join(', ')})`);
}
