import type { SubscriptionType } from '../../../shared/domain/subscription-type.ts';
import type { Minima } from './sim-counters.ts';

/**
 * The coverage gate's minima (docs/design/delivery-proof.md, "Coverage gate"), at the default
 * crash share, each half of the least that the seeds measured gave (floored): `npm run sim` with
 * seeds 1 to 6, the unit test with seeds 20261123, 1 and 2 (`ACKLINE_SIM_SEED`). A counter a type
 * or mix cannot raise (a takeover on Shared, a cap block on Exclusive, a duplicated call without
 * the mix) has none. Measured again after issue 21's churn scripts (sim-script.ts) and stale
 * reads of any of the last four head versions: deliveries with a count of 2 or more and dead
 * letters, rare before (0 to 18 a type in 500 schedules), are gated per type now.
 */

/** The run size SIM_MINIMA are for (`npm run sim`'s default); other sizes scale them pro rata. */
export const SIM_MINIMA_RUNS = 500;

/** `npm run sim`'s minima per type, for SIM_MINIMA_RUNS schedules a type. */
export const SIM_MINIMA: Record<SubscriptionType, Minima> = {
  Shared: {
    redeliveredTwice: 207,
    nacksReleasing: 206,
    ackTimeoutsFired: 46,
    deadLetters: 46,
    capBlocks: 64,
    crashes: 193,
    crashesPastCall8: 8,
    callsAppliedTwice: 251,
    exactCountSchedules: 74,
    staleReadsOneBehind: 192,
    staleReadsFourBehind: 137,
  },
  Key_Shared: {
    redeliveredTwice: 140,
    nacksReleasing: 209,
    ackTimeoutsFired: 30,
    deadLetters: 35,
    capBlocks: 45,
    crashes: 179,
    crashesPastCall8: 9,
    callsAppliedTwice: 250,
    exactCountSchedules: 72,
    staleReadsOneBehind: 198,
    staleReadsFourBehind: 135,
  },
  Exclusive: {
    redeliveredTwice: 133,
    nacksReleasing: 156,
    ackTimeoutsFired: 23,
    deadLetters: 18,
    replacedOwnerCalls: 3,
    crashes: 120,
    crashesPastCall8: 2,
    callsAppliedTwice: 211,
    exactCountSchedules: 78,
    staleReadsOneBehind: 158,
    staleReadsFourBehind: 126,
  },
  Failover: {
    redeliveredTwice: 130,
    nacksReleasing: 162,
    ackTimeoutsFired: 22,
    deadLetters: 15,
    replacedOwnerCalls: 6,
    crashes: 128,
    crashesPastCall8: 4,
    callsAppliedTwice: 219,
    exactCountSchedules: 69,
    staleReadsOneBehind: 177,
    staleReadsFourBehind: 139,
  },
};

/** `npm run sim`'s minima for the four types together (when it runs all four), for SIM_MINIMA_RUNS schedules a type. */
export const SIM_MINIMA_ALL: Minima = {
  redeliveredTwice: 663,
  nacksReleasing: 792,
  ackTimeoutsFired: 139,
  deadLetters: 125,
  replacedOwnerCalls: 12,
  capBlocks: 116,
  crashes: 641,
  crashesPastCall8: 27,
  callsAppliedTwice: 965,
  exactCountSchedules: 310,
  staleReadsOneBehind: 733,
  staleReadsFourBehind: 546,
};

