/**
 * Frame-level jitter estimator after libwebrtc
 * modules/video_coding/timing/jitter_estimator.cc (formerly
 * modules/video_coding/jitter_estimator.cc, `VCMJitterEstimator`).
 *
 * Model: the frame delay `d` (arrival delta minus capture delta of two
 * consecutive complete frames, ms) is `d = theta0 * dL + theta1 + w`, where
 * `dL` is the frame-size difference (bytes), `theta0` the inverse channel
 * capacity (ms/byte), `theta1` a queueing offset and `w` noise. A 2-state
 * Kalman filter tracks theta; an exponential filter tracks the noise mean and
 * variance. The estimate is
 *
 *   jitter = theta0 * (maxFrameSize - avgFrameSize) + max(1, 2.33 * sigma_noise - 30) + 10   (ms)
 *
 * (libwebrtc `CalculateEstimate()` + `NoiseThreshold()` + OPERATING_SYSTEM_JITTER).
 *
 * Documented simplifications versus libwebrtc: no NACK/RTT term (the frame
 * buffer adds RTT itself), no frame-rate scaling of the noise filter's alpha
 * and no low-fps attenuation (update() has no clock), no incomplete-frame
 * path. Constants are libwebrtc's: phi 0.97, psi 0.9999, alphaCountMax 400,
 * thetaLow 1e-6, 15 sigma delay outliers, 3 sigma frame-size outliers,
 * noise 2.33 sigma minus 30 ms, 5 startup frame-size samples, 30 startup
 * delay samples.
 */

/** Options of {@link JitterEstimator}; defaults are libwebrtc's. */
export interface JitterEstimatorOptions {
  /** Noise standard deviations in the estimate (default 2.33). */
  noiseStdDevs?: number;
  /** Subtracted from the noise term, ms (default 30). */
  noiseStdDevOffsetMs?: number;
  /** Constant added for OS scheduling jitter, ms (default 10). */
  osJitterMs?: number;
  /** Upper bound of the estimate, ms (default 10000). */
  maxJitterMs?: number;
}

/** Internals, for plots and tests. */
export interface JitterEstimatorStats {
  samples: number;
  /** Samples rejected as non-finite / non-positive size. */
  invalid: number;
  /** ms per byte. */
  theta0: number;
  /** ms. */
  theta1: number;
  avgFrameSizeBytes: number;
  maxFrameSizeBytes: number;
  /** Noise mean (ms) and variance (ms^2). */
  avgNoiseMs: number;
  varNoiseMs2: number;
  jitterMs: number;
}

const PHI = 0.97;
const PSI = 0.9999;
const ALPHA_COUNT_MAX = 400;
const THETA_LOW = 1e-6;
const DELAY_OUTLIER_SIGMAS = 15;
const SIZE_OUTLIER_SIGMAS = 3;
const FS_STARTUP_SAMPLES = 5;
const STARTUP_DELAY_SAMPLES = 30;

/**
 * Kalman-filter jitter estimator. Feed it one sample per complete frame with
 * {@link update} (or let {@link updateFromFrame} compute the frame delay), read
 * {@link jitterMs}. O(1) per frame, no allocation.
 */
export class JitterEstimator {
  private readonly noiseStdDevs: number;
  private readonly noiseOffsetMs: number;
  private readonly osJitterMs: number;
  private readonly maxJitterMs: number;

  private theta0 = 0;
  private theta1 = 0;
  private c00 = 0;
  private c01 = 0;
  private c10 = 0;
  private c11 = 0;
  private avgFrameSize = 500;
  private varFrameSize = 100;
  private maxFrameSize = 500;
  private fsSum = 0;
  private fsCount = 0;
  private prevFrameSize = 0;
  private avgNoise = 0;
  private varNoise = 4;
  private alphaCount = 1;
  private prevEstimate = -1;
  private filtered = 0;
  private startupCount = 0;
  private samples = 0;
  private invalid = 0;
  // updateFromFrame() state.
  private prevCaptureUs: number | undefined = undefined;
  private prevArrivalUs = 0;

