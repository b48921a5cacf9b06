import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { chromiumArgs, ensureChromium } from './tools/harness/chromium.js';

const codecs = ['avc1.42e01f', 'vp8', 'vp09.00.10.08', 'av01.0.04M.08'];
const modes = ['L1T1', 'L1T2', 'L1T3'];
const frames = Number(process.argv[2] ?? '150');
const bps = Number(process.argv[3] ?? '1000000');

async function run(spec: { codec: string; mode: string; frames: number; bps: number }) {
  const cfg: any = { codec: spec.codec, width: 640, height: 480, bitrate: spec.bps, framerate: 30, latencyMode: 'realtime', bitrateMode: 'variable', scalabilityMode: spec.mode };
  if (spec.codec.startsWith('avc1')) cfg.avc = { format: 'annexb' };
  let sup: any;
  try { sup = await VideoEncoder.isConfigSupported(cfg); } catch (e) { return { supported: false, err: String(e) }; }
  if (!sup.supported) return { supported: false };
  if (spec.frames === 0) return { supported: true };
  const stream = await navigator.mediaDevices.getUserMedia({ video: { width: 640, height: 480, frameRate: 30 } });
  const track = stream.getVideoTracks()[0];
  const reader = new (globalThis as any).MediaStreamTrackProcessor({ track }).readable.getReader();
  const out: any[] = [];
  let err: any = null;
  const enc = new VideoEncoder({ output: (c, md: any) => out.push([c.byteLength, c.type === 'key' ? 1 : 0, md?.svc?.temporalLayerId ?? -1]), error: (e) => { err = String(e); } });
  enc.configure(cfg);
  for (let i = 0; i < spec.frames; i++) {
    const { value: f, done } = await reader.read();
    if (done) break;
    enc.encode(f, { keyFrame: i === 0 });
    f.close();
  }
  await enc.flush().catch((e) => { err = String(e); });
  enc.close(); reader.cancel().catch(() => {}); track.stop();
  return { supported: true, err, frames: out };
}

const y4m = '/tmp/tl/clip-640x480.y4m';
if (!existsSync(y4m)) execFileSync('ffmpeg', ['-y', '-loglevel', 'error', '-i', '/work/shared/media/mixed-content.webm', '-vf', 'setpts=PTS*25/30,scale=640:480', '-r', '30', '-pix_fmt', 'yuv420p', '-t', '20', y4m]);
const browser = await chromium.launch({ executablePath: ensureChromium(), args: chromiumArgs({ fakeVideoFile: y4m }) });
const page = await browser.newPage();
await page.addInitScript('globalThis.__name = (f) => f;');
await page.route('https://capture.invalid/', (r) => r.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>p</title>' }));
await page.goto('https://capture.invalid/');
const res: any = { browser: browser.version(), bps, runs: [] };
for (const codec of codecs) for (const mode of modes) {
  const r: any = await page.evaluate(run, { codec, mode, frames, bps });
  res.runs.push({ codec, mode, ...r });
  const fr = r.frames ?? [];
  const by: Record<string, number[]> = {};
  for (const [b, k, t] of fr.slice(10)) if (!k) (by[t] ??= []).push(b);
  const summ = Object.entries(by).map(([t, a]) => `TL${t}: n=${a.length} mean=${Math.round(a.reduce((x, y) => x + y, 0) / a.length)}`).join(' ');
  console.log(codec, mode, r.supported, r.err ?? '', fr.length, 'frames', fr.slice(0, 8).map((f: any) => f[2]).join(','), summ);
}
writeFileSync(`/tmp/tl/probe-${bps}.json`, JSON.stringify(res));
await browser.close();
