/**
 * The worker of one RTP carrier (src/transport/rtp-carrier.ts): both of its
 * `RTCRtpScriptTransform`s (W3C WebRTC Encoded Transform) and its send queue.
 *
 * Sender transform: each encoded frame of the carrier's tiny video track
 * becomes a bundle of the datagrams queued here (src/transport/rtp-carrier-frame.ts
 * `packFrame`: the 10-byte VP8 key-frame prefix, then length-prefixed
 * datagrams), at most `maxDatagrams` / `maxFrameBytes` per frame. A frame
 * that finds the queue empty is not passed on (nothing is sent for it). A
 * frame the encoder made as a key frame is not passed on either (its
 * datagrams wait for the next frame): libwebrtc's pacer drops every queued
 * packet of the stream when a key frame's packets are enqueued
 * (modules/pacing/pacing_controller.cc, keyframe flushing; README answer 2).
 * Datagrams older than `maxQueueDelayMs` are dropped from the queue's head
 * (counted), so an encoder that stopped (network down) does not hand stale
 * bytes over later.
 *
 * Receiver transform: strip and split each frame (`unpackFrame`), drop
 * frames that are not ours or were seen already (RTX padding re-sends
 * complete frames again), stamp the arrival (`performance.timeOrigin +
 * performance.now()`, epoch ms, off the page's main thread as
 * src/transport/datachannel-worker.ts does) and post the datagrams to the
 * page. Nothing goes on to the decoder.
 *
 * Messages from the page: `{t:'cfg', ...}`, `{t:'send', d: ArrayBuffer}`, `{t:'stats'}`.
 * To the page: `{t:'run', side}`, `{t:'out', n, k}` (bytes / datagrams taken
 * into a frame), `{t:'drop', n, k}` (dropped from the queue), `{t:'in', d: ArrayBuffer[], at}`,
 * `{t:'stats', s}`. Never throws out of a handler: failures are counted.
 */
import { bundleCount, FrameSeqWindow, packFrame, unpackFrame } from './rtp-carrier-frame.js';

/** Counters kept by the carrier's worker (see the module doc). */
export interface RtpCarrierWorkerStats {
  /** Encoded frames handed to the sender transform by the encoder. */
  framesIn: number;
  /** Frames sent with a bundle. */
  framesSent: number;
  /** Frames not passed on because the queue was empty. */
  framesEmpty: number;
  /** Encoder key frames not passed on (their datagrams wait for the next frame). */
  keyFramesSkipped: number;
  datagramsSent: number;
  /** Payload bytes of the datagrams sent (without the carrier's framing). */
  bytesSent: number;
  /** Datagrams dropped from the queue (over its bound or older than maxQueueDelayMs). */
  queueDrops: number;
  /** Frames that reached the receiver transform. */
  framesReceived: number;
  /** Frames dropped as duplicates (same frame sequence number). */
  duplicateFrames: number;
  /** Frames dropped as not ours or malformed, by reason. */
  badFrames: Record<string, number>;
  datagramsReceived: number;
  bytesReceived: number;
  /** Time spent in the sender / receiver transform code (µs, this worker's clock). */
  sendCpuUs: number;
  recvCpuUs: number;
  /** Transform callbacks that threw (counted, the frame dropped). */
  errors: number;
}

interface Cfg {
  maxQueueBytes: number;
  maxQueueDatagrams: number;
  maxDatagrams: number;
  maxFrameBytes: number;
  maxQueueDelayMs: number;
  skipKeyFrames: boolean;
}

interface EncodedFrame {
  readonly type?: string;
  data: ArrayBuffer;
}

interface TransformerEvent {
  transformer: { options?: { side?: string }; readable: ReadableStream<EncodedFrame>; writable: WritableStream<EncodedFrame> };
}

const scope = self as unknown as {
  postMessage(m: unknown, transfer?: Transferable[]): void;
  onmessage: ((e: MessageEvent) => void) | null;
  onrtctransform: ((e: TransformerEvent) => void) | null;
};

const cfg: Cfg = { maxQueueBytes: 262_144, maxQueueDatagrams: 1024, maxDatagrams: 2, maxFrameBytes: 2600, maxQueueDelayMs: 1000, skipKeyFrames: true };
const stats: RtpCarrierWorkerStats = {
  framesIn: 0,
  framesSent: 0,
  framesEmpty: 0,
  keyFramesSkipped: 0,
  datagramsSent: 0,
  bytesSent: 0,
  queueDrops: 0,
  framesReceived: 0,
  duplicateFrames: 0,
  badFrames: {},
  datagramsReceived: 0,
  bytesReceived: 0,
  sendCpuUs: 0,
  recvCpuUs: 0,
  errors: 0,
};
/** The send queue: datagrams and when they arrived here (ms, performance.now()). */
const queue: Array<{ d: Uint8Array; at: number }> = [];
let queueBytes = 0;
let frameSeq = 0;
const seen = new FrameSeqWindow(1024);

