/**
 * RTCDataChannels served from a dedicated worker, so that a datagram's
 * arrival time is taken off the page's main thread.
 *
 * Why: GCC's delay-based detector (src/cc/inter-arrival.ts, trendline.ts)
 * reads the arrival times the receiver stamps. On the main thread a message
 * event runs only when the page is free (decoding, drawing, the app's own
 * work), so the stamps carry tens of ms of scheduling delay that reads as a
 * growing queue: false over-use. libwebrtc stamps RTP arrivals on its network
 * thread (modules/remote_bitrate_estimator, transport-cc); the closest a
 * page can get is a worker that does nothing else. `MessageEvent.timeStamp`
 * does not help: Chromium creates the event on the main thread just before
 * dispatch (measured: 0.04 ms mean from the handler's performance.now()).
 *
 * How: RTCDataChannel is transferable (WebRTC Extensions §"Transferable
 * RTCDataChannel"; Chromium 156 here, Safari) but only in the task that
 * created it (createDataChannel, or the `datachannel` event) and before any
 * send(). {@link datachannelWorkerRtc} returns a `wrtc` object for
 * simple-peer whose RTCPeerConnection hands every new channel to the worker
 * at once and gives simple-peer a {@link WorkerChannel} proxy with the
 * RTCDataChannel members it uses. The worker stamps each message
 * (`performance.timeOrigin + performance.now()`, epoch ms, shared by the
 * page and its worker) and posts the bytes back (transferred, no copy);
 * sends are copied and posted to the worker. The proxy's `bufferedAmount` is
 * the worker's last reported value plus the bytes posted and not yet
 * acknowledged by it, so backpressure stays conservative.
 *
 * Where transfer is not possible (no Worker, a browser without transferable
 * channels, the worker not answering its start-up ping yet, or a CSP whose
 * `worker-src` / `script-src` excludes `blob:`), the real channel is used as
 * before: nothing breaks, the stamps are the main thread's.
 */

/** A worker arrival stamp older than this (µs) is clamped: the page was stalled that long. */
const MAX_ARRIVAL_AGE_US = 2_000_000;

/** Worker source: one message handler, no imports (runs from a Blob URL). */
const WORKER_SOURCE = `
const chans = new Map();
const now = () => performance.timeOrigin + performance.now();
onmessage = (e) => {
  const m = e.data;
  if (m.t === 'ping') { postMessage({ t: 'pong' }); return; }
  if (m.t === 'add') {
    const id = m.id, dc = m.dc;
    dc.binaryType = 'arraybuffer';
    chans.set(id, dc);
    const st = () => postMessage({ t: 'state', id, s: dc.readyState, ba: dc.bufferedAmount });
    dc.onopen = st;
    dc.onclose = () => { st(); chans.delete(id); };
    dc.onerror = (ev) => postMessage({ t: 'error', id, msg: String((ev && ev.error && ev.error.message) || 'datachannel error') });
    dc.onbufferedamountlow = () => postMessage({ t: 'low', id, ba: dc.bufferedAmount });
    dc.onmessage = (ev) => {
      const at = now();
      const d = ev.data;
      if (d instanceof ArrayBuffer) postMessage({ t: 'msg', id, d, at }, [d]);
      else postMessage({ t: 'text', id, at });
    };
    st();
    return;
  }
  const dc = chans.get(m.id);
  if (m.t === 'send') {
    let ok = true;
    try { if (dc) dc.send(m.d); else ok = false; } catch (err) { ok = false; }
    postMessage({ t: 'sent', id: m.id, n: m.d.byteLength, ok, ba: dc ? dc.bufferedAmount : 0 });
  } else if (m.t === 'thr') { if (dc) dc.bufferedAmountLowThreshold = m.v; }
  else if (m.t === 'close') { if (dc) dc.close(); }
};
`;

/** Counters of the shared datachannel worker (all channels of the page). */
export interface DatachannelWorkerCounters {
  /** Channels handed to the worker. */
  adopted: number;
  /** Channels kept on the main thread (worker not ready, or the browser refused the transfer). */
  notAdopted: number;
  /** Messages delivered with a worker arrival stamp. */
  messagesIn: number;
  /** send() calls posted to the worker. */
  messagesOut: number;
  /** Sends the worker's channel refused (not open, or it threw). */
  sendFailures: number;
}

