/**
 * The frames a stream's decoder has been given since its last key frame, the
 * newest {@link DECODED_FRAMES_KEPT} of them: what a delta frame may reference.
 * Named after libwebrtc modules/video_coding/utility/decoded_frames_history.cc,
 * which answers the same question ("was the reference decoded?") for the
 * frame buffer.
 */

/** frameIds remembered (a reference farther back than this many released frames counts as missing). */
export const DECODED_FRAMES_KEPT = 128;

export class DecodedFramesHistory {
  private readonly ids = new Set<number>();
  /** The remembered ids in release order, a ring once full. */
  private readonly ring: number[] = [];
  private head = 0;

  /** Record `frameId` as given to the decoder; a key frame first forgets everything before it. */
  insert(frameId: number, keyFrame: boolean): void {
    if (keyFrame) {
      this.ids.clear();
      this.ring.length = 0;
      this.head = 0;
    }
    if (this.ring.length < DECODED_FRAMES_KEPT) this.ring.push(frameId);
    else {
      this.ids.delete(this.ring[this.head]);
      this.ring[this.head] = frameId;
      this.head = (this.head + 1) % DECODED_FRAMES_KEPT;
    }
    this.ids.add(frameId);
  }

  /** `frameId` was given to the decoder since the last key frame (and is among the newest kept). */
  has(frameId: number): boolean {
    return this.ids.has(frameId);
  }
}
