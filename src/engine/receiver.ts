/**
 * The receiver side of multipath streams, I/O-free: per-path arrival reports
 * (transport-wide-cc-like, for each path's GCC), FEC recovery, frame assembly
 * from fragments arriving on any path, a frame buffer that releases frames in
 * decode order only when decodable (Converge §2.1), QoE feedback from FCD/IFD
 * and late packets (Converge §4.2), NACKs and rate-limited keyframe requests.
 *
 * Drive it with {@link ReceiverEngine.onPacket} for media/FEC/padding/stream
 * info and {@link ReceiverEngine.tick}; decodable frames come out through the
 * `frame` event; tell it what the decoder output with
 * {@link ReceiverEngine.onFrameDecoded}.
 */
import { AudioReceiver } from '../audio/audio-receiver.js';
import { integerClock } from '../core/clock.js';
import type { Clock } from '../core/clock.js';
import { Emitter } from '../core/emitter.js';
import { MAX_PATHS } from '../core/types.js';
import type { PathId } from '../core/types.js';
import { BUILTIN_FEC_CODES, type FecCodeDecoder, fecCodeByWireId, sumFecDecoderStats } from '../fec/codes.js';
import { DEFAULT_FEC_DECODER_BYTES, type FecDecoderOptions } from '../fec/decoder.js';
import type { RecoveredPacket } from '../fec/types.js';
import { AvSync } from '../feedback/av-sync.js';
import { ClockSync } from '../feedback/clock-sync.js';
import { DEFAULT_FRAME_BUFFER_BYTES, FrameBuffer } from '../feedback/frame-buffer.js';
import { JitterEstimator } from '../feedback/jitter-estimator.js';
import { PlayoutTiming } from '../feedback/playout.js';
import { KeyframeRequester } from '../feedback/keyframe-requester.js';
import { NackGenerator } from '../feedback/nack.js';
import { percentile } from '../feedback/percentile.js';
import { QoeMonitor } from '../feedback/qoe-monitor.js';
import { StreamQoeStats } from '../feedback/qoe-stats.js';
import { decodeMedia } from '../wire/decode.js';
import { encodeControl } from '../wire/encode.js';
import { DEFAULT_DEPACKETIZER_BYTES, Depacketizer } from '../wire/depacketizer.js';
import type { AssembledFrame } from '../wire/packetization.js';
import type { DecodedPacket, MediaMessage, PacketBody, StreamInfoMessage } from '../wire/types.js';
import type { DecodableFrame, ReceiverEngineConfig, ReceiverEvents } from './receiver-config.js';
import { type PathRx, newReceivePath, receivePathStats, sendFeedback } from './receive-path.js';
import type { PathSink, ReceiverPathStats, ReceiverStats } from './types.js';

/**
 * FEC codes one receiver decodes at once: XOR and one other. Each decoder has
 * the whole FEC memory budget (ReceiverMemoryOptions.fecBytes), so this bounds
 * FEC memory at twice the budget whatever codes a peer sends.
 */
const MAX_FEC_CODES = 2;
export type { DecodableFrame, ReceiverEngineConfig, ReceiverEvents, ReceiverMemoryConfig } from './receiver-config.js';

/** Most decodable frames waiting for their playout time; beyond it the oldest go at once. */
const MAX_PLAYOUT_QUEUE = 256;

/** NaN/undefined -> 0, so stats stay plain JSON numbers. */
const num = (x: number | undefined): number => (x === undefined || !Number.isFinite(x) ? 0 : x);

