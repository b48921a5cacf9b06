/**
 * Strategy interface for multipath schedulers. A scheduler is I/O-free: the
 * engine gives it a batch of packets (usually one encoded frame's fragments,
 * or that frame's FEC packets, or retransmissions) and a snapshot of the
 * paths, and gets back one path per packet (plus optional probe duplicates).
 */
import type { Assignment, OutgoingPacket, PathId, PathState, QoeFeedback } from '../core/types.js';

export type SchedulerName = 'converge' | 'minrtt' | 'mtput' | 'mrtp' | 'roundrobin' | 'single';

export interface Scheduler {
  readonly name: SchedulerName;
  /**
   * Assign every packet of `packets` to exactly one path that is `up` (never
   * drop). Packets of priority 1-5 (Converge Table 2) may be placed first.
   * May add `probe` duplicates for disabled paths. With no path up it returns [].
   */
  schedule(packets: readonly OutgoingPacket[], paths: readonly PathState[], nowUs: number): Assignment[];
  /** Receiver QoE feedback (Converge §4.2). Schedulers that do not use it ignore it. */
  onQoeFeedback(feedback: QoeFeedback, nowUs: number): void;
  /** False when the scheduler has disabled the path (Converge P_i = 0). */
  isEnabled(pathId: PathId): boolean;
}
