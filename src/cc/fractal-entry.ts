/**
 * Registry entry of the `fractal` estimator (opt-in: src/strategies.ts, registered by name in src/cc/registry.ts): one
 * {@link FractalEstimator} per path, all paths of one sender coupled through
 * one {@link FractalCoupler} kept in the sender's estimator group
 * (`EstimatorOptions.group`). MPRTP (Kreith and Drozdy) §III-§IV.
 */
import { type FractalConfig, FractalEstimator } from './fractal.js';
import { FractalCoupler } from './fractal-mrcm.js';
import type { NamedEstimatorEntry } from './registry.js';

/** Key of the coupler in `EstimatorOptions.group`. */
const GROUP_KEY = 'fractal';

const FRACTAL_SUMMARY =
  'FRACTaL per subflow + MPRTP coupling: fractional ramp-up distribution (Alg. 1), transient rate against traffic fading (Eq. 1) (Kreith & Drozdy, Multipath Rate Control for Real-Time Media)';

/**
 * A `fractal` registry entry whose estimators take `config` (e.g. the opt-in
 * {@link FractalConfig.distortionMarginMs}); startBps and maxBps come from
 * the engine. Pass it as a SenderEngine `estimator` or register it under its own name.
 */
export function fractalEstimatorEntry(config: Partial<Omit<FractalConfig, 'startBps' | 'maxBps'>> = {}, name = 'fractal'): NamedEstimatorEntry {
  return {
    name,
    summary: FRACTAL_SUMMARY,
    create: (o) => {
      let coupler: FractalCoupler | undefined;
      if (o.group) {
        const have = o.group.get(GROUP_KEY);
        coupler = have instanceof FractalCoupler ? have : new FractalCoupler();
        o.group.set(GROUP_KEY, coupler);
      }
      return new FractalEstimator({ ...config, startBps: o.startBps, maxBps: o.maxBps }, coupler);
    },
  };
}

/**
 * Opt-in (src/strategies.ts `fractal`): `DEFAULT_FRACTAL_CONFIG` (per-path fair share and
 * linked increase on; `fractalEstimatorEntry({ coupledIncrease: 'off', fairShare: false })` is the paper's sender).
 */
export const FRACTAL_ESTIMATOR_ENTRY: NamedEstimatorEntry = fractalEstimatorEntry();