/** See the module comment. */
export class ReceiverEngine {
  private readonly clock: Clock;
  private readonly cfg: Required<Omit<ReceiverEngineConfig, 'clock' | 'memory' | 'playout' | 'audio' | 'avSync' | 'nack'>>;
  private readonly paths = new Map<PathId, PathRx>();
  private readonly depacketizer: Depacketizer;
  private readonly frameBuffer: FrameBuffer;
  private readonly jitter = new JitterEstimator();
  private readonly playout: PlayoutTiming;
  /** Decodable frames in decode order, each with the time it goes to the decoder (µs). */
  private readonly playoutQueue: Array<{ frame: DecodableFrame; atUs: number; ingestUs: number }> = [];
  /** webrtc-stats jitterBufferDelay (summed first-packet arrival -> handed to the decoder, µs) and jitterBufferEmittedCount. */
  private readonly jb = { delayUs: 0, emitted: 0 };
  private readonly qoe = new QoeMonitor({});
  private readonly nack: NackGenerator;
  private readonly keyframes = new Map<number, KeyframeRequester>();
  /** One decoder per FEC code seen (by wire id; XOR from the start), at most MAX_FEC_CODES. */
  private readonly fecDecoders = new Map<number, FecCodeDecoder>();
  private readonly fecDecoderOptions: FecDecoderOptions;
  private readonly streamStats = new Map<number, StreamQoeStats>();
  private readonly streamInfos = new Map<number, StreamInfoMessage>();
  private readonly events = new Emitter<ReceiverEvents>();
  private readonly audio: AudioReceiver;
  /** Lip sync: extra delay for the audio or the video (src/feedback/av-sync.ts); undefined when turned off. */
  private readonly avSync: AvSync | undefined;
  private lastReportUs = -Infinity;
  private readonly fcdMs: number[] = [];
  private readonly ifdMs: number[] = [];
  /** RTT from NACK -> retransmission (ms), meaningful once `rttSamples` > 0. */
  private nackRttMs: number;
  private rttSamples = 0;
  /** The sender's clock offset and per-path RTT from PathReport -> ClockEcho exchanges. */
  private readonly clockSync = new ClockSync();
  private lastNackSweepUs = 0;
  /** NACK give-ups (exhausted + expired) seen so far, for keyframeOnNackGiveUp. */
  private nackGaveUp = 0;
  private readonly drops: Record<string, number> = {};
  private readonly c = {
    packetsReceived: 0,
    malformedPackets: 0,
    framesAssembled: 0,
    framesDecodable: 0,
    framesDropped: 0,
    keyframeRequestsSent: 0,
    nacksSent: 0,
    nackedPackets: 0,
    retransmissionsReceived: 0,
    recoveredByFec: 0,
    fecPacketsReceived: 0,
    fecUnknownCode: 0,
    qoeFeedbackSent: 0,
  };
  /** flowSeq -> time (µs) of its first NACK: the retransmission's arrival gives an RTT sample. */
  private readonly nackedSeqs = new Map<number, number>();
  private readonly recentFeedback: ReceiverStats['recentFeedback'] = [];
  private readonly fcdTotal = { sumMs: 0, count: 0 };
  private readonly ifdTotal = { sumMs: 0, count: 0 };

  constructor(config: ReceiverEngineConfig) {
    this.clock = integerClock(config.clock);
    this.cfg = {
      reportIntervalMs: config.reportIntervalMs ?? 50,
      defaultRttMs: config.defaultRttMs ?? 100,
      historyFrames: config.historyFrames ?? 2000,
      clockEchoIntervalMs: config.clockEchoIntervalMs ?? 1000,
      reportCopies: config.reportCopies ?? false,
      keyframeOnNackGiveUp: config.keyframeOnNackGiveUp ?? true,
      keyframeRepeat: config.keyframeRepeat ?? true,
      keepFramesOnTimeout: config.keepFramesOnTimeout ?? true,
    };
    this.nackRttMs = this.cfg.defaultRttMs;
    this.playout = new PlayoutTiming(config.playout);
    this.audio = new AudioReceiver(config.audio);
    this.avSync = config.avSync === false ? undefined : new AvSync({ ...config.avSync, canDelayVideo: this.playout.enabled && (config.avSync?.canDelayVideo ?? true) });
    const mem = config.memory ?? {};
    this.depacketizer = new Depacketizer({ maxBytes: mem.depacketizerBytes ?? DEFAULT_DEPACKETIZER_BYTES, maxAgeMs: mem.depacketizerMaxAgeMs ?? 3000 });
    this.frameBuffer = new FrameBuffer({ maxBytes: mem.frameBufferBytes ?? DEFAULT_FRAME_BUFFER_BYTES, maxAgeMs: mem.frameBufferMaxAgeMs ?? 3000, keepOnTimeout: this.cfg.keepFramesOnTimeout });
    this.nack = new NackGenerator({ ...config.nack, maxTracked: mem.nackMaxTracked ?? 1000 });
    /** A rebuilt body must decode as the Media message it claims to be (XOR alone cannot tell a forged FEC). */
    this.fecDecoderOptions = {
      maxBytes: mem.fecBytes ?? DEFAULT_FEC_DECODER_BYTES,
      maxAgeMs: mem.fecMaxAgeMs ?? 1000,
      validate: (streamId, flowSeq, body) => {
        const m = decodeMedia(body);
        return m !== undefined && m.streamId === streamId && m.flowSeq === flowSeq;
      },
    };
    this.fecDecoders.set(BUILTIN_FEC_CODES.xor.wireId, BUILTIN_FEC_CODES.xor.createDecoder(this.fecDecoderOptions));
  }

