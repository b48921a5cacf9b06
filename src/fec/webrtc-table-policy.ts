/**
 * libwebrtc's table-driven FEC rate, the baseline of Converge's Fig. 12/13 and
 * Table 5 (Converge §6.2), applied per path.
 *
 * SOURCE: libwebrtc `modules/video_coding/media_opt_util.cc`
 * (`VCMFecMethod::ProtectionFactor`, `BoostCodeRateKey`, `ConvertFECRate`,
 * `BitsPerFrame`, `VCMNackFecMethod::ProtectionFactor`,
 * `VCMNackFecMethod::BitRateTooLowForFec`), `media_opt_util.h`
 * (`kLowRttNackMs` = 20, `kMaxBytesPerFrameForFec{,Low,High}` = 700/400/1000),
 * `fec_rate_table.h` (`kFecRateTable`, see fec-rate-table.ts) and
 * `modules/rtp_rtcp/source/forward_error_correction.cc`
 * (`NumFecPackets`: round(media · factor / 256), at least 1 when factor > 0).
 *
 * Per call (one frame's packets on one path):
 * 1. loss255 = ⌊255 · lossRate⌋; 0 → no FEC.
 * 2. kbit/frame = ⌊rate_kbps / max(fps, 1)⌋; effective = ⌊resolution factor ·
 *    kbit/frame⌋ with factor = (pixels / (704·576))^−0.3; table row
 *    = clamp((effective − 5) / 5, 0, 49), column = min(loss255, 128).
 * 3. Delta code rate = table value, raised to 51 (20 %, "first partition")
 *    when the frame has more than ~1 packet, capped at 128. Key code rate =
 *    max(loss255, 2 · delta, table at the keyframe-boosted row), capped at 128;
 *    the boost is max(2, key packets / delta packets) from exponentially
 *    filtered packets per frame (ExpFilter α = 0.9999 per ms).
 * 4. Hybrid NACK/FEC (`method: 'nack-fec'`, libwebrtc's default when NACK is
 *    on): RTT < `lowRttNackMs` → delta protection 0 (NACK alone); RTT between
 *    low and `highRttNackMs` → unchanged (libwebrtc's RTT adjustment is
 *    disabled, factor 1.0); then if bytes/frame < 400/700/1000 (≤ CIF / ≤ VGA /
 *    larger) and RTT < 200 ms, no FEC at all.
 * 5. Code rate (of source + FEC) → factor of source packets:
 *    f = min(255, round(255 · r / (255 − r))); FEC packets =
 *    (media · f + 128) >> 8, at least 1 when f > 0, at most media.
 *
 * Deviation: libwebrtc may group several frames into one FEC block
 * (`max_fec_frames`); the `FecPolicy` contract is per frame, so this is the
 * one-frame (`VCMFecMethod`) grouping. NACKs are ignored (the table is static).
 */
import { MAX_PATHS, type PathId } from '../core/types.js';
import { FecError, numOption } from './errors.js';
import { FEC_RATE_TABLE, FEC_TABLE_LOSS_COLUMNS, FEC_TABLE_RATE_ROWS } from './fec-rate-table.js';
import type { FecContext, FecMaskKind, FecPolicy } from './types.js';

export interface WebRtcTableFecPolicyOptions {
  /** 'nack-fec' (hybrid, default) or 'fec' (FEC only, no RTT rules). */
  method?: 'fec' | 'nack-fec';
  /** Below this RTT delta frames get no FEC (ms, default 20 = kLowRttNackMs; -1 = always). */
  lowRttNackMs?: number;
  /** Above this RTT FEC only (ms, default -1 = off, as libwebrtc's SetMethod(kNackFec)). */
  highRttNackMs?: number;
  /** Encoded width/height (px) for the resolution factor and bytes/frame threshold (default 640x480). */
  widthPx?: number;
  heightPx?: number;
  /** Max payload per packet, bytes (libwebrtc `_maxPayloadSize`, default 1460). */
  maxPayloadBytes?: number;
}

/** libwebrtc constants (media_opt_util.cc / .h). */
const FIRST_PARTITION_PROT = Math.trunc(255 * 0.2); // 51
const RATE_PAR1 = 5;
const RATE_PAR2 = FEC_TABLE_RATE_ROWS - 1; // 49
const PACKET_LOSS_MAX = FEC_TABLE_LOSS_COLUMNS; // 129
const SCALE_PROT_KEY = 2;
const MAX_RTT_TURN_OFF_FEC_MS = 200;
const EXP_FILTER_ALPHA = 0.9999;

