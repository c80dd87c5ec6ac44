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
import { emptyCounters, type SimCounters } from './sim-counters.ts';
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

function actionArb(
  consumers: number,
  kinds: readonly SimAction['kind'][] | undefined,
  crashShare: number,
): fc.Arbitrary<SimAction> {
  const consumer = fc.nat({ max: consumers - 1 });
  return fc.oneof(
    ...allActions(consumer, crashArb(crashShare)).filter(
      (weighted) => !kinds || kinds.includes(weighted.kind),
    ),
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
      duplicateCalls: fc.boolean(),
      maxUnacked: fc.constantFrom(3, 8, 200_000),
      maxUnackedPerConsumer: fc.constantFrom(2, 5, 50_000),
      deadLetter: fc.constantFrom(undefined, undefined, 1, 2),
    })
    .chain((base) =>
      fc
        .array(
          fc.record({
            actions: fc.array(actionArb(base.consumers, kinds, crashShare), { minLength: 1, maxLength: 4 }),
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

/**
 * A reset started: entries from `to` on are unacknowledged again and handed out as first
 * deliveries (count 0, in order). `doneSeq` is undefined while it may still apply (it runs, or it
 * died and the round is not over).
 */
interface ResetMark {
  readonly to: Position;
  readonly startSeq: number;
  doneSeq?: number;
}

/** A receive of this round, with how many entries it took from spilled pages into its consumer's count. */
interface PageTakes {
  readonly consumer: string;
  fromPages: number;
}

/** One action's call: its invocation's ports, and when it started (seq and clock). */
interface ActionCall {
  readonly ctx: EngineContext;
  readonly invocation: Invocation;
  readonly simLedger: SimLedger;
  readonly startSeq: number;
  readonly now: number;
}

type ActionOf<K extends SimAction['kind']> = Extract<SimAction, { readonly kind: K }>;

function fail(invariant: string, detail: string): never {
  throw new Violation(`${invariant}: ${detail}`);
}

/** The stale-read coin of a script: a linear congruential sequence from its `staleSeed`. */
function staleReads(seed: number): () => boolean {
  let staleState = seed;
  return () => {
    staleState = (staleState * 1_103_515_245 + 12_345) % 2_147_483_648;
    return (staleState >> 16) % 4 === 0;
  };
}

/** Runs one script; throws a Violation naming the invariant when one breaks. Adds what it exercised to `counters`. */
export async function runSimulation(
  script: SimScript,
  scheduler: fc.Scheduler,
  mutation?: Mutation,
  counters: SimCounters = emptyCounters(),
): Promise<{ deliveries: number; crashes: number }> {
  return new Simulation(script, scheduler, mutation, counters).run();
}

/** One script's run: the engine over its ports, the clients' view of it, and the checks. */
class Simulation {
  private readonly partition = TopicName.parse('persistent://public/default/sim');
  private readonly clock = new ManualClock(1_000_000);
  private readonly ledger: SimLedger;
  private readonly store: InMemoryDispatchStore;
  private readonly cursor: PartitionCursor;
  private readonly limits: EngineContext['limits'];
  private readonly dead: { invocation: Invocation; client?: ClientConsumer; kind: SimAction['kind'] }[] = [];
  private readonly published: { position: Position; key: string; deliverAtMs?: number }[] = [];
  private readonly allocatedUnwritten: Position[] = [];
  /** position -> seq at which an ack call returned */
  private readonly acked = new Map<string, number>();
  private readonly adminAcked = new Set<string>();
  /** Admin acks started (one that died may still have applied). */
  private readonly adminAttempted = new Set<string>();
  private readonly observed: Observed[] = [];
  /** Resets started. */
  private readonly resets: ResetMark[] = [];
  /** Entries acknowledged by an admin cursor operation (never delivered, and that is right). */
  private skippedAllThisRound = false;
  /** position -> earliest next delivery */
  private readonly nackGuards = new Map<string, number>();
  /**
   * This round's receives (a round's calls all run at the same time), each with how many entries
   * it took from spilled pages into its consumer's count (I7's allowance, see the receive's check).
   */
  private readonly receivesThisRound: PageTakes[] = [];
  private readonly owners: string[] = [];
  private seq = 0;
  private crashes = 0;
  private exactCounts = true;
  private readonly consumers: ClientConsumer[];
  private invocations = 0;
  /** The dead letters the consumers publish (one policy for all), checked as they come. */
  private readonly deadLetters: SimDeadLetters;
  /** Dead-letter timers the receives set (the server's jobs), run by maintenance when due. */
  private deadLetterTimers: TrackerEntry[] = [];
  /** The drainer's calls (it never crashes). */
  private readonly drainerCalls = new Invocation('drainer', undefined);

  constructor(
    private readonly script: SimScript,
    private readonly scheduler: fc.Scheduler,
    private readonly mutation: Mutation | undefined,
    private readonly counters: SimCounters,
  ) {
    const stale = staleReads(script.staleSeed);
    this.ledger = new SimLedger(script.ledgerSize, stale, () => this.clock.nowMs());
    // Eventually consistent reads of the head may answer one of its last versions.
    this.store = new InMemoryDispatchStore(stale);
    this.cursor = { partition: this.partition, cursorId: 'cursor', type: script.type };
    this.limits = {
      ...DEFAULT_ENGINE_LIMITS,
      maxUnackedPerSubscription: script.maxUnacked,
      maxUnackedPerConsumer: script.maxUnackedPerConsumer,
      ...(mutation === 'noSpill' ? { maxHeadRuns: 10_000 } : {}),
    };
    this.deadLetters = new SimDeadLetters(script.deadLetter, fail);
    this.consumers = Array.from({ length: script.consumers }, (_, i) => ({
      id: `c${i}.0`,
      generation: 0,
      state: 'open',
      held: [],
      lastCallMs: this.clock.nowMs(),
      mustRewind: false,
    }));
  }

  async run(): Promise<{ deliveries: number; crashes: number }> {
    await this.setUp();
    for (const round of this.script.rounds) await this.runRound(round);
    if (this.exactCounts) this.counters.exactCountSchedules++;
    this.exactCounts = false;
    await this.drain();
    await this.checkDrained();
    this.counters.schedules++;
    this.counters.deliveries += this.observed.length;
    this.counters.deadLetters += this.deadLetters.count();
    this.counters.lostConditionalWrites += this.store.usage.failedConditionalWrites;
    return { deliveries: this.observed.length, crashes: this.crashes };
  }

  /** Exclusive or Failover: one consumer at a time, in order. */
  private get ordered(): boolean {
    return this.script.type === 'Exclusive' || this.script.type === 'Failover';
  }

  /** Shared or Key_Shared: consumers side by side. */
  private get shared(): boolean {
    return this.script.type === 'Shared' || this.script.type === 'Key_Shared';
  }

  /** A reset of `position` that may be applying now, or that overlapped a call started at `since`. */
  private resetOverlaps(position: Position, since: number): boolean {
    return this.resets.some(
      (r) => r.to.compareTo(position) <= 0 && (r.doneSeq === undefined || r.doneSeq > since),
    );
  }

  /** The last seq a finished reset of `position` ended at (counts and first-delivery order restart). */
  private resetBarrier(position: Position): number {
    return this.resets.reduce(
      (barrier, r) => (r.to.compareTo(position) <= 0 ? Math.max(barrier, r.doneSeq ?? Infinity) : barrier),
      -1,
    );
  }

  /** Records an acknowledgement that returned at `at`, unless a reset may have cleared it. */
  private recordAck(position: Position, startSeq: number, at: number): void {
    const key = position.toString();
    if (this.resetOverlaps(position, startSeq)) return;
    if (!this.acked.has(key)) this.acked.set(key, at);
  }

  private finishReset(reset: ResetMark, at: number): void {
    reset.doneSeq = at;
    this.deadLetters.replayFrom(reset.to);
    for (const key of [...this.acked.keys()]) {
      if (reset.to.compareTo(positionOfText(key)) <= 0) this.acked.delete(key);
    }
  }

  /** A call returned: the next seq. */
  private done(): number {
    this.seq++;
    return this.seq;
  }

  /** A new invocation's ports (scheduled, maybe crashing, maybe counting a receive's page takes). */
  private contextFor(crash?: CrashPlan, receiving?: PageTakes) {
    const invocation = new Invocation(
      `inv${++this.invocations}`,
      crash,
      this.script.duplicateCalls && this.invocations % 5 === 0 ? 1 : undefined,
    );
    const mutated = receiving
      ? countingPageTakes(mutate(this.store, this.mutation), receiving, () => this.clock.nowMs())
      : mutate(this.store, this.mutation);
    const ctx: EngineContext = {
      store: scheduledPort(mutated, 'store', this.scheduler, invocation),
      ledger: scheduledPort<Ledger>(this.ledger, 'ledger', this.scheduler, invocation),
      clock: this.clock,
      limits: this.limits,
    };
    return { ctx, invocation, simLedger: scheduledPort(this.ledger, 'ledger', this.scheduler, invocation) };
  }

  /** `client` as the engine sees it; with `invocation`, its dead-letter policy's producer for that call. */
  private dispatchConsumer(client: ClientConsumer, invocation?: Invocation): DispatchConsumer {
    const deadLetter = invocation ? this.deadLetters.producer(invocation) : undefined;
    return {
      consumerId: client.id,
      ackTimeoutMs: () => (this.script.ackTimeout ? ACK_TIMEOUT_MS : 0),
      leaseMs: LEASE_MS,
      ...(deadLetter ? { deadLetter } : {}),
    };
  }

  /** Records as acknowledged (returned at `at`) what `invocation` dead-lettered. */
  private recordDeadLettered(invocation: Invocation, startSeq: number, at: number): void {
    for (const position of this.deadLetters.by(invocation)) this.recordAck(position, startSeq, at);
  }

  private members(): KeySharedMember[] {
    return this.consumers
      .filter((client) => client.state !== 'gone' && client.joinedAfter)
      .map((client) => ({ consumerId: client.id, joinedAfter: client.joinedAfter as Position }))
      .sort((a, b) => (a.consumerId < b.consumerId ? -1 : 1));
  }

  /** The topic, its initial backlog and the subscription at Earliest. */
  private async setUp(): Promise<void> {
    const { ctx } = this.contextFor();
    const setup = (async () => {
      await ctx.ledger.initialize(this.partition);
      if (this.script.initial > 0) {
        const positions = this.ledger.allocate(this.partition, this.script.initial);
        this.ledger.write(
          positions,
          positions.map((_, i) => ({ payload: `i${i}`, key: `k${i % 3}`, properties: {} })),
          this.clock.nowMs(),
        );
        for (const [i, position] of positions.entries()) this.published.push({ position, key: `k${i % 3}` });
      }
      await createSubscriptionCursor(ctx, this.cursor, 'Earliest');
      const mark = await keySharedJoinMark(ctx, this.cursor);
      for (const client of this.consumers) client.joinedAfter = mark;
    })();
    await this.scheduler.waitFor(setup);
  }

  /** One round: its actions at the same time, then what follows once they all settled or died. */
  private async runRound(round: SimRound): Promise<void> {
    await this.settleAll(round.actions);
    // A close is released again once every call it may have raced has ended (the engine's second
    // release pass, 35 s after the close): an abandoned poll's claim comes back too.
    for (const c of this.consumers) {
      if (c.state === 'open' || c.releasedAgain) continue;
      c.releasedAgain = true;
      await this.calmRelease(c);
    }
    // A reset that died is over once the head no longer says it is under way (it died before its
    // first write, or a dispatch or fold finished it).
    if (this.resets.some((reset) => reset.doneSeq === undefined)) {
      const resetting = (await this.store.readHead(this.cursor.cursorId))?.head.resetting;
      if (!resetting) {
        for (const reset of this.resets) if (reset.doneSeq === undefined) this.finishReset(reset, ++this.seq);
      }
    }
    if (this.skippedAllThisRound) {
      // A skip_all acknowledges whatever was published up to when it read the log.
      for (const p of this.published) this.adminAttempted.add(p.position.toString());
      this.skippedAllThisRound = false;
    }
    this.receivesThisRound.length = 0;
    this.countDeadInvocations();
    if (this.store.usage.largestHeadBytes > MAX_HEAD_BYTES) {
      fail('I7', `the head grew to ${this.store.usage.largestHeadBytes} bytes (bound ${MAX_HEAD_BYTES})`);
    }
    this.clock.advance(round.advanceMs);
  }

  /** Runs `actions` at the same time, until every call has settled or died; throws the first error. */
  private async settleAll(actions: readonly SimAction[]): Promise<void> {
    const running = actions.map((action) => {
      const promise = this.runAction(action).catch((error: unknown) => {
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
      await this.scheduler.waitAll();
      await new Promise((resolve) => setImmediate(resolve));
      idle = this.scheduler.count() === 0 ? idle + 1 : 0;
    }
    for (const result of settled) if (result?.error) throw result.error;
  }

  /** The round's invocations that died count as crashes; a receive's may have claimed unseen entries. */
  private countDeadInvocations(): void {
    for (const { invocation, client, kind } of this.dead.splice(0)) {
      this.countCalls(invocation, kind);
      if (!invocation.dead) continue;
      this.crashes++;
      if (kind === 'receive') {
        this.exactCounts = false; // its claim may have applied: entries handed to nobody count a delivery
        if (client) client.mustRewind = this.ordered;
      }
    }
  }

  /** An action's invocation in the counters: its calls, a call applied twice, where it died. */
  private countCalls(invocation: Invocation, kind: SimAction['kind']): void {
    const counters = this.counters;
    counters.maxCallsByKind[kind] = Math.max(counters.maxCallsByKind[kind] ?? 0, invocation.calls);
    if (invocation.duplicated) counters.callsAppliedTwice++;
    if (!invocation.crash) return;
    if (!invocation.dead) {
      counters.crashPlansUnreached++;
      return;
    }
    counters.crashes++;
    const at = invocation.crash.atCall;
    for (let i = counters.crashesByCall.length; i <= at; i++) counters.crashesByCall[i] = 0;
    counters.crashesByCall[at] = (counters.crashesByCall[at] ?? 0) + 1;
  }

  private async runAction(action: SimAction): Promise<void> {
    const startSeq = ++this.seq;
    const now = this.clock.nowMs();
    const client = 'consumer' in action ? (this.consumers[action.consumer] as ClientConsumer) : undefined;
    if (client && client.state !== 'open') return;
    if (client) client.lastCallMs = now;
    if (client && this.ordered) {
      const ownerAt = this.owners.indexOf(client.id);
      if (ownerAt !== -1 && ownerAt < this.owners.length - 1) this.counters.replacedOwnerCalls++;
    }
    const mine = action.kind === 'receive' && client ? { consumer: client.id, fromPages: 0 } : undefined;
    if (mine) this.receivesThisRound.push(mine);
    const { ctx, invocation, simLedger } = this.contextFor(
      'crash' in action && typeof action.crash === 'object' ? action.crash : undefined,
      mine,
    );
    this.dead.push({ invocation, kind: action.kind, ...(client ? { client } : {}) });
    await this.perform(action, client as ClientConsumer, { ctx, invocation, simLedger, startSeq, now });
  }

  /** The action itself (`client` is its consumer's, for the consumers' actions). */
  private async perform(action: SimAction, client: ClientConsumer, call: ActionCall): Promise<void> {
    switch (action.kind) {
      case 'publish':
        return this.publish(action, call);
      case 'receive':
        return this.receive(action, client, call);
      case 'ack':
        return this.ack(action, client, call);
      case 'nack':
        return this.nack(action, client, call);
      case 'cumulativeAck':
        return this.cumulativeAck(client, call);
      case 'redeliver':
        return this.redeliver(client, call);
      case 'close':
        return this.close(client, call);
      case 'adminAck':
        return this.adminAck(action, call);
      case 'resetCursor':
        return this.resetCursorTo(action, call);
      case 'skipAll':
        return this.skipAll(call);
      case 'expire':
        return this.expire(action, call);
      case 'maintenance': {
        await this.maintenance(call.ctx);
        await this.runDeadLetterTimers(call.ctx, call.invocation);
        this.recordDeadLettered(call.invocation, call.startSeq, this.done());
        return;
      }
    }
  }

  private async publish(action: ActionOf<'publish'>, { simLedger, now }: ActionCall): Promise<void> {
    const entries = Array.from({ length: action.count }, (_, i) => ({
      payload: `p${this.seq}.${i}`,
      key: `k${(this.seq + i) % action.keys}`,
      properties: {},
      ...(action.delayMs > 0 ? { deliverAtMs: now + action.delayMs } : {}),
    }));
    const positions = await simLedger.allocate(this.partition, entries.length);
    if (action.crash) {
      this.allocatedUnwritten.push(...positions);
      this.crashes++;
      return;
    }
    await simLedger.write(positions, entries, now);
    for (const [i, position] of positions.entries()) {
      this.published.push({
        position,
        key: entries[i]?.key as string,
        ...(action.delayMs > 0 ? { deliverAtMs: now + action.delayMs } : {}),
      });
    }
  }

  private async receive(action: ActionOf<'receive'>, c: ClientConsumer, call: ActionCall): Promise<void> {
    const { ctx } = call;
    if (c.mustRewind) {
      await rewind(ctx, this.cursor, { consumerId: c.id }).catch(() => undefined);
      c.mustRewind = false;
      c.held = [];
      return;
    }
    // A receive that may die can commit a delivery nobody sees: counts stay increasing, no
    // longer exact, from then on.
    if (action.crash) this.exactCounts = false;
    let result: Awaited<ReturnType<typeof dispatch>>;
    const receiving = dispatch(ctx, {
      cursor: this.cursor,
      consumer: this.dispatchConsumer(c, call.invocation),
      max: action.max,
      ...(this.script.type === 'Key_Shared' ? { members: this.members() } : {}),
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
    this.recordDeadLettered(call.invocation, call.startSeq, this.done());
    if (result.kind === 'blocked') this.counters.capBlocks++;
    if (result.kind === 'standby') this.counters.standbys++;
    if (result.kind !== 'delivered') return;
    this.deadLetterTimers.push(...result.deadLetterTimers);
    for (const delivery of result.deliveries) {
      this.checkDeadLetterCount(delivery);
      if (this.script.type === 'Key_Shared' && delivery.redeliveryCount === 0) {
        await this.checkKeyOrder(delivery, c.id);
      }
      this.observeDelivery(c, delivery, call);
    }
    if (this.shared && result.deliveries.length > 0 && this.mutation === undefined) {
      await this.checkConsumerCap(c);
    }
    if (this.ordered) this.checkOrderedDeliveries(c, result.deliveries.length > 0);
  }

  /** Checks one delivery of a receive of `c` (I1, I3's keys, I4, I5) and records it. */
  private observeDelivery(c: ClientConsumer, delivery: Delivery, { startSeq, now }: ActionCall): void {
    const position = delivery.position.toString();
    const ackSeq = this.acked.get(position);
    if (ackSeq !== undefined && ackSeq < startSeq && !this.resetOverlaps(delivery.position, ackSeq)) {
      fail(
        'I1',
        `${position} was acknowledged (seq ${ackSeq}) before the receive of ${c.id} started (seq ${startSeq})`,
      );
    }
    const guard = this.nackGuards.get(position);
    if (guard !== undefined && delivery.redeliveryCount > 0 && now < guard) {
      fail('I5', `${position} redelivered at ${now}, before its nack backoff ended at ${guard}`);
    }
    const meta = this.published.find((p) => p.position.toString() === position);
    if (meta?.deliverAtMs !== undefined && now < meta.deliverAtMs && this.shared) {
      fail('I5', `${position} delivered at ${now}, before its deliverAt ${meta.deliverAtMs}`);
    }
    this.checkRedeliveryCount(delivery, startSeq);
    this.countDelivery(delivery, now);
    if (this.script.type === 'Key_Shared' && meta) {
      const holder = this.consumers.find(
        (other) =>
          other !== c && other.state === 'open' && other.held.some((h) => (h.entry.key ?? '') === meta.key),
      );
      if (holder) fail('I3', `key ${meta.key} handed to ${c.id} while ${holder.id} holds it`);
    }
    this.observed.push({
      consumer: c.id,
      position,
      redeliveryCount: delivery.redeliveryCount,
      atMs: now,
      startSeq,
      key: meta?.key,
    });
    c.held.push(delivery);
  }

  /** A delivery in the counters: a count of 2 or more, an ack timeout that fired. */
  private countDelivery(delivery: Delivery, now: number): void {
    const position = delivery.position.toString();
    if (delivery.redeliveryCount >= 2) this.counters.redeliveredTwice++;
    if (!this.script.ackTimeout || delivery.redeliveryCount === 0) return;
    const last = this.observed.findLast((o) => o.position === position);
    const holder = last && this.consumers.find((other) => other.id === last.consumer);
    const stillHeld = holder?.held.some((h) => h.position.toString() === position);
    if (last && stillHeld && now - last.atMs >= ACK_TIMEOUT_MS) this.counters.ackTimeoutsFired++;
  }

  /** I4: a delivery's count grows with each delivery since the last reset of it (exactly, while counts are). */
  private checkRedeliveryCount(delivery: Delivery, startSeq: number): void {
    const position = delivery.position.toString();
    const barrier = this.resetBarrier(delivery.position);
    const earlier = this.observed.filter((o) => o.position === position && o.startSeq > barrier);
    const last = earlier[earlier.length - 1];
    // A receive that overlapped a reset of this entry may have handed it out on either side of it.
    if (last && startSeq > barrier && delivery.redeliveryCount <= last.redeliveryCount) {
      fail(
        'I4',
        `${position} delivered with count ${delivery.redeliveryCount} after an earlier delivery with count ${last.redeliveryCount}`,
      );
    }
    if (this.exactCounts && delivery.redeliveryCount !== earlier.length) {
      fail(
        'I4',
        `${position} delivered with count ${delivery.redeliveryCount} after ${earlier.length} earlier deliveries`,
      );
    }
  }

  /**
   * I7: a consumer holds at most its cap (what is past its ack timeout does not count). With other
   * receives of it running alongside, also what they and this one took from spilled pages: a page's
   * write is not conditioned on the head each receive judged its room on, so a take there and a
   * claim elsewhere may both count on the same room.
   */
  private async checkConsumerCap(c: ClientConsumer): Promise<void> {
    const direct: EngineContext = {
      store: this.store,
      ledger: this.ledger,
      clock: this.clock,
      limits: this.limits,
    };
    const holds = heldAgainstCap(await pendingSummary(direct, this.cursor)).get(c.id) ?? 0;
    const alongside = this.receivesThisRound.filter((other) => other.consumer === c.id);
    const fromPages = alongside.length > 1 ? alongside.reduce((sum, other) => sum + other.fromPages, 0) : 0;
    if (holds > this.script.maxUnackedPerConsumer + fromPages) {
      fail(
        'I7',
        `${c.id} holds ${holds} entries, past its cap of ${this.script.maxUnackedPerConsumer}` +
          (fromPages > 0 ? ` and the ${fromPages} its receives running alongside took from pages` : ''),
      );
    }
  }

  /** No delivery on Shared/Key_Shared passes the dead-letter policy's maxRedeliverCount. */
  private checkDeadLetterCount(delivery: Delivery): void {
    const { deadLetter } = this.script;
    if (deadLetter === undefined || !this.shared) return;
    if (delivery.redeliveryCount > deadLetter) {
      fail(
        'DL',
        `${delivery.position.toString()} delivered with count ${delivery.redeliveryCount}, past maxRedeliverCount ${deadLetter}`,
      );
    }
  }

  /** I3, Key_Shared: a first delivery never overtakes an earlier message of its key (see waitingBefore). */
  private async checkKeyOrder(delivery: Delivery, consumerId: string): Promise<void> {
    const waiting = await waitingBefore(this.store, this.cursor, this.published, delivery);
    if (waiting) {
      fail(
        'I3',
        `${delivery.position.toString()} (key ${delivery.entry.key}) handed to ${consumerId} while ${waiting.toString()} waits for its first delivery`,
      );
    }
  }

  /** I6: only the latest owner receives; I3: first deliveries come in order. */
  private checkOrderedDeliveries(c: ClientConsumer, delivered: boolean): void {
    if (delivered) {
      const previous = this.owners.indexOf(c.id);
      if (previous !== -1 && previous !== this.owners.length - 1) {
        fail('I6', `${c.id} received after ${this.owners[this.owners.length - 1]} took over`);
      }
      if (previous === -1) this.owners.push(c.id);
    }
    const firsts = this.observed
      .filter((o) => o.redeliveryCount === 0 && o.startSeq > this.resetBarrier(positionOfText(o.position)))
      .map((o) => o.position);
    const ordered = [...firsts].sort((a, b) => comparePositionText(a, b));
    if (firsts.join() !== ordered.join()) fail('I3', `first deliveries out of order: ${firsts.join(' ')}`);
  }

  private async ack(
    action: ActionOf<'ack'>,
    c: ClientConsumer,
    { ctx, startSeq }: ActionCall,
  ): Promise<void> {
    const chosen = choose(c.held, action.pick);
    if (chosen.length === 0) return;
    await acknowledge(
      ctx,
      this.cursor,
      chosen.map((d) => d.position),
      { byId: action.byId },
    );
    const at = this.done();
    for (const d of chosen) this.recordAck(d.position, startSeq, at);
    c.held = c.held.filter((d) => !chosen.includes(d));
  }

  private async nack(
    action: ActionOf<'nack'>,
    c: ClientConsumer,
    { ctx, invocation, startSeq, now }: ActionCall,
  ): Promise<void> {
    const chosen = choose(c.held, action.pick);
    if (chosen.length === 0) return;
    c.held = c.held.filter((d) => !chosen.includes(d));
    const deadLetter = this.deadLetters.producer(invocation);
    const nacked = await negativeAcknowledge(ctx, {
      cursor: this.cursor,
      consumerId: c.id,
      items: chosen.map((d) => ({ position: d.position, redeliveryCount: d.redeliveryCount })),
      delayMs: () => NACK_DELAY_MS,
      ...(deadLetter ? { deadLetter } : {}),
    });
    this.recordDeadLettered(invocation, startSeq, this.done());
    if (nacked.released.length > 0) this.counters.nacksReleasing++;
    // Only what the nack released waits for its backoff (an entry redelivered meanwhile by its
    // ack timeout is no longer the consumer's to nack).
    for (const position of nacked.released) this.nackGuards.set(position.toString(), now + NACK_DELAY_MS);
  }

  private async cumulativeAck(c: ClientConsumer, { ctx, startSeq }: ActionCall): Promise<void> {
    if (this.script.type !== 'Exclusive' && this.script.type !== 'Failover') return;
    if (c.mustRewind) {
      // The SDK's rule: after a receive that failed (its answer may have been lost after the
      // claim), rewind before acknowledging cumulatively, so nothing unseen is covered.
      await rewind(ctx, this.cursor, { consumerId: c.id }).catch(() => undefined);
      c.mustRewind = false;
      c.held = [];
      return;
    }
    const last = c.held[c.held.length - 1];
    if (!last) return;
    const ownerNow = this.owners[this.owners.length - 1];
    try {
      await acknowledgeCumulative(ctx, this.cursor, c.id, last.position);
    } catch {
      return;
    }
    const at = this.done();
    if (
      ownerNow !== undefined &&
      ownerNow !== c.id &&
      this.owners.indexOf(c.id) < this.owners.indexOf(ownerNow)
    ) {
      fail('I6', `${c.id}'s cumulative ack accepted after ${ownerNow} took over`);
    }
    for (const p of this.published) {
      if (p.position.compareTo(last.position) > 0) continue;
      const key = p.position.toString();
      this.recordAck(p.position, startSeq, at);
      if (!this.adminAttempted.has(key) && !this.observed.some((o) => o.position === key)) {
        fail('I3', `cumulative ack of ${last.position.toString()} covers ${key}, never delivered`);
      }
    }
    c.held = c.held.filter((d) => d.position.compareTo(last.position) > 0);
  }

  private async redeliver(c: ClientConsumer, { ctx }: ActionCall): Promise<void> {
    c.held = [];
    if (this.ordered) {
      await rewind(ctx, this.cursor, { consumerId: c.id }).catch(() => undefined);
    } else {
      await releaseAll(ctx, this.cursor, c.id);
    }
    this.done();
  }

  private async close(c: ClientConsumer, { ctx }: ActionCall): Promise<void> {
    c.state = 'closing';
    c.held = [];
    if (this.ordered) {
      await rewind(ctx, this.cursor, { consumerId: c.id, close: true });
    } else {
      await releaseAll(ctx, this.cursor, c.id);
    }
    c.state = 'gone';
    this.done();
  }

  /** The published entry an admin action's `pick` names, if any was published. */
  private target(pick: number): { position: Position } | undefined {
    return this.published[pick % Math.max(1, this.published.length)];
  }

  private async adminAck(action: ActionOf<'adminAck'>, { ctx, startSeq }: ActionCall): Promise<void> {
    const target = this.target(action.pick);
    if (!target) return;
    this.adminAttempted.add(target.position.toString());
    await acknowledge(ctx, this.cursor, [target.position], { byId: true });
    const at = this.done();
    const key = target.position.toString();
    this.adminAcked.add(key);
    this.recordAck(target.position, startSeq, at);
  }

  private async resetCursorTo(action: ActionOf<'resetCursor'>, { ctx, startSeq }: ActionCall): Promise<void> {
    const target = this.target(action.pick);
    if (!target) return;
    const reset: ResetMark = { to: target.position, startSeq };
    this.resets.push(reset);
    this.deadLetters.replayFrom(target.position);
    this.counters.resets++;
    this.exactCounts = false;
    // Everything before the new read position is acknowledged by the new mark-delete.
    for (const p of this.published) {
      if (p.position.compareTo(target.position) < 0) this.adminAttempted.add(p.position.toString());
    }
    // Consumers keep what they hold: an acknowledgement of it after the reset counts (I1).
    await resetCursor(ctx, this.cursor, target.position);
    this.finishReset(reset, this.done());
  }

  private async skipAll({ ctx, startSeq }: ActionCall): Promise<void> {
    this.skippedAllThisRound = true;
    for (const p of this.published) this.adminAttempted.add(p.position.toString());
    const state = await ctx.ledger.state(this.partition);
    if (!state) return;
    const to = positionBefore(endOfLog(state));
    await markDeleteForward(ctx, this.cursor, to);
    const at = this.done();
    for (const p of this.published)
      if (p.position.compareTo(to) <= 0) this.recordAck(p.position, startSeq, at);
  }

  private async expire(action: ActionOf<'expire'>, { ctx, startSeq }: ActionCall): Promise<void> {
    const target = this.target(action.pick);
    if (!target) return;
    const to = positionBefore(target.position);
    for (const p of this.published) {
      if (p.position.compareTo(to) <= 0) this.adminAttempted.add(p.position.toString());
    }
    await markDeleteForward(ctx, this.cursor, to);
    const at = this.done();
    for (const p of this.published)
      if (p.position.compareTo(to) <= 0) this.recordAck(p.position, startSeq, at);
  }

  private async maintenance(ctx: EngineContext): Promise<void> {
    await foldStep(ctx, this.cursor);
    if (this.shared) {
      for (const c of this.consumers) {
        const lapsed = c.state === 'open' && c.lastCallMs + LEASE_MS <= this.clock.nowMs();
        if (!lapsed && c.state !== 'closing') continue;
        await releaseAll(ctx, this.cursor, c.id);
        c.state = 'gone';
        c.held = [];
      }
    }
  }

  /** The server's dead-letter jobs that are due (as the scheduler runs them), racing the receives. */
  private async runDeadLetterTimers(ctx: EngineContext, invocation: Invocation): Promise<void> {
    const deadLetter = this.deadLetters.producer(invocation);
    if (!deadLetter) return;
    const now = this.clock.nowMs();
    const due = this.deadLetterTimers.filter((timer) => timer.dueAtMs <= now);
    this.deadLetterTimers = this.deadLetterTimers.filter((timer) => timer.dueAtMs > now);
    for (const entry of due) {
      const { retryAtMs } = await deadLetterOnTimer(ctx, { cursor: this.cursor, entry, deadLetter });
      if (retryAtMs !== undefined) this.deadLetterTimers.push({ ...entry, dueAtMs: retryAtMs });
    }
  }

  /** `c`'s close, run again with nothing else running. */
  private async calmRelease(c: ClientConsumer): Promise<void> {
    const { ctx } = this.contextFor();
    const work = (async () => {
      if (this.ordered) {
        await rewind(ctx, this.cursor, { consumerId: c.id, close: true });
        return;
      }
      await releaseAll(ctx, this.cursor, c.id);
    })();
    await this.scheduler.waitFor(work);
  }

  /** `work` in a new invocation that cannot crash, with nothing else running. */
  private async calm<T>(work: (ctx: EngineContext) => Promise<T>): Promise<T> {
    const { ctx } = this.contextFor();
    const promise = work(ctx);
    return this.scheduler.waitFor(promise);
  }

  /** Faults stop: every consumer closes, time passes, a fresh consumer drains the subscription. */
  private async drain(): Promise<void> {
    const drainer: ClientConsumer = {
      id: 'drainer',
      generation: 0,
      state: 'open',
      held: [],
      lastCallMs: this.clock.nowMs(),
      mustRewind: false,
    };
    for (const c of this.consumers) {
      if (c.state === 'gone') continue;
      await this.calm(async (ctx) => {
        if (this.ordered) {
          await rewind(ctx, this.cursor, { consumerId: c.id, close: true });
        } else {
          await releaseAll(ctx, this.cursor, c.id);
        }
      });
      c.state = 'gone';
    }
    this.clock.advance(LEASE_MS + ACK_TIMEOUT_MS + 120_000);
    this.consumers.length = 0;
    drainer.joinedAfter = await this.calm((ctx) => keySharedJoinMark(ctx, this.cursor));
    this.consumers.push(drainer);
    let idle = 0;
    for (let i = 0; i < 400 && idle < 4; i++) {
      idle = (await this.drainOnce(drainer)) ? 0 : idle + 1;
    }
  }

  /** One receive of the drainer and the ack of what it got, or a fold and time passing: whether it got any. */
  private async drainOnce(drainer: ClientConsumer): Promise<boolean> {
    const result = await this.calm((ctx) =>
      dispatch(ctx, {
        cursor: this.cursor,
        consumer: this.dispatchConsumer(drainer, this.drainerCalls),
        max: 20,
        ...(this.script.type === 'Key_Shared' ? { members: this.members() } : {}),
      }),
    );
    const got = result.kind === 'delivered' ? result.deliveries : [];
    for (const d of got) this.checkDeadLetterCount(d);
    for (const d of got)
      this.observed.push({
        consumer: drainer.id,
        position: d.position.toString(),
        redeliveryCount: d.redeliveryCount,
        atMs: this.clock.nowMs(),
        startSeq: ++this.seq,
        key: undefined,
      });
    if (got.length === 0) {
      await this.calm((ctx) => foldStep(ctx, this.cursor));
      this.clock.advance(30_000);
      return false;
    }
    await this.calm((ctx) =>
      acknowledge(
        ctx,
        this.cursor,
        got.map((d) => d.position),
        { byId: false },
      ),
    );
    for (const d of got) this.acked.set(d.position.toString(), ++this.seq);
    return true;
  }

  /** I2, once the faults stopped and the subscription drained: everything is acknowledged, and rightly. */
  private async checkDrained(): Promise<void> {
    for (let i = 0; i < 30; i++) await this.calm((ctx) => foldStep(ctx, this.cursor));
    const head = (await this.store.readHead(this.cursor.cursorId))?.head;
    for (const p of this.published) {
      const key = p.position.toString();
      if (!head || head.markDelete.compareTo(p.position) < 0) {
        fail(
          'I2',
          `${key} is still unacknowledged after the faults stopped (mark-delete ${head?.markDelete.toString()})`,
        );
      }
      if (
        !this.adminAttempted.has(key) &&
        !this.observed.some((o) => o.position === key) &&
        !this.deadLetters.has(key)
      ) {
        fail('I2', `${key} was acknowledged without ever being delivered or acknowledged by the admin`);
      }
    }
    // An id allocated and never written at the very end holds back only mark-delete until an entry
    // is written after it (then it is acknowledged once that entry is abandonedIdMs old).
    const last = this.published
      .map((p) => p.position)
      .sort((a, b) => a.compareTo(b))
      .pop();
    if (last && head && head.markDelete.compareTo(last) < 0) {
      fail(
        'I2',
        `mark-delete stopped at ${head.markDelete.toString()} before the last entry ${last.toString()} (an unwritten id holds it back)`,
      );
    }
  }
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
 * they come: once per message, unless a step that published it died before its acknowledgement,
 * or a reset of the cursor to it or before it made it unacknowledged again since (the reset
 * replays it, and the policy applies to it again, as Pulsar's does).
 */
class SimDeadLetters {
  /** Dead letters published since the last reset of their position, with the invocations that published each. */
  private readonly published = new Map<string, Invocation[]>();
  /** Every position ever dead-lettered, and how many dead letters in all. */
  private readonly ever = new Set<string>();
  private total = 0;

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
          this.ever.add(key);
          this.total++;
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
    return this.ever.has(key);
  }

  /** How many dead letters were published. */
  count(): number {
    return this.total;
  }

  /** A reset to `to` started or ended: what was dead-lettered from `to` on may be dead-lettered again. */
  replayFrom(to: Position): void {
    for (const key of [...this.published.keys()]) {
      if (to.compareTo(positionOfText(key)) <= 0) this.published.delete(key);
    }
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
