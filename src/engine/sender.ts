/**
 * The sender side of one multipath stream, I/O-free. The pipeline:
 *
 *   encoded frame -> packetize (src/wire/packetizer.ts)
 *     -> schedule over the paths (Converge §4.1 or a baseline, src/sched)
 *     -> FEC per path (Converge §4.3, src/fec/encoder.ts)
 *     -> pace each path at its congestion controller's rate (src/cc)
 *     -> send (SenderPath.send, one datagram per packet)
 *
 * and feedback in: receiver reports feed each path's estimator and prober,
 * NACKs the retransmission history (src/feedback/nack-responder.ts), key
 * frame requests the encoder (coalesced), QoE feedback the scheduler. The
 * encoder target is min(sum S_i over usable paths, app max) (uncoupled
 * congestion control, Converge §4.1), with congestion-window pushback. Path
 * liveness lives in {@link SenderPaths}, failure handling in {@link PathRecovery}.
 *
 * The browser and the simulator drive the same object: encoded frames go to {@link SenderEngine.sendFrame},
 * receiver packets to {@link SenderEngine.onControl}; {@link SenderEngine.tick} runs at {@link SenderEngine.nextWakeUs}.
 */
import { CongestionWindowPushback } from '../cc/congestion-window-pushback.js';
import { resolveEstimator } from '../cc/registry.js';
import { ProbeSender } from '../cc/probe-sender.js';
import type { BandwidthEstimator } from '../cc/types.js';
import { integerClock } from '../core/clock.js';
import { Emitter } from '../core/emitter.js';
import type { Clock } from '../core/clock.js';
import { MAX_PATHS, Priority } from '../core/types.js';
import type { Assignment, OutgoingPacket, PathId, PathState, PathTransportState, QoeFeedback } from '../core/types.js';
import { DEFAULT_FEC_CODE, fecCode } from '../fec/codes.js';
import { PathFecEncoder, type FecEncoder } from '../fec/encoder.js';
import { resolveFecPolicy } from '../fec/factory.js';
import type { FecPolicyName } from '../fec/types.js';
import { NackResponder } from '../feedback/nack-responder.js';
import { resolveScheduler, schedulerEntry } from '../sched/factory.js';
import { LatencyFrameDropper } from '../sched/min-latency.js';
import { FeedbackSeqFilter } from '../sched/feedback-filter.js';
import { PathHysteresis } from '../sched/path-hysteresis.js';
import { fastestPath } from '../sched/path-util.js';
import type { Scheduler, SchedulerName } from '../sched/types.js';
import { encodeControl, encodePacket } from '../wire/encode.js';
import type { EncodedFrameInput } from '../wire/packetization.js';
import { Packetizer } from '../wire/packetizer.js';
import type { PacketBody, StreamInfoMessage } from '../wire/types.js';
import { AudioSender, type AudioFrameInput } from './audio-sender.js';
import { RateMeter } from './rate-meter.js';
import { AudioRateController, DEFAULT_AUDIO_STEPS, type AudioEncoding } from './audio-rate.js';
import { FrameDropper } from './frame-dropper.js';
import { KeyFrameDelivery, KeyframeRequestGate } from './keyframe-gate.js';
import { PathHealth } from './path-health.js';
import { PathRecovery } from './path-recovery.js';
import { nonNegativeMs, resolveSenderConfig, type ResolvedSenderConfig, type SenderEngineConfig, type SenderEvents } from './sender-config.js';
import { SenderPath, createPathPacer, type QueuedItem } from './sender-path.js';
import { SenderPaths } from './sender-paths.js';
import type { PathSink, SenderStats } from './types.js';

export type { SenderEngineConfig, SenderEvents } from './sender-config.js';

/** No retransmission onto a path whose queue holds more than this (ms at its rate). */
const MAX_RTX_QUEUE_MS = 300;
/** RACK resends only packets first sent at most the lowest SRTT + this long ago (ms): the receiver's longest NACK reorder wait when it was measured (src/feedback/nack.ts maxReorderWindowMs, 200 ms until stop 43, now 100; the 100 ms cap was measured with this at 200); later it is no faster than the NACK. */
const RACK_MAX_LEAD_MS = 200;
/** A report copy from another path is applied only when the path's own last report is older than this (µs; 2 report intervals). */
const REPORT_COPY_AFTER_US = 100_000;
/** Padding bytes of a probe packet (about a full packet with the envelope). */
const PROBE_PADDING_BYTES = 1150;
/** A typical frame for the fast-path choice (Converge Algorithm 1): 10 packets of 1200 bytes (bits). */
const TYPICAL_FRAME_BITS = 10 * 1200 * 8;

