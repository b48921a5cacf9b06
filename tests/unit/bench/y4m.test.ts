import { describe, expect, it } from 'vitest';
import { syntheticI420 } from '../../../bench/browser/synthetic.js';
import { Y4mError, parseY4m, parseY4mHeader, readY4mFrameAt, writeY4m, y4mFrameCount, y4mFrameOffset } from '../../../bench/browser/y4m.js';

const enc = (s: string) => new TextEncoder().encode(s);

describe('y4m', () => {
  it('parses an ffmpeg-style header', () => {
    const h = parseY4mHeader(enc('YUV4MPEG2 W640 H480 F30000:1001 Ip A1:1 C420jpeg XYSCSS=420JPEG\nFRAME\n'));
    expect(h).toMatchObject({ width: 640, height: 480, fpsNum: 30000, fpsDen: 1001, colorspace: '420jpeg', ySize: 307200, uvWidth: 320, uvHeight: 240 });
    expect(h.fps).toBeCloseTo(29.97, 2);
    expect(h.frameBytes).toBe(460800);
    expect(h.headerBytes).toBe('YUV4MPEG2 W640 H480 F30000:1001 Ip A1:1 C420jpeg XYSCSS=420JPEG\n'.length);
  });

  it('handles odd sizes (chroma rounded up) and a missing C tag', () => {
    const h = parseY4mHeader(enc('YUV4MPEG2 W5 H3 F25:1\n'));
    expect(h).toMatchObject({ uvWidth: 3, uvHeight: 2, frameBytes: 15 + 2 * 6, colorspace: '420' });
  });

  it('rejects bad headers with Y4mError', () => {
    expect(() => parseY4mHeader(enc('YUV4MPEG3 W1 H1\n'))).toThrow(Y4mError);
    expect(() => parseY4mHeader(enc('YUV4MPEG2 W640 H480'))).toThrow(/no header line/);
    expect(() => parseY4mHeader(enc('YUV4MPEG2 H480 F30:1\n'))).toThrow(/bad size/);
    expect(() => parseY4mHeader(enc('YUV4MPEG2 W640 H480 C444\n'))).toThrow(/not supported/);
    expect(() => parseY4mHeader(enc('YUV4MPEG2 W640 H480 F0:1\n'))).toThrow(/frame rate/);
  });

  it('round-trips frames through writeY4m / parseY4m and random access', () => {
    const frames = [0, 1, 2].map((i) => syntheticI420(i, 32, 18));
    const bytes = writeY4m(frames, 25);
    const { header, frames: got } = parseY4m(bytes);
    expect(header).toMatchObject({ width: 32, height: 18, fps: 25 });
    expect(got.length).toBe(3);
    for (let i = 0; i < 3; i++) {
      expect(got[i].y).toEqual(frames[i].y);
      expect(got[i].u).toEqual(frames[i].u);
      expect(got[i].v).toEqual(frames[i].v);
      const { frame } = readY4mFrameAt(bytes, header, y4mFrameOffset(header, i));
      expect(frame.v).toEqual(frames[i].v);
    }
    expect(y4mFrameCount(header, bytes.length)).toBe(3);
    expect(y4mFrameCount(header, bytes.length - 1)).toBe(2);
  });

  it('accepts FRAME parameters and ignores a truncated last frame', () => {
    const f = syntheticI420(4, 16, 16);
    const head = enc('YUV4MPEG2 W16 H16 F30:1 C420\n');
    const marker = enc('FRAME Ixyz\n');
    const body = new Uint8Array([...f.y, ...f.u, ...f.v]);
    const bytes = new Uint8Array([...head, ...marker, ...body, ...enc('FRAME\n'), ...body.subarray(0, 10)]);
    const { frames } = parseY4m(bytes);
    expect(frames.length).toBe(1);
    expect(frames[0].y).toEqual(f.y);
  });

  it('reports a missing marker or truncated frame', () => {
    const bytes = writeY4m([syntheticI420(0, 16, 16)]);
    const h = parseY4mHeader(bytes);
    expect(() => readY4mFrameAt(bytes, h, h.headerBytes + 1)).toThrow(/no FRAME marker/);
    expect(() => readY4mFrameAt(bytes.subarray(0, bytes.length - 1), h, h.headerBytes)).toThrow(/truncated/);
  });
});
