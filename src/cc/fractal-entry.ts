/**
 * Registry entry of the `fractal` estimator (opt-in: src/strategies.ts, registered by name in src/cc/registry.ts): one
 * {@link FractalEstimator} per path, all paths of one sender coupled through
 * one {@link FractalCoupler} kept in the sender's estimator group
 * (`EstimatorOptions.group`). MPRTP (Kreith and Drozdy) §III-§IV.
 */
import { FractalEstimator } from './fractal.js';
import { FractalCoupler } from './fractal-mrcm.js';
import type { NamedEstimatorEntry } from './registry.js';

/** Key of the coupler in `EstimatorOptions.group`. */
const GROUP_KEY = 'fractal';

/** Opt-in (src/strategies.ts `fractal`). */
export const FRACTAL_ESTIMATOR_ENTRY: NamedEstimatorEntry = {
  name: 'fractal',
  summary:
    'FRACTaL per subflow + MPRTP coupling: fractional ramp-up distribution (Alg. 1), transient rate against traffic fading (Eq. 1) (Kreith & Drozdy, Multipath Rate Control for Real-Time Media)',
  create: (o) => {
    let coupler: FractalCoupler | undefined;
    if (o.group) {
      const have = o.group.get(GROUP_KEY);
      coupler = have instanceof FractalCoupler ? have : new FractalCoupler();
      o.group.set(GROUP_KEY, coupler);
    }
    return new FractalEstimator({ startBps: o.startBps, maxBps: o.maxBps }, coupler);
  },
};
