/**
 * Microphone -> Opus, in the browser: reads an audio MediaStreamTrack with
 * MediaStreamTrackProcessor (or Web Audio where it is missing: Firefox,
 * ./web-audio.ts), downmixes to mono and encodes Opus frames with WebCodecs
 * AudioEncoder (RFC 6716; RFC 7587 §4.2: one frame per packet; 48 kHz): 20 ms
 * at 32 kbps, or the bitrate and frame duration `encoding` asks for (fewer,
 * smaller packets on slow paths: src/engine/audio-rate.ts; Chromium 156's
 * Opus encoder made 80.7 / 119.7 / 92.6 bytes per frame at 32 kbps / 20 ms,
 * 24 kbps / 40 ms and 12 kbps / 60 ms). Each encoded frame goes to `onFrame`
 * with its capture time on the call's clock.
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
  /** Discontinuous transmission. Default false (a frame every frame duration; the jitter buffer counts every slot). */
  dtx?: boolean;
  /**
   * Asked for every input frame: true encodes it as digital silence (zeros)
   * instead of the microphone's samples (mute). The stream goes on (one
   * frame per frame duration, tiny at Opus' silence rate), so the receiver's jitter
   * buffer plays silence and counts neither loss nor concealment; unmuting
   * needs no resynchronisation. W3C mediacapture-main: a disabled audio
   * track renders silence, which is what WebRTC sends for it.
   */
  isMuted?: () => boolean;
  /**
   * Asked for every input: the Opus bitrate (bps) and frame duration (µs)
   * to encode with (SenderEngine.audioEncoding: fewer, smaller packets when
   * the paths are slow; src/engine/audio-rate.ts); undefined keeps the
   * encoding in use (at first `bitrateBps` and 20 ms). When `bitrateBps` is
   * set it replaces the richest step's 32 kbps and caps the poorer ones; a
   * frame duration other than 10, 20, 40 or 60 ms is taken as 20.
   * A change starts a new encoder where the one in use ends its frame
   * (after at most 12 inputs); the old one is flushed and closed.
   */
  encoding?: () => OpusEncoding | undefined;
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
  /** Encoders started after the first: a new bitrate or frame duration (`encoding`), or a new input sample rate. */
  reconfigurations: number;
  /** The encoding in use: Opus bitrate (bps) and frame duration (µs). */
  bitrateBps: number;
  frameDurationUs: number;
}

/** An Opus encoding: target bitrate (bps) and frame duration (µs). */
export interface OpusEncoding {
  bitrateBps: number;
  frameDurationUs: number;
}

/** Frame durations (µs) Opus and WebCodecs' Opus registration take here (RFC 6716 §2.1.4: 2.5-60 ms; below 10 ms the overhead only grows). */
const FRAME_DURATIONS_US = [10_000, 20_000, 40_000, 60_000];

/**
 * One AudioEncoder with what its output needs: the settings it was
 * configured with and its input timeline (the first sample index and
 * timestamp (µs) of each input not yet fully encoded, oldest first; the
 * samples given to it and its first input's timestamp). A reconfiguration
 * starts a new one; the old one flushes into its own timeline.
 */
interface EncoderState {
  enc: AudioEncoder;
  encoding: OpusEncoding;
  sampleRate: number;
  timeline: Array<{ sample: number; tsUs: number }>;
  samplesIn: number;
  firstInputUs: number | undefined;
  /** Output held until the previous encoder's flush has come out (undefined: none held). */
  held?: EncodedAudioChunk[];
}

/** Window of the capture-time mapping's read-latency floor (µs): 2 s. */
export const CAPTURE_OFFSET_WINDOW_US = 2_000_000;

/** Opus frame duration (µs). */
export const OPUS_FRAME_US = 20_000;

/** Most inputs an encoding change waits for the encoder in use to reach the end of a frame. */
const MAX_SWITCH_WAIT_INPUTS = 12;
/** Most chunks a new encoder holds back while the old one flushes (a flush takes milliseconds). */
const MAX_HELD_CHUNKS = 16;

/** Most inputs kept on the input timeline (10 ms each in Chromium: 2.5 s); the oldest go first. */
const MAX_TIMELINE_INPUTS = 256;

type ProcessorCtor = new (o: { track: MediaStreamTrack }) => { readable: ReadableStream<AudioData> };

