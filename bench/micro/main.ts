/**
 * `npm run bench:micro`: per-packet cost of the sender and the receiver on one
 * core, and FEC encode/decode throughput. Prints lines like
 *   sender: 312000 packets/s (3.2 us/packet)
 * and the path emulator's delivered rate on a saturated 12 Mbps path
 * (tools/emulator/rate-check.ts), e.g.
 *   emulator: 12 Mbps path delivered 11.93 Mbps (99.4 %), 412 queue drops
 * Numbers, not assertions: run it on a quiet machine and compare runs. It
 * exits 1 only when a measurement shows the benchmark itself is broken.
 */
import { ManualClock } from '../../src/core/clock.js';
import { Endpoint } from '../../src/engine/endpoint.js';
import { ReceiverEngine } from '../../src/engine/receiver.js';
import { SenderEngine } from '../../src/engine/sender.js';
import { FecDecoder } from '../../src/fec/decoder.js';
import { makeFecPackets } from '../../src/fec/xor.js';
import type { EncodedFrameInput } from '../../src/wire/packetization.js';
import { runCli } from '../../tools/cli.js';
import { measureSaturatedRate } from '../../tools/emulator/rate-check.js';

const FRAME_BYTES = 12_000; // ~10 packets at 1200 bytes
const FPS = 30;

function frame(id: number, nowUs: number, bytes: number): EncodedFrameInput {
  const data = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i += 97) data[i] = (id + i) & 0xff;
  return { streamId: 0, frameId: id, keyFrame: id % 300 === 1, captureUs: nowUs, data, codec: 'vp8' };
}

interface LoopResult {
  senderPackets: number;
  senderSeconds: number;
  receiverPackets: number;
  receiverSeconds: number;
  frames: number;
}

/**
 * A sender and a receiver engine joined by two lossless in-memory paths. The
 * time spent inside the sender (packetize + schedule + FEC + pace + envelope
 * encode + handling reports) and inside the receiver (wire decode + report
 * builder + FEC decoder + depacketizer + frame buffer + QoE + NACK) are
 * measured separately.
 */
function benchLoop(frames: number): LoopResult {
  const clock = new ManualClock(1_000_000);
  const sender = new SenderEngine({ clock, scheduler: 'converge', fec: 'path', startBitrateBps: 20_000_000, maxBitrateBps: 80_000_000 });
  const receiver = new ReceiverEngine({ clock });
  const senderEp = new Endpoint(new ReceiverEngine({ clock }), sender);
  const receiverEp = new Endpoint(receiver);
  const toReceiver: Array<[number, Uint8Array]> = [];
  const toSender: Array<[number, Uint8Array]> = [];
  let decoded = 0;
  receiver.on('frame', () => decoded++);
  for (const id of [0, 1]) {
    sender.addPath(id, { send: (b) => (toReceiver.push([id, b]), true), bufferedAmount: () => 0 }, 'connected');
    receiver.addPath(id, { send: (b) => (toSender.push([id, b]), true), bufferedAmount: () => 0 });
  }
  const input = Array.from({ length: 64 }, (_, i) => frame(i + 1, 0, FRAME_BYTES + (i % 7) * 100));
  let senderNs = 0n;
  let receiverNs = 0n;
  let senderPackets = 0;
  let receiverPackets = 0;
  const stepUs = Math.round(1_000_000 / FPS);
  for (let i = 0; i < frames; i++) {
    const f = input[i % input.length];
    f.frameId = i + 1;
    f.keyFrame = i % 300 === 0;
    f.captureUs = clock.nowUs();
    let t = process.hrtime.bigint();
    sender.sendFrame(f);
    for (const [id, b] of toSender.splice(0)) senderEp.onDatagram(id, b);
    // Pace out the frame over the frame interval in 5 ms steps.
    for (let k = 0; k < stepUs; k += 5_000) {
      clock.advanceUs(Math.min(5_000, stepUs - k));
      sender.tick();
    }
    senderNs += process.hrtime.bigint() - t;
    senderPackets += toReceiver.length;
    t = process.hrtime.bigint();
    receiverPackets += toReceiver.length;
    for (const [id, b] of toReceiver.splice(0)) receiverEp.onDatagram(id, b);
    receiver.tick();
    receiverNs += process.hrtime.bigint() - t;
  }
  return {
    senderPackets,
    senderSeconds: Number(senderNs) / 1e9,
    receiverPackets,
    receiverSeconds: Number(receiverNs) / 1e9,
    frames: decoded,
  };
}

