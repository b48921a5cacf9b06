/**
 * The reference protobuf implementation for the wire tests: protobufjs
 * (a devDependency) loading src/wire/multipath.proto with reflection. The
 * library's own codec is generated statically (tools/gen-wire.ts); the tests
 * check it against this one and use this one to build hostile inputs.
 */
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { PROTO_PATH } from '../../../tools/gen-wire.js';

export { protobuf };

export const referenceRoot: protobuf.Root = protobuf.parse(readFileSync(PROTO_PATH, 'utf8'), { keepCase: false }).root;

const type = (name: string): protobuf.Type => referenceRoot.lookupType(`mprtc.${name}`);

export const PacketType = type('Packet');
export const MediaType = type('Media');

/** A plain protobufjs Writer (`finish()` gives a plain Uint8Array, not a Node Buffer). */
export function newWriter(): protobuf.Writer {
  return new protobuf.Writer();
}
