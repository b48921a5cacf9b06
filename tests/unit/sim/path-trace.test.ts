import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../../sim/net/scenario.js';
import { PathTracer } from '../../../sim/path-trace.js';
import { simulate } from '../../../sim/simulator.js';
import { twoConstantPaths } from './fixtures.js';
import { encodeControl } from '../../../src/wire/encode.js';

const twoPath = twoConstantPaths;

/** A padding datagram on path 0 with per-path seq `seq`, sent at `sendUs`. */
const dgram = (seq: number, sendUs: number) => encodeControl({ pathId: 0, pathSeq: seq, sendTimeUs: sendUs }, { kind: 'padding', padding: { size: 100 } });

describe('PathTracer (sim/path-trace.ts, SimOptions.pathTrace)', () => {
  it('is measurement only: a traced run gives the untraced result, with one sample per 100 ms per path', () => {
    const opts = { scenario: twoPath, scheduler: 'converge' as const, fec: 'path' as const, seed: 2, durationS: 6 };
    const off = simulate(opts);
    const on = simulate({ ...opts, pathTrace: true });
    const { pathTrace, ...rest } = on;
    expect(JSON.stringify(rest)).toBe(JSON.stringify(off));
    expect(pathTrace?.paths).toHaveLength(2);
    const n = pathTrace?.t.length ?? 0;
    expect(n).toBeGreaterThanOrEqual(59);
    for (const p of pathTrace?.paths ?? []) for (const col of Object.values(p)) expect(col).toHaveLength(n);
    // Ground truth: path a's capacity is 5 Mbps; the sender's view of a running call has an estimate and reports.
    expect(pathTrace?.paths[0].cap[n - 1]).toBeCloseTo(5, 0);
    expect(pathTrace?.paths[0].est[n - 1]).toBeGreaterThan(0.3);
    expect(pathTrace?.paths[0].fbGapMs[n - 1]).toBeLessThan(200);
    expect(pathTrace?.paths[0].rloss[n - 1]).toBeGreaterThanOrEqual(0); // GCC has the loss-queue bound's loss
  });

  it('bins one-way delay, jitter, seq gaps and bytes per path; the feedback gap counts from the last datagram back', () => {
    const t = new PathTracer(1);
    const input = {
      capBps: 1e6,
      netMs: 0,
      netBytes: 0,
      drops: 0,
      estBps: 1e6,
      gccBps: 1e6,
      delayBps: 1e6,
      lossBps: 1e6,
      ackedBps: 1e6,
      sendBps: 1e6,
      queuedBytes: 0,
      srttMs: 50,
      minRttMs: 40,
      rttMs: 60,
      lossFrac: 0,
      recentLossFrac: 0,
      trend: 0,
      threshold: 6,
      usage: 'normal',
      onsets: 0,
      up: true,
      demoted: false,
      sharePct: 100,
    };
    // Seqs 0, 1, 3 (2 lost) sent 10 ms apart at 10, 20, 40 ms, arriving 30, 40, 80 ms later.
    t.onArrival(0, dgram(0, 10_000), 40_000);
    t.onArrival(0, dgram(1, 20_000), 60_000);
    t.onArrival(0, dgram(3, 40_000), 120_000);
    t.onFeedback(0, 90_000);
    expect(t.due(99_999)).toBe(false);
    expect(t.due(100_000)).toBe(true);
    t.sample(100_000, 2e6, [input]);
    const c = t.out.paths[0];
    expect(c.owd[0]).toBeCloseTo((30 + 40 + 80) / 3, 1);
    expect(c.owdMin[0]).toBe(30);
    expect(c.owdMax[0]).toBe(80);
    expect(c.gaps[0]).toBe(1);
    // |inter-arrival - inter-send|: |20 - 10| and |60 - 20| ms.
    expect(c.jit[0]).toBeCloseTo(25, 1);
    expect(c.fbGapMs[0]).toBe(10);
    expect(c.use[0]).toBe(0);
    expect(t.out.target[0]).toBe(2);
    // The next bin starts empty.
    t.sample(200_000, 2e6, [input]);
    expect(c.owd[1]).toBe(-1);
    expect(c.gaps[1]).toBe(0);
  });

  it('counts resends and key frame bytes handed to each path (a resend: the flow seq sent before on that path, or over 20 ms earlier on another)', () => {
    const t = new PathTracer(2);
    const media = (path: number, pathSeq: number, flowSeq: number, keyFrame: boolean) =>
      encodeControl(
        { pathId: path, pathSeq, sendTimeUs: 0 },
        {
          kind: 'media',
          media: { streamId: 0, flowSeq, frameId: 1, fragIndex: 0, fragCount: 1, keyFrame, nalClass: 0, priority: 2, captureUs: 0, retransmission: false, payload: new Uint8Array(500) },
        },
      );
    const key = media(0, 0, 7, true);
    const delta = media(0, 1, 8, false);
    t.onSend(0, key, 10_000);
    t.onSend(0, delta, 11_000);
    // A copy on path 1 within 20 ms (a probe copy), then resends: path 1 after 20 ms, path 0 again.
    t.onSend(1, media(1, 0, 8, false), 20_000);
    const late = media(1, 1, 7, true);
    t.onSend(1, late, 40_000);
    const again = media(0, 2, 8, false);
    t.onSend(0, again, 50_000);
    const none = {
      capBps: 0,
      netMs: 0,
      netBytes: 0,
      drops: 0,
      estBps: 0,
      gccBps: 0,
      delayBps: 0,
      lossBps: 0,
      ackedBps: 0,
      sendBps: 0,
      queuedBytes: 0,
      srttMs: 0,
      minRttMs: 0,
      rttMs: 0,
      lossFrac: 0,
      recentLossFrac: 0,
      trend: 0,
      threshold: 0,
      usage: 'normal',
      onsets: 0,
      up: true,
      demoted: false,
      sharePct: 0,
    };
    t.sample(100_000, 1e6, [none, none]);
    const [a, b] = t.out.paths;
    expect(a.keyKB[0]).toBeCloseTo(key.length / 1000, 1);
    expect(a.rtxKB[0]).toBeCloseTo(again.length / 1000, 1);
    expect(b.rtxKB[0]).toBeCloseTo(late.length / 1000, 1);
    expect(b.keyKB[0]).toBeCloseTo(late.length / 1000, 1);
    // First sends are remembered 3 s: seq 7 again at 3.21 s is a first send; a same-path resend within 20 ms is a resend.
    t.sample(3_200_000, 1e6, [none, none]);
    t.onSend(1, media(1, 2, 7, true), 3_210_000);
    t.onSend(0, media(0, 3, 9, false), 3_220_000);
    const soon = media(0, 4, 9, false);
    t.onSend(0, soon, 3_230_000);
    t.sample(3_300_000, 1e6, [none, none]);
    expect(b.rtxKB[2]).toBe(0);
    expect(b.keyKB[2]).toBeGreaterThan(0);
    expect(a.rtxKB[2]).toBeCloseTo(soon.length / 1000, 1);
  });

  it('times one-way delay on the sender clock: a receiver clock 50 ms behind does not shift it', () => {
    const r = simulate({ scenario: twoPath, scheduler: 'converge', fec: 'path', seed: 1, durationS: 3, pathTrace: true, clockSkewMs: 50 });
    const mins = (r.pathTrace?.paths[0].owdMin ?? []).filter((x) => x >= 0);
    expect(mins.length).toBeGreaterThan(10);
    // Path a's one-way delay is at least its 20 ms propagation, at most that plus its 150 ms queue.
    expect(Math.min(...mins)).toBeGreaterThanOrEqual(19);
    expect(Math.max(...mins)).toBeLessThan(200);
  });

  it('writes a value the estimator lacks as -1 (non-negative columns) or null (signed ones), not as 0 or NaN', () => {
    const t = new PathTracer(1);
    const nan = Number.NaN;
    t.sample(100_000, 1e6, [
      {
        capBps: 1e6,
        netMs: 0,
        netBytes: 0,
        drops: 0,
        estBps: 1e6,
        gccBps: nan,
        delayBps: nan,
        lossBps: nan,
        ackedBps: nan,
        sendBps: 0,
        queuedBytes: 0,
        srttMs: nan,
        minRttMs: nan,
        rttMs: nan,
        lossFrac: nan,
        recentLossFrac: nan,
        trend: nan,
        threshold: nan,
        usage: 'undefined',
        onsets: nan,
        up: true,
        demoted: false,
        sharePct: 0,
      },
    ]);
    const c = t.out.paths[0];
    for (const col of [c.gcc, c.dly, c.lss, c.ack, c.srtt, c.minRtt, c.rtt, c.loss, c.rloss, c.onsets]) expect(col[0]).toBe(-1);
    expect(c.trend[0]).toBeNull();
    expect(c.thr[0]).toBeNull();
    expect(JSON.parse(JSON.stringify(c)).ack[0]).toBe(-1);
  });

  it('refuses overlay (relay) scenarios, whose relay links it does not follow', () => {
    const overlay = parseScenario({ name: 'relayed', paths: [{ name: 'a', up: { rateMbps: 5, delayMs: 20 }, relays: [{ name: 'r', up: { rateMbps: 5, delayMs: 30 } }] }] }, '.');
    expect(() => simulate({ scenario: overlay, scheduler: 'converge', fec: 'path', seed: 1, durationS: 1, pathTrace: true })).toThrow(/overlay/);
  });
});
