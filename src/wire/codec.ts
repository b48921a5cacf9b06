/**
 * @deprecated Temporary alias of encode.ts for `src/engine/sender.ts`, which
 * another branch is splitting; delete this file once that file imports
 * `../wire/encode.js` (the protobuf wire format is `encode.ts` / `decode.ts`,
 * so it no longer shares a name with the WebCodecs layer `src/codec/`).
 */
export { encodeControl, encodeFec, encodePacket } from './encode.js';