  /**
   * Add a listener; returns a function that removes it. An exception thrown
   * by a listener propagates out of the call that emitted the event.
   */
  on<K extends keyof ReceiverEvents>(event: K, handler: ReceiverEvents[K]): () => void {
    return this.events.on(event, handler);
  }

  /**
   * Add (or re-attach) the sink for a path's reverse direction.
   * @throws RangeError for an id outside [0, MAX_PATHS).
   */
  addPath(pathId: PathId, sink: PathSink): void {
    this.pathRx(pathId).sink = sink;
  }

  removePath(pathId: PathId): void {
    const p = this.paths.get(pathId);
    if (p) p.sink = undefined;
  }

  private pathRx(pathId: PathId): PathRx {
    if (!Number.isInteger(pathId) || pathId < 0 || pathId >= MAX_PATHS) throw new RangeError(`path id ${pathId} outside [0, ${MAX_PATHS})`);
    let p = this.paths.get(pathId);
    if (!p) {
      p = newReceivePath(pathId);
      this.paths.set(pathId, p);
    }
    return p;
  }

  private drop(reason: string): void {
    this.drops[reason] = (this.drops[reason] ?? 0) + 1;
  }

  /**
   * A decoded packet that arrived on `viaPath` (media, FEC, padding, stream
   * info). Control kinds meant for a sender are ignored here. `ageUs`: how
   * long ago it arrived (µs), when the transport stamped it off the main
   * thread; only the path report's arrival time (the sender's GCC
   * inter-arrival input) uses it.
   */
  onPacket(viaPath: PathId, packet: DecodedPacket, bodyBytes: Uint8Array, sizeBytes: number, ageUs?: number): void {
    const now = this.clock.nowUs();
    if (packet.pathId !== viaPath) {
      this.drop('path-mismatch');
      return;
    }
    if (viaPath < 0 || viaPath >= MAX_PATHS) {
      this.drop('unknown-path');
      return;
    }
    const p = this.pathRx(viaPath);
    this.c.packetsReceived++;
    p.packetsReceived++;
    p.bytesReceived += sizeBytes;
    const body = packet.body;
    if (body.kind === 'media' || body.kind === 'fec' || body.kind === 'padding' || body.kind === 'audio') {
      p.reports.onPacket(packet.pathSeq, (ageUs ?? 0) > 0 ? now - Math.round(ageUs!) : now);
      if (p.firstSeq < 0) p.firstSeq = packet.pathSeq;
      p.seqCount++;
      if (packet.pathSeq > p.highestSeq) p.highestSeq = packet.pathSeq;
    }
    switch (body.kind) {
      case 'media':
        p.mediaPacketsReceived++;
        {
          const d = now - packet.sendTimeUs;
          p.owdUs = Number.isNaN(p.owdUs) ? d : p.owdUs + (d - p.owdUs) / 8;
          this.qoe.setPathDelay(viaPath, p.owdUs / 1000);
        }
        this.onMedia(body.media, viaPath, now, false, packet.sendTimeUs);
        for (const d of this.fecDecoders.values()) this.onRecovered(d.addMedia(body.media.streamId, body.media.flowSeq, bodyBytes, now), viaPath, now);
        break;
      case 'fec': {
        p.fecPacketsReceived++;
        this.c.fecPacketsReceived++;
        const d = this.fecDecoderFor(body.fec.code ?? 0);
        if (d) this.onRecovered(d.addFec(body.fec, now), viaPath, now);
        else this.c.fecUnknownCode++;
        break;
      }
      case 'streamInfo': {
        const info = body.streamInfo;
        const prev = this.streamInfos.get(info.streamId);
        if (!prev && this.streamInfos.size >= 16) {
          this.drop('too-many-streams');
          return;
        }
        this.streamInfos.set(info.streamId, info);
        this.qoe.setExpectedFps(info.fps, info.streamId);
        if (!prev || prev.codec !== info.codec || prev.width !== info.width || prev.height !== info.height || prev.fps !== info.fps) {
          this.events.emit('streamInfo', info);
        }
        break;
      }
      case 'padding':
        break;
      case 'clockEcho': {
        // RFC 5905 §8 with this side as the client: t1 = our report's send
        // time (echoed), t2/t3 = the peer's receive/send time, t4 = now.
        const t3 = packet.sendTimeUs;
        if (!this.clockSync.addExchange(viaPath, body.clockEcho.echoUs, t3 - body.clockEcho.holdUs, t3, now)) this.drop('clock-echo-rejected');
        break;
      }
      case 'audio':
        if (this.audio.onPacket(body.audio, now) === 'other-stream') this.drop('audio-other-stream');
        // Also play out here what is due: in a busy browser the tick timer can lag the packets.
        this.pollAudio(now);
        break;
      default:
        this.drop(`unexpected-${body.kind}`);
    }
  }

