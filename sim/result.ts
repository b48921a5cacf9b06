/**
 * The simulator's result builder: the run loop's state (sim/run-loop.ts) to a
 * {@link SimResult} (per stream, all streams together, per path, per second),
 * with the metric definitions of sim/metrics.ts.
 */
import type { ReceiverStats } from '../src/engine/types.js';
import { pathFeedback } from '../tools/harness/report.js';
import { fairness } from './fairness.js';
import { linkCapacityBps, type SimRun, type StreamCtx } from './run-loop.js';
import { frameLatencyMs, freezeStats, latencyCdf, mean, PacketTransmission, perSecondQoe, round, streamQoe } from './metrics.js';
import type { SimAudioResult, SimOptions, SimPathResult, SimPerSecond, SimResult, SimStreamResult } from './types.js';

/** The result of the run `run` of `opts`. */
export function buildResult(opts: SimOptions, run: SimRun): SimResult {
  const { durationS, nStreams, qoeFeedback, dcModel, endUs, streams, up, chUp, chDown, samples, heap, steps, datagramsUp, datagramsDown, overlay } = run;
  const scenario = opts.scenario;
  const nSec = Math.floor(durationS);
  const perStream: SimStreamResult[] = streams.map((c) => {
    const q = streamQoe(c.decoded, c.frameIndex, endUs);
    const snd = c.sender.stats();
    const rs = c.rx.stats(c.s);
    const fz = freezeStats(
      c.decoded.map((f) => f.decodedUs),
      endUs,
    );
    return {
      streamId: c.s,
      frames: q.frames,
      fps: q.fps,
      freezes: q.freezes,
      latencyMs: q.latencyMs,
      keyframeRequests: rs.keyframeRequestsSent,
      temporalLayerSkips: rs.temporalLayerSkips,
      framesOutOfOrder: q.framesOutOfOrder + c.outOfOrder,
      goodputBps: q.goodputBps,
      encoderTargetBps: { mean: Math.round(mean(c.targets)), last: Math.round(snd.targetBitrateBps) },
      fec: {
        overheadPct: round(snd.fecOverheadPct),
        utilizationPct: round(rs.fecUtilizationPct),
        packetsSent: snd.fecPacketsSent,
        recovered: rs.recoveredByFec,
      },
      nack: {
        nacksSent: rs.nacksSent,
        packetsNacked: rs.nackedPackets,
        retransmissionsSent: snd.retransmissionsSent,
        retransmissionsReceived: rs.retransmissionsReceived,
        rackLost: snd.rackLost,
        rackRetransmissionsSent: snd.rackRetransmissionsSent,
        rackSpurious: snd.rackSpurious,
      },
      retransmissions: snd.retransmissionsSent,
      qoeFeedback: { sent: rs.qoeFeedbackSent, received: snd.qoeFeedbackReceived, droppedBySim: c.qoeDropped },
      decoderViolations: c.violations,
      keyframesSent: snd.keyframesSent,
      pushback: { framesDroppedBeforeEncode: snd.framesDroppedBeforeEncode, stalePacketsPurged: snd.stalePacketsPurged },
      freezeList: fz.list.slice(0, 50).map((f) => ({ atS: round(f.atUs / 1e6, 3), ms: Math.round(f.ms) })),
      adaptation: c.enc.adaptationStats(),
      targetChanges: c.targetChanges,
      packetTransmissionMs: c.transmission.stats(),
    };
  });
  const allDecoded = streams.flatMap((c) => c.decoded);
  const sum = (f: (s: SimStreamResult) => number) => perStream.reduce((a, s) => a + f(s), 0);
  const lat =
    nStreams === 1
      ? perStream[0].latencyMs
      : streamQoe(
          allDecoded.slice().sort((a, b) => a.decodedUs - b.decodedUs),
          0,
          endUs,
        ).latencyMs;
  const latMs = allDecoded.map(frameLatencyMs);
  const fecSent = sum((s) => s.fec.packetsSent);
  const mediaSent = streams.reduce((a, c) => a + c.sender.stats().mediaPacketsSent, 0);
  const rxAll = streams.map((c) => c.rx.stats(c.s));
  const fecRx = rxAll.reduce((a, r) => a + r.fecPacketsReceived, 0);
  const fecUsedApprox = rxAll.reduce((a, r) => a + (r.fecUtilizationPct * r.fecPacketsReceived) / 100, 0);

  // Paths (all streams summed).
  const sndAll = streams.map((c) => c.sender.stats());
  const totalMedia = sndAll.reduce((a, s) => a + s.paths.reduce((b, p) => b + p.mediaPacketsSent, 0), 0);
  const paths: SimPathResult[] = scenario.paths.map((p, i) => {
    const ps = sndAll.map((s) => s.paths.find((x) => x.id === i)).filter((x) => x !== undefined);
    const rp = rxAll.map((r) => r.paths.find((x) => x.id === i)).filter((x) => x !== undefined);
    const ls = up[i].stats();
    const s = (f: (x: (typeof ps)[number]) => number) => ps.reduce((a, x) => a + f(x), 0);
    const rpFecRx = rp.reduce((a, x) => a + x.fecPacketsReceived, 0);
    const rpFecUsed = rp.reduce((a, x) => a + (x.fecUtilizationPct * x.fecPacketsReceived) / 100, 0);
    const media = s((x) => x.mediaPacketsSent);
    return {
      id: i,
      name: p.name,
      packetsSent: s((x) => x.packetsSent),
      bytesSent: s((x) => x.bytesSent),
      mediaPacketsSent: media,
      sharePct: round(totalMedia > 0 ? (100 * media) / totalMedia : 0),
      rttMs: round(ps.length ? s((x) => x.rttMs) / ps.length : 0),
      lossPct: round(ps.length ? s((x) => x.lossPct) / ps.length : 0, 2),
      rateBps: Math.round(s((x) => x.rateBps)),
      goodputBps: Math.round(s((x) => x.goodputBps)),
      fecPacketsSent: s((x) => x.fecPacketsSent),
      retransmissionsSent: s((x) => x.retransmissionsSent),
      probesSent: s((x) => x.probesSent),
      pacerDropped: s((x) => x.pacerDropped),
      fecUtilizationPct: round(rpFecRx > 0 ? (100 * rpFecUsed) / rpFecRx : 0),
      latePackets: rp.reduce((a, x) => a + x.latePackets, 0),
      feedback: pathFeedback(
        {
          feedbackBytesSent: rp.reduce((a, x) => a + x.feedbackBytesSent, 0),
          reportBytesSent: rp.reduce((a, x) => a + x.reportBytesSent, 0),
          reportArrivalsRelisted: rp.reduce((a, x) => a + x.reportArrivalsRelisted, 0),
        },
        durationS,
      ),
      meanCapacityBps: Math.round(mean(samples.map((x) => x.cap[i]))),
      meanSendRateBps: Math.round((s((x) => x.bytesSent) * 8) / durationS),
      linkDrops: { queue: ls.dropped.queue, loss: ls.dropped.loss, blackhole: ls.dropped.blackhole },
      countedLoss: countedLoss(
        streams.map((c) => c.sender.estimatorStats().find((x) => x.id === i)),
        rp.reduce((a, x) => a + x.packetsLost, 0),
      ),
    };
  });

  // Per-second series.
  const qoeSec = streams.map((c) => perSecondQoe(c.decoded, nSec));
  const allFz = streams.map(
    (c) =>
      freezeStats(
        c.decoded.map((f) => f.decodedUs),
        endUs,
      ).list,
  );
  const perSecond: SimPerSecond[] = samples.slice(0, nSec).map((smp, k) => {
    const prev = k > 0 ? samples[k - 1] : undefined;
    const fzUpTo = allFz.reduce((a, l) => a + l.filter((f) => f.atUs < smp.t * 1e6).length, 0);
    const lat0 = qoeSec[0][k];
    return {
      t: smp.t,
      fps: qoeSec.reduce((a, q) => a + q[k].fps, 0),
      framesDecoded: streams.reduce((a, c) => a + c.decoded.filter((f) => f.decodedUs < smp.t * 1e6).length, 0),
      latencyP50Ms: lat0.latencyP50Ms,
      latencyP95Ms: lat0.latencyP95Ms,
      targetBitrateBps: Math.round(smp.snd.reduce((a, s) => a + s.targetBitrateBps, 0)),
      freezeCount: fzUpTo,
      fcdMeanMs: round(smp.rxFcd, 2),
      ifdMeanMs: lat0.ifdMeanMs,
      paths: scenario.paths.map((_, i) => {
        const cur = smp.snd.map((s) => s.paths.find((x) => x.id === i)).filter((x) => x !== undefined);
        const before = prev ? prev.snd.map((s) => s.paths.find((x) => x.id === i)).filter((x) => x !== undefined) : [];
        const cs = (f: (x: (typeof cur)[number]) => number, l = cur) => l.reduce((a, x) => a + f(x), 0);
        return {
          id: i,
          capacityBps: Math.round(smp.cap[i]),
          sendRateBps: Math.round(cs((x) => x.sendRateBps)),
          rateBps: Math.round(cs((x) => x.rateBps)),
          rttMs: round(cur.length ? cs((x) => x.rttMs) / cur.length : 0),
          lossPct: round(cur.length ? cs((x) => x.lossPct) / cur.length : 0, 2),
          mediaPackets: cs((x) => x.mediaPacketsSent) - cs((x) => x.mediaPacketsSent, before),
          retransmissions: cs((x) => x.retransmissionsSent) - cs((x) => x.retransmissionsSent, before),
          pacerQueuedBytes: cs((x) => x.queuedBytes),
          up: cur.some((x) => x.up),
          enabled: cur.some((x) => x.enabled),
        };
      }),
    };
  });

  const framesSum = { sent: sum((s) => s.frames.sent), decoded: sum((s) => s.frames.decoded), dropped: sum((s) => s.frames.dropped) };
  const fzAll = perStream.map((s) => s.freezes);
  const cross = crossResult(opts, run);
  return {
    version: 1,
    scenario: scenario.name,
    label: opts.label ?? (opts.scheduler === 'single' ? `single:${opts.singlePath}` : opts.scheduler),
    scheduler: opts.scheduler,
    ...(opts.singlePath !== undefined ? { singlePath: opts.singlePath } : {}),
    fecPolicy: opts.fec,
    qoeFeedback,
    seed: opts.seed,
    durationS,
    streams: nStreams,
    camera: { width: streams[0].enc.width, height: streams[0].enc.height, fps: streams[0].enc.fps },
    frames: framesSum,
    fps: round(sum((s) => s.fps) / nStreams, 2), // mean per stream
    freezes: { count: sum((s) => s.freezes.count), totalMs: sum((s) => s.freezes.totalMs), maxMs: Math.max(...fzAll.map((f) => f.maxMs)) },
    latencyMs: lat,
    keyframeRequests: sum((s) => s.keyframeRequests),
    temporalLayerSkips: sum((s) => s.temporalLayerSkips),
    framesOutOfOrder: sum((s) => s.framesOutOfOrder),
    goodputBps: sum((s) => s.goodputBps),
    encoderTargetBps: { mean: sum((s) => s.encoderTargetBps.mean), last: sum((s) => s.encoderTargetBps.last) },
    fec: {
      overheadPct: round(mediaSent > 0 ? (100 * fecSent) / mediaSent : 0),
      utilizationPct: round(fecRx > 0 ? (100 * fecUsedApprox) / fecRx : 0),
      packetsSent: fecSent,
      recovered: sum((s) => s.fec.recovered),
    },
    nack: {
      nacksSent: sum((s) => s.nack.nacksSent),
      packetsNacked: sum((s) => s.nack.packetsNacked),
      retransmissionsSent: sum((s) => s.nack.retransmissionsSent),
      retransmissionsReceived: sum((s) => s.nack.retransmissionsReceived),
      rackLost: sum((s) => s.nack.rackLost),
      rackRetransmissionsSent: sum((s) => s.nack.rackRetransmissionsSent),
      rackSpurious: sum((s) => s.nack.rackSpurious),
    },
    retransmissions: sum((s) => s.retransmissions),
    decoderViolations: sum((s) => s.decoderViolations),
    latencyCdfMs: latencyCdf(latMs),
    packetTransmissionMs: PacketTransmission.merged(streams.map((c) => c.transmission)),
    ...(opts.clockSkewMs !== undefined ? { clock: clockResult(opts.clockSkewMs, rxAll[0].clock) } : {}),
    perStream,
    paths,
    perSecond,
    ...(heap ? { heap: { gc: heap.sampler.collected, samples: heap.samples } } : {}),
    ...(opts.audio ? { audio: audioResult(streams[0]) } : {}),
    ...(overlay ? { overlay } : {}),
    ...(run.freezeRecorder ? explained(run.freezeRecorder, streams[0].decoded, endUs, (i, fromMs, toMs) => linkCapacityBps(up[i], fromMs, toMs)) : {}),
    ...(run.pathTracer ? { pathTrace: run.pathTracer.out } : {}),
    ...(opts.estimator !== undefined ? { estimator: opts.estimator } : {}),
    ...cross,
    sim: {
      steps,
      datagramsUp,
      datagramsDown,
      datachannel: dcModel,
      ...(dcModel !== 'ideal' ? { sctp: chUp.map((c, i) => ({ up: c.stats(), down: chDown[i].stats() })) } : {}),
      ...(run.rtp ? { rtp: run.rtp.map((r) => ({ carrier: r.carrier.stats(), sinks: r.sinks.map((k) => k.stats()) })) } : {}),
      qoeDropped: streams.reduce((a, c) => a + c.qoeDropped, 0),
    },
  };
}

