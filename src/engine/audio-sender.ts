/**
 * The audio half of the sender, I/O-free: numbers each encoded audio frame
 * (one Opus frame per packet, RFC 7587 §4.2), picks its path(s) with
 * {@link AudioPathSelector} (fastest path, a copy on a second path when the
 * fastest is lossy) and writes it at once, ahead of every video packet the
 * pacers hold: audio is the highest media priority and, as in libwebrtc's
 * pacer (modules/pacing/pacing_controller.cc: audio is not paced by default
 * and jumps the queue), it does not wait for the media budget. It still goes
 * through {@link SenderPath.send}, so it takes a per-path sequence number and
 * the path's congestion controller sees it in its feedback.
 * No NACK, no FEC: a lost frame is concealed at the receiver.
 */
import type { PathId } from '../core/types.js';
import { AudioPathSelector, type AudioPathCandidate, type AudioPathSelectorOptions } from '../sched/audio-paths.js';
import { encodeAudio, encodePacket } from '../wire/encode.js';
import type { AudioMessage } from '../wire/types.js';
import { RateMeter } from './rate-meter.js';
import type { SenderPaths } from './sender-paths.js';

/** One encoded audio frame handed to {@link SenderEngine.sendAudio}. */
export interface AudioFrameInput {
  /** Capture time of the first sample on the sender clock (µs). */
  captureUs: number;
  /** Frame duration (µs); 20000 for 20 ms Opus frames. */
  durationUs: number;
  /** The encoded frame (one Opus packet, at most 1275 bytes). */
  data: Uint8Array;
}

/** Audio sender counters (SenderStats.audio). */
export interface AudioSenderStats {
  framesSent: number;
  /** Packets written (copies included). */
  packetsSent: number;
  /** Copies sent on a second path. */
  duplicatesSent: number;
  /** Frames no path could take (no path up, or every sink refused). */
  framesUnsent: number;
  /** Packets written per path. */
  perPath: Array<{ id: PathId; packetsSent: number }>;
  /** Audio send rate over the last second (bps, copies included). */
  rateBps: number;
}

/** Envelope overhead (bytes, path id + seq + send time + tag) for the path choice. */
const AUDIO_OVERHEAD_BYTES = 16;

/** See the module comment. */
export class AudioSender {
  private seq = 0;
  private readonly selector: AudioPathSelector;
  private readonly perPath = new Map<PathId, number>();
  private readonly rate = new RateMeter(1_000_000);
  private readonly c = { framesSent: 0, packetsSent: 0, duplicatesSent: 0, framesUnsent: 0 };

  constructor(
    private readonly paths: SenderPaths,
    private readonly streamId: number,
    opts?: AudioPathSelectorOptions,
    /** May audio use this path? (The `single` baseline keeps audio on its one path.) */
    private readonly allowed: (id: PathId) => boolean = () => true,
  ) {
    this.selector = new AudioPathSelector(opts);
  }

  /**
   * Send one frame now. Returns the number of packets written (0 when no path took it).
   * @throws WireError ERR_INVALID_MESSAGE for a frame the wire rejects (over 1275 bytes, bad duration or time).
   */
  send(frame: AudioFrameInput, nowUs: number): number {
    const audio: AudioMessage = { streamId: this.streamId, seq: this.seq, captureUs: frame.captureUs, durationUs: frame.durationUs, payload: frame.data };
    // Encoded once (throws on caller misuse before the sequence number is spent); each copy only wraps it.
    const body = encodeAudio(audio);
    this.seq = (this.seq + 1) >>> 0;
    this.c.framesSent++;
    // Any live path may carry audio (a path the video scheduler disabled still delivers small packets), except where `allowed` says no.
    const candidates: AudioPathCandidate[] = this.paths.states(nowUs).map((s) => ({ ...s, up: s.up && this.allowed(s.id), aheadBytes: this.paths.get(s.id)?.sink.bufferedAmount() ?? 0 }));
    let sent = 0;
    for (const id of this.selector.choose(candidates, body.length + AUDIO_OVERHEAD_BYTES)) {
      const p = this.paths.get(id);
      if (!p) continue;
      const r = p.send((pathSeq) => encodePacket({ pathId: id, pathSeq, sendTimeUs: nowUs }, 'audio', body), nowUs);
      if (!r) {
        p.stats.sendFailures++;
        continue;
      }
      this.paths.manager.onDataSent(id, nowUs);
      this.rate.add(nowUs, r.bytes);
      this.perPath.set(id, (this.perPath.get(id) ?? 0) + 1);
      this.c.packetsSent++;
      if (sent > 0) this.c.duplicatesSent++;
      sent++;
    }
    if (sent === 0) this.c.framesUnsent++;
    return sent;
  }

  /** Audio send rate over the last second (bps). */
  rateBps(nowUs: number): number {
    return this.rate.rateBps(nowUs);
  }

  stats(nowUs: number): AudioSenderStats {
    return { ...this.c, perPath: [...this.perPath].map(([id, packetsSent]) => ({ id, packetsSent })), rateBps: this.rateBps(nowUs) };
  }
}
