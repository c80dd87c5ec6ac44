import type { SubscriptionType } from '../../../shared/domain/subscription-type.ts';
import type { Minima } from './sim-counters.ts';

/**
 * The coverage gate's minima (docs/design/delivery-proof.md, "Coverage gate"), at the default
 * crash share, each half of the least that three seeds gave (floored): `npm run sim` with seeds
 * 1, 2 and 3, the unit test with seeds 20261123, 1 and 2 (`ACKLINE_SIM_SEED`). A counter a type
 * or mix cannot raise (a takeover on Shared, a cap block on Exclusive, a duplicated call without
 * the mix) has none.
 */

/** The run size SIM_MINIMA are for (`npm run sim`'s default); other sizes scale them pro rata. */
export const SIM_MINIMA_RUNS = 500;

/** `npm run sim`'s minima per type, for SIM_MINIMA_RUNS schedules a type. */
export const SIM_MINIMA: Record<SubscriptionType, Minima> = {
  Shared: {
    redeliveredTwice: 4,
    nacksReleasing: 36,
    ackTimeoutsFired: 30,
    deadLetters: 7,
    capBlocks: 23,
    crashes: 117,
    crashesPastCall8: 2,
    callsAppliedTwice: 170,
    exactCountSchedules: 94,
  },
  Key_Shared: {
    redeliveredTwice: 1,
    nacksReleasing: 28,
    ackTimeoutsFired: 9,
    deadLetters: 3,
    capBlocks: 13,
    crashes: 118,
    crashesPastCall8: 3,
    callsAppliedTwice: 182,
    exactCountSchedules: 91,
  },
  Exclusive: {
    redeliveredTwice: 2,
    nacksReleasing: 23,
    ackTimeoutsFired: 18,
    replacedOwnerCalls: 7,
    crashes: 94,
    crashesPastCall8: 1,
    callsAppliedTwice: 193,
    exactCountSchedules: 90,
  },
  Failover: {
    redeliveredTwice: 1,
    nacksReleasing: 25,
    ackTimeoutsFired: 19,
    deadLetters: 1,
    replacedOwnerCalls: 11,
    crashes: 101,
    crashesPastCall8: 2,
    callsAppliedTwice: 186,
    exactCountSchedules: 89,
  },
};

/** The unit test's minima per type and fault mix (`npm test`'s 150 scripts a type, seed 20261123). */
export const UNIT_MINIMA: Record<SubscriptionType, Record<'plain' | 'duplicated', Minima>> = {
  Shared: {
    plain: { nacksReleasing: 3, ackTimeoutsFired: 2, crashes: 17, exactCountSchedules: 12 },
    duplicated: {
      nacksReleasing: 5,
      ackTimeoutsFired: 1,
      capBlocks: 4,
      crashes: 14,
      callsAppliedTwice: 53,
      exactCountSchedules: 13,
    },
  },
  Key_Shared: {
    plain: { nacksReleasing: 4, crashes: 12, exactCountSchedules: 9 },
    duplicated: {
      nacksReleasing: 2,
      ackTimeoutsFired: 1,
      capBlocks: 1,
      crashes: 14,
      crashesPastCall8: 1,
      callsAppliedTwice: 43,
      exactCountSchedules: 11,
    },
  },
  Exclusive: {
    plain: { nacksReleasing: 2, ackTimeoutsFired: 1, crashes: 12, exactCountSchedules: 12 },
    duplicated: {
      nacksReleasing: 1,
      ackTimeoutsFired: 4,
      crashes: 13,
      callsAppliedTwice: 53,
      exactCountSchedules: 11,
    },
  },
  Failover: {
    plain: {
      nacksReleasing: 5,
      ackTimeoutsFired: 2,
      replacedOwnerCalls: 1,
      crashes: 11,
      exactCountSchedules: 14,
    },
    duplicated: {
      nacksReleasing: 3,
      replacedOwnerCalls: 1,
      crashes: 13,
      callsAppliedTwice: 53,
      exactCountSchedules: 12,
    },
  },
};
