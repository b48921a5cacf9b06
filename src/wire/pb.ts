/**
 * The protobuf wire primitives the generated codec (schema.generated.ts)
 * is written in: a growable writer and a bounds-checked reader (Protocol
 * Buffers encoding spec: varints, ZigZag, length-delimited, wire types 0, 1, 2
 * and 5). No run-time code generation (no `eval`, no `new Function`), so the
 * library runs under a strict Content-Security-Policy (`script-src 'self'`),
 * and no dependency: this replaces protobufjs at run time.
 *
 * Numbers: uint64 values are JavaScript numbers, exact up to 2^53; a larger
 * value reads as `Infinity` (the validators then reject it). uint32 / int32 /
 * sint32 read the low 32 bits of a longer varint, as the spec says parsers do.
 * The reader throws {@link PbError} on truncation, a varint over 10 bytes, a
 * length past the end, group wire types (3, 4) or invalid UTF-8.
 */
import { varintSize, writeVarint } from './varint.js';

/** Malformed protobuf input (the decoder turns it into a 'malformed' drop). */
export class PbError extends Error {}

export const WT_VARINT = 0;
export const WT_I64 = 1;
export const WT_LEN = 2;
export const WT_I32 = 5;

/** Most unused bytes `finish()` leaves behind a returned view (else it copies). */
const FINISH_SLACK_BYTES = 64;

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const EMPTY = new Uint8Array(0);

/** Appends protobuf fields to a growable buffer; `finish()` returns a plain Uint8Array. */
export class PbWriter {
  private buf: Uint8Array;
  private pos = 0;

  constructor(initialBytes = 64) {
    this.buf = new Uint8Array(initialBytes);
  }

  /** Room for `n` more bytes: doubles, or grows to fit `n` plus `slack` at once (a large bytes field). */
  private ensure(n: number, slack = 0): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n + slack));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  /** Field key: (field << 3) | wire type. */
  tag(field: number, wireType: number): void {
    this.varint(field * 8 + wireType);
  }

  /** Varint of an integer in [0, 2^53] (uint32, uint64, bool). */
  varint(n: number): void {
    this.ensure(10);
    this.pos = writeVarint(this.buf, this.pos, n);
  }

  /** int32 / enum: negative values take 10 bytes (sign-extended to 64 bits), as the spec says. */
  int32(n: number): void {
    if (n >= 0) {
      this.varint(n);
      return;
    }
    this.ensure(10);
    let lo = n >>> 0;
    for (let i = 0; i < 4; i++) {
      this.buf[this.pos++] = (lo & 0x7f) | 0x80;
      lo >>>= 7;
    }
    this.buf[this.pos++] = (lo & 0x0f) | 0x70 | 0x80; // bits 28..31, then sign bits 32..34
    for (let i = 0; i < 4; i++) this.buf[this.pos++] = 0xff;
    this.buf[this.pos++] = 0x01;
  }

  /** sint32: ZigZag then varint. */
  sint32(n: number): void {
    this.varint(((n << 1) ^ (n >> 31)) >>> 0);
  }

  /** Length-delimited bytes. */
  bytes(b: Uint8Array): void {
    this.varint(b.length);
    this.ensure(b.length, FINISH_SLACK_BYTES / 2);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Length-delimited UTF-8. */
  string(s: string): void {
    this.bytes(utf8Encoder.encode(s));
  }

  /** Bytes written so far. */
  get length(): number {
    return this.pos;
  }

  /**
   * The bytes written, as a plain Uint8Array of exactly that length: a view
   * (no copy) when the buffer has at most {@link FINISH_SLACK_BYTES} unused,
   * else a copy, so a kept message never pins much more memory than its size.
   * The writer must not be used afterwards.
   */
  finish(): Uint8Array {
    return this.buf.length - this.pos <= FINISH_SLACK_BYTES ? this.buf.subarray(0, this.pos) : this.buf.slice(0, this.pos);
  }
}

/** Encoded size of a varint (re-exported for the generated code). */
export { varintSize };

/** Reads protobuf fields from `buf[pos, end)`; every read is bounds-checked. */
export class PbReader {
  constructor(
    readonly buf: Uint8Array,
    public pos = 0,
    readonly end = buf.length,
  ) {}

