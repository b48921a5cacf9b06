/**
 * Opus -> speaker, in the browser: decodes the frames the receiver's jitter
 * buffer releases (ReceiverEngine 'audio' events, src/audio/audio-receiver.ts)
 * with WebCodecs AudioDecoder, writes concealment for the missing ones, and
 * plays everything in order through a MediaStreamTrackGenerator of kind
 * 'audio', or Web Audio where there is none (see below):
 * {@link AudioOutput.track} is the remote audio track.
 *
 * Concealment: WebCodecs exposes no Opus PLC, so a missing frame is the last
 * decoded frame faded by half per consecutive concealed frame (then silence),
 * the classic packet-repetition PLC (ITU-T G.711 Appendix I's simplest form);
 * counting is the jitter buffer's (webrtc-stats concealedSamples).
 *
 * Order: decoding is asynchronous, concealment is not, so every playout slot
 * is queued and written only when the slots before it are ready (bounded:
 * `MAX_PENDING_SLOTS`; beyond it the oldest pending slot is written as silence).
 * An Opus decoder gives exactly one output per packet, in decode order, so
 * outputs are matched to slots by that order (a FIFO), not by timestamp
 * (Chromium re-stamps decoded audio from the first input timestamp).
 * Frames the jitter buffer dropped to shorten the delay (`skipped`) are still
 * decoded, to keep the decoder's state continuous, and their output discarded.
 *
 * Browser only (WebCodecs). Rendered through a MediaStreamTrackGenerator
 * (Chromium) or, without one, through Web Audio (Firefox: ./web-audio.ts
 * WebAudioPlayout, loaded then; until it is there the output is decoded and
 * measured but not rendered); without either, decoded and measured (RMS) only.
 */
import type { AudioPlayoutEvent } from './audio-receiver.js';
import type { WebAudioPlayout } from './web-audio.js';

/** Output sample rate (Hz): Opus' (RFC 7587 §4.1). */
export const OUTPUT_SAMPLE_RATE = 48_000;
/** Most playout slots waiting for the decoder. */
export const MAX_PENDING_SLOTS = 50;

/** Output counters and the level of the decoded audio. */
export interface AudioOutputStats {
  framesDecoded: number;
  framesConcealed: number;
  /** Deceleration slots (the jitter buffer's 'stretch'): the last decoded frame repeated. */
  framesStretched: number;
  /** Skipped (acceleration) frames decoded and discarded. */
  framesDiscarded: number;
  decodeErrors: number;
  writeErrors: number;
  /** Slots written as silence because the decoder fell behind. */
  slotOverflows: number;
  /** RMS of the decoded (not concealed) samples over the last second (full scale = 1). */
  rms: number;
  /** Largest 1-second RMS so far. */
  maxRms: number;
  /** The audio track exists (a MediaStreamTrackGenerator, or Web Audio where there is none). */
  rendering: boolean;
  /** Web Audio playout only (./web-audio.ts): blocks not played (context suspended, or written too far ahead), and underruns. */
  webAudioDropped?: number;
  webAudioUnderruns?: number;
}

interface Slot {
  pcm?: Float32Array;
  /** Samples (at OUTPUT_SAMPLE_RATE) the slot stands for: its frame's duration (20-60 ms). */
  n?: number;
}

/** What the next decoder output is for: a slot to fill, or a skipped frame to discard (undefined). */
type Pending = Slot | undefined;

type GeneratorCtor = new (o: { kind: 'audio' }) => MediaStreamTrack & { writable: WritableStream<AudioData> };

/** See the module comment. */
export class AudioOutput {
  /** The remote audio (MediaStreamTrackGenerator, or a Web Audio destination's track), undefined until there is one. */
  get track(): MediaStreamTrack | undefined {
    return this.gen ?? this.webAudio?.track;
  }
  private readonly gen: MediaStreamTrack | undefined;
  private readonly writer: WritableStreamDefaultWriter<AudioData> | undefined;
  private webAudio: WebAudioPlayout | undefined;
  private decoder: AudioDecoder | undefined;
  private readonly slots: Slot[] = [];
  /** Decoder outputs still to come, in decode order. */
  private readonly pending: Pending[] = [];
  private last: Float32Array | undefined;
  private fade = 1;
  private outTs = 0;
  private readonly level = { sumSq: 0, n: 0, rms: 0, maxRms: 0 };
  private closed = false;
  private readonly c = { framesDecoded: 0, framesConcealed: 0, framesStretched: 0, framesDiscarded: 0, decodeErrors: 0, writeErrors: 0, slotOverflows: 0 };

  constructor(private readonly onError: (e: Error) => void = () => {}) {
    const Gen = (globalThis as unknown as { MediaStreamTrackGenerator?: GeneratorCtor }).MediaStreamTrackGenerator;
    if (Gen) {
      const gen = new Gen({ kind: 'audio' });
      this.gen = gen;
      this.writer = gen.writable.getWriter();
    } else if (typeof AudioContext === 'function') {
      import('./web-audio.js')
        .then(({ WebAudioPlayout }) => {
          if (!this.closed) this.webAudio = new WebAudioPlayout();
        })
        .catch((e: unknown) => this.onError(e instanceof Error ? e : new Error(String(e))));
    }
  }

  private ensureDecoder(): AudioDecoder | undefined {
    if (this.decoder && this.decoder.state !== 'closed') return this.decoder;
    if (typeof AudioDecoder === 'undefined') return undefined;
    const dec = new AudioDecoder({
      output: (d) => this.onDecoded(d),
      error: (e) => {
        this.c.decodeErrors++;
        // The decoder is closed: its pending outputs never come; conceal their slots.
        for (const s of this.pending.splice(0)) if (s) s.pcm = this.conceal(s.n ?? 960);
        this.flush();
        this.onError(new Error(`audio decoder: ${e.message}`));
      },
    });
    // Mono output whatever the sender encoded (libopus downmixes a stereo stream).
    dec.configure({ codec: 'opus', sampleRate: OUTPUT_SAMPLE_RATE, numberOfChannels: 1 });
    this.decoder = dec;
    return dec;
  }

