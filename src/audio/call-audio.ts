/**
 * The audio of a {@link import('../call/multipath-call.js').MultipathCall}:
 * the microphone's Opus encoder feeding the call's sender engine
 * (SenderEngine.sendAudio: fastest path, ahead of video) and the remote audio
 * (ReceiverEngine 'audio' playouts -> {@link AudioOutput}, the remote audio
 * track). Browser only.
 */
import type { Clock } from '../core/clock.js';
import type { ReceiverEngine } from '../engine/receiver.js';
import type { SenderEngine } from '../engine/sender.js';
import { AudioOutput, type AudioOutputStats } from './audio-output.js';
import { OpusEncoder, type OpusEncoderOptions, type OpusEncoderStats } from './opus-encoder.js';

/** Options of {@link CallAudio}. */
export interface CallAudioOptions {
  clock: Clock;
  receiver: ReceiverEngine;
  /** The first remote audio playout created the remote audio track. */
  onRemoteTrack: (track: MediaStreamTrack) => void;
  onError: (e: Error) => void;
  /** Opus settings (bitrate 32 kbps, no in-band FEC, no DTX by default). */
  opus?: Pick<OpusEncoderOptions, 'bitrateBps' | 'inbandFec' | 'dtx'>;
}

/** `getStats().audio`: the local encoder and the remote output (the receive statistics are `receiver.audio`). */
export interface CallAudioStats {
  encoder?: OpusEncoderStats;
  output?: AudioOutputStats;
}

/** See the module comment. */
export class CallAudio {
  private encoder: OpusEncoder | undefined;
  private output: AudioOutput | undefined;
  private trackEmitted = false;

  constructor(private readonly opts: CallAudioOptions) {
    opts.receiver.on('audio', (ev) => {
      if (!this.output) this.output = new AudioOutput(opts.onError);
      this.output.play(ev);
      const track = this.output.track;
      if (track && !this.trackEmitted) {
        this.trackEmitted = true;
        opts.onRemoteTrack(track);
      }
    });
  }

  /** The remote audio track, once the first remote audio played. */
  get remoteTrack(): MediaStreamTrack | undefined {
    return this.output?.track;
  }

  /**
   * Encode `track` (kind 'audio') and send it through the sender engine
   * `sender()` returns at each frame (the call may replace its sender).
   * Replaces a previously sent audio track.
   * @throws Error when the track is not audio or WebCodecs audio is missing.
   */
  async send(track: MediaStreamTrack, sender: () => SenderEngine | undefined): Promise<void> {
    this.encoder?.stop();
    const enc = new OpusEncoder(track, {
      clock: this.opts.clock,
      ...this.opts.opus,
      onFrame: (f) => {
        const s = sender();
        if (s?.hasUpPath()) s.sendAudio(f);
      },
      onError: this.opts.onError,
    });
    this.encoder = enc;
    await enc.start();
  }

  stats(): CallAudioStats {
    return { ...(this.encoder ? { encoder: this.encoder.stats() } : {}), ...(this.output ? { output: this.output.stats() } : {}) };
  }

  /** Stop sending audio (the remote audio keeps playing). */
  stopSending(): void {
    this.encoder?.stop();
    this.encoder = undefined;
  }

  close(): void {
    this.stopSending();
    this.output?.close();
  }
}
