import fc from 'fast-check';
import { heldAgainstCap } from '../../../shared/application/engine/consumer-cap.ts';
import { DEAD_LETTER_HOLDER } from '../../../shared/application/engine/dead-letter-claim.ts';
import { deadLetterOnTimer } from '../../../shared/application/engine/dead-letter-timer.ts';
import { dispatch } from '../../../shared/application/engine/dispatcher.ts';
import {
  DEFAULT_ENGINE_LIMITS,
  type DeadLetterProducer,
  type Delivery,
  type DispatchConsumer,
  type EngineContext,
  type KeySharedMember,
  type PartitionCursor,
} from '../../../shared/application/engine/engine-context.ts';
import { foldStep } from '../../../shared/application/engine/fold.ts';
import { keySharedJoinMark } from '../../../shared/application/engine/key-shared-routing.ts';
import {
  acknowledge,
  acknowledgeCumulative,
  negativeAcknowledge,
} from '../../../shared/application/engine/pending-acks.ts';
import {
  isAcknowledged,
  locateRun,
  readPagesOf,
  runPagesOf,
} from '../../../shared/application/engine/pending-state.ts';
import { pendingSummary } from '../../../shared/application/engine/pending-summary.ts';
import { releaseConsumerStep, rewind } from '../../../shared/application/engine/release.ts';
import { markDeleteForward, resetCursor } from '../../../shared/application/engine/reset-cursor.ts';
import { createSubscriptionCursor } from '../../../shared/application/engine/subscription-cursor.ts';
import { endOfLog } from '../../../shared/application/topics/find-by-publish-time.ts';
import { type DeliveryRun, runPositions } from '../../../shared/domain/delivery-run.ts';
import type { DispatchHead } from '../../../shared/domain/dispatch-head.ts';
import { Position, positionBefore } from '../../../shared/domain/position.ts';
import type { SubscriptionType } from '../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { DispatchStore, PageRef, TrackerEntry } from '../../../shared/ports/dispatch-store.ts';
import type { Ledger } from '../../../shared/ports/ledger.ts';
import { InMemoryDispatchStore } from '../in-memory-dispatch-store.ts';
import { ManualClock } from '../manual-clock.ts';
import { type CrashPlan, Invocation, scheduledPort } from './scheduled-ports.ts';
import { SimLedger } from './sim-ledger.ts';

/**
 * A deterministic, seeded simulation of the delivery engine: the real engine functions over the
 * in-memory ports, driven by random concurrent publishers, consumers (receive, ack, nack,
 * cumulative ack, redeliverUnacknowledged, close, going silent), admin acks, the admin's cursor
 * operations (reset cursor, clear backlog, expire messages) and maintenance, with
 * every port call a scheduling point (before it applies, and after it applied but before its
 * answer) and crashes at any of them. It checks I1-I7 as it goes and I2 once faults stop.
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
  | { readonly kind: 'receive'; readonly consumer: number; readonly max: number; readonly crash?: CrashPlan }
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
  readonly duplicateCalls: boolean;
  /** The subscription's unacknowledged cap (small ones make dispatch pause and fold inline). */
  readonly maxUnacked: number;
  /** Each consumer's cap (small ones block consumers until their acks are counted). */
  readonly maxUnackedPerConsumer: number;
  /** Every consumer's dead-letter policy's maxRedeliverCount (none: no dead-letter policy). */
  readonly deadLetter?: number;
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
  /** Dead letters: a dead-letter step's claim applies whatever the version (every racer wins it). */
  | 'blindDeadLetterClaims';

const crashArb: fc.Arbitrary<CrashPlan | undefined> = fc.option(
  fc.record({ atCall: fc.nat({ max: 8 }), applied: fc.boolean() }),
  { freq: 6, nil: undefined },
);

function actionArb(consumers: number, kinds?: readonly SimAction['kind'][]): fc.Arbitrary<SimAction> {
  const consumer = fc.nat({ max: consumers - 1 });
  return fc.oneof(...allActions(consumer).filter((weighted) => !kinds || kinds.includes(weighted.kind)));
}

function allActions(
  consumer: fc.Arbitrary<number>,
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
        crash: crashArb,
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
        crash: crashArb,
      }),
    },
    {
      kind: 'nack',
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant('nack' as const), consumer, pick: fc.nat(), crash: crashArb }),
    },
    {
      kind: 'cumulativeAck',
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('cumulativeAck' as const), consumer, crash: crashArb }),
    },
    {
      kind: 'redeliver',
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('redeliver' as const), consumer, crash: crashArb }),
    },
    {
      kind: 'close',
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('close' as const), consumer, crash: crashArb }),
    },
    {
      kind: 'adminAck',
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('adminAck' as const), pick: fc.nat(), crash: crashArb }),
    },
    {
      kind: 'maintenance',
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('maintenance' as const), crash: crashArb }),
    },
    {
      kind: 'resetCursor',
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('resetCursor' as const), pick: fc.nat(), crash: crashArb }),
    },
    {
      kind: 'skipAll',
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('skipAll' as const), crash: crashArb }),
    },
    {
      kind: 'expire',
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('expire' as const), pick: fc.nat(), crash: crashArb }),
    },
  ];
}

