import { describe, expect, it } from 'vitest';
import { bundleCount, CARRIER_HEADER_BYTES, carrierCodecs, FrameSeqWindow, packFrame, unpackFrame, withoutVideoRepair } from '../../../src/transport/rtp-carrier-frame.js';

const bytes = (n: number, seed: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

describe('RTP carrier frame', () => {
  it('round-trips datagrams of every size behind a VP8 key-frame prefix', () => {
    const ds = [bytes(1, 1), bytes(1200, 2), bytes(65535, 3)];
    const f = packFrame(0xfffffffe, ds);
    expect(f.length).toBe(CARRIER_HEADER_BYTES + 3 * 2 + 1 + 1200 + 65535);
    // What libwebrtc's VP8 depacketizer reads: P bit 0 (key frame), start code, 16x16.
    expect(f[0] & 1).toBe(0);
    expect([...f.subarray(3, 10)]).toEqual([0x9d, 0x01, 0x2a, 16, 0, 16, 0]);
    const out = unpackFrame(f);
    if (typeof out === 'string') throw new Error(out);
    expect(out.frameSeq).toBe(0xfffffffe);
    expect(out.datagrams.map((d) => [...d])).toEqual(ds.map((d) => [...d]));
  });

  it('rejects what is not a carrier frame, truncated or padded frames', () => {
    const f = packFrame(7, [bytes(10, 1), bytes(20, 2)]);
    expect(unpackFrame(f.subarray(0, 5))).toBe('short');
    const delta = f.slice();
    delta[0] |= 1;
    expect(unpackFrame(delta)).toBe('magic');
    const other = f.slice();
    other[10] = 0;
    expect(unpackFrame(other)).toBe('magic');
    expect(unpackFrame(f.subarray(0, f.length - 1))).toBe('truncated');
    const longer = new Uint8Array(f.length + 1);
    longer.set(f);
    expect(unpackFrame(longer)).toBe('trailing');
    const zero = f.slice();
    zero[16] = 0;
    expect(unpackFrame(zero)).toBe('count');
    expect(() => packFrame(1, [])).toThrow(RangeError);
    expect(() => packFrame(1, [new Uint8Array(0)])).toThrow(RangeError);
    expect(() => packFrame(1, [new Uint8Array(65536)])).toThrow(RangeError);
  });

  it('bundles at least one datagram, then at most maxDatagrams within maxFrameBytes', () => {
    expect(bundleCount([], 2, 2600)).toBe(0);
    expect(bundleCount([5000], 2, 2600)).toBe(1);
    expect(bundleCount([1200, 1200, 1200], 2, 2600)).toBe(2);
    expect(bundleCount([1200, 1200, 1200], 3, 2600)).toBe(2);
    expect(bundleCount([100, 100, 100, 100], 3, 2600)).toBe(3);
    expect(bundleCount([100, 100], 1, 2600)).toBe(1);
  });

  it('drops a frame seen again within its window, bounded', () => {
    const w = new FrameSeqWindow(3);
    expect([1, 2, 1, 3, 4].map((s) => w.firstTime(s))).toEqual([true, true, false, true, true]);
    expect(w.firstTime(1)).toBe(true); // forgotten: the window holds 3
    expect(w.firstTime(4)).toBe(false);
    expect(() => new FrameSeqWindow(0)).toThrow(RangeError);
  });

  it('removes NACK, PLI and FIR feedback from video m-sections only', () => {
    const sdp = [
      'v=0',
      'm=application 9 UDP/DTLS/SCTP webrtc-datachannel',
      'a=rtcp-fb:96 nack',
      'm=video 9 UDP/TLS/RTP/SAVPF 96',
      'a=rtpmap:96 VP8/90000',
      'a=rtcp-fb:96 goog-remb',
      'a=rtcp-fb:96 transport-cc',
      'a=rtcp-fb:96 ccm fir',
      'a=rtcp-fb:96 nack',
      'a=rtcp-fb:96 nack pli',
      '',
    ].join('\r\n');
    const out = withoutVideoRepair(sdp).split('\r\n');
    expect(out).toContain('a=rtcp-fb:96 transport-cc');
    expect(out).toContain('a=rtcp-fb:96 goog-remb');
    expect(out.filter((l) => /nack|fir/.test(l))).toEqual(['a=rtcp-fb:96 nack']); // the application section's, untouched
    expect(out[out.length - 1]).toBe('');
  });

  it('puts x-google-min-bitrate on every VP8 payload type of the video m-sections when asked', () => {
    const sdp = [
      'v=0',
      'm=application 9 UDP/DTLS/SCTP webrtc-datachannel',
      'a=sctp-port:5000',
      'm=video 9 UDP/TLS/RTP/SAVPF 96 98 100',
      'a=rtpmap:96 VP8/90000',
      'a=rtcp-fb:96 transport-cc',
      'a=rtpmap:98 vp8/90000',
      'a=rtpmap:100 VP9/90000',
      'a=fmtp:98 foo=1',
      'a=fmtp:100 profile-id=0',
      '',
    ].join('\r\n');
    expect(withoutVideoRepair(sdp)).toBe(sdp);
    expect(withoutVideoRepair(sdp, 0)).toBe(sdp);
    const out = withoutVideoRepair(sdp, 150).split('\r\n');
    expect(out).toEqual([
      'v=0',
      'm=application 9 UDP/DTLS/SCTP webrtc-datachannel',
      'a=sctp-port:5000',
      'm=video 9 UDP/TLS/RTP/SAVPF 96 98 100',
      'a=rtpmap:96 VP8/90000',
      'a=fmtp:96 x-google-min-bitrate=150',
      'a=rtcp-fb:96 transport-cc',
      'a=rtpmap:98 vp8/90000',
      'a=rtpmap:100 VP9/90000',
      'a=fmtp:98 foo=1;x-google-min-bitrate=150',
      'a=fmtp:100 profile-id=0',
      '',
    ]);
    // Idempotent: an SDP that already has it keeps its value.
    expect(withoutVideoRepair(out.join('\r\n'), 300)).toBe(out.join('\r\n'));
  });

  it("looks for a VP8 payload type's fmtp line in its own video m-section only", () => {
    const sdp = [
      'v=0',
      'm=video 9 UDP/TLS/RTP/SAVPF 96',
      'a=rtpmap:96 VP8/90000',
      'a=rtcp-fb:96 transport-cc',
      'm=video 9 UDP/TLS/RTP/SAVPF 96',
      'a=rtpmap:96 H264/90000',
      'a=fmtp:96 packetization-mode=1',
      '',
    ].join('\r\n');
    const out = withoutVideoRepair(sdp, 150).split('\r\n');
    // The first section's VP8 gets its own fmtp line (the second section's fmtp:96 belongs to H264 there and stays as it was).
    expect(out).toEqual([
      'v=0',
      'm=video 9 UDP/TLS/RTP/SAVPF 96',
      'a=rtpmap:96 VP8/90000',
      'a=fmtp:96 x-google-min-bitrate=150',
      'a=rtcp-fb:96 transport-cc',
      'm=video 9 UDP/TLS/RTP/SAVPF 96',
      'a=rtpmap:96 H264/90000',
      'a=fmtp:96 packetization-mode=1',
      '',
    ]);
  });

  it('prefers one VP8 codec and nothing else (no RTX)', () => {
    const caps = [{ mimeType: 'video/VP9' }, { mimeType: 'video/VP8' }, { mimeType: 'video/rtx' }, { mimeType: 'video/VP8', sdpFmtpLine: 'x' }];
    expect(carrierCodecs(caps)).toEqual([{ mimeType: 'video/VP8' }]);
    expect(carrierCodecs([{ mimeType: 'video/H264' }])).toEqual([]);
  });
});