/** See the module comment. */
export class SenderEngine {
  readonly streamId: number;
  private readonly clock: Clock;
  private readonly scheduler: Scheduler;
  private readonly fec: FecEncoder;
  private readonly packetizer: Packetizer;
  private readonly paths: SenderPaths;
  private readonly history: NackResponder;
  private readonly recovery: PathRecovery;
  private readonly audio: AudioSender;
  private readonly dropper: FrameDropper;
  /** Undefined when `audioRate` is false: the first step always. */
  private readonly audioRate: AudioRateController | undefined;
  /** When the last video frame was sent (µs). */
  private lastVideoUs = -Infinity;
  private readonly latencyDropper = new LatencyFrameDropper();
  private readonly pushback = new CongestionWindowPushback();
  /**
   * Per path: the rate (bps, last second) of the video the scheduler gave it
   * (media, FEC, retransmissions), without audio, probe copies and padding.
   * Its application-limited test (see onControl 'report').
   */
  private readonly mediaRates = new Map<PathId, RateMeter>();
  private readonly keyDelivery = new KeyFrameDelivery();
  private readonly qoeSeqs = new FeedbackSeqFilter();
  private readonly cfg: ResolvedSenderConfig;
  private readonly createEstimator: (pathId: PathId) => BandwidthEstimator;
  private readonly pacerCfg: SenderEngineConfig['pacer'];
  private readonly events = new Emitter<SenderEvents>();
  private streamInfo: StreamInfoMessage | undefined;
  private lastStreamInfoUs = -Infinity;
  private lastTargetBps = 0;
  private readonly keyframes: KeyframeRequestGate;
  private readonly useQoeFeedback: boolean;
  private readonly probing: boolean;
  private fps = 30;
  private readonly c = {
    framesSent: 0,
    keyframesSent: 0,
    bytesSent: 0,
    keyframeRequestsReceived: 0,
    retransmissionsSent: 0,
    retransmissionsSkipped: 0,
    rackLost: 0,
    rackRetransmissionsSent: 0,
    rackTooOld: 0,
    fecPacketsSent: 0,
    mediaPacketsSent: 0,
    qoeFeedbackReceived: 0,
    qoeFeedbackIgnored: 0,
    keyframeRequestsSuppressed: 0,
    keyframeRequestsAfterKeyFrame: 0,
    keyFramesHeldBack: 0,
    stalePacketsPurged: 0,
    reportCopiesDropped: 0,
  };

  /**
   * @throws RangeError for negative frame-dropping settings, an upperLayerDropFactor outside [0, 1], a protectionOverheadMax outside [0, 1], or a gapKeepMs or pushbackQueueMs that is not a finite number >= 0.
   * @throws FecError `unknown-code` / `unknown-policy` for a FEC code or policy name not registered.
   */
  constructor(config: SenderEngineConfig) {
    this.clock = integerClock(config.clock);
    this.streamId = config.streamId ?? 0;
    this.scheduler = resolveScheduler(config.scheduler ?? 'converge', { singlePath: config.singlePath });
    this.fec = new PathFecEncoder(resolveFecPolicy(config.fec ?? 'path'), this.streamId, typeof config.fecCode === 'object' ? config.fecCode : fecCode(config.fecCode ?? DEFAULT_FEC_CODE));
    this.cfg = resolveSenderConfig(config);
    this.keyframes = new KeyframeRequestGate(this.cfg.keyframeCoalesceTransmit);
    const h = config.pathHysteresis ?? true;
    const hysteresis = h === false ? undefined : new PathHysteresis(h === true ? {} : h);
    this.paths = new SenderPaths(
      this.scheduler,
      hysteresis,
      new PathHealth(config.pathHealth),
      this.cfg.fastFailover,
      this.cfg.fallbackEstablishMs * 1000,
      this.cfg.probation,
      config.probationMinAltFraction,
      config.gapMinAltFraction ?? 0.1,
      nonNegativeMs('gapKeepMs', config.gapKeepMs ?? 1000) * 1000,
    );
    this.dropper = new FrameDropper(this.cfg);
    this.audioRate = config.audioRate === false ? undefined : new AudioRateController(typeof config.audioRate === 'object' ? config.audioRate : {});
    this.packetizer = new Packetizer({ mtuBytes: this.cfg.mtuBytes, streamId: this.streamId });
    this.history = new NackResponder(this.cfg.historyPackets);
    // One estimator group per sender: coupled estimators (fractal) share their coordinator through it.
    const group = new Map<string, unknown>();
    this.createEstimator =
      config.createEstimator ??
      (() => resolveEstimator(config.estimator ?? schedulerEntry(this.scheduler.name)?.estimator ?? 'gcc', { startBps: this.cfg.startBitrateBps, maxBps: this.pathMaxBps(), group }));
    this.pacerCfg = config.pacer;
    this.useQoeFeedback = config.qoeFeedback ?? true;
    this.probing = config.probing ?? true;
    this.audio = new AudioSender(this.paths, this.streamId, config.audio, (id) => this.scheduler.name !== 'single' || this.scheduler.isEnabled(id));
    this.recovery = new PathRecovery({
      paths: this.paths,
      history: this.history,
      streamId: this.streamId,
      cfg: this.cfg,
      lastKeyFrameId: () => this.keyframes.lastKeyFrameId,
      keyFrameSentSince: (us) => this.keyframes.sentSince(us),
      pathMaxBps: () => this.pathMaxBps(),
      requestKeyframe: (reason) => this.events.emit('keyframeNeeded', reason),
    });
  }

