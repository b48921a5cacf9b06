/**
 * What this browser can do for a call (browser feature detection, no I/O):
 * WebCodecs encoders and decoders per codec, how camera frames are captured
 * (./frame-source.ts), how decoded frames are rendered (./frame-sink.ts),
 * and RTCDataChannel. `MultipathCall.isSupported()` forwards here;
 * `MultipathCall.capabilities()` loads ./capabilities-probe.ts (a lazy chunk:
 * it asks the codecs) on first use.
 */
import type { CodecName } from '../core/types.js';
import { detectCaptureMode, type CaptureMode } from './frame-source.js';
import { detectRenderMode, type RenderMode } from './frame-sink.js';

/** Every codec a call can use, in the order they are probed. */
export const CALL_CODECS: readonly CodecName[] = ['h264', 'vp8', 'vp9', 'av1'];

/** What works in this browser: `MultipathCall.capabilities()` (src/codec/capabilities-probe.ts callCapabilities). */
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
  /**
   * Audio (src/audio): `send`, a microphone can be sent (`sendTrack` of an
   * audio track): WebCodecs AudioEncoder accepting Opus (48 kHz mono), a way
   * to read the microphone (MediaStreamTrackProcessor, or Web Audio where it
   * is missing: src/audio/web-audio.ts), RTCDataChannel; `receive`, remote
   * audio plays (`CallEvent.RemoteTrack` of kind 'audio'): AudioDecoder
   * accepting Opus and MediaStreamTrackGenerator or Web Audio for the track.
   * Chromium uses the generator and the processor; Firefox 153, Web Audio,
   * whose AudioContext may wait for a user gesture (autoplay policy). Not
   * part of `supported`, which is about video.
   */
  audio: { send: boolean; receive: boolean };
  /** What is missing, named (e.g. 'VideoEncoder (WebCodecs)', 'codec: av1 encoder', 'audio send: MediaStreamTrackProcessor or AudioContext'); empty when everything works. */
  missing: string[];
}

function hasDataChannel(): boolean {
  return typeof RTCPeerConnection === 'function' && typeof RTCPeerConnection.prototype.createDataChannel === 'function';
}

/** The synchronous part: which APIs exist, without asking the codecs (./capabilities-probe.ts asks them). */
export function apiCheck(): { send: boolean; receive: boolean; capture: CaptureMode | 'none'; render: RenderMode | 'none'; datachannel: boolean; missing: string[] } {
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
 * `callCapabilities` (./capabilities-probe.ts) for that. False in Node and workers.
 */
export function isCallSupported(): boolean {
  const a = apiCheck();
  return a.send && a.receive;
}
