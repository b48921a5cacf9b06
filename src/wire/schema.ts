/**
 * The protobufjs Root of multipath.proto, built once from the generated JSON
 * descriptor (no .proto parsing at run time, no fs, no `?raw` imports: runs
 * under Vite, Vitest and plain Node). Uses the `protobufjs/light` build.
 */
import protobuf from 'protobufjs/light.js';
import { wireDescriptor } from './schema.generated.js';

export const wireRoot: protobuf.Root = protobuf.Root.fromJSON(wireDescriptor);

function type(name: string): protobuf.Type {
  return wireRoot.lookupType(`mprtc.${name}`);
}

export const MediaType = type('Media');
export const FecType = type('Fec');
export const PathReportType = type('PathReport');
export const KeyframeRequestType = type('KeyframeRequest');
export const NackType = type('Nack');
export const QoeFeedbackType = type('QoeFeedback');
export const StreamInfoType = type('StreamInfo');
export const PaddingType = type('Padding');
export const AppDataType = type('AppData');
export const AppDataAckType = type('AppDataAck');
export const AudioType = type('Audio');
export const PacketType = type('Packet');

function fieldId(t: protobuf.Type, name: string): number {
  const f = t.fields[name];
  if (!f) throw new Error(`multipath.proto: ${t.name}.${name} missing (regenerate schema.generated.ts)`);
  return f.id;
}

/** Envelope field numbers, read from the schema (single source of truth). */
export const PACKET_FIELD = {
  pathId: fieldId(PacketType, 'pathId'),
  pathSeq: fieldId(PacketType, 'pathSeq'),
  sendTimeUs: fieldId(PacketType, 'sendTimeUs'),
  media: fieldId(PacketType, 'media'),
  fec: fieldId(PacketType, 'fec'),
  report: fieldId(PacketType, 'report'),
  keyframeRequest: fieldId(PacketType, 'keyframeRequest'),
  nack: fieldId(PacketType, 'nack'),
  qoe: fieldId(PacketType, 'qoe'),
  streamInfo: fieldId(PacketType, 'streamInfo'),
  padding: fieldId(PacketType, 'padding'),
  appData: fieldId(PacketType, 'appData'),
  appDataAck: fieldId(PacketType, 'appDataAck'),
  audio: fieldId(PacketType, 'audio'),
} as const;

/**
 * A plain protobufjs Writer: `finish()` returns a plain Uint8Array on every
 * platform (`Writer.create()` would give a Node Buffer under Node).
 */
export function newWriter(): protobuf.Writer {
  return new protobuf.Writer();
}

/** A plain Uint8Array view of `b` (no copy), so decoded bytes fields are plain Uint8Arrays too. */
export function plainView(b: Uint8Array): Uint8Array {
  return b.constructor === Uint8Array ? b : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

export { protobuf };
