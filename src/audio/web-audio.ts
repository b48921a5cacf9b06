/**
 * Audio in and out through Web Audio, for browsers without
 * MediaStreamTrackProcessor / MediaStreamTrackGenerator (Firefox):
 *
 * - {@link openWebAudioMic}: the microphone track -> MediaStreamAudioSourceNode
 *   -> ScriptProcessorNode (one channel: the node mixes a stereo track down);
 *   each block becomes an AudioData (f32-planar, mono, the context's sample
 *   rate), read like a MediaStreamTrackProcessor's stream. Timestamps (µs)
 *   count samples from the first block's `playbackTime` (the context's
 *   clock), so they are contiguous, as a capture's are, and free of the
 *   main thread's lateness in handing blocks over. Used by ./opus-encoder.ts.
 * - {@link WebAudioPlayout}: decoded PCM -> AudioBufferSourceNodes scheduled
 *   back to back into a MediaStreamAudioDestinationNode, whose track is the
 *   remote audio track. Used by ./audio-output.ts.
 *
 * ScriptProcessorNode rather than AudioWorklet: a worklet needs a module URL
 * of its own, which a library cannot hand to every bundler, nor load from a
 * blob: under `script-src 'self'`; the script processor runs on the main
 * thread, as a MediaStreamTrackProcessor's reader does.
 *
 * An AudioContext may start suspended (autoplay policy: no user gesture
 * yet). Both resume it at once and again on the page's next pointer or key
 * press; until then the microphone yields nothing and playout drops what it
 * is given (counted).
 *
 * Loaded with `import()` only where the Insertable Streams APIs are missing.
 * Browser only.
 */

/** Samples per microphone block (ScriptProcessorNode buffer size: 21.3 ms at 48 kHz). */
export const MIC_BLOCK = 1024;
/** Most microphone blocks waiting for the reader (~0.5 s at 48 kHz); older ones are dropped. */
export const MIC_MAX_QUEUED = 24;
/** Playout: how far ahead of the context's clock a block is scheduled after an underrun (s): room for the main thread's lateness. */
export const PLAYOUT_LEAD_S = 0.06;
/** Playout: the most a block may start ahead of the context's clock (s); later ones are dropped. */
export const PLAYOUT_MAX_AHEAD_S = 0.3;

type Ctx = AudioContext;

/** A context at 48 kHz (Opus' rate) where the browser allows it, else at its own rate. */
function newContext(): Ctx {
  try {
    return new AudioContext({ sampleRate: 48_000 });
  } catch {
    return new AudioContext();
  }
}

/** Resume `ctx` now and on the page's next pointer or key press (autoplay policy). */
function keepResumed(ctx: Ctx): () => void {
  const resume = () => {
    if (ctx.state === 'suspended') void ctx.resume().catch(() => {});
  };
  resume();
  const doc = (globalThis as { document?: Document }).document;
  for (const ev of ['pointerdown', 'keydown'] as const) doc?.addEventListener(ev, resume, { capture: true });
  return () => {
    for (const ev of ['pointerdown', 'keydown'] as const) doc?.removeEventListener(ev, resume, { capture: true });
  };
}

/** A microphone read through Web Audio: `read()` as a ReadableStreamDefaultReader's. */
export interface WebAudioMic {
  read(): Promise<ReadableStreamReadResult<AudioData>>;
  cancel(): Promise<void>;
  /** Blocks dropped because the reader fell {@link MIC_MAX_QUEUED} behind (their samples still count in the timestamps). */
  readonly dropped: number;
}

/**
 * Read `track` (kind 'audio') through Web Audio (see the module comment).
 * @throws Error when the browser has no AudioContext or refuses the track.
 */
