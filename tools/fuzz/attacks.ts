/**
 * Crafted memory and CPU attacks on the receiver, fed through `Endpoint` as a
 * remote peer would (encoded datagrams on a path), on a virtual clock that
 * advances slowly (an attacker sends everything within a fraction of a second,
 * so age bounds do not help and byte budgets must).
 *
 * Heap growth = (V8 heap used + ArrayBuffer backing stores) after a forced GC
 * at the end, minus the same before, with the receiver still alive: what the
 * receiver retains. Run node with `--expose-gc` for exact numbers (without it
 * the growth includes garbage and is flagged `gc: false`).
 */
import { ManualClock } from '../../src/core/clock.js';
import { Rng } from '../../src/core/rng.js';
import { NalClass, Priority } from '../../src/core/types.js';
import { Endpoint } from '../../src/engine/endpoint.js';
import { ReceiverEngine } from '../../src/engine/receiver.js';
import type { ReceiverStats } from '../../src/engine/types.js';
import { fecDatagram, media, mediaDatagram } from './corpus.js';

export interface AttackPacket {
  path: number;
  dgram: Uint8Array;
}

export interface Attack {
  name: string;
  what: string;
  /** Virtual time between packets (µs). */
  gapUs: number;
  packets(): Iterable<AttackPacket>;
}

const BIG = 60_000;
const bigPayload = new Uint8Array(BIG).fill(0xab);
const smallPayload = new Uint8Array(60).fill(0xcd);

function* deltaFrames(streams: number, frames: number, frags: number): Iterable<AttackPacket> {
  const seq = new Array<number>(streams).fill(0);
  for (let f = 1; f <= frames; f++) {
    for (let s = 0; s < streams; s++) {
      for (let k = 0; k < frags; k++) {
        yield { path: k & 1, dgram: mediaDatagram(media({ streamId: s, flowSeq: seq[s]++, frameId: f, fragIndex: k, fragCount: frags, payload: bigPayload }), k & 1) };
      }
    }
  }
}

function* perStream(streams: number, perStreamPackets: number, fragCount: number): Iterable<AttackPacket> {
  for (let i = 0; i < perStreamPackets; i++) {
    for (let s = 0; s < streams; s++) {
      yield { path: s & 1, dgram: mediaDatagram(media({ streamId: s, flowSeq: i, frameId: i + 1, fragIndex: 0, fragCount, payload: bigPayload }), s & 1) };
    }
  }
}

function* fecPending(streams: number, perStreamPackets: number): Iterable<AttackPacket> {
  for (let i = 0; i < perStreamPackets; i++) {
    for (let s = 0; s < streams; s++) {
      // Mask over 8 seqs none of which ever arrives: every FEC packet stays pending.
      yield { path: 0, dgram: fecDatagram({ streamId: s, baseSeq: i * 8, mask: Uint8Array.from([0xff]), lengthXor: BIG, parity: bigPayload, protectsPath: 0, fecSeq: i }) };
    }
  }
}

function* seqJumps(n: number, minJump: number, maxJump: number, seed: number): Iterable<AttackPacket> {
  const rng = new Rng(seed);
  let seq = 0;
  for (let i = 0; i < n; i++) {
    seq = (seq + minJump + Math.floor(rng.next() * (maxJump - minJump + 1))) >>> 0;
    yield { path: i & 1, dgram: mediaDatagram(media({ flowSeq: seq, frameId: i + 1, payload: smallPayload }), i & 1) };
  }
}

function* inOrder(n: number): Iterable<AttackPacket> {
  for (let i = 0; i < n; i++) {
    const key = i % 300 === 0;
    yield {
      path: i & 1,
      dgram: mediaDatagram(
        media({ flowSeq: i, frameId: i + 1, keyFrame: key, nalClass: key ? NalClass.Key : NalClass.Delta, priority: key ? Priority.Keyframe : Priority.Media, payload: smallPayload }),
        i & 1,
        i,
        i * 100,
      ),
    };
  }
}

