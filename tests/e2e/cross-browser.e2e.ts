/**
 * Chromium <-> Firefox: a real call through the library in both directions
 * (issue 14 item 1), over two emulated paths. Chromium (playwright-core) reads
 * the camera with MediaStreamTrackProcessor and renders with
 * MediaStreamTrackGenerator; Firefox ESR (puppeteer-core over WebDriver BiDi)
 * captures through requestVideoFrameCallback and renders through a canvas'
 * captureStream(). Asserts that frames are encoded, decoded and shown, never
 * their quality (no timed thresholds). `npm run test:browsers` runs it alone.
 */
import type { Browser as ChromiumBrowser } from 'playwright-core';
import type { Browser as FirefoxBrowser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserName, type CrossBrowserResult, runCrossBrowserCall } from '../../tools/harness/cross-browser.js';
import { launchFirefox } from '../../tools/harness/firefox.js';
import { launchChromium, startPageServer, type PageServer } from '../../tools/harness/setup.js';
import { peerView } from '../../tools/harness/stats-view.js';

const CAPTURE: Record<BrowserName, string> = { chromium: 'track-processor', firefox: 'video-frame-callback' };
const RENDER: Record<BrowserName, string> = { chromium: 'track-generator', firefox: 'canvas-capture' };
const UA: Record<BrowserName, RegExp> = { chromium: /Chrome\//, firefox: /Firefox\// };

/** One line about the call, for assertion messages. */
function describeRun(r: CrossBrowserResult): string {
  const side = (p: CrossBrowserResult['sender']) =>
    `${p.browser}: sent ${peerView(p.stats).outVideo?.framesSent ?? 0}, decoded ${peerView(p.stats).inVideo?.framesDecoded ?? 0}, paths ${peerView(p.stats)
      .paths.map((x) => x.state)
      .join('/')}, video ${p.video.width}x${p.video.height}, errors: ${p.errors.slice(0, 3).join(' | ') || 'none'}`;
  return `${side(r.sender)}; ${side(r.receiver)}; relay packets ${r.relay.map((p) => `${p.up.deliveredPackets}/${p.down.deliveredPackets}`).join(', ')}; ${r.elapsedMs} ms`;
}

describe('Chromium <-> Firefox call', () => {
  let pages: PageServer;
  let chromium: ChromiumBrowser;
  let firefox: FirefoxBrowser;

  beforeAll(async () => {
    pages = await startPageServer();
    [chromium, firefox] = await Promise.all([launchChromium(), launchFirefox()]);
  });

  afterAll(async () => {
    await Promise.all([chromium?.close(), firefox?.close()].map((p) => p?.catch(() => undefined)));
    await pages?.close();
  });

  it.each([
    ['chromium', 'firefox', 'h264'],
    ['firefox', 'chromium', 'h264'],
    // Firefox's encoder refuses an explicit L1T1 for VP9: the configuration without it must be the one used.
    ['firefox', 'chromium', 'vp9'],
  ] as const)('%s sends, %s receives, decodes and shows it (%s)', async (sender, receiver, codec) => {
    const r = await runCrossBrowserCall({ sender, receiver, codec, browsers: { chromium, firefox }, pages });
    const why = describeRun(r);
    expect(r.sender.userAgent, why).toMatch(UA[sender]);
    expect(r.receiver.userAgent, why).toMatch(UA[receiver]);
    for (const side of [r.sender, r.receiver]) {
      expect(side.capabilities.supported, why).toBe(true);
      expect(side.capabilities.capture).toBe(CAPTURE[side.browser]);
      expect(side.capabilities.render).toBe(RENDER[side.browser]);
      expect(side.capabilities.encode).toEqual(expect.arrayContaining(['h264', 'vp8', 'vp9']));
      expect(side.capabilities.decode).toEqual(expect.arrayContaining(['h264', 'vp8', 'vp9', 'av1']));
      // Both paths connected on both sides, and nothing failed to start.
      expect(
        peerView(side.stats).paths.map((p) => p.state),
        why,
      ).toEqual(['connected', 'connected']);
      expect(
        side.errors.filter((e) => e.startsWith('start:') || e.startsWith('page:')),
        why,
      ).toEqual([]);
    }
    const snd = peerView(r.sender.stats);
    const rcv = peerView(r.receiver.stats);
    const source = r.sender.stats.find((e) => e.type === 'media-source' && e.kind === 'video');
    expect(source?.type === 'media-source' && source.kind === 'video' ? source.captureMode : undefined, why).toBe(CAPTURE[sender]);
    expect(snd.outVideo?.framesEncoded ?? 0, why).toBeGreaterThan(0);
    expect(snd.outVideo?.framesSent ?? 0, why).toBeGreaterThan(0);
    expect(rcv.inVideo?.renderMode, why).toBe(RENDER[receiver]);
    expect(rcv.inVideo?.framesDecoded ?? 0, why).toBeGreaterThan(0);
    // The app's <video> plays the remote track: a decoded frame really reached it.
    expect(r.receiver.eventCounts['remote-track'], why).toBe(1);
    expect(r.receiver.video.width, why).toBeGreaterThan(0);
    // Every path carried datagrams through its relay, both ways.
    for (const p of r.relay) expect(Math.min(p.up.deliveredPackets, p.down.deliveredPackets), why).toBeGreaterThan(0);
  });
});
