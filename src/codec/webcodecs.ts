/**
 * WebCodecs glue (browser only), one import for the browser adapters:
 * - ./codec-config.ts: codec strings, encoder configuration, codec probe;
 * - ./camera-encoder.ts: the camera encoder with resolution / frame-rate adaptation;
 * - ./frame-scaler.ts: VideoFrame scaling through OffscreenCanvas;
 * - ./frame-decoder.ts: the decoder rendering into a MediaStreamTrack.
 */
export { CodecError, codecString, encoderConfig, pickTemporalLayers, probeCodec, scalabilityModeFor } from './codec-config.js';
export type { CodecErrorCode } from './codec-config.js';
export { CameraEncoder } from './camera-encoder.js';
export type { CameraEncoderOptions, CameraEncoderStats } from './camera-encoder.js';
export { FrameScaler } from './frame-scaler.js';
export { FrameDecoder } from './frame-decoder.js';
export type { DecodedFrameInfo, EncodedFrameIn } from './frame-decoder.js';
export { DEFAULT_TEMPORAL_LAYERS, TemporalRefTracker } from './temporal-layers.js';
