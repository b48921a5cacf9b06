/**
 * Captures REAL encoder output from Chromium's WebCodecs for unit-test
 * fixtures (no browser at test time):
 *   tests/fixtures/h264/key.264, delta.264   H.264 Annex B access units
 *   tests/fixtures/h264/expected.json        NAL types found per AU
 *   tests/fixtures/vp8/key.vp8, delta.vp8    one VP8 key / delta frame pair
 *
 *   node --import tsx tools/capture-h264-fixture.ts
 *
 * The page is a blank document on an intercepted https origin (WebCodecs is
 * only exposed in secure contexts; a plain about:blank + setContent is not).
 * Encoder setup: 320x240 OffscreenCanvas with moving content, VideoEncoder
 * 'avc1.42e01f' (Constrained Baseline 3.1), avc.format 'annexb', latencyMode
 * 'realtime'; 5 frames, the first with keyFrame: true.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { runCli } from './cli.js';

interface Chunk {
  type: 'key' | 'delta';
  timestamp: number;
  bytes: number[];
}

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = resolve(here, '../tests/fixtures');

/** Runs inside the page: encodes `frames` canvas frames with `codec`. */
async function encodeInPage(args: { codec: string; frames: number; annexb: boolean }): Promise<Chunk[]> {
  const width = 320;
  const height = 240;
  const canvas = new OffscreenCanvas(width, height);
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('no 2d context');
  const chunks: Chunk[] = [];
  let error: unknown = null;
  const encoder = new VideoEncoder({
    output: (chunk) => {
      const buf = new Uint8Array(chunk.byteLength);
      chunk.copyTo(buf);
      chunks.push({ type: chunk.type, timestamp: chunk.timestamp, bytes: Array.from(buf) });
    },
    error: (e) => {
      error = e;
    },
  });
  const config: VideoEncoderConfig = {
    codec: args.codec,
    width,
    height,
    bitrate: 300_000,
    framerate: 30,
    latencyMode: 'realtime',
  };
  if (args.annexb) (config as VideoEncoderConfig & { avc?: { format: string } }).avc = { format: 'annexb' };
  const support = await VideoEncoder.isConfigSupported(config);
  if (!support.supported) throw new Error(`encoder config not supported: ${args.codec}`);
  encoder.configure(config);
  for (let i = 0; i < args.frames; i++) {
    ctx.fillStyle = `hsl(${(i * 40) % 360}, 70%, 50%)`;
    ctx.fillRect(0, 0, width, height);
    ctx.fillStyle = '#fff';
    ctx.fillRect(20 + i * 25, 40 + i * 10, 60, 60);
    ctx.font = '32px sans-serif';
    ctx.fillText(`frame ${i}`, 10, 220);
    const frame = new VideoFrame(canvas, { timestamp: i * 33_333 });
    encoder.encode(frame, { keyFrame: i === 0 });
    frame.close();
  }
  await encoder.flush();
  encoder.close();
  if (error) throw error;
  return chunks;
}

function nalTypes(au: Uint8Array): number[] {
  const types: number[] = [];
  for (let i = 0; i + 3 < au.length; i++) {
    if (au[i] === 0 && au[i + 1] === 0 && au[i + 2] === 1) types.push(au[i + 3] & 0x1f);
  }
  return types;
}

async function main(): Promise<void> {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage();
    // tsx/esbuild wraps named inner functions with a `__name` helper that does
    // not exist in the page: provide an identity shim.
    await page.addInitScript('globalThis.__name = (f) => f;');
    // WebCodecs needs a secure context: serve a blank page from an intercepted https origin.
    await page.route('https://capture.invalid/', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>capture</title>' }));
    await page.goto('https://capture.invalid/');
    const h264 = await page.evaluate(encodeInPage, { codec: 'avc1.42e01f', frames: 5, annexb: true });
    const key = h264.find((c) => c.type === 'key');
    const delta = h264.find((c) => c.type === 'delta');
    if (!key || !delta) throw new Error(`expected key and delta chunks, got ${h264.map((c) => c.type).join(',')}`);
    const dir = resolve(fixtures, 'h264');
    mkdirSync(dir, { recursive: true });
    const keyBytes = Uint8Array.from(key.bytes);
    const deltaBytes = Uint8Array.from(delta.bytes);
    writeFileSync(resolve(dir, 'key.264'), keyBytes);
    writeFileSync(resolve(dir, 'delta.264'), deltaBytes);
    const expected = {
      source: 'Chromium WebCodecs VideoEncoder avc1.42e01f annexb realtime 320x240 (tools/capture-h264-fixture.ts)',
      browser: browser.version(),
      key: { bytes: keyBytes.length, nalTypes: nalTypes(keyBytes) },
      delta: { bytes: deltaBytes.length, nalTypes: nalTypes(deltaBytes) },
    };
    writeFileSync(resolve(dir, 'expected.json'), JSON.stringify(expected, null, 2) + '\n');
    console.log('h264', JSON.stringify(expected));

    try {
      const vp8 = await page.evaluate(encodeInPage, { codec: 'vp8', frames: 3, annexb: false });
      const vk = vp8.find((c) => c.type === 'key');
      const vd = vp8.find((c) => c.type === 'delta');
      if (vk && vd) {
        const vdir = resolve(fixtures, 'vp8');
        mkdirSync(vdir, { recursive: true });
        writeFileSync(resolve(vdir, 'key.vp8'), Uint8Array.from(vk.bytes));
        writeFileSync(resolve(vdir, 'delta.vp8'), Uint8Array.from(vd.bytes));
        console.log('vp8 key', vk.bytes.length, 'delta', vd.bytes.length);
      }
    } catch (e) {
      console.warn('vp8 capture skipped:', e instanceof Error ? e.message : e);
    }
  } finally {
    await browser.close();
  }
}

runCli({}, "usage: node --import tsx tools/capture-h264-fixture.ts   (rewrites tests/fixtures/{h264,vp8} from Chromium's encoders)", 'capture-h264-fixture', async () => {
  await main();
  return 0;
});
