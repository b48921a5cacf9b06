/**
 * YUV4MPEG2 (Y4M) parsing: the stream header and raw 4:2:0 frames.
 *
 * Format (as written by ffmpeg's yuv4mpegpipe muxer): one header line
 * `YUV4MPEG2 W<width> H<height> F<num>:<den> I<p|t|b|m> A<n>:<d> C<colourspace> X<...>\n`,
 * then per frame `FRAME[ params]\n` followed by the Y plane (w*h bytes) and
 * the U and V planes ((w/2 rounded up) * (h/2 rounded up) bytes each).
 * Only 8-bit 4:2:0 (`C420`, `C420jpeg`, `C420paldv`, `C420mpeg2`, or no C tag)
 * is accepted.
 *
 * Pure functions over bytes: used in the browser (on ranges fetched from the
 * bench server) and in Node (tests).
 */

export interface Y4mHeader {
  width: number;
  height: number;
  /** Frame rate as a fraction and as a number (frames/s). */
  fpsNum: number;
  fpsDen: number;
  fps: number;
  colorspace: string;
  /** Bytes of the stream header including its newline. */
  headerBytes: number;
  /** Bytes of one frame's picture data (Y + U + V). */
  frameBytes: number;
  ySize: number;
  uvWidth: number;
  uvHeight: number;
}

export class Y4mError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Y4mError';
  }
}

const MAGIC = 'YUV4MPEG2';
const FRAME = [0x46, 0x52, 0x41, 0x4d, 0x45]; // "FRAME"
const MAX_HEADER = 4096;

function indexOfNewline(bytes: Uint8Array, from: number, limit: number): number {
  const end = Math.min(bytes.length, from + limit);
  for (let i = from; i < end; i++) if (bytes[i] === 0x0a) return i;
  return -1;
}

function ascii(bytes: Uint8Array, start: number, end: number): string {
  let s = '';
  for (let i = start; i < end; i++) s += String.fromCharCode(bytes[i]);
  return s;
}

/**
 * Parse the stream header at the start of `bytes` (at least the header line).
 * @throws Y4mError when the magic is missing, the line is unterminated within 4 KiB,
 *   W/H are missing or invalid, or the colour space is not 8-bit 4:2:0.
 */
export function parseY4mHeader(bytes: Uint8Array): Y4mHeader {
  const nl = indexOfNewline(bytes, 0, MAX_HEADER);
  if (nl < 0) throw new Y4mError('Y4M: no header line within 4 KiB');
  const line = ascii(bytes, 0, nl);
  const tokens = line.split(' ').filter((t) => t.length > 0);
  if (tokens[0] !== MAGIC) throw new Y4mError(`Y4M: bad magic ${JSON.stringify(tokens[0] ?? '')}`);
  let width = 0;
  let height = 0;
  let fpsNum = 30;
  let fpsDen = 1;
  let colorspace = '420';
  for (const t of tokens.slice(1)) {
    const v = t.slice(1);
    switch (t[0]) {
      case 'W':
        width = Number(v);
        break;
      case 'H':
        height = Number(v);
        break;
      case 'F': {
        const [n, d] = v.split(':').map(Number);
        if (!(n > 0) || !(d > 0)) throw new Y4mError(`Y4M: bad frame rate ${t}`);
        fpsNum = n;
        fpsDen = d;
        break;
      }
      case 'C':
        colorspace = v;
        break;
      default:
        break; // I, A, X: not needed
    }
  }
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0 || width > 16384 || height > 16384) {
    throw new Y4mError(`Y4M: bad size ${width}x${height}`);
  }
  if (!/^420(jpeg|paldv|mpeg2)?$/.test(colorspace)) throw new Y4mError(`Y4M: colour space C${colorspace} not supported (need 8-bit 4:2:0)`);
  const uvWidth = Math.ceil(width / 2);
  const uvHeight = Math.ceil(height / 2);
  const ySize = width * height;
  return {
    width,
    height,
    fpsNum,
    fpsDen,
    fps: fpsNum / fpsDen,
    colorspace,
    headerBytes: nl + 1,
    frameBytes: ySize + 2 * uvWidth * uvHeight,
    ySize,
    uvWidth,
    uvHeight,
  };
}