  /**
   * The peer's side of the clock exchange: a packet of the peer's (a
   * PathReport) arrived on `viaPath`; answer it with a ClockEcho on the same
   * path carrying its `sendTimeUs` back (RFC 3550 §6.4.1 LSR/DLSR), at most
   * once per `clockEchoIntervalMs` per path. The {@link Endpoint} calls this
   * for every report it hands to the sender.
   */
  echoClock(viaPath: PathId, packet: DecodedPacket): void {
    if (packet.pathId !== viaPath || viaPath < 0 || viaPath >= MAX_PATHS) return;
    const p = this.paths.get(viaPath);
    if (!p?.sink) return;
    const now = this.clock.nowUs();
    if (now - p.lastEchoUs < this.cfg.clockEchoIntervalMs * 1000) return;
    p.lastEchoUs = now;
    sendFeedback(p, encodeControl({ pathId: viaPath, pathSeq: 0, sendTimeUs: now }, { kind: 'clockEcho', clockEcho: { echoUs: packet.sendTimeUs, holdUs: 0 } }));
  }

  /** Estimated sender clock - receiver clock (µs); undefined before the first clock exchange completes. */
  senderClockOffsetUs(): number | undefined {
    return this.clockSync.offsetUs();
  }

  /** Emit the audio playouts due at `now` (src/audio/audio-receiver.ts). */
  private pollAudio(now: number): void {
    // Same clock offset as onFrameDecoded's latency (one latency definition).
    for (const ev of this.audio.poll(now, this.senderClockOffsetUs() ?? 0)) {
      // Both capture times are on the sender's clock: the clock offset cancels in the A/V difference.
      if (ev.playout.kind === 'frame') this.avSync?.onAudioDelay((now - ev.playout.frame.captureUs) / 1000, now);
      this.events.emit('audio', ev);
    }
  }

  /** Run the lip-sync controller and apply its extra delays (src/feedback/av-sync.ts). */
  private syncAv(now: number): void {
    if (!this.avSync) return;
    const d = this.avSync.update(now);
    this.audio.setExtraDelayMs(d.audioExtraDelayMs);
    this.playout.setExtraDelayMs(d.videoExtraDelayMs);
  }

  /** The codec parameters announced for a stream, if any. */
  streamInfo(streamId = 0): StreamInfoMessage | undefined {
    return this.streamInfos.get(streamId);
  }

  private onRecovered(list: RecoveredPacket[], viaPath: PathId, now: number): void {
    for (const r of list) {
      const m = decodeMedia(r.body);
      if (!m) {
        this.drop('fec-recovered-malformed');
        continue;
      }
      this.c.recoveredByFec++;
      this.onMedia(m, viaPath, now, true);
    }
  }

