import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { balancedMinFps, bitrateLimitsFor, buildLadder, floorStepBitrateBps, frameRateSteps, resolutionSteps } from '../../../src/adapt/ladder.js';
import { EncodeUsageMeter, FrameRateLimiter, VideoAdapter, type AdaptationDecision } from '../../../src/adapt/video-adapter.js';

const VGA = { width: 640, height: 480, fps: 30 };
const HD = { width: 1280, height: 720, fps: 30 };
const size = (d: { width: number; height: number; maxFps: number }): string => `${d.width}x${d.height}@${d.maxFps}`;

/** Run the adapter at 10 updates/s over `seconds` with a target function of time (s). */
function drive(a: VideoAdapter, fromS: number, seconds: number, target: (t: number) => number, usage?: (t: number) => number): AdaptationDecision[] {
  const out: AdaptationDecision[] = [];
  for (let i = 0; i < seconds * 10; i++) {
    const t = fromS + i / 10;
    out.push(a.update({ nowUs: Math.round(t * 1e6), targetBitrateBps: target(t), encodeUsage: usage?.(t) }));
  }
  return out;
}

describe('ladder (libwebrtc video_stream_adapter / video_adapter steps)', () => {
  it('resolution steps take at most 3/5 of the pixels, with video_adapter scale fractions, down to 320x180', () => {
    expect(resolutionSteps(VGA).map((r) => `${r.width}x${r.height}`)).toEqual(['640x480', '480x360', '320x240']);
    expect(resolutionSteps(HD).map((r) => `${r.width}x${r.height}`)).toEqual(['1280x720', '960x540', '640x360', '480x270', '320x180']);
    const steps = resolutionSteps({ width: 1920, height: 1080, fps: 30 });
    for (let i = 1; i < steps.length; i++) expect(steps[i].width * steps[i].height).toBeLessThanOrEqual((steps[i - 1].width * steps[i - 1].height * 3) / 5);
    for (const s of steps) expect((s.width % 2) + (s.height % 2)).toBe(0);
    // A source already below the minimum is never scaled.
    expect(resolutionSteps({ width: 160, height: 120, fps: 30 })).toHaveLength(1);
  });

  it('frame-rate steps are 2/3 each, not below 2 fps', () => {
    expect(frameRateSteps(30)).toEqual([30, 20, 13, 8, 5, 3, 2]);
    expect(frameRateSteps(2)).toEqual([2]);
  });

  it('bitrate limits follow encoder_info_settings.cc singlecast defaults', () => {
    expect(bitrateLimitsFor(320 * 240).minStartBps).toBe(200_000);
    expect(bitrateLimitsFor(480 * 360).minStartBps).toBe(300_000);
    expect(bitrateLimitsFor(640 * 480).minStartBps).toBe(500_000);
    expect(bitrateLimitsFor(1280 * 720).maxBps).toBe(2_500_000);
    expect(bitrateLimitsFor(1920 * 1080).minStartBps).toBeGreaterThan(900_000);
    expect(balancedMinFps(320 * 240)).toBe(7);
    expect(balancedMinFps(480 * 360)).toBe(10);
    expect(balancedMinFps(640 * 480)).toBe(15);
    expect(balancedMinFps(1280 * 720)).toBe(Infinity);
  });

  it('each preference walks its own dimension; needed bitrate never rises down the ladder', () => {
    // maintain-framerate: the sizes, then the floor steps (smaller sizes than libwebrtc's 320x180 minimum).
    expect(buildLadder(VGA, 'maintain-framerate').map(size)).toEqual(['640x480@30', '480x360@30', '320x240@30', '240x180@30', '160x120@30']);
    expect(buildLadder(VGA, 'maintain-resolution').map(size)).toEqual(['640x480@30', '640x480@20', '640x480@13', '640x480@8', '640x480@5', '640x480@3', '640x480@2']);
    // balanced: frame rate to the size's minimum first, then the size.
    expect(buildLadder(VGA, 'balanced').map(size)).toEqual(['640x480@30', '640x480@15', '480x360@15', '480x360@10', '320x240@10', '320x240@7']);
    expect(buildLadder(HD, 'balanced').map(size).slice(0, 4)).toEqual(['1280x720@30', '960x540@30', '640x360@30', '640x360@15']);
    expect(buildLadder(VGA, 'maintain-framerate-and-resolution').map(size)).toEqual(['640x480@30']);
    for (const p of ['balanced', 'maintain-framerate', 'maintain-resolution'] as const) {
      for (const src of [VGA, HD]) {
        const l = buildLadder(src, p);
        for (let i = 1; i < l.length; i++) expect(l[i].requiredBps).toBeLessThan(l[i - 1].requiredBps);
      }
    }
    expect(() => buildLadder({ width: 0, height: 480, fps: 30 }, 'balanced')).toThrow(RangeError);
    expect(() => buildLadder(VGA, 'nope' as never)).toThrow(RangeError);
  });
});

