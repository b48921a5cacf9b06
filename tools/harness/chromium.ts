/**
 * Finding (and, as root on Debian, installing) the system Chromium that
 * playwright-core drives. `npx playwright install` cannot download browsers on
 * our machines, so we use Debian's package `chromium`.
 */
import { ensureBrowser, findBrowser, type BrowserBinary } from './browser-binary.js';

const CHROMIUM: BrowserBinary = {
  name: 'Chromium',
  envVar: 'CHROMIUM_PATH',
  candidates: ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'],
  debianPackage: 'chromium',
};

/** Path of a usable Chromium, or undefined. CHROMIUM_PATH overrides. */
export function findChromium(): string | undefined {
  return findBrowser(CHROMIUM);
}

/**
 * Return Chromium's path, installing Debian's `chromium` with apt-get when it
 * is missing and we are root.
 * @throws Error naming the package to install when it cannot be found or installed.
 */
export function ensureChromium(): string {
  return ensureBrowser(CHROMIUM);
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
