/** Public types of the {@link import('./receiver.js').ReceiverEngine}: its configuration, output frames and events. */
import type { AudioPlayoutEvent, AudioReceiverOptions } from '../audio/audio-receiver.js';
import type { Clock } from '../core/clock.js';
import type { AvSyncOptions } from '../feedback/av-sync.js';
import type { NackGeneratorOptions } from '../feedback/nack.js';
import type { PlayoutOptions } from '../feedback/playout.js';
import type { StreamInfoMessage } from '../wire/types.js';

export interface ReceiverEngineConfig {
  clock: Clock;
  /** Per-path report interval (ms, default 50; Converge/GCC use 50-100). */
  reportIntervalMs?: number;
  /**
   * Send each path's receiver report on every path, not only its own
   * (default false). A path's reverse direction can stall while its forward
   * direction delivers (an LTE downlink gap: mm:tmobile+att's ATT downlink
   * carries a packet a second for 10 s while its uplink works); with its
   * reports on the other paths the sender still sees the path deliver
   * instead of declaring it down. The sender applies the first copy of each
   * report and drops the rest (SenderEngine, report time per path). Costs
   * one report's bytes per extra path and interval (~50-150 bytes / 50 ms).
   */
  reportCopies?: boolean;
  /**
   * Ask for a key frame as soon as the NACK generator gives up on a packet
   * (retries exhausted or older than its NACK age limit) while a stream's
   * picture is stalled (KeyframeRequester.stalled), instead of waiting for
   * the frame buffer's missing-frame timeout, which never starts while no
   * later frame completes (a path dying with frames in it). libwebrtc's
   * RtpVideoStreamReceiver2 likewise requests a key frame when its NACK
   * module drops packets it can no longer recover
   * (modules/video_coding/nack_requester.cc). Default true. Measured with
   * SenderEngineConfig.keyframeCoalesceTransmit false (cellular suite,
   * converge, 3 seeds): tune half 7.13 -> 5.59 s frozen (time from a
   * key-frame-wait freeze's start to the request: 7.8 -> 2.6 s summed on
   * the check half, 2 seeds), check half 11.51 -> 11.07 s.
   */
  keyframeOnNackGiveUp?: boolean;
  /**
   * Repeat a pending key frame request (granted, not answered by a key frame)
   * while the stream's picture stays stalled, each time KeyframeRequester's
   * spacing allows, and space requests by the lowest per-path RTT of the
   * clock exchange instead of the NACK round trip. The sender's coalescing
   * gate (src/engine/keyframe-gate.ts) drops a request its last key frame
   * still answers, and the receiver, which cannot tell, otherwise asked
   * again only when the NACK next gave up (0.6 s later on issue 10's wc:8_5,
   * where the NACK round trip of the collapsing path had grown to 300-500
   * ms, while the new key frame can take the fastest path). libwebrtc's
   * receive stream repeats a pending key frame request every 200 ms
   * (video/video_receive_stream2.cc, max_wait_for_keyframe). Default true.
   * Measured (cellular suite, converge, 3 seeds, against main 9e990cd):
   * tune half 5.59 -> 5.59 s frozen (every pair to the ms), check half
   * 10.96 -> 10.15 s (wc:8_5 2.51 -> 1.48, wc:21_2 4.30 -> 4.53); carriers,
   * collapse, failover unchanged (docs/results.md, `kf4`).
   */
  keyframeRepeat?: boolean;
  /**
   * The frame buffer's missing-frame timeout asks for a key frame but keeps
   * the waiting frames, so a retransmission that arrives after the timeout
   * still continues decoding (FrameBufferOptions.keepOnTimeout; libwebrtc
   * video/video_receive_stream2.cc OnDecodableFrameTimeout). Default true;
   * false drops them and waits for the key frame (the rule before stop 45).
   * So a `keyframeRequest` event with reason 'frame-buffer-timeout' no
   * longer means frames were dropped: decoding may resume before the key
   * frame (a rate spike the sender sends anyway) arrives.
   */
  keepFramesOnTimeout?: boolean;
  /** RTT assumed until the first report round trip (or NACK) measures one (ms, default 100). */
  defaultRttMs?: number;
  /**
   * Least time between two clock echoes this side sends on one path in
   * answer to the peer's reports (ms, default 1000, about RTCP's report
   * rate; the first report on a path is answered at once, so the peer knows
   * the RTT after one report round trip). 0 answers every report. Each echo
   * is a small datagram on the media direction the congestion controller
   * does not see: the simulator showed 5 per second and path (200 ms)
   * shifting results on `constant` (p95 latency 116 -> 132 ms), 1 per second not.
   */
  clockEchoIntervalMs?: number;
  /** Bounded FCD/IFD history for stats (frames, default 2000). */
  historyFrames?: number;
  /**
   * Memory bounds of the receive buffers (defaults sized for 4K video at up to
   * ~50 Mbps; together ~48 MiB plus bookkeeping). A remote peer cannot make
   * the receiver hold more than these, whatever it sends; entries over a
   * budget or age are dropped and counted in {@link ReceiverStats.memoryDrops}.
   */
  memory?: ReceiverMemoryConfig;
  /**
   * Playout timing (src/feedback/playout.ts, after libwebrtc VCMTiming): a
   * decodable frame goes to the decoder at its expected arrival plus a delay
   * that follows the frame-jitter estimate, plus the RTT while NACK
   * recoveries are steady and the RTT shows no queue (`nackSteadyBins`, on by
   * default; optionally while any NACK was sent recently, `nackHoldMs`), so
   * delay variations shorter than that
   * delay cost no freeze. Default: 0-400 ms adaptive; `{ maxDelayMs: 0 }` decodes every frame as soon as it is
   * decodable (lowest latency, every delay variation shows as a gap).
   */
  playout?: PlayoutOptions;
  /** Audio jitter buffer and playout (src/audio/jitter-buffer.ts): 20-200 ms adaptive target by default. */
  audio?: AudioReceiverOptions;
  /**
   * Lip sync (src/feedback/av-sync.ts, after libwebrtc stream_synchronization.cc):
   * every second, extra delay for whichever of audio and video plays out
   * earlier, in steps of at most 80 ms, until their offset is within 30 ms;
   * at most 500 ms. On by default; `false` turns it off.
   */
  avSync?: AvSyncOptions | false;
  /**
   * NACK timing (src/feedback/nack.ts): the least and the most time a missing
   * packet waits for a late original before its first NACK (ms; defaults 30
   * and 100, see NackGeneratorOptions.maxReorderWindowMs). Between the two the
   * wait follows the reordering the receiver observed between paths.
   */
  nack?: Pick<NackGeneratorOptions, 'reorderWindowMs' | 'maxReorderWindowMs'>;
}

