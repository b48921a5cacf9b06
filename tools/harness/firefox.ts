/**
 * Finding (and, as root on Debian, installing) Debian's `firefox-esr` and
 * launching it headless with puppeteer-core over WebDriver BiDi. Playwright
 * drives only its own patched Firefox build, which cannot be downloaded on our
 * machines; puppeteer-core drives a stock Firefox (`browser: 'firefox'`).
 */
import { spawnSync } from 'node:child_process';
import puppeteer from 'puppeteer-core';
import type { Browser } from 'puppeteer-core';
import { ensureBrowser, findBrowser, type BrowserBinary } from './browser-binary.js';

const FIREFOX: BrowserBinary = { name: 'Firefox', envVar: 'FIREFOX_PATH', candidates: ['/usr/bin/firefox-esr', '/usr/bin/firefox'], debianPackage: 'firefox-esr' };

/** Path of a usable Firefox, or undefined. FIREFOX_PATH overrides. */
export function findFirefox(): string | undefined {
  return findBrowser(FIREFOX);
}

/**
 * Return Firefox's path, installing Debian's `firefox-esr` with apt-get when
 * it is missing and we are root.
 * @throws Error naming the package to install when it cannot be found or installed.
 */
export function ensureFirefox(): string {
  return ensureBrowser(FIREFOX);
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
    // Muted autoplay without a user gesture (the receiver's <video>), and Web Audio's
    // AudioContext running without one (the microphone and remote audio, src/audio/web-audio.ts).
    'media.autoplay.default': 0,
    'media.autoplay.block-webaudio': false,
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

/**
 * Make sure a sound server answers, so Firefox's AudioContext runs: headless
 * Firefox on a machine without one (CI, containers) keeps every AudioContext
 * suspended, and with it the Web Audio microphone and playout of
 * src/audio/web-audio.ts (Chromium needs none: it fakes its audio output).
 * Starts PulseAudio (Debian `pulseaudio`) with a null sink when `pactl info`
 * gets no answer; it exits after 5 idle minutes.
 * @returns what it found or did, for a test's log: 'running', 'started', or why not.
 */
export function ensureSoundServer(): string {
  if (spawnSync('pactl', ['info'], { stdio: 'ignore', timeout: 5000 }).status === 0) return 'running';
  const r = spawnSync('pulseaudio', ['--daemonize=yes', '--exit-idle-time=300', '-n', '--load=module-null-sink sink_name=mprtc_null', '--load=module-native-protocol-unix'], {
    stdio: 'ignore',
    timeout: 10_000,
  });
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return "no pulseaudio: install Debian's pulseaudio";
  if (r.error) return `pulseaudio did not start: ${r.error.message}`;
  return spawnSync('pactl', ['info'], { stdio: 'ignore', timeout: 5000 }).status === 0 ? 'started' : `pulseaudio exited ${r.status}, and pactl gets no answer`;
}

/** Headless Debian Firefox ESR (puppeteer-core, WebDriver BiDi) with {@link firefoxPrefs}, after {@link ensureSoundServer}. */
export async function launchFirefox(): Promise<Browser> {
  ensureSoundServer();
  return puppeteer.launch({ browser: 'firefox', executablePath: ensureFirefox(), headless: true, extraPrefsFirefox: firefoxPrefs() });
}
