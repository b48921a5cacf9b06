/**
 * Deterministic trace-driven simulator that runs the REAL engines
 * (src/engine SenderEngine / ReceiverEngine / Endpoint) on a virtual clock.
 *
 * Topology, per stream s (1..3 streams) and per scenario path i:
 *
 * ```
 *  encoder model -> SenderEngine(streamId s) --PathSink--> up link i ---> Endpoint(ReceiverEngine) -> decoder model
 *  Endpoint(reverse ReceiverEngine, SenderEngine) <--- down link i <--PathSink-- ReceiverEngine (reports, NACK, PLI, QoE)
 * ```
 *
 * Files: sim/run-loop.ts builds the call and runs the discrete-event loop;
 * sim/result.ts turns its state into the {@link SimResult}; sim/types.ts has
 * the option and result shapes.
 *
 * Links are sim/net/link.ts `Link`s built from the scenario (sim/net/scenario.ts);
 * every stream's packets share the same physical links (an item is tagged
 * with its stream). With several streams each stream has its OWN engine pair
 * (own streamId, own per-path sequence spaces, own per-path GCC): their GCCs
 * share each bottleneck and compete like separate congestion-controlled
 * flows; nothing couples them.
 *
 * Encoder model: sim/encoder-model.ts, driven by the engine's `targetBitrate`
 * events (as the app applies them) and `keyframeNeeded` (next frame is key).
 * Decoder model: instant decode of the receiver's decodable frames; it checks
 * the reference chain (a delta frame needs its predecessor decoded; else a
 * violation is counted, the frame is not decoded and a key frame is
 * requested through the receiver) and the frame's bytes (size and id tag),
 * then calls `receiver.onFrameDecoded`.
 *
 * `qoeFeedback: false` drops the receiver's Converge QoE messages on the
 * feedback links (the "converge without feedback" configuration).
 *
 * Deterministic: same options -> same result (no wall clock, seeded Rngs,
 * ordered iteration only).
 */
import { buildResult } from './result.js';
import { DEFAULT_LINK_OVERHEAD_BYTES, UDP_IP_OVERHEAD_BYTES, runLoop } from './run-loop.js';
import type { SimOptions, SimResult } from './types.js';

export { DEFAULT_LINK_OVERHEAD_BYTES, MAX_STEP_US, MAX_TARGET_CHANGES, MIN_TICK_STEP_US, UDP_IP_OVERHEAD_BYTES } from './run-loop.js';
export type { SimOptions, SimPathResult, SimPerSecond, SimResult, SimStreamResult } from './types.js';

/** Run one simulated call. Deterministic in its options. @throws RangeError on an invalid option */
export function simulate(opts: SimOptions): SimResult {
  const durationS = opts.durationS ?? opts.scenario.durationS ?? 60;
  if (!(durationS > 0)) throw new RangeError(`simulate: durationS must be > 0, got ${durationS}`);
  const nStreams = opts.streams ?? 1;
  if (!Number.isInteger(nStreams) || nStreams < 1 || nStreams > 3) throw new RangeError(`simulate: streams must be 1..3, got ${nStreams}`);
  const qoeFeedback = opts.qoeFeedback ?? true;
  const dcModel = opts.datachannel ?? 'ideal';
  if (dcModel !== 'sctp' && dcModel !== 'ideal' && dcModel !== 'sctp+rtp') throw new RangeError(`simulate: datachannel must be 'sctp', 'sctp+rtp' or 'ideal', got ${String(dcModel)}`);
  const overhead = opts.linkOverheadBytes ?? (dcModel === 'ideal' ? DEFAULT_LINK_OVERHEAD_BYTES : UDP_IP_OVERHEAD_BYTES);
  if (!(overhead >= 0)) throw new RangeError(`simulate: linkOverheadBytes must be >= 0, got ${overhead}`);
  const endUs = Math.round(durationS * 1e6);
  return buildResult(opts, runLoop(opts, { durationS, nStreams, qoeFeedback, dcModel, overhead, endUs }));
}
