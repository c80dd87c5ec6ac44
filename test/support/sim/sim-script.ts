import fc from 'fast-check';
import type { SubscriptionType } from '../../../shared/domain/subscription-type.ts';
import { STALE_VERSIONS } from '../in-memory-dispatch-store.ts';
import type { CrashPlan } from './scheduled-ports.ts';

/**
 * The simulation's scripts: what its publishers, consumers, admins and maintenance do, round by
 * round, with the faults each action carries (crash plans), drawn by fast-check.
 */

export const LEASE_MS = 60_000;
export const NACK_DELAY_MS = 3_000;
export const ACK_TIMEOUT_MS = 20_000;
/** I7's bound on the head item: a few write units at most, whatever the backlog or the consumers. */
export const MAX_HEAD_BYTES = 1_600;

export type SimAction =
  | {
      readonly kind: 'publish';
      readonly count: number;
      readonly keys: number;
      readonly delayMs: number;
      readonly crash: boolean;
    }
  | {
      readonly kind: 'receive';
      readonly consumer: number;
      readonly max: number;
      readonly crash?: CrashPlan;
      /** A consumer that fails to process what it gets (churn scripts): it nacks all of it at once. */
      readonly thenNack?: boolean;
    }
  | {
      readonly kind: 'ack';
      readonly consumer: number;
      readonly pick: number;
      readonly byId: boolean;
      readonly crash?: CrashPlan;
    }
  | { readonly kind: 'nack'; readonly consumer: number; readonly pick: number; readonly crash?: CrashPlan }
  | { readonly kind: 'cumulativeAck'; readonly consumer: number; readonly crash?: CrashPlan }
  | { readonly kind: 'redeliver'; readonly consumer: number; readonly crash?: CrashPlan }
  | { readonly kind: 'close'; readonly consumer: number; readonly crash?: CrashPlan }
  | { readonly kind: 'adminAck'; readonly pick: number; readonly crash?: CrashPlan }
  /** The admin's reset-cursor to a published entry (backwards or forwards). */
  | { readonly kind: 'resetCursor'; readonly pick: number; readonly crash?: CrashPlan }
  /** The admin's skip_all (clear-backlog). */
  | { readonly kind: 'skipAll'; readonly crash?: CrashPlan }
  /** The admin's expireMessages (or message TTL): mark-delete forward to before a published entry. */
  | { readonly kind: 'expire'; readonly pick: number; readonly crash?: CrashPlan }
  | { readonly kind: 'maintenance'; readonly crash?: CrashPlan };

export type ActionOf<K extends SimAction['kind']> = Extract<SimAction, { readonly kind: K }>;

export interface SimRound {
  readonly actions: readonly SimAction[];
  readonly advanceMs: number;
}

export interface SimScript {
  readonly type: SubscriptionType;
  readonly consumers: number;
  readonly ledgerSize: number;
  readonly ackTimeout: boolean;
  readonly initial: number;
  readonly staleSeed: number;
  /**
   * A stale read of the head answers any of its last `staleVersions` versions (drawn per read; the
   * ledger's, a replica half a second behind a version); absent: always three versions (one
   * second), as every read did before issue 21 (the hand-written scripts keep that).
   */
  readonly staleVersions?: number;
  readonly duplicateCalls: boolean;
  /** The subscription's unacknowledged cap (small ones make dispatch pause and fold inline). */
  readonly maxUnacked: number;
  /** Each consumer's cap (small ones block consumers until their acks are counted). */
  readonly maxUnackedPerConsumer: number;
  /** Every consumer's dead-letter policy's maxRedeliverCount (none: no dead-letter policy). */
  readonly deadLetter?: number;
  /** A churn script (CHURN_WEIGHTS): the same few messages received and nacked or given back again and again. */
  readonly churn?: boolean;
  readonly rounds: readonly SimRound[];
}

/**
 * A deliberately broken port, for the tests that show the simulation catches each invariant's
 * violation: each one breaks exactly what one invariant rests on.
 */
