/**
 * The bytes of the RTP carrier (src/transport/rtp-carrier.ts): how a bundle
 * of our datagrams rides in one encoded VP8 frame, the duplicate filter of
 * the receiving side, and the SDP edit that turns Chromium's own repair off.
 * Pure (no DOM, no timers): shared by the carrier's worker and the page side,
 * and unit-tested in Node.
 *
 * Layout of one carried frame (integers big-endian):
 *   [0, 10)   VP8 key-frame prefix: frame tag with P bit 0 (key frame),
 *             version 0, show_frame 1; start code 9d 01 2a; width and height
 *             16 (RFC 6386 §9.1, §19.1). libwebrtc's VP8 depacketizer reads
 *             the first payload byte and, for a key frame, needs >= 10 bytes
 *             and reads the size from bytes 6-9
 *             (modules/rtp_rtcp/source/video_rtp_depacketizer_vp8.cc); a
 *             "delta" prefix made the receiver ask for key frames (PLI) and
 *             the sender's pacer flush its queue at each one
 *             (tools/experiments/rtp-carrier/README.md, answer 2).
 *   [10, 12)  magic 0x6d 0x63 ("mc"): frames that are not ours are dropped
 *   [12, 16)  frame sequence number (u32, wraps): duplicate frames are dropped
 *   [16, 17)  number of datagrams n (1..255)
 *   then n times: u16 length, then the datagram's bytes.
 */

/** Bytes of the VP8 key-frame prefix. */
export const VP8_KEY_PREFIX_BYTES = 10;
/** Bytes before the first datagram (prefix, magic, frame sequence, count). */
export const CARRIER_HEADER_BYTES = 17;
/** Largest datagram a frame can carry (u16 length field). */
export const MAX_CARRIED_DATAGRAM_BYTES = 0xffff;
/** Most datagrams in one frame (u8 count). */
export const MAX_DATAGRAMS_PER_FRAME = 255;

const MAGIC0 = 0x6d;
const MAGIC1 = 0x63;
/** Frame tag of a shown VP8 key frame (P = 0, version 0, show_frame 1, first partition size 0), then start code and 16x16. */
const VP8_KEY_PREFIX = [0x10, 0x00, 0x00, 0x9d, 0x01, 0x2a, 16, 0, 16, 0];

/**
 * Build one carried frame from `datagrams` (each 1..65535 bytes, at most 255 of them).
 * @param frameSeq u32 frame sequence number (taken modulo 2^32)
 * @throws RangeError when there is no datagram, too many, or one is empty or too large
 */
export function packFrame(frameSeq: number, datagrams: readonly Uint8Array[]): Uint8Array {
  const n = datagrams.length;
  if (n < 1 || n > MAX_DATAGRAMS_PER_FRAME) throw new RangeError(`packFrame: 1..${MAX_DATAGRAMS_PER_FRAME} datagrams, got ${n}`);
  let total = CARRIER_HEADER_BYTES;
  for (const d of datagrams) {
    if (d.length < 1 || d.length > MAX_CARRIED_DATAGRAM_BYTES) throw new RangeError(`packFrame: datagram of ${d.length} bytes (1..${MAX_CARRIED_DATAGRAM_BYTES})`);
    total += 2 + d.length;
  }
  const out = new Uint8Array(total);
  out.set(VP8_KEY_PREFIX, 0);
  out[10] = MAGIC0;
  out[11] = MAGIC1;
  const v = new DataView(out.buffer);
  v.setUint32(12, frameSeq >>> 0);
  out[16] = n;
  let at = CARRIER_HEADER_BYTES;
  for (const d of datagrams) {
    v.setUint16(at, d.length);
    out.set(d, at + 2);
    at += 2 + d.length;
  }
  return out;
}

/** A parsed carried frame: views into the frame's buffer (copy or slice them to keep them). */
export interface CarriedFrame {
  frameSeq: number;
  datagrams: Uint8Array[];
}

/**
 * Parse a frame written by {@link packFrame}.
 * @returns the frame, or a reason when it is not one of ours or is malformed:
 *   'short' (no header), 'magic' (not a carrier frame), 'count' (n = 0),
 *   'truncated' (a length runs past the end), 'trailing' (bytes after the last datagram).
 */
export function unpackFrame(data: Uint8Array): CarriedFrame | 'short' | 'magic' | 'count' | 'truncated' | 'trailing' {
  if (data.length < CARRIER_HEADER_BYTES) return 'short';
  if ((data[0] & 1) !== 0 || data[10] !== MAGIC0 || data[11] !== MAGIC1) return 'magic';
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const n = data[16];
  if (n === 0) return 'count';
  const datagrams: Uint8Array[] = [];
  let at = CARRIER_HEADER_BYTES;
  for (let i = 0; i < n; i++) {
    if (at + 2 > data.length) return 'truncated';
    const len = v.getUint16(at);
    at += 2;
    if (len === 0 || at + len > data.length) return 'truncated';
    datagrams.push(data.subarray(at, at + len));
    at += len;
  }
  if (at !== data.length) return 'trailing';
  return { frameSeq: v.getUint32(12), datagrams };
}

