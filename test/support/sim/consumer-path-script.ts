import fc from 'fast-check';
import type { SubscriptionType } from '../../../shared/domain/subscription-type.ts';
import type { CrashPlan } from './scheduled-ports.ts';
import { DEFAULT_CRASH_SHARE, MAX_CRASH_CALL } from './sim-script.ts';

/**
 * The scripts of the consumer-path simulation (consumer-path-simulation.ts): what producers,
 * consumers (through the use cases of shared/application/consumers/), the scheduler and
 * maintenance do, round by round, in which warm container each call runs, and the faults each
 * carries.
 */

/** Where a call runs: the index of a warm container (taken modulo the script's containers). */
interface Placed {
  readonly container: number;
  readonly crash?: CrashPlan;
}

export type PathAction =
  | (Placed & {
      readonly kind: 'publish';
      readonly count: number;
      readonly keys: number;
      readonly delayMs: number;
    })
  | (Placed & {
      readonly kind: 'receive';
      readonly consumer: number;
      readonly max: number;
      readonly waitMs: number;
    })
  | (Placed & {
      readonly kind: 'ack';
      readonly consumer: number;
      readonly pick: number;
      readonly byId: boolean;
    })
  | (Placed & {
      readonly kind: 'nack';
      readonly consumer: number;
      readonly pick: number;
      /** The nack's own delay (the SDK's `negativeAcknowledge(message, { delayMs })`); none: the policy's. */
      readonly delayMs?: number | undefined;
    })
  | (Placed & { readonly kind: 'cumulativeAck'; readonly consumer: number })
  | (Placed & { readonly kind: 'redeliver'; readonly consumer: number })
  | (Placed & { readonly kind: 'close'; readonly consumer: number })
  | (Placed & { readonly kind: 'heartbeat'; readonly consumer: number })
  /** A new consumer subscribes (Key_Shared: a member joins), any time. */
  | (Placed & { readonly kind: 'join' })
  /** The Lambda consumer runner's step (consumer-path-runner.ts; Shared and Key_Shared): the function's answers seeded by `seed`. */
  | (Placed & { readonly kind: 'runner'; readonly seed: number })
  /** The scheduler's delay queue delivers what is due (releases, dead-letter timers, rings). */
  | (Placed & { readonly kind: 'scheduler' })
  | (Placed & { readonly kind: 'maintenance' })
  /** An operator moves a published message's due time (topics reschedule; see consumer-path-reschedule.ts). */
  | (Placed & {
      readonly kind: 'reschedule';
      readonly pick: number;
      readonly delayMs: number;
      readonly earlier: boolean;
    })
  /** The admin's reset-cursor: to a publish time, a MessageId (of a message published), earliest or latest. */
  | (Placed & {
      readonly kind: 'reset';
      readonly to: 'timestamp' | 'messageId' | 'earliest' | 'latest';
      readonly pick: number;
    })
  /** The admin's skip: of the first messages of a partition's backlog, or of messages by id. */
  | (Placed & { readonly kind: 'skip'; readonly pick: number; readonly byIds: boolean })
  /** The admin's expireMessages (0 expires nothing). */
  | (Placed & { readonly kind: 'expire'; readonly seconds: number })
  /** The admin deletes the subscription or the topic (forced: consumers connected), in the last round. */
  | (Placed & { readonly kind: 'delete'; readonly what: 'subscription' | 'topic' });

export type PathActionOf<K extends PathAction['kind']> = Extract<PathAction, { readonly kind: K }>;

export interface PathRound {
  readonly actions: readonly PathAction[];
  readonly advanceMs: number;
}

/** A backoff as a consumer's policy takes it: a fixed delay, or Pulsar's MultiplierRedeliveryBackoff. */
export interface MultiplierBackoff {
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  readonly multiplier: number;
  /** Only ever adds delay: up to this share of the delay more (issue 24). */
  readonly jitter?: number;
}
export type PathBackoff = { readonly fixedMs: number } | MultiplierBackoff;

