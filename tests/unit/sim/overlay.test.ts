import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import type { SenderEngine } from '../../../src/engine/sender.js';
import { ScenarioError, buildLink, parseScenario } from '../../../sim/net/scenario.js';
import { OverlayRoutes, overlayChecks, settleTimeS, timeOnBest } from '../../../sim/overlay.js';
import { OVERLAY, overlayScenario, relaySwitchScenario } from '../../../sim/scenarios.js';
import { simulate } from '../../../sim/simulator.js';

describe('overlay routes (issue 16)', () => {
  it('parses relays and rejects bad ones', () => {
    const s = parseScenario({ name: 'x', relaySwitchMs: 100, paths: [{ up: { rateMbps: 1 }, relays: [{ up: { rateMbps: 2, delayMs: 30 } }] }] }, '.');
    expect(s.paths[0].relays?.[0].name).toBe('relay0');
    expect(s.paths[0].relays?.[0].down.delayMs).toBe(30);
    expect(s.relaySwitchMs).toBe(100);
    expect(() => parseScenario({ name: 'x', paths: [{ up: { rateMbps: 1 }, relays: [] }] }, '.')).toThrow(ScenarioError);
    expect(() => parseScenario({ name: 'x', paths: [{ up: { rateMbps: 1 }, relays: [{ up: {} }] }] }, '.')).toThrow(/capacity/);
  });

  it('the overlay scenario has K = 3 relays per subflow and a degrading relay', () => {
    const s = overlayScenario();
    expect(s.paths.map((p) => p.relays?.length)).toEqual([3, 3]);
    expect(s.paths[0].relays?.[0].up.schedule?.some((st) => st.atS === OVERLAY.degradeAtS && st.rateMbps === OVERLAY.degradedMbps)).toBe(true);
  });

  it('fixed stays direct, oracle takes the best route, and traffic flows over relays', () => {
    const scenario = overlayScenario();
    const fixed = simulate({ scenario, scheduler: 'overlay-ucb', fec: 'path', seed: 1, durationS: 8, relayPolicy: 'fixed' });
    expect(fixed.overlay?.switches).toBe(0);
    expect(fixed.overlay?.slots.every((s) => s.arms.every((a) => a === 0))).toBe(true);
    const oracle = simulate({ scenario, scheduler: 'overlay-ucb', fec: 'path', seed: 1, durationS: 8, relayPolicy: 'oracle' });
    const o = oracle.overlay;
    expect(o).toBeDefined();
    if (!o) return;
    expect(o.switches).toBeGreaterThanOrEqual(2);
    expect(timeOnBest(o, 0)).toBe(1);
    expect(settleTimeS(o, 0, 0)).toBe(0);
    expect(oracle.frames.decoded).toBeGreaterThan(100);
    // Relay r1 of wifi (4 Mbps) carries more than the 1.5 Mbps direct route could.
    expect(oracle.goodputBps).toBeGreaterThan(fixed.goodputBps);
  });

  it("ucb without probes (the paper's) explores by moving the media: every arm tried from the start", () => {
    const r = simulate({ scenario: overlayScenario(), scheduler: 'overlay-ucb', fec: 'path', seed: 1, durationS: 6, relayProbe: false });
    expect(r.overlay?.policy).toBe('ucb');
    expect(r.overlay?.probe).toBeUndefined();
    expect(new Set(r.overlay?.slots.map((s) => s.arms[0]))).toEqual(new Set([0, 1, 2, 3]));
  });

  it('ucb with probe trains (default) moves each path straight onto its best route and keeps probe packets apart', () => {
    const r = simulate({ scenario: overlayScenario(), scheduler: 'overlay-ucb', fec: 'path', seed: 1, durationS: 8 });
    const o = r.overlay;
    expect(o?.policy).toBe('ucb');
    if (!o?.probe) throw new Error('no probe stats');
    // 8 routes, one 5-packet train each per slot (8 slots).
    expect(o.probe.trains).toBe(8 * 8);
    expect(o.probe.packetsSent).toBe(8 * 8 * 5);
    expect(o.probe.packetsDelivered).toBeGreaterThan(0.9 * o.probe.packetsSent);
    // wifi: r1 (4 Mbps) is best until 40 s; lte: r2 (3.5 Mbps). Direct first (no sample yet), then the best.
    expect(o.slots.slice(1).every((s) => s.arms[0] === 1 && s.arms[1] === 2)).toBe(true);
    expect(o.switches).toBe(2);
    // Routes never used carried only probes, which armPackets leaves out.
    expect(o.armPackets[0][2].delivered).toBe(0);
    expect(o.armPackets[0][3].delivered).toBe(0);
    expect(o.armPackets[0][1].delivered).toBeGreaterThan(100);
    expect(() => simulate({ scenario: overlayScenario(), scheduler: 'overlay-ucb', fec: 'path', seed: 1, durationS: 2, relayProbe: { packets: 1 } })).toThrow(RangeError);
  });
});