class PathFilter {
  ppf = Number.NaN;
  ppfKey = Number.NaN;
  lastUs = Number.NaN;
  lastKeyUs = Number.NaN;
}

/** Result of the libwebrtc protection computation, for inspection/tests. */
export interface WebRtcProtection {
  /** Code rates (0..128 of 255, relative to source + FEC). */
  codeRateDelta: number;
  codeRateKey: number;
  /** Factors after ConvertFECRate and the hybrid rules (0..255 of 256, relative to source packets). */
  factorDelta: number;
  factorKey: number;
}

/** libwebrtc table FEC policy (`name` 'webrtc-table'). I/O-free. */
export class WebRtcTableFecPolicy implements FecPolicy {
  readonly name = 'webrtc-table' as const;
  private readonly method: 'fec' | 'nack-fec';
  private readonly lowRtt: number;
  private readonly highRtt: number;
  private readonly pixels: number;
  private readonly maxPayload: number;
  private readonly filters: Array<PathFilter | undefined> = new Array(MAX_PATHS);

  /** @throws FecError on out-of-range options. */
  constructor(opts: WebRtcTableFecPolicyOptions = {}) {
    const method = opts.method ?? 'nack-fec';
    if (method !== 'fec' && method !== 'nack-fec') throw FecError.invalidOption('method', method, "'fec' or 'nack-fec'");
    this.method = method;
    this.lowRtt = numOption('lowRttNackMs', opts.lowRttNackMs, 20, -1, 60_000);
    this.highRtt = numOption('highRttNackMs', opts.highRttNackMs, -1, -1, 60_000);
    if (this.highRtt !== -1 && (this.lowRtt === -1 || this.highRtt < this.lowRtt)) {
      throw FecError.invalidOption('highRttNackMs', this.highRtt, '-1 or >= lowRttNackMs (with lowRttNackMs != -1)');
    }
    const w = numOption('widthPx', opts.widthPx, 640, 1, 16384, true);
    const h = numOption('heightPx', opts.heightPx, 480, 1, 16384, true);
    this.pixels = w * h;
    this.maxPayload = numOption('maxPayloadBytes', opts.maxPayloadBytes, 1460, 100, 65536, true);
  }

  /** FEC packets for this frame's packets on this path (libwebrtc rules above). Bad input gives 0. */
  fecCount(ctx: FecContext, nowUs: number): number {
    const media = ctx.mediaCount;
    if (!Number.isFinite(media) || media <= 0) return 0;
    const f = this.filter(ctx.pathId);
    if (f === undefined) return 0;
    const n = Math.floor(media);
    this.updateFilter(f, n, ctx.isKeyframe, nowUs);
    const prot = this.protection(ctx.lossRate, ctx.rateBps, ctx.fps, ctx.rttMs, f.ppf, f.ppfKey);
    const factor = ctx.isKeyframe ? prot.factorKey : prot.factorDelta;
    let fec = (n * factor + 128) >> 8;
    if (factor > 0 && fec === 0) fec = 1;
    return Math.min(fec, n);
  }

  /** The table is static: NACKs do not change it. */
  onNack(_pathId: PathId, _count: number, _nowUs: number): void {}

  /** libwebrtc's default mask type is kFecMaskRandom. */
  maskKind(_ctx: FecContext): FecMaskKind {
    return 'random';
  }