  /** Ceiling of one path's estimate (bps): above the app cap, so a path can carry the whole stream. */
  private pathMaxBps(): number {
    return Math.max(this.cfg.maxBitrateBps * 1.5, 2_000_000);
  }

  get schedulerName(): SchedulerName {
    return this.scheduler.name;
  }

  get fecPolicyName(): FecPolicyName {
    return this.fec.name;
  }

  /** Add a listener (src/core/emitter.ts); returns its unsubscribe function. Listener exceptions propagate. */
  on<K extends keyof SenderEvents>(event: K, handler: SenderEvents[K]): () => void {
    return this.events.on(event, handler);
  }

  /**
   * Add a path with the sink its packets go to.
   * @throws RangeError for an id outside [0, MAX_PATHS) or one already added.
   */
  addPath(pathId: PathId, sink: PathSink, state: PathTransportState = 'connected'): void {
    if (!Number.isInteger(pathId) || pathId < 0 || pathId >= MAX_PATHS) throw new RangeError(`path id ${pathId} outside [0, ${MAX_PATHS})`);
    if (this.paths.has(pathId)) throw new RangeError(`path ${pathId} already added`);
    const now = this.clock.nowUs();
    const estimator = this.createEstimator(pathId);
    // An estimator whose target already is its pacing rate (RTC-BBR) names its own pacing factor; the app's config wins.
    const pacerCfg = estimator.pacingFactor !== undefined && this.pacerCfg?.pacingFactor === undefined ? { ...this.pacerCfg, pacingFactor: estimator.pacingFactor } : this.pacerCfg;
    const pacer = createPathPacer(estimator.targetRateBps(), pacerCfg);
    const prober = this.probing ? estimator.createProber?.({ maxBps: this.pathMaxBps(), alrIntervalMs: 5000 }) : undefined;
    const path = new SenderPath(pathId, sink, estimator, pacer, prober && new ProbeSender(prober, estimator), state, now);
    path.departureTimes = this.cfg.departureTimes;
    path.queuedMs = this.cfg.queuedDeliveryMs;
    path.queuedRatio = this.cfg.queuedDeliveryRatio;
    this.paths.add(path, now);
    this.lastStreamInfoUs = -Infinity; // announce the stream on the new path soon
  }

  /** Remove a path; its queued packets are dropped (NACK recovers them). */
  removePath(pathId: PathId): void {
    this.mediaRates.delete(pathId);
    this.paths.remove(pathId, this.clock.nowUs());
  }

  /** Transport state change of a path (ICE connected, failed, closed). Unknown paths are ignored. */
  setPathState(pathId: PathId, state: PathTransportState): void {
    const p = this.paths.get(pathId);
    if (!p) return;
    p.linkState = state;
    this.paths.manager.onTransportState(pathId, p.adminEnabled ? state : 'closed', this.clock.nowUs());
    this.emitTargetChange();
  }

  /**
   * The app's switch for one path (`MultipathCall.setPathEnabled`): a
   * disabled path carries nothing of ours (the path manager holds it down,
   * its load moves to the others, which are probed for it as in a
   * failover). Unlike a transport failure it is no fault: the path
   * hysteresis neither counts nor demotes it, so a path re-enabled while its
   * transport is connected is up at once, probed at the rate it had (its
   * estimator measures it from there) and carries media within an RTT or
   * two. A path that was demoted for faults of its own before stays demoted
   * until it proves stable. Unknown paths are ignored.
   */
  setPathEnabled(pathId: PathId, enabled: boolean): void {
    const p = this.paths.get(pathId);
    if (!p || p.adminEnabled === enabled) return;
    const now = this.clock.nowUs();
    p.adminEnabled = enabled;
    if (!enabled) p.rateAtDisable = p.estimator.targetRateBps();
    this.paths.manager.onTransportState(pathId, enabled ? p.linkState : 'closed', now);
    if (enabled && p.linkState === 'connected') {
      const bps = p.rateAtDisable;
      p.rateAtDisable = undefined;
      if (p.prober && bps !== undefined) p.prober.probeFirst(now, Math.min(this.pathMaxBps(), bps));
    }
    this.emitTargetChange();
  }

  /** The app's switch of the path (see {@link setPathEnabled}); false for unknown paths. */
  isPathEnabled(pathId: PathId): boolean {
    return this.paths.get(pathId)?.adminEnabled === true;
  }

  /** Describe the stream (codec, size, frame rate); repeated to the receiver every second. */
  setStreamInfo(info: Omit<StreamInfoMessage, 'streamId'>): void {
    this.streamInfo = { ...info, streamId: this.streamId };
    if (info.fps > 0) this.fps = info.fps;
    this.lastStreamInfoUs = -Infinity;
  }

