/**
 * Real content for the browser tools (`npm run call`, `npm run bench:browser`,
 * the e2e tests): a natural clip from ../shared/media converted once with
 * ffmpeg to the Y4M that Chromium's fake camera and the bench page read,
 * cached under out/media/ (keyed by clip, size, frame rate and length). The
 * library never needs this: it is for tools and tests only.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { REPO_ROOT } from './paths.js';

/** The default natural clip (webrtc/samples, natural scenes with cuts). */
export const DEFAULT_CLIP_SOURCE = resolve(REPO_ROOT, '../shared/media/mixed-content.webm');
/** Seconds of the clip converted (Chromium and the bench page loop it). */
export const DEFAULT_CLIP_SECONDS = 20;

/** Where the converted clip lives. */
export function clipCachePath(source: string, width: number, height: number, fps: number, seconds = DEFAULT_CLIP_SECONDS): string {
  return resolve(REPO_ROOT, 'out/media', `${basename(source).replace(/\.[^.]+$/, '')}-${width}x${height}@${fps}-${seconds}s.y4m`);
}

/** Outcome of {@link prepareClip}: the Y4M file, or why there is none and how to get one. */
export interface ClipResult {
  file?: string;
  reason?: string;
}

/** True when an `ffmpeg` binary runs. */
export function hasFfmpeg(): boolean {
  try {
    execFileSync('ffmpeg', ['-version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The clip as Y4M (I420) at `width`x`height`@`fps`, made with ffmpeg on first
 * use and reused afterwards. Never throws: returns `{ reason }` saying what is
 * missing (the clip, or ffmpeg and how to install it) or how ffmpeg failed.
 */
export function prepareClip(o: { width: number; height: number; fps: number; source?: string; seconds?: number; log?: (l: string) => void }): ClipResult {
  const source = o.source ?? DEFAULT_CLIP_SOURCE;
  const seconds = o.seconds ?? DEFAULT_CLIP_SECONDS;
  const out = clipCachePath(source, o.width, o.height, o.fps, seconds);
  // A complete Y4M of that size is at least `frames x frame bytes`; anything shorter is a broken conversion.
  const minBytes = Math.floor(seconds * o.fps * 0.9) * ((o.width * o.height * 3) / 2);
  if (existsSync(out) && statSync(out).size >= minBytes) return { file: out };
  if (!existsSync(source)) return { reason: `the test clip ${source} is missing (it comes with ../shared/media beside the repository)` };
  if (!hasFfmpeg()) return { reason: 'ffmpeg is not installed (Debian/Ubuntu: sudo apt-get install ffmpeg)' };
  mkdirSync(dirname(out), { recursive: true });
  const tmp = `${out}.part-${process.pid}`;
  o.log?.(`converting ${source} to ${out} with ffmpeg (once)...`);
  try {
    execFileSync(
      'ffmpeg',
      [
        '-y',
        '-loglevel',
        'error',
        '-stream_loop',
        '-1',
        '-i',
        source,
        '-vf',
        `scale=${o.width}:${o.height}:flags=lanczos,fps=${o.fps}`,
        '-pix_fmt',
        'yuv420p',
        '-t',
        String(seconds),
        '-f',
        'yuv4mpegpipe',
        tmp,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    renameSync(tmp, out);
  } catch (e) {
    return { reason: `ffmpeg failed on ${source}: ${String((e as { stderr?: Buffer }).stderr ?? e).slice(0, 300)}` };
  }
  if (statSync(out).size < minBytes) return { reason: `ffmpeg wrote a short clip ${out} (${statSync(out).size} bytes)` };
  return { file: out };
}

/** What a run used as its video source, for reports. */
export interface SourceInfo {
  kind: 'clip' | 'file' | 'synthetic';
  file?: string;
  /** Why the synthetic source was used when a clip was wanted. */
  reason?: string;
}

/**
 * The source a CLI run uses: `--video FILE` as given, `--synthetic` for the
 * built-in pattern, else the default clip. Without ffmpeg or the clip this
 * throws, naming what is missing: a benchmark must not silently change its
 * source. @throws Error
 */
export function resolveSource(o: { video?: string; synthetic?: boolean; width: number; height: number; fps: number; log?: (l: string) => void }): SourceInfo {
  if (o.video && o.synthetic) throw new Error('--video and --synthetic exclude each other');
  if (o.video) {
    if (!existsSync(o.video)) throw new Error(`--video ${o.video}: no such file`);
    return { kind: 'file', file: resolve(o.video) };
  }
  if (o.synthetic) return { kind: 'synthetic' };
  const clip = prepareClip(o);
  if (!clip.file) throw new Error(`no real video for this run: ${clip.reason}. Install it, or pass --synthetic for the built-in pattern.`);
  return { kind: 'clip', file: clip.file };
}
