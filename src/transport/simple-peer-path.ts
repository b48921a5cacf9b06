/**
 * Browser {@link PathTransport}: one simple-peer v9 connection (one
 * RTCPeerConnection) carrying one RTCDataChannel configured for media:
 * unordered, `maxRetransmits: 0` (SCTP partial reliability, RFC 3758 /
 * RFC 8831 §6.1), binary messages.
 *
 * The peer is `simple-peer-light`: simple-peer 9.10 as one ES module without
 * dependencies (no Buffer / process / readable-stream shims: the browser has
 * Uint8Array, EventTarget-style events and queueMicrotask), the same API and
 * events; about 5 kB gzip where simple-peer's prebuilt bundle
 * (`simplepeer.min.js`, which carries those shims) was 28 kB. In Node pass
 * `Peer` (and `wrtc`) explicitly if a WebRTC implementation exists;
 * otherwise construction fails with code `ERR_WEBRTC_SUPPORT`.
 *
 * Signalling: outgoing signals (offer/answer/trickle candidates) go to
 * `onSignal(data)`; local candidates the `candidateFilter` rejects are not
 * signalled (trickle) or are removed from the SDP (non-trickle). Feed the
 * remote side's signals to {@link SimplePeerPath.signal}; invalid ones are
 * dropped and reported as errors instead of letting simple-peer destroy the
 * connection.
 */
// @ts-expect-error -- simple-peer-light has no type declarations; it is typed by SimplePeerCtor below.
import SimplePeerLight from 'simple-peer-light';
import { Emitter } from '../core/emitter.js';
import type { PathId } from '../core/types.js';
import { filterSdpCandidates, parseCandidate, type IceServerConfig, type ParsedCandidate, type PathCandidatePolicy } from './candidates.js';
import { PathTransportError } from './errors.js';
import { candidateInfoKey, selectedPairFromStats, type StatsEntry } from './selected-pair.js';
import type { DatagramCarrier } from './carrier.js';
import type { RtpCarrierOptions } from './rtp-carrier.js';
import type { PathTransport, PathTransportEvents, PathTransportState, SelectedPair } from './types.js';

/** The parts of a simple-peer instance used here. */
export interface SimplePeerInstance {
  signal(data: unknown): void;
  destroy(err?: Error): void;
  // biome-ignore lint/suspicious/noExplicitAny: simple-peer's events carry a different payload each; the handlers below type their own
  on(event: string, cb: (...args: any[]) => void): unknown;
  readonly destroyed: boolean;
  readonly connected: boolean;
  readonly bufferSize: number;
  /** simple-peer internals (stable in v9, which is no longer developed). */
  _pc?: RTCPeerConnection | null;
  _channel?: RTCDataChannel | null;
}

/** simple-peer constructor (v9 options subset). */
export type SimplePeerCtor = new (opts: Record<string, unknown>) => SimplePeerInstance;

/** Options of {@link SimplePeerPath}. */
export interface SimplePeerPathOptions {
  pathId: PathId;
  /** Exactly one side of each path is the initiator (it creates the offer and the datachannel). */
  initiator: boolean;
  /** Receives each outgoing signal; send it to the remote peer for this path. Exceptions are caught. */
  onSignal: (data: Record<string, unknown>) => void;
  /** ICE servers (default `[]`: host candidates only; simple-peer's public STUN defaults are NOT used). */
  iceServers?: IceServerConfig[];
  /**
   * RTCConfiguration.iceTransportPolicy (default 'all'). 'relay': this side
   * only offers TURN relay candidates, so the path runs through the TURN
   * server of `iceServers` (the overlay route of Zhang & Lei §3.2).
   */
  iceTransportPolicy?: 'all' | 'relay';
  /**
   * Keep (true) or withhold (false) each local candidate of this path (called
   * with this path's id); default keeps all. E.g. `policy.allows.bind(policy)`
   * or `policy.filterFor(pathId)` of a {@link PathCandidatePolicy}.
   */
  candidateFilter?: (candidate: ParsedCandidate, pathId: PathId) => boolean;
  /** Trickle ICE (default true). */
  trickle?: boolean;
  /** Datachannel label (default `mp-path-<pathId>`). */
  channelLabel?: string;
  /** simple-peer constructor (default: simple-peer-light). */
  Peer?: SimplePeerCtor;
  /**
   * WebRTC implementation for simple-peer (`{RTCPeerConnection, RTCSessionDescription, RTCIceCandidate}`):
   * outside browsers, or `datachannelWorkerRtc()` (src/transport/datachannel-worker.ts) to serve the
   * datachannel from a worker; 'message' then carries each datagram's age.
   */
  wrtc?: unknown;
  /** Bound on remote signals accepted over the path's lifetime (default 512); more are dropped. */
  maxRemoteSignals?: number;
  /**
   * Default off here (MultipathCall sets it by default): set up the path's RTP carrier, a second
   * datagram pipe that needs no acknowledgement on the reverse direction (src/transport/rtp-carrier.ts,
   * a lazy chunk loaded here; `true` or its options). It carries only when both peers of the path have
   * one; with attach 'stall' it waits for the remote's word ({@link SimplePeerPath.remoteRtpCarrier}).
   * See {@link SimplePeerPath.rtpCarrier}.
   */
  rtpCarrier?: boolean | RtpCarrierOptions;
}

