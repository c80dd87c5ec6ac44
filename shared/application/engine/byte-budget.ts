import type { Delivery } from './engine-context.ts';

/**
 * What an answer can still carry, in bytes, and what one delivery takes of it: its message as the
 * answer encodes it (JSON escaping, base64, separators; the caller knows the encoding, the engine
 * only counts). Dispatch stops at the first delivery that does not fit, before that delivery is
 * recorded as held, so nothing is claimed that the answer cannot carry: a synchronous Lambda
 * answer carries at most 6 MB, and one over it is lost after the claim was committed
 * (docs/design/aws-limits.md).
 */
export interface ByteBudget {
  readonly bytes: number;
  /** Bytes one delivery takes of the answer. Called more than once per delivery: keep it cheap. */
  readonly costOf: (delivery: Delivery) => number;
}

/** What is left of `budget` once `deliveries` are in the answer; no budget: no limit. */
export function budgetLeft(
  budget: ByteBudget | undefined,
  deliveries: readonly Delivery[],
): ByteBudget | undefined {
  if (!budget) return undefined;
  const spent = deliveries.reduce((sum, delivery) => sum + budget.costOf(delivery), 0);
  return { bytes: budget.bytes - spent, costOf: budget.costOf };
}

/**
 * One plan's deliveries counted against a budget, in the order the plan hands them out. Not
 * persisted; a plan whose write fails is counted afresh by the next one.
 */
export class ByteTally {
  private left: number;
  private stopped = false;

  constructor(private readonly budget: ByteBudget | undefined) {
    this.left = budget?.bytes ?? Number.POSITIVE_INFINITY;
  }

  /**
   * Takes what `delivery` costs when it fits and answers true; otherwise takes nothing, marks the
   * plan full and answers false (the plan stops there: a later, smaller delivery is not taken in
   * its place, so log order and runs stay as they are).
   */
  admits(delivery: Delivery): boolean {
    if (!this.budget) return true;
    const cost = this.budget.costOf(delivery);
    if (this.stopped || cost > this.left) {
      this.stopped = true;
      return false;
    }
    this.left -= cost;
    return true;
  }

  /** A delivery did not fit: the answer is full. */
  get full(): boolean {
    return this.stopped;
  }
}
