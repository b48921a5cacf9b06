/**
 * One side of a call: an optional sender engine and a receiver engine sharing
 * the paths. Every datagram of a path is decoded once here and routed: media,
 * FEC, padding and stream info to the receiver; reports, NACKs, keyframe
 * requests and QoE feedback to the sender. Malformed datagrams are counted and
 * dropped (never thrown).
 */
import type { PathId } from '../core/types.js';
import { decodePacket } from '../wire/decode.js';
import type { WireErrorReason } from '../wire/types.js';
import type { ReceiverEngine } from './receiver.js';
import type { SenderEngine } from './sender.js';

export class Endpoint {
  /** Datagrams dropped by the wire decoder, by reason. */
  readonly malformed: Partial<Record<WireErrorReason, number>> = {};

  constructor(
    readonly receiver: ReceiverEngine,
    readonly sender?: SenderEngine,
  ) {}

  /** A datagram arrived on `pathId`. Never throws for bad bytes. */
  onDatagram(pathId: PathId, bytes: Uint8Array): void {
    const res = decodePacket(bytes);
    if (!res.ok) {
      this.malformed[res.reason] = (this.malformed[res.reason] ?? 0) + 1;
      return;
    }
    const kind = res.packet.body.kind;
    if (kind === 'report' || kind === 'nack' || kind === 'keyframeRequest' || kind === 'qoe') {
      this.sender?.onControl(res.packet.body, pathId);
    } else {
      this.receiver.onPacket(pathId, res.packet, res.bodyBytes, bytes.length);
    }
  }

  /** Run both engines' periodic work. */
  tick(): void {
    this.sender?.tick();
    this.receiver.tick();
  }

  /** Earliest time (µs) either engine wants a tick. */
  nextWakeUs(): number {
    const r = this.receiver.nextWakeUs();
    return this.sender ? Math.min(r, this.sender.nextWakeUs()) : r;
  }
}