export const ATTACKS: readonly Attack[] = [
  { name: 'baseline in-order', what: '1 stream, 60-byte single-packet frames in order (reference cost)', gapUs: 100, packets: () => inOrder(100_000) },
  { name: 'delta 2x125', what: '2 streams x 125 delta frames of 24 x 60 kB, no key frame (issue 11: +361 MB)', gapUs: 20, packets: () => deltaFrames(2, 125, 24) },
  { name: '16x1100 complete', what: '16 streams x 1,100 single-packet 60 kB delta frames (issue 11: +1,006 MB)', gapUs: 20, packets: () => perStream(16, 1100, 1) },
  { name: '16x1100 incomplete', what: '16 streams x 1,100 first fragments of 60 kB, frames never complete', gapUs: 20, packets: () => perStream(16, 1100, 64) },
  { name: 'fec pending', what: '16 streams x 1,100 FEC packets, 60 kB parity, protected packets never arrive', gapUs: 20, packets: () => fecPending(16, 1100) },
  { name: 'flowSeq jump 1k-32k', what: '100,000 60-byte packets, flowSeq jumps 1,000-32,767 (issue 11: 571 µs/packet)', gapUs: 20, packets: () => seqJumps(100_000, 1000, 32_767, 7) },
  { name: 'flowSeq jump 2-1k', what: '100,000 60-byte packets, flowSeq jumps 2-1,000 (inside the NACK window)', gapUs: 20, packets: () => seqJumps(100_000, 2, 1000, 8) },
];

export interface AttackResult {
  name: string;
  what: string;
  packets: number;
  bytesIn: number;
  /** Retained growth after GC (MB = 2^20 bytes). */
  heapGrowthMB: number;
  /** Highest sampled growth during the attack, garbage included (MB). */
  peakGrowthMB: number;
  meanUsPerPacket: number;
  /** Mean of a first (JIT-cold) run, when the caller ran one. */
  coldMeanUsPerPacket?: number;
  p99UsPerPacket: number;
  maxUsPerPacket: number;
  heldBytes: ReceiverStats['heldBytes'];
  memoryDrops: ReceiverStats['memoryDrops'];
  keyframeRequests: number;
  gc: boolean;
}

const mem = (): number => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

/** Run one attack on a fresh receiver. */
export function runAttack(a: Attack): AttackResult {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const before = mem();
  const clock = new ManualClock(1_000_000);
  const rx = new ReceiverEngine({ clock });
  for (let p = 0; p < 2; p++) rx.addPath(p, { send: () => true, bufferedAmount: () => 0 });
  rx.on('frame', () => {});
  const ep = new Endpoint(rx);
  const times: number[] = [];
  let bytesIn = 0;
  let sinceTickUs = 0;
  let peak = 0;
  let n = 0;
  // Datagrams are built in batches outside the timed region, so the harness's own
  // encoding (and the GC it causes) is not billed to the receiver.
  const it = a.packets()[Symbol.iterator]();
  const batch: AttackPacket[] = [];
  for (;;) {
    batch.length = 0;
    for (let r = it.next(); ; r = it.next()) {
      if (r.done) break;
      batch.push(r.value);
      if (batch.length >= 256) break;
    }
    if (batch.length === 0) break;
    for (const p of batch) {
      const t0 = performance.now();
      ep.onDatagram(p.path, p.dgram);
      clock.advanceUs(a.gapUs);
      sinceTickUs += a.gapUs;
      if (sinceTickUs >= 10_000) {
        sinceTickUs = 0;
        ep.tick();
      }
      times.push((performance.now() - t0) * 1000);
      bytesIn += p.dgram.length;
      if (++n % 1000 === 0) peak = Math.max(peak, mem() - before);
    }
  }
  batch.length = 0;
  ep.tick();
  gc?.();
  gc?.();
  const after = mem();
  const st = rx.stats();
  // Instrument check: every crafted datagram must reach the receiver, or the attack measured nothing.
  const lost = n - st.packetsReceived;
  if (lost !== 0 || Object.keys(ep.malformed).length > 0 || Object.keys(st.drops).length > 0) {
    throw new Error(`attack '${a.name}': ${lost} of ${n} datagrams never reached the receiver (malformed ${JSON.stringify(ep.malformed)}, drops ${JSON.stringify(st.drops)})`);
  }
  times.sort((x, y) => x - y);
  const sum = times.reduce((s, x) => s + x, 0);
  return {
    name: a.name,
    what: a.what,
    packets: n,
    bytesIn,
    heapGrowthMB: (after - before) / 2 ** 20,
    peakGrowthMB: Math.max(peak, after - before) / 2 ** 20,
    meanUsPerPacket: n > 0 ? sum / n : 0,
    p99UsPerPacket: times[Math.min(times.length - 1, Math.floor(times.length * 0.99))] ?? 0,
    maxUsPerPacket: times[times.length - 1] ?? 0,
    heldBytes: st.heldBytes,
    memoryDrops: st.memoryDrops,
    keyframeRequests: st.keyframeRequestsSent,
    gc: gc !== undefined,
  };
}
