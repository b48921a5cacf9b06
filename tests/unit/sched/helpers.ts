/** Fixtures for the scheduler tests: synthetic packets and path snapshots. */
import { NalClass, Priority, type Assignment, type OutgoingPacket, type PathId, type PathState } from '../../../src/core/types.js';

let seq = 0;

export function pkt(priority: Priority = Priority.Media, extra: Partial<OutgoingPacket> = {}): OutgoingPacket {
  return {
    streamId: 1,
    flowSeq: seq++,
    frameId: 1,
    priority,
    nalClass: priority === Priority.Keyframe ? NalClass.Idr : NalClass.NonIdr,
    sizeBytes: 1200,
    body: new Uint8Array(0),
    ...extra,
  };
}

export function media(n: number, extra: Partial<OutgoingPacket> = {}): OutgoingPacket[] {
  return Array.from({ length: n }, () => pkt(Priority.Media, extra));
}

export function fec(protectsPath: PathId | undefined): OutgoingPacket {
  return pkt(Priority.Fec, { isFec: true, protectsPath });
}

export function path(id: PathId, rateMbps: number, rttMs: number, extra: Partial<PathState> = {}): PathState {
  return {
    id,
    up: true,
    rateBps: rateMbps * 1e6,
    goodputBps: rateMbps * 1e6,
    srttMs: rttMs,
    minRttMs: rttMs,
    lossRate: 0,
    inflightBytes: 0,
    queuedBytes: 0,
    ...extra,
  };
}

/** Non-probe packet counts per path id. */
export function counts(out: readonly Assignment[]): number[] {
  const c = new Array(8).fill(0);
  for (const a of out) if (!a.probe) c[a.pathId]++;
  return c;
}

export function probes(out: readonly Assignment[]): Assignment[] {
  return out.filter((a) => a.probe === true);
}

/** Path of each input packet (by identity). */
export function pathOf(out: readonly Assignment[], p: OutgoingPacket): PathId | undefined {
  return out.find((a) => a.packet === p && !a.probe)?.pathId;
}
