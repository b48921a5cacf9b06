/**
 * Wire layer: protobuf codec (multipath.proto), packetizer / depacketizer.
 */
export * from './types.js';
export * from './packetization.js';
export { WireError, type WireErrorCode } from './errors.js';
export { encodeMedia, encodeFec, encodeAudio, encodePacket, encodeControl } from './encode.js';
export { decodePacket, decodeMedia, resolveLimits } from './decode.js';
export { envelopeOverheadBytes, mediaOverheadBytes, MAX_TIMESTAMP_US } from './sizes.js';
export {
  Packetizer,
  fragmentPriority,
  retransmissionBody,
  originalMediaBody,
  DEFAULT_MTU_BYTES,
  MIN_MTU_BYTES,
  type PacketizerOptions,
  type PacketizedFragment,
} from './packetizer.js';
export {
  Depacketizer,
  FAR_AHEAD_FRAMES,
  RESYNC_AFTER,
  type DepacketizerOptions,
  type DepacketizerStats,
  type InsertResult,
  type InsertStatus,
} from './depacketizer.js';
