import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  MAX_SIGNALLING_MESSAGE_BYTES,
  encodeMessage,
  parseClientMessage,
  parseServerMessage,
  utf8Length,
  validateClientMessage,
  validateServerMessage,
  type ServerMessage,
} from '../../../src/signalling/protocol.js';

describe('client message validation', () => {
  it('accepts join, signal, leave', () => {
    expect(parseClientMessage('{"type":"join","room":"r-1_A"}')).toEqual({ ok: true, value: { type: 'join', room: 'r-1_A' } });
    expect(parseClientMessage('{"type":"join","room":"r","peerId":"p1"}')).toEqual({
      ok: true,
      value: { type: 'join', room: 'r', peerId: 'p1' },
    });
    const sig = parseClientMessage('{"type":"signal","to":"p2","pathId":7,"data":{"type":"offer","sdp":"v=0"}}');
    expect(sig).toEqual({ ok: true, value: { type: 'signal', to: 'p2', pathId: 7, data: { type: 'offer', sdp: 'v=0' } } });
    expect(parseClientMessage('{"type":"leave"}')).toEqual({ ok: true, value: { type: 'leave' } });
  });

  it('rejects bad rooms and peer ids', () => {
    for (const room of ['', 'a'.repeat(65), 'a b', 'é', 'a/b', 5, null]) {
      const r = validateClientMessage({ type: 'join', room });
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.code).toBe('bad-message');
    }
    expect(validateClientMessage({ type: 'join', room: 'a'.repeat(64) }).ok).toBe(true);
    expect(validateClientMessage({ type: 'join', room: 'r', peerId: '' }).ok).toBe(false);
    expect(validateClientMessage({ type: 'join', room: 'r', peerId: 3 }).ok).toBe(false);
  });

  it('rejects bad signals', () => {
    const base = { type: 'signal', to: 'p', pathId: 0, data: {} };
    expect(validateClientMessage(base).ok).toBe(true);
    for (const patch of [{ pathId: 8 }, { pathId: -1 }, { pathId: 1.5 }, { pathId: '1' }, { to: '' }, { data: [] }, { data: null }, { data: 'x' }]) {
      expect(validateClientMessage({ ...base, ...patch }).ok).toBe(false);
    }
    const { data: _d, ...noData } = base;
    expect(validateClientMessage(noData).ok).toBe(false);
  });

  it('gives the right error codes', () => {
    const notJson = parseClientMessage('{nope');
    expect(notJson.ok === false && notJson.code).toBe('bad-json');
    const unknown = parseClientMessage('{"type":"hello"}');
    expect(unknown.ok === false && unknown.code).toBe('bad-message');
    const arr = parseClientMessage('[1,2]');
    expect(arr.ok === false && arr.code).toBe('bad-message');
    const big = parseClientMessage(JSON.stringify({ type: 'leave', pad: 'x'.repeat(MAX_SIGNALLING_MESSAGE_BYTES) }));
    expect(big.ok === false && big.code).toBe('too-large');
    const bin = parseClientMessage('{"type":"leave"}', true);
    expect(bin.ok === false && bin.code).toBe('bad-message');
  });

  it('counts UTF-8 bytes for the size limit', () => {
    expect(utf8Length('aé€😀')).toBe(1 + 2 + 3 + 4);
    // 30000 three-byte chars = 90000 bytes > 64 KiB though only 30000 UTF-16 units.
    const s = JSON.stringify({ type: 'leave', pad: '€'.repeat(30000) });
    const r = parseClientMessage(s);
    expect(r.ok === false && r.code).toBe('too-large');
  });

  it('never throws on arbitrary input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (s) => {
        const r = parseClientMessage(s);
        expect(typeof r.ok).toBe('boolean');
        const r2 = parseServerMessage(s);
        expect(typeof r2.ok).toBe('boolean');
      }),
    );
    fc.assert(
      fc.property(fc.anything(), (v) => {
        expect(typeof validateClientMessage(v).ok).toBe('boolean');
        expect(typeof validateServerMessage(v).ok).toBe('boolean');
      }),
    );
  });
});

describe('server message validation', () => {
  it('round-trips every server message', () => {
    const msgs = [
      { type: 'joined', peerId: 'a', peers: ['b', 'c'] },
      { type: 'peer-joined', peerId: 'b' },
      { type: 'peer-left', peerId: 'b' },
      { type: 'signal', from: 'b', pathId: 3, data: { candidate: { candidate: 'x' } } },
      { type: 'error', code: 'room-full', message: 'full' },
    ] satisfies ServerMessage[];
    for (const m of msgs) {
      expect(parseServerMessage(encodeMessage(m))).toEqual({ ok: true, value: m });
    }
  });

  it('rejects malformed server messages', () => {
    expect(validateServerMessage({ type: 'joined', peerId: 'a', peers: ['ok', 'not ok'] }).ok).toBe(false);
    expect(validateServerMessage({ type: 'error', code: 'nope', message: '' }).ok).toBe(false);
    expect(validateServerMessage({ type: 'signal', from: 'a', pathId: 9, data: {} }).ok).toBe(false);
    expect(validateServerMessage({ type: 'peer-left' }).ok).toBe(false);
  });
});
