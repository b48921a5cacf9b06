/**
 * The sender's FEC stage: path-specific FEC (Converge §4.3). Per path, the
 * media packets it carried since that path's last FEC packet are protected
 * together (a fractional FEC rate emits one FEC packet every few frames,
 * covering all of them); the policy ({@link FecPolicy}) says how many FEC
 * packets, the FEC code (src/fec/codes.ts; XOR parity by default) builds them.
 * I/O-free: times are passed in (µs). Bounded by {@link FecProtectionWindow}.
 */
import { Priority } from '../core/types.js';
import type { Assignment, OutgoingPacket, PathId, PathState } from '../core/types.js';
import { encodeFec } from '../wire/encode.js';
import type { FecPolicy, FecPolicyName } from './types.js';
import { BUILTIN_FEC_CODES, type FecCodeEntry } from './codes.js';
import { FecProtectionWindow } from './window.js';

/** Envelope bytes around an FEC body (path id, seq, send time, field tag and length). */
const FEC_ENVELOPE_BYTES = 24;

/** What the sender's pipeline asks of its FEC stage. */
export interface FecEncoder {
  readonly name: FecPolicyName;
  /**
   * FEC packets for one frame's media, as scheduled (`media`: the
   * scheduler's assignments; probe duplicates are not protected). Each FEC
   * packet names the path it protects (`protectsPath`); the caller schedules
   * them. [] when the policy adds none.
   * @param states the path snapshot the media was scheduled with
   * @param fps the encoder's frame rate
   */
  protect(media: readonly Assignment[], states: readonly PathState[], frame: { frameId: number; keyFrame: boolean }, fps: number, nowUs: number): OutgoingPacket[];
  /** `count` packets first sent on `pathId` were NACKed (the policy may raise its rate). */
  onNack(pathId: PathId, count: number, nowUs: number): void;
}

/** Converge §4.3 path-specific FEC with a pluggable rate policy and code. */
export class PathFecEncoder implements FecEncoder {
  private readonly window = new FecProtectionWindow();
  private fecSeq = 0;

  /**
   * @param policy how many repair packets (src/fec/factory.ts)
   * @param code which erasure code builds them (src/fec/codes.ts; default XOR)
   */
  constructor(
    private readonly policy: FecPolicy,
    private readonly streamId: number,
    private readonly code: FecCodeEntry = BUILTIN_FEC_CODES.xor,
  ) {}

  get name(): FecPolicyName {
    return this.policy.name;
  }

  protect(media: readonly Assignment[], states: readonly PathState[], frame: { frameId: number; keyFrame: boolean }, fps: number, nowUs: number): OutgoingPacket[] {
    if (this.policy.name === 'none') return [];
    const perPath = new Map<PathId, { count: number; bytes: number }>();
    for (const a of media) {
      if (a.probe) continue;
      this.window.push(a.pathId, a.packet.flowSeq, a.packet.body, nowUs);
      const e = perPath.get(a.pathId) ?? { count: 0, bytes: 0 };
      e.count++;
      e.bytes += a.packet.sizeBytes;
      perPath.set(a.pathId, e);
    }
    const out: OutgoingPacket[] = [];
    for (const [pathId, e] of perPath) {
      const st = states.find((s) => s.id === pathId);
      if (!st) continue;
      const ctx = {
        pathId,
        mediaCount: e.count,
        isKeyframe: frame.keyFrame,
        lossRate: st.lossRate,
        rttMs: st.srttMs,
        rateBps: st.rateBps,
        fps,
        frameBytes: e.bytes,
      };
      const count = this.policy.fecCount(ctx, nowUs);
      if (count <= 0) continue;
      const fecs = this.code.encode({
        streamId: this.streamId,
        packets: this.window.take(pathId, nowUs),
        count,
        mask: this.policy.maskKind?.(ctx) ?? 'random',
        protectsPath: pathId,
        firstFecSeq: this.fecSeq,
      });
      this.fecSeq = (this.fecSeq + fecs.length) >>> 0;
      for (const f of fecs) {
        const body = encodeFec(this.code.wireId === 0 ? f : { ...f, code: this.code.wireId });
        out.push({
          streamId: this.streamId,
          flowSeq: f.baseSeq,
          frameId: frame.frameId,
          priority: Priority.Fec,
          nalClass: 0,
          sizeBytes: body.length + FEC_ENVELOPE_BYTES,
          body,
          isFec: true,
          protectsPath: pathId,
        });
      }
    }
    return out;
  }

  onNack(pathId: PathId, count: number, nowUs: number): void {
    this.policy.onNack(pathId, count, nowUs);
  }
}
