/**
 * Finding a browser binary the tests drive and, as root on Debian, installing
 * its package with apt-get (our machines cannot download Playwright's or
 * Puppeteer's own browser builds). Used by tools/harness/chromium.ts and
 * tools/harness/firefox.ts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface BrowserBinary {
  /** Name in messages, e.g. 'Chromium'. */
  name: string;
  /** Environment variable that overrides the search, e.g. 'CHROMIUM_PATH'. */
  envVar: string;
  /** Paths tried in order. */
  candidates: readonly string[];
  /** Debian package that provides it, e.g. 'chromium'. */
  debianPackage: string;
}

/** Path of the binary (the environment variable first), or undefined. */
export function findBrowser(b: BrowserBinary): string | undefined {
  const env = process.env[b.envVar];
  if (env && existsSync(env)) return env;
  return b.candidates.find((p) => existsSync(p));
}

/**
 * Return the binary's path, installing the Debian package with apt-get when it
 * is missing and we are root.
 * @throws Error naming the package to install when it cannot be found or installed.
 */
export function ensureBrowser(b: BrowserBinary): string {
  const found = findBrowser(b);
  if (found) return found;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && existsSync('/usr/bin/apt-get')) {
    process.stderr.write(`${b.name} not found: installing Debian package "${b.debianPackage}" with apt-get...\n`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-qq', b.debianPackage], { stdio: 'inherit', env });
    const again = findBrowser(b);
    if (again) return again;
  }
  throw new Error(`${b.name} is required: install the Debian package "${b.debianPackage}" (sudo apt-get install -y ${b.debianPackage}) or set ${b.envVar} to a ${b.name} binary.`);
}
