/**
 * Test helper: a sender and a receiver engine wired over emulated links
 * (sim/net/link.ts) on a fake clock, with an encoder stand-in whose frame
 * sizes follow the target bitrate (key frames on request).
 */
import { ManualClock } from '../../../src/core/clock.js';
import { Rng } from '../../../src/core/rng.js';
import { Endpoint } from '../../../src/engine/endpoint.js';
import { ReceiverEngine } from '../../../src/engine/receiver.js';
import type { ReceiverEngineConfig } from '../../../src/engine/receiver-config.js';
import type { PlayoutOptions } from '../../../src/feedback/playout.js';
import { SenderEngine } from '../../../src/engine/sender.js';
import type { SenderEngineConfig } from '../../../src/engine/sender.js';
import type { FecPolicyName } from '../../../src/fec/types.js';
import type { SchedulerName } from '../../../src/sched/types.js';
import { Link } from '../../../sim/net/link.js';
import type { LinkConfig } from '../../../sim/net/link.js';
import { constantRate } from '../../../sim/net/traces.js';

export interface PathSpec {
  rateMbps: number;
  delayMs: number;
  loss?: number;
  /** [startMs, endMs) with everything dropped, both directions. */
  down?: Array<[number, number]>;
  /** [startMs, endMs) with everything dropped on the reverse direction only (receiver -> sender: reports, NACKs). */
  reverseDown?: Array<[number, number]>;
  /** [startMs, endMs) in which the reverse direction (reports, NACKs) delivers nothing but holds what it gets (an LTE downlink stall: the backlog arrives at the end). */
  reverseStall?: Array<[number, number]>;
  /** Extra one-way delay steps: [atMs, delayMs]. */
  delaySteps?: Array<[number, number]>;
  /** Drop the sender's datagrams on this path for which this returns true (the drop times go to Call.dropsUs). */
  drop?: (datagram: Uint8Array, nowUs: number) => boolean;
}

function linkCfg(p: PathSpec, up: boolean): LinkConfig {
  return {
    capacity: constantRate((up ? p.rateMbps : 50) * 1e6),
    delay: p.delayMs,
    loss: up && p.loss ? { kind: 'bernoulli', p: p.loss } : { kind: 'none' },
    queue: !up && p.reverseStall ? { packets: 100_000 } : { ms: 300 },
    downPeriods: up ? p.down : [...(p.down ?? []), ...(p.reverseDown ?? [])],
    schedule: [
      ...(p.delaySteps ?? []).map(([atMs, delayMs]) => ({ atMs, delayMs })),
      ...(up
        ? []
        : (p.reverseStall ?? []).flatMap(([from, to]) => [
            { atMs: from, rateBps: 1000 },
            { atMs: to, rateBps: null },
          ])),
    ].sort((a, b) => a.atMs - b.atMs),
  };
}

export interface Call {
  clock: ManualClock;
  sender: SenderEngine;
  receiver: ReceiverEngine;
  decoded: number[];
  keyframeRequests: number;
  /** Run for `ms`, encoding `fps` frames of `frameBytes` (key frames on request). */
  run(ms: number): void;
  framesSent: number;
  /** Audio playouts the receiver emitted (with `audio: true`). */
  audioPlayouts: Array<{ kind: 'frame' | 'concealed' | 'stretch'; atUs: number }>;
  /** Times (µs) of the datagrams dropped by PathSpec.drop, in order. */
  dropsUs: number[];
}

