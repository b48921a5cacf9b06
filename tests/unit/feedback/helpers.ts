import { NalClass } from '../../../src/core/types.js';
import type { AssembledFrame, FragmentArrival } from '../../../src/wire/packetization.js';

/** Build an AssembledFrame; `arrivals` = [pathId, arrivalUs] per fragment. */
export function mkFrame(frameId: number, opts: { streamId?: number; key?: boolean; captureUs?: number; arrivals?: Array<[number, number]>; rtx?: number[]; size?: number } = {}): AssembledFrame {
  const arr = opts.arrivals ?? [[0, (opts.captureUs ?? frameId * 33_333) + 20_000]];
  const arrivals: FragmentArrival[] = arr.map(([pathId, arrivalUs], i) => ({
    fragIndex: i,
    pathId,
    arrivalUs,
    nalClass: opts.key ? NalClass.Key : NalClass.Delta,
    retransmission: opts.rtx?.includes(i) ?? false,
    recovered: false,
  }));
  const times = arrivals.map((a) => a.arrivalUs);
  return {
    streamId: opts.streamId ?? 0,
    frameId,
    keyFrame: opts.key ?? false,
    captureUs: opts.captureUs ?? frameId * 33_333,
    data: new Uint8Array(opts.size ?? 100),
    firstArrivalUs: Math.min(...times),
    lastArrivalUs: Math.max(...times),
    arrivals,
  };
}