  /** @param sentUs the datagram's send time (sender clock, µs); undefined for an FEC rebuild. */
  private onMedia(m: MediaMessage, pathId: PathId, now: number, recovered: boolean, sentUs?: number): void {
    if (!recovered) {
      const nackedAt = this.nackedSeqs.get(m.flowSeq);
      if (nackedAt !== undefined) {
        this.nackedSeqs.delete(m.flowSeq);
        this.c.retransmissionsReceived++;
        this.onRttSample((now - nackedAt) / 1000);
        this.playout.onNackRecovered(now);
      }
    }
    // The latest time (receiver clock) the datagram can have left the sender, as far as the clock offset
    // is known: NackGenerator tells a late original (sent before its NACK) from a retransmission by it.
    const off = this.clockSync.offsetUs();
    const bound = this.clockSync.offsetErrorBoundUs();
    const sentByUs = sentUs !== undefined && off !== undefined && bound !== undefined ? sentUs - off + bound : undefined;
    if (this.nack.onPacket(m.streamId, m.flowSeq, now, recovered, sentByUs)) this.requestKeyframe('nack-window', m.streamId);
    const res = this.depacketizer.insert(m, pathId, now, recovered);
    if (res.status !== 'completed' || !res.frame) {
      if (res.status === 'rejected') this.drop('fragment-rejected');
      return;
    }
    this.onFrameComplete(res.frame, now);
  }

  private onFrameComplete(frame: AssembledFrame, now: number): void {
    this.c.framesAssembled++;
    if (this.frameBuffer.insert(frame, now) !== 'stored') return;
    const fq = this.qoe.onFrame(frame, now);
    for (const pl of fq.paths) {
      const p = this.paths.get(pl.pathId);
      if (!p) continue;
      p.latePackets += pl.late;
      p.earlyPackets += pl.early;
    }
    this.pushBounded(this.fcdMs, fq.fcdMs);
    this.fcdTotal.sumMs += fq.fcdMs;
    this.fcdTotal.count++;
    if (fq.ifdMs !== undefined) {
      this.pushBounded(this.ifdMs, fq.ifdMs);
      this.ifdTotal.sumMs += fq.ifdMs;
      this.ifdTotal.count++;
    }
    this.jitter.updateFromFrame(frame.captureUs, frame.lastArrivalUs, frame.dataBytes ?? frame.data.byteLength);
    this.playout.onFrameComplete(frame.captureUs, frame.lastArrivalUs);
    this.releaseFrames(now);
  }

  private pushBounded(list: number[], v: number): void {
    list.push(v);
    if (list.length > this.cfg.historyFrames) list.splice(0, list.length - this.cfg.historyFrames);
  }

  private releaseFrames(now: number): void {
    // A missing packet is NACKed after the reorder wait and comes back one RTT later:
    // the frame buffer must wait at least that long before giving up on it.
    const out = this.frameBuffer.poll(now, this.jitter.jitterMs(), this.rttMs + this.nack.reorderWindowMs());
    if (out.dropped > 0) {
      this.c.framesDropped += out.dropped;
      for (const st of this.streamStats.values()) st.onFramesDropped(out.dropped, now);
    }
    // The steady NACK term's base RTT: the clock exchange's path RTT, else a measured NACK RTT, never the default.
    this.playout.update(now, this.jitter.jitterMs(), this.rttMs, this.clockSync.minRttMs() ?? (this.rttSamples > 0 ? this.nackRttMs : Number.NaN));
    // A playout time never lies further ahead than the delay bound: a forged
    // capture time cannot park a frame here.
    const latestUs = now + Math.ceil(this.playout.stats().currentDelayMs * 1000);
    for (const f of out.decodable) {
      this.c.framesDecodable++;
      const kr = this.keyframeRequester(f.streamId);
      kr?.onFrameReleased(now);
      if (f.keyFrame) kr?.onKeyframe(now);
      const frame: DecodableFrame = { streamId: f.streamId, frameId: f.frameId, keyFrame: f.keyFrame, captureUs: f.captureUs, data: f.data };
      this.playoutQueue.push({ frame, atUs: Math.min(latestUs, this.playout.playoutTimeUs(f.captureUs)), ingestUs: f.firstArrivalUs });
    }
    this.playOut(now);
    for (let k = 0; k < out.keyframeNeededStreams.length; k++) this.requestKeyframe(out.keyframeReasons[k] ?? 'frame-buffer', out.keyframeNeededStreams[k]);
  }

