/**
 * The wire schema at run time: the static codec generated from
 * multipath.proto by tools/gen-wire.ts (schema.generated.ts, over the
 * primitives of pb.ts). No protobufjs, no .proto parsing and no run-time code
 * generation: runs under Vite, Vitest, plain Node and a strict
 * Content-Security-Policy (`script-src 'self'`).
 */
import { PACKET_FIELD_NUMBERS } from './schema.generated.js';

export * as pb from './schema.generated.js';

/** Envelope field numbers, generated from the schema (single source of truth). */
export const PACKET_FIELD = PACKET_FIELD_NUMBERS;

/** A plain Uint8Array view of `b` (no copy), so decoded bytes fields are plain Uint8Arrays too. */
export function plainView(b: Uint8Array): Uint8Array {
  return b.constructor === Uint8Array ? b : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}
