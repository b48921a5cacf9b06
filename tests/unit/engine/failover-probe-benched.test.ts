/**
 * PathRecovery's failover probe (src/engine/path-recovery.ts probeOnFailover): a path that goes
 * silent hands its load to the others, which are probed up to take it; a path the hysteresis had
 * benched carried no load, so its silence probes nobody.
 */
import { describe, expect, it } from 'vitest';
import { makeCall } from './call-helper.js';

/** Two 3 Mbps paths; path 1 (random loss `loss`) is down from 8 s to 12 s. Probe packets path 0 sends from 7.5 s to 11.5 s. */
function probesDuringOutage(loss: number): { benched: boolean; probes: number } {
  const c = makeCall(
    [
      { rateMbps: 3, delayMs: 40 },
      { rateMbps: 3, delayMs: 40, loss, down: [[8000, 12000]] },
    ],
    { extra: { maxBitrateBps: 8_000_000 } },
  );
  c.run(7500);
  const before = c.sender.stats();
  c.run(4000);
  return { benched: before.paths[1].demoted, probes: c.sender.stats().paths[0].probesSent - before.paths[0].probesSent };
}

describe('failover probe', () => {
  it('probes the surviving path when a path that carried media goes silent', () => {
    const r = probesDuringOutage(0);
    expect(r.benched).toBe(false);
    expect(r.probes).toBeGreaterThan(10);
  });

  it('does not when the silent path was benched by the hysteresis (30 % loss)', () => {
    const r = probesDuringOutage(0.3);
    expect(r.benched).toBe(true);
    // Without the rule: 30 probe packets (a failover probe cluster); any other cluster would be a few.
    expect(r.probes).toBeLessThan(10);
  });
});
