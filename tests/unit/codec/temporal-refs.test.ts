import { describe, expect, it } from 'vitest';
import { TemporalRefTracker } from '../../../src/codec/temporal-layers.js';
import { encoderConfig, scalabilityModeFor } from '../../../src/codec/webcodecs.js';

/** Reference distances the tracker gives for a run of (key, layer) frames numbered from 1. */
function refs(frames: Array<[boolean, number | undefined]>): (number | undefined)[] {
  const t = new TemporalRefTracker();
  return frames.map(([key, layer], i) => t.onFrame(i + 1, key, layer));
}

describe('TemporalRefTracker', () => {
  it('L1T2 (0 1 0 1 ...): TL0 refs the previous TL0, TL1 the TL0 before it', () => {
    expect(
      refs([
        [true, 0],
        [false, 1],
        [false, 0],
        [false, 1],
        [false, 0],
      ]),
    ).toEqual([undefined, 1, 2, 1, 2]);
  });

  it('L1T3 (0 2 1 2 ...): TL0 4 back, TL1 2 back, TL2 the frame before', () => {
    const layers = [0, 2, 1, 2, 0, 2, 1, 2, 0];
    expect(refs(layers.map((l, i) => [i === 0, l]))).toEqual([undefined, 1, 2, 1, 4, 1, 2, 1, 4]);
  });

  it('a key frame restarts the pattern; a missing layer id falls back to the previous frame', () => {
    expect(
      refs([
        [true, 0],
        [false, 1],
        [false, 0],
        [true, 0],
        [false, 1],
        [false, undefined],
        [false, 0],
      ]),
    ).toEqual([undefined, 1, 2, undefined, 1, 1, 1]);
  });

  it('encoderConfig sets scalabilityMode only when asked for layers', () => {
    expect((encoderConfig('h264', 640, 480, 1e6, 30, 2) as { scalabilityMode?: string }).scalabilityMode).toBe('L1T2');
    expect((encoderConfig('h264', 640, 480, 1e6, 30) as { scalabilityMode?: string }).scalabilityMode).toBeUndefined();
    expect((encoderConfig('vp9', 640, 480, 1e6, 30) as { scalabilityMode?: string }).scalabilityMode).toBe('L1T1');
    expect(scalabilityModeFor(3)).toBe('L1T3');
  });
});