/** Counters of one {@link SimplePeerPath}. */
export interface SimplePeerPathCounters {
  signalsOut: number;
  signalsIn: number;
  /** Local candidates withheld by the filter. */
  candidatesFiltered: number;
  /** Local candidate lines that failed to parse (withheld). */
  candidatesMalformed: number;
  /** Remote signals rejected (invalid shape, over the bound, or after close). */
  badSignalsIn: number;
  messagesIn: number;
  messagesOut: number;
  /** send() calls that returned false. */
  sendFailures: number;
  /** Non-binary messages received (dropped). */
  textMessagesDropped: number;
  listenerErrors: number;
}

const DefaultPeer = SimplePeerLight as unknown as SimplePeerCtor;
/** Bound on remembered local candidates (network-id lookup). */
const MAX_LOCAL_CANDIDATES = 256;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * One path over a simple-peer connection.
 *
 * ```ts
 * const p = new SimplePeerPath({ pathId: 0, initiator: true, onSignal: (d) => sig.sendSignal(remote, 0, d) });
 * sig.on('signal', (from, pathId, d) => paths[pathId].signal(d));
 * p.on('message', (bytes) => receiver.onPacket(0, bytes));
 * ```
 */
export class SimplePeerPath implements PathTransport {
  readonly pathId: PathId;
  readonly counters: SimplePeerPathCounters = {
    signalsOut: 0,
    signalsIn: 0,
    candidatesFiltered: 0,
    candidatesMalformed: 0,
    badSignalsIn: 0,
    messagesIn: 0,
    messagesOut: 0,
    sendFailures: 0,
    textMessagesDropped: 0,
    listenerErrors: 0,
  };
  private _state: PathTransportState = 'new';
  private readonly peer: SimplePeerInstance;
  private readonly events = new Emitter<PathTransportEvents>({ onListenerError: () => this.counters.listenerErrors++ });
  private readonly onSignalCb: (data: Record<string, unknown>) => void;
  private readonly filter: ((c: ParsedCandidate, pathId: PathId) => boolean) | undefined;
  private readonly maxRemoteSignals: number;
  /** candidateInfoKey -> network-id, for selectedPair(). */
  private readonly localNetworkIds = new Map<string, number>();
  private readonly _localCandidates: ParsedCandidate[] = [];
  private _iceState = 'new';
  private readonly initiator: boolean;
  /** ICE restarts started by {@link switchIceServers}. */
  iceRestarts = 0;
  private overLimitReported = false;
  /** `a=ice-ufrag` of the last remote description (RFC 8839 §5.4), to tell an ICE restart offer from a renegotiation. */
  private remoteUfrag: string | undefined;
  /**
   * With the option `rtpCarrier`: the path's RTP carrier ({@link DatagramCarrier}, check its `open`)
   * once its chunk has loaded (a few ms after construction), or why there is none (a sentence: no
   * RTCRtpScriptTransform, the chunk failed to load, the path was closed, ...); undefined before
   * and without the option. `typeof path.rtpCarrier === 'object'` tells a carrier from a reason.
   * A field, not a method, to keep a default call's bundle small (tools/size.ts).
   */
  declare rtpCarrier: DatagramCarrier | string | undefined;
  /**
   * The remote peer has an RTP carrier on this path: its carrier said so
   * (the signal `{ rtpCarrier: 1 }`, sent once the path connects; consumed
   * here, never passed to simple-peer). A carrier with `attach: 'stall'`
   * neither offers nor asks for its transceiver before (src/transport/rtp-carrier.ts).
   */
  remoteRtpCarrier = false;

