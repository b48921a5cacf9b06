/**
 * Small helpers shared by the command-line tools.
 */
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';

type OptionConfig = NonNullable<ParseArgsConfig['options']>[string];

/**
 * A numeric `--name` option.
 * @throws Error naming the option and its range when `v` is not a number in [min, max].
 */
export function numberOption(name: string, v: string | undefined, min: number, max: number): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`--${name} must be a number in [${min}, ${max}], got ${v}`);
  return n;
}

/**
 * The start-up every CLI shares: parse `process.argv` with node:util
 * `parseArgs` (plus `-h/--help`). Returns the option values, or an exit code:
 * 2 after printing the error and `usage` for bad options, 0 after printing
 * `usage` for `--help`.
 */
export function parseCli<O extends Record<string, OptionConfig>>(
  options: O,
  usage: string,
  argv: string[] = process.argv.slice(2),
): ReturnType<typeof parseArgs<{ options: O & { help: { type: 'boolean'; short: 'h' } } }>>['values'] | number {
  const all = { ...options, help: { type: 'boolean', short: 'h' } } as O & { help: { type: 'boolean'; short: 'h' } };
  let values: ReturnType<typeof parseArgs<{ options: typeof all }>>['values'];
  try {
    ({ values } = parseArgs({ options: all, args: argv }));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${usage}\n`);
    return 2;
  }
  if ((values as { help?: boolean }).help) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  return values;
}