  /**
   * The Opus encoding (bitrate bps, frame duration µs) the audio encoder
   * should use now: from the usable paths' summed rate
   * (src/engine/audio-rate.ts); 32 kbps / 20 ms with `audioRate: false`.
   */
  audioEncoding(): AudioEncoding {
    if (!this.audioRate) return DEFAULT_AUDIO_STEPS[0];
    const now = this.clock.nowUs();
    // No video frame for 1 s: an audio-only call (AudioRateConfig.audioOnlyShare).
    return this.audioRate.update(now, this.paths.usableRateBps(now, this.cfg.protectionOverheadMax), now - this.lastVideoUs > 1_000_000);
  }

  /** Encoder target (bps): min(sum S_i over up, not suspect, enabled and not demoted paths, app max), floored. */
  targetBitrateBps(): number {
    const now = this.clock.nowUs();
    let sum = this.paths.usableRateBps(now, this.cfg.protectionOverheadMax);
    // Packets the scheduler moves between paths (Converge Eq. 2) must not overload the receiving path.
    const f = this.scheduler.encoderRateFraction?.() ?? 1;
    if (f > 0 && f < 1) sum *= f;
    // Congestion-window pushback (libwebrtc CongestionWindowPushbackController).
    if (this.pushback.ratio < 1) sum *= this.pushback.ratio;
    sum -= this.audio.rateBps(now); // audio is allocated first (libwebrtc BitrateAllocator)
    return Math.max(this.cfg.minBitrateBps, Math.min(this.cfg.maxBitrateBps, sum));
  }

  /** Congestion-window pushback update (src/cc/congestion-window-pushback.ts) over the usable paths. */
  private updatePushback(now: number): void {
    if (!this.cfg.cwndPushback || !this.pushback.due(now)) return;
    const w = this.paths.congestionWindow(now, this.cfg.pushbackQueueMs);
    this.pushback.update(w.windowBytes, w.outstandingBytes);
  }

  /**
   * Ask before encoding a camera frame: true = skip it (counted in
   * `framesDroppedBeforeEncode`). A delta frame is dropped when every usable
   * path's sender queue (pacer + bufferedAmount) would take more than
   * `dropQueueFrames` frame intervals to drain at the path's rate
   * (src/engine/frame-dropper.ts).
   * @param temporalLayer the layer the frame would be encoded in (temporal
   *   layers; undefined = none): an upper-layer frame is dropped at
   *   `upperLayerDropFactor` x the queue budget.
   * With `holdKeyFrameWhileBuffered`, a key frame is dropped too while the
   * last key frame still waits in the datachannel of every connected media
   * path (counted in `keyFramesHeldBack`); the caller keeps the key frame
   * pending, so the next camera frame is asked again.
   */
  shouldDropFrame(keyFrame: boolean, temporalLayer?: number): boolean {
    // Key-frame economy (SenderEngineConfig.holdKeyFrameWhileBuffered): the last key frame still
    // waits in every media path's datachannel, which cannot discard it; a new one would queue
    // behind it and arrive later still. The caller keeps the key frame pending for the next frame.
    if (keyFrame && this.cfg.holdKeyFrameWhileBuffered && this.c.keyframesSent > 0 && this.paths.keyFrameBufferedOnEvery((id) => this.scheduler.name !== 'single' || this.scheduler.isEnabled(id))) {
      this.c.keyFramesHeldBack++;
      return true;
    }
    // Schedulers that predict per-packet latency (overlay-ucb) add their frame-drop rule (Zhang & Lei §3.3 Eq. 15).
    if (this.scheduler.minExpectedLatencyMs && this.latencyDropper.shouldDrop(0, this.scheduler.minExpectedLatencyMs(this.pathStates()), keyFrame)) return true;
    return this.dropper.shouldDrop(keyFrame, this.fps, () => this.paths.minDrainMs(this.clock.nowUs()), temporalLayer);
  }

  /**
   * The route under `pathId` changed while the path stays (an ICE restart
   * onto another TURN relay): its estimator forgets what it measured on the
   * old route (BandwidthEstimator.onRouteChange). Unknown ids are ignored.
   */
  onPathRouteChanged(pathId: PathId): void {
    const p = this.paths.get(pathId);
    if (!p) return;
    const now = this.clock.nowUs();
    p.estimator.onRouteChange?.(now);
    this.recovery.onRouteChange(p, now);
  }

  /** Snapshot of the paths as the scheduler sees them. */
  pathStates(): PathState[] {
    return this.paths.states(this.clock.nowUs());
  }