export interface PathScript {
  readonly type: SubscriptionType;
  /** 0: a non-partitioned topic; 2 or 3: a partitioned one. */
  readonly partitions: number;
  /** Consumers subscribed before the first round (more join with `join`). */
  readonly consumers: number;
  /** Warm containers (Lambda execution environments), each with its caches and ContainerHints. */
  readonly containers: number;
  readonly leaseMs: number;
  /** 0: no ack timeout. */
  readonly ackTimeoutMs: number;
  /** The ack timeout's redelivery backoff (PIP-130), count-dependent; none: the timeout alone. */
  readonly ackTimeoutBackoff?: MultiplierBackoff;
  readonly nackBackoff: PathBackoff;
  /** The dead-letter policy's maxRedeliverCount (none: no policy). */
  readonly deadLetter?: number;
  /** The subscription's and each consumer's caps of unacknowledged entries. */
  readonly maxUnacked: number;
  readonly maxUnackedPerConsumer: number;
  /** Seeds the fake SQS's misbehaviours, the stale reads and the call faults. */
  readonly seed: number;
  /** Whether store calls may be throttled (SDK retries, then rejected), retried after a timeout, or applied again later. */
  readonly callFaults: boolean;
  /** The largest clock skew between two invocations (each invocation's clock is ahead by 0 to this). */
  readonly skewMs: number;
  /** The namespace's message TTL (maintenance expires what is older), if any. */
  readonly ttlSeconds?: number;
  /** The namespace's retention (maintenance trims what every subscription consumed and it lets go), if any. */
  readonly retention?: { readonly retentionTimeInMinutes: number; readonly retentionSizeInMB: number };
  /** What the last round deletes (a `delete` action among its actions), if anything. */
  readonly deletion?: 'subscription' | 'topic';
  readonly rounds: readonly PathRound[];
}

function crashArb(share: number): fc.Arbitrary<CrashPlan | undefined> {
  const plan = fc.record({
    atCall: fc.oneof(fc.nat({ max: 8 }), fc.integer({ min: 0, max: MAX_CRASH_CALL })),
    applied: fc.boolean(),
  });
  if (share <= 0) return fc.constant(undefined);
  return fc
    .tuple(fc.integer({ min: 0, max: 999 }), plan)
    .map(([draw, crash]) => (draw < Math.round(share * 1_000) ? crash : undefined));
}

function pathActionArb(crashShare: number): fc.Arbitrary<PathAction> {
  const placed = { container: fc.nat({ max: 2 }), crash: crashArb(crashShare) };
  const consumer = fc.nat({ max: 4 });
  const of = <K extends PathAction['kind']>(kind: K, fields: Record<string, fc.Arbitrary<unknown>>) =>
    fc.record({ kind: fc.constant(kind), ...placed, ...fields }) as unknown as fc.Arbitrary<PathAction>;
  return fc.oneof(
    {
      weight: 3,
      arbitrary: of('publish', {
        count: fc.integer({ min: 1, max: 5 }),
        keys: fc.integer({ min: 1, max: 4 }),
        delayMs: fc.constantFrom(0, 0, 0, 1_500, 5_000),
      }),
    },
    {
      weight: 5,
      arbitrary: of('receive', {
        consumer,
        max: fc.integer({ min: 1, max: 6 }),
        waitMs: fc.constantFrom(0, 0, 1_000, 3_000, 20_000),
      }),
    },
    { weight: 3, arbitrary: of('ack', { consumer, pick: fc.nat(), byId: fc.boolean() }) },
    {
      weight: 2,
      arbitrary: of('nack', {
        consumer,
        pick: fc.nat(),
        delayMs: fc.constantFrom(undefined, undefined, undefined, 0, 2_000),
      }),
    },
    { weight: 1, arbitrary: of('cumulativeAck', { consumer }) },
    { weight: 1, arbitrary: of('redeliver', { consumer }) },
    { weight: 1, arbitrary: of('close', { consumer }) },
    { weight: 1, arbitrary: of('heartbeat', { consumer }) },
    { weight: 1, arbitrary: of('join', {}) },
    { weight: 2, arbitrary: of('scheduler', {}) },
    { weight: 1, arbitrary: of('maintenance', {}) },
    {
      weight: 2,
      arbitrary: of('reschedule', {
        pick: fc.nat(),
        delayMs: fc.constantFrom(1_000, 4_000, 9_000),
        earlier: fc.boolean(),
      }),
    },
    {
      weight: 1,
      arbitrary: of('reset', {
        to: fc.constantFrom('timestamp', 'messageId', 'earliest', 'latest'),
        pick: fc.nat(),
      }),
    },
    { weight: 1, arbitrary: of('skip', { pick: fc.nat(), byIds: fc.boolean() }) },
    { weight: 1, arbitrary: of('expire', { seconds: fc.constantFrom(0, 5, 30) }) },
  );
}

