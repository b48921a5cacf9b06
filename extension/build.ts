/**
 * `npm run build:extension`: build the Chrome extension (MV3) with Vite into
 * out/extension/ (load it unpacked from there) and pack that folder into
 * out/extension.zip (what the Chrome Web Store takes). Checks what Chrome
 * would reject at load time: every file the manifest names exists, no inline
 * script in the pages (the CSP forbids it), the injected script is a classic
 * script (no import/export).
 */
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import JSZip from 'jszip';
import { build } from 'vite';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const REPO = resolve(HERE, '..');
/** Unpacked extension folder. */
export const EXTENSION_DIR = join(REPO, 'out', 'extension');
/** Packed extension. */
export const EXTENSION_ZIP = join(REPO, 'out', 'extension.zip');

interface Manifest {
  version: string;
  background: { service_worker: string };
  action: { default_popup: string };
}

/** Build the unpacked extension and the zip; returns their paths and the zip size (bytes). @throws Error when the build or a check fails. */
export async function buildExtension(): Promise<{ dir: string; zip: string; zipBytes: number; files: number }> {
  await build({ configFile: join(HERE, 'vite.config.ts') });
  const manifest = JSON.parse(readFileSync(join(HERE, 'manifest.json'), 'utf8')) as Manifest;
  manifest.version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
  writeFileSync(join(EXTENSION_DIR, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  check(manifest);
  const zip = new JSZip();
  const files = listFiles(EXTENSION_DIR);
  // Fixed dates: the same build gives the same zip.
  for (const f of files) zip.file(relative(EXTENSION_DIR, f).split('\\').join('/'), readFileSync(f), { date: new Date(Date.UTC(2020, 0, 1)) });
  const bytes = await zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE', compressionOptions: { level: 9 } });
  writeFileSync(EXTENSION_ZIP, bytes);
  return { dir: EXTENSION_DIR, zip: EXTENSION_ZIP, zipBytes: bytes.length, files: files.length };
}

function check(manifest: Manifest): void {
  const problems: string[] = [];
  for (const f of [manifest.background.service_worker, manifest.action.default_popup, 'call.html', 'announce.js']) {
    if (!exists(join(EXTENSION_DIR, f))) problems.push(`missing ${f}`);
  }
  for (const page of ['call.html', 'popup.html']) {
    const html = readFileSync(join(EXTENSION_DIR, page), 'utf8');
    for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
      if (!/\bsrc=/.test(m[1]) || m[2].trim() !== '') problems.push(`${page}: inline script (blocked by script-src 'self')`);
    }
  }
  const announce = readFileSync(join(EXTENSION_DIR, 'announce.js'), 'utf8');
  if (/^\s*(import|export)\b/m.test(announce)) problems.push('announce.js is a module (executeScript runs classic scripts)');
  if (problems.length) throw new Error(`extension build check failed:\n  ${problems.join('\n  ')}`);
}

function exists(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(join(dir, e.name)) : [join(dir, e.name)]))
    .sort();
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  buildExtension().then(
    (r) => process.stdout.write(`extension: ${relative(process.cwd(), r.dir)}/ (${r.files} files), ${relative(process.cwd(), r.zip)} ${(r.zipBytes / 1024).toFixed(1)} kB\n`),
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