/** Random scripts of the given subscription types, with every action kind or only `kinds`. */
export function scriptArb(
  types: readonly SubscriptionType[] = ['Shared', 'Key_Shared', 'Exclusive', 'Failover'],
  kinds?: readonly SimAction['kind'][],
): fc.Arbitrary<SimScript> {
  return fc
    .record({
      type: fc.constantFrom(...types),
      consumers: fc.integer({ min: 1, max: 3 }),
      ledgerSize: fc.constantFrom(5, 40, 250),
      ackTimeout: fc.boolean(),
      initial: fc.nat({ max: 30 }),
      staleSeed: fc.nat(),
      duplicateCalls: fc.boolean(),
      maxUnacked: fc.constantFrom(3, 8, 200_000),
      maxUnackedPerConsumer: fc.constantFrom(2, 5, 50_000),
      deadLetter: fc.constantFrom(undefined, undefined, 1, 2),
    })
    .chain((base) =>
      fc
        .array(
          fc.record({
            actions: fc.array(actionArb(base.consumers, kinds), { minLength: 1, maxLength: 4 }),
            advanceMs: fc.constantFrom(0, 500, 1_000, 3_000, 20_000, 61_000),
          }),
          { minLength: 1, maxLength: 14 },
        )
        .map((rounds) => ({ ...base, rounds })),
    );
}

class Violation extends Error {}

interface Observed {
  readonly consumer: string;
  readonly position: string;
  readonly redeliveryCount: number;
  readonly atMs: number;
  readonly startSeq: number;
  readonly key: string | undefined;
}

interface ClientConsumer {
  id: string;
  generation: number;
  state: 'open' | 'closing' | 'gone';
  held: Delivery[];
  lastCallMs: number;
  joinedAfter?: Position;
  /** A receive of this consumer lost its answer: an ordered consumer rewinds before going on. */
  mustRewind: boolean;
  /** The second release pass after its close ran. */
  releasedAgain?: boolean;
}