  /** @throws PathTransportError (code from simple-peer, e.g. ERR_WEBRTC_SUPPORT) when no WebRTC exists. */
  constructor(opts: SimplePeerPathOptions) {
    if (!Number.isInteger(opts.pathId) || opts.pathId < 0) throw new RangeError(`SimplePeerPath: bad pathId ${opts.pathId}`);
    if (typeof opts.onSignal !== 'function') throw new TypeError('SimplePeerPath: onSignal must be a function');
    this.pathId = opts.pathId;
    this.onSignalCb = opts.onSignal;
    this.filter = opts.candidateFilter;
    this.maxRemoteSignals = opts.maxRemoteSignals ?? 512;
    const Peer = opts.Peer ?? DefaultPeer;
    const peerOpts: Record<string, unknown> = {
      initiator: opts.initiator,
      trickle: opts.trickle ?? true,
      channelName: opts.channelLabel ?? `mp-path-${opts.pathId}`,
      channelConfig: { ordered: false, maxRetransmits: 0 },
      config: { iceServers: opts.iceServers ?? [], ...(opts.iceTransportPolicy ? { iceTransportPolicy: opts.iceTransportPolicy } : {}) },
    };
    this.initiator = opts.initiator;
    if (opts.wrtc !== undefined) peerOpts.wrtc = opts.wrtc;
    try {
      this.peer = new Peer(peerOpts);
    } catch (err) {
      throw PathTransportError.from(err, 'ERR_WEBRTC_SUPPORT');
    }
    this.peer.on('signal', (data: unknown) => this.onLocalSignal(data));
    this.peer.on('connect', () => this.setState('connected'));
    this.peer.on('data', (data: unknown) => this.onData(data));
    this.peer.on('iceStateChange', (ice: unknown) => {
      if (typeof ice === 'string') this._iceState = ice;
    });
    this.peer.on('error', (err: unknown) => {
      const e = PathTransportError.from(err, 'ERR_PATH_UNKNOWN');
      this.emitError(e);
      this.setState('failed');
    });
    this.peer.on('close', () => {
      if (this._state !== 'failed') this.setState('closed');
    });
    if (opts.initiator) this.setState('connecting');
    if (opts.rtpCarrier)
      import('./rtp-carrier.js').then(
        (m) => m.carrierForPath(this, opts),
        (e) => (this.rtpCarrier = `${e}`),
      );
  }

  get state(): PathTransportState {
    return this._state;
  }

  /** Latest RTCPeerConnection.iceConnectionState ('new', 'checking', 'connected', 'disconnected', ...). */
  get iceConnectionState(): string {
    return this._iceState;
  }

  /** Local candidates gathered so far (parsed, before filtering), at most 256. */
  get localCandidates(): readonly ParsedCandidate[] {
    return this._localCandidates;
  }

  /** Subscribe; returns an unsubscribe function. Listener exceptions are caught (counted in `listenerErrors`). */
  on<K extends keyof PathTransportEvents>(event: K, cb: PathTransportEvents[K]): () => void {
    return this.events.on(event, cb);
  }