  /**
   * Packetize, schedule and queue one encoded frame. Returns the number of
   * packets queued (media + FEC + probes); 0 when no path is up.
   */
  sendFrame(frame: EncodedFrameInput): number {
    const now = this.clock.nowUs();
    const frags = this.packetizer.packetize(frame);
    this.lastVideoUs = now;
    this.c.framesSent++;
    if (frame.keyFrame) {
      this.c.keyframesSent++;
      this.keyframes.onKeyFrameSent(frame.frameId, frame.data.length, this.targetBitrateBps(), now);
      this.keyDelivery.onKeyFrame(frags.map((f) => f.flowSeq));
      // A key frame never waits behind frames it makes useless: drop this
      // stream's queued frame packets (media, retransmissions, FEC) of older frames.
      const sid = this.streamId;
      for (const p of this.paths.values()) {
        p.keyTailBytes = undefined;
        this.c.stalePacketsPurged += p.pacer.purge((it) => !it.probe && it.packet.streamId === sid && it.packet.frameId !== frame.frameId);
      }
    }
    const layer = frame.temporalLayer;
    const packets: OutgoingPacket[] = frags.map((f) => ({
      streamId: this.streamId,
      flowSeq: f.flowSeq,
      frameId: f.frameId,
      priority: f.priority,
      nalClass: f.nalClass,
      sizeBytes: f.sizeBytes,
      body: f.body,
      // Temporal layers: the scheduler gives the base layer the better path (ConvergeConfig.baseLayerFastPath).
      ...(layer !== undefined ? { temporalLayer: layer } : {}),
    }));
    const states = this.pathStates();
    const media = this.scheduler.schedule(packets, states, now);
    let queued = this.enqueue(media, now, true);
    const fecPackets = this.fec.protect(media, states, frame, this.fps, now);
    if (fecPackets.length > 0) queued += this.enqueue(this.scheduler.schedule(fecPackets, states, now), now, false);
    // Remember what was sent for NACKs (first send's path).
    for (const a of media) if (!a.probe) this.history.record(a.packet, a.pathId, now);
    this.flush(now);
    return queued;
  }

  /**
   * Send one encoded audio frame now: on the fastest path, plus a copy on a
   * second path when that one is lossy, ahead of all queued video
   * (src/engine/audio-sender.ts). Returns the packets written (0: no path up).
   * @throws WireError ERR_INVALID_MESSAGE for a frame the wire rejects (over 1275 bytes, bad duration or capture time).
   */
  sendAudio(frame: AudioFrameInput): number {
    return this.audio.send(frame, this.clock.nowUs());
  }

  private enqueue(assignments: Assignment[], now: number, isMedia: boolean): number {
    let n = 0;
    for (const a of assignments) {
      const p = this.paths.get(a.pathId);
      if (!p) continue;
      const item: QueuedItem = { priority: a.packet.priority, sizeBytes: a.packet.sizeBytes, packet: a.packet, probe: a.probe === true };
      if (!p.pacer.enqueue(item, now)) {
        p.stats.pacerDropped++;
        continue;
      }
      if (isMedia && !a.probe && !a.packet.isRetransmission) {
        p.stats.mediaPacketsSent++;
        this.c.mediaPacketsSent++;
        if (a.packet.frameId === this.keyframes.lastKeyFrameId) p.keyQueuedUs = now;
      }
      n++;
    }
    return n;
  }

  /**
   * A control packet from the receiver (report, NACK, keyframe request, QoE
   * feedback). Other kinds are ignored. `viaPath` is the path it arrived on;
   * `sendTimeUs` its header's send time (µs, the receiver's clock): a key
   * frame request sent after the last key frame was complete at the receiver
   * is not coalesced into it (src/engine/keyframe-gate.ts KeyFrameDelivery).
   */
  onControl(body: PacketBody, viaPath: PathId, sendTimeUs?: number): void {
    const now = this.clock.nowUs();
    switch (body.kind) {
      case 'report': {
        const r = body.report;
        const p = this.paths.get(r.pathId);
        if (!p) return;
        // A copy that came on another path (ReceiverEngineConfig.reportCopies) only counts while the
        // path's own reports are overdue: its RTT sample mixes this path's forward delay with the other
        // path's return delay, which would bias the one-way delay the scheduler derives from SRTT.
        const copy = viaPath !== r.pathId;
        if ((copy && now - (p.estimator.lastReportUs() ?? -Infinity) <= REPORT_COPY_AFTER_US) || !p.acceptReport(r.reportTimeUs)) {
          this.c.reportCopiesDropped++;
          return;
        }
        const gap = this.recovery.reportGap(p, now);
        // Restore first: this report already says what the silence lost.
        this.recovery.onReport(p, now);
        p.estimator.onReport(r, now);
        // Loss detection on this path alone (RACK): tracked always (its counters), acted on with `rack`.
        this.onRackLoss(p.rack.onReport(r.arrivals, now, p.rackReorderWindowUs(), this.onDelivered), now);
        p.onArrivals(r.arrivals);
        this.recovery.onRouteReport(p, r, now);
        this.paths.manager.onReport(r.pathId, now);
        if (r.fcdUs !== undefined) this.scheduler.onFcd?.(r.fcdUs / 1000, now);
        this.recovery.learnGap(p, now, gap);
        // The path is application-limited when the video the scheduler gives it is well
        // below its estimate: periodic probes then keep the estimate real (else an idle
        // path's estimate cannot grow and its Eq. 1 share shrinks for good). Audio and the
        // scheduler's probe copies are left out: they are fixed small streams (~40 kbps of
        // audio, a packet per 100 ms) that say nothing about the path's capacity. Counted
        // in, they held an idle backup path's estimate near their own rate after one
        // overuse episode (GCC raises it by at most 1.5 x acked + 10 kbps, libwebrtc
        // aimd_rate_control.cc, and at ~0.7 x the estimate the path was not app-limited,
        // so nothing probed it): when the main path collapsed the backup started from
        // ~200 kbps on a 35 Mbps link (issue 10: audio cost converge ~6 s of freeze).
        p.prober?.onReport(r, now, (this.mediaRates.get(p.id)?.rateBps(now) ?? 0) < 0.6 * p.estimator.targetRateBps());
        break;
      }
      case 'nack':
        if (body.nack.streamId === this.streamId) this.onNack(body.nack.flowSeqs, now);
        break;
      case 'keyframeRequest':
        if (body.keyframeRequest.streamId !== this.streamId) return;
        this.c.keyframeRequestsReceived++;
        // The last key frame may answer this request (src/engine/keyframe-gate.ts),
        // also while it still waits at this sender: a new one would queue behind it.
        // Not when the receiver sent the request after that key frame was complete there.
        if (!this.keyframes.admit(now, this.paths.minSrttMs()) || (this.c.keyframesSent > 0 && this.paths.holdsFrame(this.streamId, this.keyframes.lastKeyFrameId))) {
          if (!this.keyDelivery.askedAfter(sendTimeUs)) {
            this.c.keyframeRequestsSuppressed++;
            return;
          }
          this.c.keyframeRequestsAfterKeyFrame++;
        }
        this.events.emit('keyframeNeeded', 'pli');
        break;
      case 'qoe':
        this.onQoe(body.qoe, now);
        break;
    }
  }

