import { describe, expect, it } from 'vitest';
import { DECODED_FRAMES_KEPT, DecodedFramesHistory } from '../../../src/feedback/decoded-frames-history.js';

describe('DecodedFramesHistory', () => {
  it('remembers frames since the last key frame; a key frame forgets the ones before it', () => {
    const h = new DecodedFramesHistory();
    h.insert(10, true);
    h.insert(11, false);
    expect([h.has(10), h.has(11), h.has(12)]).toEqual([true, true, false]);
    h.insert(20, true);
    expect([h.has(10), h.has(11), h.has(20)]).toEqual([false, false, true]);
  });

  it(`keeps only the newest ${DECODED_FRAMES_KEPT} frames`, () => {
    const h = new DecodedFramesHistory();
    h.insert(0, true);
    for (let id = 1; id <= DECODED_FRAMES_KEPT; id++) h.insert(id, false);
    expect(h.has(0)).toBe(false);
    expect(h.has(1)).toBe(true);
    expect(h.has(DECODED_FRAMES_KEPT)).toBe(true);
  });
});