  /** Hand the frames whose playout time has come to the decoder, in decode order. */
  private playOut(now: number): void {
    while (this.playoutQueue.length > 0 && (this.playoutQueue[0].atUs <= now || this.playoutQueue.length > MAX_PLAYOUT_QUEUE)) {
      const { frame, atUs, ingestUs } = this.playoutQueue.shift()!;
      if (Number.isFinite(atUs) && now - atUs > 20_000) this.playout.countLate();
      if (Number.isFinite(ingestUs) && now >= ingestUs) {
        this.jb.delayUs += now - ingestUs;
        this.jb.emitted++;
      }
      this.events.emit('frame', frame);
    }
  }

  /**
   * The receiver's RTT estimate (ms): NACK sent -> retransmission received,
   * smoothed with gain 1/4 (RFC 6298-style). It sets how long the frame
   * buffer waits for a retransmission and when NACKs are retried.
   */
  private onRttSample(ms: number): void {
    if (!Number.isFinite(ms) || ms <= 0 || ms > 5000) return;
    this.rttSamples++;
    this.nackRttMs = this.rttSamples === 1 ? ms : this.nackRttMs + (ms - this.nackRttMs) / 4;
  }

  /**
   * The RTT the receiver works with (ms): NACK -> retransmission once a NACK
   * was answered (what a retransmission really costs), before that the
   * smallest per-path RTT of the clock exchange, before that `defaultRttMs`.
   */
  private get rttMs(): number {
    if (this.rttSamples > 0) return this.nackRttMs;
    return this.clockSync.minRttMs() ?? this.cfg.defaultRttMs;
  }

  /** The RTT key frame requests are spaced by (ms): ReceiverEngineConfig.keyframeRepeat's lowest path RTT, else {@link rttMs}. */
  private get keyframeRttMs(): number {
    return this.cfg.keyframeRepeat ? (this.clockSync.minRttMs() ?? this.rttMs) : this.rttMs;
  }

  /** Current RTT estimate (ms). */
  get rttEstimateMs(): number {
    return this.rttMs;
  }

  /** The stream's key frame requester (created on first use; undefined past 16 streams). */
  private keyframeRequester(streamId: number): KeyframeRequester | undefined {
    let kr = this.keyframes.get(streamId);
    if (!kr) {
      if (this.keyframes.size >= 16) return undefined;
      kr = new KeyframeRequester({ streamId });
      this.keyframes.set(streamId, kr);
    }
    return kr;
  }

  /** Ask the sender for a key frame (rate-limited per stream). Also used when the decoder fails. */
  requestKeyframe(reason: string, streamId = 0): void {
    const now = this.clock.nowUs();
    const kr = this.keyframeRequester(streamId);
    if (!kr) return;
    if (!kr.request(now, this.keyframeRttMs, reason)) return;
    this.c.keyframeRequestsSent++;
    this.events.emit('keyframeRequest', streamId, reason);
    this.broadcast({ kind: 'keyframeRequest', keyframeRequest: { streamId, requestId: kr.requestId } });
  }

  /**
   * The decoder output a frame (for fps, freezes, capture -> decoded latency and goodput).
   * `captureUs` is on the sender's clock; the latency sample is corrected by
   * the estimated clock offset ({@link senderClockOffsetUs}); frames decoded
   * before the first clock exchange completes give no latency sample.
   * @param bytes the frame's encoded size (bytes; 0 when unknown).
   */
  onFrameDecoded(streamId: number, frameId: number, captureUs: number, bytes = 0): void {
    let s = this.streamStats.get(streamId);
    if (!s) {
      if (this.streamStats.size >= 16) return;
      s = new StreamQoeStats();
      this.streamStats.set(streamId, s);
    }
    // Before the first clock exchange the two clocks cannot be compared: no latency sample (NaN is skipped).
    const now = this.clock.nowUs();
    s.onFrameDecoded(frameId, captureUs, now, this.senderClockOffsetUs() ?? Number.NaN, bytes);
    this.avSync?.onVideoDelay((now - captureUs) / 1000, now);
  }