  /**
   * A varint as an exact number when <= 2^53, else Infinity.
   * @throws PbError when truncated or longer than 10 bytes.
   */
  uint64(): number {
    const buf = this.buf;
    let lo = 0; // bits 0..27
    let shift = 0;
    let i = 0;
    for (; i < 4; i++) {
      if (this.pos >= this.end) throw new PbError('truncated varint');
      const b = buf[this.pos++];
      lo |= (b & 0x7f) << shift;
      shift += 7;
      if (b < 0x80) return lo >>> 0;
    }
    let hi = 0; // bits 28.., as a float: exact up to 2^53 total
    let mul = 1;
    for (; i < 10; i++) {
      if (this.pos >= this.end) throw new PbError('truncated varint');
      const b = buf[this.pos++];
      hi += (b & 0x7f) * mul;
      mul *= 128;
      if (b < 0x80) {
        // value = hi * 2^28 + lo; > 2^53 <=> hi > 2^25 or (hi == 2^25 and lo > 0)
        if (hi > 0x200_0000 || (hi === 0x200_0000 && lo !== 0)) return Infinity;
        return hi * 0x1000_0000 + (lo >>> 0);
      }
    }
    throw new PbError('varint longer than 10 bytes');
  }

  /** The low 32 bits of a varint, unsigned. @throws PbError as {@link uint64}. */
  uint32(): number {
    const buf = this.buf;
    let v = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new PbError('truncated varint');
      const b = buf[this.pos++];
      if (i < 5) v |= (b & 0x7f) << (7 * i);
      if (b < 0x80) return v >>> 0;
    }
    throw new PbError('varint longer than 10 bytes');
  }

  /** int32 / enum: the low 32 bits, signed. */
  int32(): number {
    return this.uint32() | 0;
  }

  /** sint32: ZigZag-decoded low 32 bits. */
  sint32(): number {
    const n = this.uint32();
    return (n >>> 1) ^ -(n & 1);
  }

  bool(): boolean {
    return this.uint64() !== 0;
  }

  /** Length-delimited bytes as a view into the input (no copy). @throws PbError when past the end. */
  bytes(): Uint8Array {
    const len = this.uint64();
    if (len > this.end - this.pos) throw new PbError(`length ${len} past end`);
    if (len === 0) return EMPTY;
    const b = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return b;
  }

  /** Length-delimited UTF-8. @throws PbError on invalid UTF-8. */
  string(): string {
    const b = this.bytes();
    try {
      return utf8Decoder.decode(b);
    } catch {
      throw new PbError('invalid UTF-8');
    }
  }

  /** A reader over the next length-delimited field (an embedded message); this reader moves past it. */
  sub(): PbReader {
    const len = this.uint64();
    if (len > this.end - this.pos) throw new PbError(`length ${len} past end`);
    const r = new PbReader(this.buf, this.pos, this.pos + len);
    this.pos += len;
    return r;
  }

  /** End position of the next length-delimited field (packed repeated); the caller reads up to it. */
  lenEnd(): number {
    const len = this.uint64();
    if (len > this.end - this.pos) throw new PbError(`length ${len} past end`);
    return this.pos + len;
  }

  /** A field key; field number 0 and keys above 2^32 - 1 are malformed. */
  tag(): number {
    const t = this.uint64();
    if (t < 8 || t > 0xffff_ffff) throw new PbError(`illegal tag ${t}`);
    return t;
  }

  /** @throws PbError when `tag` does not carry `wireType` (a known field sent with the wrong type). */
  expect(tag: number, wireType: number, field: string): void {
    if (tag % 8 !== wireType) throw new PbError(`wrong wire type ${tag % 8} for ${field}`);
  }

  /** Skips a field of an unknown number (forward compatibility). @throws PbError for groups or truncation. */
  skip(wireType: number): void {
    switch (wireType) {
      case WT_VARINT:
        this.uint64();
        return;
      case WT_I64:
        this.pos += 8;
        break;
      case WT_LEN:
        this.pos = this.lenEnd();
        return;
      case WT_I32:
        this.pos += 4;
        break;
      default:
        throw new PbError(`unsupported wire type ${wireType}`);
    }
    if (this.pos > this.end) throw new PbError('truncated fixed-width field');
  }
}
