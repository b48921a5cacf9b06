/**
 * Issue 16 (overlay): a call over real TURN relays. Three coturn instances on
 * 127.0.0.1, each behind its own emulated link (tools/harness/coturn.ts,
 * run-call.ts `overlay`); the call's two paths start on relays 0 and 1, and
 * at 8 s path 0 moves to relay 2 by an ICE restart with the new TURN server
 * (MultipathCall.switchRelay). Behaviour only, with wide margins: the switch
 * happened (new relayed candidate, relay 2's link carries the path), media
 * kept flowing on both paths and frames kept being decoded. The freeze
 * around the switch is printed (the issue's 500 ms target is a measurement
 * on a loaded 2-core machine, not an assertion; the test fails only past 2 s).
 */
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../sim/net/scenario.js';
import { runCall } from '../../tools/harness/run-call.js';
import { describeCall, outDir } from './out-dir.js';

const SWITCH_AT_S = 8;
const DURATION_S = 18;

describe('overlay: TURN relays', () => {
  it('holds a call over two coturn relays and moves one path to a third relay mid-call without stopping media', async () => {
    const link = (k: number) => ({ name: `relay${k}`, up: { rateMbps: 4, delayMs: 10 + 5 * k, queue: { ms: 200 } } });
    const scenario = parseScenario({ name: 'e2e-relays', paths: [link(0), link(1), link(2)] }, process.cwd());
    // mtput splits every frame by path rate, so both paths carry media whatever their RTTs do during the restart.
    const { report, overlay } = await runCall({
      out: outDir('relays'),
      scenario,
      durationS: DURATION_S,
      scheduler: 'mtput',
      overlay: { callPaths: 2, relaySwitch: { atS: SWITCH_AT_S, pathId: 0, relay: 2 } },
    });
    const why = `${describeCall(report)}; overlay ${JSON.stringify(overlay)}`;
    console.log(`relay switch: longest frame gap from 1 s before the switch to the end ${overlay?.maxFrameGapAfterSwitchMs} ms (issue 16 target < 500 ms)`);
    expect(overlay?.switched?.receiver, why).toBe(1); // the receiver page offers every path and drives its relay
    expect(overlay?.switched?.sender, why).toBe(0);
    // Through TURN before and after, on another relayed address after.
    expect(
      overlay?.pairsBefore?.map((p) => p.type),
      why,
    ).toEqual(['relay', 'relay']);
    expect(
      overlay?.pairsAfter?.map((p) => p.type),
      why,
    ).toEqual(['relay', 'relay']);
    expect(overlay?.pairsAfter?.[0].local, why).not.toBe(overlay?.pairsBefore?.[0].local);
    expect(overlay?.pairsAfter?.[1].local, why).toBe(overlay?.pairsBefore?.[1].local);
    // Relay 2's link was idle before the switch and carries path 0 after it; relay 1 keeps path 1.
    expect(overlay?.relayBytesBefore?.[2], why).toBe(0);
    expect(overlay?.relayBytesAfter?.[2], why).toBeGreaterThan(50_000);
    expect(overlay?.relayBytesAfter?.[1], why).toBeGreaterThan(50_000);
    // Media on both paths after the switch, and video that keeps coming: no gap of 2 s or more
    // (the switch's freeze itself is a benchmark number, printed above; a loaded machine stretches it).
    const after = report.perSecond.filter((x) => x.t > SWITCH_AT_S + 1);
    for (const id of [0, 1]) {
      const media = after.reduce((n, x) => n + (x.paths.find((p) => p.id === id)?.mediaPackets ?? 0), 0);
      expect(media, `path ${id}: ${why}`).toBeGreaterThan(20);
    }
    expect(overlay?.maxFrameGapAfterSwitchMs, why).toBeLessThan(2000);
    expect(report.errors, why).toEqual([]);
  });
});