  /**
   * Feed one signal from the remote peer (offer, answer, candidate,
   * renegotiate; a `transceiverRequest` for video only while the path has an
   * RTP carrier, option `rtpCarrier`: a remote that opted in must not make
   * one that did not add a transceiver). Never throws: invalid or excess signals are dropped,
   * counted and reported with an 'error' event (code ERR_PATH_BAD_SIGNAL /
   * ERR_PATH_TOO_MANY_SIGNALS) without tearing the path down.
   */
  signal(data: unknown): void {
    if (this._state === 'closed' || this._state === 'failed' || this.peer.destroyed) {
      this.counters.badSignalsIn++;
      return;
    }
    if (this.counters.signalsIn >= this.maxRemoteSignals) {
      this.counters.badSignalsIn++;
      if (!this.overLimitReported) this.emitError(PathTransportError.tooManySignals(this.maxRemoteSignals));
      this.overLimitReported = true;
      return;
    }
    if ((data as { rtpCarrier?: unknown } | null)?.rtpCarrier === 1) {
      this.remoteRtpCarrier = true;
      return;
    }
    const why = this.checkRemoteSignal(data);
    if (why) {
      this.counters.badSignalsIn++;
      this.emitError(PathTransportError.badSignal(why));
      return;
    }
    this.counters.signalsIn++;
    if (this._state === 'new') this.setState('connecting');
    const restart = this.isRemoteRestart(data as Record<string, unknown>);
    try {
      this.peer.signal(data);
    } catch (err) {
      this.emitError(PathTransportError.from(err, 'ERR_SIGNALING'));
    }
    if (restart) this.events.emit('iceRestart', { local: false });
  }

  /**
   * True for a remote offer on a connected path whose `a=ice-ufrag` differs
   * from the previous remote description's: the remote side restarts ICE
   * (RFC 8445 §9, RFC 8839 §4.4.1.1.1). Remembers the ufrag.
   */
  private isRemoteRestart(data: Record<string, unknown>): boolean {
    if (typeof data.sdp !== 'string') return false;
    const ufrag = /^a=ice-ufrag:(\S+)/m.exec(data.sdp)?.[1];
    if (ufrag === undefined) return false;
    const before = this.remoteUfrag;
    this.remoteUfrag = ufrag;
    return data.type === 'offer' && before !== undefined && before !== ufrag && this._state === 'connected';
  }

  private checkRemoteSignal(data: unknown): string | undefined {
    if (!isObject(data)) return 'not an object';
    if (typeof data.sdp === 'string') {
      return data.type === 'offer' || data.type === 'answer' ? undefined : 'sdp without type offer/answer';
    }
    if (data.candidate !== undefined) {
      const c = data.candidate;
      if (!isObject(c) || typeof c.candidate !== 'string') return 'candidate must be {candidate: string, ...}';
      return undefined;
    }
    if (data.renegotiate === true) return undefined;
    // Only the RTP carrier asks for a transceiver (its `attach: 'stall'`): a path without one refuses.
    if (isObject(data.transceiverRequest)) return typeof this.rtpCarrier === 'object' && data.transceiverRequest.kind === 'video' ? undefined : 'no RTP carrier';
    return 'neither sdp, candidate, renegotiate nor transceiverRequest';
  }

  private rememberLocal(c: ParsedCandidate): void {
    if (this._localCandidates.length >= MAX_LOCAL_CANDIDATES) return;
    this._localCandidates.push(c);
    if (c.networkId !== undefined) this.localNetworkIds.set(candidateInfoKey(c.protocol, c.address, c.port), c.networkId);
  }

  private keep(c: ParsedCandidate): boolean {
    if (!this.filter) return true;
    try {
      return this.filter(c, this.pathId) !== false;
    } catch {
      return true;
    }
  }

  private onLocalSignal(data: unknown): void {
    if (!isObject(data)) return;
    let out: Record<string, unknown> = data;
    const cand = data.candidate;
    if (isObject(cand) && typeof cand.candidate === 'string') {
      if (cand.candidate !== '') {
        // '' is the end-of-candidates indication: always forwarded.
        const parsed = parseCandidate(cand.candidate);
        if (!parsed) {
          this.counters.candidatesMalformed++;
          return;
        }
        this.rememberLocal(parsed);
        if (!this.keep(parsed)) {
          this.counters.candidatesFiltered++;
          return;
        }
      }
    } else if (typeof data.sdp === 'string' && data.sdp.includes('a=candidate:')) {
      const res = filterSdpCandidates(data.sdp, (c) => {
        this.rememberLocal(c);
        return this.keep(c);
      });
      this.counters.candidatesFiltered += res.dropped;
      this.counters.candidatesMalformed += res.malformed;
      out = { ...data, sdp: res.sdp };
    }
    this.counters.signalsOut++;
    try {
      this.onSignalCb(out);
    } catch {
      this.counters.listenerErrors++;
    }
  }