describe('relay handover (Scenario.relayHandover)', () => {
  const spec = (relayHandover?: 'break' | 'make-before-break') =>
    parseScenario({ name: 'h', relaySwitchMs: 300, ...(relayHandover ? { relayHandover } : {}), paths: [{ up: { rateMbps: 1 }, relays: [{ up: { rateMbps: 4, delayMs: 30 } }] }] }, '.');
  // The oracle moves path 0 onto the relay (4 Mbps > 1 Mbps) at the first slot; record when the sender is told.
  const run = (relayHandover?: 'break' | 'make-before-break', override?: 'break' | 'make-before-break') => {
    const s = spec(relayHandover);
    const direct = { up: [buildLink<number>(s.paths[0].up, new Rng(1))], down: [buildLink<number>(s.paths[0].down, new Rng(2))] };
    const told: number[] = [];
    let now = 0;
    const sender = { onPathRouteChanged: () => told.push(now), estimatorStats: () => [] } as unknown as SenderEngine;
    const routes = new OverlayRoutes<number>(s, 1, 'oracle', direct, override ? { handover: override } : {});
    const cap = (l: unknown) => (l === direct.up[0] ? 1e6 : 4e6);
    const links: Array<{ atMs: number; direct: boolean | undefined }> = [];
    for (now = 0; now <= 1_000_000; now += 50_000) {
      if (now >= routes.nextEventUs()) routes.tick(now, [sender], cap);
      const l = routes.link(0, true, now);
      links.push({ atMs: now / 1000, direct: l === undefined ? undefined : l === direct.up[0] });
    }
    return { told, links, res: routes.result(now, cap), relayUp: routes.armUp[0][1] };
  };

  it("'break' (default): nothing is carried for relaySwitchMs, the sender is told at the decision", () => {
    const r = run();
    expect(r.res.handover).toBe('break');
    expect(r.told).toEqual([0]);
    expect(r.links.filter((x) => x.atMs < 300).every((x) => x.direct === undefined)).toBe(true);
    expect(r.links.filter((x) => x.atMs >= 300).every((x) => x.direct === false)).toBe(true);
    expect(r.res.gapDrops).toBe(6);
  });

  it("'make-before-break': the old route carries the path until the new one is up, then the sender is told", () => {
    for (const r of [run('make-before-break'), run(undefined, 'make-before-break')]) {
      expect(r.res.handover).toBe('make-before-break');
      expect(r.told).toEqual([300_000]);
      expect(r.links.filter((x) => x.atMs < 300).every((x) => x.direct === true)).toBe(true);
      expect(r.links.filter((x) => x.atMs >= 300).every((x) => x.direct === false)).toBe(true);
      expect(r.res.gapDrops).toBe(0);
      expect(r.res.switches).toBe(1);
      // The slot records the route decided for it.
      expect(r.res.slots[0].arms).toEqual([1]);
    }
    expect(() => parseScenario({ name: 'x', relayHandover: 'soon', paths: [{ up: { rateMbps: 1 } }] }, '.')).toThrow(/relayHandover/);
  });
});