  /** @throws RangeError when an option is negative or not finite. */
  constructor(opts: JitterEstimatorOptions = {}) {
    this.noiseStdDevs = nonNeg(opts.noiseStdDevs ?? 2.33, 'noiseStdDevs');
    this.noiseOffsetMs = nonNeg(opts.noiseStdDevOffsetMs ?? 30, 'noiseStdDevOffsetMs');
    this.osJitterMs = nonNeg(opts.osJitterMs ?? 10, 'osJitterMs');
    this.maxJitterMs = nonNeg(opts.maxJitterMs ?? 10_000, 'maxJitterMs');
    this.reset();
  }

  /** Forget everything (e.g. after a long pause or a stream restart). */
  reset(): void {
    this.theta0 = 1 / (512e3 / 8);
    this.theta1 = 0;
    this.c00 = 1e-4;
    this.c01 = 0;
    this.c10 = 0;
    this.c11 = 1e2;
    this.avgFrameSize = 500;
    this.varFrameSize = 100;
    this.maxFrameSize = 500;
    this.fsSum = 0;
    this.fsCount = 0;
    this.prevFrameSize = 0;
    this.avgNoise = 0;
    this.varNoise = 4;
    this.alphaCount = 1;
    this.prevEstimate = -1;
    this.filtered = 0;
    this.startupCount = 0;
    this.prevCaptureUs = undefined;
  }

  /**
   * Add one sample.
   * @param frameDelayMs (arrival delta) - (capture delta) between this frame and
   *   the previous complete frame, ms; positive when this frame came later
   *   than its capture spacing predicts.
   * @param frameSizeBytes size of this frame (bytes, > 0).
   * Non-finite input or a size <= 0 is ignored and counted.
   */
  update(frameDelayMs: number, frameSizeBytes: number): void {
    if (!Number.isFinite(frameDelayMs) || !Number.isFinite(frameSizeBytes) || frameSizeBytes <= 0) {
      this.invalid++;
      return;
    }
    this.samples++;
    const deltaFs = frameSizeBytes - this.prevFrameSize;
    if (this.fsCount < FS_STARTUP_SAMPLES) {
      this.fsSum += frameSizeBytes;
      this.fsCount++;
    } else if (this.fsCount === FS_STARTUP_SAMPLES) {
      this.avgFrameSize = this.fsSum / this.fsCount;
      this.fsCount++;
    }
    // Frame-size statistics; key frames (large outliers) do not move the average.
    const avg = PHI * this.avgFrameSize + (1 - PHI) * frameSizeBytes;
    if (frameSizeBytes < this.avgFrameSize + 2 * Math.sqrt(this.varFrameSize)) this.avgFrameSize = avg;
    const dev = frameSizeBytes - avg;
    this.varFrameSize = Math.max(PHI * this.varFrameSize + (1 - PHI) * dev * dev, 1);
    this.maxFrameSize = Math.max(PSI * this.maxFrameSize, frameSizeBytes);

    const deviation = frameDelayMs - (this.theta0 * deltaFs + this.theta1);
    const sigmaNoise = Math.sqrt(this.varNoise);
    if (Math.abs(deviation) < DELAY_OUTLIER_SIGMAS * sigmaNoise || frameSizeBytes > this.avgFrameSize + SIZE_OUTLIER_SIGMAS * Math.sqrt(this.varFrameSize)) {
      this.estimateNoise(deviation);
      // Skip frames that arrive right behind a much larger (key) frame.
      if (deltaFs > -0.25 * this.maxFrameSize) this.kalman(frameDelayMs, deltaFs);
    } else {
      this.estimateNoise((deviation >= 0 ? DELAY_OUTLIER_SIGMAS : -DELAY_OUTLIER_SIGMAS) * sigmaNoise);
    }
    if (this.startupCount >= STARTUP_DELAY_SAMPLES) this.filtered = this.calculate();
    else this.startupCount++;
    this.prevFrameSize = frameSizeBytes;
  }

  /**
   * Convenience: compute the frame delay from consecutive complete frames and
   * call {@link update}. Frames whose capture time is not after the previous
   * one (reordered) are skipped; a capture gap over 10 s resets the reference.
   * @param captureUs capture time (sender clock, µs).
   * @param arrivalUs completion time (receiver clock, µs).
   * @param frameSizeBytes encoded size (bytes).
   */
  updateFromFrame(captureUs: number, arrivalUs: number, frameSizeBytes: number): void {
    if (!Number.isFinite(captureUs) || !Number.isFinite(arrivalUs)) {
      this.invalid++;
      return;
    }
    const prev = this.prevCaptureUs;
    if (prev !== undefined && captureUs <= prev) return;
    this.prevCaptureUs = captureUs;
    const prevArrival = this.prevArrivalUs;
    this.prevArrivalUs = arrivalUs;
    if (prev === undefined || captureUs - prev > 10_000_000) return;
    this.update((arrivalUs - prevArrival - (captureUs - prev)) / 1000, frameSizeBytes);
  }