export function makeCall(
  paths: PathSpec[],
  opts: {
    scheduler?: SchedulerName;
    fec?: FecPolicyName;
    seed?: number;
    frameBytes?: number;
    extra?: Partial<SenderEngineConfig>;
    playout?: PlayoutOptions;
    audio?: boolean;
    receiver?: Partial<Pick<ReceiverEngineConfig, 'reportCopies' | 'keyframeOnNackGiveUp' | 'reportIntervalMs' | 'nack'>>;
  } = {},
): Call {
  const clock = new ManualClock(1_000_000);
  const rng = new Rng(opts.seed ?? 1);
  const sender = new SenderEngine({ clock, scheduler: opts.scheduler ?? 'converge', fec: opts.fec ?? 'path', ...opts.extra });
  // The sender side's receiver answers the receiver's reports with clock echoes (its latency needs them).
  const senderRx = new ReceiverEngine({ clock });
  const senderEp = new Endpoint(senderRx, sender);
  const receiver = new ReceiverEngine({ clock, ...(opts.playout ? { playout: opts.playout } : {}), ...opts.receiver });
  const receiverEp = new Endpoint(receiver);
  const t0 = clock.nowUs();
  const ups = paths.map((p) => new Link<Uint8Array>(linkCfg(p, true), rng));
  const downs = paths.map((p) => new Link<Uint8Array>(linkCfg(p, false), rng));
  const dropsUs: number[] = [];
  paths.forEach((spec, id) => {
    sender.addPath(
      id,
      {
        send: (b) => {
          if (spec.drop?.(b, clock.nowUs())) dropsUs.push(clock.nowUs());
          else ups[id].send(b, b.length + 28, clock.nowUs() - t0);
          return true;
        },
        bufferedAmount: () => 0,
      },
      'connected',
    );
    senderRx.addPath(id, { send: (b) => (ups[id].send(b, b.length + 28, clock.nowUs() - t0), true), bufferedAmount: () => 0 });
    receiver.addPath(id, { send: (b) => (downs[id].send(b, b.length + 28, clock.nowUs() - t0), true), bufferedAmount: () => 0 });
  });
  sender.setStreamInfo({ codec: 'vp8', width: 640, height: 480, fps: 30 });
  const call: Call = {
    clock,
    sender,
    receiver,
    decoded: [],
    keyframeRequests: 0,
    framesSent: 0,
    audioPlayouts: [],
    dropsUs,
    run(ms: number) {
      // Like a real encoder: frame sizes follow the target bitrate (or a fixed size when given).
      for (let i = 0; i < ms; i++) {
        clock.advanceUs(1000);
        const now = clock.nowUs();
        const rel = now - t0;
        for (let id = 0; id < paths.length; id++) {
          for (const d of ups[id].poll(rel)) receiverEp.onDatagram(id, d.item);
          for (const d of downs[id].poll(rel)) senderEp.onDatagram(id, d.item);
        }
        if (rel % 33_000 < 1000) {
          call.framesSent++;
          const key = call.framesSent === 1 || forceKey;
          forceKey = false;
          const frameBytes = opts.frameBytes ?? Math.max(300, Math.round(sender.targetBitrateBps() / 8 / 30));
          sender.sendFrame({
            streamId: 0,
            frameId: call.framesSent,
            keyFrame: key,
            captureUs: now,
            data: new Uint8Array(key ? frameBytes * 4 : frameBytes).fill(call.framesSent & 0xff),
            codec: 'vp8',
          });
        }
        // 20 ms Opus-sized audio frames (~80 bytes) when asked
        if (opts.audio && rel % 20_000 < 1000) sender.sendAudio({ captureUs: now, durationUs: 20_000, data: new Uint8Array(80).fill(rel & 0xff) });
        if (i % 5 === 0) {
          senderEp.tick();
          receiverEp.tick();
        }
      }
    },
  };
  let forceKey = false;
  sender.on('keyframeNeeded', () => {
    call.keyframeRequests++;
    forceKey = true;
  });
  receiver.on('audio', (ev) => call.audioPlayouts.push({ kind: ev.playout.kind, atUs: ev.atUs }));
  receiver.on('frame', (f) => {
    call.decoded.push(f.frameId);
    receiver.onFrameDecoded(f.streamId, f.frameId, f.captureUs);
  });
  return call;
}
