/**
 * Small helpers shared by the command-line tools.
 */

/**
 * A numeric `--name` option.
 * @throws Error naming the option and its range when `v` is not a number in [min, max].
 */
export function numberOption(name: string, v: string | undefined, min: number, max: number): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`--${name} must be a number in [${min}, ${max}], got ${v}`);
  return n;
}
