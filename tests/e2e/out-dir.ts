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
