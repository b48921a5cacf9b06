/**
 * Issue 2 acceptance: a real two-browser call over two emulated paths.
 * Behaviour with wide margins only (a loaded 2-core machine must not fail
 * them); quality numbers are the benchmarks' job (issue 11 item 6).
 */
import { describe, expect, it } from 'vitest';
import { runCall } from '../../tools/harness/run-call.js';
import { peerView } from '../../tools/harness/stats-view.js';
import { describeCall, framesFlowProblem, outDir } from './out-dir.js';
import { parseScenario } from '../../sim/net/scenario.js';
import type { Scenario } from '../../sim/net/scenario.js';

// Since the best-path floor (issue 10) Converge puts media on a second path only when the
// better one cannot meet the frame deadlines alone, which depends on the clip: the tests of
// the transport below use round robin, which puts media on every usable path.
const twoPaths = (extra: Record<string, unknown> = {}): Scenario =>
  parseScenario(
    {
      name: 'e2e-two-paths',
      paths: [
        { name: 'fast', up: { rateMbps: 3, delayMs: 20, queue: { ms: 200 } } },
        { name: 'slow', up: { rateMbps: 3, delayMs: 50, queue: { ms: 200 }, ...extra } },
      ],
    },
    process.cwd(),
  );

describe('two-path call', () => {
  it('decodes frames, in order, with both paths carrying media through their own relays', async () => {
    // The transport, not a scheduling policy, is under test: round robin puts every other packet
    // on each path whatever the content needs (Converge uses path 1 only when path 0 cannot
    // carry the video alone, which depends on the clip; bench-paths.e2e.ts checks that on carriers).
    const { report } = await runCall({ out: outDir('call-1'), scenario: twoPaths(), durationS: 18, scheduler: 'roundrobin' });
    const r = report;
    expect(r.errors.filter((e) => !/console/.test(e))).toEqual([]);
    expect(r.frames.sent).toBeGreaterThan(100);
    expect(framesFlowProblem(r)).toBe('');
    expect(r.framesOutOfOrder).toBe(0);
    expect(r.paths).toHaveLength(2);
    // Round robin gives ~50/50; a dead or starved path gives ~0.
    for (const p of r.paths) expect(p.mediaPacketsSent, describeCall(r)).toBeGreaterThan(100);
    expect(r.pathUsage?.ok, r.pathUsage?.problems.join('; ')).toBe(true);
    // Each path really crossed its own relay: distinct remote addresses.
    expect(new Set(r.paths.map((p) => p.remoteAddress)).size).toBe(2);
    expect(r.samePair).toEqual([]);
    // Events keep their word: Connected once per peer, the remote video track once on the receiver.
    const events = r.events as Array<{ peer: string; type: string }>;
    const count = (peer: string, type: string): number => events.filter((e) => e.peer === peer && e.type === type).length;
    expect([count('sender', 'connected'), count('receiver', 'connected')]).toEqual([1, 1]);
    expect(count('receiver', 'remote-track')).toBe(1);
    expect(count('sender', 'remote-track')).toBe(0);
    // App data (tools/page/main.ts): the sender's 50 reliable messages, sent on Connected before any
    // path was up, all arrived exactly once and in order.
    const data = (events as Array<{ peer: string; type: string; detail: [string, { reliable: boolean }] }>).filter((e) => e.peer === 'receiver' && e.type === 'data');
    expect(data.map((e) => e.detail[0])).toEqual(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? `msg ${i}` : `bytes ${i},${255 - i}`)));
    expect(data.every((e) => e.detail[1].reliable)).toBe(true);
    expect(peerView(r.final.receiver).dataChannel?.messagesReceived).toBe(50);
    expect(peerView(r.final.sender).dataChannel?.messagesInFlight).toBe(0);
  });

  it('survives one path going down for 5 s and resumes on both paths', async () => {
    const scenario = twoPaths({ downPeriods: [[8, 13]] });
    // Round robin: media goes on every usable path, so "resumes on both" tests the transport.
    const { report: r } = await runCall({ out: outDir('call-2'), scenario, durationS: 22, scheduler: 'roundrobin' });
    expect(framesFlowProblem(r)).toBe('');
    // Video kept flowing while path 1 was down (emulator seconds 8-13, report seconds ~6-12).
    const during = r.perSecond.filter((s) => s.t >= 9 && s.t <= 12);
    const framesDuring = during.reduce((n, s) => n + s.fps, 0);
    expect(framesDuring, describeCall(r)).toBeGreaterThan(10);
    // After it came back, both paths carry media again.
    const after = r.perSecond.filter((s) => s.t >= 18);
    const path1After = after.reduce((n, s) => n + (s.paths.find((p) => p.id === 1)?.mediaPackets ?? 0), 0);
    const path0After = after.reduce((n, s) => n + (s.paths.find((p) => p.id === 0)?.mediaPackets ?? 0), 0);
    expect(path0After).toBeGreaterThan(0);
    expect(path1After).toBeGreaterThan(0);
  });
});

describe('path restart', () => {
  it('a path that cannot connect at first is restarted, reported, and carries media once it can', async () => {
    // Path 1's relay drops everything for its first 16 s. The emulator starts 1-5 s before the call on a
    // quiet machine and up to ~8 s before it on a loaded one (one CI run: path 1 connected at 4.0 s with no
    // restart behind a [0, 12] period): the path stays down >= 7 s into the call, so with a 4 s connect
    // timeout at least one restart must happen before it can connect.
    const scenario = twoPaths({ downPeriods: [[0, 16]] });
    // Round robin: once path 1 is up it carries media whatever the clip needs.
    const { report: r } = await runCall({ out: outDir('call-3'), scenario, durationS: 24, connectTimeoutMs: 4000, scheduler: 'roundrobin' });
    const p1 = [r.final.sender, r.final.receiver].map((st) => {
      const p = peerView(st).paths.find((x) => x.pathId === 1);
      return p && { state: p.state, iceRestarts: p.iceRestarts, connectMs: (p.connectTime ?? 0) * 1000 };
    });
    expect(
      p1.every((p) => p?.state === 'connected'),
      JSON.stringify(p1),
    ).toBe(true);
    expect(Math.max(...p1.map((p) => p?.iceRestarts ?? 0)), JSON.stringify(p1)).toBeGreaterThanOrEqual(1);
    expect(
      p1.every((p) => (p?.connectMs ?? 0) > 4000),
      JSON.stringify(p1),
    ).toBe(true);
    // Reported through the public event: a 'retrying' with a reason came before.
    const events = r.events as Array<{ type?: string; detail?: [number, string, { reason: string }] }>;
    expect(events.some((e) => e.type === 'path-state' && e.detail?.[0] === 1 && e.detail[1] === 'retrying' && e.detail[2].reason === 'connect-timeout')).toBe(true);
    const path1Media = r.perSecond.reduce((n, s) => n + (s.paths.find((p) => p.id === 1)?.mediaPackets ?? 0), 0);
    expect(path1Media, describeCall(r)).toBeGreaterThan(0);
  });
});
