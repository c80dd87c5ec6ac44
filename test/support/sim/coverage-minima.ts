import type { SubscriptionType } from '../../../shared/domain/subscription-type.ts';
import type { Minima } from './sim-counters.ts';

/**
 * The coverage gate's minima (docs/design/delivery-proof.md, "Coverage gate"), at the default
 * crash share, each half of the least that the seeds measured gave (floored): `npm run sim` with
 * seeds 1 to 6, the unit test with seeds 20261123, 1 and 2 (`ACKLINE_SIM_SEED`). A counter a type
 * or mix cannot raise (a takeover on Shared, a cap block on Exclusive, a duplicated call without
 * the mix) has none. The rare ones (deliveries with a count of 2 or more, dead letters, crashes
 * past call 8: 0 to 18 a type in 500 schedules) are gated for the four types together only.
 */

/** The run size SIM_MINIMA are for (`npm run sim`'s default); other sizes scale them pro rata. */
export const SIM_MINIMA_RUNS = 500;

/** `npm run sim`'s minima per type, for SIM_MINIMA_RUNS schedules a type. */
export const SIM_MINIMA: Record<SubscriptionType, Minima> = {
  Shared: {
    nacksReleasing: 30,
    ackTimeoutsFired: 19,
    capBlocks: 23,
    crashes: 117,
    callsAppliedTwice: 170,
    exactCountSchedules: 90,
  },
  Key_Shared: {
    nacksReleasing: 27,
    ackTimeoutsFired: 9,
    capBlocks: 13,
    crashes: 118,
    callsAppliedTwice: 182,
    exactCountSchedules: 88,
  },
  Exclusive: {
    nacksReleasing: 21,
    ackTimeoutsFired: 18,
    replacedOwnerCalls: 7,
    crashes: 94,
    callsAppliedTwice: 172,
    exactCountSchedules: 90,
  },
  Failover: {
    nacksReleasing: 17,
    ackTimeoutsFired: 19,
    replacedOwnerCalls: 10,
    crashes: 97,
    callsAppliedTwice: 186,
    exactCountSchedules: 89,
  },
};

/** `npm run sim`'s minima for the four types together (when it runs all four), for SIM_MINIMA_RUNS schedules a type. */
export const SIM_MINIMA_ALL: Minima = {
  redeliveredTwice: 11,
  nacksReleasing: 111,
  ackTimeoutsFired: 89,
  deadLetters: 9,
  replacedOwnerCalls: 18,
  capBlocks: 36,
  crashes: 434,
  crashesPastCall8: 8,
  callsAppliedTwice: 749,
  exactCountSchedules: 368,
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

/** The consumer path's run size (`npm run sim`'s default `--path-runs`) PATH_MINIMA_ALL are for. */
export const PATH_MINIMA_RUNS = 150;

/**
 * The consumer path's minima for the four types together (`npm run sim`, PATH_MINIMA_RUNS scripts a
 * type): about half of what seed 1 gave, lower for the counters that vary most between seeds
 * (scheduler jobs, unpolled dead letters; ack timeouts fired: half the least of seeds 1 to 10, 14);
 * docs/design/delivery-proof.md, "Coverage gate".
 */
export const PATH_MINIMA_ALL: Minima = {
  redeliveredTwice: 150,
  nacksReleasing: 40,
  ackTimeoutsFired: 7,
  deadLetters: 20,
  replacedOwnerCalls: 25,
  crashes: 180,
  crashesPastCall8: 10,
  callsAppliedTwice: 200,
  exactCountSchedules: 100,
  rejectedStoreCalls: 50,
  keySharedJoins: 35,
  partitionedSchedules: 130,
  ringsLost: 700,
  ringsDuplicated: 550,
  longPollsWaited: 700,
  coldStarts: 180,
  lapsedReleased: 55,
  schedulerJobs: 200,
  deadLettersUnpolled: 8,
  nackDeadlinesMet: 400,
};