export type Mutation =
  /** I1: an ack by id ahead of dispatch does not raise the head's early-ack mark. */
  | 'noAheadAck'
  /** I2: tracker entries are lost (nothing is ever redelivered through the tracker). */
  | 'dropTracker'
  /** I3/I4: the head's compare-and-set applies whatever the version (lost updates). */
  | 'blindHeadWrites'
  /** I5: released runs and tracker entries are stored due one minute early. */
  | 'earlyRelease'
  /** I6: an owner's lease always reads as lapsed (anyone takes over at any time). */
  | 'noFencing'
  /** I7: the head's run bound is misconfigured (spills never happen). */
  | 'noSpill'
  /** I2: a compare-and-set retried after a timeout is refused for its own write (the engine takes its claim for lost). */
  | 'casRetryLost'
  /** Dead letters: a dead-letter step's claim applies whatever the version (every racer wins it). */
  | 'blindDeadLetterClaims'
  // The consumer path's (consumer-path-admin.ts), each a deliberately broken use case:
  /** Message TTL: maintenance never enforces the namespace's policies (nothing expires). */
  | 'noTtlEnforcement'
  /** Retention: the ledger's trim deletes past the slowest subscription's mark-delete. */
  | 'trimUnconsumed'
  /** Deletion: a subscription's or topic's deletion answers without deleting anything. */
  | 'noDeletion'
  /** I7: the containers ignore the consumers' cap (they run with 50,000 whatever the script's). */
  | 'noConsumerCap'
  /** Issue 24: the Lambda runner treats a non-retryable failure as a normal nack (consumer-path-runner.ts). */
  | 'nonRetryableAsNack';

/** The share of actions that carry a crash plan by default (issue 21: about one in six). */
export const DEFAULT_CRASH_SHARE = 1 / 6;
/** The highest call index a crash plan names: past the longest invocations' calls (a receive's 50 in 8,000 schedules). */
export const MAX_CRASH_CALL = 64;

/**
 * A crash plan on `share` of the actions, at any call of the invocation: half of them at one of
 * its first 9 calls (where every action has calls), half anywhere up to MAX_CRASH_CALL.
 */
function crashArb(share: number): fc.Arbitrary<CrashPlan | undefined> {
  const plan = fc.record({
    atCall: fc.oneof(fc.nat({ max: 8 }), fc.integer({ min: 0, max: MAX_CRASH_CALL })),
    applied: fc.boolean(),
  });
  if (share <= 0) return fc.constant(undefined);
  if (share >= 1) return plan;
  const steps = 1_000;
  return fc
    .tuple(fc.integer({ min: 0, max: steps - 1 }), plan)
    .map(([draw, crash]) => (draw < Math.round(share * steps) ? crash : undefined));
}

/**
 * A churn script's weights (issue 21: deliveries with a count of 2 or more were 141 of 93,096): its
 * consumers receive and nack or give back the same few messages again and again, and acknowledge
 * little, so redeliveries reach counts of 2 and more (and dead letters, with a policy).
 */
const CHURN_WEIGHTS: Partial<Record<SimAction['kind'], number>> = {
  publish: 1,
  receive: 6,
  ack: 1,
  nack: 2,
  redeliver: 2,
  maintenance: 1,
};

/** A churn round: its receives of an odd `max` nack what they got at once. */
function nackingHalf(round: SimRound): SimRound {
  return {
    ...round,
    actions: round.actions.map((action) =>
      action.kind === 'receive' && action.max % 2 === 1 ? { ...action, thenNack: true } : action,
    ),
  };
}

function actionArb(
  consumers: number,
  kinds: readonly SimAction['kind'][] | undefined,
  options: { readonly crashShare: number; readonly churn: boolean },
): fc.Arbitrary<SimAction> {
  const consumer = fc.nat({ max: consumers - 1 });
  return fc.oneof(
    ...allActions(consumer, crashArb(options.crashShare))
      .filter((weighted) => !kinds || kinds.includes(weighted.kind))
      .map((weighted) =>
        options.churn ? { ...weighted, weight: CHURN_WEIGHTS[weighted.kind] ?? 0 } : weighted,
      )
      .filter((weighted) => weighted.weight > 0),
  );
}

