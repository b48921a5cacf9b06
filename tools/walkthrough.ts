/**
 * The README's quick start, done as a new user would (issue 14 acceptance "a
 * fresh Vite app can follow the README and see video in both browsers"):
 *
 *   1. `npm pack` this repository (`prepack` builds dist/), and check the
 *      tarball has what package.json's `exports` and `types` point at;
 *   2. `npm create vite@latest app -- --template vanilla-ts` in a temporary
 *      folder, `npm install`, then `npm install` the tarball;
 *   3. write the quick start's files from README.md *literally* (the fenced
 *      blocks of "Quick start: a fresh Vite app" whose first line is
 *      `// <file>: ...`); the only change is the signalling port 8080,
 *      replaced by a free port in both files;
 *   4. `npm run build` in the app (the template's `tsc && vite build`: our
 *      published types must typecheck in a strict app);
 *   5. `node server.mjs` and `vite preview`, then open the page in Chromium
 *      (playwright-core) and Firefox (puppeteer-core over WebDriver BiDi), the
 *      project's headless launchers with a fake camera (tools/harness), and
 *      wait until each page plays the other's video: a <video> with a
 *      non-zero size that has presented frames
 *      (`getVideoPlaybackQuality().totalVideoFrames > 0`).
 *
 * Needs the npm registry (create-vite, vite, typescript and the library's
 * dependencies), so it is not part of CI. Starts browsers: step 5 runs under
 * the machine-wide browser lock (`flock /tmp/mprtc-browser.lock`, taken by
 * the script itself so that steps 1-4 do not hold it; `--lock none` when the
 * caller holds it already):
 *
 *   npm run walkthrough [-- --browsers chromium,firefox] [--keep] [--timeout-ms 90000] [--lock FILE|none]
 *
 * Exit codes: 0 both pages played video, 1 a step failed (the report says
 * which), 2 usage.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { choiceOption, type CliValues, intOption, runCli, UsageError } from './cli.js';
import { launchChromium } from './harness/setup.js';
import { launchFirefox } from './harness/firefox.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const QUICK_START_HEADING = '### Quick start: a fresh Vite app';
/** The port the quick start's files name; replaced by a free one. */
const README_PORT = '8080';

type BrowserName = 'chromium' | 'firefox';

/** One file of the README's quick start: `// path: ...` as its first line. */
export interface QuickStartFile {
  path: string;
  text: string;
}

/**
 * The files of README.md's quick start section: every fenced block between
 * {@link QUICK_START_HEADING} and the next heading whose first line is a
 * `// <relative path>: ...` comment.
 * @throws Error when the section or its files are missing.
 */
export function quickStartFiles(readme: string): QuickStartFile[] {
  const start = readme.indexOf(QUICK_START_HEADING);
  if (start < 0) throw new Error(`README.md has no "${QUICK_START_HEADING}" section`);
  const rest = readme.slice(start + QUICK_START_HEADING.length);
  const end = rest.search(/^#{1,3} /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  const files: QuickStartFile[] = [];
  for (const m of section.matchAll(/^```\w*\n([\s\S]*?)^```/gm)) {
    const text = m[1] ?? '';
    const head = /^\/\/ ([\w./-]+):/.exec(text);
    if (head?.[1]) files.push({ path: head[1], text });
  }
  if (files.length === 0) throw new Error('the README quick start has no `// <file>: ...` blocks');
  return files;
}

/** A free TCP port on 127.0.0.1. */
async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => ok(port));
    });
  });
}