/** Byte offset of frame `index`'s `FRAME` marker, assuming bare `FRAME\n` markers (what ffmpeg writes). */
export function y4mFrameOffset(h: Y4mHeader, index: number): number {
  return h.headerBytes + index * (h.frameBytes + 6);
}

/** Number of whole frames in a file of `totalBytes`, assuming bare `FRAME\n` markers. */
export function y4mFrameCount(h: Y4mHeader, totalBytes: number): number {
  return Math.max(0, Math.floor((totalBytes - h.headerBytes) / (h.frameBytes + 6)));
}

export interface I420Frame {
  width: number;
  height: number;
  y: Uint8Array;
  u: Uint8Array;
  v: Uint8Array;
}

/**
 * Read one frame whose `FRAME` marker starts at `bytes[offset]`. The planes
 * are views into `bytes` (no copy). Returns the frame and the offset of the
 * next marker.
 * @throws Y4mError when the marker is missing or the data is truncated.
 */
export function readY4mFrameAt(bytes: Uint8Array, h: Y4mHeader, offset: number): { frame: I420Frame; next: number } {
  for (let i = 0; i < FRAME.length; i++) {
    if (bytes[offset + i] !== FRAME[i]) throw new Y4mError(`Y4M: no FRAME marker at byte ${offset}`);
  }
  const nl = indexOfNewline(bytes, offset, 1024);
  if (nl < 0) throw new Y4mError(`Y4M: unterminated FRAME line at byte ${offset}`);
  const start = nl + 1;
  const end = start + h.frameBytes;
  if (end > bytes.length) throw new Y4mError(`Y4M: truncated frame at byte ${offset} (${bytes.length - start} of ${h.frameBytes} bytes)`);
  const uvSize = h.uvWidth * h.uvHeight;
  return {
    frame: {
      width: h.width,
      height: h.height,
      y: bytes.subarray(start, start + h.ySize),
      u: bytes.subarray(start + h.ySize, start + h.ySize + uvSize),
      v: bytes.subarray(start + h.ySize + uvSize, end),
    },
    next: end,
  };
}

/**
 * Parse a whole in-memory Y4M file (frames may carry FRAME parameters).
 * A truncated last frame is ignored.
 * @throws Y4mError on a bad header or a missing FRAME marker.
 */
export function parseY4m(bytes: Uint8Array): { header: Y4mHeader; frames: I420Frame[] } {
  const header = parseY4mHeader(bytes);
  const frames: I420Frame[] = [];
  let off = header.headerBytes;
  while (off < bytes.length) {
    const nl = indexOfNewline(bytes, off, 1024);
    if (nl < 0 || nl + 1 + header.frameBytes > bytes.length) break;
    const { frame, next } = readY4mFrameAt(bytes, header, off);
    frames.push(frame);
    off = next;
  }
  return { header, frames };
}

/** Encode frames as a Y4M file (tests and tools). */
export function writeY4m(frames: I420Frame[], fps = 30): Uint8Array {
  if (frames.length === 0) throw new Y4mError('writeY4m: no frames');
  const { width, height } = frames[0];
  const head = new TextEncoder().encode(`YUV4MPEG2 W${width} H${height} F${fps}:1 Ip A1:1 C420jpeg\n`);
  const marker = new TextEncoder().encode('FRAME\n');
  const frameBytes = frames[0].y.length + frames[0].u.length + frames[0].v.length;
  const out = new Uint8Array(head.length + frames.length * (marker.length + frameBytes));
  out.set(head, 0);
  let off = head.length;
  for (const f of frames) {
    out.set(marker, off);
    off += marker.length;
    out.set(f.y, off);
    off += f.y.length;
    out.set(f.u, off);
    off += f.u.length;
    out.set(f.v, off);
    off += f.v.length;
  }
  return out;
}
