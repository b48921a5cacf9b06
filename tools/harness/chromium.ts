/**
 * Finding (and, as root on Debian, installing) the system Chromium that
 * playwright-core drives. `npx playwright install` cannot download browsers on
 * our machines, so we use Debian's package `chromium`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** Path of a usable Chromium, or undefined. CHROMIUM_PATH overrides. */
export function findChromium(): string | undefined {
  const env = process.env.CHROMIUM_PATH;
  if (env && existsSync(env)) return env;
  return CANDIDATES.find((p) => existsSync(p));
}

/**
 * Return Chromium's path, installing Debian's `chromium` with apt-get when it
 * is missing and we are root.
 * @throws Error naming the package to install when it cannot be found or installed.
 */
export function ensureChromium(): string {
  const found = findChromium();
  if (found) return found;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && existsSync('/usr/bin/apt-get')) {
    process.stderr.write('Chromium not found: installing Debian package "chromium" with apt-get...\n');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env });
    const again = findChromium();
    if (again) return again;
  }
  throw new Error('Chromium is required: install the Debian package "chromium" (sudo apt-get install -y chromium) or set CHROMIUM_PATH to a Chromium binary.');
}

/** Launch flags that work on our headless, GPU-less, offline machines. */
export function chromiumArgs(opts: { fakeVideoFile?: string } = {}): string[] {
  const args = [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--use-fake-ui-for-media-stream',
    '--use-fake-device-for-media-stream=fps=30',
    // Our emulated paths are loopback UDP relays: let ICE use 127.0.0.1 and show raw addresses.
    '--allow-loopback-in-peer-connection',
    '--disable-features=WebRtcHideLocalIpsWithMdns',
    // Keep timers and rendering running at full rate in background pages.
    '--disable-background-timer-throttling',
    '--disable-renderer-backgrounding',
    '--disable-backgrounding-occluded-windows',
  ];
  if (opts.fakeVideoFile) args.push(`--use-file-for-fake-video-capture=${opts.fakeVideoFile}`);
  return args;
}
