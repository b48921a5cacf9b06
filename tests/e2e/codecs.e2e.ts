/**
 * Every selectable codec carries a real call (H.264 is covered by call.e2e.ts).
 */
import { describe, expect, it } from 'vitest';
import { runCall } from '../../tools/harness/run-call.js';
import { framesFlowProblem, outDir } from './out-dir.js';

describe.each(['vp8', 'vp9', 'av1'] as const)('codec %s', (codec) => {
  it('decodes frames over two paths', async () => {
    const { report: r } = await runCall({ out: outDir(`codec-${codec}`), codec, durationS: 8 });
    expect(r.codec).toBe(codec);
    expect(r.frames.sent).toBeGreaterThan(100);
    // Wide margin: a codec that does not work decodes ~0 (issue 11 item 6: no quality thresholds here).
    expect(framesFlowProblem(r)).toBe('');
    expect(r.framesOutOfOrder).toBe(0);
  });
});