const backoffArb: fc.Arbitrary<PathBackoff> = fc.oneof(
  fc.record({ fixedMs: fc.constantFrom(0, 1_000, 3_000) }),
  fc.record({
    minDelayMs: fc.constantFrom(500, 1_000),
    maxDelayMs: fc.constantFrom(4_000, 10_000),
    multiplier: fc.constantFrom(2, 3),
    jitter: fc.constantFrom(0, 0, 0.5),
  }),
);

/** `rounds` with the deletion, if any, among the last round's actions. */
function withDeletion(rounds: PathRound[], what: 'subscription' | 'topic' | undefined): PathRound[] {
  const last = rounds.at(-1);
  if (!what || !last) return rounds;
  const deletion: PathAction = { kind: 'delete', what, container: 0 };
  return [...rounds.slice(0, -1), { ...last, actions: [...last.actions, deletion] }];
}

/** Random scripts of the consumer path for the given subscription types. */
export function pathScriptArb(
  types: readonly SubscriptionType[] = ['Shared', 'Key_Shared', 'Exclusive', 'Failover'],
  crashShare = DEFAULT_CRASH_SHARE,
  /** false: no runner steps, and a seed's scripts are the ones it gave before they came (a replay). */
  runnerSteps = true,
): fc.Arbitrary<PathScript> {
  return fc
    .record({
      type: fc.constantFrom(...types),
      partitions: fc.constantFrom(0, 0, 2, 3),
      consumers: fc.integer({ min: 1, max: 3 }),
      containers: fc.integer({ min: 1, max: 3 }),
      leaseMs: fc.constantFrom(10_000, 60_000),
      ackTimeoutMs: fc.constantFrom(0, 1_000, 10_000),
      ackTimeoutBackoff: fc.option(
        fc.record({
          minDelayMs: fc.constant(1_000),
          maxDelayMs: fc.constant(8_000),
          multiplier: fc.constant(2),
        }),
        { nil: undefined },
      ),
      nackBackoff: backoffArb,
      deadLetter: fc.constantFrom(undefined, 1, 2),
      maxUnacked: fc.constantFrom(6, 200_000),
      maxUnackedPerConsumer: fc.constantFrom(3, 50_000),
      seed: fc.nat(),
      callFaults: fc.boolean(),
      skewMs: fc.constantFrom(0, 200),
      ttlSeconds: fc.constantFrom(undefined, undefined, 20, 60),
      retention: fc.constantFrom(
        undefined,
        { retentionTimeInMinutes: 0, retentionSizeInMB: 0 },
        { retentionTimeInMinutes: 1, retentionSizeInMB: -1 },
      ),
      /** One script in eight ends with the subscription or the topic deleted. */
      deletion: fc.constantFrom(
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        'subscription',
        'topic',
      ),
    })
    .chain((base) =>
      fc
        .array(
          fc.record({
            actions: fc.array(pathActionArb(crashShare), { minLength: 1, maxLength: 4 }),
            advanceMs: fc.constantFrom(0, 500, 1_000, 3_000, 11_000, 61_000),
          }),
          { minLength: 1, maxLength: 12 },
        )
        .map((rounds) => ({
          ...base,
          ...(base.ackTimeoutMs === 0 ? { ackTimeoutBackoff: undefined } : {}),
          rounds: withDeletion(rounds, base.deletion),
        })),
    )
    .chain((script) => (runnerSteps ? withRunnerSteps(script, crashShare) : fc.constant(script)));
}

/**
 * Shared and Key_Shared: the Lambda runner's steps (consumer-path-runner.ts) added to some rounds,
 * drawn after everything else, so that a seed's scripts are otherwise those it gave before.
 */
function withRunnerSteps(script: PathScript, crashShare: number): fc.Arbitrary<PathScript> {
  if (script.type !== 'Shared' && script.type !== 'Key_Shared') return fc.constant(script);
  const step = fc.record({
    round: fc.nat({ max: script.rounds.length - 1 }),
    container: fc.nat({ max: 2 }),
    crash: crashArb(crashShare),
    seed: fc.nat(),
  });
  return fc.array(step, { maxLength: 4 }).map((steps) => ({
    ...script,
    rounds: script.rounds.map((round, i) => {
      const added: PathAction[] = steps
        .filter((s) => s.round === i)
        .map(({ container, crash, seed }) => ({
          kind: 'runner',
          container,
          seed,
          ...(crash ? { crash } : {}),
        }));
      return added.length === 0 ? round : { ...round, actions: [...round.actions, ...added] };
    }),
  }));
}
