/**
 * Microphone -> Opus, in the browser: reads an audio MediaStreamTrack with
 * MediaStreamTrackProcessor (or Web Audio where it is missing: Firefox,
 * ./web-audio.ts), downmixes to mono and encodes 20 ms Opus frames
 * with WebCodecs AudioEncoder (RFC 6716; RFC 7587 §4.2: one frame per
 * packet; 48 kHz). Each encoded frame goes to `onFrame` with its capture time
 * on the call's clock.
 *
 * Capture time: Chromium stamps its Opus output from the first input's
 * timestamp plus the samples encoded (frames DTX leaves out included), so
 * input the reader missed (a starved main thread: the processor drops what
 * is not read in time) vanishes from those timestamps; a sender reading 75 %
 * of real time would fall 250 ms behind per second, which the receiver's
 * jitter buffer sees as ever later frames. So the encoder's timestamp only
 * says which input sample a frame starts at (its offset from the first
 * input's timestamp, in samples at the input rate), and that sample is
 * located on the input timeline: each input AudioData's timestamp and sample
 * count, in the order they were encoded (tests/unit/audio/opus-encoder.test.ts).
 * That time (µs, the track's own clock) maps onto the call's clock with the smallest `now - timestamp` seen when
 * reading over the last {@link CAPTURE_OFFSET_WINDOW_US} (the read latency
 * floor), so a frame's capture time is its first sample's time, as video's
 * is the time the camera frame was read. The window lets the mapping follow
 * the audio device's clock when it drifts from the call's (tens of ppm for
 * real devices: a floor kept for the whole call would let capture times
 * drift by up to a few hundred ms per hour, moving mouth-to-ear latency and
 * the A/V offset with them); the same windowed floor as video playout
 * timing's arrival offset (src/feedback/playout.ts).
 *
 * Browser only (WebCodecs); src/engine never imports it.
 */
import { CodecError } from '../codec/codec-config.js';
import type { Clock } from '../core/clock.js';
import type { AudioFrameInput } from '../engine/audio-sender.js';

/** Options of {@link OpusEncoder}. */
export interface OpusEncoderOptions {
  clock: Clock;
  /** Target bitrate (bps). Default 32000 (wideband speech and music at good quality, RFC 7587 §7.1). */
  bitrateBps?: number;
  /** Opus in-band FEC (LBRR, RFC 6716 §2.1.7). Default false: multipath duplication covers loss. */
  inbandFec?: boolean;
  /** Discontinuous transmission. Default false (every 20 ms a frame; the jitter buffer counts every slot). */
  dtx?: boolean;
  /**
   * Asked for every input frame: true encodes it as digital silence (zeros)
   * instead of the microphone's samples (mute). The stream goes on (one
   * frame per 20 ms, tiny at Opus' silence rate), so the receiver's jitter
   * buffer plays silence and counts neither loss nor concealment; unmuting
   * needs no resynchronisation. W3C mediacapture-main: a disabled audio
   * track renders silence, which is what WebRTC sends for it.
   */
  isMuted?: () => boolean;
  onFrame: (frame: AudioFrameInput) => void;
  onError: (e: Error) => void;
}

/** Encoder counters. */
export interface OpusEncoderStats {
  inputFrames: number;
  framesEncoded: number;
  bytesEncoded: number;
  errors: number;
  sampleRate: number;
  inputChannels: number;
  /** Input frames replaced by silence because the microphone was muted (`isMuted`). */
  mutedFrames: number;
}

/** Window of the capture-time mapping's read-latency floor (µs): 2 s. */
export const CAPTURE_OFFSET_WINDOW_US = 2_000_000;

/** Opus frame duration (µs). */
export const OPUS_FRAME_US = 20_000;

/** Most inputs kept on the input timeline (10 ms each in Chromium: 2.5 s); the oldest go first. */
const MAX_TIMELINE_INPUTS = 256;

type ProcessorCtor = new (o: { track: MediaStreamTrack }) => { readable: ReadableStream<AudioData> };

