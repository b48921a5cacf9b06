/**
 * Temporal-layer reference tracking (pure, no browser API): shared by the
 * WebCodecs camera encoder (src/codec/camera-encoder.ts) and the simulator's
 * encoder model (sim/encoder-model.ts).
 */

/**
 * Temporal layers the camera encoder asks for by default: 1 (none). Opt in
 * with `temporalLayers: 2` (L1T2) or 3 (L1T3). Off by default because in the
 * simulator (bench/sim/main.ts, 3 seeds) layers cut total converge freeze on the
 * cellular tune half by 16% (25.97 -> 21.83 s) but cost converge goodput on
 * the constant (5.34 -> 4.69 Mbps) and failover (5.60 -> 4.60 Mbps)
 * scenarios and freeze on failover (2.06 -> 2.58 s); see README "Temporal layers".
 */
export const DEFAULT_TEMPORAL_LAYERS = 1;

/** Temporal layer id per frame of the L1T2 / L1T3 patterns (W3C WebRTC-SVC; frame 0 = the key frame). */
export const TEMPORAL_PATTERNS: Readonly<Record<number, readonly number[]>> = Object.freeze({ 1: [0], 2: [0, 1], 3: [0, 2, 1, 2] });

/** Layer id of the frame `slot` frames after a key frame in the pattern of `layers` temporal layers (1..3). */
export function temporalPatternLayer(layers: number, slot: number): number {
  const p = TEMPORAL_PATTERNS[layers] ?? TEMPORAL_PATTERNS[1];
  return p[((slot % p.length) + p.length) % p.length];
}

/**
 * Turns the encoder's per-frame temporal layer ids
 * (`EncodedVideoChunkMetadata.svc.temporalLayerId`) into the frame each frame
 * references, under the dependency rule of WebRTC's L1T2/L1T3 structures
 * (libwebrtc modules/video_coding/svc/scalability_structure_l1t2.cc / _l1t3.cc;
 * Chromium's libvpx and OpenH264 temporal patterns follow it): a base-layer
 * frame references the previous base-layer frame, a frame of layer t > 0 the
 * most recent frame of a lower layer. A key frame resets the tracking.
 * Pure; frameIds as the encoder numbers them (+1 per encoded frame).
 */
export class TemporalRefTracker {
  /** frameId of the last frame per layer since the last key frame (undefined = none yet). */
  private readonly last: (number | undefined)[] = [];

  /**
   * @returns `refDistance` (frames back to the referenced frame, >= 1) for a
   *   delta frame, undefined for a key frame; 1 (the previous frame, the
   *   conservative chain) when the layer id is missing or nothing lower was seen.
   */
  onFrame(frameId: number, keyFrame: boolean, layer: number | undefined): number | undefined {
    if (keyFrame) {
      this.last.length = 0;
      this.last[0] = frameId;
      return undefined;
    }
    if (layer === undefined || !Number.isInteger(layer) || layer < 0 || layer > 7) {
      // Unknown structure: depend on the previous frame and restart the tracking from here.
      this.last.length = 0;
      this.last[0] = frameId;
      return 1;
    }
    let ref: number | undefined;
    if (layer === 0) ref = this.last[0];
    else {
      for (let l = 0; l < layer; l++) {
        const v = this.last[l];
        if (v !== undefined && (ref === undefined || (frameId - v) >>> 0 < (frameId - ref) >>> 0)) ref = v;
      }
    }
    this.last[layer] = frameId;
    // Higher-layer frames seen so far are older than this one: no later frame's most recent lower-layer frame.
    for (let l = layer + 1; l < this.last.length; l++) this.last[l] = undefined;
    if (ref === undefined) return 1;
    const d = (frameId - ref) >>> 0;
    return d >= 1 && d <= 64 ? d : 1;
  }
}
