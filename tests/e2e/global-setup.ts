import { ensureChromium } from '../../tools/harness/chromium.js';

/** Fail fast with a clear message (or install Debian's chromium as root). */
export default function setup(): void {
  ensureChromium();
}
