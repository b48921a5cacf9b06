/**
 * Worst-case byte overheads of the wire format (multipath.proto), so the
 * packetizer can guarantee that a whole encoded Packet fits the MTU whatever
 * envelope values the pacer stamps later and even when the fragment is re-sent
 * as a retransmission.
 */
import { varintSize } from './varint.js';

/** Largest timestamp (µs) the wire accepts (exactly representable in a JS number). */
export const MAX_TIMESTAMP_US = 2 ** 53;

/** Largest uint32. */
export const UINT32_MAX = 0xffff_ffff;

const TAG = 1; // every field number used here is < 16: one-byte tag

/**
 * Upper bound of the Packet envelope around a body of `bodyBytes` bytes:
 * path_id (tag + 1 byte, < MAX_PATHS), path_seq (tag + 5), send_time_us
 * (tag + 8 bytes, <= 2^53), body field tag (2 bytes covers fields 10-19)
 * + length prefix.
 */
export function envelopeOverheadBytes(bodyBytes: number): number {
  return TAG + 1 + (TAG + 5) + (TAG + varintSize(MAX_TIMESTAMP_US)) + 2 + varintSize(bodyBytes);
}

/**
 * Upper bound of a Media message's bytes other than the payload, with every
 * field at its worst case: uint32 ids at 2^32-1, frag_index/frag_count below
 * `maxFragments`, key_frame, nal_class, priority, retransmission = true,
 * capture_us <= 2^53, payload length prefix for `payloadBytes`, and with
 * `layered` temporal_layer <= 7 and ref_distance <= 64 (fields only frames
 * of a temporally layered stream carry).
 */
export function mediaOverheadBytes(payloadBytes: number, maxFragments: number, streamId = UINT32_MAX, layered = true): number {
  const u32 = TAG + 5;
  const frag = TAG + varintSize(maxFragments);
  return (
    TAG +
    varintSize(streamId) + // stream_id
    u32 + // flow_seq
    u32 + // frame_id
    frag + // frag_index
    frag + // frag_count
    (TAG + 1) + // key_frame
    (TAG + 1) + // nal_class
    (TAG + 1) + // priority
    (TAG + varintSize(MAX_TIMESTAMP_US)) + // capture_us
    (TAG + 1) + // retransmission
    (layered ? 2 * (TAG + 1) : 0) + // temporal_layer (<= 7), ref_distance (<= 64)
    TAG +
    varintSize(payloadBytes) // payload length prefix
  );
}
