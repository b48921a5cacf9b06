/**
 * `MultipathCall.capabilities()`: the API check of ./capabilities.ts plus
 * what the codecs say (`isConfigSupported`) for video (H.264, VP8, VP9, AV1)
 * and audio (Opus). A lazy chunk (`import()` on the first call): an app that
 * never asks does not load it (issue 14, bundle size). Browser feature
 * detection, no I/O.
 */
import type { CodecName } from '../core/types.js';
import { apiCheck, CALL_CODECS, type CallCapabilities } from './capabilities.js';
import { codecString, supportedEncoderConfig } from './codec-config.js';

/** The Opus configuration the call's audio uses (src/audio/opus-encoder.ts, audio-output.ts). */
const OPUS = { codec: 'opus', sampleRate: 48_000, numberOfChannels: 1 } as const;

async function opusSupported(coder: { isConfigSupported(c: typeof OPUS): Promise<{ supported?: boolean }> } | undefined): Promise<boolean> {
  try {
    return coder !== undefined && (await coder.isConfigSupported(OPUS)).supported === true;
  } catch {
    return false;
  }
}

/** Audio send and receive, and what each lacks (named in `missing`). */
async function audioCheck(datachannel: boolean, missing: string[]): Promise<{ send: boolean; receive: boolean }> {
  const g = globalThis as { AudioEncoder?: typeof AudioEncoder; AudioDecoder?: typeof AudioDecoder; MediaStreamTrackProcessor?: unknown; MediaStreamTrackGenerator?: unknown; AudioContext?: unknown };
  // Without the processor or the generator, Web Audio stands in (src/audio/web-audio.ts).
  const webAudio = typeof g.AudioContext === 'function';
  const need = (ok: boolean, what: string) => {
    if (!ok) missing.push(what);
    return ok;
  };
  const enc = need(typeof g.AudioEncoder === 'function', 'audio send: AudioEncoder (WebCodecs)') && need(await opusSupported(g.AudioEncoder), 'codec: opus encoder');
  const proc = need(typeof g.MediaStreamTrackProcessor === 'function' || webAudio, 'audio send: MediaStreamTrackProcessor or AudioContext');
  const dec = need(typeof g.AudioDecoder === 'function', 'audio receive: AudioDecoder (WebCodecs)') && need(await opusSupported(g.AudioDecoder), 'codec: opus decoder');
  const gen = need(typeof g.MediaStreamTrackGenerator === 'function' || webAudio, 'audio receive: MediaStreamTrackGenerator or AudioContext');
  return { send: enc && proc && datachannel, receive: dec && gen && datachannel };
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
 * call's configuration, and whether audio can be sent and played (Opus asked
 * the same way) (`isConfigSupported`; no test encode, so a browser
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
  const audio = await audioCheck(a.datachannel, missing);
  return { supported: send && receive && encode.some((c) => decode.includes(c)), send, receive, encode, decode, capture: a.capture, render: a.render, datachannel: a.datachannel, audio, missing };
}
