/**
 * The encoded-transform worker of the RTP-carrier experiment: one worker runs
 * both the sender's and the receiver's `RTCRtpScriptTransform` (both peers live
 * in one page, so `performance.now()` is one clock for the per-frame latency).
 *
 * Sender: for every encoded frame the encoder hands over, write our payload
 * (mode `replace`: instead of the encoder's bytes; mode `append`: after them).
 * Its size comes from `sizes` (cycled: the integrity sweep) or from a token
 * bucket at `rateKbps` (the offered load, independent of the encoder's rate).
 * Receiver: verify each payload byte for byte; record sequence gaps and the
 * latency sender transform -> receiver transform; in `append` mode give the
 * decoder the encoder's frame back, in `replace` mode give it nothing.
 */
import { MAX_PAYLOAD_BYTES, MIN_PAYLOAD_BYTES, appendPayload, buildPayload, checkPayload, splitAppended } from './payload.js';

export interface TransformOptions {
  side: 'send' | 'recv';
  mode: 'replace' | 'append';
  codec: 'VP8' | 'H264';
  /** VP8 prefix of each payload (replace mode): what the receiver's depacketizer takes the frame for. */
  prefix: 'delta' | 'key';
  sizes?: number[];
  rateKbps?: number;
}

interface SendSecond {
  frames: number;
  keyIn: number;
  bytes: number;
  cpuUs: number;
}
interface RecvSecond {
  frames: number;
  ok: number;
  bad: number;
  bytes: number;
  lat: number[];
  keyType: number;
}

const H264_PREFIX = new Uint8Array([0, 0, 0, 1, 0x41]);
const t0 = performance.now();
const sec = (): number => Math.floor((performance.now() - t0) / 1000);
const send: SendSecond[] = [];
const recv: RecvSecond[] = [];
const badReasons: Record<string, number> = {};
const sizesSeen: Record<number, { sent: number; ok: number }> = {};
let seqOut = 0;
let lastSeqIn = -1;
let gaps = 0;
let reordered = 0;
let bucketAt = -1;
/** Cap on the offered rate from the page (GCC's availableOutgoingBitrate), kbps; Infinity: none. */
let estimateCapKbps = Number.POSITIVE_INFINITY;
/** Per-frame log (bounded): [seq, bytes, type, rtpTimestamp, ms]. */
const MAX_LOG = 3000;
const sendLog: Array<[number, number, string, number, number]> = [];
const recvLog: Array<[number, number, string, number, number, unknown]> = [];

function sendSlot(): SendSecond {
  const s = sec();
  for (let i = send.length; i <= s; i++) send.push({ frames: 0, keyIn: 0, bytes: 0, cpuUs: 0 });
  return send[s];
}
function recvSlot(): RecvSecond {
  const s = sec();
  for (let i = recv.length; i <= s; i++) recv.push({ frames: 0, ok: 0, bad: 0, bytes: 0, lat: [], keyType: 0 });
  return recv[s];
}

function nextSize(o: TransformOptions): number {
  if (o.sizes && o.sizes.length > 0) return o.sizes[seqOut % o.sizes.length];
  const now = performance.now();
  const dt = bucketAt < 0 ? 33 : Math.min(1000, now - bucketAt);
  bucketAt = now;
  const rate = Math.min(o.rateKbps ?? 500, estimateCapKbps);
  const bytes = Math.round((rate * 1000 * dt) / 8000);
  return Math.max(MIN_PAYLOAD_BYTES, Math.min(MAX_PAYLOAD_BYTES, bytes));
}

function onSend(frame: RTCEncodedVideoFrame, o: TransformOptions): void {
  const t = performance.now();
  const slot = sendSlot();
  slot.frames++;
  if (frame.type === 'key') slot.keyIn++;
  const size = nextSize(o);
  if (sendLog.length < MAX_LOG) sendLog.push([seqOut, size, frame.type, frame.getMetadata().rtpTimestamp ?? -1, Math.round(t - t0)]);
  let payload = buildPayload(seqOut, size, t, o.prefix);
  if (o.sizes) {
    sizesSeen[size] ??= { sent: 0, ok: 0 };
    sizesSeen[size].sent++;
  }
  seqOut++;
  if (o.codec === 'H264') {
    const wrapped = new Uint8Array(H264_PREFIX.length + payload.length);
    wrapped.set(H264_PREFIX, 0);
    wrapped.set(payload, H264_PREFIX.length);
    payload = wrapped;
  }
  const out = o.mode === 'append' ? appendPayload(new Uint8Array(frame.data), payload) : payload;
  frame.data = out.buffer as ArrayBuffer;
  slot.bytes += out.length;
  slot.cpuUs += (performance.now() - t) * 1000;
}