/** Runs one script; throws a Violation naming the invariant when one breaks. */
export async function runSimulation(
  script: SimScript,
  scheduler: fc.Scheduler,
  mutation?: Mutation,
): Promise<{ deliveries: number; crashes: number }> {
  const partition = TopicName.parse('persistent://public/default/sim');
  const clock = new ManualClock(1_000_000);
  let staleState = script.staleSeed;
  const stale = () => {
    staleState = (staleState * 1_103_515_245 + 12_345) % 2_147_483_648;
    return (staleState >> 16) % 4 === 0;
  };
  const ledger = new SimLedger(script.ledgerSize, stale, () => clock.nowMs());
  // Eventually consistent reads of the head may answer one of its last versions.
  const store = new InMemoryDispatchStore(stale);
  const cursor: PartitionCursor = { partition, cursorId: 'cursor', type: script.type };
  const limits = {
    ...DEFAULT_ENGINE_LIMITS,
    maxUnackedPerSubscription: script.maxUnacked,
    maxUnackedPerConsumer: script.maxUnackedPerConsumer,
    ...(mutation === 'noSpill' ? { maxHeadRuns: 10_000 } : {}),
  };
  const dead: { invocation: Invocation; client?: ClientConsumer; kind: SimAction['kind'] }[] = [];
  const published: { position: Position; key: string; deliverAtMs?: number }[] = [];
  const allocatedUnwritten: Position[] = [];
  const acked = new Map<string, number>(); // position -> seq at which an ack call returned
  const adminAcked = new Set<string>();
  /** Admin acks started (one that died may still have applied). */
  const adminAttempted = new Set<string>();
  const observed: Observed[] = [];
  /**
   * Resets started: entries from `to` on are unacknowledged again and handed out as first
   * deliveries (count 0, in order). `doneSeq` is undefined while one may still apply (it runs, or
   * it died and the round is not over).
   */
  const resets: { to: Position; startSeq: number; doneSeq?: number }[] = [];
  /** A reset of `position` that may be applying now, or that overlapped a call started at `since`. */
  const resetOverlaps = (position: Position, since: number) =>
    resets.some((r) => r.to.compareTo(position) <= 0 && (r.doneSeq === undefined || r.doneSeq > since));
  /** The last seq a finished reset of `position` ended at (counts and first-delivery order restart). */
  const resetBarrier = (position: Position) =>
    resets.reduce(
      (barrier, r) => (r.to.compareTo(position) <= 0 ? Math.max(barrier, r.doneSeq ?? Infinity) : barrier),
      -1,
    );
  /** Records an acknowledgement that returned at `at`, unless a reset may have cleared it. */
  const recordAck = (position: Position, startSeq: number, at: number) => {
    const key = position.toString();
    if (resetOverlaps(position, startSeq)) return;
    if (!acked.has(key)) acked.set(key, at);
  };
  /** Entries acknowledged by an admin cursor operation (never delivered, and that is right). */
  let skippedAllThisRound = false;
  const finishReset = (reset: { to: Position; doneSeq?: number }, at: number) => {
    reset.doneSeq = at;
    for (const key of [...acked.keys()]) {
      if (reset.to.compareTo(positionOfText(key)) <= 0) acked.delete(key);
    }
  };
  const nackGuards = new Map<string, number>(); // position -> earliest next delivery
  /**
   * This round's receives (a round's calls all run at the same time), each with how many entries
   * it took from spilled pages into its consumer's count (I7's allowance, see the receive's check).
   */
  const receivesThisRound: { consumer: string; fromPages: number }[] = [];
  const owners: string[] = [];
  let seq = 0;
  let crashes = 0;
  let exactCounts = true;
  const consumers: ClientConsumer[] = Array.from({ length: script.consumers }, (_, i) => ({
    id: `c${i}.0`,
    generation: 0,
    state: 'open',
    held: [],
    lastCallMs: clock.nowMs(),
    mustRewind: false,
  }));

  let invocations = 0;
  const contextFor = (crash?: CrashPlan, receiving?: { consumer: string; fromPages: number }) => {
    const invocation = new Invocation(
      `inv${++invocations}`,
      crash,
      script.duplicateCalls && invocations % 5 === 0 ? 1 : undefined,
    );
    const mutated = receiving
      ? countingPageTakes(mutate(store, mutation), receiving, () => clock.nowMs())
      : mutate(store, mutation);
    const ctx: EngineContext = {
      store: scheduledPort(mutated, 'store', scheduler, invocation),
      ledger: scheduledPort<Ledger>(ledger, 'ledger', scheduler, invocation),
      clock,
      limits,
    };
    return { ctx, invocation, simLedger: scheduledPort(ledger, 'ledger', scheduler, invocation) };
  };
  const deadLetters = new SimDeadLetters(script.deadLetter, (invariant, detail) => fail(invariant, detail));
  /** Dead-letter timers the receives set (the server's jobs), run by maintenance when due. */
  let deadLetterTimers: TrackerEntry[] = [];
  const deadLetterProducer = (invocation: Invocation) => deadLetters.producer(invocation);
  const deadLetteredBy = (invocation: Invocation) => deadLetters.by(invocation);
  const dispatchConsumer = (client: ClientConsumer, invocation?: Invocation): DispatchConsumer => {
    const deadLetter = invocation ? deadLetterProducer(invocation) : undefined;
    return {
      consumerId: client.id,
      ackTimeoutMs: () => (script.ackTimeout ? ACK_TIMEOUT_MS : 0),
      leaseMs: LEASE_MS,
      ...(deadLetter ? { deadLetter } : {}),
    };
  };
  const members = (): KeySharedMember[] =>
    consumers
      .filter((client) => client.state !== 'gone' && client.joinedAfter)
      .map((client) => ({ consumerId: client.id, joinedAfter: client.joinedAfter as Position }))
      .sort((a, b) => (a.consumerId < b.consumerId ? -1 : 1));
  const fail = (invariant: string, detail: string): never => {
    throw new Violation(`${invariant}: ${detail}`);
  };

  // The topic, its initial backlog and the subscription at Earliest.
  {
    const { ctx } = contextFor();
    const setup = (async () => {
      await ctx.ledger.initialize(partition);
      if (script.initial > 0) {
        const positions = ledger.allocate(partition, script.initial);
        ledger.write(
          positions,
          positions.map((_, i) => ({ payload: `i${i}`, key: `k${i % 3}`, properties: {} })),
          clock.nowMs(),
        );
        for (const [i, position] of positions.entries()) published.push({ position, key: `k${i % 3}` });
      }
      await createSubscriptionCursor(ctx, cursor, 'Earliest');
      const mark = await keySharedJoinMark(ctx, cursor);
      for (const client of consumers) client.joinedAfter = mark;
    })();
    await scheduler.waitFor(setup);
  }

  const runAction = async (action: SimAction): Promise<void> => {
    const startSeq = ++seq;
    const now = clock.nowMs();
    const client = 'consumer' in action ? (consumers[action.consumer] as ClientConsumer) : undefined;
    if (client && client.state !== 'open') return;
    if (client) client.lastCallMs = now;
    const mine = action.kind === 'receive' && client ? { consumer: client.id, fromPages: 0 } : undefined;
    if (mine) receivesThisRound.push(mine);
    const { ctx, invocation, simLedger } = contextFor(
      'crash' in action && typeof action.crash === 'object' ? action.crash : undefined,
      mine,
    );
    dead.push({ invocation, kind: action.kind, ...(client ? { client } : {}) });
    const done = () => {
      seq++;
      return seq;
    };
    switch (action.kind) {
      case 'publish': {
        const entries = Array.from({ length: action.count }, (_, i) => ({
          payload: `p${seq}.${i}`,
          key: `k${(seq + i) % action.keys}`,
          properties: {},
          ...(action.delayMs > 0 ? { deliverAtMs: now + action.delayMs } : {}),
        }));
        const positions = await simLedger.allocate(partition, entries.length);
        if (action.crash) {
          allocatedUnwritten.push(...positions);
          crashes++;
          return;
        }
        await simLedger.write(positions, entries, now);
        for (const [i, position] of positions.entries()) {
          published.push({
            position,
            key: entries[i]?.key as string,
            ...(action.delayMs > 0 ? { deliverAtMs: now + action.delayMs } : {}),
          });
        }
        return;
      }
      case 'receive': {
        const c = client as ClientConsumer;
        if (c.mustRewind) {
          await rewind(ctx, cursor, { consumerId: c.id }).catch(() => undefined);
          c.mustRewind = false;
          c.held = [];
          return;
        }
        // A receive that may die can commit a delivery nobody sees: counts stay increasing, no
        // longer exact, from then on.
        if (action.crash) exactCounts = false;
        let result: Awaited<ReturnType<typeof dispatch>>;
        const receiving = dispatch(ctx, {
          cursor,
          consumer: dispatchConsumer(c, invocation),
          max: action.max,
          ...(script.type === 'Key_Shared' ? { members: members() } : {}),
        });
        try {
          result = await receiving;
        } catch (error) {
          if ((error as Error).name === 'ConsumerFencedError') {
            c.state = 'gone';
            c.held = [];
            return;
          }
          throw error;
        }
        const returnedAt = done();
        for (const position of deadLetteredBy(invocation)) recordAck(position, startSeq, returnedAt);
        if (result.kind !== 'delivered') return;
        deadLetterTimers.push(...result.deadLetterTimers);
        for (const delivery of result.deliveries) {
          checkDeadLetterCount(delivery);
          if (script.type === 'Key_Shared' && delivery.redeliveryCount === 0) {
            await checkKeyOrder(delivery, c.id);
          }
          const position = delivery.position.toString();
          const ackSeq = acked.get(position);
          if (ackSeq !== undefined && ackSeq < startSeq && !resetOverlaps(delivery.position, ackSeq)) {
            fail(
              'I1',
              `${position} was acknowledged (seq ${ackSeq}) before the receive of ${c.id} started (seq ${startSeq})`,
            );
          }
          const guard = nackGuards.get(position);
          if (guard !== undefined && delivery.redeliveryCount > 0 && now < guard) {
            fail('I5', `${position} redelivered at ${now}, before its nack backoff ended at ${guard}`);
          }
          const meta = published.find((p) => p.position.toString() === position);
          if (
            meta?.deliverAtMs !== undefined &&
            now < meta.deliverAtMs &&
            (script.type === 'Shared' || script.type === 'Key_Shared')
          ) {
            fail('I5', `${position} delivered at ${now}, before its deliverAt ${meta.deliverAtMs}`);
          }
          const barrier = resetBarrier(delivery.position);
          const earlier = observed.filter((o) => o.position === position && o.startSeq > barrier);
          const last = earlier[earlier.length - 1];
          // A receive that overlapped a reset of this entry may have handed it out on either side of it.
          if (last && startSeq > barrier && delivery.redeliveryCount <= last.redeliveryCount) {
            fail(
              'I4',
              `${position} delivered with count ${delivery.redeliveryCount} after an earlier delivery with count ${last.redeliveryCount}`,
            );
          }
          if (exactCounts && delivery.redeliveryCount !== earlier.length) {
            fail(
              'I4',
              `${position} delivered with count ${delivery.redeliveryCount} after ${earlier.length} earlier deliveries`,
            );
          }
          if (script.type === 'Key_Shared' && meta) {
            const holder = consumers.find(
              (other) =>
                other !== c &&
                other.state === 'open' &&
                other.held.some((h) => (h.entry.key ?? '') === meta.key),
            );
            if (holder) fail('I3', `key ${meta.key} handed to ${c.id} while ${holder.id} holds it`);
          }
          observed.push({
            consumer: c.id,
            position,
            redeliveryCount: delivery.redeliveryCount,
            atMs: now,
            startSeq,
            key: meta?.key,
          });
          c.held.push(delivery);
        }
        if (
          (script.type === 'Shared' || script.type === 'Key_Shared') &&
          result.deliveries.length > 0 &&
          mutation === undefined
        ) {
          // I7: a consumer holds at most its cap (what is past its ack timeout does not count).
          // With other receives of it running alongside, also what they and this one took from
          // spilled pages: a page's write is not conditioned on the head each receive judged its
          // room on, so a take there and a claim elsewhere may both count on the same room.
          const direct: EngineContext = { store, ledger, clock, limits };
          const holds = heldAgainstCap(await pendingSummary(direct, cursor)).get(c.id) ?? 0;
          const alongside = receivesThisRound.filter((other) => other.consumer === c.id);
          const fromPages =
            alongside.length > 1 ? alongside.reduce((sum, other) => sum + other.fromPages, 0) : 0;
          if (holds > script.maxUnackedPerConsumer + fromPages) {
            fail(
              'I7',
              `${c.id} holds ${holds} entries, past its cap of ${script.maxUnackedPerConsumer}` +
                (fromPages > 0 ? ` and the ${fromPages} its receives running alongside took from pages` : ''),
            );
          }
        }
        if (script.type === 'Exclusive' || script.type === 'Failover') {
          if (result.deliveries.length > 0) {
            const previous = owners.indexOf(c.id);
            if (previous !== -1 && previous !== owners.length - 1) {
              fail('I6', `${c.id} received after ${owners[owners.length - 1]} took over`);
            }
            if (previous === -1) owners.push(c.id);
          }
          const firsts = observed
            .filter((o) => o.redeliveryCount === 0 && o.startSeq > resetBarrier(positionOfText(o.position)))
            .map((o) => o.position);
          const ordered = [...firsts].sort((a, b) => comparePositionText(a, b));
          if (firsts.join() !== ordered.join())
            fail('I3', `first deliveries out of order: ${firsts.join(' ')}`);
        }
        return;
      }
      case 'ack': {
        const c = client as ClientConsumer;
        const chosen = choose(c.held, action.pick);
        if (chosen.length === 0) return;
        await acknowledge(
          ctx,
          cursor,
          chosen.map((d) => d.position),
          { byId: action.byId },
        );
        const at = done();
        for (const d of chosen) recordAck(d.position, startSeq, at);
        c.held = c.held.filter((d) => !chosen.includes(d));
        return;
      }
      case 'nack': {
        const c = client as ClientConsumer;
        const chosen = choose(c.held, action.pick);
        if (chosen.length === 0) return;
        c.held = c.held.filter((d) => !chosen.includes(d));
        const deadLetter = deadLetterProducer(invocation);
        const nacked = await negativeAcknowledge(ctx, {
          cursor,
          consumerId: c.id,
          items: chosen.map((d) => ({ position: d.position, redeliveryCount: d.redeliveryCount })),
          delayMs: () => NACK_DELAY_MS,
          ...(deadLetter ? { deadLetter } : {}),
        });
        const nackedAt = done();
        for (const position of deadLetteredBy(invocation)) recordAck(position, startSeq, nackedAt);
        // Only what the nack released waits for its backoff (an entry redelivered meanwhile by its
        // ack timeout is no longer the consumer's to nack).
        for (const position of nacked.released) nackGuards.set(position.toString(), now + NACK_DELAY_MS);
        return;
      }
      case 'cumulativeAck': {
        const c = client as ClientConsumer;
        if (script.type !== 'Exclusive' && script.type !== 'Failover') return;
        if (c.mustRewind) {
          // The SDK's rule: after a receive that failed (its answer may have been lost after the
          // claim), rewind before acknowledging cumulatively, so nothing unseen is covered.
          await rewind(ctx, cursor, { consumerId: c.id }).catch(() => undefined);
          c.mustRewind = false;
          c.held = [];
          return;
        }
        const last = c.held[c.held.length - 1];
        if (!last) return;
        const ownerNow = owners[owners.length - 1];
        try {
          await acknowledgeCumulative(ctx, cursor, c.id, last.position);
        } catch {
          return;
        }
        const at = done();
        if (ownerNow !== undefined && ownerNow !== c.id && owners.indexOf(c.id) < owners.indexOf(ownerNow)) {
          fail('I6', `${c.id}'s cumulative ack accepted after ${ownerNow} took over`);
        }
        for (const p of published) {
          if (p.position.compareTo(last.position) > 0) continue;
          const key = p.position.toString();
          recordAck(p.position, startSeq, at);
          if (!adminAttempted.has(key) && !observed.some((o) => o.position === key)) {
            fail('I3', `cumulative ack of ${last.position.toString()} covers ${key}, never delivered`);
          }
        }
        c.held = c.held.filter((d) => d.position.compareTo(last.position) > 0);
        return;
      }
      case 'redeliver': {
        const c = client as ClientConsumer;
        c.held = [];
        if (script.type === 'Exclusive' || script.type === 'Failover') {
          await rewind(ctx, cursor, { consumerId: c.id }).catch(() => undefined);
        } else {
          await releaseAll(ctx, cursor, c.id);
        }
        done();
        return;
      }
      case 'close': {
        const c = client as ClientConsumer;
        c.state = 'closing';
        c.held = [];
        if (script.type === 'Exclusive' || script.type === 'Failover') {
          await rewind(ctx, cursor, { consumerId: c.id, close: true });
        } else {
          await releaseAll(ctx, cursor, c.id);
        }
        c.state = 'gone';
        done();
        return;
      }
      case 'adminAck': {
        const target = published[action.pick % Math.max(1, published.length)];
        if (!target) return;
        adminAttempted.add(target.position.toString());
        await acknowledge(ctx, cursor, [target.position], { byId: true });
        const at = done();
        const key = target.position.toString();
        adminAcked.add(key);
        recordAck(target.position, startSeq, at);
        return;
      }
      case 'resetCursor': {
        const target = published[action.pick % Math.max(1, published.length)];
        if (!target) return;
        const reset: { to: Position; startSeq: number; doneSeq?: number } = {
          to: target.position,
          startSeq,
        };
        resets.push(reset);
        exactCounts = false;
        // Everything before the new read position is acknowledged by the new mark-delete.
        for (const p of published) {
          if (p.position.compareTo(target.position) < 0) adminAttempted.add(p.position.toString());
        }
        // Consumers keep what they hold: an acknowledgement of it after the reset counts (I1).
        await resetCursor(ctx, cursor, target.position);
        finishReset(reset, done());
        return;
      }
      case 'skipAll': {
        skippedAllThisRound = true;
        for (const p of published) adminAttempted.add(p.position.toString());
        const state = await ctx.ledger.state(partition);
        if (!state) return;
        const to = positionBefore(endOfLog(state));
        await markDeleteForward(ctx, cursor, to);
        const at = done();
        for (const p of published) if (p.position.compareTo(to) <= 0) recordAck(p.position, startSeq, at);
        return;
      }
      case 'expire': {
        const target = published[action.pick % Math.max(1, published.length)];
        if (!target) return;
        const to = positionBefore(target.position);
        for (const p of published) {
          if (p.position.compareTo(to) <= 0) adminAttempted.add(p.position.toString());
        }
        await markDeleteForward(ctx, cursor, to);
        const at = done();
        for (const p of published) if (p.position.compareTo(to) <= 0) recordAck(p.position, startSeq, at);
        return;
      }
      case 'maintenance': {
        await maintenance(ctx);
        await runDeadLetterTimers(ctx, invocation);
        const at = done();
        for (const position of deadLetteredBy(invocation)) recordAck(position, startSeq, at);
        return;
      }
    }
  };

  /** The server's dead-letter jobs that are due (as the scheduler runs them), racing the receives. */
  const runDeadLetterTimers = async (ctx: EngineContext, invocation: Invocation) => {
    const deadLetter = deadLetterProducer(invocation);
    if (!deadLetter) return;
    const due = deadLetterTimers.filter((timer) => timer.dueAtMs <= clock.nowMs());
    deadLetterTimers = deadLetterTimers.filter((timer) => timer.dueAtMs > clock.nowMs());
    for (const entry of due) {
      const { retryAtMs } = await deadLetterOnTimer(ctx, { cursor, entry, deadLetter });
      if (retryAtMs !== undefined) deadLetterTimers.push({ ...entry, dueAtMs: retryAtMs });
    }
  };

  /** No delivery on Shared/Key_Shared passes the dead-letter policy's maxRedeliverCount. */
  const checkDeadLetterCount = (delivery: Delivery) => {
    if (script.deadLetter === undefined || (script.type !== 'Shared' && script.type !== 'Key_Shared')) return;
    if (delivery.redeliveryCount > script.deadLetter) {
      fail(
        'DL',
        `${delivery.position.toString()} delivered with count ${delivery.redeliveryCount}, past maxRedeliverCount ${script.deadLetter}`,
      );
    }
  };

  /** I3, Key_Shared: a first delivery never overtakes an earlier message of its key (see waitingBefore). */
  const checkKeyOrder = async (delivery: Delivery, consumerId: string) => {
    const waiting = await waitingBefore(store, cursor, published, delivery);
    if (waiting) {
      fail(
        'I3',
        `${delivery.position.toString()} (key ${delivery.entry.key}) handed to ${consumerId} while ${waiting.toString()} waits for its first delivery`,
      );
    }
  };

  const maintenance = async (ctx: EngineContext) => {
    await foldStep(ctx, cursor);
    if (script.type === 'Shared' || script.type === 'Key_Shared') {
      for (const c of consumers) {
        const lapsed = c.state === 'open' && c.lastCallMs + LEASE_MS <= clock.nowMs();
        if (!lapsed && c.state !== 'closing') continue;
        await releaseAll(ctx, cursor, c.id);
        c.state = 'gone';
        c.held = [];
      }
    }
  };

  const calmRelease = async (c: ClientConsumer) => {
    const { ctx } = contextFor();
    const work = (async () => {
      if (script.type === 'Exclusive' || script.type === 'Failover') {
        await rewind(ctx, cursor, { consumerId: c.id, close: true });
        return;
      }
      await releaseAll(ctx, cursor, c.id);
    })();
    await scheduler.waitFor(work);
  };

  for (const round of script.rounds) {
    const running = round.actions.map((action) => {
      const promise = runAction(action).catch((error: unknown) => {
        if (error instanceof Violation) throw error;
        throw new Violation(`unexpected error in ${action.kind}: ${(error as Error).stack ?? String(error)}`);
      });
      return promise;
    });
    const settled: { error?: unknown }[] = [];
    running.forEach((promise, i) => {
      promise.then(
        () => {
          settled[i] = {};
        },
        (error: unknown) => {
          settled[i] = { error };
        },
      );
    });
    // Until every call of the round has settled or died (a call may schedule its next request
    // after a plain await).
    for (let idle = 0; idle < 3; ) {
      await scheduler.waitAll();
      await new Promise((resolve) => setImmediate(resolve));
      idle = scheduler.count() === 0 ? idle + 1 : 0;
    }
    for (const result of settled) if (result?.error) throw result.error;
    // A close is released again once every call it may have raced has ended (the engine's second
    // release pass, 35 s after the close): an abandoned poll's claim comes back too.
    for (const c of consumers) {
      if (c.state === 'open' || c.releasedAgain) continue;
      c.releasedAgain = true;
      await calmRelease(c);
    }
    // A reset that died is over once the head no longer says it is under way (it died before its
    // first write, or a dispatch or fold finished it).
    if (resets.some((reset) => reset.doneSeq === undefined)) {
      const resetting = (await store.readHead(cursor.cursorId))?.head.resetting;
      if (!resetting) for (const reset of resets) if (reset.doneSeq === undefined) finishReset(reset, ++seq);
    }
    if (skippedAllThisRound) {
      // A skip_all acknowledges whatever was published up to when it read the log.
      for (const p of published) adminAttempted.add(p.position.toString());
      skippedAllThisRound = false;
    }
    receivesThisRound.length = 0;
    for (const { invocation, client, kind } of dead.splice(0)) {
      if (!invocation.dead) continue;
      crashes++;
      if (kind === 'receive') {
        exactCounts = false; // its claim may have applied: entries handed to nobody count a delivery
        if (client) client.mustRewind = script.type === 'Exclusive' || script.type === 'Failover';
      }
    }
    if (store.usage.largestHeadBytes > MAX_HEAD_BYTES) {
      fail('I7', `the head grew to ${store.usage.largestHeadBytes} bytes (bound ${MAX_HEAD_BYTES})`);
    }
    clock.advance(round.advanceMs);
  }
  exactCounts = false;

  // Faults stop: every consumer closes, time passes, a fresh consumer drains the subscription.
  const drainer: ClientConsumer = {
    id: 'drainer',
    generation: 0,
    state: 'open',
    held: [],
    lastCallMs: clock.nowMs(),
    mustRewind: false,
  };
  const calm = async <T>(work: (ctx: EngineContext) => Promise<T>): Promise<T> => {
    const { ctx } = contextFor();
    const promise = work(ctx);
    return scheduler.waitFor(promise);
  };
  for (const c of consumers) {
    if (c.state === 'gone') continue;
    await calm(async (ctx) => {
      if (script.type === 'Exclusive' || script.type === 'Failover') {
        await rewind(ctx, cursor, { consumerId: c.id, close: true });
      } else {
        await releaseAll(ctx, cursor, c.id);
      }
    });
    c.state = 'gone';
  }
  clock.advance(LEASE_MS + ACK_TIMEOUT_MS + 120_000);
  consumers.length = 0;
  drainer.joinedAfter = await calm((ctx) => keySharedJoinMark(ctx, cursor));
  consumers.push(drainer);
  let idle = 0;
  const drainerCalls = new Invocation('drainer', undefined);
  for (let i = 0; i < 400 && idle < 4; i++) {
    const result = await calm((ctx) =>
      dispatch(ctx, {
        cursor,
        consumer: dispatchConsumer(drainer, drainerCalls),
        max: 20,
        ...(script.type === 'Key_Shared' ? { members: members() } : {}),
      }),
    );
    const got = result.kind === 'delivered' ? result.deliveries : [];
    for (const d of got) checkDeadLetterCount(d);
    for (const d of got)
      observed.push({
        consumer: drainer.id,
        position: d.position.toString(),
        redeliveryCount: d.redeliveryCount,
        atMs: clock.nowMs(),
        startSeq: ++seq,
        key: undefined,
      });
    if (got.length > 0) {
      idle = 0;
      await calm((ctx) =>
        acknowledge(
          ctx,
          cursor,
          got.map((d) => d.position),
          { byId: false },
        ),
      );
      for (const d of got) acked.set(d.position.toString(), ++seq);
    } else {
      idle++;
      await calm((ctx) => foldStep(ctx, cursor));
      clock.advance(30_000);
    }
  }
  for (let i = 0; i < 30; i++) await calm((ctx) => foldStep(ctx, cursor));
  const head = (await store.readHead(cursor.cursorId))?.head;
  for (const p of published) {
    const key = p.position.toString();
    if (!head || head.markDelete.compareTo(p.position) < 0) {
      fail(
        'I2',
        `${key} is still unacknowledged after the faults stopped (mark-delete ${head?.markDelete.toString()})`,
      );
    }
    if (!adminAttempted.has(key) && !observed.some((o) => o.position === key) && !deadLetters.has(key)) {
      fail('I2', `${key} was acknowledged without ever being delivered or acknowledged by the admin`);
    }
  }
  // An id allocated and never written at the very end holds back only mark-delete until an entry
  // is written after it (then it is acknowledged once that entry is abandonedIdMs old).
  const last = published
    .map((p) => p.position)
    .sort((a, b) => a.compareTo(b))
    .pop();
  if (last && head && head.markDelete.compareTo(last) < 0) {
    fail(
      'I2',
      `mark-delete stopped at ${head.markDelete.toString()} before the last entry ${last.toString()} (an unwritten id holds it back)`,
    );
  }
  return { deliveries: observed.length, crashes };
}

