/**
 * The start-up every command-line tool shares (`npm run call`, `bench`,
 * `bench:browser`, `bench:micro`, `fidelity`, `fuzz`, `gen:wire`,
 * tools/compare-calls.ts, the capture tools): node:util `parseArgs` with
 * `-h/--help`, option checks that print the usage, and one way to end.
 */
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';

type OptionConfig = NonNullable<ParseArgsConfig['options']>[string];
type WithHelp<O> = O & { help: { type: 'boolean'; short: 'h' } };
/** The parsed option values of `options` (strings, booleans, with their defaults). */
export type CliValues<O extends Record<string, OptionConfig>> = ReturnType<typeof parseArgs<{ options: WithHelp<O> }>>['values'];

/** A bad command line: {@link runCli} prints the message and the usage and exits with status 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * A numeric `--name` option.
 * @throws UsageError naming the option and its range when `v` is not a number in [min, max].
 */
export function numberOption(name: string, v: string | undefined, min: number, max: number): number {
  const n = Number(v);
  if (v === undefined || v.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new UsageError(`--${name} must be a number in [${min}, ${max}], got ${v}`);
  return n;
}

/** An integer `--name` option. @throws UsageError naming the option and its range. */
export function intOption(name: string, v: string | undefined, min: number, max: number): number {
  const n = numberOption(name, v, min, max);
  if (!Number.isInteger(n)) throw new UsageError(`--${name} must be an integer in [${min}, ${max}], got ${v}`);
  return n;
}

/** A `--name` option that must be one of `choices` (undefined stays undefined). @throws UsageError listing the choices. */
export function choiceOption<C extends string>(name: string, v: string | undefined, choices: readonly C[]): C | undefined {
  if (v === undefined) return undefined;
  if (!(choices as readonly string[]).includes(v)) throw new UsageError(`--${name} must be one of ${choices.join(', ')}, got ${v}`);
  return v as C;
}

/**
 * Parse `argv` with node:util `parseArgs` (plus `-h/--help`). Returns the
 * option values, or an exit code: 2 after printing the error and `usage` for
 * bad options, 0 after printing `usage` for `--help`.
 */
export function parseCli<O extends Record<string, OptionConfig>>(options: O, usage: string, argv: string[] = process.argv.slice(2)): CliValues<O> | number {
  const all = { ...options, help: { type: 'boolean', short: 'h' } } as WithHelp<O>;
  let values: CliValues<O>;
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

/**
 * Run a CLI: parse the command line ({@link parseCli}), run `main` and exit
 * with its status. A {@link UsageError} (from `main` or the option helpers)
 * prints its message and the usage and exits 2; any other error prints
 * `<name> failed: <stack>` and exits 1.
 */
export function runCli<O extends Record<string, OptionConfig>>(
  options: O,
  usage: string,
  name: string,
  main: (values: CliValues<O>) => Promise<number> | number,
  argv: string[] = process.argv.slice(2),
): void {
  const values = parseCli(options, usage, argv);
  if (typeof values === 'number') process.exit(values);
  Promise.resolve()
    .then(() => main(values))
    .then(
      (code) => process.exit(code),
      (e: unknown) => {
        if (e instanceof UsageError) {
          process.stderr.write(`${e.message}\n${usage}\n`);
          process.exit(2);
        }
        process.stderr.write(`${name} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
        process.exit(1);
      },
    );
}