export function openWebAudioMic(track: MediaStreamTrack): WebAudioMic {
  if (typeof AudioContext !== 'function') throw new Error('no AudioContext');
  let ctx = newContext();
  let source: MediaStreamAudioSourceNode;
  try {
    source = ctx.createMediaStreamSource(new MediaStream([track]));
  } catch (e) {
    void ctx.close().catch(() => {});
    // A browser that cannot resample a capture into a 48 kHz context: its own rate.
    if (ctx.sampleRate !== 48_000) throw e;
    ctx = new AudioContext();
    try {
      source = ctx.createMediaStreamSource(new MediaStream([track]));
    } catch (e2) {
      void ctx.close().catch(() => {});
      throw e2;
    }
  }
  const node = ctx.createScriptProcessor(MIC_BLOCK, 1, 1);
  // A script processor runs only when connected to the destination: through a muted gain.
  const mute = ctx.createGain();
  mute.gain.value = 0;
  source.connect(node);
  node.connect(mute);
  mute.connect(ctx.destination);
  const queue: AudioData[] = [];
  let waiter: ((r: ReadableStreamReadResult<AudioData>) => void) | undefined;
  let open = true;
  let dropped = 0;
  /** The first block's time (s, the context's clock) and the samples seen since. */
  let t0: number | undefined;
  let seen = 0;
  const stopResuming = keepResumed(ctx);
  node.onaudioprocess = (e: AudioProcessingEvent) => {
    if (!open) return;
    const input = e.inputBuffer;
    t0 ??= e.playbackTime;
    const data = new AudioData({
      format: 'f32-planar',
      sampleRate: input.sampleRate,
      numberOfFrames: input.length,
      numberOfChannels: 1,
      timestamp: Math.round((t0 + seen / input.sampleRate) * 1e6),
      data: input.getChannelData(0).slice(),
    });
    seen += input.length;
    if (waiter) {
      const w = waiter;
      waiter = undefined;
      w({ value: data, done: false });
      return;
    }
    queue.push(data);
    if (queue.length > MIC_MAX_QUEUED) {
      queue.shift()?.close();
      dropped++;
    }
  };
  const close = () => {
    if (!open) return;
    open = false;
    node.onaudioprocess = null;
    stopResuming();
    source.disconnect();
    node.disconnect();
    void ctx.close().catch(() => {});
    for (const d of queue.splice(0)) d.close();
    waiter?.({ value: undefined, done: true });
    waiter = undefined;
  };
  track.addEventListener('ended', close);
  return {
    read: () => {
      const d = queue.shift();
      if (d) return Promise.resolve({ value: d, done: false });
      if (!open) return Promise.resolve({ value: undefined, done: true });
      return new Promise((r) => {
        waiter = r;
      });
    },
    cancel: async () => {
      track.removeEventListener('ended', close);
      close();
    },
    get dropped() {
      return dropped;
    },
  };
}

/**
 * Decoded audio -> a remote MediaStreamTrack, through Web Audio (see the
 * module comment). Blocks play back to back on the context's clock; after
 * an underrun the next block starts {@link PLAYOUT_LEAD_S} ahead; a block
 * that would start more than {@link PLAYOUT_MAX_AHEAD_S} ahead (the context
 * is suspended, or the jitter buffer's clock runs faster than the context's)
 * is dropped (counted).
 */
export class WebAudioPlayout {
  readonly track: MediaStreamTrack;
  private readonly ctx: Ctx;
  private readonly dest: MediaStreamAudioDestinationNode;
  private readonly stopResuming: () => void;
  private nextS = 0;
  /** Blocks not played: written while the context was not running, or more than {@link PLAYOUT_MAX_AHEAD_S} ahead, or empty. */
  dropped = 0;
  /** Underruns: a block written after everything before it had played (a gap of silence before it). */
  underruns = 0;

  /**
   * The context runs at the device's own rate, not 48 kHz: the page plays {@link track}
   * in an AudioContext of its own, usually made with the default rate, and Firefox (140
   * ESR) cannot connect a MediaStream from a context of another rate ("Connecting
   * AudioNodes from AudioContexts with different sample-rate is currently not
   * supported"). Blocks keep the decoder's rate; their buffer source resamples.
   * @throws Error when the browser has no AudioContext.
   */
  constructor() {
    if (typeof AudioContext !== 'function') throw new Error('no AudioContext');
    this.ctx = new AudioContext();
    this.dest = this.ctx.createMediaStreamDestination();
    this.track = this.dest.stream.getAudioTracks()[0];
    this.stopResuming = keepResumed(this.ctx);
  }

  /** Play `pcm` (mono, `sampleRate` Hz) after what was written before. */
  write(pcm: Float32Array<ArrayBuffer>, sampleRate: number): void {
    const ctx = this.ctx;
    const now = ctx.currentTime;
    if (this.nextS < now) {
      if (this.nextS > 0) this.underruns++;
      this.nextS = now + PLAYOUT_LEAD_S;
    }
    if (ctx.state !== 'running' || this.nextS - now > PLAYOUT_MAX_AHEAD_S || pcm.length === 0) {
      this.dropped++;
      return;
    }
    const buf = ctx.createBuffer(1, pcm.length, sampleRate);
    buf.copyToChannel(pcm, 0);
    const src = ctx.createBufferSource();
    src.buffer = buf;
    src.connect(this.dest);
    src.start(this.nextS);
    this.nextS += pcm.length / sampleRate;
  }

  close(): void {
    this.stopResuming();
    this.track.stop();
    void this.ctx.close().catch(() => {});
  }
}
