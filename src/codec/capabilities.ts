/**
 * What this browser can do for a call (browser feature detection, no I/O):
 * WebCodecs encoders and decoders per codec, how camera frames are captured
 * (./frame-source.ts), how decoded frames are rendered (./frame-sink.ts),
 * and RTCDataChannel. `MultipathCall.isSupported()` and
 * `MultipathCall.capabilities()` forward here.
 */
import type { CodecName } from '../core/types.js';
import { codecString, supportedEncoderConfig } from './codec-config.js';
import { detectCaptureMode, type CaptureMode } from './frame-source.js';
import { detectRenderMode, type RenderMode } from './frame-sink.js';

/** Every codec a call can use, in the order they are probed. */
export const CALL_CODECS: readonly CodecName[] = ['h264', 'vp8', 'vp9', 'av1'];

/** What works in this browser: `MultipathCall.capabilities()` (src/codec/capabilities.ts callCapabilities). */
export interface CallCapabilities {
  /** A call can both send and receive video here (send && receive), with at least one codec both ways. */
  supported: boolean;
  /** Camera video can be sent: VideoEncoder, a capture mode, RTCDataChannel and at least one encodable codec. */
  send: boolean;
  /** Remote video can be received and shown: VideoDecoder, a render mode, RTCDataChannel and at least one decodable codec. */
  receive: boolean;
  /** Codecs `VideoEncoder.isConfigSupported` accepts (the call's realtime configuration at 640x480, 30 fps, 1 Mbps; codec-config.ts supportedEncoderConfig). */
  encode: CodecName[];
  /** Codecs `VideoDecoder.isConfigSupported` accepts (the same codec strings). */
  decode: CodecName[];
  /** How camera frames are read, or 'none'. */
  capture: CaptureMode | 'none';
  /** How decoded frames become the remote MediaStreamTrack, or 'none'. */
  render: RenderMode | 'none';
  /** RTCPeerConnection with createDataChannel (every path is one RTCDataChannel). */
  datachannel: boolean;
  /** What is missing, named (e.g. 'VideoEncoder (WebCodecs)', 'codec: av1 encoder'); empty when everything works. */
  missing: string[];
}

function hasDataChannel(): boolean {
  return typeof RTCPeerConnection === 'function' && typeof RTCPeerConnection.prototype.createDataChannel === 'function';
}

/** The synchronous part: which APIs exist, without asking the codecs. */
function apiCheck(): { send: boolean; receive: boolean; capture: CaptureMode | 'none'; render: RenderMode | 'none'; datachannel: boolean; missing: string[] } {
  const missing: string[] = [];
  const encoder = typeof VideoEncoder === 'function';
  const decoder = typeof VideoDecoder === 'function' && typeof EncodedVideoChunk === 'function';
  if (!encoder) missing.push('VideoEncoder (WebCodecs)');
  if (!decoder) missing.push('VideoDecoder (WebCodecs)');
  const cap = detectCaptureMode();
  const ren = detectRenderMode();
  if (!cap.mode) missing.push(`capture: ${cap.missing.join(' or ')}`);
  if (!ren.mode) missing.push(`render: ${ren.missing.join(' or ')}`);
  const datachannel = hasDataChannel();
  if (!datachannel) missing.push('RTCPeerConnection.createDataChannel');
  return {
    send: encoder && cap.mode !== undefined && datachannel,
    receive: decoder && ren.mode !== undefined && datachannel,
    capture: cap.mode ?? 'none',
    render: ren.mode ?? 'none',
    datachannel,
    missing,
  };
}

/**
 * Whether this browser has every API a call needs to send and receive video
 * (WebCodecs VideoEncoder and VideoDecoder, a capture mode, a render mode,
 * RTCDataChannel). Synchronous: it does not ask the codecs; see
 * {@link callCapabilities} for that. False in Node and workers.
 */
export function isCallSupported(): boolean {
  const a = apiCheck();
  return a.send && a.receive;
}

async function encodes(codec: CodecName): Promise<boolean> {
  return (await supportedEncoderConfig(codec, 640, 480, 1_000_000, 30)) !== undefined;
}

async function decodes(codec: CodecName): Promise<boolean> {
  try {
    return (await VideoDecoder.isConfigSupported({ codec: codecString(codec, 640, 480) })).supported === true;
  } catch {
    return false;
  }
}

/**
 * What works here: the API check of {@link isCallSupported} plus, per codec
 * (H.264, VP8, VP9, AV1), whether the encoder and the decoder accept the
 * call's configuration (`isConfigSupported`; no test encode, so a browser
 * that claims a codec and then fails shows up only at `sendTrack`).
 * Never rejects.
 */
export async function callCapabilities(): Promise<CallCapabilities> {
  const a = apiCheck();
  const encode = typeof VideoEncoder === 'function' ? (await Promise.all(CALL_CODECS.map(async (c) => ((await encodes(c)) ? c : undefined)))).filter((c) => c !== undefined) : [];
  const decode = typeof VideoDecoder === 'function' ? (await Promise.all(CALL_CODECS.map(async (c) => ((await decodes(c)) ? c : undefined)))).filter((c) => c !== undefined) : [];
  const missing = [...a.missing];
  for (const c of CALL_CODECS) {
    if (typeof VideoEncoder === 'function' && !encode.includes(c)) missing.push(`codec: ${c} encoder`);
    if (typeof VideoDecoder === 'function' && !decode.includes(c)) missing.push(`codec: ${c} decoder`);
  }
  const send = a.send && encode.length > 0;
  const receive = a.receive && decode.length > 0;
  return { supported: send && receive && encode.some((c) => decode.includes(c)), send, receive, encode, decode, capture: a.capture, render: a.render, datachannel: a.datachannel, missing };
}