function run(cmd: string, args: string[], cwd: string, timeoutMs: number): string {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_yes: 'true' } });
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed: ${x.message}\n${(x.stdout ?? '').slice(-2000)}\n${(x.stderr ?? '').slice(-2000)}`);
  }
}

/** Start a long-running child; resolves once `ready` matches its output. */
function startChild(cmd: string, args: string[], cwd: string, ready: RegExp, timeoutMs: number, log: string[]): Promise<ChildProcess> {
  return new Promise((ok, fail) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => {
      child.kill();
      fail(new Error(`${cmd} ${args.join(' ')}: not ready after ${timeoutMs} ms:\n${out.slice(-2000)}`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      const s = d.toString();
      out += s;
      log.push(s.trimEnd());
      if (ready.test(out)) {
        clearTimeout(timer);
        ok(child);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`${cmd} ${args.join(' ')} exited (${code}) before it was ready:\n${out.slice(-2000)}`));
    });
  });
}

/** What one page showed. */
export interface PageResult {
  browser: BrowserName;
  userAgent: string;
  /** Remote <video> elements on the page: size, frames shown, playback position (s). */
  videos: Array<{ width: number; height: number; framesShown: number; currentTime: number }>;
  /** Page errors and console errors. */
  errors: string[];
  ok: boolean;
}

/**
 * Evaluated in the page every second (a string, so that neither driver's
 * function serialization matters). Frames shown: the most of the element's
 * `getVideoPlaybackQuality().totalVideoFrames` and the frames its
 * `requestVideoFrameCallback` saw presented since the first probe (Firefox
 * counts no playback quality for a MediaStream it plays).
 */
const PAGE_PROBE = `(() => {
  const seen = (window.__walkthrough ??= new Map());
  return {
    userAgent: navigator.userAgent,
    videos: [...document.querySelectorAll('video')].map((v) => {
      let s = seen.get(v);
      if (!s) {
        s = { presented: 0 };
        seen.set(v, s);
        if (typeof v.requestVideoFrameCallback === 'function') {
          const onFrame = () => { s.presented++; v.requestVideoFrameCallback(onFrame); };
          v.requestVideoFrameCallback(onFrame);
        }
      }
      const quality = typeof v.getVideoPlaybackQuality === 'function' ? v.getVideoPlaybackQuality().totalVideoFrames : 0;
      return { width: v.videoWidth, height: v.videoHeight, framesShown: Math.max(quality, s.presented), currentTime: v.currentTime };
    }),
  };
})()`;

interface OpenPage {
  probe(): Promise<{ userAgent: string; videos: PageResult['videos'] }>;
  close(): Promise<void>;
}

async function openPage(name: BrowserName, url: string, errors: string[], closers: Array<() => Promise<unknown>>): Promise<OpenPage> {
  if (name === 'chromium') {
    const browser = await launchChromium();
    closers.push(() => browser.close());
    const page = await (await browser.newContext()).newPage();
    page.on('pageerror', (e) => errors.push(`page: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console: ${m.text()}`);
    });
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
    return { probe: () => page.evaluate(PAGE_PROBE), close: () => page.close() };
  }
  const browser = await launchFirefox();
  closers.push(() => browser.close());
  const page = await browser.newPage();
  page.on('pageerror', (e) => errors.push(`page: ${String((e as Error)?.message ?? e)}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
  return { probe: () => page.evaluate(PAGE_PROBE) as Promise<{ userAgent: string; videos: PageResult['videos'] }>, close: () => page.close() };
}

/**
 * Hold `flock FILE` (util-linux) until the returned function is called: a
 * child `flock FILE sh -c 'echo locked; read _'` that exits when its stdin closes.
 */
function holdLock(file: string): Promise<() => void> {
  return new Promise((ok, fail) => {
    const child = spawn('flock', [file, 'sh', '-c', 'echo locked; read _'], { stdio: ['pipe', 'pipe', 'inherit'] });
    child.once('error', fail);
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('locked')) ok(() => child.stdin?.end());
    });
    child.once('exit', (code) => fail(new Error(`flock ${file} exited (${code}) before taking the lock`)));
  });
}

export interface WalkthroughOptions {
  /** A folder a `--keep` run left: skip steps 1-4 and open its built app again. */
  reuse?: string;
  /** Lock file held around the browser step (undefined: none). */
  lock?: string;
  browsers: [BrowserName, BrowserName];
  /** Give up waiting for video after this long (ms). */
  timeoutMs: number;
  /** Keep the temporary app folder (its path is printed). */
  keep: boolean;
  log: (line: string) => void;
}