/** See the module comment. */
export class OpusEncoder {
  private encoder: AudioEncoder | undefined;
  private reader: Pick<ReadableStreamDefaultReader<AudioData>, 'read' | 'cancel'> | undefined;
  private stopped = false;
  /** Windowed minimum of (read time - timestamp): a deque of increasing offsets, the head is the minimum. */
  private readonly offsets: Array<{ atUs: number; offsetUs: number }> = [];
  /** The input timeline of the current encoder: the first sample index and timestamp (µs) of each input not yet fully encoded, oldest first. */
  private readonly timeline: Array<{ sample: number; tsUs: number }> = [];
  /** Samples (at the input rate) given to the current encoder, and the timestamp (µs) of its first input. */
  private samplesIn = 0;
  private firstInputUs: number | undefined;
  private readonly c: OpusEncoderStats = { inputFrames: 0, framesEncoded: 0, bytesEncoded: 0, errors: 0, sampleRate: 0, inputChannels: 0, mutedFrames: 0 };

  constructor(
    private readonly track: MediaStreamTrack,
    private readonly opts: OpusEncoderOptions,
  ) {}

  /**
   * Start reading and encoding (returns once the reader runs). The track is
   * read with MediaStreamTrackProcessor, or through Web Audio where it is
   * missing (Firefox: ./web-audio.ts, loaded then).
   * @throws CodecError 'bad-track' when the track is not audio, 'no-webcodecs' without AudioEncoder, 'no-capture' with neither MediaStreamTrackProcessor nor a usable AudioContext.
   */
  async start(): Promise<void> {
    if (this.track.kind !== 'audio') throw new CodecError('bad-track', `OpusEncoder: track kind is ${this.track.kind}, not audio`);
    const Processor = (globalThis as unknown as { MediaStreamTrackProcessor?: ProcessorCtor }).MediaStreamTrackProcessor;
    if (typeof AudioEncoder === 'undefined') throw new CodecError('no-webcodecs', 'cannot send audio in this browser: missing AudioEncoder (WebCodecs)');
    if (Processor) this.reader = new Processor({ track: this.track }).readable.getReader();
    else {
      try {
        this.reader = (await import('./web-audio.js')).openWebAudioMic(this.track);
      } catch (e) {
        throw new CodecError('no-capture', `cannot read the microphone in this browser: no MediaStreamTrackProcessor, and Web Audio failed (${String(e)})`);
      }
      if (this.stopped) void this.reader.cancel();
    }
    void this.pump();
  }

