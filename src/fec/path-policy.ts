/**
 * Converge's path-specific FEC rate (Converge §3.3 and §4.3):
 *
 *   FEC_i = l_i · P_i · β_i,   β_i = 1 + NACK_i / (P_i − FEC_i)
 *
 * for the P_i media packets scheduled on path i with loss fraction l_i; β_i is
 * raised by the NACKs the receiver sent for path i's packets over a recent
 * window and otherwise decays back to 1.
 *
 * Choices the paper leaves open (all options below):
 * - Window: NACK_i, P_i and FEC_i are sums over the last `windowUs` (default
 *   1 s, 10 buckets of 100 ms).
 * - Decay: between NACKs, β_i − 1 shrinks as exp(−Δt / `betaDecayTauUs`)
 *   (default τ = 2 s, i.e. ~2 window lengths: one quiet window removes ~40 % of
 *   the excess, five windows ~92 %). β_i is capped at `maxBeta` (default 4).
 * - l_i is `FecContext.lossRate`; when NACKs show loss the reports do not yet
 *   (l_i = 0), the window's NACK_i / P_i is used instead (max of the two).
 * - Fractional credit per path: FEC_i is rarely an integer for one frame
 *   (l = 2 %, 5 packets: 0.1), so the fraction is carried over; the long-run
 *   mean is exact (one FEC packet every ~10 such frames). The engine should
 *   then protect all packets sent on the path since the previous FEC packet
 *   (see `FecProtectionWindow` in window.ts), not only the current frame.
 * - No loss and no NACK in the window: 0 FEC packets and the credit is reset.
 * - Keyframes: FEC_i · `keyframeFactor` (default 1.5) + `keyframeExtra`
 *   (default 0) packets, cf. libwebrtc doubling keyframe protection (§3.3).
 * - At most `maxFecRatio` · P_i (default 0.5, rounded up) FEC packets per call.
 * - Mask: 'bursty' for paths marked with {@link PathFecPolicy.setBursty}, else 'random'.
 */
import { MAX_PATHS, type PathId } from '../core/types.js';
import { numOption } from './errors.js';
import type { FecContext, FecMaskKind, FecPolicy } from './types.js';

export interface PathFecPolicyOptions {
  /** Multiplier on FEC_i for keyframes (default 1.5, range 1..10). */
  keyframeFactor?: number;
  /** FEC packets added for keyframes when the path needs FEC at all (default 0, range 0..16). */
  keyframeExtra?: number;
  /** Window over which NACK_i, P_i, FEC_i are summed, µs (default 1_000_000). */
  windowUs?: number;
  /** Time constant of β's decay toward 1, µs (default 2_000_000). */
  betaDecayTauUs?: number;
  /** Upper bound of β (default 4). */
  maxBeta?: number;
  /** Per-call cap: FEC ≤ ceil(maxFecRatio · P_i) (default 0.5, range 0..1). */
  maxFecRatio?: number;
}

const BUCKETS = 10;

class PathState {
  credit = 0;
  beta = 1;
  lastDecayUs = Number.NaN;
  bursty = false;
  /** Per bucket: media, fec, nack counts. */
  readonly media = new Float64Array(BUCKETS);
  readonly fec = new Float64Array(BUCKETS);
  readonly nack = new Float64Array(BUCKETS);
  /** Absolute bucket number of the newest bucket, NaN before first use. */
  head = Number.NaN;
}

/** Converge §4.3 FEC policy: one credit, β and window per path. Not thread-safe, I/O-free. */
export class PathFecPolicy implements FecPolicy {
  readonly name = 'path' as const;
  private readonly keyFactor: number;
  private readonly keyExtra: number;
  private readonly bucketUs: number;
  private readonly tauUs: number;
  private readonly maxBeta: number;
  private readonly maxRatio: number;
  private readonly paths: Array<PathState | undefined> = new Array(MAX_PATHS);

  /** @throws FecError on out-of-range options. */
  constructor(opts: PathFecPolicyOptions = {}) {
    this.keyFactor = numOption('keyframeFactor', opts.keyframeFactor, 1.5, 1, 10);
    this.keyExtra = numOption('keyframeExtra', opts.keyframeExtra, 0, 0, 16, true);
    this.bucketUs = numOption('windowUs', opts.windowUs, 1_000_000, 10_000, 60_000_000) / BUCKETS;
    this.tauUs = numOption('betaDecayTauUs', opts.betaDecayTauUs, 2_000_000, 1_000, 600_000_000);
    this.maxBeta = numOption('maxBeta', opts.maxBeta, 4, 1, 100);
    this.maxRatio = numOption('maxFecRatio', opts.maxFecRatio, 0.5, 0, 1);
  }

