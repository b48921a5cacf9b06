/**
 * The demo page between Chromium and Firefox, audio both ways (issue 14:
 * Firefox as a first-class target). Firefox has neither
 * MediaStreamTrackProcessor nor MediaStreamTrackGenerator, so its microphone
 * and the remote audio it plays go through Web Audio (src/audio/web-audio.ts);
 * Chromium uses the processor and the generator. Each page must decode the
 * other's video and play the other's microphone (the RMS of the remote audio
 * as the page plays it, an AnalyserNode on the remote track: above silence,
 * both fake microphones beep or hum); Firefox's `capabilities().audio` says
 * it can. Behaviour only, no quality thresholds.
 */
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { AUDIO_RMS_FLOOR } from '../../bench/browser/run.js';
import { startDemo } from '../../demo/serve.js';
import { chromiumArgs, ensureChromium } from '../../tools/harness/chromium.js';
import { ensureSoundServer, launchFirefox } from '../../tools/harness/firefox.js';
import { waitFor } from './demo-page.js';

/** What a demo page says of its call, read as a string (Firefox's driver runs it as is). */
const READ = `(() => {
  const c = window.__demo;
  if (!c) return undefined;
  const e = [...c.getStats().values()];
  const src = e.find((x) => x.type === 'media-source' && x.kind === 'audio');
  const audioIn = e.find((x) => x.type === 'inbound-rtp' && x.kind === 'audio');
  const videoIn = e.find((x) => x.type === 'inbound-rtp' && x.kind === 'video');
  const levels = window.__audioLevels ? window.__audioLevels() : {};
  return {
    me: e.find((x) => x.type === 'call')?.participantId,
    status: document.getElementById('status')?.textContent ?? '',
    micFrames: src ? src.framesEncoded : 0,
    audioReceived: audioIn ? audioIn.packetsReceived : 0,
    decodedLevel: audioIn ? audioIn.maxAudioLevel : 0,
    rendering: audioIn ? audioIn.rendering : false,
    videoDecoded: videoIn ? videoIn.framesDecoded : 0,
    played: Math.max(0, ...Object.values(levels)),
  };
})()`;

interface Side {
  me?: string;
  status: string;
  micFrames: number;
  audioReceived: number;
  /** Largest decoded level so far (RMS, the inbound entry's maxAudioLevel). */
  decodedLevel: number;
  rendering: boolean;
  videoDecoded: number;
  played: number;
}

describe('demo page, Chromium and Firefox', () => {
  it('each decodes the other and plays its microphone; Firefox through Web Audio', { timeout: 150_000 }, async () => {
    const sound = ensureSoundServer();
    const demo = await startDemo({ signallingPort: 0, pagePort: 0 });
    const url = `${demo.pageUrl}?autojoin=1&room=ff&paths=2&sig=${encodeURIComponent(demo.signallingUrl)}`;
    const cb = await chromium.launch({ executablePath: ensureChromium(), headless: true, args: [...chromiumArgs(), '--autoplay-policy=no-user-gesture-required'] });
    let fb: Awaited<ReturnType<typeof launchFirefox>> | undefined;
    try {
      fb = await launchFirefox();
      const cp = await (await cb.newContext()).newPage();
      await cp.goto(url, { waitUntil: 'domcontentloaded', timeout: 30_000 });
      const fp = await fb.newPage();
      await fp.goto(url, { waitUntil: 'domcontentloaded', timeout: 30_000 });
      const both = async () => [(await cp.evaluate(READ)) as Side | undefined, (await fp.evaluate(READ)) as Side | undefined];
      // The loudest played level each side saw while polling (levels come and go on a loaded machine).
      const loudest = [0, 0];
      const [c, f] = await waitFor(`Chromium and Firefox each decoding and hearing the other (sound server: ${sound})`, 60_000, both, (ss) => {
        for (const [i, s] of ss.entries()) loudest[i] = Math.max(loudest[i], s?.played ?? 0);
        return ss.every((s) => s !== undefined && s.videoDecoded > 0 && s.audioReceived > 0 && s.rendering) && loudest.every((l) => l > AUDIO_RMS_FLOOR);
      });
      // MultipathCall.capabilities(), through the call's class.
      const caps = (await fp.evaluate('window.__demo.constructor.capabilities()')) as { audio: { send: boolean; receive: boolean }; missing: string[] };
      process.stdout.write(`demo-firefox: played level Chromium ${loudest[0]}, Firefox ${loudest[1]}; ${JSON.stringify({ c, f })}\n`);
      for (const s of [c!, f!]) {
        expect(s.micFrames).toBeGreaterThan(0);
        expect(s.decodedLevel).toBeGreaterThan(AUDIO_RMS_FLOOR);
        expect(s.status).not.toMatch(/microphone not sent|error/);
      }
      expect(caps.audio, caps.missing.join(', ')).toEqual({ send: true, receive: true });
    } finally {
      await fb?.close().catch(() => {});
      await cb.close();
      await demo.close();
    }
  });
});