/** The unit test's minima per type and fault mix (`npm test`'s 150 scripts a type, seed 20261123). */
export const UNIT_MINIMA: Record<SubscriptionType, Record<'plain' | 'duplicated', Minima>> = {
  Shared: {
    plain: {
      redeliveredTwice: 26,
      nacksReleasing: 29,
      ackTimeoutsFired: 6,
      deadLetters: 9,
      capBlocks: 9,
      crashes: 25,
      crashesPastCall8: 1,
      exactCountSchedules: 10,
      staleReadsOneBehind: 21,
      staleReadsFourBehind: 9,
    },
    duplicated: {
      redeliveredTwice: 21,
      nacksReleasing: 24,
      ackTimeoutsFired: 4,
      deadLetters: 4,
      capBlocks: 7,
      crashes: 27,
      callsAppliedTwice: 69,
      exactCountSchedules: 8,
      staleReadsOneBehind: 25,
      staleReadsFourBehind: 18,
    },
  },
  Key_Shared: {
    plain: {
      redeliveredTwice: 15,
      nacksReleasing: 25,
      ackTimeoutsFired: 1,
      deadLetters: 7,
      capBlocks: 6,
      crashes: 26,
      exactCountSchedules: 11,
      staleReadsOneBehind: 25,
      staleReadsFourBehind: 17,
    },
    duplicated: {
      redeliveredTwice: 17,
      nacksReleasing: 26,
      ackTimeoutsFired: 3,
      deadLetters: 3,
      capBlocks: 4,
      crashes: 24,
      crashesPastCall8: 1,
      callsAppliedTwice: 57,
      exactCountSchedules: 10,
      staleReadsOneBehind: 25,
      staleReadsFourBehind: 18,
    },
  },
  Exclusive: {
    plain: {
      redeliveredTwice: 11,
      nacksReleasing: 18,
      deadLetters: 3,
      crashes: 12,
      exactCountSchedules: 11,
      staleReadsOneBehind: 19,
      staleReadsFourBehind: 16,
    },
    duplicated: {
      redeliveredTwice: 19,
      nacksReleasing: 25,
      ackTimeoutsFired: 3,
      deadLetters: 3,
      crashes: 18,
      callsAppliedTwice: 71,
      exactCountSchedules: 12,
      staleReadsOneBehind: 22,
      staleReadsFourBehind: 21,
    },
  },
  Failover: {
    plain: {
      redeliveredTwice: 28,
      nacksReleasing: 24,
      ackTimeoutsFired: 3,
      deadLetters: 1,
      crashes: 18,
      exactCountSchedules: 6,
      staleReadsOneBehind: 27,
      staleReadsFourBehind: 18,
    },
    duplicated: {
      redeliveredTwice: 24,
      nacksReleasing: 24,
      ackTimeoutsFired: 5,
      replacedOwnerCalls: 1,
      crashes: 21,
      callsAppliedTwice: 68,
      exactCountSchedules: 7,
      staleReadsOneBehind: 20,
      staleReadsFourBehind: 15,
    },
  },
};

/** The consumer path's run size (`npm run sim`'s default `--path-runs`) PATH_MINIMA_ALL are for. */
export const PATH_MINIMA_RUNS = 150;

/**
 * The consumer path's minima for the four types together (`npm run sim`, PATH_MINIMA_RUNS scripts a
 * type): half of the least that seeds 1 to 3 gave (floored), measured with issue 21's admin side
 * (resets, skips, expiries, TTL, retention, deletions); docs/design/delivery-proof.md, "Coverage gate".
 */
export const PATH_MINIMA_ALL: Minima = {
  redeliveredTwice: 56,
  nacksReleasing: 20,
  ackTimeoutsFired: 7,
  deadLetters: 5,
  replacedOwnerCalls: 21,
  crashes: 230,
  crashesPastCall8: 21,
  callsAppliedTwice: 318,
  exactCountSchedules: 83,
  rejectedStoreCalls: 81,
  keySharedJoins: 34,
  partitionedSchedules: 140,
  ringsLost: 591,
  ringsDuplicated: 468,
  longPollsWaited: 742,
  coldStarts: 230,
  lapsedReleased: 138,
  schedulerJobs: 686,
  deadLettersUnpolled: 1,
  nackDeadlinesMet: 282,
  staleReadsOneBehind: 474,
  staleReadsFourBehind: 278,
  resetsToTimestamp: 36,
  resetsToMessageId: 15,
  resetsToEarliest: 36,
  resetsToLatest: 32,
  redeliveredAfterReset: 71,
  adminSkips: 81,
  adminExpiries: 157,
  ttlExpired: 61,
  retentionTrimmed: 81,
  subscriptionDeletes: 30,
  topicDeletes: 30,
  ownershipChecks: 715,
  capChecks: 165,
  // The Lambda consumer runner's path (consumer-path-runner.ts): seeds 1 to 3 gave 578, 562, 579
  // invocations; 34, 27, 29 non-retryable dead letters; 56, 44, 39 RetryAfterError nacks.
  runnerInvocations: 281,
  nonRetryableDeadLetters: 13,
  retryAfterNacks: 19,
};
