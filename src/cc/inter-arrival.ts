/**
 * Inter-arrival deltas of packet groups (send-time bursts).
 *
 * SOURCE: libwebrtc modules/congestion_controller/goog_cc/inter_arrival_delta.cc
 * (InterArrivalDelta::ComputeDeltas, NewTimestampGroup, BelongsToBurst);
 * draft-ietf-rmcat-gcc-02 §5.2 (pre-filtering: packets sent within a 5 ms
 * burst form one group; t_i - t_{i-1} send delta, T_i - T_{i-1} arrival delta,
 * d(i) = arrival delta - send delta).
 *
 * Send times are on the sender clock, arrival times on the receiver clock:
 * only differences within each clock are used, so any constant clock offset
 * cancels. Feed packets in arrival order (sort each report by arrival time).
 */

/** Packets whose send times lie within this span of a group's first packet join it (µs). */
export const SEND_TIME_GROUP_LENGTH_US = 5_000;
/** A packet arriving this close after the group's last one can still join it as a burst (µs). */
const BURST_DELTA_THRESHOLD_US = 5_000;
/** A burst may not span more than this on the arrival clock (µs). */
const MAX_BURST_DURATION_US = 100_000;
/** Arrival delta exceeding the local (system) delta by this much means the receiver clock jumped (µs). */
const ARRIVAL_TIME_OFFSET_THRESHOLD_US = 3_000_000;
/** This many consecutive reordered groups reset the state. */
const REORDERED_RESET_THRESHOLD = 3;

/**
 * Groups packets into send-time bursts and, each time a group completes,
 * exposes the deltas between it and the previous group in
 * {@link sendDeltaMs}, {@link arrivalDeltaMs}, {@link sizeDeltaBytes} and
 * {@link delayVariationMs}. Allocation-free per packet.
 */
export class InterArrival {
  /** Send delta (ms) between the last two completed groups (valid after compute() returned true). */
  sendDeltaMs = 0;
  /** Arrival delta (ms) between the last two completed groups. */
  arrivalDeltaMs = 0;
  /** Size difference (bytes) between the last two completed groups. */
  sizeDeltaBytes = 0;
  /** Packets ignored because they were sent before the current group (reordered). */
  reorderedPackets = 0;
  /** Resets after a receiver clock jump or persistent group reordering. */
  resets = 0;

  private readonly groupLengthUs: number;

  // Current group (empty when curFirstSendUs is NaN).
  private curFirstSendUs = Number.NaN;
  private curSendUs = 0;
  private curFirstArrivalUs = 0;
  private curCompleteUs = 0;
  private curSystemUs = 0;
  private curSize = 0;

  // Previous completed group (absent when prevCompleteUs is NaN).
  private prevSendUs = 0;
  private prevCompleteUs = Number.NaN;
  private prevSystemUs = 0;
  private prevSize = 0;

  private consecutiveReordered = 0;

  /** @param groupLengthUs burst length on the send clock (µs), default 5 ms. @throws RangeError if not finite and > 0. */
  constructor(groupLengthUs = SEND_TIME_GROUP_LENGTH_US) {
    if (!Number.isFinite(groupLengthUs) || groupLengthUs <= 0) {
      throw new RangeError(`InterArrival: groupLengthUs must be > 0, got ${groupLengthUs}`);
    }
    this.groupLengthUs = groupLengthUs;
  }

  /** d(i) = arrival delta - send delta (ms) of the last completed group pair. */
  get delayVariationMs(): number {
    return this.arrivalDeltaMs - this.sendDeltaMs;
  }

  /**
   * Add one received packet.
   * @param sendUs send time, sender clock (µs)
   * @param arrivalUs arrival time, receiver clock (µs)
   * @param systemUs sender-clock time the report carrying it was processed (µs), used to detect receiver clock jumps
   * @param sizeBytes packet size (bytes)
   * @returns true when a group just completed and the delta fields hold a new sample
   */
  compute(sendUs: number, arrivalUs: number, systemUs: number, sizeBytes: number): boolean {
    let calculated = false;
    if (Number.isNaN(this.curFirstSendUs)) {
      this.curFirstSendUs = sendUs;
      this.curSendUs = sendUs;
      this.curFirstArrivalUs = arrivalUs;
    } else if (this.curFirstSendUs > sendUs) {
      // Sent before the current group started: reordered, ignore.
      this.reorderedPackets++;
      return false;
    } else if (this.isNewGroup(arrivalUs, sendUs)) {
      if (!Number.isNaN(this.prevCompleteUs)) {
        const sendDeltaUs = this.curSendUs - this.prevSendUs;
        const arrivalDeltaUs = this.curCompleteUs - this.prevCompleteUs;
        const systemDeltaUs = this.curSystemUs - this.prevSystemUs;
        if (arrivalDeltaUs - systemDeltaUs >= ARRIVAL_TIME_OFFSET_THRESHOLD_US) {
          // The receiver clock jumped: start over.
          this.reset();
          this.resets++;
          return false;
        }
        if (arrivalDeltaUs < 0) {
          // Whole groups reordered after being stamped.
          if (++this.consecutiveReordered >= REORDERED_RESET_THRESHOLD) {
            this.reset();
            this.resets++;
          }
          return false;
        }
        this.consecutiveReordered = 0;
        this.sendDeltaMs = sendDeltaUs / 1000;
        this.arrivalDeltaMs = arrivalDeltaUs / 1000;
        this.sizeDeltaBytes = this.curSize - this.prevSize;
        calculated = true;
      }
      this.prevSendUs = this.curSendUs;
      this.prevCompleteUs = this.curCompleteUs;
      this.prevSystemUs = this.curSystemUs;
      this.prevSize = this.curSize;
      this.curFirstSendUs = sendUs;
      this.curSendUs = sendUs;
      this.curFirstArrivalUs = arrivalUs;
      this.curSize = 0;
    } else if (sendUs > this.curSendUs) {
      this.curSendUs = sendUs;
    }
    this.curSize += sizeBytes;
    this.curCompleteUs = arrivalUs;
    this.curSystemUs = systemUs;
    return calculated;
  }

  /** Forget all groups (keeps the counters). */
  reset(): void {
    this.consecutiveReordered = 0;
    this.curFirstSendUs = Number.NaN;
    this.curSize = 0;
    this.prevCompleteUs = Number.NaN;
  }

  private isNewGroup(arrivalUs: number, sendUs: number): boolean {
    if (this.belongsToBurst(arrivalUs, sendUs)) return false;
    return sendUs - this.curFirstSendUs > this.groupLengthUs;
  }

  /** Packets that arrive faster than they were sent, shortly after the group, are one burst. */
  private belongsToBurst(arrivalUs: number, sendUs: number): boolean {
    const arrivalDelta = arrivalUs - this.curCompleteUs;
    const sendDelta = sendUs - this.curSendUs;
    if (sendDelta === 0) return true;
    const propagationDelta = arrivalDelta - sendDelta;
    return propagationDelta < 0 && arrivalDelta <= BURST_DELTA_THRESHOLD_US && arrivalUs - this.curFirstArrivalUs < MAX_BURST_DURATION_US;
  }
}