function allActions(
  consumer: fc.Arbitrary<number>,
  crash: fc.Arbitrary<CrashPlan | undefined>,
): (fc.WeightedArbitrary<SimAction> & { readonly kind: SimAction['kind'] })[] {
  return [
    {
      kind: 'publish',
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('publish' as const),
        count: fc.integer({ min: 1, max: 6 }),
        keys: fc.integer({ min: 1, max: 4 }),
        delayMs: fc.constantFrom(0, 0, 0, 5_000),
        crash: fc.constantFrom(false, false, false, true),
      }),
    },
    {
      kind: 'receive',
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant('receive' as const),
        consumer,
        max: fc.integer({ min: 1, max: 8 }),
        crash,
      }),
    },
    {
      kind: 'ack',
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('ack' as const),
        consumer,
        pick: fc.nat(),
        byId: fc.boolean(),
        crash,
      }),
    },
    {
      kind: 'nack',
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant('nack' as const), consumer, pick: fc.nat(), crash }),
    },
    {
      kind: 'cumulativeAck',
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('cumulativeAck' as const), consumer, crash }),
    },
    {
      kind: 'redeliver',
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('redeliver' as const), consumer, crash }),
    },
    {
      kind: 'close',
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('close' as const), consumer, crash }),
    },
    {
      kind: 'adminAck',
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('adminAck' as const), pick: fc.nat(), crash }),
    },
    {
      kind: 'maintenance',
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('maintenance' as const), crash }),
    },
    {
      kind: 'resetCursor',
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('resetCursor' as const), pick: fc.nat(), crash }),
    },
    {
      kind: 'skipAll',
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('skipAll' as const), crash }),
    },
    {
      kind: 'expire',
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('expire' as const), pick: fc.nat(), crash }),
    },
  ];
}

/** Random scripts of the given subscription types, with every action kind or only `kinds`. */
export function scriptArb(
  types: readonly SubscriptionType[] = ['Shared', 'Key_Shared', 'Exclusive', 'Failover'],
  kinds?: readonly SimAction['kind'][],
  crashShare = DEFAULT_CRASH_SHARE,
): fc.Arbitrary<SimScript> {
  return fc
    .record({
      type: fc.constantFrom(...types),
      consumers: fc.integer({ min: 1, max: 3 }),
      ledgerSize: fc.constantFrom(5, 40, 250),
      ackTimeout: fc.boolean(),
      initial: fc.nat({ max: 30 }),
      staleSeed: fc.nat(),
      staleVersions: fc.constant(STALE_VERSIONS),
      duplicateCalls: fc.boolean(),
      maxUnacked: fc.constantFrom(3, 8, 200_000),
      maxUnackedPerConsumer: fc.constantFrom(2, 5, 50_000),
      deadLetter: fc.constantFrom(undefined, undefined, 1, 2),
      /** One script in four churns (CHURN_WEIGHTS) over a small backlog, unless `kinds` leaves it too little to do. */
      churn: fc.nat({ max: 3 }).map((draw) => draw === 0),
    })
    .chain(({ churn: drawn, ...base }) => {
      const churn = drawn && (!kinds || kinds.includes('nack'));
      return fc
        .array(
          fc.record({
            actions: fc.array(actionArb(base.consumers, kinds, { crashShare, churn }), {
              minLength: 1,
              maxLength: 4,
            }),
            advanceMs: churn
              ? fc.constantFrom(0, 3_000, 3_000, 3_000, 20_000)
              : fc.constantFrom(0, 500, 1_000, 3_000, 20_000, 61_000),
          }),
          churn ? { minLength: 6, maxLength: 14 } : { minLength: 1, maxLength: 14 },
        )
        .map((drawn) => ({ ...base, rounds: churn ? drawn.map(nackingHalf) : drawn }))
        .map(({ rounds, ...base }) => ({
          ...base,
          // A policy of 1 would end every churn at count 1: 3 lets counts reach 2 and 3 first.
          ...(churn
            ? { churn, initial: 1 + (base.initial % 6), ...(base.deadLetter === 1 ? { deadLetter: 3 } : {}) }
            : {}),
          rounds,
        }));
    });
}
