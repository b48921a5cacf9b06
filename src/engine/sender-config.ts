/**
 * Configuration and events of {@link import('./sender.js').SenderEngine}.
 */
import type { EstimatorSpec } from '../cc/registry.js';
import type { BandwidthEstimator } from '../cc/types.js';
import type { Clock } from '../core/clock.js';
import type { PathId } from '../core/types.js';
import type { FecCodeEntry, FecCodeName } from '../fec/codes.js';
import type { FecPolicySpec } from '../fec/factory.js';
import type { AudioPathSelectorOptions } from '../sched/audio-paths.js';
import type { PathHysteresisConfig } from '../sched/path-hysteresis.js';
import { PUSHBACK_QUEUE_MS } from '../cc/congestion-window-pushback.js';
import type { AudioRateConfig } from './audio-rate.js';
import type { PathHealthConfig } from './path-health.js';
import type { PathEvent } from '../sched/path-manager.js';
import type { SchedulerSpec } from '../sched/factory.js';

export interface SenderEngineConfig {
  clock: Clock;
  streamId?: number;
  /** Scheduler: a registered name, an entry (src/strategies.ts) or an instance (default 'converge'). */
  scheduler?: SchedulerSpec;
  /** For scheduler 'single': the path to use. */
  singlePath?: PathId;
  /** FEC policy: a registered name, an entry (src/strategies.ts) or an instance (default 'path'). */
  fec?: FecPolicySpec;
  /**
   * FEC code name or entry (src/fec/codes.ts; default 'xor'): which erasure
   * code builds the repair packets. The receiver must know the code too
   * (built-in, or registered with `registerFecCode` on its page).
   */
  fecCode?: FecCodeEntry | FecCodeName;
  /** Whole-datagram MTU in bytes (default 1200). */
  mtuBytes?: number;
  /** App cap on the encoder target (bps, default 8 Mbps). */
  maxBitrateBps?: number;
  /**
   * Floor of the encoder target (bps, default 50 kbps: about what the
   * adaptation ladder's smallest floor step, 160x120@30, needs; src/adapt/ladder.ts).
   * Under ~150 kbps the camera's ladder goes on below 320x180 so the encoder
   * can meet the target; the floor was 150 kbps before those steps.
   */
  minBitrateBps?: number;
  /** Initial per-path rate (bps, default 1 Mbps). */
  startBitrateBps?: number;
  /** Per-path bandwidth estimator: a registered name or an entry (src/cc/registry.ts; default 'gcc'). Ignored when `createEstimator` is given. */
  estimator?: EstimatorSpec;
  /** Factory for a per-path estimator (overrides `estimator`). */
  createEstimator?: (pathId: PathId) => BandwidthEstimator;
  /** NACK history per stream in packets (default 4096). */
  historyPackets?: number;
  /** StreamInfo repeat interval (ms, default 1000). */
  streamInfoIntervalMs?: number;
  /**
   * Act on the receiver's QoE feedback (Converge §4.2; default true). False
   * gives the "Converge without feedback" baseline of Converge Table 4.
   */
  qoeFeedback?: boolean;
  /** Bandwidth probing for the default GCC estimators (default true). */
  probing?: boolean;
  /** Audio path choice (src/sched/audio-paths.ts): duplication loss threshold (default 2 %), switch margin. */
  audio?: AudioPathSelectorOptions;
  /**
   * Pacer tuning (src/cc/pacer.ts PacerConfig): the datachannel budget, the
   * media deadline, the pacing factor (default 1.5, or the estimator's) and
   * the send burst (`burstMs`, default 0; libwebrtc sends bursts of 40 ms at
   * 2.5 x the target, pacing_controller.h kDefaultBurstInterval).
   */
  pacer?: { bufferBudgetMs?: number; maxQueueDelayMs?: number; pacingFactor?: number; burstMs?: number };
  /**
   * Frame dropping before encoding ({@link SenderEngine.shouldDropFrame}):
   * drop a delta frame when every usable path's sender queue (pacer +
   * bufferedAmount) takes longer than this many frame intervals to drain at
   * the path's rate. 0 = never drop. Default 3.
   */
  dropQueueFrames?: number;
  /** Longest run of frames dropped in a row before one is let through (default 3). */
  maxConsecutiveDrops?: number;
  /**
   * Key-frame economy in a stalled datachannel ({@link SenderEngine.shouldDropFrame}):
   * a key frame is dropped before encoding (and the next camera frame tried
   * again as one) while the last key frame still waits in the send buffer of
   * every connected media path. An RTCDataChannel cannot discard what it
   * holds: behind a stalled SCTP association (no SACKs over a fading reverse
   * link) a second key frame only lengthens the backlog the receiver must get
   * through before it sees the newer picture. Default true. Browser, carriers,
   * 60 s, frozen s ours / Chromium's WebRTC over the same path (load 7-11):
   * T-Mobile off 10.2 / 3.0 and 5.1 / 5.3, on 2.7 / 2.8 and 2.5 / 6.1;
   * Verizon off 7.9 / 2.1, on 0.2 / 0.6; key frame requests 5-13 -> 0-1.
   * The simulator's ideal datachannel has no bufferedAmount: no change there.
   */
  holdKeyFrameWhileBuffered?: boolean;
  /**
   * Time each packet for the estimator when it leaves the datachannel's
   * buffer for the network, not when it was written into it
   * (SenderPath.observeDepartures; libwebrtc stamps the send time when the
   * socket takes the packet). Only a datachannel that holds a backlog
   * (bufferedAmount) changes anything; the simulator's ideal datachannel has
   * none. Default false: simulator with `--datachannel sctp` (cellular suite,
   * seed 1, frozen s off -> on) converge tune 7.55 -> 6.01, check 17.57 ->
   * 15.40, single:1 33.9 -> 32.0 / 37.2 -> 34.0, but single:0 check 87.6 ->
   * 90.2; the browser runs (load 10-20) could not tell (docs/results.md).
   */
  departureTimes?: boolean;
  /**
   * A path with a standing queue of ours counts, and is paced, at what it
   * delivered (ms; 0 = off). While a path's SRTT exceeds its min RTT by
   * more than this (and the link test of {@link queuedDeliveryRatio} found
   * the link limited), its rate S_i (Converge Eq. 1 split, encoder target)
   * is at most the rate the receiver's reports show it delivered over the
   * last 200 ms, and its pacer releases no more than it. On a fading link
   * GCC's estimate is stale: a full drop-tail queue shows no delay gradient,
   * so the loss-based bound governs, 1.1-2x (our pacer at 1.5x that: up to
   * 10x) above what the link delivers, and what the pacer releases beyond it
   * is dropped in the network queue and costs a NACK round (issue 10,
   * wc:21_2). Held in the pacer instead, the backlog counts in the
   * scheduler's completion times. Source: BBR paces at its measured delivery
   * rate (draft-cardwell-iccrg-bbr-congestion-control §4.6.2); LoLa §3.2
   * times paths by their ACK arrivals. Default 0 (off). With 60 (and
   * queuedDeliveryRatio 0.9) the simulator gains (converge, cellular suite,
   * 3 seeds: tune 5.59 -> 4.23 s frozen, check 10.96 -> 9.17 s, all 0.79x ->
   * 0.64x the best single paths; carriers 0.31 -> 0.22 s), but in the browser
   * (carriers, converge, 30 s, two interleaved pairs) it halved goodput
   * (0.88-1.19 vs 1.66-1.85 Mbps) and cost 3-8 dB of PSNR for no fewer
   * freezes (1.28-2.38 vs 1.71-2.04 s): the datachannel's own queue keeps
   * the SRTT up and its write times are not departures, so the cap binds
   * where the simulator's ideal channel does not (docs/results.md, stop 30).
   * Alone (ratio 0, fade2): tune 4.50, check 10.00 s, but carriers 0.54 s.
   */
  queuedDeliveryMs?: number;
  /**
   * The delivery cap ({@link queuedDeliveryMs}) starts only on a link that
   * delivers less than this fraction of what we sent it (0..1; 0 = on any
   * standing queue, fade2's rule; default 0.9). At each report of the path:
   * the rate delivered over the last 200 ms of receiver time against the
   * rate sent over the 200 ms before the newest delivered datagram's send,
   * i.e. the same bytes one trip earlier. Once that falls below the fraction
   * during a standing queue, the cap holds until the queue is gone; it is
   * dropped, and not taken up again, while the newest delivered datagram was
   * sent within 200 ms after the path was last silent (suspect or down: the
   * delivery rate right after a silence or a feedback gap says nothing about
   * the link). A fading link delivers less than was sent; a path that we
   * send little on, or that is ramping up, delivers what was sent (BBR marks
   * such rate samples application-limited and does not lower its estimate on
   * them, draft-cheng-iccrg-delivery-rate-estimation §3.3); a delay spike
   * delivers late but all of it. 0.9: a link that loses or queues more than
   * 10 % of what was sent, the loss above which GCC decreases
   * (draft-ietf-rmcat-gcc-02 §6). Measured in docs/results.md (the fade3
   * report): with 0 the cap lost carriers (0.31 -> 0.54 s) and the mahimahi
   * LTE pairs; with 0.9 it wins both halves and carriers.
   */
  queuedDeliveryRatio?: number;
  /**
   * Protection overhead (0..1, default 0.5; 0 = off): each path counts in
   * the encoder target (the sum of S_i) at its S_i x (1 - o), o = the share
   * of the path's send rate over the last second that was retransmissions
   * (NACK, RACK, failover duplicates) and FEC, capped at this value; the
   * Converge Eq. 1 split and pacing still use S_i. libwebrtc gives its
   * encoder estimate x (1 - protection overhead), the share capped at 0.5
   * (FecControllerDefault::UpdateFecRates, kProtectionOverheadRateThreshold,
   * modules/video_coding/fec_controller_default.cc; RtpVideoSender::
   * ProtectionRequest counts the RTX and FEC send rates over 1 s). Simulator,
   * converge, cellular suite, frozen s (on vs off): tune seeds 1-3 5.95 ->
   * 4.88, seeds 4-6 5.86 -> 4.44; check seeds 1-3 10.64 -> 9.59, seeds 4-6
   * 11.64 -> 12.17 (a 1e-6 cut alone moves the tune half by +0.99 s: the
   * halves' noise floor); carriers 1.34 -> 0.44 s over 3 seeds, collapse,
   * failover, flap tie. Loss-sweep at 10 % loss: 373.8 -> 357.7 s over seeds
   * 1-15 x 3 FEC policies (seeds 1-3 alone, 63.0 -> 76.3 s, are the one worse
   * triple of five); at 2 %: 191.3 -> 199.5 s over seeds 1-12 (the target
   * sits at its 8 Mbps cap there, the cut rarely binds). Counting only the
   * video in the denominator (media + FEC + retransmissions, as libwebrtc:
   * no audio, probes or padding) cut deeper and lost the tune half (6.16 s).
   */
  protectionOverheadMax?: number;
  /**
   * Temporal layers: a frame that would be an upper-layer frame is dropped
   * before encoding once the queues exceed this fraction of `dropQueueFrames`
   * (0..1, default 1 = the same threshold as base-layer frames). Below 1,
   * upper-layer frames go first under pushback; nothing depends on them.
   */
  upperLayerDropFactor?: number;
  /**
   * Audio encoding from the paths' rate ({@link SenderEngine.audioEncoding}:
   * Opus bitrate and frame duration, src/engine/audio-rate.ts); false keeps
   * the first step (32 kbps, 20 ms frames). Default on.
   */
  audioRate?: AudioRateConfig | false;
  /**
   * Congestion-window pushback of the encoder target (libwebrtc
   * congestion_window_pushback_controller.cc; default true).
   */
  cwndPushback?: boolean;
  /**
   * The pushback's accepted queue (ms): the data window is the sum over the
   * usable paths of S_i x (SRTT_i + this). Default 350 ms, libwebrtc's
   * CongestionWindowConfig default (PUSHBACK_QUEUE_MS). 100 ms (opt-in)
   * pushes the encoder back within a video call's playout slack: cellular
   * suite, converge, seeds 1-12 in four sets, check half -0.85 / -1.30 /
   * -1.23 / -0.49 s, tune -0.22 / +1.56 / -0.55 / -1.19 s, goodput -0.3 %;
   * but after a relay switch (tests/unit/sim/overlay.test.ts) the new
   * route's rate is 0.8-1.7 Mbps 3-7 s after the switch instead of 1.2-2.3, and
   * 175 ms gained nothing (docs/results.md, stop 40). Most of what 100 ms
   * gains comes from the pacer queue in the outstanding bytes: counting the
   * bytes in flight only (libwebrtc's default), check half +1.05 / +0.58 s
   * against 100 ms with it (stop 41). Values under ~100 ms
   * push back even on a clean link (0: the window is S_i x SRTT_i alone).
   * No effect with `cwndPushback` false. Finite, >= 0; a RangeError otherwise.
   */
  pushbackQueueMs?: number;
  /**
   * Demote a path that fails or loses heavily, promote it back only after
   * it stayed clean for a hold that doubles per recent fault
   * (src/sched/path-hysteresis.ts). A fault is a failure (a
   * silence past the path's learned threshold whose packets turned out
   * lost, a transport that is not connected, or 2 s without a report) or
   * random loss above 15 % sustained over 3 loss windows at the path's base
   * RTT (src/engine/path-health.ts): an LTE uplink's delay stalls and
   * congestion drops are not faults, except on a path whose congestion
   * controller has sat at its minimum rate for 2 s while another usable
   * path loses less than half as much (src/engine/path-recovery.ts,
   * the rate floor). A demoted path carries no media and
   * does not count in the encoder target; padding every 50 ms keeps its RTT
   * and loss measured. Never demotes the last usable path. true = defaults,
   * an object = tuned, false = off. Default true: on the cellular suite
   * (3 seeds, converge total freeze) tune 23.8 -> 21.7 s, check 18.3 ->
   * 16.7 s, no pair below 0.95x its best single path's goodput; lossy-path
   * 2.1 -> 0.24 s (path 1 alone: 0), flap 3.3 -> 1.4 s, `carriers` 1.2 ->
   * 0.65 s at 0.98x the goodput.
   */
  pathHysteresis?: boolean | Partial<PathHysteresisConfig>;
  /**
   * Fast failover: a path is suspect once it has been silent (no
   * receiver report while packets are outstanding) for its learned silence
   * threshold (PathHealth.silenceThresholdUs: max(100 ms, 2 x SRTT, 1.25 x
   * the 99th percentile of its recent report gaps)) instead of max(250 ms,
   * 2 x SRTT + 100 ms) while another enabled path is up and reporting, and
   * once per silence past that threshold its unreported media (frames since
   * the newest key frame, at most 1 s old) is duplicated onto the best other
   * usable path if it drains there within 150 ms at that path's rate; else
   * the receiver's NACKs recover it (their retransmissions avoid the silent
   * path). Default true since the key frame it used to ask for in that case
   * is gone and the receiver's reorder wait no longer learns from
   * retransmissions (measured, converge, fast failover on vs off, same
   * code otherwise): failover longest freeze 0/193/0 vs 0/311/0 ms (3
   * seeds), flap total freeze 0/0/430 vs 213/624/696 ms (path 1 alone: 0),
   * cellular suite (1 seed) tune / check half 11.7 / 11.1 vs 12.1 / 14.6 s
   * at the same goodput; worst pair mm:verizon+att +0.3 s. (Before those
   * two changes it cost 1-4 s of freeze on the mahimahi LTE pairs.)
   */
  fastFailover?: boolean;
  /**
   * Resend a media packet as soon as the sender's per-path loss detection
   * (RACK, RFC 8985 §6.2; src/feedback/path-rack.ts) declares it lost: a
   * packet sent later on the same path was delivered and a reorder window
   * (min RTT / 4) has passed. Saves the receiver's NACK reorder wait, which
   * must cover the delay difference between paths (up to 100 ms; 200 when this was measured). The
   * resend goes through the NACK rules (best path, once per 0.75 x RTT, at
   * most 3 times), and only while RACK is ahead of the NACK (first sent at
   * most the lowest SRTT + 200 ms ago). Default true: measured (converge,
   * cellular suite, 3 seeds, off -> on) tune half 7.52 -> 7.13 s frozen,
   * check half 12.29 -> 11.51 s, worst pair wc:7_3 +0.43 s (1.76 s, still
   * under its best single path's 2.0 s); carriers 0.75 -> 0.57 s; failover
   * 0 -> 0; loss-sweep frozen time lower with every FEC policy; no spurious
   * detection. The lost
   * packets behind the freezes are mostly on paths whose RTT under
   * queueing is as long as the receiver's reorder wait, where RACK is no
   * faster (resend after ~275 ms either way). Cost: RACK cannot see FEC
   * recoveries, so with the webrtc-table FEC it resends what FEC would
   * repair (loss-sweep retransmitted bytes 0.17 % -> 1.2 % of goodput).
   */
  rack?: boolean;
  /**
   * When a path's reports resume after an outage (>= 700 ms of silence),
   * probe it at the rate it had and let the result restore its estimate
   * (GccEstimator.onPathRestored). 'total': only when no other path carried
   * the call meanwhile (both/all paths were down: the encoder target is back
   * within an RTT or two instead of GCC's 8%/s climb); 'any': for every
   * returning path; 'off': never. Default 'total' ('any' lost on the
   * cellular suite: a WiFi path that returns for a moment and fades again
   * took load back too fast).
   */
  outageRestore?: 'total' | 'any' | 'off';
  /**
   * How long (ms) a path must have been live (reporting: neither suspect
   * nor down) to count as established (SenderPaths.isDemoted). A path the
   * hysteresis demoted yields only to an established path whose SRTT is at
   * most the hysteresis' promoteMaxRttExcessMs above its own; with
   * {@link probation} a path that is not established is itself benched (no
   * media, padding keeps it measured) while an established one can carry the
   * call. A path whose reports arrive in bursts after long silences (an LTE
   * downlink that delivers a packet a second) is live for a few hundred ms
   * after each burst: before this rule the call and the encoder target moved
   * onto it in those moments (mm:tmobile+att, 20-28 s: four freezes of
   * 0.2-0.7 s while the other path delivered 2-5 Mbps). 1 s is about the
   * tail of an LTE uplink's delay stalls (src/engine/path-health.ts).
   * 0 = off (any live path is an alternative, nothing is on probation).
   * Default 1000. Measured (cellular suite, converge, 3 seeds, this rule
   * with probation vs off): tune half 7.9 vs 10.0 s frozen (best single
   * paths 14.1 s), 14/14 vs 13/14 pairs within +0.5 s; check half 12.2 vs
   * 14.7 s (8.6 s), 13/15 both; goodput >= 0.98x the best single path on
   * every pair. failover, flap, collapse, constant unchanged (2 seeds);
   * carriers (6 seeds) 1.01 vs 1.18 s frozen at 4.33 vs 4.68 Mbps.
   */
  fallbackEstablishMs?: number;
  /**
   * With fallbackEstablishMs > 0, bench a path that is not established
   * (true: gone, i.e. suspect or down, within fallbackEstablishMs; 'down':
   * down within it, i.e. silent for the path manager's downAfterMs) like a
   * demoted one while an established path can carry the call. Default true
   * ('down' benches less often: 1 seed, tune 7.8 vs 7.1 s, check 11.2 vs
   * 11.2 s; false keeps only the fallback rule: tune 8.4 s, as off).
   */
  probation?: boolean | 'down';
  /**
   * With probation: a path benched only for probation (gone within
   * fallbackEstablishMs, not demoted by the hysteresis) yields only to an
   * alternative whose estimate is at least this fraction of its own
   * (SenderPaths.isDemoted). A feedback gap (an LTE downlink outage while
   * the uplink delivers: mm:tmobile+att at 48 s and 117 s) made the path
   * that carried 5-7 Mbps give the call for 1 s to a backup estimated at
   * 0.1-0.4 Mbps. 0 = any alternative (default). At 0.5 (cellular suite,
   * converge, 3 seeds, frozen s; docs/results.md): tune 5.59 -> 5.10, check
   * 10.96 -> 10.79; failover, flap, collapse identical; carriers 0.31 ->
   * 0.35 at 4.54 -> 4.82 Mbps; 0.25 and 1.0 lose mm:verizon+att.
   * Re-measured on stop 34 (main 3b6788b; the gap rule, relative promotion
   * and the RTP carrier on): probation is the only bench that holds the
   * encoder target far below a live benched path's estimate (cellular suite,
   * 100 ms samples, 43 converge runs: 130 samples, 38 at the 150 kbps floor,
   * never a hysteresis demotion), and 0.5 still splits the halves: tune
   * 4.88 -> 5.62 s (mm:verizon+att 1.85 -> 2.60, seed 2 1.60 -> 4.17),
   * check 8.71 -> 7.93 s (mm:tmobile+att 2.68 -> 2.04, mm:verizon+tmobile
   * 0.15 -> 0.00); carriers 0.15 -> 0.00 s at 4.65 -> 4.69 Mbps, failover 0
   * -> 0, flap 0.14 -> 0.14 s; 0.2 loses mm:verizon+att too (1.85 -> 2.37).
   */
  probationMinAltFraction?: number;
  /**
   * Keep a silent path through a feedback gap next to weak alternatives
   * (SenderPaths.keptThroughGap; 0 = off). A path whose receiver reports
   * stopped (suspect, not yet down) or that is on probation after such a
   * silence keeps carrying media, and counts in the encoder target, while
   * the live alternatives' estimates sum to less than this fraction of its
   * own and the receiver has NACKed nothing it sent after what its last
   * report could cover (the report's arrival less one SRTT; a NACK, over another path, shows the forward direction losing
   * too: a blackhole, where failover is right). Moving the call there would
   * cut the encoder target below that fraction and leave the frames already
   * encoded for it in the weak path's pacer; and a report silence is first
   * of all one of the reverse direction (mm:tmobile+att: T-Mobile's
   * downlink dead for 150-750 ms while its uplink delivers 6-26 Mbps, the
   * call moved to AT&T at 0.14 Mbps). A single path's call keeps a silent
   * path the same way (SenderPaths.lastResort). A silence past
   * {@link gapKeepMs} (default 1000 ms; with 0, the path manager's 500 ms
   * down time) still fails over. Default 0.1 (the alternatives carry
   * less than a tenth of the call), chosen on the tune half: converge,
   * cellular suite, frozen s, at 0.5 / 0.2 / 0.1 the tune half's only pair
   * where it acts, mm:verizon+att, seeds 1-3 1.85 -> 1.90 / 2.37 / 1.85,
   * seeds 4-6 2.07 -> 3.18 / 1.98 / 2.07 (there Verizon's downlink dies
   * 1.4 s before its uplink, and the early failover pays, as rpt3 found);
   * at 0.1 the tune half is identical on every pair, the check half 9.59 ->
   * 8.71 s (mm:tmobile+att 3.56 -> 2.68; 0.5: 2.06); carriers, collapse,
   * failover, flap, constant, loss-sweep identical (0.5: carriers 0.15 ->
   * 0.16 s, and flap 0.14 -> 0.33 s before the NACK test).
   */
  gapMinAltFraction?: number;
  /**
   * With gapMinAltFraction: keep a path through a feedback gap for up to
   * this much silence (ms; the age of its oldest unreported packet), also
   * after the path manager declared it down for silence (downAfterMs, 500
   * ms), as long as its transport is connected and the gap rule's other
   * tests hold (nothing it sent in the silence NACKed, the live
   * alternatives estimated at less than gapMinAltFraction of its rate).
   * 0 = until it is declared down; a value up to the 500 ms down time acts
   * as 0. A path down for its transport (not connected) or disabled by the
   * app is never kept. The SenderEngine constructor throws a RangeError
   * unless it is a finite number >= 0. Default 1000 (stop 37: with cleanReturn,
   * the cellular suite's check half over seeds 1-9 8.71 / 10.60 / 10.24 ->
   * 8.73 / 10.30 / 9.44 s, the tune half and carriers over 12 seeds
   * unchanged; docs/results.md). mm:tmobile+att: T-Mobile's
   * downlink dies for 0.5-0.9 s at 101-102 s and 117-118 s while its
   * uplink delivers 12-26 Mbps; at 500 ms the call moved to AT&T (0.7-1.5
   * Mbps), where the encoder's output, which lags its target (0.2 s) and
   * overshoots a 150 kbps one, waited in AT&T's pacer (17-31 kB): freezes
   * of 0.2-0.5 s in every seed, none with T-Mobile alone (a single path is
   * kept as the last resort). libwebrtc likewise sends on through a
   * feedback silence, its rate held by the congestion window (here the
   * congestion-window pushback), until ICE consent fails (RFC 7675 §5.1).
   */
  gapKeepMs?: number;
  /**
   * End a path's probation (see {@link probation}) when its reports resume
   * after a silence and show that the silence was only its feedback's: a
   * report of the silence's backlog (arriving while the path is still
   * suspect or down) resolves at least 20 packets, less than 5 % of them
   * lost, and the path's estimate does not fall on it
   * (PathRecovery.learnGap, SenderPaths.isDemoted). The path then carries
   * its share again at once instead of being benched for
   * fallbackEstablishMs while a much weaker path carries the call
   * (mm:tmobile+att: T-Mobile's downlink dies for 0.4-0.9 s while its
   * uplink delivers every packet; back, it was benched while a failover
   * probe lifted AT&T's estimate, and the call moved to AT&T with 30-40 kB
   * of frames for a 1 Mbps link). Only for a path estimated at least at
   * its live alternatives' sum (benching it moves the call onto weaker
   * paths; a weaker path back from a silence is often the first half of a
   * fade: mm:verizon+tmobile). It ends only the path's own probation: as
   * an alternative for a demoted path it must still be established by
   * time. TCP undoes its response to a retransmission timeout shown
   * spurious by the ACKs of the original packets the same way (RFC 4015
   * §3, the Eifel response; RFC 5682 F-RTO). Default true (with gapKeepMs
   * 1000; measured together, see there).
   */
  cleanReturn?: boolean;
  /**
   * The 'outage' key frame of a single path's call (PathRecovery.learnGap:
   * a silence over 500 ms on the last-resort path whose first report shows
   * more of its packets lost than delivered) on any path of the call (also
   * one the single-path rule leaves out, e.g. a path whose transport
   * dropped) that had at least 10 media packets (PathRecovery
   * BLACKHOLE_KEY_MIN_MEDIA) queued on it since its previous report. An
   * LTE uplink that stalls for 0.5-1 s (mm:tmobile+att at 22.8 s) loses
   * every frame sent into it; recovering them by NACK one frame after
   * another froze converge a second time (0.3-0.8 s, 5 of 6 seeds) where
   * the single path's call asked for a key frame when the path came back
   * and froze once. Not when a key frame went out since the silence began
   * on other paths only (e.g. the receiver asked over another path).
   * Default true: cellular suite, converge, no pair worse over seeds 1-12,
   * mm:tmobile+att 2.48 -> 2.10 s (seeds 1-6), named scenarios identical,
   * `--rate-scale 0.1` a tie (docs/results.md, stop 40).
   */
  blackholeKeyframe?: boolean;
  /**
   * Key frame request coalescing (src/engine/keyframe-gate.ts): answer
   * requests with the last key frame while it is still held in this
   * sender's pacer or datachannel and for max(500 ms, 2 x the lowest SRTT)
   * after it was sent (false, the default), or also for its transmit time
   * at the encoder target plus an RTT (true, the rule before). That term
   * lasts up to 3 s when the target collapsed, while the key frame is
   * already gone, possibly lost on a dying path. Measured with
   * ReceiverEngineConfig.keyframeOnNackGiveUp (both on vs both off, cellular
   * suite, converge, 3 seeds): tune half 7.13 -> 5.59 s frozen, check half
   * 11.51 -> 11.07 s; carriers (6 seeds) 1.04 -> 0.53 s at 4.56 Mbps both.
   */
  keyframeCoalesceTransmit?: boolean;
  /**
   * Tuning of the learned silence threshold and the sustained-loss rule
   * (src/engine/path-health.ts) that fast failover and the hysteresis use.
   */
  pathHealth?: Partial<PathHealthConfig>;
}

