/**
 * Issue 2 acceptance: a real two-browser call over two emulated paths.
 */
import { describe, expect, it } from 'vitest';
import { runCall } from '../../tools/harness/run-call.js';
import { describeCall, outDir } from './out-dir.js';
import { parseScenario } from '../../tools/net/scenario.js';
import type { Scenario } from '../../tools/net/scenario.js';

const twoPaths = (extra: Record<string, unknown> = {}): Scenario =>
  parseScenario(
    {
      name: 'e2e-two-paths',
      paths: [
        { name: 'fast', up: { rateMbps: 8, delayMs: 20, queue: { ms: 200 } } },
        { name: 'slow', up: { rateMbps: 5, delayMs: 50, queue: { ms: 200 }, ...extra } },
      ],
    },
    process.cwd(),
  );

describe('two-path call', () => {
  it('decodes >= 90% of frames at >= 80% of the camera fps, in order, with both paths carrying >= 20% of media', async () => {
    // Issue 2's split: in proportion to the per-path rates (Converge Eq. 1 without QoE feedback).
    const { report } = await runCall({ out: outDir('call-1'), scenario: twoPaths(), durationS: 18, qoeFeedback: false });
    const r = report;
    expect(r.errors.filter((e) => !/console/.test(e))).toEqual([]);
    expect(r.frames.sent).toBeGreaterThan(100);
    expect(r.frames.decoded / r.frames.sent, describeCall(r)).toBeGreaterThanOrEqual(0.9);
    expect(r.fps).toBeGreaterThanOrEqual(0.8 * r.camera.fps);
    expect(r.framesOutOfOrder).toBe(0);
    expect(r.paths).toHaveLength(2);
    for (const p of r.paths) expect(p.sharePct).toBeGreaterThanOrEqual(20);
    // Each path really crossed its own relay: distinct remote addresses.
    expect(new Set(r.paths.map((p) => p.remoteAddress)).size).toBe(2);
    expect(r.samePair).toEqual([]);
  });

  it('survives one path going down for 5 s and resumes on both paths', async () => {
    const scenario = twoPaths({ downPeriods: [[8, 13]] });
    const { report: r } = await runCall({ out: outDir('call-2'), scenario, durationS: 22, qoeFeedback: false });
    expect(r.frames.decoded / r.frames.sent, describeCall(r)).toBeGreaterThanOrEqual(0.8);
    // Video kept flowing while path 1 was down (seconds 9-13 of the emulator clock).
    const during = r.perSecond.filter((s) => s.t >= 10 && s.t <= 13);
    for (const s of during) expect(s.fps).toBeGreaterThan(0);
    // After it came back, both paths carry media again.
    const after = r.perSecond.filter((s) => s.t >= 18);
    const path1After = after.reduce((n, s) => n + (s.paths.find((p) => p.id === 1)?.mediaPackets ?? 0), 0);
    const path0After = after.reduce((n, s) => n + (s.paths.find((p) => p.id === 0)?.mediaPackets ?? 0), 0);
    expect(path0After).toBeGreaterThan(0);
    expect(path1After).toBeGreaterThan(0);
  });
});