type ChannelEvent = { data?: unknown; error?: unknown };
type Handler = ((ev: ChannelEvent) => void) | null;

/**
 * The main thread's view of a channel living in the datachannel worker: the
 * RTCDataChannel members simple-peer-light uses. `lastArrivalEpochMs` is the
 * worker's arrival stamp (epoch ms) of the message being delivered to
 * `onmessage` (read it synchronously inside the handler).
 */
export class WorkerChannel {
  readonly label: string;
  readyState: RTCDataChannelState = 'connecting';
  binaryType = 'arraybuffer';
  onmessage: Handler = null;
  onopen: Handler = null;
  onclose: Handler = null;
  onerror: Handler = null;
  onbufferedamountlow: Handler = null;
  /** Worker arrival stamp (epoch ms) of the message being delivered; NaN outside onmessage. */
  lastArrivalEpochMs = Number.NaN;

  /**
   * How long ago (µs, integer, clamped to [0, 2 s]) the message being
   * delivered to `onmessage` arrived in the worker; undefined outside it.
   */
  get arrivalAgeUs(): number | undefined {
    const at = this.lastArrivalEpochMs;
    if (!Number.isFinite(at)) return undefined;
    const ageUs = Math.round((performance.timeOrigin + performance.now() - at) * 1000);
    return Math.min(Math.max(ageUs, 0), MAX_ARRIVAL_AGE_US);
  }
  /** bufferedAmount as the worker last reported it (bytes). */
  reportedBuffered = 0;
  /** Bytes posted to the worker and not yet acknowledged (bytes). */
  inFlight = 0;
  private threshold = 0;

  constructor(
    private readonly host: DatachannelWorkerHost,
    readonly id: number,
    label: string,
  ) {
    this.label = label;
  }

  /** RTCDataChannel.bufferedAmount as the worker last saw it, plus the bytes on their way to it. */
  get bufferedAmount(): number {
    return this.reportedBuffered + this.inFlight;
  }

  get bufferedAmountLowThreshold(): number {
    return this.threshold;
  }

  set bufferedAmountLowThreshold(v: number) {
    this.threshold = v;
    this.host.post({ t: 'thr', id: this.id, v });
  }

  /** Copy `data` to the worker's channel. @throws DOMException InvalidStateError unless open (as RTCDataChannel.send). */
  send(data: ArrayBuffer | ArrayBufferView): void {
    if (this.readyState !== 'open') throw new DOMException(`RTCDataChannel.readyState is '${this.readyState}'`, 'InvalidStateError');
    const copy = data instanceof ArrayBuffer ? data.slice(0) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice().buffer;
    this.inFlight += copy.byteLength;
    this.host.counters.messagesOut++;
    this.host.post({ t: 'send', id: this.id, d: copy }, [copy]);
  }

  close(): void {
    if (this.readyState === 'closed') return;
    if (this.readyState !== 'closing') this.readyState = 'closing';
    this.host.post({ t: 'close', id: this.id });
  }
}

/** The page's datachannel worker and its channel proxies. */
class DatachannelWorkerHost {
  readonly counters: DatachannelWorkerCounters = { adopted: 0, notAdopted: 0, messagesIn: 0, messagesOut: 0, sendFailures: 0 };
  ready = false;
  private readonly worker: Worker | undefined;
  private readonly channels = new Map<number, WorkerChannel>();
  private nextId = 1;

  constructor() {
    try {
      const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
      this.worker = new Worker(url);
      this.worker.onmessage = (e: MessageEvent) => this.onWorkerMessage(e.data as Record<string, unknown>);
      this.worker.onerror = () => {
        this.ready = false;
      };
      this.worker.postMessage({ t: 'ping' });
    } catch {
      this.worker = undefined;
    }
  }

  post(msg: Record<string, unknown>, transfer: Transferable[] = []): void {
    this.worker?.postMessage(msg, transfer);
  }