  /**
   * FEC packets for `ctx.mediaCount` packets just scheduled on `ctx.pathId`
   * (integer >= 0). Bad context values (unknown path, NaN) give 0.
   */
  fecCount(ctx: FecContext, nowUs: number): number {
    const st = this.state(ctx.pathId);
    const p = ctx.mediaCount;
    if (st === undefined || !Number.isFinite(p) || p <= 0 || !Number.isFinite(nowUs)) return 0;
    this.advance(st, nowUs);
    st.media[this.slot(st)] += p;
    const loss = Number.isFinite(ctx.lossRate) ? Math.min(1, Math.max(0, ctx.lossRate)) : 0;
    const sumP = sum(st.media);
    const sumN = sum(st.nack);
    const nackLoss = sumP > 0 ? Math.min(1, sumN / sumP) : 0;
    const l = Math.max(loss, nackLoss);
    if (l <= 0) {
      st.credit = 0;
      return 0;
    }
    let want = l * p * st.beta;
    if (ctx.isKeyframe) want = want * this.keyFactor + this.keyExtra;
    st.credit += want;
    let n = Math.floor(st.credit + 1e-9);
    st.credit = Math.max(0, st.credit - n);
    const cap = Math.ceil(this.maxRatio * p);
    if (n > cap) {
      n = cap;
      st.credit = Math.min(st.credit, 1); // do not bank what the cap refused
    }
    st.fec[this.slot(st)] += n;
    return n;
  }

  /**
   * The receiver NACKed `count` packets that were sent on `pathId`:
   * β_i = max(decayed β_i, 1 + NACK_i / (P_i − FEC_i)) over the window.
   */
  onNack(pathId: PathId, count: number, nowUs: number): void {
    const st = this.state(pathId);
    if (st === undefined || !Number.isFinite(count) || count <= 0 || !Number.isFinite(nowUs)) return;
    this.advance(st, nowUs);
    st.nack[this.slot(st)] += count;
    const denom = Math.max(1, sum(st.media) - sum(st.fec));
    const target = 1 + sum(st.nack) / denom;
    st.beta = Math.min(this.maxBeta, Math.max(st.beta, target));
  }

  /** 'bursty' (interleaved mask) for paths marked bursty, else 'random'. */
  maskKind(ctx: FecContext): FecMaskKind {
    const st = this.state(ctx.pathId);
    return st?.bursty ? 'bursty' : 'random';
  }

  /** Optional input: the path's losses come in bursts (e.g. from a Gilbert-Elliott fit of its reports). */
  setBursty(pathId: PathId, bursty: boolean): void {
    const st = this.state(pathId);
    if (st !== undefined) st.bursty = bursty;
  }

  /** Current β of a path (1 for unknown paths), after decay to `nowUs` when given. */
  beta(pathId: PathId, nowUs?: number): number {
    const st = this.state(pathId);
    if (st === undefined) return 1;
    if (nowUs !== undefined && Number.isFinite(nowUs)) this.advance(st, nowUs);
    return st.beta;
  }

  /** Carried-over fractional FEC credit of a path (0..1 normally). */
  credit(pathId: PathId): number {
    return this.state(pathId)?.credit ?? 0;
  }

  private state(pathId: PathId): PathState | undefined {
    if (!Number.isInteger(pathId) || pathId < 0 || pathId >= MAX_PATHS) return undefined;
    let st = this.paths[pathId];
    if (st === undefined) {
      st = new PathState();
      this.paths[pathId] = st;
    }
    return st;
  }

  /** Decay β and roll the window buckets forward to `nowUs` (time never goes back here). */
  private advance(st: PathState, nowUs: number): void {
    if (Number.isNaN(st.lastDecayUs)) st.lastDecayUs = nowUs;
    const dt = nowUs - st.lastDecayUs;
    if (dt > 0) {
      st.beta = 1 + (st.beta - 1) * Math.exp(-dt / this.tauUs);
      st.lastDecayUs = nowUs;
    }
    const bucket = Math.floor(nowUs / this.bucketUs);
    if (Number.isNaN(st.head)) {
      st.head = bucket;
      return;
    }
    if (bucket <= st.head) return;
    const steps = Math.min(BUCKETS, bucket - st.head);
    for (let i = 1; i <= steps; i++) {
      const s = (((st.head + i) % BUCKETS) + BUCKETS) % BUCKETS;
      st.media[s] = 0;
      st.fec[s] = 0;
      st.nack[s] = 0;
    }
    st.head = bucket;
  }

  private slot(st: PathState): number {
    return ((st.head % BUCKETS) + BUCKETS) % BUCKETS;
  }
}

function sum(a: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i];
  return s;
}