/** See the module comment. */
export class OpusEncoder {
  private reader: Pick<ReadableStreamDefaultReader<AudioData>, 'read' | 'cancel'> | undefined;
  private stopped = false;
  /** Windowed minimum of (read time - timestamp): a deque of increasing offsets, the head is the minimum. */
  private readonly offsets: Array<{ atUs: number; offsetUs: number }> = [];
  /** The current encoder, its settings and its input timeline ({@link EncoderState}). */
  private cur: EncoderState | undefined;
  /** Inputs an encoding change has waited for a frame boundary. */
  private switchWait = 0;
  private readonly c: OpusEncoderStats = {
    inputFrames: 0,
    framesEncoded: 0,
    bytesEncoded: 0,
    errors: 0,
    sampleRate: 0,
    inputChannels: 0,
    mutedFrames: 0,
    reconfigurations: 0,
    bitrateBps: 0,
    frameDurationUs: 0,
  };

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
      const want = this.wanted();
      const cur = this.cur;
      const live = cur !== undefined && cur.enc.state !== 'closed' && cur.sampleRate === data.sampleRate;
      const changed = !live || cur.encoding.bitrateBps !== want.bitrateBps || cur.encoding.frameDurationUs !== want.frameDurationUs;
      // A new encoding starts where the old encoder's frame ends (Chromium's 10 ms inputs reach a 20-60 ms
      // boundary within 5), so its flush pads nothing that would overlap the new encoder's first frame;
      // inputs that never line up switch after MAX_SWITCH_WAIT_INPUTS.
      const frameSamples = live ? Math.round((cur.sampleRate * cur.encoding.frameDurationUs) / 1e6) : 0;
      if (changed && live && cur.samplesIn % frameSamples !== 0 && this.switchWait++ < MAX_SWITCH_WAIT_INPUTS) {
        // not yet: this input still goes to the encoder in use
      } else if (changed) {
        this.switchWait = 0;
        let flushed: Promise<void> | undefined;
        if (cur && cur.enc.state !== 'closed') {
          this.c.reconfigurations++;
          const old = cur.enc;
          // What the old encoder holds comes out through its own state; then it is closed.
          flushed = old.flush().then(
            () => {
              if (old.state !== 'closed') old.close();
            },
            () => {},
          );
        }
        this.configure(data.sampleRate, want, flushed);
      } else this.switchWait = 0;
      const st = this.cur!;
      this.c.inputChannels = data.numberOfChannels;
      let mono = data.numberOfChannels === 1 ? data : downmix(data);
      if (this.opts.isMuted?.()) {
        if (mono !== data) mono.close();
        mono = silence(data);
        this.c.mutedFrames++;
      }
      // On the timeline before encode() (an encoder may output within it); taken back if encode() throws.
      const first = st.firstInputUs === undefined;
      if (first) st.firstInputUs = data.timestamp;
      st.timeline.push({ sample: st.samplesIn, tsUs: data.timestamp });
      try {
        st.enc.encode(mono);
      } catch (e) {
        st.timeline.pop();
        if (first) st.firstInputUs = undefined;
        throw e;
      } finally {
        if (mono !== data) mono.close();
      }
      if (st.timeline.length > MAX_TIMELINE_INPUTS) st.timeline.shift();
      st.samplesIn += data.numberOfFrames;
    } catch (e) {
      this.fail(e);
    } finally {
      data.close();
    }
  }

  /** The encoding asked for now (`encoding`, capped at `bitrateBps`), with a frame duration Opus takes. */
  private wanted(): OpusEncoding {
    const base = this.opts.bitrateBps ?? 32_000;
    let e: OpusEncoding | undefined;
    try {
      e = this.opts.encoding?.();
    } catch {
      e = undefined;
    }
    // Nothing asked (no participant with an up path): the encoder in use goes on as it is.
    if (!e || !(e.bitrateBps > 0)) return this.cur?.encoding ?? { bitrateBps: base, frameDurationUs: OPUS_FRAME_US };
    // The app's bitrate stands for the richest step (32 kbps); a poorer step caps it.
    const bitrateBps = Math.round(this.opts.bitrateBps === undefined ? e.bitrateBps : e.bitrateBps >= 32_000 ? base : Math.min(base, e.bitrateBps));
    return { bitrateBps: Math.max(6_000, bitrateBps), frameDurationUs: FRAME_DURATIONS_US.includes(e.frameDurationUs) ? e.frameDurationUs : OPUS_FRAME_US };
  }

  /** A new encoder; with `after` (the old encoder's flush), its output waits until that has come out, so frames reach `onFrame` in capture order. */
  private configure(sampleRate: number, encoding: OpusEncoding, after?: Promise<void>): void {
    this.c.sampleRate = sampleRate;
    this.c.bitrateBps = encoding.bitrateBps;
    this.c.frameDurationUs = encoding.frameDurationUs;
    const st = { encoding, sampleRate, timeline: [], samplesIn: 0, firstInputUs: undefined } as unknown as EncoderState;
    if (after !== undefined) {
      st.held = [];
      void after.then(() => {
        const held = st.held ?? [];
        st.held = undefined;
        for (const c of held) this.onChunk(c, st);
      });
    }
    st.enc = new AudioEncoder({
      output: (chunk) => this.onChunk(chunk, st),
      error: (e) => this.fail(e),
    });
    st.enc.configure({
      codec: 'opus',
      sampleRate,
      numberOfChannels: 1,
      bitrate: encoding.bitrateBps,
      // frameDuration in µs (WebCodecs Opus codec registration); packetlossperc tells LBRR how much to protect.
      opus: { frameDuration: encoding.frameDurationUs, useinbandfec: this.opts.inbandFec ?? false, usedtx: this.opts.dtx ?? false, ...(this.opts.inbandFec ? { packetlossperc: 10 } : {}) },
    } as AudioEncoderConfig);
    this.cur = st;
  }

  private onChunk(chunk: EncodedAudioChunk, st: EncoderState): void {
    if (this.stopped) return;
    if (st.held) {
      if (st.held.length < MAX_HELD_CHUNKS) st.held.push(chunk);
      return;
    }
    const data = new Uint8Array(chunk.byteLength);
    chunk.copyTo(data);
    this.c.framesEncoded++;
    this.c.bytesEncoded += data.length;
    const offsetUs = this.offsets[0]?.offsetUs ?? 0;
    const durationUs = chunk.duration && chunk.duration > 0 ? Math.min(120_000, Math.round(chunk.duration)) : st.encoding.frameDurationUs;
    const captureUs = Math.max(0, Math.round(this.firstSampleUs(st, chunk.timestamp) + offsetUs));
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
  private firstSampleUs(st: EncoderState, stampUs: number): number {
    const sr = st.sampleRate;
    const t = st.timeline;
    if (st.firstInputUs === undefined || t.length === 0 || !(sr > 0)) return stampUs;
    const at = Math.round(((stampUs - st.firstInputUs) * sr) / 1e6);
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
    if (this.cur && this.cur.enc.state !== 'closed') this.cur.enc.close();
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
