/**
 * Issue 13, opt-in (MPRTC_E2E_MESH4=1): the demo with four participants
 * (the full mesh's upper size tested), four pages of one browser: each
 * decodes video from the three others and hears them (the level of each
 * remote audio as played above silence), then a screenshot per participant
 * under out/. Not in CI: four 640x480 encoders and twelve decoders are more
 * than a 2-core runner does in real time; it prints what it measured
 * (per-pair freezes, latency, audio concealment, A/V offset) instead of
 * asserting quality.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { AUDIO_RMS_FLOOR } from '../../bench/browser/run.js';
import { startDemo } from '../../demo/serve.js';
import { chromiumArgs, ensureChromium } from '../../tools/harness/chromium.js';
import { digest, levels, waitFor } from './demo-page.js';

const N = 4;

describe.skipIf(process.env.MPRTC_E2E_MESH4 !== '1')('demo page, four participants (opt-in: MPRTC_E2E_MESH4=1)', () => {
  it('each sees and hears the three others', { timeout: 240_000 }, async () => {
    const t0 = Date.now();
    const demo = await startDemo({ signallingPort: 0, pagePort: 0 });
    const browser = await chromium.launch({ executablePath: ensureChromium(), headless: true, args: [...chromiumArgs(), '--autoplay-policy=no-user-gesture-required'] });
    try {
      const url = `${demo.pageUrl}?autojoin=1&room=mesh4&paths=2&sig=${encodeURIComponent(demo.signallingUrl)}`;
      const pages: Page[] = [];
      for (let i = 0; i < N; i++) {
        const page = await (await browser.newContext({ viewport: { width: 1500, height: 1500 } })).newPage();
        await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 30_000 });
        pages.push(page);
      }
      const all = () => Promise.all(pages.map(digest));
      const up = await waitFor('every participant decoding the three others', 120_000, all, (ds) =>
        ds.every((d) => d !== undefined && d.remotes.length === N - 1 && d.remotes.every((r) => r.decoded > 0)),
      );
      const tUp = (Date.now() - t0) / 1000;
      const ids = up.map((d) => d!.me!);
      expect(new Set(ids).size).toBe(N);
      const loudest: Array<Record<string, number>> = pages.map(() => ({}));
      await waitFor(
        'every participant hearing the three others',
        60_000,
        () => Promise.all(pages.map(levels)),
        (ls) => {
          for (const [i, l] of ls.entries()) for (const [id, v] of Object.entries(l)) loudest[i][id] = Math.max(loudest[i][id] ?? 0, v);
          return loudest.every((l, i) => ids.filter((_, j) => j !== i).every((id) => (l[id] ?? 0) > AUDIO_RMS_FLOOR));
        },
      );
      // Let the call run a while, then report what each pair got.
      await new Promise((r) => setTimeout(r, 20_000));
      const end = await all();
      const out = join(process.cwd(), 'out');
      mkdirSync(out, { recursive: true });
      for (const [i, p] of pages.entries()) await p.screenshot({ path: join(out, `demo-mesh4-participant-${i}.png`), fullPage: true });
      const rows = end.flatMap((d) =>
        d!.remotes.map(
          (r) =>
            `${r.id} -> ${d!.me}: ${r.decoded} frames, ${r.video.freezes} freezes, latency p95 ${Math.round(r.video.latencyP95Ms)} ms; audio concealed ${r.audio.concealedPct.toFixed(1)} %, mouth-to-ear p95 ${Math.round(r.audio.mouthToEarP95Ms)} ms, A/V offset ${Math.round(r.audio.avOffsetMs)} ms`,
        ),
      );
      process.stdout.write(`demo-mesh4: ${N} participants, all decoding after ${tUp.toFixed(1)} s, hearing ${JSON.stringify(loudest)}\n${rows.join('\n')}\n`);
    } finally {
      await browser.close();
      await demo.close();
    }
  });
});
