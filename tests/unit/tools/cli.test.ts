import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { UsageError, choiceOption, intOption, numberOption, parseCli } from '../../../tools/cli.js';

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), 'cli-fixture.ts');
const run = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', FIXTURE, ...args], { encoding: 'utf8', timeout: 60_000 });

describe('option helpers', () => {
  it.each([
    ['numberOption', () => numberOption('x', '2.5', 0, 3), 2.5],
    ['intOption', () => intOption('x', '7', 0, 9), 7],
    ['choiceOption', () => choiceOption('x', 'b', ['a', 'b'] as const), 'b'],
    ['choiceOption (absent)', () => choiceOption('x', undefined, ['a']), undefined],
  ])('%s accepts a good value', (_name, f, want) => {
    expect(f()).toBe(want);
  });

  it.each([
    ['a number out of range', () => numberOption('x', '4', 0, 3), /--x must be a number in \[0, 3\], got 4/],
    ['not a number', () => numberOption('x', 'abc', 0, 3), /--x must be a number/],
    ['an empty value', () => numberOption('x', '', 0, 3), /--x must be a number/],
    ['a missing value', () => numberOption('x', undefined, 0, 3), /--x must be a number/],
    ['a fraction for an integer', () => intOption('x', '1.5', 0, 3), /--x must be an integer/],
    ['an unknown choice', () => choiceOption('x', 'c', ['a', 'b']), /--x must be one of a, b, got c/],
  ])('rejects %s with a UsageError naming the option', (_name, f, msg) => {
    expect(f).toThrow(UsageError);
    expect(f).toThrow(msg);
  });
});

describe('parseCli', () => {
  const opts = { out: { type: 'string', default: 'o' }, flag: { type: 'boolean', default: false } } as const;
  it('returns the values with their defaults', () => {
    const v = parseCli(opts, 'usage', ['--flag']);
    expect(v).toMatchObject({ out: 'o', flag: true });
  });
  it('returns 2 for an unknown option and 0 for --help', () => {
    const err = process.stderr.write;
    const out = process.stdout.write;
    process.stderr.write = () => true;
    process.stdout.write = () => true;
    try {
      expect(parseCli(opts, 'usage', ['--nope'])).toBe(2);
      expect(parseCli(opts, 'usage', ['-h'])).toBe(0);
    } finally {
      process.stderr.write = err;
      process.stdout.write = out;
    }
  });
});

describe('runCli', () => {
  it("exits with main's status, 2 with the usage for a UsageError, 1 with the stack for any other error", () => {
    const ok = run('--n', '4');
    expect(ok.status).toBe(3);
    expect(ok.stdout).toBe('n=4\n');
    const usage = run('--mode', 'usage');
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain('--mode usage: bad on purpose\nusage: cli-fixture');
    const badNumber = run('--n', '12');
    expect(badNumber.status).toBe(2);
    expect(badNumber.stderr).toContain('--n must be a number in [0, 9], got 12');
    const crash = run('--mode', 'crash');
    expect(crash.status).toBe(1);
    expect(crash.stderr).toMatch(/^cli-fixture failed: Error: boom\n\s+at /);
    const unknown = run('--what');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('usage: cli-fixture');
  }, 120_000);
});