/** Stream 0's freezes, explained (sim/freeze-explain.ts) and as spans in time (every one, also those the explanation leaves out: a freeze the run's end cut short, or a run with no decoded frame at all). */
function explained(
  rec: NonNullable<SimRun['freezeRecorder']>,
  decoded: StreamCtx['decoded'],
  endUs: number,
  capacityBps: (i: number, fromMs: number, toMs: number) => number,
): Pick<SimResult, 'freezeCauses' | 'freezeSpans'> {
  const list = freezeStats(
    decoded.map((f) => f.decodedUs),
    endUs,
  ).list;
  return {
    freezeCauses: rec.explain(list, decoded, capacityBps),
    freezeSpans: list.map((f) => [Math.round(f.atUs / 1000) / 1000, Math.round(f.ms)] as [number, number]),
  };
}

/** Cross-traffic flows and the fairness metrics (sim/fairness.ts), when the scenario has cross traffic. */
function crossResult(opts: SimOptions, run: SimRun): Pick<SimResult, 'crossTraffic' | 'fairness'> {
  const specs = opts.scenario.crossTraffic ?? [];
  if (specs.length === 0) return {};
  const { durationS, samples, flows, up } = run;
  const nPaths = opts.scenario.paths.length;
  const capacityBps: number[][] = Array.from({ length: nPaths }, () => []);
  const rates: Array<{ t: number; allocatedBps: number; actualBps: number }> = [];
  // Our media packets per path per second (the samples' counters are cumulative).
  const mediaPackets: number[][] = Array.from({ length: nPaths }, () => []);
  const mediaBefore = new Array<number>(nPaths).fill(0);
  for (const smp of samples) {
    const t = Math.round(smp.t) - 1;
    for (let p = 0; p < nPaths; p++) {
      const cum = smp.snd.reduce((a, st) => a + (st.paths.find((x) => x.id === p)?.mediaPacketsSent ?? 0), 0);
      mediaPackets[p][t] = Math.max(0, cum - mediaBefore[p]);
      mediaBefore[p] = cum;
    }
  }
  for (const smp of samples) {
    const t = Math.round(smp.t) - 1; // the sample at t covers the second [t - 1, t)
    for (let p = 0; p < nPaths; p++) {
      capacityBps[p][t] = smp.cap[p];
      let allocatedBps = 0;
      let actualBps = 0;
      for (const st of smp.snd) {
        const ps = st.paths.find((x) => x.id === p);
        if (ps) {
          allocatedBps += ps.rateBps;
          actualBps += ps.sendRateBps;
        }
      }
      if (opts.scheduler !== 'single' || opts.singlePath === p) rates.push({ t, allocatedBps, actualBps });
    }
  }
  const crossTraffic: NonNullable<SimResult['crossTraffic']> = run.cross.map((c, x) => {
    const spec = specs[x];
    const stopS = Math.min(durationS, spec.stopS ?? durationS);
    if (c.kind === 'model') {
      const st = c.flow.stats();
      return {
        kind: spec.kind,
        path: spec.path,
        startS: spec.startS,
        stopS,
        packetsSent: st.packetsSent,
        packetsDelivered: st.packetsDelivered,
        bytesDelivered: st.bytesDelivered,
        lossEvents: st.lossEvents,
        timeouts: st.timeouts,
        cwnd: st.cwnd,
        srttMs: st.srttMs,
      };
    }
    const snd = c.video.ctx.sender.stats();
    return {
      kind: spec.kind,
      path: spec.path,
      startS: spec.startS,
      stopS,
      packetsSent: flows.crossSent[x],
      packetsDelivered: flows.crossDelivered[x],
      bytesDelivered: flows.cross[x].reduce((a, b) => a + b, 0),
      encoderTargetBps: Math.round(snd.targetBitrateBps),
      framesDecoded: c.video.ctx.decoded.length,
      ...(opts.audio ? { audioFramesSent: snd.audio.framesSent } : {}),
    };
  });
  const f = fairness({
    durationS,
    capacityBps,
    ours: {
      paths: opts.scheduler === 'single' && opts.singlePath !== undefined ? [opts.singlePath] : [...Array(nPaths).keys()],
      bytes: flows.ours,
      sent: flows.oursSent,
      delivered: flows.oursDelivered,
      mediaPackets,
    },
    cross: crossTraffic.map((c, x) => ({
      kind: c.kind,
      path: c.path,
      startS: c.startS,
      stopS: c.stopS,
      bytes: flows.cross[x],
      sent: c.packetsSent,
      delivered: c.packetsDelivered,
      ...(c.framesDecoded !== undefined ? { framesDecoded: c.framesDecoded } : {}),
    })),
    rates,
    queueDelaysMs: up.map((l) => l.stats().queueDelay.recentMs),
  });
  return { crossTraffic, ...(f ? { fairness: f } : {}) };
}