/** Events the engine reports to its owner. */
export interface SenderEvents {
  /** The encoder should produce a key frame ('pli', or 'outage': a single path's silence lost what was sent into it). */
  keyframeNeeded: (reason: string) => void;
  /**
   * The encoder target changed by more than 5% (bps): checked every tick, and
   * at once when a path changes transport state or is switched by the app (so
   * at call start an encoder no longer takes its first frame from the floor of
   * a call that had no path yet). A listener added after paths changed may
   * have missed one: read `targetBitrateBps()` when subscribing.
   */
  targetBitrate: (bps: number) => void;
  /** Path lifecycle (path manager) and scheduler enable/disable. */
  pathEvent: (event: PathEvent) => void;
}

/** The config with defaults applied (the parts the engine reads as plain values). */
export type ResolvedSenderConfig = Required<
  Omit<
    SenderEngineConfig,
    | 'clock'
    | 'scheduler'
    | 'fec'
    | 'fecCode'
    | 'singlePath'
    | 'estimator'
    | 'createEstimator'
    | 'pacer'
    | 'streamId'
    | 'qoeFeedback'
    | 'probing'
    | 'pathHysteresis'
    | 'pathHealth'
    | 'audio'
    | 'probationMinAltFraction'
    | 'gapMinAltFraction'
    | 'gapKeepMs'
    | 'audioRate'
  >
