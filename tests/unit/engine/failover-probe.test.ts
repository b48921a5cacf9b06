/**
 * SenderEngineConfig.failoverProbeUsedOnly (src/engine/path-recovery.ts): a
 * path that goes silent while it carried media gets its rate probed onto the
 * remaining path; a path that carried none (here: demoted by the path
 * hysteresis after its first flap) leaves nothing to move, and with the
 * option on its later silences probe nothing.
 */
import { describe, expect, it } from 'vitest';
import { makeCall, type PathSpec } from './call-helper.js';

/** Probe packets sent on path 0 and media packets on path 1 while path 1 flaps (down 400 ms in every 1.5 s, 4-13 s). */
function run(failoverProbeUsedOnly: boolean | undefined): { probes0: number; media1: number } {
  const down: Array<[number, number]> = [];
  for (let t = 4000; t < 13_000; t += 1500) down.push([t, t + 400]);
  const paths: PathSpec[] = [
    { rateMbps: 2, delayMs: 30 },
    { rateMbps: 2, delayMs: 30, down },
  ];
  const c = makeCall(paths, { extra: { failoverProbeUsedOnly } });
  c.run(5500); // the first flap (4.0-4.4 s) demotes path 1
  const s0 = c.sender.stats().paths;
  c.run(8000);
  const s1 = c.sender.stats().paths;
  return { probes0: s1[0].probesSent - s0[0].probesSent, media1: s1[1].mediaPacketsSent - s0[1].mediaPacketsSent };
}

describe('sender: failover probes only for a path that carried media', () => {
  it('the flaps of a path that carries no media probe the other path only with the option off', () => {
    const off = run(undefined); // the default: main's behaviour
    const on = run(true);
    expect(off.media1).toBeLessThan(50); // demoted: (almost) no media on path 1
    expect(off.probes0).toBeGreaterThanOrEqual(10); // probe clusters (>= 5 packets each) at its flaps
    expect(on.probes0).toBeLessThan(off.probes0 / 2);
  });

  it('a path that carried media and goes silent still gets the other path probed with the option on', () => {
    // Both paths carry the call; path 0 goes down once (4.0-4.4 s).
    const c = makeCall(
      [
        { rateMbps: 2, delayMs: 30, down: [[4000, 4400]] },
        { rateMbps: 2, delayMs: 30 },
      ],
      { extra: { failoverProbeUsedOnly: true } },
    );
    c.run(3900);
    const s0 = c.sender.stats().paths;
    expect(s0[0].mediaPacketsSent).toBeGreaterThan(100);
    c.run(1600);
    expect(c.sender.stats().paths[1].probesSent - s0[1].probesSent).toBeGreaterThanOrEqual(5); // one probe cluster
  });
});
