/**
 * Print what run.ts measured: per case a summary line and, with `--timeline`,
 * one row per second (offered payload, RTP bytes on the wire, GCC's
 * availableOutgoingBitrate, payload delivered to the receiver transform and
 * its latency, PLIs, key frames, NACKs, the datachannel beside it).
 *   node --import tsx tools/experiments/rtp-carrier/report.ts [--timeline] CASE...
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../harness/paths.js';

type Num = number | undefined | null;
// biome-ignore lint/suspicious/noExplicitAny: raw JSON written by run.ts
type Json = any;

const kbps = (bytes: Num, s = 1): string => (bytes == null ? '-' : String(Math.round((bytes * 8) / 1000 / s)));
const ms = (v: Num): string => (v == null ? '-' : String(Math.round(v)));

function summary(name: string, d: Json): void {
  const w = d.result.worker;
  const tl = d.result.timeline;
  const last = tl[tl.length - 1];
  const out = last.a.out ?? {};
  const inn = last.b.in ?? {};
  const sent = w.sendLog?.length ?? w.framesSent;
  const got = new Set((w.recvLog ?? []).map((r: Json[]) => r[0]));
  const dupes = (w.recvLog?.length ?? 0) - got.size;
  const sizes =
    w.sizes && Object.keys(w.sizes).length
      ? ` sizes ${Object.entries(w.sizes)
          .map(([k, v]: [string, Json]) => `${k}:${v.ok}/${v.sent}`)
          .join(' ')}`
      : '';
  console.log(
    `${name}: frames sent ${sent}, distinct received intact ${got.size} (${dupes} duplicates), corrupt ${JSON.stringify(w.badReasons)}, reordered ${w.reordered}; latency p50/p95/max ${ms(w.latP50)}/${ms(w.latP95)}/${ms(w.latMax)} ms; ` +
      `PLI ${out.pliCount}, key frames encoded ${out.keyFramesEncoded}, NACK ${out.nackCount}, retransmitted ${out.retransmittedPacketsSent}, packets lost ${inn.packetsLost}, RTX received ${inn.retransmittedPacketsReceived}, decoded ${inn.framesDecoded}; ` +
      `send-transform CPU ${(w.send.reduce((a: number, s: Json) => a + s.cpuUs, 0) / Math.max(1, sent)).toFixed(0)} us/frame${sizes}`,
  );
}

function timeline(d: Json): void {
  const tl = d.result.timeline;
  const w = d.result.worker;
  const dc = d.result.dc;
  console.log(
    '  t s | offered kbps | RTP sent kbps | avail. kbps | enc. target | delivered kbps | pkts sent/recv | lat p50 ms | PLI | key | NACK | RTT ms | dc sent/recv msgs | dc buffered kB | ICE sender / dc sender',
  );
  let prev: Json = {};
  let prevIn: Json = {};
  for (let i = 0; i < tl.length; i++) {
    const row = tl[i];
    const out = row.a.out ?? {};
    const sec = Math.round(row.t) - 1;
    const s = w.send[sec] ?? {};
    const r = w.recv[sec] ?? {};
    const dSent = prev.bytesSent == null ? out.bytesSent : out.bytesSent - prev.bytesSent;
    const dPli = (out.pliCount ?? 0) - (prev.pliCount ?? 0);
    const dKey = (out.keyFramesEncoded ?? 0) - (prev.keyFramesEncoded ?? 0);
    const dNack = (out.nackCount ?? 0) - (prev.nackCount ?? 0);
    const inn = row.b.in ?? {};
    const pk = `${(out.packetsSent ?? 0) - (prev.packetsSent ?? 0)}/${(inn.packetsReceived ?? 0) - (prevIn.packetsReceived ?? 0)}`;
    prevIn = inn;
    const dcCol = dc ? `${dc.sent[sec] ?? 0}/${dc.recvd[sec] ?? 0}` : '-';
    const dcBuf = dc ? String(Math.round((dc.maxBuffered[sec] ?? 0) / 1000)) : '-';
    console.log(
      `  ${String(sec).padStart(3)} | ${kbps(s.bytes).padStart(5)} | ${kbps(dSent).padStart(5)} | ${kbps((row.a.pair?.availableOutgoingBitrate ?? 0) / 8).padStart(5)} | ${kbps((out.targetBitrate ?? 0) / 8).padStart(5)} | ${kbps(r.bytes).padStart(5)} | ${pk.padStart(7)} | ${ms(r.latP50).padStart(5)} | ${dPli} | ${dKey} | ${dNack} | ${ms((row.a.pair?.currentRoundTripTime ?? Number.NaN) * 1000)} | ${dcCol} | ${dcBuf} | ${row.a.ice ?? '-'}/${row.a.pair?.responsesReceived ?? '-'} ${row.dc?.ice ?? '-'}`,
    );
    prev = out;
  }
}

const args = process.argv.slice(2);
const showTimeline = args.includes('--timeline');
for (const name of args.filter((a) => !a.startsWith('--'))) {
  const d = JSON.parse(readFileSync(join(REPO_ROOT, 'out/experiments/rtp-carrier', `${name}.json`), 'utf8'));
  summary(name, d);
  if (showTimeline) timeline(d);
}
