import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../../sim/net/scenario.js';
import { simulate } from '../../../sim/simulator.js';

/** One 2 Mbps path whose feedback (down) link dies for 3 s: SCTP gets no SACKs, RTP needs none. */
const scenario = parseScenario(
  {
    name: 'downlink-outage',
    durationS: 16,
    paths: [{ up: { rateMbps: 2, delayMs: 30, queue: { ms: 300 } }, down: { rateMbps: 2, delayMs: 30, queue: { ms: 300 }, downPeriods: [[6, 9]] } }],
  },
  '.',
);
const run = (datachannel: 'sctp' | 'sctp+rtp' | 'ideal', stallFallback?: { stallMs: number }) =>
  simulate({ scenario, scheduler: 'single', singlePath: 0, fec: 'none', seed: 1, datachannel, ...(stallFallback ? { stallFallback } : {}) });

describe("simulate() with datachannel 'sctp+rtp'", () => {
  it('sends on the RTP carrier through a downlink-only outage and freezes less than SCTP alone', () => {
    const sctp = run('sctp');
    const rtp = run('sctp+rtp');
    expect(sctp.sim.rtp).toBeUndefined();
    const p = rtp.sim.rtp![0];
    expect(p.sinks).toHaveLength(1);
    const k = p.sinks[0];
    expect(k.toCarrier).toBeGreaterThanOrEqual(1);
    expect(k.carrierDatagrams).toBeGreaterThan(50);
    expect(p.carrier.datagramsDelivered).toBeGreaterThan(0.5 * k.carrierDatagrams);
    expect(k.toDatachannel).toBeGreaterThanOrEqual(1); // back once the channel drained
    expect(k.datachannelDatagrams).toBeGreaterThan(k.carrierDatagrams);
    expect(rtp.freezes.totalMs).toBeLessThan(sctp.freezes.totalMs);
  });

  it('leaves the other models alone and validates its option', () => {
    expect(run('ideal').sim.rtp).toBeUndefined();
    expect(() => run('sctp+rtp', { stallMs: -1 })).toThrow(RangeError);
    expect(() => simulate({ scenario, scheduler: 'single', singlePath: 0, fec: 'none', seed: 1, datachannel: 'tcp' as never })).toThrow(RangeError);
  });
});
