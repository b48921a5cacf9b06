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
import type { AudioOutput, AudioOutputStats } from './audio-output.js';
import type { AudioPlayoutEvent } from './audio-receiver.js';
import type { OpusEncoder, OpusEncoderOptions, OpusEncoderStats, OpusEncoding } from './opus-encoder.js';

/** Options of {@link AudioSend}. */
export interface AudioSendOptions {
  clock: Clock;
  onError: (e: Error) => void;
  /** Opus settings (bitrate 32 kbps, no in-band FEC, no DTX by default). */
  opus?: Pick<OpusEncoderOptions, 'bitrateBps' | 'inbandFec' | 'dtx'>;
}

/** Audio statistics: the local encoder and a participant's remote output (getStats()' audio `media-source` and `inbound-rtp` entries). */
export interface CallAudioStats {
  encoder?: OpusEncoderStats;
  output?: AudioOutputStats;
}

/** The microphone: one Opus encoder, each frame to every sender engine that has an up path. */
export class AudioSend {
  private encoder: OpusEncoder | undefined;
  /** Bumped by every send() and stop(): a send() whose encoder module arrives late yields to a newer call. */
  private generation = 0;
  /** Muted: the microphone is sent as silence (OpusEncoderOptions.isMuted); kept across `send` (a new microphone stays muted). */
  muted = false;

  constructor(private readonly opts: AudioSendOptions) {}

  /** A microphone track is being sent (or its encoder is loading). */
  get running(): boolean {
    return this.encoder !== undefined || this.loading;
  }
  private loading = false;

  /**
   * Encode `track` (kind 'audio') and send each frame through the sender
   * engines `senders()` returns at that frame (participants come and go).
   * Replaces a previously sent audio track.
   * @throws CodecError (src/audio/opus-encoder.ts start): 'bad-track', 'no-webcodecs', 'no-capture'.
   */
  async send(track: MediaStreamTrack, senders: () => Iterable<SenderEngine | undefined>): Promise<void> {
    this.encoder?.stop();
    this.encoder = undefined;
    const generation = ++this.generation;
    // Loaded on the first audio track only: a video-only page does not download the Opus encoder (issue 14, bundle size).
    this.loading = true;
    const { OpusEncoder } = await import('./opus-encoder.js').finally(() => {
      if (generation === this.generation) this.loading = false;
    });
    if (generation !== this.generation) return;
    const enc = new OpusEncoder(track, {
      clock: this.opts.clock,
      ...this.opts.opus,
      isMuted: () => this.muted,
      // The poorest encoding any participant's paths ask for: one microphone encoder feeds them all. A
      // participant without a usable path keeps its last answer (AudioRateController.update), so a short
      // outage of the poorest does not step the encoder up and back.
      encoding: () => {
        let e: OpusEncoding | undefined;
        for (const s of senders()) {
          const x = s?.audioEncoding();
          if (x && (!e || x.bitrateBps < e.bitrateBps)) e = x;
        }
        return e;
      },
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
    this.generation++;
    this.loading = false;
    this.encoder?.stop();
    this.encoder = undefined;
  }
}

/** Playouts held while the audio output module loads (1 s of 20 ms frames, 3 s of 60 ms ones); older ones are dropped. */
const MAX_HELD_PLAYOUTS = 50;

/**
 * One remote participant's audio: its receiver's playouts into an output
 * track. The output (WebCodecs AudioDecoder + track writer) is loaded with
 * `import()` at the first remote audio frame, so a video-only page does not
 * download it (issue 14, bundle size); the playouts that arrive meanwhile
 * (at most {@link MAX_HELD_PLAYOUTS}, the newest) are played once it is there.
 */
export class RemoteAudio {
  private output: AudioOutput | undefined;
  private loading: AudioPlayoutEvent[] | undefined;
  private closed = false;
  private trackEmitted = false;
  private readonly off: () => void;

  /**
   * @param onRemoteTrack called once, when the first remote audio frame played.
   */
  constructor(
    receiver: ReceiverEngine,
    private readonly onRemoteTrack: (track: MediaStreamTrack) => void,
    private readonly onError: (e: Error) => void,
  ) {
    this.off = receiver.on('audio', (ev) => {
      if (this.output) return this.play(this.output, ev);
      if (this.loading) {
        this.loading.push(ev);
        if (this.loading.length > MAX_HELD_PLAYOUTS) this.loading.shift();
        return;
      }
      this.loading = [ev];
      import('./audio-output.js').then(
        ({ AudioOutput }) => {
          const held = this.loading ?? [];
          this.loading = undefined;
          if (this.closed) return;
          const output = new AudioOutput(this.onError);
          this.output = output;
          for (const e of held) this.play(output, e);
        },
        (e: unknown) => {
          this.loading = undefined;
          this.onError(e instanceof Error ? e : new Error(String(e)));
        },
      );
    });
  }

  private play(output: AudioOutput, ev: AudioPlayoutEvent): void {
    output.play(ev);
    const track = output.track;
    if (track && !this.trackEmitted) {
      this.trackEmitted = true;
      this.onRemoteTrack(track);
    }
  }

  /** The remote audio track, once the first remote audio played. */
  get track(): MediaStreamTrack | undefined {
    return this.output?.track;
  }

  stats(): AudioOutputStats | undefined {
    return this.output?.stats();
  }

  close(): void {
    this.closed = true;
    this.off();
    this.output?.close();
  }
}
