/**
 * Audio/video synchronisation on the receiver (lip sync), I/O-free: from
 * the delays with which each stream is played out, decide how much extra
 * delay to add to the audio (its jitter-buffer target) or to the video (its
 * playout delay) so that a sound and the picture captured with it are
 * played out together.
 *
 * Both streams carry capture times on the sender's one clock (camera frame
 * read, first microphone sample), so a stream's playout delay is
 * `played-out time (receiver clock) - capture time (sender clock)`; the
 * unknown clock offset is the same for both and cancels in their difference
 * `videoDelay - audioDelay`, the A/V offset (positive: the video comes late,
 * the audio must wait). This replaces libwebrtc's reconstruction of capture
 * times from RTCP sender reports (stream_synchronization.cc
 * `ComputeRelativeDelay`): our packets carry the capture time itself.
 *
 * The controller is libwebrtc's (video/stream_synchronization.cc
 * `ComputeDelays`, run every `kSyncIntervalMs` = 1 s by
 * video/rtp_streams_synchronizer2.cc):
 * - once per `intervalMs`, the offset measured over the interval (the median
 *   of each stream's delays, so a key frame or a single late packet does
 *   not move it) enters an average filtered over `filterLength` updates
 *   (`avg = ((L - 1) avg + offset) / L`, kFilterLength = 4);
 * - within +-`minDeltaMs` (kMinDeltaMs = 30) nothing changes;
 * - otherwise half the filtered offset, bounded to +-`maxChangeMs` per update
 *   (kMaxChangeMs = 80), is applied, and the filter restarts from 0 (so
 *   a correction still in progress does not trigger a second one);
 * - the correction first removes extra delay from the stream that has some
 *   (video late: less extra video delay; audio late: less extra audio
 *   delay), and only then adds extra delay to the other stream; at most one
 *   stream carries extra delay;
 * - each extra delay is capped at `maxExtraDelayMs` (libwebrtc allows 10 s;
 *   here 500 ms: beyond it a call feels broken whatever the sync).
 * A stream silent for `staleMs` (camera or microphone stopped) drops the
 * extra delay of the other: there is nothing to keep in sync with.
 *
 * What is measured is what the receiver engine controls: video from capture
 * to the decoder's output, audio from capture to the jitter buffer's
 * playout. The render path after that (compositor and vsync for video, the
 * audio device's buffer) is not seen here; the two are of the same order
 * (tens of ms) and partly cancel. ITU-R BT.1359 puts detectability at 45 ms
 * of audio lead and 125 ms of audio lag; the dead band of +-30 ms keeps the
 * offset well inside.
 */

/** Options of {@link AvSync} (ms). */
export interface AvSyncOptions {
  /** How often the controller acts (ms). Default 1000 (rtp_streams_synchronizer2.cc kSyncIntervalMs). */
  intervalMs?: number;
  /** Length of the offset's averaging filter (updates). Default 4 (kFilterLength). */
  filterLength?: number;
  /** Dead band: a filtered offset within +- this changes nothing (ms). Default 30 (kMinDeltaMs). */
  minDeltaMs?: number;
  /** Largest change of an extra delay per update (ms). Default 80 (kMaxChangeMs). */
  maxChangeMs?: number;
  /** Cap of each stream's extra delay (ms). Default 500. */
  maxExtraDelayMs?: number;
  /** A stream without delay samples for this long releases the other's extra delay (ms). Default 3000. */
  staleMs?: number;
  /** The video's delay can be raised (false: its playout timing is off; only the audio is moved). Default true. */
  canDelayVideo?: boolean;
}

/** Controller state (ms). */
export interface AvSyncStats {
  /** Extra delay asked of the audio jitter buffer (ms). */
  audioExtraDelayMs: number;
  /** Extra delay asked of the video playout (ms). */
  videoExtraDelayMs: number;
  /** Last measured A/V offset: video delay - audio delay over the last interval (ms; positive = video late); 0 before the first. */
  offsetMs: number;
  /** The filtered offset (ms). */
  filteredOffsetMs: number;
  /** Corrections applied so far. */
  adjustments: number;
}

/** Delay samples kept per stream between two updates (the most recent). */
const MAX_SAMPLES = 256;

/** What {@link AvSync.update} asks for: the extra delays now in force (ms). */
export interface AvSyncDelays {
  audioExtraDelayMs: number;
  videoExtraDelayMs: number;
}

function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** See the module comment. */
export class AvSync {
  private readonly o: Required<AvSyncOptions>;
  private readonly video: number[] = [];
  private readonly audio: number[] = [];
  private lastVideoUs = -Infinity;
  private lastAudioUs = -Infinity;
  private nextAtUs: number | undefined;
  private avg = 0;
  private offset = 0;
  private audioExtra = 0;
  private videoExtra = 0;
  private adjustments = 0;