  private onQoe(fb: QoeFeedback, now: number): void {
    if (this.qoeSeqs.accept(fb.seq) === 'duplicate') return; // the same feedback arrives once per path, in any order
    this.c.qoeFeedbackReceived++;
    if (!this.useQoeFeedback) return;
    // The receiver judges "late" against the lowest-delay path; if that path carries
    // little (its rate is low), the packets of the path that carries the frame look
    // late. Taking packets off our fast path (Algorithm 1: least completion time)
    // is never right, so negative feedback naming it is dropped (counted).
    if (fb.alpha < 0 && fb.pathId === fastestPath(this.pathStates(), TYPICAL_FRAME_BITS)) {
      this.c.qoeFeedbackIgnored++;
      return;
    }
    this.scheduler.onQoeFeedback(fb, now);
  }

  private readonly onDelivered = (flowSeq: number, arrivalUs: number): void => {
    this.history.onDelivered(flowSeq);
    this.keyDelivery.onDelivered(flowSeq, arrivalUs);
  };

  /**
   * Media packets the per-path RACK declared lost: resent at once with `rack`
   * on (SenderEngineConfig.rack), through the NACK rules, while RACK is
   * still ahead of the receiver's NACK: first sent at most the lowest SRTT +
   * RACK_MAX_LEAD_MS ago (the receiver's longest reorder wait when measured, 200 ms; now 100). Later
   * detections (a path whose queue holds hundreds of ms, a path back from
   * an outage) are left to the receiver, which NACKs only what it still
   * needs: measured, resending them was 90 % of RACK's resends and useless
   * (cellular check half, packets 0.4-1 s old).
   */
  private onRackLoss(flowSeqs: readonly number[], now: number): void {
    if (flowSeqs.length === 0) return;
    this.c.rackLost += flowSeqs.length;
    if (!this.cfg.rack) return;
    const maxAgeUs = (this.paths.minSrttMs() + RACK_MAX_LEAD_MS) * 1000;
    const young = flowSeqs.filter((f) => {
      const h = this.history.get(f);
      return h !== undefined && now - h.sentUs <= maxAgeUs;
    });
    this.c.rackTooOld += flowSeqs.length - young.length;
    if (young.length > 0) this.resend(young, now, false);
  }

  private onNack(seqs: readonly number[], now: number): void {
    // Loss on a path during its report silence: its forward direction is not (only) a feedback gap (SenderPaths.keptThroughGap).
    // "During" = sent after what the path's last report could cover (its arrival less one SRTT): with the NACK reorder
    // wait at 100 ms the first NACK can name a packet sent just before that report arrived, and the next one comes late.
    for (const f of seqs) {
      const h = this.history.get(f);
      const p = h && this.paths.get(h.pathId);
      // (A third-party estimator's NaN SRTT counts as 0: the rule as it was.)
      if (p && h.sentUs >= (p.estimator.lastReportUs() ?? 0) - (p.estimator.srttMs() * 1000 || 0)) p.nackedInGapUs = now;
    }
    this.resend(seqs, now, true);
  }

