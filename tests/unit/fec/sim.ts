import { Rng } from '../../../src/core/rng.js';
import { seqAdd } from '../../../src/core/seq.js';
import { FecDecoder } from '../../../src/fec/decoder.js';
import type { FecPolicy } from '../../../src/fec/types.js';
import { FecProtectionWindow } from '../../../src/fec/window.js';
import { makeFecPackets } from '../../../src/fec/xor.js';

export interface SimResult {
  media: number;
  fecSent: number;
  lost: number;
  recovered: number;
  fecReceived: number;
  fecUsed: number;
  fecDiscarded: number;
  /** fecSent / media */
  overhead: number;
  /** fecUsed / fecReceived */
  strictUtil: number;
  /** (fecReceived - fecDiscarded) / fecReceived (Chrome fecPacketsDiscarded) */
  chromeUtil: number;
  /** residual loss after FEC, fraction of media */
  residual: number;
}

/**
 * One path, Bernoulli loss on media and FEC packets, 30 fps frames of 10-20
 * packets (a 60-packet keyframe every 300 frames), FEC over the packets sent
 * since the previous FEC packet, NACK for each loss still unrecovered two
 * frames later.
 */
export function simulatePath(policy: FecPolicy, loss: number, opts: { frames?: number; seed?: number; rttMs?: number; fps?: number; minPkts?: number; maxPkts?: number } = {}): SimResult {
  const rng = new Rng(opts.seed ?? 1);
  const frames = opts.frames ?? 1500;
  const fps = opts.fps ?? 30;
  const rttMs = opts.rttMs ?? 100;
  const minPkts = opts.minPkts ?? 10;
  const maxPkts = opts.maxPkts ?? 20;
  const dec = new FecDecoder();
  const win = new FecProtectionWindow();
  const body = new Uint8Array(1000);
  let seq = 0xffff_f000;
  let fecSeq = 0;
  let media = 0;
  let fecSent = 0;
  const lostAt: Array<Set<number>> = [];
  const recoveredSeqs = new Set<number>();
  let lostTotal = 0;
  for (let f = 0; f < frames; f++) {
    const nowUs = Math.round((f * 1e6) / fps);
    const key = f % 300 === 0;
    const n = key ? 60 : minPkts + Math.floor(rng.next() * (maxPkts - minPkts + 1));
    const lost = new Set<number>();
    for (let i = 0; i < n; i++) {
      const s = seq;
      seq = seqAdd(seq, 1);
      win.push(0, s, body, nowUs);
      media++;
      if (rng.next() < loss) {
        lost.add(s);
        lostTotal++;
      } else for (const r of dec.addMedia(0, s, body)) recoveredSeqs.add(r.flowSeq);
    }
    const ctx = { pathId: 0, mediaCount: n, isKeyframe: key, lossRate: loss, rttMs, rateBps: 15 * 1000 * 8 * fps, fps, frameBytes: n * 1000 };
    const k = policy.fecCount(ctx, nowUs);
    if (k > 0) {
      const fecs = makeFecPackets({ streamId: 0, packets: win.take(0, nowUs), count: k, mask: policy.maskKind?.(ctx) ?? 'random', protectsPath: 0, firstFecSeq: fecSeq });
      fecSeq += fecs.length;
      fecSent += fecs.length;
      for (const fm of fecs) if (rng.next() >= loss) for (const r of dec.addFec(fm)) recoveredSeqs.add(r.flowSeq);
    }
    lostAt.push(lost);
    // NACK the losses of two frames ago that FEC did not rebuild.
    if (f >= 2) {
      let nacks = 0;
      for (const s of lostAt[f - 2]) if (!recoveredSeqs.has(s)) nacks++;
      if (nacks > 0) policy.onNack(0, nacks, nowUs);
    }
  }
  const st = dec.stats();
  const rec = recoveredSeqs.size;
  return {
    media,
    fecSent,
    lost: lostTotal,
    recovered: rec,
    fecReceived: st.fecReceived,
    fecUsed: st.fecUsed,
    fecDiscarded: st.fecDiscarded,
    overhead: fecSent / media,
    strictUtil: st.fecReceived > 0 ? st.fecUsed / st.fecReceived : 0,
    chromeUtil: st.fecReceived > 0 ? (st.fecReceived - st.fecDiscarded) / st.fecReceived : 0,
    residual: (lostTotal - rec) / media,
  };
}
