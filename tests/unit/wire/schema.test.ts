import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GENERATED_PATH, PROTO_PATH, generateWireSchemaSource } from '../../../tools/gen-wire.js';
import { PACKET_FIELD } from '../../../src/wire/schema.js';
import { referenceRoot } from './pb-reference.js';

describe('schema.generated.ts', () => {
  it('equals what tools/gen-wire.ts generates from multipath.proto (no drift)', () => {
    const fresh = generateWireSchemaSource(readFileSync(PROTO_PATH, 'utf8'));
    expect(readFileSync(GENERATED_PATH, 'utf8')).toBe(fresh);
  });

  it('Root has the contract field numbers', () => {
    expect(PACKET_FIELD).toEqual({
      pathId: 1,
      pathSeq: 2,
      sendTimeUs: 3,
      media: 10,
      fec: 11,
      report: 12,
      keyframeRequest: 13,
      nack: 14,
      qoe: 15,
      streamInfo: 16,
      padding: 17,
      appData: 18,
      appDataAck: 19,
      clockEcho: 20,
      audio: 22,
    });
    const audio = referenceRoot.lookupType('mprtc.Audio');
    expect(audio.fields.captureUs.type).toBe('uint64');
    expect(audio.fields.payload.id).toBe(5);
    const media = referenceRoot.lookupType('mprtc.Media');
    expect(media.fields.payload.id).toBe(11);
    expect(media.fields.captureUs.type).toBe('uint64');
  });
});
