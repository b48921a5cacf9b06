import type { CallReport } from '../../tools/harness/report.js';
import { join } from 'node:path';

/** Where an e2e call keeps its report.json/report.html (gitignored), for looking at a failure. */
export function outDir(name: string): string {
  return join(process.cwd(), 'test-results', name);
}

/** One line about a call, for assertion messages: a failure in CI then says what happened. */
export function describeCall(r: CallReport): string {
  const paths = r.paths.map((p) => `path ${p.id} ${p.sharePct}%`).join(', ');
  return (
    `frames sent ${r.frames.sent} decoded ${r.frames.decoded} dropped ${r.frames.dropped}, ${r.fps} fps, ` +
    `freezes ${r.freezes.count} (${r.freezes.totalMs} ms), latency p95 ${r.latencyMs.p95} ms, ` +
    `keyframe requests ${r.keyframeRequests}, ${paths}; errors: ${r.errors.slice(0, 3).join(' | ') || 'none'}`
  );
}

/**
 * Frames flow (issue 11: e2e tests assert behaviour, quality thresholds live in the benchmarks):
 * frames were decoded in at least half of the report seconds from `fromS` on, and at least a
 * fifth of the frames sent were decoded. A broken call (codec, transport, decoder) decodes ~0;
 * a call squeezed by a CPU-heavy neighbour (2 cores, another process encoding) may drop to a
 * third of its frame rate and still passes. Returns a message for the assertion, '' when met.
 */
export function framesFlowProblem(r: CallReport, fromS = 3): string {
  const secs = r.perSecond.filter((s) => s.t >= fromS);
  const withFrames = secs.filter((s) => s.fps > 0).length;
  const problems: string[] = [];
  if (secs.length === 0) problems.push(`no report seconds from ${fromS} s on`);
  else if (withFrames < secs.length / 2) problems.push(`frames decoded in ${withFrames} of ${secs.length} seconds from ${fromS} s on`);
  if (!(r.frames.decoded >= 0.2 * r.frames.sent)) problems.push(`${r.frames.decoded} of ${r.frames.sent} frames decoded`);
  return problems.length === 0 ? '' : `${problems.join('; ')} (${describeCall(r)})`;
}
