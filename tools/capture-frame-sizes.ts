/**
 * Records REAL encoded frame sizes from Chromium's WebCodecs H.264 encoder on
 * natural content, to calibrate the simulator's encoder model
 * (sim/encoder-model.ts). Writes sim/fixtures/h264-640x480-frame-sizes.json:
 * per run the target bitrate(s) and, per encoded frame, `[bytes, key ? 1 : 0]`,
 * plus the statistics derived from them (key/delta size ratio, coefficient of
 * variation of delta sizes, convergence time after a bitrate step).
 *
 *   node --import tsx tools/capture-frame-sizes.ts [--clip /work/shared/media/mixed-content.webm] [--frames 300]
 *     [--size WxH --rates MBPS,MBPS... [--fps N] --out FILE]   (constant-rate runs at another size and frame rate, e.g. for the adaptation ladder)
 *
 * Pipeline: ffmpeg converts the clip to a 640x480 30 fps Y4M that Chromium's
 * fake camera plays (looping); the page does getUserMedia ->
 * MediaStreamTrackProcessor -> VideoEncoder ('avc1.42e01f', annexb,
 * latencyMode 'realtime', bitrateMode 'variable' as WebRTC-style use), a key
 * frame every 100 frames. One run per constant bitrate (0.5, 1, 2, 4 Mbps)
 * and three step runs (1 -> 3, 3 -> 1 and 2 -> 2.2 Mbps at frame 150, applied with
 * `configure()` like the library's rate updates). Takes about a minute (the
 * camera runs in real time).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { type CliValues, intOption, runCli } from './cli.js';
import { chromiumArgs, ensureChromium } from './harness/chromium.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..');
const defaultOut = resolve(repoRoot, 'sim/fixtures/h264-640x480-frame-sizes.json');

interface RunSpec {
  name: string;
  /** Encoded (and camera) size, px. */
  width: number;
  height: number;
  bitrates: Array<{ atFrame: number; bps: number }>;
  frames: number;
  keyEvery: number;
  /** Encoded frame rate (fps, <= the camera's 30): the page keeps every (30 / fps)-th camera frame, as the library's FrameRateLimiter does, and configures the encoder with it. */
  fps: number;
  /** Frames also encoded as key frames (e.g. right after a bitrate step). */
  keyAt?: number[];
}

interface RunResult {
  name: string;
  bitrates: Array<{ atFrame: number; bps: number }>;
  fps: number;
  /** [bytes, 1 = key / 0 = delta] per output chunk, in output order. */
  frames: Array<[number, number]>;
}

const USAGE = `usage: node --import tsx tools/capture-frame-sizes.ts [--clip /work/shared/media/mixed-content.webm] [--frames 300]
       [--size WxH --rates MBPS,MBPS... [--fps N] --out FILE]   (constant-rate runs at another size and frame rate, e.g. for the adaptation ladder)
       [--step-key FROM,TO[,...] --out FILE]   (rate steps FROM -> TO Mbps at frame 150 with a key frame requested at once,
                                                 then 1, 3 and 10 frames later in repeats: how a key frame right after a drop is sized)`;
const OPTIONS = {
  clip: { type: 'string', default: '/work/shared/media/mixed-content.webm' },
  frames: { type: 'string', default: '300' },
  size: { type: 'string', default: '640x480' },
  rates: { type: 'string', default: '' },
  fps: { type: 'string', default: '30' },
  out: { type: 'string', default: defaultOut },
  'step-key': { type: 'string', default: '' },
} as const;