describe('floor steps (the encoder floor at the smallest size)', () => {
  it('go on below 320x180 at the same frame rate, each needing the encoder floor at its size', () => {
    const need = (l: ReturnType<typeof buildLadder>) => l.map((s) => `${size(s)}:${s.requiredBps}`);
    // Chromium's H.264 floor at 30 fps: 139 / 87 / 47 kbps at 320x240 / 240x180 / 160x120 (pixels^0.8).
    expect(need(buildLadder(VGA, 'maintain-framerate')).slice(2)).toEqual(['320x240@30:150000', '240x180@30:94665', '160x120@30:49482']);
    // 1280x720: 320x180 (libwebrtc's smallest), then 240x134 and 160x90 (floorMinPixels).
    expect(need(buildLadder(HD, 'maintain-framerate')).slice(4)).toEqual(['320x180@30:119163', '240x134@30:74758', '160x90@30:39309']);
    // A 60 fps camera: the floors at 60 fps (fps^0.4, extrapolated).
    expect(need(buildLadder({ width: 640, height: 480, fps: 60 }, 'maintain-framerate')).slice(2)).toEqual(['320x240@60:197926', '240x180@60:124911', '160x120@60:65291']);
    // A camera already at or under 320x240: floor steps from its own size; at the floor size, none.
    expect(buildLadder({ width: 320, height: 240, fps: 30 }, 'maintain-framerate').map(size)).toEqual(['320x240@30', '240x180@30', '160x120@30']);
    expect(buildLadder({ width: 160, height: 120, fps: 30 }, 'maintain-framerate').map(size)).toEqual(['160x120@30']);
    // A 15 fps camera: the floors at 15 fps (fps^0.4: 91 kbps at 320x240@10 against 139 at 30).
    expect(need(buildLadder({ width: 640, height: 480, fps: 15 }, 'maintain-framerate')).slice(2)).toEqual(['320x240@15:113679', '240x180@15:71743', '160x120@15:37500']);
    expect(floorStepBitrateBps(150_000, 320 * 240, 30)).toBe(150_000);
    expect(floorStepBitrateBps(150_000, 320 * 240, 10)).toBe(96_659);
    expect(
      buildLadder(VGA, 'maintain-framerate', { floorMinPixels: 240 * 180 })
        .map(size)
        .slice(2),
    ).toEqual(['320x240@30', '240x180@30']);
  });

  it('are off with floorBitrateBps 0, only in maintain-framerate, and bad options throw', () => {
    expect(buildLadder(VGA, 'maintain-framerate', { floorBitrateBps: 0 }).map(size)).toEqual(['640x480@30', '480x360@30', '320x240@30']);
    expect(buildLadder(VGA, 'maintain-framerate', { floorBitrateBps: 0 })[2].requiredBps).toBe(200_000);
    expect(
      buildLadder(VGA, 'maintain-framerate', { floorBitrateBps: 120_000 })
        .map((s) => s.requiredBps)
        .slice(2),
    ).toEqual([120_000, 75_732, 39_585]);
    expect(buildLadder(VGA, 'balanced').at(-1)!.width).toBe(320);
    expect(buildLadder(VGA, 'maintain-resolution').at(-1)!.width).toBe(640);
    expect(buildLadder(VGA, 'maintain-framerate-and-resolution')).toHaveLength(1);
    expect(() => buildLadder(VGA, 'maintain-framerate', { floorBitrateBps: -1 })).toThrow(RangeError);
    expect(() => buildLadder(VGA, 'maintain-framerate', { floorMinPixels: 0 })).toThrow(RangeError);
    expect(() => buildLadder(VGA, 'maintain-framerate', { floorMinPixels: 16 })).toThrow(RangeError);
    // Checked whatever the preference, so a bad option fails at construction, not at a later reconfigure.
    expect(() => new VideoAdapter(VGA, { degradationPreference: 'balanced', floorBitrateBps: Number.NaN })).toThrow(RangeError);
  });

  it('never needs more than the step before, whatever the options', () => {
    const limits = [
      { pixels: 320 * 180, minStartBps: 0, minBps: 30_000, maxBps: 300_000 },
      { pixels: 480 * 270, minStartBps: 100_000, minBps: 30_000, maxBps: 500_000 },
      { pixels: 1280 * 720, minStartBps: 900_000, minBps: 30_000, maxBps: 2_500_000 },
    ];
    for (const [src, opts] of [
      [VGA, { floorBitrateBps: 400_000 }],
      [HD, { limits }],
      [{ width: 1920, height: 1080, fps: 60 }, {}],
      [{ width: 720, height: 1280, fps: 30 }, {}],
    ] as const) {
      const l = buildLadder(src, 'maintain-framerate', opts);
      for (let i = 1; i < l.length; i++) expect(l[i].requiredBps, `${size(l[i])} after ${size(l[i - 1])}`).toBeLessThanOrEqual(l[i - 1].requiredBps);
    }
  });

  it('the adapter steps under the floor after the hold, and back one step per up hold', () => {
    const a = new VideoAdapter(VGA);
    drive(a, 0, 5, () => 1_000_000);
    // At the floor the smallest regular size stays (the engine's old 150 kbps floor).
    expect(size(drive(a, 5, 10, () => 150_000).at(-1)!)).toBe('320x240@30');
    // 110 kbps: the encoder cannot make 320x240@30 (~140 kbps); 240x180 fits.
    const low = drive(a, 15, 5, () => 110_000);
    expect(size(low.at(-1)!)).toBe('240x180@30');
    expect(low.findIndex((d) => d.changed)).toBeGreaterThanOrEqual(9); // the 1 s hold
    expect(size(drive(a, 20, 5, () => 60_000).at(-1)!)).toBe('160x120@30');
    // Never below floorMinPixels, whatever the target; the frame rate is kept.
    const bottom = drive(a, 25, 5, () => 10_000).at(-1)!;
    expect(size(bottom)).toBe('160x120@30');
    expect(bottom.reason).toBe('bandwidth');
    // The target recovers: a floor step is left after floorUpHoldUs (1 s), a regular one after upHoldUs (5 s).
    const r = drive(a, 30, 30, () => 400_000);
    const up = r.map((d, i) => ({ d, t: 30 + i / 10 })).filter((x) => x.d.changed);
    expect(up.map((x) => size(x.d))).toEqual(['240x180@30', '320x240@30', '480x360@30']);
    expect(up[0].t).toBeLessThanOrEqual(31.5);
    expect(up[1].t - up[0].t).toBeLessThanOrEqual(1.5);
    expect(up[2].t - up[1].t).toBeGreaterThanOrEqual(5);
  });

  it('a floor step is never left later than a regular one, whatever upHoldUs', () => {
    for (const upHoldUs of [0, 500_000, 5_000_000]) {
      const a = new VideoAdapter(VGA, { upHoldUs });
      drive(a, 0, 5, () => 1_000_000);
      drive(a, 5, 10, () => 110_000); // 240x180
      expect(size(a.current()), String(upHoldUs)).toBe('240x180@30');
      const r = drive(a, 15, 10, () => 200_000);
      const at = r.findIndex((d) => d.changed) / 10;
      expect(size(r.find((d) => d.changed)!)).toBe('320x240@30');
      expect(at, String(upHoldUs)).toBeLessThanOrEqual(Math.min(upHoldUs, 1_000_000) / 1e6 + 0.2);
    }
  });

  it('marks floor steps; a failed up-step from one lengthens its hold like any other', () => {
    expect(buildLadder(VGA, 'maintain-framerate').map((s) => s.floor === true)).toEqual([false, false, false, true, true]);
    const a = new VideoAdapter(VGA);
    drive(a, 0, 5, () => 1_000_000);
    drive(a, 5, 10, () => 60_000); // 160x120
    expect(size(a.current())).toBe('160x120@30');
    // The target reaches 240x180's need, then falls back as soon as it steps up: each up-step fails.
    const ups: number[] = [];
    for (let i = 0; i < 600; i++) {
      const t = 15 + i / 10;
      const at240 = a.current().width === 240;
      const d = a.update({ nowUs: Math.round(t * 1e6), targetBitrateBps: at240 ? 60_000 : 100_000 });
      if (d.changed && d.width === 240) ups.push(t);
    }
    expect(ups.length).toBeGreaterThanOrEqual(3);
    const gaps = ups.slice(1).map((x, i) => x - ups[i]);
    expect(gaps.at(-1)!).toBeGreaterThan(gaps[0] * 1.5);
  });
});

