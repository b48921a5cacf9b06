/**
 * The receiver side of one audio stream, I/O-free: the jitter buffer
 * ({@link AudioJitterBuffer}), the playout clock that pulls one frame
 * interval from it every `frameDurationUs` (the audio device's cadence), and
 * mouth-to-ear latency (capture -> played out) through the project's one
 * latency definition (src/feedback/qoe-metrics.ts `latencySampleMs`).
 *
 * The playout clock starts at the first frame's arrival and ticks every frame
 * interval; {@link AudioReceiver.poll} runs the ticks that are due, deciding
 * at each tick's slot time (so a late timer does not change decisions) and
 * stamping mouth-to-ear at the poll time (a late timer delays the sound).
 * After a stall longer than `maxCatchUpFrames` intervals (a throttled tab)
 * the clock jumps to now: those intervals were never played.
 */
import { latencySampleMs } from '../feedback/qoe-metrics.js';
import { percentile } from '../feedback/percentile.js';
import type { AudioMessage } from '../wire/types.js';
import { AudioJitterBuffer, type AudioJitterBufferOptions, type AudioJitterBufferStats, type AudioPlayout } from './jitter-buffer.js';

/** Options of {@link AudioReceiver}. */
export interface AudioReceiverOptions extends AudioJitterBufferOptions {
  /** Mouth-to-ear samples kept for percentiles (most recent). Default 4096. */
  latencyWindow?: number;
  /** Most frame intervals one poll catches up on. Default 10. */
  maxCatchUpFrames?: number;
}

/** Audio receive statistics (receiver `stats().audio`). */
export interface AudioReceiverStats extends AudioJitterBufferStats {
  /** Audio stream id (undefined before the first packet). */
  streamId: number | undefined;
  /** Mouth-to-ear latency (capture -> played out, ms) of the most recent played frames; 0 without samples. */
  mouthToEarMs: { mean: number; p50: number; p95: number };
  /** Same as `mouthToEarMs.p95`. */
  mouthToEarP95Ms: number;
  /** Frames of another audio stream than the first one seen (dropped). */
  otherStreamPackets: number;
}

/** One due playout: what to play and when the poll ran (µs, receiver clock). */
export interface AudioPlayoutEvent {
  playout: Exclude<AudioPlayout, { kind: 'idle' }>;
  atUs: number;
}

/** See the module comment. */
export class AudioReceiver {
  private readonly jb: AudioJitterBuffer;
  private readonly latWin: number;
  private readonly lat: number[] = [];
  private latHead = 0;
  private latSum = 0;
  private latCount = 0;
  private readonly maxCatchUp: number;
  private nextPullUs: number | undefined;
  private streamId: number | undefined;
  private otherStream = 0;

  /** @throws RangeError for invalid options (see {@link AudioJitterBuffer}). */
  constructor(opts: AudioReceiverOptions = {}) {
    this.jb = new AudioJitterBuffer(opts);
    this.latWin = opts.latencyWindow ?? 4096;
    this.maxCatchUp = opts.maxCatchUpFrames ?? 10;
    if (!Number.isInteger(this.latWin) || this.latWin < 1) throw new RangeError(`AudioReceiver: latencyWindow must be a positive integer, got ${this.latWin}`);
    if (!Number.isInteger(this.maxCatchUp) || this.maxCatchUp < 1) throw new RangeError(`AudioReceiver: maxCatchUpFrames must be a positive integer, got ${this.maxCatchUp}`);
  }

  /** An audio frame arrived at `nowUs`. Returns what the jitter buffer did with it ('other-stream' = dropped). */
  onPacket(msg: AudioMessage, nowUs: number): ReturnType<AudioJitterBuffer['insert']> | 'other-stream' {
    if (this.streamId === undefined) this.streamId = msg.streamId;
    else if (msg.streamId !== this.streamId) {
      this.otherStream++;
      return 'other-stream';
    }
    if (this.nextPullUs === undefined) this.nextPullUs = nowUs;
    return this.jb.insert(msg, nowUs);
  }

  /** Extra playout delay for A/V sync (ms; see {@link AudioJitterBuffer.setExtraDelayMs}). @throws RangeError for a negative value. */
  setExtraDelayMs(ms: number): void {
    this.jb.setExtraDelayMs(ms);
  }

  /** When the next playout tick is due (µs), undefined before the first frame. */
  nextWakeUs(): number | undefined {
    return this.nextPullUs;
  }

  /**
   * Run the playout ticks due at `nowUs`: what to play, in order. The caller
   * decodes `frame`s and plays concealment for `concealed`.
   * @param senderClockOffsetUs sender clock - receiver clock (µs), as for video latency (ReceiverEngine.senderClockOffsetUs).
   */
  poll(nowUs: number, senderClockOffsetUs = 0): AudioPlayoutEvent[] {
    const out: AudioPlayoutEvent[] = [];
    if (this.nextPullUs === undefined) return out;
    const step = this.jb.frameDurationUs;
    if (nowUs - this.nextPullUs > this.maxCatchUp * step) this.nextPullUs = nowUs;
    while (this.nextPullUs <= nowUs) {
      const p = this.jb.pull(this.nextPullUs);
      // The next pull is due when what this one plays has played (frames may be 20, 40 or 60 ms: src/engine/audio-rate.ts).
      const played = p.kind === 'frame' ? p.frame.durationUs : p.kind === 'idle' ? 0 : p.durationUs;
      this.nextPullUs += played > 0 ? played : this.jb.frameDurationUs;
      if (p.kind === 'idle') continue;
      if (p.kind === 'frame') this.addLatency(latencySampleMs(p.frame.captureUs, nowUs, senderClockOffsetUs));
      out.push({ playout: p, atUs: nowUs });
    }
    return out;
  }

  private addLatency(ms: number): void {
    if (!Number.isFinite(ms)) return;
    if (this.lat.length < this.latWin) this.lat.push(ms);
    else this.lat[this.latHead] = ms;
    this.latHead = (this.latHead + 1) % this.latWin;
    this.latSum += ms;
    this.latCount++;
  }

  stats(): AudioReceiverStats {
    const p50 = percentile(this.lat, 50);
    const p95 = percentile(this.lat, 95);
    const fin = (x: number) => (Number.isFinite(x) ? x : 0);
    return {
      ...this.jb.stats(),
      streamId: this.streamId,
      mouthToEarMs: { mean: this.latCount > 0 ? this.latSum / this.latCount : 0, p50: fin(p50), p95: fin(p95) },
      mouthToEarP95Ms: fin(p95),
      otherStreamPackets: this.otherStream,
    };
  }
}