function dropHead(n: number): void {
  let bytes = 0;
  for (const q of queue.splice(0, n)) bytes += q.d.length;
  queueBytes -= bytes;
  stats.queueDrops += n;
  scope.postMessage({ t: 'drop', n: bytes, k: n });
}

function onSendFrame(frame: EncodedFrame): boolean {
  stats.framesIn++;
  const now = performance.now();
  let stale = 0;
  while (stale < queue.length && now - queue[stale].at > cfg.maxQueueDelayMs) stale++;
  if (stale > 0) dropHead(stale);
  if (cfg.skipKeyFrames && frame.type === 'key') {
    stats.keyFramesSkipped++;
    return false;
  }
  if (queue.length === 0) {
    stats.framesEmpty++;
    return false;
  }
  const k = bundleCount(
    queue.slice(0, cfg.maxDatagrams).map((q) => q.d.length),
    cfg.maxDatagrams,
    cfg.maxFrameBytes,
  );
  const taken = queue.splice(0, k);
  let bytes = 0;
  for (const q of taken) bytes += q.d.length;
  queueBytes -= bytes;
  frame.data = packFrame(
    frameSeq,
    taken.map((q) => q.d),
  ).buffer as ArrayBuffer;
  frameSeq = (frameSeq + 1) >>> 0;
  stats.framesSent++;
  stats.datagramsSent += k;
  stats.bytesSent += bytes;
  scope.postMessage({ t: 'out', n: bytes, k });
  return true;
}

function onRecvFrame(frame: EncodedFrame): void {
  const at = performance.timeOrigin + performance.now();
  stats.framesReceived++;
  const f = unpackFrame(new Uint8Array(frame.data));
  if (typeof f === 'string') {
    stats.badFrames[f] = (stats.badFrames[f] ?? 0) + 1;
    return;
  }
  if (!seen.firstTime(f.frameSeq)) {
    stats.duplicateFrames++;
    return;
  }
  const out: ArrayBuffer[] = [];
  for (const d of f.datagrams) {
    out.push(d.slice().buffer as ArrayBuffer);
    stats.bytesReceived += d.length;
  }
  stats.datagramsReceived += out.length;
  scope.postMessage({ t: 'in', d: out, at }, out);
}

scope.onrtctransform = (e: TransformerEvent): void => {
  const { readable, writable, options } = e.transformer;
  const send = options?.side === 'send';
  scope.postMessage({ t: 'run', side: send ? 'send' : 'recv' });
  const ts = new TransformStream<EncodedFrame, EncodedFrame>({
    transform(frame, ctl) {
      const t0 = performance.now();
      try {
        if (send) {
          if (onSendFrame(frame)) ctl.enqueue(frame);
        } else onRecvFrame(frame);
      } catch {
        stats.errors++;
      }
      const us = (performance.now() - t0) * 1000;
      if (send) stats.sendCpuUs += us;
      else stats.recvCpuUs += us;
    },
  });
  readable
    .pipeThrough(ts)
    .pipeTo(writable)
    .catch(() => {
      stats.errors++;
    });
};

scope.onmessage = (e: MessageEvent): void => {
  const m = e.data as { t?: string; d?: unknown } & Partial<Cfg>;
  if (m?.t === 'send') {
    if (!(m.d instanceof ArrayBuffer) || m.d.byteLength < 1) return;
    const d = new Uint8Array(m.d);
    if (queueBytes + d.length > cfg.maxQueueBytes || queue.length >= cfg.maxQueueDatagrams) {
      stats.queueDrops++;
      scope.postMessage({ t: 'drop', n: d.length, k: 1 });
      return;
    }
    queue.push({ d, at: performance.now() });
    queueBytes += d.length;
  } else if (m?.t === 'cfg') {
    for (const k of Object.keys(cfg) as Array<keyof Cfg>) {
      const v = m[k];
      if (typeof v === typeof cfg[k]) (cfg as unknown as Record<string, unknown>)[k] = v;
    }
  } else if (m?.t === 'stats') scope.postMessage({ t: 'stats', s: { ...stats, badFrames: { ...stats.badFrames }, queued: queue.length, queuedBytes: queueBytes } });
};