  private async pump(): Promise<void> {
    const reader = this.reader;
    if (!reader) return;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || this.stopped) {
          value?.close();
          break;
        }
        this.onInput(value);
      }
    } catch (e) {
      if (!this.stopped) this.fail(e);
    }
  }

  private fail(e: unknown): void {
    this.c.errors++;
    this.opts.onError(e instanceof Error ? e : new Error(String(e)));
  }

  private onInput(data: AudioData): void {
    try {
      this.c.inputFrames++;
      const now = this.opts.clock.nowUs();
      this.addOffset(now, now - data.timestamp);
      if (!this.encoder || this.encoder.state === 'closed') this.configure(data.sampleRate);
      this.c.inputChannels = data.numberOfChannels;
      let mono = data.numberOfChannels === 1 ? data : downmix(data);
      if (this.opts.isMuted?.()) {
        if (mono !== data) mono.close();
        mono = silence(data);
        this.c.mutedFrames++;
      }
      // On the timeline before encode() (an encoder may output within it); taken back if encode() throws.
      const first = this.firstInputUs === undefined;
      if (first) this.firstInputUs = data.timestamp;
      this.timeline.push({ sample: this.samplesIn, tsUs: data.timestamp });
      try {
        this.encoder!.encode(mono);
      } catch (e) {
        this.timeline.pop();
        if (first) this.firstInputUs = undefined;
        throw e;
      } finally {
        if (mono !== data) mono.close();
      }
      if (this.timeline.length > MAX_TIMELINE_INPUTS) this.timeline.shift();
      this.samplesIn += data.numberOfFrames;
    } catch (e) {
      this.fail(e);
    } finally {
      data.close();
    }
  }

  private configure(sampleRate: number): void {
    this.c.sampleRate = sampleRate;
    this.timeline.length = 0;
    this.samplesIn = 0;
    this.firstInputUs = undefined;
    const enc = new AudioEncoder({
      output: (chunk) => this.onChunk(chunk),
      error: (e) => this.fail(e),
    });
    enc.configure({
      codec: 'opus',
      sampleRate,
      numberOfChannels: 1,
      bitrate: this.opts.bitrateBps ?? 32_000,
      // frameDuration in µs (WebCodecs Opus codec registration); packetlossperc tells LBRR how much to protect.
      opus: { frameDuration: OPUS_FRAME_US, useinbandfec: this.opts.inbandFec ?? false, usedtx: this.opts.dtx ?? false, ...(this.opts.inbandFec ? { packetlossperc: 10 } : {}) },
    } as AudioEncoderConfig);
    this.encoder = enc;
  }

  private onChunk(chunk: EncodedAudioChunk): void {
    if (this.stopped) return;
    const data = new Uint8Array(chunk.byteLength);
    chunk.copyTo(data);
    this.c.framesEncoded++;
    this.c.bytesEncoded += data.length;
    const offsetUs = this.offsets[0]?.offsetUs ?? 0;
    const durationUs = chunk.duration && chunk.duration > 0 ? Math.min(120_000, Math.round(chunk.duration)) : OPUS_FRAME_US;
    const captureUs = Math.max(0, Math.round(this.firstSampleUs(chunk.timestamp) + offsetUs));
    try {
      this.opts.onFrame({ captureUs, durationUs, data });
    } catch (e) {
      this.fail(e);
    }
  }

  /**
   * Track-clock time (µs) of the first sample of the chunk the encoder
   * stamped `stampUs`: the input sample it starts at is `stampUs` less the
   * first input's timestamp, in samples at the input rate; that sample's time
   * comes from the input holding it (extrapolated from the oldest input kept
   * when the timeline no longer reaches back that far). `stampUs` itself
   * when there is no timeline.
   */
  private firstSampleUs(stampUs: number): number {
    const sr = this.c.sampleRate;
    const t = this.timeline;
    if (this.firstInputUs === undefined || t.length === 0 || !(sr > 0)) return stampUs;
    const at = Math.round(((stampUs - this.firstInputUs) * sr) / 1e6);
    while (t.length > 1 && t[1].sample <= at) t.shift();
    return t[0].tsUs + ((at - t[0].sample) * 1e6) / sr;
  }

  private addOffset(atUs: number, offsetUs: number): void {
    const q = this.offsets;
    if (!Number.isFinite(offsetUs)) return;
    while (q.length > 0 && q[q.length - 1].offsetUs >= offsetUs) q.pop();
    q.push({ atUs, offsetUs });
    while (q.length > 1 && q[0].atUs < atUs - CAPTURE_OFFSET_WINDOW_US) q.shift();
    if (q.length > 512) q.shift();
  }

  stats(): OpusEncoderStats {
    return { ...this.c };
  }

  /** Stop reading and encoding; idempotent. The track itself is left to the app. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    void this.reader?.cancel().catch(() => {});
    if (this.encoder && this.encoder.state !== 'closed') this.encoder.close();
  }
}

/** Mono digital silence as long as `data`, with its sample rate and timestamp. */
function silence(data: AudioData): AudioData {
  const n = data.numberOfFrames;
  return new AudioData({ format: 'f32-planar', sampleRate: data.sampleRate, numberOfFrames: n, numberOfChannels: 1, timestamp: data.timestamp, data: new Float32Array(n) });
}

/** The first channel of `data` as a mono f32-planar AudioData (same timestamp). */
function downmix(data: AudioData): AudioData {
  const n = data.numberOfFrames;
  const buf = new Float32Array(n);
  data.copyTo(buf, { planeIndex: 0, format: 'f32-planar' });
  return new AudioData({ format: 'f32-planar', sampleRate: data.sampleRate, numberOfFrames: n, numberOfChannels: 1, timestamp: data.timestamp, data: buf });
}