  /** Retransmit these flowSeqs on the best usable path (NackResponder.onNack decides which are worth it). */
  private resend(seqs: readonly number[], now: number, fromNack: boolean): void {
    const guardUs = this.paths.minSrttMs() * 1000 * 0.75;
    const nacksPerPath = new Map<PathId, number>();
    const rtx = this.history.onNack(seqs, now, guardUs, this.keyframes.lastKeyFrameId, this.streamId, (pathId) => nacksPerPath.set(pathId, (nacksPerPath.get(pathId) ?? 0) + 1), fromNack);
    for (const [pathId, n] of nacksPerPath) this.fec.onNack(pathId, n, now);
    if (rtx.length === 0) return;
    for (const a of this.scheduler.schedule(rtx, this.paths.retransmissionStates(now), now)) {
      const p = this.paths.get(a.pathId);
      if (!p || a.probe) continue;
      // A retransmission behind more than MAX_RTX_QUEUE_MS of queue arrives too late to help
      // and adds to the congestion that probably lost the packet: skip it.
      const drainBps = Math.max(1, p.pacer.pacingRateBps());
      if ((p.queuedBytes() * 8 * 1000) / drainBps > MAX_RTX_QUEUE_MS) {
        this.c.retransmissionsSkipped++;
        continue;
      }
      if (p.pacer.enqueue({ priority: Priority.Retransmission, sizeBytes: a.packet.sizeBytes, packet: a.packet, probe: false }, now)) {
        p.stats.retransmissionsSent++;
        this.c.retransmissionsSent++;
        if (!fromNack) this.c.rackRetransmissionsSent++;
      }
    }
    this.flush(now);
  }

  /** Periodic work: pacing, estimator clocks, path liveness and recovery, stream info. */
  tick(): void {
    const now = this.clock.nowUs();
    for (const p of this.paths.values()) {
      p.estimator.onTick(now);
      if (now >= p.rack.nextCheckUs) this.onRackLoss(p.rack.detect(now, p.rackReorderWindowUs()), now);
    }
    this.recovery.tick(now);
    for (const ev of this.paths.manager.tick(now, this.scheduler)) {
      if (ev.type === 'path-up') this.lastStreamInfoUs = -Infinity; // announce the stream on it at once
      this.events.emit('pathEvent', ev);
    }
    this.paths.sendKeepalives(now);
    if (this.streamInfo && now - this.lastStreamInfoUs >= this.cfg.streamInfoIntervalMs * 1000) {
      // Only counts as announced once some path carried it.
      if (this.paths.broadcast({ kind: 'streamInfo', streamInfo: this.streamInfo }, now) > 0) this.lastStreamInfoUs = now;
    }
    this.updatePushback(now);
    this.emitTargetChange();
    this.flush(now);
  }

  /**
   * Emit 'targetBitrate' when the encoder target moved by more than 5 % since
   * the last one emitted. Called every tick, and at once when a path changes
   * transport state or is switched by the app: a path that comes up changes
   * the target before the next tick, and the app's encoder may take its next
   * frame (its first, at call start) in between. Not from addPath (an owner
   * may subscribe after adding its paths); an owner that subscribes late reads
   * `targetBitrateBps()` (PeerSession.attachSender).
   */
  private emitTargetChange(): void {
    const target = this.targetBitrateBps();
    if (Math.abs(target - this.lastTargetBps) > 0.05 * Math.max(1, this.lastTargetBps)) {
      this.lastTargetBps = target;
      this.events.emit('targetBitrate', target);
    }
  }

  /** Send what the probers and pacers allow now. */
  private flush(now: number): void {
    for (const p of this.paths.values()) {
      if (p.prober && this.paths.isUp(p)) {
        p.prober.sendDue(
          now,
          () => p.sink.bufferedAmount(),
          p.queuedBytes(),
          () => {
            const sent = p.send((pathSeq) => encodeControl({ pathId: p.id, pathSeq, sendTimeUs: now }, { kind: 'padding', padding: { size: PROBE_PADDING_BYTES } }), now, { drain: false });
            if (sent) {
              this.paths.manager.onDataSent(p.id, now);
              p.stats.probesSent++;
            }
            return sent;
          },
        );
      }
      p.measureDrain(now);
      p.observeDepartures(now);
      // A path with a standing queue is paced at what it delivered (SenderEngineConfig.queuedDeliveryMs).
      const rate = p.rateBps();
      p.pacer.setRateBps(rate);
      const cap = p.deliveryCapBps();
      if (cap < p.pacer.pacingRateBps()) p.pacer.setRateBps((rate * cap) / p.pacer.pacingRateBps());
      const { send, dropped } = p.pacer.poll(now, p.sink.bufferedAmount());
      p.stats.pacerDropped += dropped.length;
      // A packet the pacer dropped (too old) is still answered when the receiver NACKs it:
      // the NACK says the receiver still waits for it, and one retransmission is far
      // cheaper than the key frame it would otherwise need after its NACKs go unanswered
      // (~3 rounds, 0.5 s of freeze). A retransmission behind more than MAX_RTX_QUEUE_MS
      // of queue is still skipped (onNack).
      for (const item of send) this.transmit(p, item, now);
    }
  }

