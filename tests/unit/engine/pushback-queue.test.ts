import { describe, expect, it } from 'vitest';
import { resolveSenderConfig } from '../../../src/engine/sender-config.js';

describe('SenderEngineConfig.pushbackQueueMs', () => {
  it('rejects a queue that is not a finite number of ms >= 0', () => {
    expect(() => resolveSenderConfig({ pushbackQueueMs: -1 })).toThrow(RangeError);
    expect(() => resolveSenderConfig({ pushbackQueueMs: Number.NaN })).toThrow(RangeError);
    expect(resolveSenderConfig({}).pushbackQueueMs).toBe(100);
  });
});