  /** Reports, NACKs, buffered-frame timeouts, QoE feedback. Call every ~10-50 ms. */
  tick(): void {
    const now = this.clock.nowUs();
    if (now - this.lastReportUs >= this.cfg.reportIntervalMs * 1000) {
      this.lastReportUs = now;
      for (const p of this.paths.values()) {
        if (!p.sink) continue;
        const report = p.reports.makeReport(now);
        const fcdMs = this.qoe.smoothedFcdMs();
        if (report && fcdMs !== undefined) report.fcdUs = Math.min(0xffffffff, Math.max(1, Math.round(fcdMs * 1000)));
        if (!report) continue;
        sendFeedback(p, encodeControl({ pathId: p.id, pathSeq: 0, sendTimeUs: now }, { kind: 'report', report }), true);
        // ReceiverEngineConfig.reportCopies: the same report on the other paths too (the sender applies the first to arrive).
        if (this.cfg.reportCopies)
          for (const q of this.paths.values()) if (q !== p && q.sink) sendFeedback(q, encodeControl({ pathId: q.id, pathSeq: 0, sendTimeUs: now }, { kind: 'report', report }), true);
      }
    }
    for (const n of this.nack.poll(now, this.rttMs)) {
      if (n.flowSeqs.length === 0) continue;
      this.c.nacksSent++;
      this.c.nackedPackets += n.flowSeqs.length;
      this.playout.onNackSent(now);
      for (const s of n.flowSeqs) {
        if (!this.nackedSeqs.has(s) && this.nackedSeqs.size < 4096) this.nackedSeqs.set(s, now);
      }
      this.broadcast({ kind: 'nack', nack: { streamId: n.streamId, flowSeqs: n.flowSeqs } });
    }
    if (this.cfg.keyframeOnNackGiveUp) {
      // ReceiverEngineConfig.keyframeOnNackGiveUp: a packet the NACK gave up on while the picture is stalled.
      const ns = this.nack.stats();
      const gaveUp = ns.exhausted + ns.expired;
      if (gaveUp > this.nackGaveUp) for (const [id, kr] of this.keyframes) if (kr.stalled(now)) this.requestKeyframe('nack-gave-up', id);
      this.nackGaveUp = gaveUp;
    }
    // ReceiverEngineConfig.keyframeRepeat: a pending request is repeated while the picture stays stalled.
    if (this.cfg.keyframeRepeat) for (const [id, kr] of this.keyframes) if (kr.stalled(now) && kr.repeatDue(now, this.keyframeRttMs)) this.requestKeyframe('keyframe-repeat', id);
    if (this.nackedSeqs.size > 0 && now - this.lastNackSweepUs > 1_000_000) {
      this.lastNackSweepUs = now;
      for (const [seq, at] of this.nackedSeqs) if (now - at > 5_000_000) this.nackedSeqs.delete(seq);
    }
    this.depacketizer.expire(now);
    this.syncAv(now);
    this.releaseFrames(now);
    this.pollAudio(now);
    const fb = this.qoe.maybeFeedback(now);
    if (fb) {
      this.c.qoeFeedbackSent++;
      this.recentFeedback.push({ atUs: now, pathId: fb.pathId, alpha: fb.alpha, fcdMs: fb.fcdMs });
      if (this.recentFeedback.length > 32) this.recentFeedback.shift();
      this.broadcast({ kind: 'qoe', qoe: fb });
    }
  }

  /** When {@link tick} should run next (µs). */
  nextWakeUs(): number {
    const now = this.clock.nowUs();
    const head = Math.min(this.playoutQueue[0]?.atUs ?? Infinity, this.audio.nextWakeUs() ?? Infinity);
    return Math.max(now, Math.min(now + 10_000, head));
  }

  /** Control goes out on every path: the reverse direction can fade too; the sender ignores duplicates. */
  private broadcast(body: PacketBody): void {
    const now = this.clock.nowUs();
    for (const p of this.paths.values()) {
      if (p.sink) sendFeedback(p, encodeControl({ pathId: p.id, pathSeq: 0, sendTimeUs: now }, body));
    }
  }

