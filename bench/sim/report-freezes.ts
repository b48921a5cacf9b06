/**
 * summary.md section of `npm run bench -- --explain-freezes`: the freeze
 * attribution of sim/freeze-explain.ts summed per configuration. One table
 * of causes (freeze count, frozen seconds, share of the configuration's
 * frozen time, how many of them had another path with spare capacity), then
 * the longest freezes of each multipath configuration one by one. Path
 * names are the scenario's (`wifi`/`cellular`, a carrier's name, ...).
 */
import { type FreezeCause, causeLabel } from '../../sim/freeze-explain.js';
import type { BenchEntry } from './report.js';

/** Longest freezes listed one by one per multipath configuration. */
const LISTED = 15;

/** The cause of `c` without the path name: `late:network+rtx`, `keyframe-wait`, ... */
export function coarseLabel(c: FreezeCause): string {
  if (c.cause === 'late') return `late:${c.where}${c.retransmitted ? '+rtx' : ''}`;
  if (c.cause !== 'no-frames' && c.path < 0) return `${c.cause}:unsent`;
  return c.cause;
}

interface Row {
  count: number;
  ms: number;
  usable: number;
  resendMs: number;
  resent: number;
}

/** The section's lines; [] when no run has freeze causes. */
export function renderFreezeCauses(entries: readonly BenchEntry[]): string[] {
  const withCauses = entries.filter((e) => e.result.freezeCauses !== undefined);
  if (withCauses.length === 0) return [];
  const configs = [...new Set(withCauses.map((e) => e.config))];
  const lines = [
    '## Freeze causes (`--explain-freezes`, stream 0, sim/freeze-explain.ts)',
    '',
    'Per configuration over every variant and seed: the cause of each freeze (the frame after the last one shown: never encoded = `no-frames`; never decoded, picture back at a key frame = `keyframe-wait`, at a later delta frame = `skipped`; decoded late = `late`, split by `loss` on its path (recovered), `sender` (capture -> last packet sent took longer than the network) or `network`, `+rtx` when its last packet was a retransmission), with how many had another path up with spare capacity (>= max(300 kbps, half the encoder target)) during the freeze, and for recovered losses the mean time from the first transmission of a lost packet to its retransmission (NACK round).',
    '',
    '| config | cause | freezes | frozen s | share % | other path usable | resend after ms |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const cfg of configs) {
    const rows = new Map<string, Row>();
    let total = 0;
    for (const e of withCauses.filter((x) => x.config === cfg)) {
      for (const c of e.result.freezeCauses ?? []) {
        const k = coarseLabel(c);
        const r = rows.get(k) ?? { count: 0, ms: 0, usable: 0, resendMs: 0, resent: 0 };
        r.count++;
        r.ms += c.ms;
        if (c.otherPathUsable) r.usable++;
        if (c.resendMs >= 0) {
          r.resendMs += c.resendMs;
          r.resent++;
        }
        rows.set(k, r);
        total += c.ms;
      }
    }
    const sorted = [...rows.entries()].sort((a, b) => b[1].ms - a[1].ms);
    for (const [k, r] of sorted)
      lines.push(
        `| ${cfg} | ${k} | ${r.count} | ${(r.ms / 1000).toFixed(2)} | ${total > 0 ? ((100 * r.ms) / total).toFixed(0) : '0'} | ${r.usable} | ${r.resent > 0 ? Math.round(r.resendMs / r.resent) : '-'} |`,
      );
  }
  lines.push('');
  for (const cfg of configs) {
    const all = withCauses
      .filter((e) => e.config === cfg && e.result.scheduler !== 'single')
      .flatMap((e) => (e.result.freezeCauses ?? []).map((c) => ({ e, c })))
      .sort((a, b) => b.c.ms - a.c.ms)
      .slice(0, LISTED);
    if (all.length === 0) continue;
    lines.push(
      `### ${cfg}: the ${all.length} longest freezes`,
      '',
      '| variant | seed | at s | ms | cause | frame: capture -> first / last sent, -> arrived (lost: resent after) ms | lost | other usable | target Mbps | per path: capacity / sent Mbps (state) | key frame requests |',
      '| --- | ---: | ---: | ---: | --- | --- | ---: | --- | ---: | --- | ---: |',
    );
    for (const { e, c } of all) {
      const names = e.result.paths.map((p) => p.name);
      const paths = c.paths.map((p) => `${names[p.id] ?? p.id} ${p.capacityMbps} / ${p.sentMbps}${p.up ? (p.enabled ? '' : ' (disabled)') : ' (down)'}`).join('; ');
      lines.push(
        `| ${e.variant} | ${e.result.seed} | ${c.atS.toFixed(2)} | ${c.ms} | ${causeLabel(c, names)} | ${c.frameId}: ${c.firstSendMs} / ${c.senderMs}, ${c.networkMs < 0 ? `lost${c.resendMs >= 0 ? ` (${c.resendMs})` : ''}` : c.networkMs} | ${c.lost} | ${c.otherPathUsable ? 'yes' : 'no'} | ${c.targetMbps} | ${paths} | ${c.keyframeRequests} |`,
      );
    }
    lines.push('');
  }
  lines.push(...renderKeyframeWaits(withCauses));
  return lines;
}

