/**
 * The one camera encoder of a call, shared by every {@link PeerSession}: each
 * encoded frame goes to every session whose sender has a path up, at the
 * lowest of the sessions' target bitrates (why: the module comment of
 * src/call/multipath-call.ts). A session still connecting gets the stream
 * from the key frame its first connection asks for.
 */
import type { Clock } from '../core/clock.js';
import { CameraEncoder, type CameraEncoderStats } from '../codec/webcodecs.js';
import type { PeerSession } from './peer-session.js';
import type { MultipathCallOptions } from './types.js';

export interface SharedVideoEncoderDeps {
  opts: MultipathCallOptions;
  clock: Clock;
  /** The call's sessions, in join order. */
  sessions: () => Iterable<PeerSession>;
  onError: (e: Error) => void;
}

export class SharedVideoEncoder {
  private encoder: CameraEncoder | undefined;
  /** What the senders announce to their receivers (codec, camera size, frame rate); undefined until the encoder started. */
  streamInfo: { codec: string; width: number; height: number; fps: number } | undefined;
  /** Frame ids of the current encoder are offset by this (replaceTrack continues the stream's ids). */
  private frameIdBase = 0;
  /** Last frame id handed to the senders. */
  private lastFrameId = 0;
  /** Muted: the camera is sent as black frames (CameraEncoderOptions.isMuted); kept across `start` (a new camera stays muted). */
  muted = false;

  constructor(private readonly deps: SharedVideoEncoderDeps) {}

  /** An encoder was started (and not stopped since). */
  get running(): boolean {
    return this.encoder !== undefined;
  }

  get settings(): { width: number; height: number; fps: number } | undefined {
    return this.encoder?.settings;
  }

  stats(): CameraEncoderStats | undefined {
    return this.encoder?.stats();
  }

  requestKeyframe(): void {
    this.encoder?.requestKeyframe();
  }

  /**
   * The encoder's target (bps): the lowest target of the sessions that can
   * send now, else of all sessions; undefined with no sender.
   */
  targetBps(): number | undefined {
    let sending: number | undefined;
    let any: number | undefined;
    for (const s of this.deps.sessions()) {
      const t = s.targetBps ?? s.sender?.targetBitrateBps();
      if (t === undefined) continue;
      any = Math.min(any ?? t, t);
      if (s.canSend()) sending = Math.min(sending ?? t, t);
    }
    return sending ?? any;
  }

  /** Follow the sessions' targets (after a target change, a join or a leave). */
  applyBitrate(): void {
    const bps = this.targetBps();
    if (bps !== undefined) this.encoder?.setBitrate(bps);
  }

  /**
   * Start encoding `track` (stopping the current encoder). `continueIds`:
   * frame ids go on from the last one sent (replaceTrack: the same stream),
   * else they start over (a new stream on new senders).
   * @throws CodecError when the codec cannot be used.
   */
  async start(track: MediaStreamTrack, continueIds: boolean): Promise<void> {
    this.encoder?.stop();
    this.encoder = undefined;
    this.frameIdBase = continueIds ? this.lastFrameId : 0;
    if (!continueIds) {
      this.lastFrameId = 0;
      this.streamInfo = undefined;
    }
    const base = this.frameIdBase;
    const { opts, clock } = this.deps;
    const anyCanSend = (): boolean => {
      for (const s of this.deps.sessions()) if (s.canSend()) return true;
      return false;
    };
    const encoder = new CameraEncoder(track, {
      codec: opts.codec ?? 'h264',
      clock,
      bitrateBps: this.targetBps() ?? opts.startBitrateBps ?? 1_000_000,
      // Encode nothing until a path can carry it: frames sent nowhere would only be lost.
      shouldEncode: anyCanSend,
      keyframeIntervalMs: opts.keyframeIntervalMs,
      degradationPreference: opts.degradationPreference,
      temporalLayers: opts.temporalLayers,
      // Frame dropping before encoding when every usable path's queue (pacer +
      // datachannel bufferedAmount) exceeds the frame budget, for any session
      // that can send (the shared encoder follows the slowest one).
      dropBeforeEncode: (keyFrame, layer) => {
        let drop = false;
        for (const s of this.deps.sessions()) if (s.canSend() && s.sender?.shouldDropFrame(keyFrame, layer)) drop = true;
        return drop;
      },
      onFrame: (f) => {
        if (this.encoder !== encoder) return;
        // After replaceTrack the new encoder counts from 1 again: continue the stream's ids.
        const frame = base > 0 ? { ...f, frameId: f.frameId + base } : f;
        this.lastFrameId = frame.frameId;
        for (const s of this.deps.sessions()) if (s.canSend()) s.sender?.sendFrame(frame);
      },
      isMuted: () => this.muted,
      onError: this.deps.onError,
    });
    this.encoder = encoder;
    await encoder.start();
    const st = encoder.settings;
    this.streamInfo = { codec: encoder.codecString, width: st.width, height: st.height, fps: st.fps };
    for (const s of this.deps.sessions()) s.sender?.setStreamInfo(this.streamInfo);
  }

  /** Stop the encoder (frames it still holds are discarded); idempotent. The ids of a later `start(…, true)` go on. */
  stop(): void {
    this.encoder?.stop();
  }
}
