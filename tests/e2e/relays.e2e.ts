/**
 * Issue 16 (overlay): a call over real TURN relays. Three coturn instances on
 * 127.0.0.1, each behind its own emulated link (tools/harness/coturn.ts,
 * run-call.ts `overlay`); the call's two paths start on relays 0 and 1, and
 * at 8 s (or once both paths are connected, if later) path 0 moves to relay 2
 * by an ICE restart with the new TURN server (MultipathCall.switchRelay). Behaviour only, with wide margins: the switch
 * happened (new relayed candidate, relay 2's link carries the path), media
 * kept flowing on both paths and frames kept being decoded. The freeze
 * around the switch is printed (the issue's 500 ms target is a measurement
 * on a loaded 2-core machine, not an assertion; the test fails only past 2 s).
 * The second test lets the call choose path 0's relay (relaySelection 'ucb',
 * src/call/relay-selection.ts) and degrades that relay's link mid-call.
 */
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../sim/net/scenario.js';
import { runCall } from '../../tools/harness/run-call.js';
import { describeCall, outDir, pathTimeline } from './out-dir.js';

const SWITCH_AT_S = 8;
const DURATION_S = 18;

describe('overlay: TURN relays', () => {
  it('holds a call over two coturn relays and moves one path to a third relay mid-call without stopping media', async () => {
    const link = (k: number) => ({ name: `relay${k}`, up: { rateMbps: 4, delayMs: 10 + 5 * k, queue: { ms: 200 } } });
    const scenario = parseScenario({ name: 'e2e-relays', paths: [link(0), link(1), link(2)] }, process.cwd());
    // Round-robin puts every other packet on each up path, so both paths carry media whatever their rates and
    // RTTs do around the restart. (mtput weighs paths by measured goodput, which feeds back on itself: in one CI
    // run it sent path 1 nothing for the last 9 s while path 1's estimate was 15x path 0's.)
    const { report, overlay } = await runCall({
      out: outDir('relays'),
      scenario,
      durationS: DURATION_S,
      scheduler: 'roundrobin',
      // The path hysteresis stays on (the default). Stop 38 turned it off after it benched path 1 for 5-9 s at
      // 2-8 % loss per second; that loss was the emulator's: two TURN client sockets sat behind each relay link,
      // which answered only the latest one. The links' side A is a NAT now (one socket towards coturn per client
      // socket, tools/emulator/relay.ts natSideA): no loss in any second over 16 runs at load 4-13.
      // Both paths connected first: before the NAT, TURN connects took 9-13 s in 4 of 34 runs.
      overlay: { callPaths: 2, relaySwitch: { atS: SWITCH_AT_S, pathId: 0, relay: 2 }, switchWhenPathsUp: true },
    });
    const why = `${describeCall(report)}; overlay ${JSON.stringify(overlay)}`;
    const timelines = `per second (t:media,kbps,RTT ms,loss %, D benched: hysteresis or probation, d not up) path 0 ${pathTimeline(report, 0, 1)}; path 1 ${pathTimeline(report, 1, 1)}`;
    console.log(`relay switch, ${timelines}; relay links' emulator counters ${JSON.stringify(overlay?.relayLinks)}`);
    const sw = overlay?.switches?.[0];
    console.log(
      `relay switch: longest frame gap within 3 s after the switch ${sw?.gapMs} ms (3 s before it: ${sw?.controlGapMs} ms; issue 16 target < 500 ms; npm run bench:relays for a distribution), from 1 s before the switch to the end ${overlay?.maxFrameGapAfterSwitchMs} ms`,
    );
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
    const switchedAtS = overlay?.switched?.atS ?? SWITCH_AT_S;
    const after = report.perSecond.filter((x) => x.t > switchedAtS + 1);
    for (const id of [0, 1]) {
      const media = after.reduce((n, x) => n + (x.paths.find((p) => p.id === id)?.mediaPackets ?? 0), 0);
      // Any media at all: how much depends on GCC's cut after the restart on a loaded machine (one run: 6 packets).
      expect(media, `path ${id}: ${timelines}; ${why}`).toBeGreaterThan(0);
    }
    expect(overlay?.maxFrameGapAfterSwitchMs, why).toBeLessThan(2000);
    expect(report.errors, why).toEqual([]);
  });

  it('relaySelection ucb moves a path onto the faster relay, and starts moving it off once that relay got slow', async () => {
    // Path 0 may use relays 0 (60 ms one-way) and 2 (10 ms); path 1 only relay 1. Path 0 starts on
    // relay 0, tries relay 2 (never measured: infinite index, Alg. 4) and stays there (faster). Relay 2's
    // link gets 250 ms more one-way delay at DEGRADE_AT_S on the emulator's clock; the selector must then
    // start a switch back to relay 0. Since the relay links are NATs (tools/emulator/relay.ts natSideA) that
    // switch completes (before, every client behind a link reached coturn from one socket and coturn refused
    // the second allocation: RFC 8656 §7.2, 437). Noticed, not asserted: the selector then goes back to the
    // slow relay 2 for ~4 s every ~8 s (Eq. 12's exploration bonus scales with the relay's largest reward
    // of the last 10 s: 40 before the slowdown).
    const DEGRADE_AT_S = 26;
    const link = (k: number, delayMs: number, schedule?: Array<{ atS: number; delayMs: number }>) => ({
      name: `relay${k}`,
      up: { rateMbps: 4, delayMs, queue: { ms: 200 }, ...(schedule ? { schedule } : {}) },
    });
    const scenario = parseScenario({ name: 'e2e-relay-selection', paths: [link(0, 60), link(1, 15), link(2, 10, [{ atS: DEGRADE_AT_S, delayMs: 260 }])] }, process.cwd());
    const { report, overlay } = await runCall({
      out: outDir('relay-selection'),
      scenario,
      durationS: 40,
      overlay: { callPaths: 2, relaySelection: { policy: 'ucb', minDwellMs: 3000, relaysOf: [[0, 2], [1]] } },
    });
    const tl = overlay?.relayTimeline ?? [];
    for (const x of tl)
      console.log(`t=${x.tS}s link ${x.linkS}s relays ${x.relays.join(',')} path 0: ${x.selector[0]?.map((a) => `relay ${a.relay} n=${a.samples} r=${a.reward.toFixed(1)}`).join('; ')}`);
    const switches = (report.events as Array<{ peer: string; atMs: number; type: string; detail: unknown[] }>).filter((e) => e.type === 'route-switch' && e.peer === 'receiver' && e.detail[0] === 0);
    const why = `${describeCall(report)}; relays per second ${JSON.stringify(tl.map((x) => [x.linkS, ...x.relays]))}; path 0 switches ${JSON.stringify(switches.map((e) => [e.atMs, (e.detail[1] as { phase: string }).phase]))}`;
    const before = tl.filter((x) => x.linkS < DEGRADE_AT_S);
    console.log(
      `relay selection: path 0 on relays ${before.map((x) => x.relays[0]).join('')} | degraded | ${tl
        .filter((x) => x.linkS >= DEGRADE_AT_S)
        .map((x) => x.relays[0])
        .join('')}`,
    );
    // Onto relay 2 early (a completed switch: the receiver's pair changed), and there at the degradation.
    expect(
      switches.some((e) => (e.detail[1] as { phase: string }).phase === 'switched'),
      why,
    ).toBe(true);
    expect(before.at(-1)?.relays[0], why).toBe(2);
    // A switch off relay 2 starts (relayIndex moves at the switch call) within 12 s of its degradation (an RTT sample every few seconds, the 3 s bail-out, a slot; the machine may be loaded).
    const degradeIdx = tl.findIndex((x) => x.linkS >= DEGRADE_AT_S);
    const moved = tl.slice(degradeIdx).find((x) => x.relays[0] !== 2);
    expect(moved, why).toBeDefined();
    expect(moved!.linkS - DEGRADE_AT_S, why).toBeLessThan(12);
    expect(moved!.relays[0], why).toBe(0);
    // Path 1 has one relay: never moved.
    expect(
      tl.every((x) => x.relays[1] === 1),
      why,
    ).toBe(true);
    expect(report.frames.decoded, why).toBeGreaterThan(0);
    expect(report.errors, why).toEqual([]);
  });
});