  /** @throws RangeError for an option that is not finite and positive (filterLength: an integer >= 1; minDeltaMs, maxExtraDelayMs may be 0). */
  constructor(opts: AvSyncOptions = {}) {
    this.o = {
      intervalMs: opts.intervalMs ?? 1000,
      filterLength: opts.filterLength ?? 4,
      minDeltaMs: opts.minDeltaMs ?? 30,
      maxChangeMs: opts.maxChangeMs ?? 80,
      maxExtraDelayMs: opts.maxExtraDelayMs ?? 500,
      staleMs: opts.staleMs ?? 3000,
      canDelayVideo: opts.canDelayVideo ?? true,
    };
    const o = this.o;
    for (const k of ['intervalMs', 'maxChangeMs', 'staleMs'] as const) if (!(Number.isFinite(o[k]) && o[k] > 0)) throw new RangeError(`AvSync: ${k} must be finite and > 0, got ${o[k]}`);
    for (const k of ['minDeltaMs', 'maxExtraDelayMs'] as const) if (!(Number.isFinite(o[k]) && o[k] >= 0)) throw new RangeError(`AvSync: ${k} must be finite and >= 0, got ${o[k]}`);
    if (!Number.isInteger(o.filterLength) || o.filterLength < 1) throw new RangeError(`AvSync: filterLength must be an integer >= 1, got ${o.filterLength}`);
  }

  /** A video frame was played out `delayMs` after its capture (receiver clock - sender clock; any constant offset cancels). */
  onVideoDelay(delayMs: number, nowUs: number): void {
    if (!Number.isFinite(delayMs)) return;
    push(this.video, delayMs);
    this.lastVideoUs = nowUs;
  }

  /** An audio frame was played out `delayMs` after its capture (same clocks as {@link onVideoDelay}). */
  onAudioDelay(delayMs: number, nowUs: number): void {
    if (!Number.isFinite(delayMs)) return;
    push(this.audio, delayMs);
    this.lastAudioUs = nowUs;
  }

  /** When {@link update} next acts (µs); undefined before the first sample. */
  nextUpdateUs(): number | undefined {
    return this.nextAtUs;
  }

  /**
   * Run the controller if an interval has passed since its last run; returns
   * the extra delays to apply (ms), which change only when it acted.
   */
  update(nowUs: number): AvSyncDelays {
    if (this.nextAtUs === undefined) {
      if (this.video.length === 0 && this.audio.length === 0) return this.delays();
      this.nextAtUs = nowUs + this.o.intervalMs * 1000;
      return this.delays();
    }
    if (nowUs < this.nextAtUs) return this.delays();
    this.nextAtUs = nowUs + this.o.intervalMs * 1000;
    const staleUs = this.o.staleMs * 1000;
    if (nowUs - this.lastVideoUs > staleUs || nowUs - this.lastAudioUs > staleUs) {
      // One stream stopped: nothing to keep in sync with.
      this.audioExtra = 0;
      this.videoExtra = 0;
      this.avg = 0;
    }
    if (this.video.length === 0 || this.audio.length === 0) return this.delays();
    this.offset = median(this.video) - median(this.audio);
    this.video.length = 0;
    this.audio.length = 0;
    const L = this.o.filterLength;
    this.avg = ((L - 1) * this.avg + this.offset) / L;
    if (Math.abs(this.avg) < this.o.minDeltaMs) return this.delays();
    const step = Math.max(-this.o.maxChangeMs, Math.min(this.o.maxChangeMs, this.avg / 2));
    this.avg = 0;
    const cap = this.o.maxExtraDelayMs;
    if (step > 0) {
      // Video late: take back extra video delay first, else delay the audio.
      if (this.videoExtra > 0) this.videoExtra = Math.max(0, this.videoExtra - step);
      else this.audioExtra = Math.min(cap, this.audioExtra + step);
    } else if (this.audioExtra > 0) {
      // Audio late: take back extra audio delay first, else delay the video.
      this.audioExtra = Math.max(0, this.audioExtra + step);
    } else if (this.o.canDelayVideo) this.videoExtra = Math.min(cap, this.videoExtra - step);
    this.adjustments++;
    return this.delays();
  }

  private delays(): AvSyncDelays {
    return { audioExtraDelayMs: this.audioExtra, videoExtraDelayMs: this.videoExtra };
  }

  stats(): AvSyncStats {
    return { ...this.delays(), offsetMs: this.offset, filteredOffsetMs: this.avg, adjustments: this.adjustments };
  }
}

function push(xs: number[], v: number): void {
  xs.push(v);
  if (xs.length > MAX_SAMPLES) xs.shift();
}