function benchFec(): { encodeMBps: number; decodeMBps: number } {
  const bodies = Array.from({ length: 20 }, (_, i) => ({ flowSeq: i, body: new Uint8Array(1150).fill(i + 1) }));
  const rounds = 20_000;
  let t0 = process.hrtime.bigint();
  let fecs = makeFecPackets({ streamId: 0, packets: bodies, count: 2, mask: 'random', protectsPath: 0, firstFecSeq: 0 });
  for (let r = 0; r < rounds; r++) {
    fecs = makeFecPackets({ streamId: 0, packets: bodies, count: 2, mask: 'random', protectsPath: 0, firstFecSeq: r * 2 });
  }
  const encSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const encodeMBps = (rounds * 20 * 1150) / encSeconds / 1e6;
  // Decode: each round delivers all but one packet of each FEC group, then the FEC.
  const decRounds = 5_000;
  t0 = process.hrtime.bigint();
  let recovered = 0;
  for (let r = 0; r < decRounds; r++) {
    const dec = new FecDecoder();
    const base = 0;
    const group = makeFecPackets({ streamId: 0, packets: bodies.map((b) => ({ flowSeq: base + b.flowSeq, body: b.body })), count: 2, mask: 'random', protectsPath: 0, firstFecSeq: 0 });
    for (let i = 0; i < bodies.length; i++) if (i !== 3 && i !== 14) dec.addMedia(0, base + i, bodies[i].body);
    for (const f of group) recovered += dec.addFec(f).length;
  }
  const decSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
  void fecs;
  const decodeMBps = (decRounds * 20 * 1150) / decSeconds / 1e6;
  if (recovered === 0) throw new Error('FEC decode benchmark recovered nothing: the benchmark is broken');
  return { encodeMBps, decodeMBps };
}

async function main(): Promise<number> {
  benchLoop(600); // warm up the JIT
  const loop = benchLoop(6000);
  const fec = benchFec();
  const line = (name: string, packets: number, seconds: number) => `${name}: ${Math.round(packets / seconds)} packets/s (${((seconds / packets) * 1e6).toFixed(2)} us/packet)`;
  console.log(line('sender', loop.senderPackets, loop.senderSeconds));
  console.log(line('receiver', loop.receiverPackets, loop.receiverSeconds));
  console.log(`fec-encode: ${fec.encodeMBps.toFixed(0)} MB/s`);
  console.log(`fec-decode: ${fec.decodeMBps.toFixed(0)} MB/s`);
  console.log(`(frames decoded in the loop: ${loop.frames} of 6000; packets: ${loop.senderPackets})`);
  if (loop.frames < 5000) {
    console.error('the sender/receiver loop decoded too few frames: the benchmark is broken');
    return 1;
  }
  const emu = await measureSaturatedRate({ capacityBps: 12e6, offeredBps: 15e6, delayMs: 50, queueMs: 200, durationMs: 2600 });
  console.log(`emulator: 12 Mbps path delivered ${(emu.deliveredBps / 1e6).toFixed(2)} Mbps (${((emu.deliveredBps / 12e6) * 100).toFixed(1)} %), ${emu.stats.up.dropped.queue} queue drops`);
  if (emu.stats.up.dropped.queue === 0 || emu.stats.relay.sendErrors > 0) {
    console.error('the emulator check offered 15 Mbps but the queue never dropped (or sends failed): the benchmark is broken');
    return 1;
  }
  return 0;
}

runCli({}, "usage: npm run bench:micro   (per-packet cost of the sender and the receiver, FEC throughput, the emulator's rate on a saturated path; no options)", 'bench:micro', main);
