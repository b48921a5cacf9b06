/**
 * Valid seed inputs for mutation fuzzing: encoded datagrams of every packet
 * kind, and valid signalling messages.
 */
import { NalClass, Priority } from '../../src/core/types.js';
import { encodeControl, encodeFec, encodeMedia, encodePacket } from '../../src/wire/encode.js';
import type { FecMessage, MediaMessage, PacketHeader } from '../../src/wire/types.js';

export function media(over: Partial<MediaMessage> = {}): MediaMessage {
  return {
    streamId: 0,
    flowSeq: 1,
    frameId: 1,
    fragIndex: 0,
    fragCount: 1,
    keyFrame: false,
    nalClass: NalClass.Delta,
    priority: Priority.Media,
    captureUs: 1000,
    retransmission: false,
    payload: new Uint8Array(60),
    ...over,
  };
}

export function hdr(pathId = 0, pathSeq = 1, sendTimeUs = 1000): PacketHeader {
  return { pathId, pathSeq, sendTimeUs };
}

export function mediaDatagram(m: MediaMessage, pathId = 0, pathSeq = 1, sendTimeUs = 1000): Uint8Array {
  return encodePacket(hdr(pathId, pathSeq, sendTimeUs), 'media', encodeMedia(m));
}

export function fecDatagram(f: FecMessage, pathId = 0, pathSeq = 1): Uint8Array {
  return encodePacket(hdr(pathId, pathSeq), 'fec', encodeFec(f));
}

/** One valid datagram of each kind (and a few variants). */
export function datagramSeeds(): Uint8Array[] {
  const out: Uint8Array[] = [];
  out.push(mediaDatagram(media({ keyFrame: true, nalClass: NalClass.Key, priority: Priority.Keyframe })));
  out.push(mediaDatagram(media({ flowSeq: 2, frameId: 2, fragIndex: 1, fragCount: 3, payload: new Uint8Array(1100).fill(7) })));
  out.push(mediaDatagram(media({ streamId: 3, flowSeq: 0xffff_fffe, frameId: 0xffff_ffff, retransmission: true }), 1));
  out.push(fecDatagram({ streamId: 0, baseSeq: 1, mask: Uint8Array.from([0b1011]), lengthXor: 77, parity: new Uint8Array(80).fill(3), protectsPath: 0, fecSeq: 1 }));
  out.push(encodeControl(hdr(), { kind: 'nack', nack: { streamId: 0, flowSeqs: [1, 2, 3, 100] } }));
  out.push(encodeControl(hdr(), { kind: 'keyframeRequest', keyframeRequest: { streamId: 0, requestId: 4 } }));
  out.push(encodeControl(hdr(), { kind: 'streamInfo', streamInfo: { streamId: 0, codec: 'avc1.42e01f', width: 1280, height: 720, fps: 30 } }));
  out.push(encodeControl(hdr(), { kind: 'padding', padding: { size: 200 } }));
  out.push(encodeControl(hdr(0, 0), { kind: 'appData', appData: { seq: 0, reliable: true, text: true, payload: new Uint8Array([104, 105]), skip: false } }));
  out.push(encodeControl(hdr(1, 0), { kind: 'appData', appData: { seq: 3, reliable: true, text: false, payload: new Uint8Array(300).fill(9), skip: false } }));
  out.push(encodeControl(hdr(0, 0), { kind: 'appData', appData: { seq: 7, reliable: false, text: false, payload: new Uint8Array(20), skip: false } }));
  out.push(encodeControl(hdr(0, 0), { kind: 'appData', appData: { seq: 1, reliable: true, text: false, payload: new Uint8Array(0), skip: true } }));
  out.push(encodeControl(hdr(0, 0), { kind: 'appDataAck', appDataAck: { cumulative: 0, ranges: [], ackDelayUs: 500 } }));
  out.push(encodeControl(hdr(1, 0), { kind: 'clockEcho', clockEcho: { echoUs: 12_345_678, holdUs: 250 } }));
  return out;
}

/** Valid signalling frames, both directions. */
export const SIGNALLING_SEEDS: readonly string[] = [
  '{"type":"join","room":"room1","peerId":"alice"}',
  '{"type":"join","room":"r","token":"eyJhbGciOiJIUzI1NiJ9.eyJyb29tIjoiciJ9.c2ln"}',
  '{"type":"signal","to":"bob","pathId":1,"data":{"type":"offer","sdp":"v=0\\r\\n"}}',
  '{"type":"leave"}',
  '{"type":"joined","peerId":"a","peers":["b","c"]}',
  '{"type":"peer-joined","peerId":"b"}',
  '{"type":"peer-left","peerId":"b"}',
  '{"type":"signal","from":"a","pathId":0,"data":{"candidate":{"candidate":"candidate:1 1 udp 1 1.2.3.4 5 typ host"}}}',
  '{"type":"error","code":"room-full","message":"full"}',
];