/** Runs inside the page. */
async function encodeRun(spec: RunSpec): Promise<Array<[number, number]>> {
  const stream = await navigator.mediaDevices.getUserMedia({ video: { width: spec.width, height: spec.height, frameRate: 30 } });
  const track = stream.getVideoTracks()[0];
  const Proc = (globalThis as unknown as { MediaStreamTrackProcessor: new (o: { track: MediaStreamTrack }) => { readable: ReadableStream<VideoFrame> } }).MediaStreamTrackProcessor;
  const reader = new Proc({ track }).readable.getReader();
  const out: Array<[number, number]> = [];
  let err: unknown = null;
  const enc = new VideoEncoder({
    output: (chunk) => {
      out.push([chunk.byteLength, chunk.type === 'key' ? 1 : 0]);
    },
    error: (e) => {
      err = e;
    },
  });
  const cfg = (bps: number): VideoEncoderConfig =>
    ({
      codec: 'avc1.42e01f',
      width: spec.width,
      height: spec.height,
      bitrate: bps,
      framerate: spec.fps,
      latencyMode: 'realtime',
      bitrateMode: 'variable',
      avc: { format: 'annexb' },
    }) as VideoEncoderConfig;
  enc.configure(cfg(spec.bitrates[0].bps));
  let camera = 0;
  for (let i = 0; i < spec.frames; i++) {
    const { value: frame, done } = await reader.read();
    if (done || !frame) break;
    // Keep every (30 / fps)-th camera frame (the library's FrameRateLimiter keeps the same share).
    camera++;
    if (Math.floor((camera * spec.fps) / 30) === Math.floor(((camera - 1) * spec.fps) / 30)) {
      frame.close();
      i--;
      continue;
    }
    const step = spec.bitrates.find((b) => b.atFrame === i && i > 0);
    if (step) enc.configure(cfg(step.bps));
    if (enc.encodeQueueSize > 4) {
      frame.close();
      i--;
      continue;
    }
    enc.encode(frame, { keyFrame: i % spec.keyEvery === 0 || (spec.keyAt ?? []).includes(i) });
    frame.close();
  }
  await enc.flush();
  enc.close();
  reader.cancel().catch(() => undefined);
  track.stop();
  if (err) throw err;
  return out;
}

/** Statistics the encoder model is calibrated with. */
export function deriveStats(runs: RunResult[]): Record<string, unknown> {
  const perRun = runs.map((r) => {
    const fps = r.fps;
    const keys = r.frames.filter((f) => f[1] === 1).map((f) => f[0]);
    // Steady state: skip the first 30 frames and the 5 frames after each key frame.
    const deltas: number[] = [];
    let sinceKey = 0;
    r.frames.forEach((f, i) => {
      if (f[1] === 1) sinceKey = 0;
      else sinceKey++;
      if (f[1] === 0 && i >= 30 && sinceKey > 5) deltas.push(f[0]);
    });
    const mean = (a: number[]) => (a.length ? a.reduce((x, y) => x + y, 0) / a.length : 0);
    const md = mean(deltas);
    const sd = Math.sqrt(mean(deltas.map((d) => (d - md) ** 2)));
    const total = r.frames.reduce((s, f) => s + f[0], 0);
    const step = r.bitrates.length > 1 ? r.bitrates[1] : undefined;
    let convergenceS: number | undefined;
    if (step) {
      // Time until a 15-frame moving average of the bitrate is within 20% of the new target and stays there for 1 s.
      const win = 15;
      const rate = (i: number) => (r.frames.slice(i - win + 1, i + 1).reduce((s, f) => s + f[0], 0) * 8 * fps) / win;
      for (let i = step.atFrame + win - 1; i < r.frames.length - fps; i++) {
        let ok = true;
        for (let j = i; j < i + fps && ok; j++) ok = Math.abs(rate(j) - step.bps) <= 0.2 * step.bps;
        if (ok) {
          convergenceS = (i - (win - 1) / 2 - step.atFrame) / fps;
          break;
        }
      }
    }
    return {
      name: r.name,
      targetBps: r.bitrates[0].bps,
      stepToBps: step?.bps,
      frames: r.frames.length,
      achievedBps: Math.round((total * 8 * fps) / Math.max(1, r.frames.length)),
      meanKeyBytes: Math.round(mean(keys.slice(1))) || Math.round(mean(keys)),
      firstKeyBytes: keys[0],
      meanDeltaBytes: Math.round(md),
      keyDeltaRatio: md > 0 ? Math.round((mean(keys.slice(1).length ? keys.slice(1) : keys) / md) * 100) / 100 : 0,
      deltaCv: md > 0 ? Math.round((sd / md) * 1000) / 1000 : 0,
      convergenceS: convergenceS === undefined ? undefined : Math.round(convergenceS * 100) / 100,
    };
  });
  return { perRun };
}