describe('VideoAdapter', () => {
  it('starts at the size the start bitrate allows (MaximumFrameSizeForBitrate-like)', () => {
    expect(size(new VideoAdapter(VGA, { degradationPreference: 'maintain-framerate' }).update({ nowUs: 0, targetBitrateBps: 1_000_000 }))).toBe('640x480@30');
    expect(size(new VideoAdapter(VGA, { degradationPreference: 'maintain-framerate' }).update({ nowUs: 0, targetBitrateBps: 400_000 }))).toBe('480x360@30');
    expect(size(new VideoAdapter(VGA, { degradationPreference: 'maintain-framerate' }).update({ nowUs: 0, targetBitrateBps: 250_000 }))).toBe('320x240@30');
    const d = new VideoAdapter(VGA, { degradationPreference: 'balanced' }).update({ nowUs: 0, targetBitrateBps: 100_000 });
    expect(size(d)).toBe('320x240@7');
    expect(d.reason).toBe('bandwidth');
    // No target yet: the unadapted source, waiting.
    expect(size(new VideoAdapter(VGA, { degradationPreference: 'balanced' }).update({ nowUs: 0, targetBitrateBps: NaN }))).toBe('640x480@30');
  });

  it('ramps up at once, skipping steps, while the estimate ramps up at the start', () => {
    const a = new VideoAdapter(VGA, { degradationPreference: 'balanced' });
    expect(size(a.update({ nowUs: 0, targetBitrateBps: 50_000 }))).toBe('320x240@7');
    const d = a.update({ nowUs: 33_000, targetBitrateBps: 1_000_000 });
    expect(d.changed).toBe(true);
    expect(size(d)).toBe('640x480@30');
    expect(d.reason).toBe('none');
  });

  it('maintain-framerate lowers only the resolution, maintain-resolution only the frame rate', () => {
    const mf = new VideoAdapter(VGA, { degradationPreference: 'maintain-framerate' });
    drive(mf, 0, 10, () => 1_500_000);
    const low = drive(mf, 10, 10, () => 150_000).at(-1)!;
    expect(size(low)).toBe('320x240@30');
    const mr = new VideoAdapter(VGA, { degradationPreference: 'maintain-resolution' });
    drive(mr, 0, 10, () => 1_500_000);
    const lowR = drive(mr, 10, 10, () => 150_000).at(-1)!;
    expect(lowR.width).toBe(640);
    expect(lowR.maxFps).toBeLessThanOrEqual(5);
    const none = new VideoAdapter(VGA, { degradationPreference: 'maintain-framerate-and-resolution' });
    drive(none, 0, 10, () => 1_500_000);
    expect(size(drive(none, 10, 10, () => 50_000).at(-1)!)).toBe('640x480@30');
  });

  it('balanced reduces the frame rate before the resolution', () => {
    const a = new VideoAdapter(VGA, { degradationPreference: 'balanced' });
    drive(a, 0, 10, () => 1_500_000);
    expect(size(drive(a, 10, 5, () => 340_000).at(-1)!)).toBe('640x480@15');
    expect(size(drive(a, 15, 5, () => 200_000).at(-1)!)).toBe('480x360@15');
  });

  it('steps down after the hold, and not on a short dip', () => {
    const a = new VideoAdapter(VGA, { degradationPreference: 'maintain-framerate' });
    drive(a, 0, 10, () => 1_000_000);
    // A 0.5 s dip: smoothed target and hold keep the size.
    const dip = drive(a, 10, 3, (t) => (t < 10.5 ? 100_000 : 1_000_000));
    expect(dip.every((d) => d.width === 640)).toBe(true);
    // A lasting drop: down within ~2 s, straight to the step the target carries.
    const drop = drive(a, 13, 3, () => 250_000);
    const first = drop.findIndex((d) => d.changed);
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(20);
    expect(size(drop[first])).toBe('320x240@30');
  });

  it('a key frame due anyway takes the step down at once, to the size the lower of target and smoothed target carries', () => {
    const a = new VideoAdapter(VGA);
    drive(a, 0, 10, () => 1_000_000);
    // The rate collapses; 0.3 s later the receiver asks for a key frame: made at the size the new rate carries,
    // but not in the floor steps (240x180 would carry 120 kbps; those follow a lasting slow link only).
    drive(a, 10, 0.3, () => 120_000);
    expect(size(a.current())).toBe('640x480@30');
    const d = a.update({ nowUs: 10_300_000, targetBitrateBps: 120_000, keyFrameDue: true });
    expect(d.changed).toBe(true);
    expect(size(d)).toBe('320x240@30');
    // At the smallest regular size a key frame goes no further; the regular rule takes the floor step after its hold.
    expect(a.update({ nowUs: 10_400_000, targetBitrateBps: 60_000, keyFrameDue: true }).changed).toBe(false);
    const later = drive(a, 10.5, 2, () => 60_000);
    expect(size(later.find((x) => x.changed)!)).toBe('160x120@30');
    // Without a key frame due the same collapse waits out the hold (1 s of the smoothed target below the need).
    const b = new VideoAdapter(VGA);
    drive(b, 0, 10, () => 1_000_000);
    const r = drive(b, 10, 3, () => 120_000);
    expect(r.findIndex((x) => x.changed)).toBeGreaterThanOrEqual(10);
    // A target that carries the current size: a key frame changes nothing.
    const c = new VideoAdapter(VGA);
    drive(c, 0, 10, () => 1_000_000);
    expect(c.update({ nowUs: 10_000_000, targetBitrateBps: 900_000, keyFrameDue: true }).changed).toBe(false);
    // keyframeDownHoldUs: the raw target must have been below that long first.
    const e = new VideoAdapter(VGA, { keyframeDownHoldUs: 500_000 });
    drive(e, 0, 10, () => 1_000_000);
    e.update({ nowUs: 10_000_000, targetBitrateBps: 120_000 });
    expect(e.update({ nowUs: 10_200_000, targetBitrateBps: 120_000, keyFrameDue: true }).changed).toBe(false);
    expect(size(e.update({ nowUs: 10_600_000, targetBitrateBps: 120_000, keyFrameDue: true }))).toBe('320x240@30');
    // balanced: to the step the rate carries when it has another size (a key frame is paid for that one).
    const g = new VideoAdapter(VGA, { degradationPreference: 'balanced' });
    drive(g, 0, 10, () => 1_000_000);
    drive(g, 10, 0.3, () => 200_000);
    expect(size(g.update({ nowUs: 10_300_000, targetBitrateBps: 200_000, keyFrameDue: true }))).toBe('480x360@15');
    // ... and not when it only lowers the frame rate (640x480@15 carries 400 kbps: no key frame needed for it).
    const h = new VideoAdapter(VGA, { degradationPreference: 'balanced' });
    drive(h, 0, 10, () => 1_000_000);
    drive(h, 10, 0.3, () => 400_000);
    expect(h.update({ nowUs: 10_300_000, targetBitrateBps: 400_000, keyFrameDue: true }).changed).toBe(false);
    // A frame-rate step costs no key frame: maintain-resolution keeps the regular rule.
    const f = new VideoAdapter(VGA, { degradationPreference: 'maintain-resolution' });
    drive(f, 0, 10, () => 1_000_000);
    drive(f, 10, 0.3, () => 120_000);
    expect(f.update({ nowUs: 10_300_000, targetBitrateBps: 120_000, keyFrameDue: true }).changed).toBe(false);
  });

  it("a key frame's step is undone quickly when the rate comes back, and a rising target never takes one", () => {
    // A short outage: the target reads the floor, the sender's outage key frame is due.
    const a = new VideoAdapter(VGA);
    drive(a, 0, 10, () => 1_000_000);
    drive(a, 10, 0.2, () => 50_000);
    expect(size(a.update({ nowUs: 10_200_000, targetBitrateBps: 50_000, keyFrameDue: true }))).toBe('320x240@30');
    // The path is back: straight back to 640x480 within ~2 s (the floor up hold plus the smoothing), not two 5 s holds.
    const back = drive(a, 10.3, 5, () => 1_000_000);
    const ups = back.map((d, i) => ({ d, t: 10.3 + i / 10 })).filter((x) => x.d.changed);
    expect(ups.map((x) => size(x.d))).toEqual(['640x480@30']);
    expect(ups[0].t).toBeLessThanOrEqual(12.5);
    // Start-up: the estimate ramps up and the adapter steps up on the raw target; a key frame due 100 ms later
    // (the smoothed target still lags below the new step) must not take the step back.
    const b = new VideoAdapter(VGA);
    b.update({ nowUs: 0, targetBitrateBps: 250_000 });
    expect(size(b.current())).toBe('320x240@30');
    const r = drive(b, 0.1, 1, () => 1_000_000);
    expect(size(r.find((d) => d.changed)!)).toBe('640x480@30');
    expect(b.update({ nowUs: 1_200_000, targetBitrateBps: 1_000_000, keyFrameDue: true }).changed).toBe(false);
    expect(size(b.current())).toBe('640x480@30');
  });

  it('a noisy target with periodic key frames does not hold the picture down', () => {
    // Noise around a level that carries 640x480 (CV 30 %), a key frame every 3 s.
    const a = new VideoAdapter(VGA);
    const rng = new Rng(7);
    let low = 0;
    for (let i = 0; i < 600; i++) {
      const t = i / 10;
      const d = a.update({ nowUs: Math.round(t * 1e6), targetBitrateBps: 800_000 * (1 + 0.3 * (rng.next() * 2 - 1) * 1.7), keyFrameDue: i % 30 === 0 });
      if (t >= 5 && d.width < 640) low++;
    }
    // At most a quarter of the time below 640x480 (a key frame on a dip costs ~1-2 s each time).
    expect(low / 550).toBeLessThan(0.25);
  });

  it('steps up one step at a time, only after the up hold, and only when the target reaches the higher step', () => {
    const a = new VideoAdapter(VGA, { degradationPreference: 'maintain-framerate' });
    drive(a, 0, 5, () => 1_000_000);
    expect(size(drive(a, 5, 5, () => 150_000).at(-1)!)).toBe('320x240@30'); // a step down ends the start-up
    // 450 kbps: enough for 480x360 (300k), not for 640x480 (500k).
    const r = drive(a, 10, 20, () => 450_000);
    const ups = r.filter((d) => d.changed);
    expect(ups.map(size)).toEqual(['480x360@30']);
    expect(r.findIndex((d) => d.changed)).toBeGreaterThanOrEqual(49); // >= 5 s
    const r2 = drive(a, 30, 20, () => 2_000_000);
    expect(r2.filter((d) => d.changed).map(size)).toEqual(['640x480@30']);
    expect(r2.at(-1)!.reason).toBe('none');
  });

  it('backs off repeated failed up-steps', () => {
    const a = new VideoAdapter(VGA, { degradationPreference: 'maintain-framerate' });
    a.update({ nowUs: 0, targetBitrateBps: 400_000 }); // 480x360
    // The target reaches 640x480's need for 6 s, then collapses as soon as it steps up: each cycle the up-step fails.
    const upTimes: number[] = [];
    let t = 0;
    let upAt: number | undefined;
    for (let i = 0; i < 1200; i++) {
      t = i / 10;
      const atTop = a.current().width === 640;
      const bps = atTop && upAt !== undefined && t - upAt > 0.5 ? 350_000 : 600_000;
      const d = a.update({ nowUs: Math.round(t * 1e6), targetBitrateBps: bps });
      if (d.changed && d.width === 640) {
        upTimes.push(t);
        upAt = t;
      }
    }
    expect(upTimes.length).toBeGreaterThanOrEqual(3);
    const gaps = upTimes.slice(1).map((x, i) => x - upTimes[i]);
    // The wait between failed up-steps grows.
    expect(gaps.at(-1)!).toBeGreaterThan(gaps[0] * 1.5);
  });

  it('does not oscillate under a noisy target around a threshold', () => {
    for (const pref of ['balanced', 'maintain-framerate', 'maintain-resolution'] as const) {
      const rng = new Rng(7);
      const a = new VideoAdapter(VGA, { degradationPreference: pref });
      // Log-normal noise (CV ~30%) around 480 kbps, right at 640x480's need (500k) and above its down threshold.
      const r = drive(a, 0, 120, () => 480_000 * Math.exp(0.3 * rng.normal() - 0.045));
      const changes = r.filter((d) => d.changed).length;
      expect(changes, pref).toBeLessThanOrEqual(6);
    }
  });

  it('stays put at both ends of the ladder', () => {
    const a = new VideoAdapter(VGA, { degradationPreference: 'balanced' });
    const top = drive(a, 0, 30, () => 50_000_000);
    expect(top.every((d) => size(d) === '640x480@30' && d.reason === 'none')).toBe(true);
    const bottom = drive(a, 30, 60, () => 10_000);
    expect(size(bottom.at(-1)!)).toBe('320x240@7');
    expect(bottom.slice(-300).every((d) => !d.changed)).toBe(true);
    // Bad targets are ignored.
    const d = a.update({ nowUs: 100e6, targetBitrateBps: -1 });
    expect(size(d)).toBe('320x240@7');
  });

  it('steps down once for encoder overuse and gives it back only on underuse', () => {
    const a = new VideoAdapter(VGA, { degradationPreference: 'maintain-framerate' });
    drive(
      a,
      0,
      5,
      () => 2_000_000,
      () => 0.3,
    );
    const over = drive(
      a,
      5,
      5,
      () => 2_000_000,
      () => 0.95,
    );
    const ch = over.filter((d) => d.changed);
    expect(ch.length).toBe(1);
    expect(ch[0].reason).toBe('cpu');
    expect(ch[0].width).toBe(480);
    // Still 0.6 usage (not underused): the step stays.
    expect(
      drive(
        a,
        10,
        20,
        () => 2_000_000,
        () => 0.6,
      ).every((d) => d.width === 480),
    ).toBe(true);
    // Underused: back up.
    expect(
      drive(
        a,
        30,
        10,
        () => 2_000_000,
        () => 0.2,
      ).at(-1)!.width,
    ).toBe(640);
  });

  it("defaults to 'maintain-framerate', as libwebrtc for camera video", () => {
    expect(new VideoAdapter(VGA).degradationPreference).toBe('maintain-framerate');
  });

  it('reconfigure changes the preference and rebuilds the ladder', () => {
    const a = new VideoAdapter(VGA, { degradationPreference: 'balanced' });
    drive(a, 0, 5, () => 300_000);
    a.reconfigure({ degradationPreference: 'maintain-framerate' });
    const d = a.update({ nowUs: 6e6, targetBitrateBps: 300_000 });
    expect(size(d)).toBe('480x360@30');
    expect(a.degradationPreference).toBe('maintain-framerate');
    expect(() => new VideoAdapter(VGA, { upHoldUs: -1 })).toThrow(RangeError);
  });
});

