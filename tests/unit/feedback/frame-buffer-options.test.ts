import { describe, expect, it } from 'vitest';
import { DEFAULT_FRAME_BUFFER_BYTES, type FrameBufferOptions, resolveFrameBufferOptions } from '../../../src/feedback/frame-buffer-options.js';

describe('resolveFrameBufferOptions', () => {
  it('applies the documented defaults (times converted where the name says so)', () => {
    expect(resolveFrameBufferOptions({})).toEqual({
      maxFrames: 120,
      minWaitMs: 50,
      maxWaitMs: 1000,
      baseWaitMs: 30,
      jitterMult: 3,
      maxStreams: 16,
      maxJump: 1 << 14,
      resyncAfter: 30,
      maxBytes: DEFAULT_FRAME_BUFFER_BYTES,
      maxAgeUs: 3_000_000,
      skipRttFactor: 0,
      keepOnTimeout: true,
    });
  });

  it.each<[string, FrameBufferOptions]>([
    ['zero maxFrames', { maxFrames: 0 }],
    ['fractional maxStreams', { maxStreams: 2.5 }],
    ['negative minWaitMs', { minWaitMs: -1 }],
    ['NaN baseWaitMs', { baseWaitMs: Number.NaN }],
    ['infinite jitterMultiplier', { jitterMultiplier: Infinity }],
    ['zero maxFrameIdJump', { maxFrameIdJump: 0 }],
    ['zero resyncAfterFrames', { resyncAfterFrames: 0 }],
    ['zero maxBytes', { maxBytes: 0 }],
    ['negative maxAgeMs', { maxAgeMs: -5 }],
    ['negative skipWaitRttFactor', { skipWaitRttFactor: -0.5 }],
    ['minWaitMs above maxWaitMs', { minWaitMs: 10, maxWaitMs: 5 }],
  ])('refuses %s with a RangeError', (_name, opts) => {
    expect(() => resolveFrameBufferOptions(opts)).toThrow(RangeError);
  });
});