/** Every step of a release job for `consumerId`, to its end (bounded). */
async function releaseAll(ctx: EngineContext, cursor: PartitionCursor, consumerId: string): Promise<void> {
  let from: Position | undefined;
  for (let step = 0; step === 0 || (from && step < 1_000); step++) {
    from = (await releaseConsumerStep(ctx, cursor, consumerId, from)).next;
  }
}

function choose<T>(items: readonly T[], pick: number): T[] {
  if (items.length === 0) return [];
  const chosen = items.filter((_, i) => ((pick >> (i % 16)) & 1) === 1);
  return chosen.length > 0 ? chosen : [items[pick % items.length] as T];
}

function positionOfText(text: string): Position {
  return Position.parseStored(text);
}

function comparePositionText(a: string, b: string): number {
  const [la, ea] = a.split(':').map(BigInt) as [bigint, bigint];
  const [lb, eb] = b.split(':').map(BigInt) as [bigint, bigint];
  return la !== lb ? (la < lb ? -1 : 1) : ea < eb ? -1 : ea > eb ? 1 : 0;
}

/**
 * The store, counting in `receiving.fromPages` the entries a receive's page writes newly make its
 * consumer hold against its cap (held by it and not past their ack timeout) among those the page
 * had runs for: redeliveries taken from spilled pages (not the runs a spill moves there from the
 * head). Counted when the write applies, so a receive that dies after it counts too.
 */
