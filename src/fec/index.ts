/** FEC: XOR code, decoder, rate policies (path-specific Converge §4.3, libwebrtc table, none). */
export type * from './types.js';
export { FecError, type FecErrorCode } from './errors.js';
export { makeFecPackets, xorInto, maskOffsets, FEC_MAX_MASK_BITS, type MakeFecArgs } from './xor.js';
export { FecDecoder, type FecDecoderOptions } from './decoder.js';
export { PathFecPolicy, type PathFecPolicyOptions } from './path-policy.js';
export { WebRtcTableFecPolicy, convertFecRate, type WebRtcTableFecPolicyOptions, type WebRtcProtection } from './webrtc-table-policy.js';
export { NoneFecPolicy } from './none-policy.js';
export { createFecPolicy, type FecPolicyOptions } from './factory.js';
export { FecProtectionWindow, type FecProtectionWindowOptions } from './window.js';
export { FEC_RATE_TABLE } from './fec-rate-table.js';
