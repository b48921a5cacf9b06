/**
 * A second datagram pipe of one path that does not wait for acknowledgements
 * on the path's reverse direction: the RTP carrier (our datagrams bundled into
 * VP8 frames through `RTCRtpScriptTransform`, on the path's own
 * RTCPeerConnection) and the simulator's model of it.
 *
 * Why: a path's RTCDataChannel is an SCTP association, which sends only what
 * SACKs arriving on the reverse direction allow (RFC 4960 §6.1, §7.2). When a
 * path's downlink dies while its uplink works (the AT&T LTE driving trace:
 * ~1 packet/s down at 20.3-30 s and 38.3-41.5 s), the datachannel stalls while
 * RTP, which needs no acknowledgement, keeps delivering (measured in Chromium:
 * tools/experiments/rtp-carrier/README.md, answer 4). A path's sink sends on
 * its carrier while its datachannel is stalled and on the datachannel
 * otherwise (SCTP recovers faster after an outage than a GCC-paced RTP
 * sender).
 *
 * Delivery is unreliable and unordered, and a datagram may arrive twice
 * (Chromium's RTX padding re-sends recent RTP packets): the receiving engine
 * already drops duplicate packets by their sequence numbers.
 */

/** One path's acknowledgement-free datagram pipe (see the module doc). */
export interface DatagramCarrier {
  /** True while the carrier can take datagrams (negotiated and connected). */
  readonly open: boolean;
  /**
   * Queue one datagram (the bytes are copied or handed over before return).
   * @returns false when not open or when its queue bound would be exceeded
   *   (the caller counts a drop); never throws.
   */
  send(bytes: Uint8Array): boolean;
  /** Bytes accepted by {@link send} and not yet handed to the network (bounded by the implementation). */
  queuedBytes(): number;
  /**
   * The most the carrier can send (bps), when it knows: for the RTP carrier
   * the browser's `availableOutgoingBitrate` (its own GCC estimate, W3C
   * webrtc-stats RTCIceCandidatePairStats), which paces it whatever we offer.
   */
  rateCeilingBps(): number | undefined;
  /** A datagram arrived; `ageUs` as in PathTransportEvents.message. Returns an unsubscribe function. */
  on(event: 'message', cb: (bytes: Uint8Array, ageUs?: number) => void): () => void;
  /**
   * Optional: the owner needs the carrier now (the path's datachannel is
   * stalled). A carrier negotiated on demand (the RTP carrier's `attach:
   * 'stall'`) starts its negotiation; `open` turns true later, if at all.
   * Called on every update while stalled: must be cheap and idempotent;
   * never throws.
   */
  wake?(): void;
  /**
   * Optional: the carrier's sender as the browser reports it (the RTP
   * carrier: its last `getStats()` poll), for diagnostics; undefined when
   * unknown.
   */
  senderStats?(): CarrierSenderStats | undefined;
  /** Release its resources (idempotent); `open` becomes false. */
  close(): void;
}

/**
 * A carrier's sender as the browser reports it (W3C webrtc-stats
 * RTCOutboundRtpStreamStats of the RTP carrier's video sender and
 * RTCIceCandidatePairStats of the selected pair), as of the last poll; each
 * field undefined when not reported.
 */
export interface CarrierSenderStats {
  /** `availableOutgoingBitrate` (bps): Chromium's GCC estimate, the carrier's ceiling. */
  availableOutgoingBitrate?: number;
  /** The encoder's target (bps). */
  targetBitrate?: number;
  /** Frames the encoder made / frames sent (all of them, ours or not). */
  framesEncoded?: number;
  framesSent?: number;
  /** Frames the page pushed into the carrier's track (the encoder's input). */
  framesPushed?: number;
  bytesSent?: number;
  packetsSent?: number;
  /** 'none', 'bandwidth', 'cpu' or 'other'. */
  qualityLimitationReason?: string;
}
