/**
 * What each emulated path really carried, counted by its UDP relay
 * (tools/emulator), and the check that no enabled path sat unused: the
 * instrument that would have caught the browser benchmark's dead second path
 * (issue "The browser benchmark really uses every path", item 2). Pure.
 *
 * Directions: `up` is media (sender, peer A -> receiver, peer B), `down` is
 * feedback (B -> A). Counts are datagrams and payload bytes the relay took in
 * from the sending peer (`sent`) and handed on after the link's loss, queue
 * and blackholes (`delivered`). A path's share is its part of the media
 * delivered on all paths.
 */
import type { PathStats } from '../emulator/relay.js';
import type { Scenario } from '../../sim/net/scenario.js';

/** Datagrams and payload bytes in one direction of one path. */
export interface DirectionTraffic {
  sentPackets: number;
  sentBytes: number;
  deliveredPackets: number;
  deliveredBytes: number;
}

/** One path's relay counters. */
export interface PathTraffic {
  pathId: number;
  name: string;
  /** Media direction (sender -> receiver). */
  up: DirectionTraffic;
  /** Feedback direction (receiver -> sender). */
  down: DirectionTraffic;
  /** This path's share of the media bytes delivered on all paths, %. */
  sharePct: number;
}

/** Minimum share of the media an enabled path must carry over a run, %. */
export const MIN_PATH_SHARE_PCT = 1;

/** Per-path relay counters from the emulator's stats at the end of a run. */
export function pathTraffic(stats: readonly PathStats[]): PathTraffic[] {
  const dir = (l: PathStats['up']): DirectionTraffic => ({
    sentPackets: l.sent,
    sentBytes: l.sentBytes,
    deliveredPackets: l.delivered,
    deliveredBytes: l.deliveredBytes,
  });
  const total = stats.reduce((a, p) => a + p.up.deliveredBytes, 0);
  return stats.map((p) => ({
    pathId: p.pathId,
    name: p.name,
    up: dir(p.up),
    down: dir(p.down),
    sharePct: total > 0 ? Math.round((1000 * p.up.deliveredBytes) / total) / 10 : 0,
  }));
}

/** True when the path's media link is down (blackholed) for the whole of [0, durationS]. */
export function downForWholeRun(scenario: Scenario, pathId: number, durationS: number): boolean {
  const periods = scenario.paths[pathId]?.up.downPeriods ?? [];
  // Merge the periods and see whether they cover [0, durationS].
  let coveredTo = 0;
  for (const [a, b] of [...periods].sort((x, y) => x[0] - y[0])) {
    if (a > coveredTo) break;
    coveredTo = Math.max(coveredTo, b);
  }
  return coveredTo >= durationS;
}

/** Outcome of {@link checkPathUsage}. */
export interface PathUsageCheck {
  ok: boolean;
  /** One line per path that should have carried media and did not. */
  problems: string[];
  /** Paths the check expected to carry media. */
  checked: number[];
}

/**
 * Every path the configuration enables and the scenario does not blackhole
 * for the whole run must carry at least `minSharePct` of the media (relay
 * bytes delivered, whole run). Partly blackholed paths still count.
 * @param enabled the paths the configuration sends media on (all for a
 *   multipath scheduler, one for `single:N` or `native-webrtc:N`)
 */
export function checkPathUsage(traffic: readonly PathTraffic[], scenario: Scenario, enabled: readonly number[], durationS: number, minSharePct = MIN_PATH_SHARE_PCT): PathUsageCheck {
  const problems: string[] = [];
  const checked: number[] = [];
  const total = traffic.reduce((a, p) => a + p.up.deliveredBytes, 0);
  for (const id of enabled) {
    if (downForWholeRun(scenario, id, durationS)) continue;
    checked.push(id);
    const t = traffic.find((p) => p.pathId === id);
    const name = scenario.paths[id]?.name ?? `path ${id}`;
    if (!t) {
      problems.push(`path ${id} (${name}): no relay counters`);
      continue;
    }
    const share = total > 0 ? (100 * t.up.deliveredBytes) / total : 0;
    if (share < minSharePct) {
      problems.push(
        `path ${id} (${name}) carried ${share.toFixed(2)}% of the media (${t.up.deliveredPackets} packets, ${t.up.deliveredBytes} bytes delivered; ${t.down.sentPackets} feedback packets back), below ${minSharePct}%: the path was enabled and not blackholed`,
      );
    }
  }
  return { ok: problems.length === 0, problems, checked };
}

/** One line per path: `path 0 (verizon): up 1234 pkts / 1.2 MB delivered (56.0%), down 120 pkts / 0.01 MB`. */
export function formatPathTraffic(traffic: readonly PathTraffic[]): string[] {
  const mb = (b: number): string => (b / 1e6).toFixed(2);
  return traffic.map(
    (t) =>
      `path ${t.pathId} (${t.name}): media ${t.up.deliveredPackets} packets / ${mb(t.up.deliveredBytes)} MB delivered of ${t.up.sentPackets} / ${mb(t.up.sentBytes)} MB sent (${t.sharePct}% of media); feedback ${t.down.deliveredPackets} packets / ${mb(t.down.deliveredBytes)} MB`,
  );
}
