/** MultipathCallOptions.relays and MultipathCall.switchRelay argument handling (issue 16); the switch itself runs in tests/e2e/relays.e2e.ts. */
import { describe, expect, it } from 'vitest';
import { CallError, MultipathCall } from '../../../src/call/multipath-call.js';

const relays = [
  { urls: 'turn:127.0.0.1:3478', username: 'u', credential: 'c' },
  { urls: ['turn:127.0.0.1:3479'], username: 'u', credential: 'c' },
];

describe('MultipathCall relays', () => {
  it('rejects relays that are not RTCIceServers', () => {
    expect(() => new MultipathCall({ signallingUrl: 'ws://x', room: 'r', relays: [{} as RTCIceServer] })).toThrow(CallError);
    expect(() => new MultipathCall({ signallingUrl: 'ws://x', room: 'r', relays: 'turn:x' as unknown as RTCIceServer[] })).toThrow(CallError);
  });

  it('starts path i on relay i mod n and validates switchRelay arguments', () => {
    const call = new MultipathCall({ signallingUrl: 'ws://x', room: 'r', paths: 3, relays });
    expect([0, 1, 2].map((p) => call.relayIndex(p))).toEqual([0, 1, 0]);
    // No participant yet: nothing switched, but later paths start on the new relay.
    expect(call.switchRelay(2, 1)).toBe(0);
    expect(call.relayIndex(2)).toBe(1);
    expect(() => call.switchRelay(3, 0)).toThrow(/unknown|not in/);
    expect(() => call.switchRelay(0, 2)).toThrow(CallError);
    expect(() => call.switchRelay(0, -1)).toThrow(CallError);
    call.close();
    expect(() => call.switchRelay(0, 0)).toThrow(CallError);
  });

  it('without relays switchRelay is a bad-options error', () => {
    const call = new MultipathCall({ signallingUrl: 'ws://x', room: 'r' });
    expect(Number.isNaN(call.relayIndex(0))).toBe(true);
    expect(() => call.switchRelay(0, 0)).toThrow(CallError);
    call.close();
  });
});