  private transmit(p: SenderPath, item: QueuedItem, now: number): void {
    const media = !item.packet.isFec && item.packet.streamId === this.streamId;
    const sent = p.send(
      (pathSeq) => encodePacket({ pathId: p.id, pathSeq, sendTimeUs: now }, item.packet.isFec ? 'fec' : 'media', item.packet.body),
      now,
      media ? { flowSeq: item.packet.flowSeq, copy: item.probe } : {},
    );
    if (!sent) {
      p.stats.sendFailures++;
      return;
    }
    this.paths.manager.onDataSent(p.id, now);
    this.c.bytesSent += sent.bytes;
    if (item.probe) {
      p.stats.probesSent++;
      return;
    }
    let mr = this.mediaRates.get(p.id);
    if (mr === undefined) {
      mr = new RateMeter(1_000_000);
      this.mediaRates.set(p.id, mr);
    }
    mr.add(now, sent.bytes);
    if (this.cfg.protectionOverheadMax > 0 && (item.packet.isFec || item.packet.isRetransmission)) p.protection.add(now, sent.bytes);
    if (item.packet.frameId === this.keyframes.lastKeyFrameId && item.packet.streamId === this.streamId) p.keyTailBytes = p.stats.bytesSent;
    const pr = item.packet.priority;
    if (pr === Priority.Keyframe) p.stats.keyframePacketsSent++;
    else if (pr === Priority.Sps) p.stats.spsPacketsSent++;
    else if (pr === Priority.Pps) p.stats.ppsPacketsSent++;
    if (item.packet.isFec) {
      p.stats.fecPacketsSent++;
      this.c.fecPacketsSent++;
    }
  }

  /** When {@link tick} should run next (µs): the earliest pacer release or probe packet, at most 20 ms away. */
  nextWakeUs(): number {
    const now = this.clock.nowUs();
    let next = now + 20_000;
    for (const p of this.paths.values()) {
      const t = p.pacer.nextPollUs(now);
      if (t !== undefined && t < next) next = t;
      const pt = p.prober?.nextUs(now);
      if (pt !== undefined && pt < next) next = pt;
    }
    return Math.max(next, now);
  }

  /** True when at least one path the scheduler uses (or a single path's last resort, SenderPaths.lastResort) can carry packets now. */
  hasUpPath(): boolean {
    return this.paths.hasUpPath(this.clock.nowUs());
  }

  /** Is the path up (connected and reporting) right now? */
  isPathUp(pathId: PathId): boolean {
    return this.paths.manager.isUp(pathId);
  }

  stats(): SenderStats {
    const now = this.clock.nowUs();
    const paths = this.paths.stats(now);
    const r = this.recovery.c;
    const h = this.history.stats();
    const c = this.c;
    return {
      framesSent: c.framesSent,
      keyframesSent: c.keyframesSent,
      bytesSent: c.bytesSent,
      keyframeRequestsReceived: c.keyframeRequestsReceived,
      nacksReceived: h.nacksReceived,
      retransmissionsSent: c.retransmissionsSent + r.retransmissionsSent,
      retransmissionsUnavailable: h.retransmissionsUnavailable,
      retransmissionsTooOld: h.retransmissionsTooOld,
      retransmissionsSkipped: c.retransmissionsSkipped,
      rackLost: c.rackLost,
      rackRetransmissionsSent: c.rackRetransmissionsSent,
      rackTooOld: c.rackTooOld,
      rackSpurious: [...this.paths.values()].reduce((n, p) => n + p.rack.c.spuriousMedia, 0),
      fecPacketsSent: c.fecPacketsSent,
      mediaPacketsSent: c.mediaPacketsSent,
      qoeFeedbackReceived: c.qoeFeedbackReceived,
      qoeFeedbackIgnored: c.qoeFeedbackIgnored,
      keyframeRequestsSuppressed: c.keyframeRequestsSuppressed,
      keyframeRequestsAfterKeyFrame: c.keyframeRequestsAfterKeyFrame,
      framesDroppedBeforeEncode: this.dropper.dropped + c.keyFramesHeldBack,
      keyFramesHeldBack: c.keyFramesHeldBack,
      stalePacketsPurged: c.stalePacketsPurged,
      reportCopiesDropped: c.reportCopiesDropped,
      pathRestores: r.pathRestores,
      failoverDuplicates: r.failoverDuplicates,
      failoverSkipped: r.failoverSkipped,
      pushbackRatio: this.pushback.ratio,
      targetBitrateBps: this.targetBitrateBps(),
      fecOverheadPct: c.mediaPacketsSent > 0 ? (100 * c.fecPacketsSent) / c.mediaPacketsSent : 0,
      paths,
      audio: { ...this.audio.stats(now), encodingChanges: this.audioRate?.changes ?? 0 },
    };
  }

  /** Per-path estimator internals for plots. */
  estimatorStats(): Array<{ id: PathId } & ReturnType<BandwidthEstimator['stats']>> {
    return [...this.paths.values()].map((p) => ({ id: p.id, ...p.estimator.stats() }));
  }
}