  /**
   * Current jitter estimate (ms, >= 0; 0 before any sample). It is the
   * delay a frame buffer should add on top of the mean path delay so that
   * most frames are complete when due.
   */
  jitterMs(): number {
    if (this.samples === 0) return 0;
    let j = this.calculate() + this.osJitterMs;
    if (this.filtered > j) j = this.filtered;
    return Math.min(Math.max(j, 0), this.maxJitterMs);
  }

  /** Internal state (a copy). */
  stats(): JitterEstimatorStats {
    return {
      samples: this.samples,
      invalid: this.invalid,
      theta0: this.theta0,
      theta1: this.theta1,
      avgFrameSizeBytes: this.avgFrameSize,
      maxFrameSizeBytes: this.maxFrameSize,
      avgNoiseMs: this.avgNoise,
      varNoiseMs2: this.varNoise,
      jitterMs: this.jitterMs(),
    };
  }

  private calculate(): number {
    let noise = this.noiseStdDevs * Math.sqrt(this.varNoise) - this.noiseOffsetMs;
    if (noise < 1) noise = 1;
    let ret = this.theta0 * (this.maxFrameSize - this.avgFrameSize) + noise;
    if (ret < 1) ret = this.prevEstimate <= 0.01 ? 1 : this.prevEstimate;
    if (ret > this.maxJitterMs) ret = this.maxJitterMs;
    this.prevEstimate = ret;
    return ret;
  }

  /** libwebrtc `EstimateRandomJitter`: exponential mean/variance of the residual. */
  private estimateNoise(d: number): void {
    const alpha = (this.alphaCount - 1) / this.alphaCount;
    if (this.alphaCount < ALPHA_COUNT_MAX) this.alphaCount++;
    const avg = alpha * this.avgNoise + (1 - alpha) * d;
    const v = alpha * this.varNoise + (1 - alpha) * (d - this.avgNoise) * (d - this.avgNoise);
    this.avgNoise = avg;
    this.varNoise = v < 1 ? 1 : v;
  }

  /** libwebrtc `KalmanEstimateChannel`: h = [deltaFs, 1], measurement = frame delay. */
  private kalman(frameDelayMs: number, deltaFs: number): void {
    // Predict: M = M + Q.
    this.c00 += 2.5e-10;
    this.c11 += 1e-10;
    if (this.maxFrameSize < 1) return;
    const mh0 = this.c00 * deltaFs + this.c01;
    const mh1 = this.c10 * deltaFs + this.c11;
    // Small size changes are noisy measurements of theta0.
    let sigma = (300 * Math.exp(-Math.abs(deltaFs) / this.maxFrameSize) + 1) * Math.sqrt(this.varNoise);
    if (sigma < 1) sigma = 1;
    const hmh = deltaFs * mh0 + mh1 + sigma;
    if (Math.abs(hmh) < 1e-9) return;
    const k0 = mh0 / hmh;
    const k1 = mh1 / hmh;
    const res = frameDelayMs - (deltaFs * this.theta0 + this.theta1);
    this.theta0 += k0 * res;
    this.theta1 += k1 * res;
    if (this.theta0 < THETA_LOW) this.theta0 = THETA_LOW;
    const t00 = this.c00;
    const t01 = this.c01;
    this.c00 = (1 - k0 * deltaFs) * t00 - k0 * this.c10;
    this.c01 = (1 - k0 * deltaFs) * t01 - k0 * this.c11;
    this.c10 = this.c10 * (1 - k1) - k1 * deltaFs * t00;
    this.c11 = this.c11 * (1 - k1) - k1 * deltaFs * t01;
  }
}

function nonNeg(v: number, name: string): number {
  if (!Number.isFinite(v) || v < 0) throw new RangeError(`JitterEstimator: ${name} must be a finite number >= 0, got ${v}`);
  return v;
}