function countingPageTakes(
  store: DispatchStore,
  receiving: { readonly consumer: string; fromPages: number },
  nowMs: () => number,
): DispatchStore {
  const counted = (runs: readonly DeliveryRun[]) =>
    new Set(
      runs
        .filter(
          (run) =>
            run.state.kind === 'held' &&
            run.state.consumerId === receiving.consumer &&
            (run.state.timeoutAtMs === undefined || run.state.timeoutAtMs > nowMs()),
        )
        .flatMap((run) => runPositions(run).map(String)),
    );
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property !== 'casPage') return value.bind(target);
      return async (...args: Parameters<DispatchStore['casPage']>) => {
        const [cursorId, page, , next] = args;
        const [before] = await target.readPages(cursorId, [page]);
        const written = await target.casPage(...args);
        if (written) {
          const runs = before?.runs ?? [];
          const known = new Set(runs.flatMap((run) => runPositions(run).map(String)));
          const had = counted(runs);
          receiving.fromPages += [...counted(next.runs)].filter(
            (position) => known.has(position) && !had.has(position),
          ).length;
        }
        return written;
      };
    },
  });
}

/** The store with one deliberate defect, or as it is. */
function mutate(store: InMemoryDispatchStore, mutation: Mutation | undefined): DispatchStore {
  if (!mutation) return store;
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const original = value.bind(target);
      if (mutation === 'noAheadAck' && property === 'raiseAheadAck') return async () => undefined;
      if (mutation === 'dropTracker' && property === 'putTracker') return async () => undefined;
      if (mutation === 'blindHeadWrites' && property === 'casHead') {
        return async (cursorId: string, _version: number, head: Parameters<DispatchStore['casHead']>[2]) => {
          const current = await target.readHead(cursorId);
          return original(cursorId, current?.version ?? 0, head);
        };
      }
      if (mutation === 'noFencing' && property === 'readHead') {
        return async (cursorId: string) => {
          const record = await original(cursorId);
          if (!record?.head.owner) return record;
          const { fenced: _fenced, ...head } = record.head;
          return { ...record, head: { ...head, owner: { ...head.owner, leaseUntilMs: 0 } } };
        };
      }
      if (mutation === 'blindDeadLetterClaims' && (property === 'casHead' || property === 'casPage')) {
        return blindDeadLetterClaims(target, property);
      }
      if (mutation === 'earlyRelease' && property === 'putTracker') {
        return (cursorId: string, entries: readonly TrackerEntry[]) =>
          original(
            cursorId,
            entries.map((entry) => ({ ...entry, dueAtMs: entry.dueAtMs - 60_000 })),
          );
      }
      if (mutation === 'earlyRelease' && (property === 'casHead' || property === 'casPage')) {
        const early = (runs: readonly DeliveryRun[]) =>
          runs.map((run) =>
            run.state.kind === 'released'
              ? { ...run, state: { ...run.state, dueAtMs: run.state.dueAtMs - 60_000 } }
              : run,
          );
        if (property === 'casHead') {
          return (cursorId: string, version: number, head: DispatchHead) =>
            original(cursorId, version, {
              ...head,
              runs: early(head.runs),
              ...(head.trackerDueAtMs !== undefined ? { trackerDueAtMs: head.trackerDueAtMs - 60_000 } : {}),
            });
        }
        return (cursorId: string, page: PageRef, version: number, next: { runs: readonly DeliveryRun[] }) =>
          original(cursorId, page, version, { ...next, runs: early(next.runs) });
      }
      return original;
    },
  });
}