>;

/** A duration option (ms) of the SenderEngineConfig. @throws RangeError unless finite and >= 0. */
export function nonNegativeMs(name: string, v: number): number {
  if (!(Number.isFinite(v) && v >= 0)) throw new RangeError(`SenderEngineConfig.${name} must be a finite number of ms >= 0, got ${v}`);
  return v;
}

/** `v` when it is a number in [0, 1]; else a RangeError naming the option. */
function fraction(name: string, v: number): number {
  if (!(v >= 0 && v <= 1)) throw new RangeError(`SenderEngineConfig.${name} must be in [0, 1], got ${v}`);
  return v;
}

/**
 * Apply the defaults documented on {@link SenderEngineConfig}.
 * @throws RangeError when `protectionOverheadMax` is outside [0, 1] or `pushbackQueueMs` is not a finite number >= 0.
 */
export function resolveSenderConfig(config: SenderEngineConfig): ResolvedSenderConfig {
  return {
    mtuBytes: config.mtuBytes ?? 1200,
    maxBitrateBps: config.maxBitrateBps ?? 8_000_000,
    minBitrateBps: config.minBitrateBps ?? 50_000,
    startBitrateBps: config.startBitrateBps ?? 1_000_000,
    historyPackets: config.historyPackets ?? 4096,
    streamInfoIntervalMs: config.streamInfoIntervalMs ?? 1000,
    dropQueueFrames: config.dropQueueFrames ?? 3,
    maxConsecutiveDrops: config.maxConsecutiveDrops ?? 3,
    holdKeyFrameWhileBuffered: config.holdKeyFrameWhileBuffered ?? true,
    departureTimes: config.departureTimes ?? false,
    queuedDeliveryMs: config.queuedDeliveryMs ?? 0,
    queuedDeliveryRatio: config.queuedDeliveryRatio ?? 0.9,
    protectionOverheadMax: fraction('protectionOverheadMax', config.protectionOverheadMax ?? 0.5),
    upperLayerDropFactor: config.upperLayerDropFactor ?? 1,
    cwndPushback: config.cwndPushback ?? true,
    pushbackQueueMs: nonNegativeMs('pushbackQueueMs', config.pushbackQueueMs ?? PUSHBACK_QUEUE_MS),
    fastFailover: config.fastFailover ?? true,
    rack: config.rack ?? true,
    outageRestore: config.outageRestore ?? 'total',
    fallbackEstablishMs: config.fallbackEstablishMs ?? 1000,
    probation: config.probation ?? true,
    keyframeCoalesceTransmit: config.keyframeCoalesceTransmit ?? false,
    cleanReturn: config.cleanReturn ?? true,
    blackholeKeyframe: config.blackholeKeyframe ?? true,
  };
}
