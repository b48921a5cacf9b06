/**
 * Errors thrown by the wire layer on MISUSE by the caller (bad options, an
 * invalid message handed to an encoder). Malformed data from the network is
 * never thrown: `decodePacket` returns `{ ok: false, reason }` instead.
 *
 * Pattern after livekit/client-sdk-js `DataTrackPacketizerError`: a stable
 * string `code` plus static factories.
 */

/** Stable machine-readable codes of {@link WireError}. */
export type WireErrorCode = 'ERR_MTU_TOO_SMALL' | 'ERR_MTU_TOO_LARGE' | 'ERR_INVALID_OPTION' | 'ERR_INVALID_MESSAGE' | 'ERR_INVALID_FRAME' | 'ERR_FRAME_TOO_LARGE' | 'ERR_STREAM_MISMATCH';

export class WireError extends Error {
  readonly code: WireErrorCode;

  private constructor(code: WireErrorCode, message: string) {
    super(message);
    this.name = 'WireError';
    this.code = code;
  }

  /** `mtuBytes` leaves no room for payload after the worst-case headers. */
  static mtuTooSmall(mtuBytes: number, minBytes: number): WireError {
    return new WireError('ERR_MTU_TOO_SMALL', `mtuBytes ${mtuBytes} is too small: need >= ${minBytes} bytes to carry the Packet envelope, the Media header and payload`);
  }

  /** `mtuBytes` exceeds what the receiver's decoder accepts. */
  static mtuTooLarge(mtuBytes: number, maxBytes: number): WireError {
    return new WireError('ERR_MTU_TOO_LARGE', `mtuBytes ${mtuBytes} exceeds the maximum packet size ${maxBytes} bytes`);
  }

  /** A constructor option is out of range or of the wrong type. */
  static invalidOption(name: string, value: unknown, expected: string): WireError {
    return new WireError('ERR_INVALID_OPTION', `option ${name}=${String(value)} is invalid: expected ${expected}`);
  }

  /** An encoder was handed a message the receiver would reject. */
  static invalidMessage(kind: string, detail: string): WireError {
    return new WireError('ERR_INVALID_MESSAGE', `cannot encode ${kind}: ${detail}`);
  }

  /** The packetizer was handed a malformed EncodedFrameInput. */
  static invalidFrame(detail: string): WireError {
    return new WireError('ERR_INVALID_FRAME', `invalid encoded frame: ${detail}`);
  }

  /** The frame needs more fragments than the wire allows (`maxFragments`). */
  static frameTooLarge(bytes: number, fragments: number, maxFragments: number): WireError {
    return new WireError('ERR_FRAME_TOO_LARGE', `frame of ${bytes} bytes needs ${fragments} fragments, more than the wire limit ${maxFragments}`);
  }

  /** The frame's streamId is not the packetizer's. */
  static streamMismatch(expected: number, got: number): WireError {
    return new WireError('ERR_STREAM_MISMATCH', `frame streamId ${got} does not match the packetizer's streamId ${expected}`);
  }
}