/** The store's compare-and-set of `property`, made blind for writes that claim runs for a dead-letter step. */
function blindDeadLetterClaims(store: InMemoryDispatchStore, property: 'casHead' | 'casPage') {
  const claims = (runs: readonly DeliveryRun[]) =>
    runs.some((run) => run.state.kind === 'held' && run.state.consumerId === DEAD_LETTER_HOLDER);
  if (property === 'casHead') {
    return async (cursorId: string, version: number, head: DispatchHead) => {
      const current = await store.readHead(cursorId);
      const blind = claims(head.runs) && current !== undefined;
      return store.casHead(cursorId, blind ? current.version : version, head);
    };
  }
  return async (cursorId: string, page: PageRef, version: number, next: { runs: readonly DeliveryRun[] }) => {
    const [current] = await store.readPages(cursorId, [page]);
    const blind = claims(next.runs) && current !== undefined;
    return store.casPage(cursorId, page, blind ? current.version : version, next);
  };
}

/**
 * The dead letters a simulation's consumers publish (every consumer shares one policy), checked as
 * they come: once per message, unless a step that published it died before its acknowledgement.
 */
class SimDeadLetters {
  /** Dead letters published, by position, with the invocations that published each. */
  private readonly published = new Map<string, Invocation[]>();

  constructor(
    private readonly maxRedeliverCount: number | undefined,
    private readonly fail: (invariant: string, detail: string) => never,
  ) {}