/** Every `keyframe-wait` / `skipped` freeze of the multipath configurations with {@link FreezeCause.kf}: why its frame was lost, when the key frame was asked for, made, sent and received. */
function renderKeyframeWaits(entries: readonly BenchEntry[]): string[] {
  const all = entries
    .filter((e) => e.result.scheduler !== 'single')
    .flatMap((e) => (e.result.freezeCauses ?? []).filter((c) => c.kf !== undefined).map((c) => ({ e, c, kf: c.kf as NonNullable<FreezeCause['kf']> })))
    .sort((a, b) => b.c.ms - a.c.ms);
  if (all.length === 0) return [];
  const lines = [
    '### Frames never decoded: why, and the key frame that ended the freeze',
    '',
    "Times in ms from the freeze start (the last frame shown). Stuck frame: `unsent` (a fragment never sent: purged or dropped by the sender), `lost` (a fragment never arrived, never retransmitted), `rtx-lost` (retransmitted, no copy arrived), `late` (all arrived, after the receiver asked for a key frame), `complete` (all arrived before: reference chain or frame-buffer drop). Request: the receiver's first key frame request (reason), its requests sent, the sender's first request to the encoder. Key frame: captured, kB, capture -> last sent, -> last arrived, packets lost, path; earlier key frames not decoded.",
    '',
    '| config | variant | seed | at s | ms | cause | stuck frame (frags sent/of, resent, last arrival) | receiver request at (reason), requests | encoder asked at | key frame at, kB | key: send / network ms, lost, path | keys before |',
    '| --- | --- | ---: | ---: | ---: | --- | --- | --- | ---: | --- | --- | ---: |',
  ];
  for (const { e, c, kf } of all) {
    const names = e.result.paths.map((p) => p.name);
    lines.push(
      `| ${e.config} | ${e.variant} | ${e.result.seed} | ${c.atS.toFixed(2)} | ${c.ms} | ${c.cause} | ${kf.stuck} (${kf.fragsSent}/${kf.fragCount}, ${kf.resent}, ${kf.lastArrivalMs}) | ${kf.requestMs} (${kf.reason || '-'}), ${kf.requests} | ${kf.encoderRequestMs} | ${kf.keyCaptureMs}, ${(kf.keyBytes / 1000).toFixed(1)} | ${kf.keySendMs} / ${kf.keyNetworkMs}, ${kf.keyLost}, ${kf.keyPath >= 0 ? (names[kf.keyPath] ?? kf.keyPath) : '-'} | ${kf.keysBefore} |`,
    );
  }
  lines.push('');
  return lines;
}