describe('a relay switch mid-call (issue 16)', () => {
  // Subflow 0 goes direct (1 Mbps) until its relay grows from 0.5 to 4 Mbps at 5 s; the oracle switches
  // then (a 300 ms gap). The switch's silence and losses are not the new route's fault: the path must
  // carry media on the new route at once (it used to be demoted for 3 s and its estimate collapsed to
  // the audio it still carried, ~20 kbps, for 10 s and more).
  // (sim/scenarios.ts relaySwitchScenario; `npm run bench:relay-ramp` measures the ramp over 12 seeds.)
  const scenario = relaySwitchScenario();

  it('the switched path carries media on its new route within 2 s', () => {
    const r = simulate({ scenario, scheduler: 'overlay-ucb', fec: 'path', seed: 1, relayPolicy: 'oracle' });
    const o = r.overlay;
    expect(o?.slots.find((s) => s.atS === 5)?.arms[0]).toBe(1);
    expect(o?.slots.find((s) => s.atS === 4)?.arms[0]).toBe(0);
    const sent = (t: number) => r.perSecond.find((x) => x.t === t)?.paths[0].sendRateBps ?? 0;
    // Seconds 8-12 on the 4 Mbps relay: more than the 1 Mbps direct route it left could carry (the
    // failure this guards against sent ~20 kbps). How fast GCC climbs from there moves with the
    // timing of the call (8 s, seeds 1-4 on main 9e990cd: 1.63 / 1.57 / 1.61 / 1.11 Mbps; with the
    // receiver's key frame repeat, kf4: 1.28 / 1.57 / 2.30 / 1.11 Mbps), so the bound is the route's.
    for (const t of [8, 9, 10, 11, 12]) expect(sent(t)).toBeGreaterThan(1_000_000);
  });
});

describe('overlayChecks (the overlay benchmark checks its own assumptions)', () => {
  it('holds on an oracle run of the overlay scenario and breaks when the scenario does not degrade', () => {
    const oracle = simulate({ scenario: overlayScenario(), scheduler: 'overlay-ucb', fec: 'path', seed: 1, durationS: OVERLAY.degradeAtS + 12, relayPolicy: 'oracle' });
    const o = oracle.overlay;
    expect(o).toBeDefined();
    if (!o) return;
    expect(overlayChecks(o, OVERLAY.degradeAtS)).toEqual([]);
    // The same run read as if the change were 20 s earlier: nothing degrades then and the oracle does not switch.
    const wrong = overlayChecks(o, 20);
    expect(wrong.some((m) => m.includes('does not degrade'))).toBe(true);
    expect(wrong.some((m) => m.includes('does not switch'))).toBe(true);
    // A route used for slots that delivered nothing is flagged.
    const starved = { ...o, armPackets: o.armPackets.map((arms) => arms.map((x) => ({ ...x, delivered: 0 }))) };
    expect(overlayChecks(starved, OVERLAY.degradeAtS).some((m) => m.includes('carried nothing'))).toBe(true);
    // Probe trains that mostly did not arrive are flagged; none sent too.
    const lost = { ...o, probe: { trains: 10, packetsSent: 50, packetsDelivered: 20, bytesSent: 60_000 } };
    expect(overlayChecks(lost, OVERLAY.degradeAtS).some((m) => m.includes('probe trains'))).toBe(true);
    expect(overlayChecks({ ...o, probe: { trains: 0, packetsSent: 0, packetsDelivered: 0, bytesSent: 0 } }, OVERLAY.degradeAtS).some((m) => m.includes('probe trains'))).toBe(true);
    expect(overlayChecks({ ...o, probe: { trains: 10, packetsSent: 50, packetsDelivered: 50, bytesSent: 60_000 } }, OVERLAY.degradeAtS)).toEqual([]);
  });
});
