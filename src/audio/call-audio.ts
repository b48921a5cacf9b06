/**
 * The audio of a {@link import('../call/multipath-call.js').MultipathCall}:
 * {@link AudioSend}, the microphone's Opus encoder feeding every
 * participant's sender engine (SenderEngine.sendAudio: fastest path, ahead
 * of video), and {@link RemoteAudio}, one per remote participant (its
 * ReceiverEngine 'audio' playouts -> {@link AudioOutput}, the remote audio
 * track). Browser only.
 */
import type { Clock } from '../core/clock.js';
import type { ReceiverEngine } from '../engine/receiver.js';
import type { SenderEngine } from '../engine/sender.js';
import { AudioOutput, type AudioOutputStats } from './audio-output.js';
import { OpusEncoder, type OpusEncoderOptions, type OpusEncoderStats } from './opus-encoder.js';

/** Options of {@link AudioSend}. */
export interface AudioSendOptions {
  clock: Clock;
  onError: (e: Error) => void;
  /** Opus settings (bitrate 32 kbps, no in-band FEC, no DTX by default). */
  opus?: Pick<OpusEncoderOptions, 'bitrateBps' | 'inbandFec' | 'dtx'>;
}

/** `getStats().audio`: the local encoder and the first participant's remote output (receive statistics: `receiver.audio`). */
export interface CallAudioStats {
  encoder?: OpusEncoderStats;
  output?: AudioOutputStats;
}

/** The microphone: one Opus encoder, each frame to every sender engine that has an up path. */
export class AudioSend {
  private encoder: OpusEncoder | undefined;
  /** Muted: the microphone is sent as silence (OpusEncoderOptions.isMuted); kept across `send` (a new microphone stays muted). */
  muted = false;

  constructor(private readonly opts: AudioSendOptions) {}

  /** A microphone track is being sent. */
  get running(): boolean {
    return this.encoder !== undefined;
  }

  /**
   * Encode `track` (kind 'audio') and send each frame through the sender
   * engines `senders()` returns at that frame (participants come and go).
   * Replaces a previously sent audio track.
   * @throws Error when the track is not audio or WebCodecs audio is missing.
   */
  async send(track: MediaStreamTrack, senders: () => Iterable<SenderEngine | undefined>): Promise<void> {
    this.encoder?.stop();
    const enc = new OpusEncoder(track, {
      clock: this.opts.clock,
      ...this.opts.opus,
      isMuted: () => this.muted,
      onFrame: (f) => {
        for (const s of senders()) if (s?.hasUpPath()) s.sendAudio(f);
      },
      onError: this.opts.onError,
    });
    this.encoder = enc;
    await enc.start();
  }

  stats(): OpusEncoderStats | undefined {
    return this.encoder?.stats();
  }

  /** Stop sending audio (remote audio keeps playing). */
  stop(): void {
    this.encoder?.stop();
    this.encoder = undefined;
  }
}

/** One remote participant's audio: its receiver's playouts into an output track. */
export class RemoteAudio {
  private output: AudioOutput | undefined;
  private trackEmitted = false;
  private readonly off: () => void;

  /**
   * @param onRemoteTrack called once, when the first remote audio frame played.
   */
  constructor(receiver: ReceiverEngine, onRemoteTrack: (track: MediaStreamTrack) => void, onError: (e: Error) => void) {
    this.off = receiver.on('audio', (ev) => {
      if (!this.output) this.output = new AudioOutput(onError);
      this.output.play(ev);
      const track = this.output.track;
      if (track && !this.trackEmitted) {
        this.trackEmitted = true;
        onRemoteTrack(track);
      }
    });
  }

  /** The remote audio track, once the first remote audio played. */
  get track(): MediaStreamTrack | undefined {
    return this.output?.track;
  }

  stats(): AudioOutputStats | undefined {
    return this.output?.stats();
  }

  close(): void {
    this.off();
    this.output?.close();
  }
}