  /** The decoder of FEC code `wireId`, created on its first packet; undefined for a code this page does not know (or past MAX_FEC_CODES). */
  private fecDecoderFor(wireId: number): FecCodeDecoder | undefined {
    const have = this.fecDecoders.get(wireId);
    if (have) return have;
    const entry = fecCodeByWireId(wireId);
    if (!entry || this.fecDecoders.size >= MAX_FEC_CODES) return undefined;
    const d = entry.createDecoder(this.fecDecoderOptions);
    this.fecDecoders.set(wireId, d);
    return d;
  }

  stats(streamId = 0): ReceiverStats {
    const now = this.clock.nowUs();
    const s = this.streamStats.get(streamId)?.snapshot(now);
    const fec = sumFecDecoderStats([...this.fecDecoders.values()].map((d) => d.stats()));
    const fbs = this.frameBuffer.stats();
    const dps = this.depacketizer.stats();
    const paths: ReceiverPathStats[] = [...this.paths.values()].map((p) =>
      receivePathStats(
        p,
        fec.perPath.find((x) => x.pathId === p.id),
        this.clockSync.rttMs(p.id),
        this.clockSync.stats(),
      ),
    );
    const mean = (a: number[]) => (a.length ? a.reduce((x, y) => x + y, 0) / a.length : 0);
    const cs = this.clockSync.stats();
    const audioStats = this.audio.stats();
    return {
      ...this.c,
      temporalLayerSkips: fbs.skips,
      fecUtilizationPct: fec.fecReceived > 0 ? (100 * fec.fecUsed) / fec.fecReceived : 0,
      fecUsefulPct: fec.fecReceived > 0 ? (100 * (fec.fecReceived - fec.fecDiscarded)) / fec.fecReceived : 0,
      framesDecoded: s?.framesDecoded ?? 0,
      fps: num(s?.decodedFps),
      bytesDecoded: s?.bytesDecoded ?? 0,
      goodputBps: num(s?.goodputBps),
      recentFeedback: this.recentFeedback.slice(),
      freezeCount: s?.freezeCount ?? 0,
      freezeTotalMs: s?.totalFreezesDurationMs ?? 0,
      latencyMs: {
        mean: num(s?.latency.meanMs),
        p50: num(s?.latency.p50Ms),
        p95: num(s?.latency.p95Ms),
        p99: num(s?.latency.p99Ms),
      },
      fcdMs: { mean: mean(this.fcdMs), p95: num(percentile(this.fcdMs, 95)) },
      ifdMs: { mean: mean(this.ifdMs), p95: num(percentile(this.ifdMs, 95)) },
      fcdTotal: { ...this.fcdTotal },
      ifdTotal: { ...this.ifdTotal },
      jitterMs: this.jitter.jitterMs(),
      playout: { ...this.playout.stats(), queuedFrames: this.playoutQueue.length },
      jitterBufferDelayMs: this.jb.delayUs / 1000,
      jitterBufferEmittedCount: this.jb.emitted,
      rttMs: this.rttMs,
      clock: { offsetMs: num(cs.offsetMs), errorBoundMs: num(cs.offsetErrorBoundMs), samples: cs.samples, rejected: cs.rejected },
      paths,
      drops: { ...this.drops },
      memoryDrops: {
        frameBufferBudget: fbs.droppedBudget,
        frameBufferAge: fbs.droppedAge,
        depacketizerBudget: dps.framesEvictedBudget,
        depacketizerAge: dps.framesExpired,
        fecBudget: fec.dropped.evictedBudget,
        fecAge: fec.dropped.expiredByTime,
        nackWindowResets: this.nack.stats().windowResets,
      },
      heldBytes: { frameBuffer: fbs.bytes, depacketizer: this.depacketizer.pendingBytes(), fec: fec.storedBytes },
      audio: { ...audioStats, avSync: this.avSync?.stats(), avOffsetMs: audioStats.packetsReceived > 0 && s?.latency.p50Ms !== undefined ? num(s.latency.p50Ms) - audioStats.mouthToEarMs.p50 : 0 },
    };
  }
}