/** Byte budgets and age bounds of the receiver's buffers (see {@link ReceiverEngineConfig.memory}). */
export interface ReceiverMemoryConfig {
  /** Complete frames waiting for decode, bytes (default 24 MiB). */
  frameBufferBytes?: number;
  /** A complete frame waiting longer is dropped even without a key frame (ms, default 3000). */
  frameBufferMaxAgeMs?: number;
  /** Fragments of incomplete frames, bytes (default 16 MiB). */
  depacketizerBytes?: number;
  /** An incomplete frame older than this is dropped (ms, default 3000). */
  depacketizerMaxAgeMs?: number;
  /** Media bodies and parities kept for FEC recovery, bytes (default 8 MiB). */
  fecBytes?: number;
  /** FEC-window entries older than this are dropped (ms, default 1000). */
  fecMaxAgeMs?: number;
  /** NACK window: most missing packets tracked per stream; a larger gap resets the list and asks for a key frame (default 1000). */
  nackMaxTracked?: number;
}

/** A frame ready for the decoder, in decode order. */
export interface DecodableFrame {
  streamId: number;
  frameId: number;
  keyFrame: boolean;
  /** Sender clock capture time (µs). */
  captureUs: number;
  data: Uint8Array;
}

export interface ReceiverEvents {
  frame: (frame: DecodableFrame) => void;
  streamInfo: (info: StreamInfoMessage) => void;
  /** One audio frame interval to play now: a frame to decode, or concealment (src/audio/audio-receiver.ts). */
  audio: (ev: AudioPlayoutEvent) => void;
  /** A key frame request (PLI) was sent for `streamId` (not the rate-limited ones); `reason` as in KeyframeRequesterStats.byReason. */
  keyframeRequest: (streamId: number, reason: string) => void;
}
