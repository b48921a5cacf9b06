/**
 * MultipathCall.capabilities() never rejects: when its probe (a lazy chunk,
 * src/codec/capabilities-probe.ts) cannot be loaded, it answers from the API
 * check alone, with no codec, no audio, and the load error in `missing`.
 */
import { describe, expect, it, vi } from 'vitest';
import { MultipathCall } from '../../../src/call/multipath-call.js';

vi.mock('../../../src/codec/capabilities-probe.js', () => {
  throw new Error('chunk load failed');
});

describe('MultipathCall.capabilities without its probe chunk', () => {
  it('resolves with the API check, nothing supported, and the error named', async () => {
    const c = await MultipathCall.capabilities();
    expect(c).toMatchObject({ supported: false, send: false, receive: false, encode: [], decode: [], audio: { send: false, receive: false } });
    expect(c.missing.at(-1)).toMatch(/^capabilities: .*Error/);
    expect(c.missing).toContain('VideoEncoder (WebCodecs)');
  });
});
