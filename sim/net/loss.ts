/**
 * Random packet-loss models of the emulated link: none, Bernoulli (i.i.d.)
 * and the two-state Gilbert-Elliott Markov chain. I/O-free; randomness comes
 * from the injected seeded {@link Rng}, so a seed reproduces the same drops.
 *
 * Source: Gilbert (1960) / Elliott (1963) channel as parameterised by netem
 * (`loss gemodel p r 1-h 1-k`) and RFC 6534 §3: per packet, a Good or Bad
 * state with its own loss probability, P(Good->Bad) = pGoodToBad,
 * P(Bad->Good) = pBadToGood. Mean burst length in Bad = 1 / pBadToGood
 * packets; stationary P(Bad) = pGoodToBad / (pGoodToBad + pBadToGood).
 */
import type { Rng } from '../../src/core/rng.js';

/** Loss configuration of a link direction. */
export type LossConfig =
  | { kind: 'none' }
  | { kind: 'bernoulli'; p: number }
  | {
      kind: 'gilbertElliott';
      /** P(Good -> Bad) evaluated once per packet, in [0, 1]. */
      pGoodToBad: number;
      /** P(Bad -> Good) evaluated once per packet, in [0, 1]. */
      pBadToGood: number;
      /** Loss probability while Good (default 0). */
      lossGood?: number;
      /** Loss probability while Bad (default 1). */
      lossBad?: number;
    };

/** Decides, packet by packet, whether a packet is lost. */
export interface LossModel {
  /** True = drop this packet. Consumes randomness. */
  lose(): boolean;
}

function checkProb(what: string, p: number): void {
  if (typeof p !== 'number' || !Number.isFinite(p) || p < 0 || p > 1) {
    throw new RangeError(`loss: ${what} must be a probability in [0, 1], got ${p}`);
  }
}

/** Validate a {@link LossConfig}. @throws RangeError naming the bad field */
export function validateLoss(cfg: LossConfig): void {
  switch (cfg.kind) {
    case 'none':
      return;
    case 'bernoulli':
      checkProb('p', cfg.p);
      return;
    case 'gilbertElliott':
      checkProb('pGoodToBad', cfg.pGoodToBad);
      checkProb('pBadToGood', cfg.pBadToGood);
      checkProb('lossGood', cfg.lossGood ?? 0);
      checkProb('lossBad', cfg.lossBad ?? 1);
      return;
    default:
      throw new RangeError(`loss: unknown kind ${(cfg as { kind: unknown }).kind}`);
  }
}

/** Independent losses with probability `p`. */
export class BernoulliLoss implements LossModel {
  constructor(
    private readonly p: number,
    private readonly rng: Rng,
  ) {
    checkProb('p', p);
  }
  lose(): boolean {
    return this.p > 0 && this.rng.next() < this.p;
  }
}

/**
 * Gilbert-Elliott loss: the packet is lost with the current state's loss
 * probability, then the state moves (Good->Bad with pGoodToBad, Bad->Good
 * with pBadToGood). Starts in Good.
 */
export class GilbertElliottLoss implements LossModel {
  private bad = false;
  private readonly lossGood: number;
  private readonly lossBad: number;

  constructor(
    private readonly pGoodToBad: number,
    private readonly pBadToGood: number,
    lossGood: number | undefined,
    lossBad: number | undefined,
    private readonly rng: Rng,
  ) {
    this.lossGood = lossGood ?? 0;
    this.lossBad = lossBad ?? 1;
    validateLoss({ kind: 'gilbertElliott', pGoodToBad, pBadToGood, lossGood: this.lossGood, lossBad: this.lossBad });
  }

  /** True while in the Bad state (for tests and stats). */
  get inBadState(): boolean {
    return this.bad;
  }

  lose(): boolean {
    const p = this.bad ? this.lossBad : this.lossGood;
    const lost = p > 0 && this.rng.next() < p;
    if (this.bad) {
      if (this.rng.next() < this.pBadToGood) this.bad = false;
    } else if (this.rng.next() < this.pGoodToBad) {
      this.bad = true;
    }
    return lost;
  }
}

const NO_LOSS: LossModel = { lose: () => false };

/** Build the model for a config. @throws RangeError on an invalid config */
export function createLossModel(cfg: LossConfig | undefined, rng: Rng): LossModel {
  if (!cfg || cfg.kind === 'none') return NO_LOSS;
  validateLoss(cfg);
  if (cfg.kind === 'bernoulli') return cfg.p > 0 ? new BernoulliLoss(cfg.p, rng) : NO_LOSS;
  return new GilbertElliottLoss(cfg.pGoodToBad, cfg.pBadToGood, cfg.lossGood, cfg.lossBad, rng);
}

/** Long-run loss rate of a config (stationary for Gilbert-Elliott). */
export function meanLossRate(cfg: LossConfig): number {
  switch (cfg.kind) {
    case 'none':
      return 0;
    case 'bernoulli':
      return cfg.p;
    case 'gilbertElliott': {
      const s = cfg.pGoodToBad + cfg.pBadToGood;
      const piBad = s > 0 ? cfg.pGoodToBad / s : 0;
      return piBad * (cfg.lossBad ?? 1) + (1 - piBad) * (cfg.lossGood ?? 0);
    }
  }
}
