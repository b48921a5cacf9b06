/**
 * WebCodecs configuration (browser only): codec strings, the realtime
 * encoder configuration, the temporal-layer support check and the codec probe
 * (a real test encode).
 *
 * Sources: W3C WebCodecs (VideoEncoderConfig, latencyMode 'realtime',
 * avc.format 'annexb'), W3C WebRTC-SVC (scalabilityMode).
 */
import { MIN_ENCODER_BITRATE_BPS } from '../adapt/ladder.js';
import type { CodecName } from '../core/types.js';

/** WebCodecs codec string for a codec at a resolution. */
export function codecString(codec: CodecName, width: number, height: number): string {
  const pixels = width * height;
  switch (codec) {
    case 'h264':
      // Constrained Baseline; level 3.1 up to 1280x720, 4.0 up to 2048x1088, else 5.1.
      return pixels <= 1280 * 720 ? 'avc1.42e01f' : pixels <= 2048 * 1088 ? 'avc1.42e028' : 'avc1.42e033';
    case 'vp8':
      return 'vp8';
    case 'vp9':
      return 'vp09.00.31.08';
    case 'av1':
      return pixels <= 1280 * 720 ? 'av01.0.05M.08' : 'av01.0.08M.08';
    default:
      throw new CodecError('unknown-codec', `unknown codec ${String(codec)}`);
  }
}

/**
 * 'no-webcodecs': VideoEncoder/VideoDecoder missing; 'no-capture': no way to
 * read camera frames (the message names what is missing; ./frame-source.ts).
 */
export type CodecErrorCode = 'unknown-codec' | 'unsupported' | 'test-encode-failed' | 'no-webcodecs' | 'no-capture' | 'bad-track';

/** Errors of the codec layer, with a stable code. */
export class CodecError extends Error {
  constructor(
    readonly code: CodecErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'CodecError';
  }
}

/** W3C WebRTC-SVC scalabilityMode for `layers` temporal layers of one spatial layer: 'L1T1' | 'L1T2' | 'L1T3'. */
export function scalabilityModeFor(layers: number): string {
  return `L1T${layers}`;
}

/**
 * Encoder configuration for a codec (realtime, Annex B for H.264).
 * `temporalLayers` > 1 sets scalabilityMode L1T2/L1T3 (check support with
 * {@link pickTemporalLayers}); 1 keeps the codec's default (L1T1 for VP9/AV1).
 */
export function encoderConfig(codec: CodecName, width: number, height: number, bitrateBps: number, fps: number, temporalLayers = 1): VideoEncoderConfig {
  const cfg: VideoEncoderConfig = {
    codec: codecString(codec, width, height),
    width,
    height,
    bitrate: Math.max(MIN_ENCODER_BITRATE_BPS, Math.round(bitrateBps)),
    framerate: fps,
    latencyMode: 'realtime',
  };
  if (codec === 'h264') (cfg as VideoEncoderConfig & { avc: { format: 'annexb' } }).avc = { format: 'annexb' };
  if (temporalLayers > 1) (cfg as VideoEncoderConfig & { scalabilityMode: string }).scalabilityMode = scalabilityModeFor(temporalLayers);
  else if (codec === 'vp9' || codec === 'av1') (cfg as VideoEncoderConfig & { scalabilityMode: string }).scalabilityMode = 'L1T1';
  return cfg;
}

/**
 * The most temporal layers, at most `wanted` (1..3), that the browser's
 * encoder accepts for `cfg` (`VideoEncoder.isConfigSupported` with
 * scalabilityMode L1T3, then L1T2); 1 when none is (or the check throws).
 * Debian's Chromium 156 (headless, software codecs): H.264 (OpenH264),
 * VP8/VP9 (libvpx) and AV1 (libaom) all accept L1T2 and L1T3 and report
 * `svc.temporalLayerId` in the patterns 0 1 and 0 2 1 2.
 */
export async function pickTemporalLayers(cfg: VideoEncoderConfig, wanted: number): Promise<number> {
  for (let n = Math.min(3, Math.floor(wanted)); n > 1; n--) {
    try {
      const sup = await VideoEncoder.isConfigSupported({ ...cfg, scalabilityMode: scalabilityModeFor(n) } as VideoEncoderConfig);
      if (sup.supported) return n;
    } catch {
      // An unknown mode may throw instead of answering: try fewer layers.
    }
  }
  return 1;
}

/**
 * {@link encoderConfig} as the browser's encoder accepts it, or undefined:
 * where an explicit single-layer `scalabilityMode: 'L1T1'` (VP9, AV1) is
 * refused, the same configuration without it (the encoder's default is one
 * layer too). Firefox 153 refuses L1T1 for VP9 and AV1 and accepts the rest.
 * Never throws (a throwing check counts as unsupported).
 */
export async function supportedEncoderConfig(codec: CodecName, width: number, height: number, bitrateBps: number, fps: number): Promise<VideoEncoderConfig | undefined> {
  const cfg = encoderConfig(codec, width, height, bitrateBps, fps);
  const candidates = [cfg];
  if ((cfg as { scalabilityMode?: string }).scalabilityMode === 'L1T1') {
    const { scalabilityMode: _, ...plain } = cfg as VideoEncoderConfig & { scalabilityMode?: string };
    candidates.push(plain);
  }
  for (const c of candidates) {
    try {
      if ((await VideoEncoder.isConfigSupported(c)).supported) return c;
    } catch {
      // An unknown member may throw instead of answering: try the next one.
    }
  }
  return undefined;
}

/**
 * Check that the browser really encodes and decodes `codec` at this size:
 * isConfigSupported first ({@link supportedEncoderConfig}), then one real
 * test encode (some browsers claim support and then fail). Returns the
 * configuration that worked (1 Mbps, 30 fps).
 * @throws CodecError 'no-webcodecs' | 'unsupported' | 'test-encode-failed'
 */
export async function probeCodec(codec: CodecName, width: number, height: number): Promise<VideoEncoderConfig> {
  if (typeof VideoEncoder === 'undefined' || typeof VideoDecoder === 'undefined')
    throw new CodecError('no-webcodecs', `WebCodecs is not available in this browser: missing ${typeof VideoEncoder === 'undefined' ? 'VideoEncoder' : 'VideoDecoder'}`);
  const cfg = await supportedEncoderConfig(codec, width, height, 1_000_000, 30);
  if (!cfg) throw new CodecError('unsupported', `encoder does not support ${codecString(codec, width, height)} at ${width}x${height}`);
  const dsup = await VideoDecoder.isConfigSupported({ codec: cfg.codec });
  if (!dsup.supported) throw new CodecError('unsupported', `decoder does not support ${cfg.codec}`);
  const got = await new Promise<boolean>((resolve) => {
    let ok = false;
    const enc = new VideoEncoder({
      output: () => {
        ok = true;
      },
      error: () => resolve(false),
    });
    try {
      enc.configure(cfg);
      const canvas = new OffscreenCanvas(width, height);
      const ctx = canvas.getContext('2d');
      if (ctx) ctx.fillRect(0, 0, width / 2, height / 2);
      const frame = new VideoFrame(canvas, { timestamp: 0 });
      enc.encode(frame, { keyFrame: true });
      frame.close();
      enc.flush().then(
        () => {
          enc.close();
          resolve(ok);
        },
        () => resolve(false),
      );
    } catch {
      resolve(false);
    }
  });
  if (!got) throw new CodecError('test-encode-failed', `test encode with ${cfg.codec} produced no output`);
  return cfg;
}
