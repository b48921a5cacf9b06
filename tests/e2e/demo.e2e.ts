/**
 * Smoke test of the demo page: two tabs join a room and see each other over
 * two paths pinned to different local networks (no emulator: direct ICE);
 * then the signalling server restarts under the call and the video goes on.
 */
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startDemo } from '../../demo/serve.js';
import type { CallStatsEntry } from '../../src/call/stats-types.js';
import { chromiumArgs, ensureChromium } from '../../tools/harness/chromium.js';

describe('demo page', () => {
  it('two tabs see each other over two paths, pinned by network, through a signalling server restart', async () => {
    const demo = await startDemo({ signallingPort: 0, pagePort: 0 });
    const browser = await chromium.launch({ executablePath: ensureChromium(), headless: true, args: chromiumArgs() });
    try {
      const url = `${demo.pageUrl}?autojoin=1&room=smoke&sig=${encodeURIComponent(demo.signallingUrl)}`;
      const pages = await Promise.all([browser.newContext(), browser.newContext()].map(async (c) => (await c).newPage()));
      for (const p of pages) await p.goto(url, { waitUntil: 'domcontentloaded', timeout: 90_000 });
      const stats = async () =>
        Promise.all(
          pages.map((p) =>
            p.evaluate(() => {
              const call = (window as unknown as { __demo?: { getStats(): Map<string, CallStatsEntry> } }).__demo;
              if (!call) return undefined;
              const entries = [...call.getStats().values()];
              let decoded = 0;
              for (const e of entries) if (e.type === 'inbound-rtp' && e.kind === 'video') decoded += e.framesDecoded;
              const states = entries.flatMap((e) => (e.type === 'path' ? [e.state] : []));
              const policy = entries.flatMap((e) => (e.type === 'call' ? [e.candidatePolicy] : []))[0];
              return { decoded, states, policy };
            }),
          ),
        );
      let last: Awaited<ReturnType<typeof stats>> = [];
      for (let i = 0; i < 30; i++) {
        await new Promise((r) => setTimeout(r, 500));
        last = await stats();
        if (last.every((s) => s && s.decoded > 60)) break;
      }
      for (const s of last) {
        expect(s).toBeDefined();
        expect(s!.decoded).toBeGreaterThan(60);
        expect(s!.states).toEqual(['connected', 'connected']);
        expect(s!.policy).toMatch(/network/);
      }

      // The signalling server restarts (down 3 s): video keeps being decoded meanwhile, both pages
      // rejoin under their ids, nobody leaves, and the paths need no restart.
      await demo.restartSignalling(3000);
      const during = await stats();
      for (const [k, s] of during.entries()) expect(s!.decoded, 'video kept flowing while signalling was down').toBeGreaterThan(last[k]!.decoded + 5);
      const rejoined = async () =>
        Promise.all(
          pages.map((p) =>
            p.evaluate(() => {
              const call = (window as unknown as { __demo: { getStats(): Map<string, CallStatsEntry> } }).__demo;
              const entries = [...call.getStats().values()];
              const ids = entries.flatMap((e) => (e.type === 'call' ? e.remoteParticipantIds : []));
              const participants = ids.map((id) => ({ paths: entries.flatMap((e) => (e.type === 'path' && e.participantId === id ? [{ state: e.state, iceRestarts: e.iceRestarts }] : [])) }));
              return { status: document.getElementById('status')?.textContent ?? '', participants };
            }),
          ),
        );
      let after = await rejoined();
      for (let i = 0; i < 30 && after.some((a) => /reconnecting|lost/.test(a.status)); i++) {
        await new Promise((r) => setTimeout(r, 500));
        after = await rejoined();
      }
      for (const a of after) {
        expect(a.status).not.toMatch(/reconnecting|lost|waiting/);
        expect(a.participants).toHaveLength(1);
        expect(a.participants[0].paths.map((x) => [x.state, x.iceRestarts])).toEqual([
          ['connected', 0],
          ['connected', 0],
        ]);
      }
    } finally {
      await browser.close();
      await demo.close();
    }
  });
});