  /** Hand `dc` to the worker (call in the task that created it); the real channel when that is not possible. */
  adopt(dc: RTCDataChannel): RTCDataChannel | WorkerChannel {
    if (!this.ready || !this.worker) {
      this.counters.notAdopted++;
      return dc;
    }
    const id = this.nextId++;
    try {
      this.worker.postMessage({ t: 'add', id, dc }, [dc as unknown as Transferable]);
    } catch {
      this.counters.notAdopted++;
      return dc;
    }
    const ch = new WorkerChannel(this, id, dc.label);
    this.channels.set(id, ch);
    this.counters.adopted++;
    return ch;
  }

  private onWorkerMessage(m: Record<string, unknown>): void {
    if (m.t === 'pong') {
      this.ready = true;
      return;
    }
    const ch = this.channels.get(m.id as number);
    if (!ch) return;
    switch (m.t) {
      case 'msg':
        this.counters.messagesIn++;
        ch.lastArrivalEpochMs = m.at as number;
        try {
          ch.onmessage?.({ data: m.d });
        } finally {
          ch.lastArrivalEpochMs = Number.NaN;
        }
        break;
      case 'text':
        ch.onmessage?.({ data: '' });
        break;
      case 'sent':
        ch.inFlight = Math.max(0, ch.inFlight - (m.n as number));
        ch.reportedBuffered = m.ba as number;
        if (!m.ok) this.counters.sendFailures++;
        break;
      case 'low':
        ch.reportedBuffered = m.ba as number;
        ch.onbufferedamountlow?.({});
        break;
      case 'error':
        ch.onerror?.({ error: new Error(String(m.msg)) });
        break;
      case 'state': {
        const s = m.s as RTCDataChannelState;
        ch.reportedBuffered = m.ba as number;
        if (s === ch.readyState) break;
        ch.readyState = s;
        if (s === 'open') ch.onopen?.({});
        else if (s === 'closed') {
          this.channels.delete(ch.id);
          ch.onclose?.({});
        }
        break;
      }
    }
  }
}

let host: DatachannelWorkerHost | undefined;

/** Start the page's datachannel worker (idempotent); channels created before it answers stay on the main thread. */
export function startDatachannelWorker(): DatachannelWorkerCounters {
  host ??= new DatachannelWorkerHost();
  return host.counters;
}

/**
 * A `wrtc` object for simple-peer (`{RTCPeerConnection, RTCSessionDescription,
 * RTCIceCandidate}`) whose peer connections hand every datachannel to the
 * datachannel worker (see the module comment). Undefined when the page has no
 * RTCPeerConnection or Worker.
 */
export function datachannelWorkerRtc(): Record<string, unknown> | undefined {
  const g = globalThis as unknown as { RTCPeerConnection?: typeof RTCPeerConnection; RTCSessionDescription?: unknown; RTCIceCandidate?: unknown; Worker?: unknown };
  const Base = g.RTCPeerConnection;
  if (!Base || typeof g.Worker !== 'function') return undefined;
  const h = (host ??= new DatachannelWorkerHost());
  // A plain function used with `new`: it returns the real RTCPeerConnection with two members replaced.
  function WorkerRTCPeerConnection(config?: RTCConfiguration): RTCPeerConnection {
    const pc = new Base!(config);
    const create = pc.createDataChannel.bind(pc);
    pc.createDataChannel = ((label: string, init?: RTCDataChannelInit) => h.adopt(create(label, init))) as typeof pc.createDataChannel;
    let onDc: ((ev: { channel: RTCDataChannel | WorkerChannel }) => void) | null = null;
    pc.addEventListener('datachannel', (ev) => onDc?.({ channel: h.adopt(ev.channel) }));
    Object.defineProperty(pc, 'ondatachannel', { configurable: true, get: () => onDc, set: (v) => (onDc = typeof v === 'function' ? v : null) });
    return pc;
  }
  return { RTCPeerConnection: WorkerRTCPeerConnection, RTCSessionDescription: g.RTCSessionDescription, RTCIceCandidate: g.RTCIceCandidate };
}