  /** The producer of one invocation (none without a policy). */
  producer(invocation: Invocation): DeadLetterProducer | undefined {
    if (this.maxRedeliverCount === undefined) return undefined;
    return {
      maxRedeliverCount: this.maxRedeliverCount,
      publish: async (entries) => {
        for (const entry of entries) {
          const key = entry.position.toString();
          const before = this.published.get(key) ?? [];
          const alive = before.find((other) => !other.dead);
          if (alive) this.fail('DL', `${key} dead-lettered by ${invocation.id} after ${alive.id} did`);
          this.published.set(key, [...before, invocation]);
        }
      },
    };
  }

  /** The positions `invocation` dead-lettered. */
  by(invocation: Invocation): Position[] {
    return [...this.published]
      .filter(([, by]) => by.includes(invocation))
      .map(([key]) => positionOfText(key));
  }

  has(key: string): boolean {
    return this.published.has(key);
  }
}

/**
 * An earlier message of `delivery`'s key (not delayed) that still waits in the tracker for its
 * first delivery (a released run never handed out), read from the store as it is now.
 */
async function waitingBefore(
  store: DispatchStore,
  cursor: PartitionCursor,
  published: readonly { position: Position; key: string; deliverAtMs?: number }[],
  delivery: Delivery,
): Promise<Position | undefined> {
  const record = await store.readHead(cursor.cursorId);
  const key = delivery.entry.key;
  if (!record || key === undefined) return undefined;
  const earlier = published.filter(
    (p) => p.key === key && p.deliverAtMs === undefined && p.position.compareTo(delivery.position) < 0,
  );
  const pages = await readPagesOf(
    store,
    cursor.cursorId,
    earlier.flatMap((p) => runPagesOf(p.position)),
  );
  return earlier.find((p) => {
    if (isAcknowledged(record.head, pages, p.position)) return false;
    const run = locateRun(record.head, pages, p.position)?.run;
    return run?.state.kind === 'released' && run.deliveries === 0;
  })?.position;
}
