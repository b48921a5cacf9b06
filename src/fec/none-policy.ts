/** FEC policy that never adds FEC packets (NACK-only baseline). */
import type { PathId } from '../core/types.js';
import type { FecContext, FecMaskKind, FecPolicy } from './types.js';

export class NoneFecPolicy implements FecPolicy {
  readonly name = 'none' as const;

  /** Always 0. */
  fecCount(_ctx: FecContext, _nowUs: number): number {
    return 0;
  }

  onNack(_pathId: PathId, _count: number, _nowUs: number): void {}

  maskKind(_ctx: FecContext): FecMaskKind {
    return 'random';
  }
}
