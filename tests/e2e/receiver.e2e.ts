/**
 * Issue 4 acceptance: path-specific FEC under loss, and QoE feedback under a
 * delay spike on path 1.
 */
import { describe, expect, it } from 'vitest';
import { runCall } from '../../tools/harness/run-call.js';
import { describeCall, framesFlowProblem, outDir } from './out-dir.js';
import { parseScenario } from '../../sim/net/scenario.js';

const lossy = () =>
  parseScenario(
    {
      name: 'e2e-loss5',
      paths: [
        { name: 'path0', up: { rateMbps: 15, delayMs: 100, loss: 0.05, queue: { ms: 200 } } },
        { name: 'path1', up: { rateMbps: 15, delayMs: 100, queue: { ms: 200 } } },
      ],
    },
    process.cwd(),
  );

describe('receiver and FEC', () => {
  it('path FEC sends parity at 5% loss on one path, rebuilds lost packets, and frames keep flowing', async () => {
    // Media on the lossy path alone (Converge's best-path floor would move it all to the clean
    // path and FEC would have nothing to do; round robin splits every frame over both paths and
    // collapsed into key frame requests under load): path FEC itself is under test.
    // Behaviour only (issue 11 item 6): FEC is sent, rebuilds packets, stays a fraction of the media,
    // and the call decodes frames throughout. How much FEC helps (overhead ~2-5 %, utilization
    // >= 50 %, frame rate with vs without FEC) is measured by the simulator's loss-sweep: a frame
    // rate compared between two browser calls failed 1 run in 5 on a loaded machine (single:0 with
    // path FEC at 10.9 fps, 7 key frame requests, vs the call without FEC).
    const { report: r } = await runCall({ out: outDir('receiver-1'), scenario: lossy(), durationS: 20, fec: 'path', seed: 7, scheduler: 'single', singlePath: 0 });
    expect(r.fec.packetsSent, describeCall(r)).toBeGreaterThan(0);
    expect(r.fec.recovered, describeCall(r)).toBeGreaterThan(0);
    const media = r.paths.reduce((n, p) => n + p.mediaPacketsSent, 0);
    expect(r.fec.packetsSent, describeCall(r)).toBeLessThan(media);
    expect(framesFlowProblem(r, 8)).toBe('');
  });

  it('moves media off path 1 after a +150 ms delay spike (negative-alpha feedback or fault handling), and playback recovers', async () => {
    const scenario = parseScenario(
      {
        name: 'e2e-delay-spike',
        paths: [
          // Path 1 is the better path before the spike (a frame arrives earlier over 8 Mbps / 40 ms
          // than over 1.2 Mbps / 30 ms), so it carries media; after +150 ms it is not.
          { name: 'path0', up: { rateMbps: 1.2, delayMs: 30, queue: { ms: 200 } } },
          {
            name: 'path1',
            up: {
              rateMbps: 8,
              delayMs: 40,
              queue: { ms: 200 },
              schedule: [
                { atS: 10, delayMs: 190 },
                { atS: 30, delayMs: 40 },
              ],
            },
          },
        ],
      },
      process.cwd(),
    );
    const { report: r } = await runCall({ out: outDir('receiver-3'), scenario, durationS: 26, scheduler: 'converge' });
    // Feedback naming path 1 with a negative alpha appears right after the spike. The emulator's
    // clock starts 1-2 s before the call's first report second, so the spike (emulator 10 s)
    // lands in report seconds 8-10.
    // The window is wide (report seconds 6-16) so a loaded machine's late report seconds still fall in it.
    // Media leaves the late path: by negative QoE feedback (Converge §4.2), or, first, by the
    // sender's fault handling (fast failover and path hysteresis, issue 11: a 150 ms delay jump
    // silences the path's reports for over 2 x RTT and demotes it before feedback is needed).
    const early = r.perSecond.filter((s) => s.t >= 6 && s.t <= 16).flatMap((s) => s.qoeFeedback);
    const share1 = (from: number, to: number) => {
      const w = r.perSecond.filter((s) => s.t >= from && s.t <= to);
      const m1 = w.reduce((n, s) => n + (s.paths.find((p) => p.id === 1)?.mediaPackets ?? 0), 0);
      const all = w.reduce((n, s) => n + s.paths.reduce((a, p) => a + p.mediaPackets, 0), 0);
      return all > 0 ? m1 / all : 0;
    };
    const feedback = early.some((f) => f.pathId === 1 && f.alpha < 0);
    expect(feedback || share1(10, 16) < 0.5 * share1(2, 7), describeCall(r)).toBe(true);
    // Afterwards playback goes on: frames are decoded in most seconds of the window (how smooth is the
    // simulator's delay-spike run's business).
    const later = r.perSecond.filter((s) => s.t >= 16 && s.t <= 25);
    const secondsWithFrames = later.filter((s) => s.fps > 0).length;
    expect(secondsWithFrames, describeCall(r)).toBeGreaterThanOrEqual(later.length / 2);
  });
});