/** Stream 0's receiver clock-offset estimate against the true skew (SimOptions.clockSkewMs), ms. */
function clockResult(skewMs: number, c: ReceiverStats['clock']): NonNullable<SimResult['clock']> {
  return { skewMs, estimatedOffsetMs: round(c.offsetMs, 3), errorMs: round(c.offsetMs - skewMs, 3), errorBoundMs: round(c.errorBoundMs, 3), samples: c.samples };
}

/** The audio stream's QoE (receiver jitter buffer stats, sender duplication) of stream 0's engines. */
function audioResult(c: StreamCtx): SimAudioResult {
  const a = c.rx.stats(0).audio;
  const snd = c.sender.stats().audio;
  return {
    concealedPct: round(a.concealedPct, 3),
    mouthToEarP95Ms: round(a.mouthToEarMs.p95),
    mouthToEarP50Ms: round(a.mouthToEarMs.p50),
    framesSent: snd.framesSent,
    packetsReceived: a.packetsReceived,
    packetsLost: a.packetsLost,
    duplicates: a.duplicates,
    duplicatesSent: snd.duplicatesSent,
    framesUnsent: snd.framesUnsent,
    encodingChanges: snd.encodingChanges,
    latePackets: a.latePackets,
    concealmentEvents: a.concealmentEvents,
    targetDelayMs: round(a.targetDelayMs),
    avOffsetMs: round(a.avOffsetMs),
  };
}

/** SimPathResult.countedLoss of one path's estimator stats (one per stream; estimators without the counters count 0). */
function countedLoss(st: Array<object | undefined>, missing: number): SimPathResult['countedLoss'] {
  let lost = 0;
  let received = 0;
  let recovered = 0;
  for (const x of st) {
    const c = x as { packetsLost?: unknown; packetsReceived?: unknown; lossRecovered?: unknown } | undefined;
    if (typeof c?.packetsLost === 'number') lost += c.packetsLost;
    if (typeof c?.packetsReceived === 'number') received += c.packetsReceived;
    if (typeof c?.lossRecovered === 'number') recovered += c.lossRecovered;
  }
  return { lost, received, pct: round(lost + received > 0 ? (100 * lost) / (lost + received) : 0, 2), recovered, missing };
}
