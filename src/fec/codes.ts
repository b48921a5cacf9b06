/**
 * The FEC code registry: which erasure code builds the repair packets and
 * rebuilds lost media from them. One name -> entry table (the shape of
 * src/core/registry.ts) used by `SenderEngine` (`fecCode` option), the
 * receiver (by the code's wire id in each `Fec` packet) and the simulator.
 * Separate from the FEC *policies* (src/fec/factory.ts), which decide how many
 * repair packets to send: any policy works with any code.
 *
 * Adding a code = its own file implementing {@link FecCodeEntry} (an encoder
 * function and a decoder class), one line in {@link BUILTIN_FEC_CODES} (or
 * {@link registerFecCode} from an app), and the conformance suite
 * (tests/unit/fec/codes-conformance.test.ts) runs it.
 *
 * Wire: the `Fec` message's `code` field (src/wire/multipath.proto) carries
 * the entry's {@link FecCodeEntry.wireId}; 0 (absent) is XOR, so packets of
 * senders that predate the field decode as before. A receiver counts and
 * drops FEC packets of a code it does not know (`ReceiverStats.fecUnknownCode`).
 */
import { Registry } from '../core/registry.js';
import type { FecMessage } from '../wire/types.js';
import { FecDecoder, type FecDecoderOptions } from './decoder.js';
import { zeroFecDropStats } from './decoder-state.js';
import { FecError } from './errors.js';
import type { FecDecoderStats, FecDropStats, FecPathStats, RecoveredPacket } from './types.js';
import { type MakeFecArgs, makeFecPackets } from './xor.js';

/** What the receiver needs of a code's decoder (the XOR {@link FecDecoder} is one). */
export interface FecCodeDecoder {
  /**
   * A media body arrived (or was rebuilt); returns the packets this made recoverable.
   * Never throws on data: lying input is counted in `stats().dropped`.
   */
  addMedia(streamId: number, flowSeq: number, body: Uint8Array, nowUs?: number): RecoveredPacket[];
  /** A repair packet of this code arrived; returns the packets it rebuilt. Never throws on data. */
  addFec(fec: FecMessage, nowUs?: number): RecoveredPacket[];
  stats(): FecDecoderStats;
}

/** One registry entry. */
export interface FecCodeEntry {
  /** Its registry name (`[a-z0-9][a-z0-9-]*`). */
  readonly name: string;
  /** One line for `--help` texts and docs. */
  readonly summary: string;
  /** The `Fec.code` value on the wire: 0 is XOR; other codes take 1..255, unique. */
  readonly wireId: number;
  /**
   * Repair packets over `args.packets` (`args.count` of them at most; the
   * policy chose the count, `args.mask` the loss pattern it expects). The
   * caller stamps `code` on them.
   * @throws FecError on arguments our own code could not have produced.
   */
  encode(args: MakeFecArgs): FecMessage[];
  /** A fresh decoder honouring the receiver's memory budget (`opts`). */
  createDecoder(opts: FecDecoderOptions): FecCodeDecoder;
}

/** The FEC codes this library ships. */
export const BUILTIN_FEC_CODES = {
  xor: {
    name: 'xor',
    summary: 'XOR parity, row or column masks (ULPFEC RFC 5109 §7-8, FlexFEC RFC 8627 §1.1): one loss per repair packet',
    wireId: 0,
    encode: makeFecPackets,
    createDecoder: (opts) => new FecDecoder(opts),
  },
} as const satisfies Record<string, FecCodeEntry>;

/** A built-in code's name. */
export type BuiltinFecCodeName = keyof typeof BUILTIN_FEC_CODES;
/** A registered code's name: a built-in one or one an app added with {@link registerFecCode}. */
export type FecCodeName = BuiltinFecCodeName | (string & {});

/** The default code. */
export const DEFAULT_FEC_CODE: BuiltinFecCodeName = 'xor';

const registry = new Registry<FecCodeEntry>('FEC code', BUILTIN_FEC_CODES, (name, reason) => FecError.invalidOption('name', name, reason));
const byWireId = new Map<number, FecCodeEntry>(Object.values(BUILTIN_FEC_CODES).map((e) => [e.wireId, e]));

/**
 * Add a code (under `entry.name`) for every later sender and receiver of this
 * page. Both ends of a call must register it (the receiver finds it by wire
 * id). Registering the same entry again is a no-op.
 * @throws FecError `invalid-option` when the name is not `[a-z0-9-]+` or taken
 *   by another entry, or `entry.wireId` is not an integer in 1..255 or is taken.
 */
export function registerFecCode(entry: FecCodeEntry): void {
  const id = entry?.wireId;
  if (!Number.isInteger(id) || id < 1 || id > 255) throw FecError.invalidOption('wireId', id, 'an integer in [1, 255] (0 is XOR)');
  const taken = byWireId.get(id);
  if (taken === entry && registry.get(entry.name) === entry) return;
  if (taken) throw FecError.invalidOption('wireId', id, 'a wire id no other FEC code uses');
  registry.register(entry.name, entry);
  byWireId.set(id, entry);
}

/** Every registered code name (built-ins first). */
export function fecCodeNames(): string[] {
  return registry.names();
}

/**
 * The entry registered under `name`.
 * @throws FecError `unknown-code` for a name not registered.
 */
export function fecCode(name: FecCodeName): FecCodeEntry {
  const e = registry.get(name);
  if (!e) throw FecError.unknownCode(name, registry.names());
  return e;
}

/** The entry whose wire id is `wireId`, undefined when none is registered (the receiver counts the packet and drops it). */
export function fecCodeByWireId(wireId: number): FecCodeEntry | undefined {
  return byWireId.get(wireId);
}

/**
 * Several decoders' stats as one (the receiver's FEC stats over every code it
 * decodes): counters summed, per-path entries merged by path id.
 */
export function sumFecDecoderStats(all: readonly FecDecoderStats[]): FecDecoderStats {
  if (all.length === 1) return all[0];
  const out: FecDecoderStats = {
    fecReceived: 0,
    fecUsed: 0,
    fecDiscarded: 0,
    recovered: 0,
    perPath: [],
    dropped: zeroFecDropStats(),
    storedMedia: 0,
    pendingFec: 0,
    storedBytes: 0,
    copied: 0,
  };
  const paths = new Map<number, FecPathStats>();
  for (const s of all) {
    out.fecReceived += s.fecReceived;
    out.fecUsed += s.fecUsed;
    out.fecDiscarded += s.fecDiscarded;
    out.recovered += s.recovered;
    out.storedMedia += s.storedMedia;
    out.pendingFec += s.pendingFec;
    out.storedBytes += s.storedBytes;
    out.copied += s.copied;
    for (const k of Object.keys(out.dropped) as Array<keyof FecDropStats>) out.dropped[k] += s.dropped[k];
    for (const p of s.perPath) {
      const q = paths.get(p.pathId);
      if (!q) paths.set(p.pathId, { ...p });
      else {
        q.fecReceived += p.fecReceived;
        q.fecUsed += p.fecUsed;
        q.fecDiscarded += p.fecDiscarded;
        q.recovered += p.recovered;
      }
    }
  }
  out.perPath = [...paths.values()].sort((a, b) => a.pathId - b.pathId);
  return out;
}