export interface WalkthroughResult {
  dir: string;
  tarball: string;
  /** Packed bytes and file count of the tarball. */
  pack: { size: number; files: number };
  /** The app's production build: its JavaScript (min and gzip bytes, as Vite reports them). */
  build: string;
  pages: PageResult[];
  ok: boolean;
}

/** Files the tarball must hold (package.json `exports`, `types`, `license`). */
const PACKAGE_FILES = [
  'package/LICENSE',
  'package/README.md',
  'package/dist/index.js',
  'package/dist/index.d.ts',
  'package/dist/strategies.js',
  'package/dist/strategies.d.ts',
  'package/dist/server/index.js',
  'package/dist/server/index.d.ts',
];

/** What steps 1-4 made (saved as walkthrough.json for `--reuse`). */
interface Prepared {
  tarball: string;
  pack: { size: number; files: number };
  build: string;
  /** The quick start's server file, relative to the app. */
  server: string;
}

/** Steps 1-4 in `dir`: pack, scaffold `dir/app`, install, write the README's files, build. */
async function prepare(dir: string, o: WalkthroughOptions): Promise<Prepared> {
  o.log(`1. npm pack (prepack builds dist/) -> ${dir}`);
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', dir], REPO, 300_000)) as Array<{ filename: string; size: number; files: Array<{ path: string }> }>;
  const info = packed[0];
  if (!info) throw new Error('npm pack printed no tarball');
  const tarball = join(dir, info.filename);
  const listed = new Set(run('tar', ['-tzf', tarball], dir, 60_000).split('\n'));
  const missing = PACKAGE_FILES.filter((f) => !listed.has(f));
  if (missing.length > 0) throw new Error(`the tarball lacks ${missing.join(', ')}`);
  o.log(`   ${info.filename}: ${(info.size / 1000).toFixed(0)} kB, ${info.files.length} files`);

  o.log('2. npm create vite@latest app -- --template vanilla-ts; npm install; npm install <tarball>');
  run('npm', ['create', '--yes', 'vite@latest', 'app', '--', '--template', 'vanilla-ts', '--no-interactive'], dir, 300_000);
  const app = join(dir, 'app');
  if (!existsSync(join(app, 'package.json'))) throw new Error('create-vite made no app');
  run('npm', ['install', '--no-audit', '--no-fund'], app, 600_000);
  run('npm', ['install', '--no-audit', '--no-fund', tarball], app, 600_000);

  const sigPort = await freePort();
  const files = quickStartFiles(readFileSync(join(app, 'node_modules/multipath-rtc/README.md'), 'utf8'));
  o.log(`3. README quick start files: ${files.map((f) => f.path).join(', ')} (port ${README_PORT} -> ${sigPort})`);
  for (const f of files) writeFileSync(join(app, f.path), f.text.replaceAll(README_PORT, String(sigPort)));
  const server = files.find((f) => f.path.endsWith('.mjs') || f.path.endsWith('.js'));
  if (!server) throw new Error('the README quick start has no server file');

  o.log('4. npm run build (tsc && vite build)');
  const buildOut = run('npm', ['run', 'build'], app, 300_000);
  const build = (buildOut.match(/^.*\.js\s.*$/gm) ?? []).join('; ').replace(/\s+/g, ' ');
  o.log(`   ${build}`);
  const prepared: Prepared = { tarball, pack: { size: info.size, files: info.files.length }, build, server: server.path };
  writeFileSync(join(dir, 'walkthrough.json'), JSON.stringify(prepared));
  return prepared;
}