  /** Play one jitter-buffer playout (a frame to decode, or concealment). */
  play(ev: AudioPlayoutEvent): void {
    if (this.closed) return;
    const p = ev.playout;
    if (p.kind === 'concealed') {
      this.c.framesConcealed++;
      this.slots.push({ pcm: this.conceal(Math.round((p.durationUs * OUTPUT_SAMPLE_RATE) / 1e6)) });
    } else if (p.kind === 'stretch') {
      // Deceleration: the last decoded frame once more at full level (a 20 ms repeat, no fade: nothing was lost).
      this.c.framesStretched++;
      const n = Math.round((p.durationUs * OUTPUT_SAMPLE_RATE) / 1e6);
      const out = new Float32Array(n);
      const last = this.last;
      if (last) for (let i = 0; i < n; i++) out[i] = last[i % last.length];
      this.slots.push({ pcm: out });
    } else {
      const dec = this.ensureDecoder();
      for (const s of p.skipped) if (this.decode(dec, s.payload, s.durationUs)) this.pending.push(undefined);
      const slot: Slot = { n: Math.round((p.frame.durationUs * OUTPUT_SAMPLE_RATE) / 1e6) };
      if (this.decode(dec, p.frame.payload, p.frame.durationUs)) this.pending.push(slot);
      else slot.pcm = this.conceal(slot.n ?? 960);
      this.slots.push(slot);
    }
    while (this.slots.length > MAX_PENDING_SLOTS && !this.slots[0].pcm) {
      // The decoder fell far behind: its oldest slot plays as silence (its output, when it comes, is dropped).
      this.slots[0].pcm = new Float32Array(this.slots[0].n ?? 960);
      this.c.slotOverflows++;
      this.flush();
    }
    this.flush();
  }

  private decode(dec: AudioDecoder | undefined, payload: Uint8Array, durationUs: number): boolean {
    if (!dec || payload.length === 0 || this.pending.length >= 4 * MAX_PENDING_SLOTS) return false;
    try {
      dec.decode(new EncodedAudioChunk({ type: 'key', timestamp: this.outTs, duration: durationUs, data: payload }));
      return true;
    } catch (e) {
      this.c.decodeErrors++;
      this.onError(e instanceof Error ? e : new Error(String(e)));
      return false;
    }
  }

  private onDecoded(d: AudioData): void {
    try {
      if (this.pending.length === 0) return; // after an error reset
      const slot = this.pending.shift();
      if (!slot) {
        this.c.framesDiscarded++;
        return;
      }
      const pcm = new Float32Array(d.numberOfFrames);
      d.copyTo(pcm, { planeIndex: 0, format: 'f32-planar' });
      this.c.framesDecoded++;
      this.measure(pcm);
      this.last = pcm;
      this.fade = 1;
      if (!slot.pcm) slot.pcm = pcm; // else it already played as silence (overflow)
      this.flush();
    } finally {
      d.close();
    }
  }

  /** Packet-repetition concealment: the last decoded frame at half the previous gain, silence without one. */
  private conceal(samples: number): Float32Array {
    const out = new Float32Array(samples);
    const last = this.last;
    if (!last) return out;
    this.fade *= 0.5;
    if (this.fade < 0.05) return out;
    for (let i = 0; i < samples; i++) out[i] = last[i % last.length] * this.fade;
    return out;
  }

  private measure(pcm: Float32Array): void {
    const l = this.level;
    for (let i = 0; i < pcm.length; i++) l.sumSq += pcm[i] * pcm[i];
    l.n += pcm.length;
    if (l.n >= OUTPUT_SAMPLE_RATE) {
      l.rms = Math.sqrt(l.sumSq / l.n);
      l.maxRms = Math.max(l.maxRms, l.rms);
      l.sumSq = 0;
      l.n = 0;
    }
  }

  private flush(): void {
    while (this.slots.length > 0 && this.slots[0].pcm) this.write(this.slots.shift()!.pcm!);
  }

  private write(pcm: Float32Array): void {
    const ts = this.outTs;
    this.outTs += Math.round((pcm.length * 1e6) / OUTPUT_SAMPLE_RATE);
    if (this.webAudio) return this.webAudio.write(pcm as Float32Array<ArrayBuffer>, OUTPUT_SAMPLE_RATE);
    if (!this.writer) return;
    try {
      const data = new AudioData({ format: 'f32-planar', sampleRate: OUTPUT_SAMPLE_RATE, numberOfFrames: pcm.length, numberOfChannels: 1, timestamp: ts, data: pcm as Float32Array<ArrayBuffer> });
      this.writer.write(data).catch(() => {
        this.c.writeErrors++;
      });
    } catch {
      this.c.writeErrors++;
    }
  }

  stats(): AudioOutputStats {
    const l = this.level;
    const partial = l.n > 0 ? Math.sqrt(l.sumSq / l.n) : 0;
    return {
      ...this.c,
      rms: l.rms || partial,
      maxRms: Math.max(l.maxRms, partial),
      rendering: this.track !== undefined,
      ...(this.webAudio ? { webAudioDropped: this.webAudio.dropped, webAudioUnderruns: this.webAudio.underruns } : {}),
    };
  }

  /** Stop decoding and end the track; idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.decoder && this.decoder.state !== 'closed') this.decoder.close();
    void this.writer?.close().catch(() => {});
    this.gen?.stop();
    this.webAudio?.close();
  }
}
