/**
 * A path that carries only audio is application-limited (src/engine/sender.ts,
 * report handling): audio is a fixed ~40 kbps stream that says nothing about
 * the path's capacity, so it must not hide the path from GCC's periodic ALR
 * probes. Without them, GCC's increase limit (1.5 x acked + 10 kbps,
 * libwebrtc aimd_rate_control.cc) pins an audio-only path's estimate near
 * the audio rate after one overuse episode, and a multipath scheduler then
 * finds no capacity there when the other path collapses.
 */
import { describe, expect, it } from 'vitest';
import type { Assignment, OutgoingPacket, PathState } from '../../../src/core/types.js';
import type { Scheduler } from '../../../src/sched/types.js';
import { makeCall } from './call-helper.js';

/**
 * Every video packet on path 0; path 1 only gets a probe copy of one packet
 * every 100 ms (as Converge probes a path its deadline keeps idle) and audio.
 */
function videoOnPath0(): Scheduler {
  let lastProbeUs = -Infinity;
  return {
    name: 'video-on-0',
    schedule: (packets: readonly OutgoingPacket[], _paths: readonly PathState[], nowUs: number): Assignment[] => {
      const out: Assignment[] = packets.map((packet) => ({ packet, pathId: 0 }));
      if (packets.length > 0 && nowUs - lastProbeUs >= 100_000) {
        out.push({ packet: packets[0], pathId: 1, probe: true });
        lastProbeUs = nowUs;
      }
      return out;
    },
    onQoeFeedback: () => {},
    isEnabled: () => true,
  };
}

describe('SenderEngine: audio-only path and ALR probing', () => {
  it('keeps probing a path that carries only audio, so its estimate recovers after a delay episode', () => {
    // path 1 is the faster one (audio goes there, plus a copy on path 0); its one-way
    // delay jumps for a second at 2 s (a congested cell), which GCC reads as overuse.
    const call = makeCall(
      [
        { rateMbps: 3, delayMs: 30 },
        {
          rateMbps: 8,
          delayMs: 15,
          delaySteps: [
            [2000, 400],
            [3000, 15],
          ],
        },
      ],
      { audio: true, extra: { scheduler: videoOnPath0() } },
    );
    const rate1 = (): number => call.sender.pathStates().find((p) => p.id === 1)?.rateBps ?? 0;
    const kbps: number[] = [];
    for (let s = 0; s < 12; s++) {
      call.run(1000);
      kbps.push(rate1() / 1000);
    }
    // the episode cut the estimate by more than 10x (6.3 Mbps -> 0.4; halved once per
    // RTT, src/cc/aimd.ts, app-limited decreases; before stop 57, once per report to the
    // 0.1 Mbps floor)...
    expect(Math.min(...kbps.slice(2, 6))).toBeLessThan(kbps[0] / 10);
    // ...and ALR probes lift it again: from 6 to 10 s it is above what GCC's increase
    // limit lets an audio-only path reach (1.5 x ~140 kbps + 10 kbps ~ 220 kbps; without
    // the fix it stayed at 118-173 kbps until 12 s), and by 12 s the next ALR probe has
    // found most of the 8 Mbps link.
    expect(Math.min(...kbps.slice(6, 10))).toBeGreaterThan(300);
    expect(Math.max(kbps[10], kbps[11])).toBeGreaterThan(1000);
    // path 1 carried audio all along, and no video
    expect(call.sender.stats().audio.perPath.find((p) => p.id === 1)?.packetsSent ?? 0).toBeGreaterThan(300);
    expect(call.sender.stats().paths.find((p) => p.id === 1)?.mediaPacketsSent ?? -1).toBe(0);
  }, 120_000);
});
