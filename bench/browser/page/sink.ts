/**
 * Bench page, receiver side: reads every frame that comes out of a remote
 * video track (MediaStreamTrackProcessor), decodes its barcode into the source
 * frame id, logs the display time, and for every `sampleEvery`-th source id
 * computes PSNR/SSIM of the luma plane against the source frame (barcode
 * area excluded). Quality work is queued (bounded) so the frame loop stays
 * light; frames whose quality could not be queued are counted.
 */
import { barcodeLayout, readBarcodeY, unwrapBarcodeId } from '../barcode.js';
import type { DisplayEntry, QualityEntry } from '../metrics.js';
import { compareY, lumaFit } from '../quality.js';
import type { FrameSource } from './source.js';

const MAX_LOG = 100_000;
const MAX_QUALITY_QUEUE = 4;

export interface Sink {
  drainDisplays(): DisplayEntry[];
  drainQuality(): QualityEntry[];
  counters(): {
    frames: number;
    unreadable: number;
    qualitySkipped: number;
    qualityErrors: number;
    formats: Record<string, number>;
    /** Mean luma fit received = gain * source + offset over same-size sampled frames (colour-range diagnostic). */
    lumaFit: { gain: number; offset: number; samples: number };
  };
  stop(): void;
}

/** Luma of an RGBA pixel, BT.601 limited range (what libyuv's ARGBToI420 computes). */
function lumaFromRgba(rgba: Uint8ClampedArray, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0, j = 0; i < n; i++, j += 4) out[i] = (66 * rgba[j] + 129 * rgba[j + 1] + 25 * rgba[j + 2] + 128 + 4096) >> 8;
  return out;
}

async function lumaOf(frame: VideoFrame, scratch: { buf: Uint8Array }): Promise<{ y: Uint8Array; stride: number; w: number; h: number }> {
  const w = frame.visibleRect?.width ?? frame.codedWidth;
  const h = frame.visibleRect?.height ?? frame.codedHeight;
  const fmt = frame.format;
  if (fmt === 'I420' || fmt === 'I420A' || fmt === 'NV12' || fmt === 'I422' || fmt === 'I444') {
    const size = frame.allocationSize();
    if (scratch.buf.length < size) scratch.buf = new Uint8Array(size);
    const layout = await frame.copyTo(scratch.buf);
    const { offset, stride } = layout[0];
    return { y: scratch.buf.subarray(offset, offset + stride * h), stride, w, h };
  }
  // RGB(A)/opaque frames: render and convert.
  const canvas = new OffscreenCanvas(w, h);
  const ctx = canvas.getContext('2d')!;
  ctx.drawImage(frame, 0, 0);
  const img = ctx.getImageData(0, 0, w, h);
  return { y: lumaFromRgba(img.data, w * h), stride: w, w, h };
}

export function startSink(track: MediaStreamTrack, source: FrameSource, opts: { sampleEvery: number; ssim: boolean }): Sink {
  const Processor = (globalThis as unknown as { MediaStreamTrackProcessor: new (o: { track: MediaStreamTrack }) => { readable: ReadableStream<VideoFrame> } }).MediaStreamTrackProcessor;
  const reader = new Processor({ track }).readable.getReader();
  const displays: DisplayEntry[] = [];
  const quality: QualityEntry[] = [];
  const queue: Array<{ id: number; y: Uint8Array; w: number; h: number }> = [];
  const c = { frames: 0, unreadable: 0, qualitySkipped: 0, qualityErrors: 0, formats: {} as Record<string, number> };
  const fit = { gain: 0, offset: 0, samples: 0 };
  const scratch = { buf: new Uint8Array(0) };
  const exclude = barcodeLayout(source.width, source.height).exclude;
  let lastId = 0;
  let stopped = false;
  let working = false;

  const work = async () => {
    if (working) return;
    working = true;
    try {
      while (queue.length && !stopped) {
        const item = queue.shift()!;
        try {
          const ref = await source.loadY(item.id);
          const r = compareY({ y: ref, width: source.width, height: source.height }, { y: item.y, width: item.w, height: item.h }, exclude, opts.ssim);
          if (quality.length < MAX_LOG) quality.push({ id: item.id, psnr: r.psnr, ssim: r.ssim });
          if (item.w === source.width && item.h === source.height) {
            const lf = lumaFit(ref, item.y, item.w, item.h, exclude);
            if (Number.isFinite(lf.gain)) {
              fit.gain += lf.gain;
              fit.offset += lf.offset;
              fit.samples++;
            }
          }
        } catch {
          c.qualityErrors++;
        }
      }
    } finally {
      working = false;
    }
  };

  const loop = async () => {
    while (!stopped) {
      let res: ReadableStreamReadResult<VideoFrame>;
      try {
        res = await reader.read();
      } catch {
        return;
      }
      if (res.done) return;
      const frame = res.value;
      const tMs = performance.timeOrigin + performance.now();
      c.frames++;
      const fmt = String(frame.format);
      c.formats[fmt] = (c.formats[fmt] ?? 0) + 1;
      try {
        const { y, stride, w, h } = await lumaOf(frame, scratch);
        let id = -1;
        try {
          const r = readBarcodeY(y, w, h, { stride });
          if (r.ok) id = lastId = unwrapBarcodeId(r.id, lastId);
        } catch {
          /* frame too small for a barcode */
        }
        if (id < 0) c.unreadable++;
        if (displays.length < MAX_LOG) displays.push({ id, tMs, w, h });
        if (id >= 0 && id % opts.sampleEvery === 0) {
          if (queue.length < MAX_QUALITY_QUEUE) {
            const plane = new Uint8Array(w * h);
            for (let r = 0; r < h; r++) plane.set(y.subarray(r * stride, r * stride + w), r * w);
            queue.push({ id, y: plane, w, h });
            void work();
          } else {
            c.qualitySkipped++;
          }
        }
      } catch {
        c.unreadable++;
      } finally {
        frame.close();
      }
    }
  };
  void loop();
  return {
    drainDisplays: () => displays.splice(0, displays.length),
    drainQuality: () => quality.splice(0, quality.length),
    counters: () => ({
      ...c,
      formats: { ...c.formats },
      lumaFit: fit.samples
        ? { gain: Math.round((fit.gain / fit.samples) * 1000) / 1000, offset: Math.round((fit.offset / fit.samples) * 10) / 10, samples: fit.samples }
        : { gain: NaN, offset: NaN, samples: 0 },
    }),
    stop: () => {
      stopped = true;
      void reader.cancel().catch(() => undefined);
    },
  };
}
