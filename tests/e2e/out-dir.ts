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
 * One path's seconds for a failure message: `t:media packets,rate kbps,RTT ms,loss %` plus flags
 * (`D` benched: `stats().paths[].demoted`, by the hysteresis or on probation; `d` not up; the state reason when it is not 'connected').
 */
export function pathTimeline(r: CallReport, id: number, fromS = 0): string {
  return r.perSecond
    .filter((s) => s.t >= fromS)
    .map((s) => {
      const p = s.paths.find((q) => q.id === id);
      if (!p) return `${s.t}:-`;
      const flags = `${p.demoted ? 'D' : ''}${p.up ? '' : 'd'}${p.stateReason && p.stateReason !== 'connected' ? `(${p.stateReason})` : ''}`;
      return `${s.t}:${p.mediaPackets},${Math.round(p.rateBps / 1000)},${Math.round(p.rttMs)},${p.lossPct}${flags}`;
    })
    .join(' ');
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