  private onData(data: unknown): void {
    if (!(data instanceof Uint8Array)) {
      this.counters.textMessagesDropped++;
      return;
    }
    this.counters.messagesIn++;
    // simple-peer-light hands a Uint8Array (simple-peer a Buffer subclass); expose a plain Uint8Array view (no copy).
    const bytes = data.constructor === Uint8Array ? data : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    // A worker-served channel (datachannel-worker.ts) stamped the arrival off the main thread.
    this.events.emit('message', bytes, (this.peer._channel as { arrivalAgeUs?: number } | null | undefined)?.arrivalAgeUs);
  }

  /** Send one binary message on the datachannel. @returns false if not open or the browser refused it. Never throws. */
  send(bytes: Uint8Array): boolean {
    const ch = this.peer._channel;
    if (this._state !== 'connected' || !ch || ch.readyState !== 'open') {
      this.counters.sendFailures++;
      return false;
    }
    try {
      ch.send(bytes as Uint8Array<ArrayBuffer>);
      this.counters.messagesOut++;
      return true;
    } catch {
      this.counters.sendFailures++;
      return false;
    }
  }

  /** RTCDataChannel.bufferedAmount in bytes (0 before the channel exists). */
  bufferedAmount(): number {
    try {
      return this.peer._channel?.bufferedAmount ?? 0;
    } catch {
      return 0;
    }
  }

  /** Raw RTCPeerConnection.getStats() (undefined once closed or on failure). */
  async getStats(): Promise<RTCStatsReport | undefined> {
    const pc = this.peer._pc;
    if (!pc) return undefined;
    try {
      return await pc.getStats();
    } catch {
      return undefined;
    }
  }

  /**
   * The selected ICE candidate pair from getStats (transport.selectedCandidatePairId,
   * else the selected / nominated-succeeded candidate-pair), with Chrome's
   * network-id of the local candidate when it was seen in a local candidate line.
   * Undefined before connection or on failure; never rejects.
   */
  async selectedPair(): Promise<SelectedPair | undefined> {
    const report = await this.getStats();
    if (!report) return undefined;
    try {
      return selectedPairFromStats(report.values() as Iterable<StatsEntry>, this.localNetworkIds);
    } catch {
      return undefined;
    }
  }

  /**
   * Move this path onto other ICE servers (e.g. another TURN relay) without
   * closing it: RTCPeerConnection.setConfiguration with the new `iceServers`
   * (and `iceTransportPolicy` when given), then an ICE restart
   * (RTCPeerConnection.restartIce, RFC 8445 §9 / JSEP RFC 8829 §4.1.18)
   * negotiated by a new offer. The old candidate pair keeps carrying the
   * datachannel until the new one is selected (make-before-break), so the
   * path stays 'connected'.
   *
   * Only the initiator (offerer) of the path can start it: an answerer's
   * restartIce() takes effect only in an offer it never makes here.
   * @returns false (nothing changed) on the answerer side, before the
   *   RTCPeerConnection exists, after close, or when the browser refuses the
   *   configuration (the error is reported with an 'error' event).
   */
  switchIceServers(iceServers: IceServerConfig[], iceTransportPolicy?: 'all' | 'relay'): boolean {
    const pc = this.peer._pc;
    if (!this.initiator || !pc || this.peer.destroyed || this._state === 'closed' || this._state === 'failed') return false;
    try {
      pc.setConfiguration({ ...pc.getConfiguration(), iceServers: iceServers as RTCIceServer[], ...(iceTransportPolicy ? { iceTransportPolicy } : {}) });
      pc.restartIce();
      (this.peer as SimplePeerInstance & { negotiate(): void }).negotiate();
    } catch (err) {
      this.emitError(PathTransportError.from(err, 'ERR_ICE_RESTART'));
      return false;
    }
    this.iceRestarts++;
    this.events.emit('iceRestart', { local: true });
    return true;
  }

  /** Close the RTCPeerConnection; state becomes 'closed'. Idempotent. */
  close(): void {
    if (this._state === 'closed') return;
    this.setState('closed');
    try {
      this.peer.destroy();
    } catch {
      /* already destroyed */
    }
  }

  private setState(s: PathTransportState): void {
    if (s === this._state || this._state === 'closed' || this._state === 'failed') return;
    this._state = s;
    this.events.emit('state', s);
  }

  private emitError(err: PathTransportError): void {
    this.events.emit('error', err);
  }
}
