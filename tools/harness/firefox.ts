/**
 * Finding (and, as root on Debian, installing) Debian's `firefox-esr` and
 * launching it headless with puppeteer-core over WebDriver BiDi. Playwright
 * drives only its own patched Firefox build, which cannot be downloaded on our
 * machines; puppeteer-core drives a stock Firefox (`browser: 'firefox'`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import puppeteer from 'puppeteer-core';
import type { Browser } from 'puppeteer-core';

const CANDIDATES = ['/usr/bin/firefox-esr', '/usr/bin/firefox'];

/** Path of a usable Firefox, or undefined. FIREFOX_PATH overrides. */
export function findFirefox(): string | undefined {
  const env = process.env.FIREFOX_PATH;
  if (env && existsSync(env)) return env;
  return CANDIDATES.find((p) => existsSync(p));
}

/**
 * Return Firefox's path, installing Debian's `firefox-esr` with apt-get when
 * it is missing and we are root.
 * @throws Error naming the package to install when it cannot be found or installed.
 */
export function ensureFirefox(): string {
  const found = findFirefox();
  if (found) return found;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && existsSync('/usr/bin/apt-get')) {
    process.stderr.write('Firefox not found: installing Debian package "firefox-esr" with apt-get...\n');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-qq', 'firefox-esr'], { stdio: 'inherit', env });
    const again = findFirefox();
    if (again) return again;
  }
  throw new Error('Firefox is required: install the Debian package "firefox-esr" (sudo apt-get install -y firefox-esr) or set FIREFOX_PATH to a Firefox binary.');
}

/**
 * Preferences for our headless, offline test machines (the Firefox
 * counterpart of tools/harness/chromium.ts `chromiumArgs`).
 */
export function firefoxPrefs(): Record<string, unknown> {
  return {
    // A synthetic camera, granted without a prompt.
    'media.navigator.streams.fake': true,
    'media.navigator.permission.disabled': true,
    // Host candidates with their real address, not an mDNS name: the path
    // emulator's signalling rewrite (tools/harness/ice-rewrite.ts) needs an address
    // of this machine. With them Firefox's ICE works over the loopback relays.
    'media.peerconnection.ice.obfuscate_host_addresses': false,
    'media.peerconnection.ice.loopback': true,
    // Muted autoplay without a user gesture (the receiver's <video>).
    'media.autoplay.default': 0,
    // Full-rate timers in pages that are not in front.
    'dom.min_background_timeout_value': 4,
    'dom.timeout.enable_budget_timer_throttling': false,
    // No update checks, telemetry or first-run pages.
    'app.update.enabled': false,
    'browser.shell.checkDefaultBrowser': false,
    'datareporting.policy.dataSubmissionEnabled': false,
    'toolkit.telemetry.enabled': false,
  };
}

/** Headless Debian Firefox ESR (puppeteer-core, WebDriver BiDi) with {@link firefoxPrefs}. */
export async function launchFirefox(): Promise<Browser> {
  return puppeteer.launch({ browser: 'firefox', executablePath: ensureFirefox(), headless: true, extraPrefsFirefox: firefoxPrefs() });
}