/**
 * How many of the queued datagrams (sizes in queue order) the next frame
 * takes: at least one, then more while the count stays <= `maxDatagrams` and
 * the frame's payload stays <= `maxFrameBytes`. Small bundles on purpose: the
 * receiver gets only complete frames, so one lost RTP packet loses every
 * datagram of its frame (README answer 2, "loss amplification").
 */
export function bundleCount(sizes: readonly number[], maxDatagrams: number, maxFrameBytes: number): number {
  if (sizes.length === 0) return 0;
  let n = 1;
  let bytes = CARRIER_HEADER_BYTES + 2 + sizes[0];
  const cap = Math.min(maxDatagrams, MAX_DATAGRAMS_PER_FRAME, sizes.length);
  while (n < cap && bytes + 2 + sizes[n] <= maxFrameBytes) {
    bytes += 2 + sizes[n];
    n++;
  }
  return n;
}

/**
 * Remembers the last `size` frame sequence numbers seen (bounded), to drop
 * frames delivered twice (Chromium's RTX padding re-sends recent media
 * packets, which completes a frame again: README answer 1).
 */
export class FrameSeqWindow {
  private readonly seen = new Set<number>();
  private readonly order: number[] = [];
  private head = 0;

  /** @throws RangeError when size is not an integer >= 1 */
  constructor(private readonly size = 512) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`FrameSeqWindow: size must be an integer >= 1, got ${size}`);
  }

  /** True the first time `seq` is seen (within the window), false for a duplicate. */
  firstTime(seq: number): boolean {
    if (this.seen.has(seq)) return false;
    this.seen.add(seq);
    if (this.order.length < this.size) this.order.push(seq);
    else {
      this.seen.delete(this.order[this.head]);
      this.order[this.head] = seq;
      this.head = (this.head + 1) % this.size;
    }
    return true;
  }
}

/**
 * Remove Chromium's own loss repair and key-frame requests from every video
 * m-section of an SDP: the `a=rtcp-fb:<pt> nack`, `nack pli` and `ccm fir`
 * lines (RFC 4585 §4.2, RFC 5104 §7.1). Without them the receiver sends no
 * NACK, PLI or FIR and the sender never retransmits (measured: `loss-nonack`,
 * README answer 2). RTX is left out separately, through the codec
 * preferences. Other m-sections (the datachannel's) are untouched.
 *
 * With `minBitrateKbps` >= 1, every VP8 payload type of a video m-section
 * gets `x-google-min-bitrate=<kbps>` in its `a=fmtp` line (made when
 * missing; an existing value is kept): the peer that receives this SDP
 * takes it as the minimum of its bandwidth estimate for the whole connection
 * when it sends with that codec (libwebrtc
 * media/engine/webrtc_video_engine.cc, GetBitrateConfigForCodec,
 * kCodecParamMinBitrate -> Call's BitrateConstraints.min_bitrate_bps; the
 * estimate is capped from below there: modules/congestion_controller/goog_cc/
 * send_side_bandwidth_estimation.cc, min_bitrate_configured_).
 */
export function withoutVideoRepair(sdp: string, minBitrateKbps = 0): string {
  const eol = sdp.includes('\r\n') ? '\r\n' : '\n';
  let video = false;
  const out: string[] = [];
  const floor = `x-google-min-bitrate=${Math.floor(minBitrateKbps)}`;
  /** VP8 payload types seen in an `a=rtpmap` line whose `a=fmtp` line comes later. */
  const vp8 = new Set<string>();
  const lines = sdp.split(eol);
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (l.startsWith('m=')) video = l.startsWith('m=video');
    if (video && /^a=rtcp-fb:\S+ (nack|nack pli|ccm fir)$/.test(l)) continue;
    if (!(video && minBitrateKbps >= 1)) {
      out.push(l);
      continue;
    }
    // The estimate's floor on every VP8 payload type of the video m-section (its fmtp line, made when missing).
    const fmtp = /^a=fmtp:(\d+) (.*)$/.exec(l);
    if (fmtp && vp8.has(fmtp[1])) {
      out.push(/x-google-min-bitrate=/.test(fmtp[2]) ? l : `${l};${floor}`);
      vp8.delete(fmtp[1]);
      continue;
    }
    out.push(l);
    const rtpmap = /^a=rtpmap:(\d+) VP8\/90000/i.exec(l);
    if (rtpmap) {
      const pt = rtpmap[1];
      // Its fmtp line, if any, later in this m-section (another section's same payload type number is not it).
      let has = false;
      for (let j = i + 1; j < lines.length && !lines[j].startsWith('m='); j++) if (lines[j].startsWith(`a=fmtp:${pt} `)) has = true;
      if (has) vp8.add(pt);
      else out.push(`a=fmtp:${pt} ${floor}`);
    }
  }
  return out.join(eol);
}

/** The codecs to prefer on the carrier's transceiver: VP8 only, no RTX / RED / ULPFEC (mimeType compare is case-insensitive). */
export function carrierCodecs<C extends { mimeType: string }>(codecs: readonly C[]): C[] {
  const vp8 = codecs.filter((c) => c.mimeType.toLowerCase() === 'video/vp8');
  return vp8.slice(0, 1);
}
