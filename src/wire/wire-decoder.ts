/**
 * Stateful wrapper around the pure {@link decodePacket}: resolves the limits
 * once and counts decoded packets and drops by reason (for stats / getStats).
 */
import { decodePacketWith, resolveLimits } from './codec.js';
import { WireError } from './errors.js';
import type { DecodeResult, WireErrorReason, WireLimits, WireStats } from './types.js';

const REASONS: readonly WireErrorReason[] = ['empty', 'too-large', 'malformed', 'no-body', 'bad-field'];

export class WireDecoder {
  readonly limits: Readonly<WireLimits>;
  private decoded = 0;
  private dropped = 0;
  private readonly byReason: Record<WireErrorReason, number> = { empty: 0, 'too-large': 0, malformed: 0, 'no-body': 0, 'bad-field': 0 };

  /** @throws WireError ERR_INVALID_OPTION if a given limit is not a positive integer. */
  constructor(limits: Partial<WireLimits> = {}) {
    for (const [k, v] of Object.entries(limits)) {
      if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v <= 0)) {
        throw WireError.invalidOption(k, v, 'a positive integer');
      }
    }
    this.limits = Object.freeze(resolveLimits(limits));
  }

  /** Decodes one packet (see decodePacket) and counts the outcome. Never throws. */
  decode(bytes: Uint8Array): DecodeResult {
    const r = decodePacketWith(bytes, this.limits);
    if (r.ok) this.decoded++;
    else {
      this.dropped++;
      this.byReason[r.reason]++;
    }
    return r;
  }

  /** Snapshot of the counters. */
  stats(): WireStats {
    const droppedByReason = {} as Record<WireErrorReason, number>;
    for (const k of REASONS) droppedByReason[k] = this.byReason[k];
    return { decoded: this.decoded, dropped: this.dropped, droppedByReason };
  }
}