export async function walkthrough(o: WalkthroughOptions): Promise<WalkthroughResult> {
  const dir = o.reuse ?? mkdtempSync(join(tmpdir(), 'mprtc-walkthrough-'));
  const children: ChildProcess[] = [];
  const closers: Array<() => Promise<unknown>> = [];
  const serverLog: string[] = [];
  try {
    const app = join(dir, 'app');
    const prepared = o.reuse ? (JSON.parse(readFileSync(join(dir, 'walkthrough.json'), 'utf8')) as Prepared) : await prepare(dir, o);
    o.log(`5. node ${prepared.server}; vite preview; ${o.browsers.join(' and ')} open the page`);
    children.push(await startChild('node', [prepared.server], app, /signalling on/, 30_000, serverLog));
    const webPort = await freePort();
    children.push(await startChild(join(app, 'node_modules/.bin/vite'), ['preview', '--host', '127.0.0.1', '--port', String(webPort), '--strictPort'], app, /Local:/, 60_000, serverLog));
    const url = `http://127.0.0.1:${webPort}/`;
    if (o.lock) {
      o.log(`   waiting for the browser lock ${o.lock}`);
      const release = await holdLock(o.lock);
      closers.unshift(async () => release());
    }
    const errors: string[][] = o.browsers.map(() => []);
    const pages: OpenPage[] = [];
    for (const [i, b] of o.browsers.entries()) pages.push(await openPage(b, url, errors[i] ?? [], closers));
    const end = Date.now() + o.timeoutMs;
    let probes: Array<{ userAgent: string; videos: PageResult['videos'] }> = [];
    const played = (p: { videos: PageResult['videos'] }) => p.videos.some((v) => v.width > 0 && v.height > 0 && v.framesShown > 0);
    for (;;) {
      probes = await Promise.all(pages.map((p) => p.probe()));
      if (probes.every(played) || Date.now() > end) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const results: PageResult[] = probes.map((p, i) => ({ browser: o.browsers[i] as BrowserName, userAgent: p.userAgent, videos: p.videos, errors: errors[i] ?? [], ok: played(p) }));
    return { dir, tarball: prepared.tarball, pack: prepared.pack, build: prepared.build, pages: results, ok: results.every((r) => r.ok) };
  } finally {
    for (const c of closers.reverse()) await c().catch(() => undefined);
    for (const c of children) c.kill();
    if (!o.keep && !o.reuse) rmSync(dir, { recursive: true, force: true });
  }
}

const USAGE = `usage: npm run walkthrough [-- --browsers chromium,firefox] [--timeout-ms 90000] [--keep] [--reuse DIR] [--lock /tmp/mprtc-browser.lock|none]
  Packs the library, follows README.md's quick start in a fresh Vite app (needs the npm registry),
  and checks that each browser's page plays the other's video. Exit 0 ok, 1 failed, 2 usage.`;
const OPTIONS = { browsers: { type: 'string' }, 'timeout-ms': { type: 'string' }, keep: { type: 'boolean' }, lock: { type: 'string' }, reuse: { type: 'string' } } as const;

async function main(v: CliValues<typeof OPTIONS>): Promise<number> {
  const names = (v.browsers ?? 'chromium,firefox').split(',');
  if (names.length !== 2) throw new UsageError(`--browsers takes two browsers (e.g. chromium,firefox), got ${v.browsers}`);
  const browsers = names.map((n) => choiceOption('browsers', n, ['chromium', 'firefox'] as const) as BrowserName) as [BrowserName, BrowserName];
  const timeoutMs = v['timeout-ms'] === undefined ? 90_000 : intOption('timeout-ms', v['timeout-ms'], 1000, 600_000);
  const t0 = Date.now();
  const lock = v.lock === 'none' ? undefined : (v.lock ?? '/tmp/mprtc-browser.lock');
  const r = await walkthrough({ reuse: v.reuse, lock, browsers, timeoutMs, keep: v.keep === true, log: (l) => console.log(l) });
  for (const p of r.pages) {
    const videos = p.videos.map((x) => `${x.width}x${x.height}, ${x.framesShown} frames shown, at ${x.currentTime.toFixed(1)} s`).join('; ');
    console.log(`${p.ok ? 'OK  ' : 'FAIL'} ${p.browser}: ${p.videos.length} video(s) ${videos} (${p.userAgent})`);
    for (const e of p.errors.slice(0, 10)) console.log(`     ${e}`);
  }
  console.log(`${r.ok ? 'walkthrough passed' : 'walkthrough FAILED'} in ${((Date.now() - t0) / 1000).toFixed(0)} s${v.keep ? ` (app kept in ${r.dir})` : ''}`);
  return r.ok ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) runCli(OPTIONS, USAGE, 'walkthrough', main);