async function main(values: CliValues<typeof OPTIONS>): Promise<number> {
  const clip = values.clip;
  const frames = intOption('frames', values.frames, 1, 100_000);
  const fps = intOption('fps', values.fps, 1, 30);
  // --size WxH and --rates (Mbps, comma list): constant-rate runs only, for other sizes (default: the 640x480 fixture set).
  const [width, height] = values.size.split('x').map(Number);
  if (!(width > 0 && height > 0)) throw new Error('--size must be WxH');
  const rates = values.rates;
  const outFile = resolve(values.out);
  const y4m = `/tmp/clip-${width}x${height}.y4m`;
  if (!existsSync(clip)) throw new Error(`clip not found: ${clip}`);
  // Retime 25 fps content to 30 fps (setpts) instead of duplicating every 5th frame
  // (fps=30 would add near-empty repeated frames that real cameras do not produce).
  execFileSync('ffmpeg', ['-y', '-loglevel', 'error', '-i', clip, '-vf', `setpts=PTS*25/30,scale=${width}:${height}`, '-r', '30', '-pix_fmt', 'yuv420p', '-t', '20', y4m]);
  const browser = await chromium.launch({ executablePath: ensureChromium(), args: chromiumArgs({ fakeVideoFile: y4m }) });
  const sz = { width, height };
  const stepKey = values['step-key'];
  const mbps = (m: string) => Math.round(Number(m) * 1e6);
  /** A run from `from` to `to` bps at frame 150. */
  const stepRun = (name: string, from: number, to: number, keyEvery = 1000, keyAt?: number[], n = frames): RunSpec => ({
    name,
    ...sz,
    bitrates: [
      { atFrame: 0, bps: from },
      { atFrame: 150, bps: to },
    ],
    frames: n,
    fps,
    keyEvery,
    ...(keyAt ? { keyAt } : {}),
  });
  const constRun = (name: string, bps: number): RunSpec => ({ name, ...sz, bitrates: [{ atFrame: 0, bps }], frames, fps, keyEvery: 100 });
  let specs: RunSpec[];
  if (stepKey) {
    specs = stepKey.split(';').flatMap((pair) => {
      const [from, to] = pair.split(',').map(mbps);
      if (!(from > 0 && to > 0)) throw new Error('--step-key needs FROM,TO (Mbps), pairs separated by ;');
      return [0, 1, 3, 10].map((k) => stepRun(`${width}x${height}-step-${from / 1e6}M-${to / 1e6}M-key+${k}`, from, to, 100, [150 + k], Math.min(frames, 200)));
    });
  } else if (rates) {
    specs = rates.split(',').map((m) => constRun(`${width}x${height}${fps === 30 ? '' : `@${fps}`}-const-${mbps(m) / 1e6}M`, mbps(m)));
  } else {
    specs = [
      ...[500_000, 1_000_000, 2_000_000, 4_000_000].map((bps) => constRun(`const-${bps / 1e6}M`, bps)),
      stepRun('step-1M-3M', 1_000_000, 3_000_000),
      stepRun('step-3M-1M', 3_000_000, 1_000_000),
      // A small change, as the engine's >5% target updates: does configure() force a key frame?
      stepRun('step-2M-2.2M', 2_000_000, 2_200_000),
    ];
  }
  const runs: RunResult[] = [];
  try {
    const page = await browser.newPage();
    await page.addInitScript('globalThis.__name = (f) => f;');
    await page.route('https://capture.invalid/', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>capture</title>' }));
    await page.goto('https://capture.invalid/');
    for (const spec of specs) {
      const res = await page.evaluate(encodeRun, spec);
      runs.push({ name: spec.name, bitrates: spec.bitrates, fps: spec.fps, frames: res });
      console.log(spec.name, res.length, 'frames');
    }
    const fixture = {
      source: `Chromium WebCodecs VideoEncoder avc1.42e01f annexb realtime ${width}x${height}@${fps}, fake camera playing mixed-content.webm (tools/capture-frame-sizes.ts)`,
      browser: browser.version(),
      clip,
      stats: deriveStats(runs),
      runs,
    };
    mkdirSync(dirname(outFile), { recursive: true });
    const json = JSON.stringify(fixture).replace(/\],\[/g, '],\n[');
    writeFileSync(outFile, json + '\n');
    console.log(JSON.stringify(fixture.stats, null, 1));
    console.log('wrote', outFile);
  } finally {
    await browser.close();
  }
  return 0;
}

runCli(OPTIONS, USAGE, 'capture-frame-sizes', main);
