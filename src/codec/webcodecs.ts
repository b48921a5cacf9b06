/**
 * WebCodecs glue (browser only), one import for the browser adapters:
 * - ./codec-config.ts: codec strings, encoder configuration, codec probe;
 * - ./camera-encoder.ts: the camera encoder with resolution / frame-rate adaptation;
 * - ./frame-scaler.ts: VideoFrame scaling through OffscreenCanvas;
 * - ./frame-decoder.ts: the decoder rendering into a MediaStreamTrack;
 * - ./frame-source.ts / ./frame-sink.ts: camera capture and rendering, by feature detection;
 * - ./capabilities.ts: what this browser can do for a call.
 */
export { CodecError, codecString, encoderConfig, pickTemporalLayers, probeCodec, scalabilityModeFor, supportedEncoderConfig } from './codec-config.js';
export type { CodecErrorCode } from './codec-config.js';
export { CameraEncoder } from './camera-encoder.js';
export type { CameraEncoderOptions, CameraEncoderStats } from './camera-encoder.js';
export { FrameScaler } from './frame-scaler.js';
export { FrameDecoder } from './frame-decoder.js';
export type { DecodedFrameInfo, EncodedFrameIn, FrameDecoderStats } from './frame-decoder.js';
export { detectCaptureMode, openFrameReader } from './frame-source.js';
export type { CaptureMode, FrameReader } from './frame-source.js';
export { createFrameSink, detectRenderMode } from './frame-sink.js';
export type { FrameSink, RenderMode } from './frame-sink.js';
export { CALL_CODECS, isCallSupported } from './capabilities.js';
export type { CallCapabilities } from './capabilities.js';
export { DEFAULT_TEMPORAL_LAYERS, TemporalRefTracker } from './temporal-layers.js';
