/**
 * One side of a call: an optional sender engine and a receiver engine sharing
 * the paths. Every datagram of a path is decoded once here and routed: media,
 * FEC, padding and stream info to the receiver; reports, NACKs, keyframe
 * requests and QoE feedback to the sender (reports are also answered with a
 * clock echo, see {@link ReceiverEngine.echoClock}); app data and its acks to the
 * optional {@link AppDataChannel} (counted in `appDataIgnored` without one).
 * Malformed datagrams are counted and dropped (never thrown).
 */
import type { PathId } from '../core/types.js';
import { decodePacket } from '../wire/decode.js';
import type { WireErrorReason } from '../wire/types.js';
import type { AppDataChannel } from './app-data.js';
import type { ReceiverEngine } from './receiver.js';
import type { SenderEngine } from './sender.js';

export class Endpoint {
  /** Datagrams dropped by the wire decoder, by reason. */
  readonly malformed: Partial<Record<WireErrorReason, number>> = {};
  /** App data datagrams received with no app data channel to take them. */
  appDataIgnored = 0;

  constructor(
    readonly receiver: ReceiverEngine,
    readonly sender?: SenderEngine,
    readonly appData?: Pick<AppDataChannel, 'onMessage' | 'tick' | 'nextWakeUs'>,
  ) {}

  /**
   * A datagram arrived on `pathId`, `ageUs` µs ago when the transport knows
   * (a worker stamped it; default: now). Never throws for bad bytes.
   */
  onDatagram(pathId: PathId, bytes: Uint8Array, ageUs?: number): void {
    const res = decodePacket(bytes);
    if (!res.ok) {
      this.malformed[res.reason] = (this.malformed[res.reason] ?? 0) + 1;
      return;
    }
    const body = res.packet.body;
    const kind = body.kind;
    if (kind === 'appData' || kind === 'appDataAck') {
      if (this.appData) this.appData.onMessage(pathId, body);
      else this.appDataIgnored++;
    } else if (kind === 'report' || kind === 'nack' || kind === 'keyframeRequest' || kind === 'qoe') {
      this.sender?.onControl(res.packet.body, pathId, res.packet.sendTimeUs);
      // Every report is also one half of a clock exchange: echo its send time back (rate-limited).
      if (kind === 'report') this.receiver.echoClock(pathId, res.packet);
    } else {
      this.receiver.onPacket(pathId, res.packet, res.bodyBytes, bytes.length, ageUs);
    }
  }

  /** Run both engines' (and the app data channel's) periodic work. */
  tick(): void {
    this.sender?.tick();
    this.receiver.tick();
    this.appData?.tick();
  }

  /** Earliest time (µs) either engine wants a tick. */
  nextWakeUs(): number {
    const r = this.receiver.nextWakeUs();
    const a = this.appData ? Math.min(r, this.appData.nextWakeUs()) : r;
    return this.sender ? Math.min(a, this.sender.nextWakeUs()) : a;
  }
}