describe('FrameRateLimiter', () => {
  it('keeps the capped rate from a 30 fps camera and passes everything without a cap', () => {
    const l = new FrameRateLimiter();
    const count = (fps: number): number => {
      l.setMaxFps(fps);
      let kept = 0;
      for (let i = 0; i < 300; i++) if (l.keep(Math.round((i * 1e6) / 30) + (i % 3) * 500)) kept++;
      return kept;
    };
    expect(count(Infinity)).toBe(300);
    expect(count(30)).toBeGreaterThanOrEqual(295);
    expect(count(15)).toBeGreaterThanOrEqual(148);
    expect(count(15)).toBeLessThanOrEqual(152);
    expect(count(20)).toBeGreaterThanOrEqual(198);
    expect(count(20)).toBeLessThanOrEqual(202);
    expect(count(7)).toBeGreaterThanOrEqual(68);
    expect(count(7)).toBeLessThanOrEqual(72);
  });
});

describe('EncodeUsageMeter', () => {
  it('is encode time over frame interval', () => {
    const m = new EncodeUsageMeter();
    expect(m.usage()).toBeUndefined();
    for (let i = 0; i < 100; i++) m.addFrame(i * 33_333, 10_000);
    expect(m.usage()!).toBeCloseTo(0.3, 2);
    m.addFrame(NaN, 5);
    expect(m.usage()!).toBeCloseTo(0.3, 2);
    expect(() => new EncodeUsageMeter(0)).toThrow(RangeError);
  });
});