function onRecv(frame: RTCEncodedVideoFrame, o: TransformOptions): boolean {
  const t = performance.now();
  const slot = recvSlot();
  slot.frames++;
  if (frame.type === 'key') slot.keyType++;
  let data: Uint8Array = new Uint8Array(frame.data);
  let original: Uint8Array | undefined;
  if (o.mode === 'append') {
    const parts = splitAppended(data);
    if (!parts) {
      slot.bad++;
      badReasons.trailer = (badReasons.trailer ?? 0) + 1;
      return false;
    }
    original = parts.encoded;
    data = parts.payload;
  }
  let offset = 0;
  if (o.codec === 'H264') {
    // The depacketizer hands frames back in Annex B with its own start codes.
    let i = 0;
    while (i < data.length && data[i] === 0) i++;
    if (i < data.length && data[i] === 1) offset = i + 2;
  }
  const c = checkPayload(data, offset);
  if (!c.ok) {
    slot.bad++;
    badReasons[c.reason] = (badReasons[c.reason] ?? 0) + 1;
    return false;
  }
  slot.ok++;
  slot.bytes += c.bytes;
  if (recvLog.length < MAX_LOG) {
    const m = frame.getMetadata();
    recvLog.push([c.seq, c.bytes, frame.type, m.rtpTimestamp ?? -1, Math.round(t - t0), { frameId: m.frameId, deps: m.dependencies, tid: m.temporalIndex }]);
  }
  slot.lat.push(t - c.sendMs);
  if (o.sizes) {
    sizesSeen[c.bytes] ??= { sent: 0, ok: 0 };
    sizesSeen[c.bytes].ok++;
  }
  if (lastSeqIn >= 0) {
    if (c.seq > lastSeqIn + 1) gaps += c.seq - lastSeqIn - 1;
    else if (c.seq <= lastSeqIn) reordered++;
  }
  lastSeqIn = Math.max(lastSeqIn, c.seq);
  if (original) {
    frame.data = original.slice().buffer as ArrayBuffer;
    return true;
  }
  return false;
}

function pct(a: number[], q: number): number | null {
  if (a.length === 0) return null;
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

function report(): unknown {
  const allLat = recv.flatMap((r) => r.lat);
  return {
    send: send.map(({ frames, keyIn, bytes, cpuUs }) => ({ frames, keyIn, bytes, cpuUs: Math.round(cpuUs) })),
    recv: recv.map((r) => ({ frames: r.frames, ok: r.ok, bad: r.bad, bytes: r.bytes, keyType: r.keyType, latP50: pct(r.lat, 0.5), latP95: pct(r.lat, 0.95) })),
    badReasons,
    sizes: sizesSeen,
    framesSent: seqOut,
    lastSeqIn,
    gaps,
    reordered,
    latP50: pct(allLat, 0.5),
    latP95: pct(allLat, 0.95),
    latMax: pct(allLat, 1),
    sendLog,
    recvLog,
  };
}

interface TransformerEvent extends Event {
  transformer: { options: TransformOptions; readable: ReadableStream<RTCEncodedVideoFrame>; writable: WritableStream<RTCEncodedVideoFrame> };
}

(self as unknown as { onrtctransform: (e: TransformerEvent) => void }).onrtctransform = (e: TransformerEvent): void => {
  const { options: o, readable, writable } = e.transformer;
  const ts = new TransformStream<RTCEncodedVideoFrame, RTCEncodedVideoFrame>({
    transform(frame, ctl) {
      try {
        if (o.side === 'send') {
          onSend(frame, o);
          ctl.enqueue(frame);
        } else if (onRecv(frame, o)) ctl.enqueue(frame);
      } catch (err) {
        badReasons[`exception:${String(err)}`] = (badReasons[`exception:${String(err)}`] ?? 0) + 1;
      }
    },
  });
  readable
    .pipeThrough(ts)
    .pipeTo(writable)
    .catch(() => undefined);
};

self.onmessage = (e: MessageEvent): void => {
  if (e.data === 'report') (self as unknown as Worker).postMessage({ report: report() });
  else if (typeof e.data?.estimateCapKbps === 'number' && e.data.estimateCapKbps > 0) estimateCapKbps = e.data.estimateCapKbps;
};