  /**
   * The libwebrtc protection factors for the given inputs (pure).
   * @param lossRate 0..1, rateBps bps, fps frames/s, rttMs ms, packets per
   *   delta / key frame (NaN when unknown: treated as 1 and 1).
   */
  protection(lossRate: number, rateBps: number, fps: number, rttMs: number, ppfDelta = Number.NaN, ppfKey = Number.NaN): WebRtcProtection {
    const loss = Number.isFinite(lossRate) ? Math.min(1, Math.max(0, lossRate)) : 0;
    let packetLoss = Math.min(255, Math.trunc(255 * loss));
    if (packetLoss === 0) return { codeRateDelta: 0, codeRateKey: 0, factorDelta: 0, factorKey: 0 };
    const rate = Number.isFinite(rateBps) && rateBps > 0 ? rateBps : 0;
    const frameRate = Number.isFinite(fps) && fps >= 1 ? fps : 1;
    const rtt = Number.isFinite(rttMs) && rttMs >= 0 ? rttMs : 0;

    const bitRatePerFrame = Math.trunc(rate / 1000 / frameRate); // kbit per frame (BitsPerFrame)
    const resolnFac = 1 / Math.pow(this.pixels / (704 * 576), 0.3);
    const avgTotPackets = Math.min(255, Math.trunc(1.5 + (bitRatePerFrame * 1000) / (8 * this.maxPayload)));
    const effRate = Math.min(65535, Math.trunc(resolnFac * bitRatePerFrame));
    let rateIndex = Math.max(0, Math.min(Math.trunc((effRate - RATE_PAR1) / RATE_PAR1), RATE_PAR2));
    if (packetLoss >= PACKET_LOSS_MAX) packetLoss = PACKET_LOSS_MAX - 1;

    let codeRateDelta = FEC_RATE_TABLE[rateIndex * PACKET_LOSS_MAX + packetLoss];
    if (packetLoss > 0 && avgTotPackets > 1 && codeRateDelta < FIRST_PARTITION_PROT) codeRateDelta = FIRST_PARTITION_PROT;
    if (codeRateDelta >= PACKET_LOSS_MAX) codeRateDelta = PACKET_LOSS_MAX - 1;

    const pfDelta = Math.min(255, Math.trunc(0.5 + (Number.isFinite(ppfDelta) ? ppfDelta : 1)));
    const pfKey = Math.min(255, Math.trunc(0.5 + (Number.isFinite(ppfKey) ? ppfKey : 1)));
    const boostKey = Math.max(2, pfDelta > 0 ? Math.trunc(pfKey / pfDelta) : 1);
    rateIndex = Math.max(0, Math.min(1 + Math.trunc((boostKey * effRate - RATE_PAR1) / RATE_PAR1), RATE_PAR2));
    const tableKey = FEC_RATE_TABLE[rateIndex * PACKET_LOSS_MAX + packetLoss];
    const boostKeyProt = Math.min(PACKET_LOSS_MAX - 1, SCALE_PROT_KEY * codeRateDelta);
    let codeRateKey = Math.min(255, Math.max(packetLoss, boostKeyProt, tableKey));
    if (codeRateKey >= PACKET_LOSS_MAX) codeRateKey = PACKET_LOSS_MAX - 1;

    let d = codeRateDelta;
    let k = codeRateKey;
    if (this.method === 'nack-fec') {
      if (this.lowRtt === -1 || rtt < this.lowRtt) d = 0;
      // (low <= rtt < high): libwebrtc's adjustRtt is 1.0, nothing changes.
      if (this.bitRateTooLowForFec(bitRatePerFrame, rtt)) {
        d = 0;
        k = 0;
      }
    }
    return { codeRateDelta, codeRateKey, factorDelta: convertFecRate(d), factorKey: convertFecRate(k) };
  }

  private bitRateTooLowForFec(kbitPerFrame: number, rttMs: number): boolean {
    const bytesPerFrame = (1000 * kbitPerFrame) / 8;
    let max = 700;
    if (this.pixels <= 352 * 288) max = 400;
    else if (this.pixels > 640 * 480) max = 1000;
    return bytesPerFrame < max && rttMs < MAX_RTT_TURN_OFF_FEC_MS;
  }

  private filter(pathId: PathId): PathFilter | undefined {
    if (!Number.isInteger(pathId) || pathId < 0 || pathId >= MAX_PATHS) return undefined;
    let f = this.filters[pathId];
    if (f === undefined) {
      f = new PathFilter();
      this.filters[pathId] = f;
    }
    return f;
  }

  /** rtc::ExpFilter: y = a^Δms · y + (1 − a^Δms) · x, first sample taken as is. */
  private updateFilter(f: PathFilter, packets: number, key: boolean, nowUs: number): void {
    const t = Number.isFinite(nowUs) ? nowUs : 0;
    if (key) {
      const a = Number.isNaN(f.lastKeyUs) ? 0 : Math.pow(EXP_FILTER_ALPHA, Math.max(0, (t - f.lastKeyUs) / 1000));
      f.ppfKey = Number.isNaN(f.ppfKey) ? packets : a * f.ppfKey + (1 - a) * packets;
      f.lastKeyUs = t;
    } else {
      const a = Number.isNaN(f.lastUs) ? 0 : Math.pow(EXP_FILTER_ALPHA, Math.max(0, (t - f.lastUs) / 1000));
      f.ppf = Number.isNaN(f.ppf) ? packets : a * f.ppf + (1 - a) * packets;
      f.lastUs = t;
    }
  }
}

/** libwebrtc `ConvertFECRate`: code rate of (source + FEC) → factor of source, 0..255. */
export function convertFecRate(codeRate: number): number {
  if (codeRate <= 0) return 0;
  return Math.min(255, Math.trunc(0.5 + (255 * codeRate) / (255 - codeRate)));
}
