import type fc from 'fast-check';
import { deadLetterOnTimer } from '../../../shared/application/engine/dead-letter-timer.ts';
import { dispatch } from '../../../shared/application/engine/dispatcher.ts';
import {
  DEFAULT_ENGINE_LIMITS,
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
import { releaseConsumerStep, rewind } from '../../../shared/application/engine/release.ts';
import { markDeleteForward, resetCursor } from '../../../shared/application/engine/reset-cursor.ts';
import { createSubscriptionCursor } from '../../../shared/application/engine/subscription-cursor.ts';
import { endOfLog } from '../../../shared/application/topics/find-by-publish-time.ts';
import { type Position, positionBefore } from '../../../shared/domain/position.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { TrackerEntry } from '../../../shared/ports/dispatch-store.ts';
import type { Ledger } from '../../../shared/ports/ledger.ts';
import { InMemoryDispatchStore } from '../in-memory-dispatch-store.ts';
import { ManualClock } from '../manual-clock.ts';
import { countingPageTakes, mutate } from './fault-stores.ts';
import { type CrashPlan, Invocation, scheduledPort } from './scheduled-ports.ts';
import { addByIndex, emptyCounters, type SimCounters } from './sim-counters.ts';
import { SimLedger } from './sim-ledger.ts';
import {
  type ClientConsumer,
  fail,
  type PageTakes,
  type ResetMark,
  SimOracle,
  Violation,
} from './sim-oracle.ts';
import {
  ACK_TIMEOUT_MS,
  type ActionOf,
  LEASE_MS,
  MAX_HEAD_BYTES,
  type Mutation,
  NACK_DELAY_MS,
  type SimAction,
  type SimRound,
  type SimScript,
} from './sim-script.ts';

export {
  DEFAULT_CRASH_SHARE,
  type Mutation,
  type SimAction,
  type SimScript,
  scriptArb,
} from './sim-script.ts';

/** One action's call: its invocation's ports, and when it started (seq and clock). */
interface ActionCall {
  readonly ctx: EngineContext;
  readonly invocation: Invocation;
  readonly simLedger: SimLedger;
  readonly startSeq: number;
  readonly now: number;
}

/**
 * A deterministic, seeded simulation of the delivery engine: the real engine functions over the
 * in-memory ports, driven by random concurrent publishers, consumers (receive, ack, nack,
 * cumulative ack, redeliverUnacknowledged, close, going silent), admin acks, the admin's cursor
 * operations (reset cursor, clear backlog, expire messages) and maintenance, with
 * every port call a scheduling point (before it applies, and after it applied but before its
 * answer) and crashes at any of them. It checks I1-I7 as it goes and I2 once faults stop.
 */

/**
 * The stale reads of a script, a linear congruential sequence from its `staleSeed`: one read in
 * four is stale, by one to `versions` versions (drawn per read); without `versions`, always three.
 */
function staleReads(seed: number, versions: number | undefined): () => boolean | number {
  let staleState = seed;
  return () => {
    staleState = (staleState * 1_103_515_245 + 12_345) % 2_147_483_648;
    const stale = (staleState >> 16) % 4 === 0;
    if (!stale || versions === undefined) return stale;
    return 1 + ((staleState >> 18) % versions);
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
  private readonly allocatedUnwritten: Position[] = [];
  /** Entries acknowledged by an admin cursor operation (never delivered, and that is right). */
  private skippedAllThisRound = false;
  private crashes = 0;
  private readonly consumers: ClientConsumer[];
  private invocations = 0;
  /** The clients' view of what happened, and the checks. */
  private readonly oracle: SimOracle;
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
    const stale = staleReads(script.staleSeed, script.staleVersions);
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
    this.consumers = Array.from({ length: script.consumers }, (_, i) => ({
      id: `c${i}.0`,
      generation: 0,
      state: 'open',
      held: [],
      lastCallMs: this.clock.nowMs(),
      mustRewind: false,
    }));
    this.oracle = new SimOracle({
      script,
      clock: this.clock,
      store: this.store,
      ledger: this.ledger,
      cursor: this.cursor,
      limits: this.limits,
      consumers: this.consumers,
      counters,
      mutation,
    });
  }

  async run(): Promise<{ deliveries: number; crashes: number }> {
    await this.setUp();
    for (const round of this.script.rounds) await this.runRound(round);
    if (this.oracle.exactCounts) this.counters.exactCountSchedules++;
    this.oracle.exactCounts = false;
    await this.drain();
    await this.checkDrained();
    this.counters.schedules++;
    this.counters.deliveries += this.oracle.observed.length;
    this.counters.deadLetters += this.oracle.deadLetters.count();
    this.counters.lostConditionalWrites += this.store.usage.failedConditionalWrites;
    addByIndex(this.counters.staleHeadReads, this.store.usage.staleHeadReads);
    return { deliveries: this.oracle.observed.length, crashes: this.crashes };
  }

  /** Exclusive or Failover: one consumer at a time, in order. */
  private get ordered(): boolean {
    return this.oracle.ordered;
  }

  /** Shared or Key_Shared: consumers side by side. */
  private get shared(): boolean {
    return this.oracle.shared;
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
    const deadLetter = invocation ? this.oracle.deadLetters.producer(invocation) : undefined;
    return {
      consumerId: client.id,
      ackTimeoutMs: () => (this.script.ackTimeout ? ACK_TIMEOUT_MS : 0),
      leaseMs: LEASE_MS,
      ...(deadLetter ? { deadLetter } : {}),
    };
  }

  /** Records as acknowledged (returned at `at`) what `invocation` dead-lettered. */
  private recordDeadLettered(invocation: Invocation, startSeq: number, at: number): void {
    for (const position of this.oracle.deadLetters.by(invocation))
      this.oracle.recordAck(position, startSeq, at);
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
        for (const [i, position] of positions.entries())
          this.oracle.published.push({ position, key: `k${i % 3}` });
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
    if (this.oracle.resets.some((reset) => reset.doneSeq === undefined)) {
      const resetting = (await this.store.readHead(this.cursor.cursorId))?.head.resetting;
      if (!resetting) {
        for (const reset of this.oracle.resets)
          if (reset.doneSeq === undefined) this.oracle.finishReset(reset, this.oracle.done());
      }
    }
    if (this.skippedAllThisRound) {
      // A skip_all acknowledges whatever was published up to when it read the log.
      for (const p of this.oracle.published) this.oracle.adminAttempted.add(p.position.toString());
      this.skippedAllThisRound = false;
    }
    this.oracle.receivesThisRound.length = 0;
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
        this.oracle.exactCounts = false; // its claim may have applied: entries handed to nobody count a delivery
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
    const startSeq = this.oracle.done();
    const now = this.clock.nowMs();
    const client = 'consumer' in action ? (this.consumers[action.consumer] as ClientConsumer) : undefined;
    if (client && client.state !== 'open') return;
    if (client) client.lastCallMs = now;
    if (client && this.ordered) {
      const ownerAt = this.oracle.owners.indexOf(client.id);
      if (ownerAt !== -1 && ownerAt < this.oracle.owners.length - 1) this.counters.replacedOwnerCalls++;
    }
    const mine = action.kind === 'receive' && client ? { consumer: client.id, fromPages: 0 } : undefined;
    if (mine) this.oracle.receivesThisRound.push(mine);
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
        this.recordDeadLettered(call.invocation, call.startSeq, this.oracle.done());
        return;
      }
    }
  }

  private async publish(action: ActionOf<'publish'>, { simLedger, now }: ActionCall): Promise<void> {
    const entries = Array.from({ length: action.count }, (_, i) => ({
      payload: `p${this.oracle.seqNow}.${i}`,
      key: `k${(this.oracle.seqNow + i) % action.keys}`,
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
      this.oracle.published.push({
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
    if (action.crash) this.oracle.exactCounts = false;
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
    this.recordDeadLettered(call.invocation, call.startSeq, this.oracle.done());
    if (result.kind === 'blocked') this.counters.capBlocks++;
    if (result.kind === 'standby') this.counters.standbys++;
    if (result.kind !== 'delivered') return;
    this.deadLetterTimers.push(...result.deadLetterTimers);
    for (const delivery of result.deliveries) {
      this.oracle.checkDeadLetterCount(delivery);
      if (this.script.type === 'Key_Shared' && delivery.redeliveryCount === 0) {
        await this.oracle.checkKeyOrder(delivery, c.id);
      }
      this.oracle.observeDelivery(c, delivery, call);
    }
    if (this.shared && result.deliveries.length > 0 && this.mutation === undefined) {
      await this.oracle.checkConsumerCap(c);
    }
    if (this.ordered) this.oracle.checkOrderedDeliveries(c, result.deliveries.length > 0);
    if (action.thenNack) {
      const got = new Set(result.deliveries.map((d) => d.position.toString()));
      await this.nackHeld(
        c.held.filter((d) => got.has(d.position.toString())),
        c,
        call,
      );
    }
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
    const at = this.oracle.done();
    for (const d of chosen) this.oracle.recordAck(d.position, startSeq, at);
    c.held = c.held.filter((d) => !chosen.includes(d));
  }

  private async nack(action: ActionOf<'nack'>, c: ClientConsumer, call: ActionCall): Promise<void> {
    await this.nackHeld(choose(c.held, action.pick), c, call);
  }

  /** `c` nacks `chosen` (what it holds). */
  private async nackHeld(
    chosen: readonly Delivery[],
    c: ClientConsumer,
    { ctx, invocation, startSeq, now }: ActionCall,
  ): Promise<void> {
    if (chosen.length === 0) return;
    c.held = c.held.filter((d) => !chosen.includes(d));
    const deadLetter = this.oracle.deadLetters.producer(invocation);
    const nacked = await negativeAcknowledge(ctx, {
      cursor: this.cursor,
      consumerId: c.id,
      items: chosen.map((d) => ({ position: d.position, redeliveryCount: d.redeliveryCount })),
      delayMs: () => NACK_DELAY_MS,
      ...(deadLetter ? { deadLetter } : {}),
    });
    this.recordDeadLettered(invocation, startSeq, this.oracle.done());
    if (nacked.released.length > 0) this.counters.nacksReleasing++;
    // Only what the nack released waits for its backoff (an entry redelivered meanwhile by its
    // ack timeout is no longer the consumer's to nack).
    for (const position of nacked.released)
      this.oracle.nackGuards.set(position.toString(), now + NACK_DELAY_MS);
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
    const ownerNow = this.oracle.owners[this.oracle.owners.length - 1];
    try {
      await acknowledgeCumulative(ctx, this.cursor, c.id, last.position);
    } catch {
      return;
    }
    const at = this.oracle.done();
    if (
      ownerNow !== undefined &&
      ownerNow !== c.id &&
      this.oracle.owners.indexOf(c.id) < this.oracle.owners.indexOf(ownerNow)
    ) {
      fail('I6', `${c.id}'s cumulative ack accepted after ${ownerNow} took over`);
    }
    for (const p of this.oracle.published) {
      if (p.position.compareTo(last.position) > 0) continue;
      const key = p.position.toString();
      this.oracle.recordAck(p.position, startSeq, at);
      if (!this.oracle.adminAttempted.has(key) && !this.oracle.observed.some((o) => o.position === key)) {
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
    this.oracle.done();
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
    this.oracle.done();
  }

  /** The published entry an admin action's `pick` names, if any was published. */
  private target(pick: number): { position: Position } | undefined {
    return this.oracle.published[pick % Math.max(1, this.oracle.published.length)];
  }

  private async adminAck(action: ActionOf<'adminAck'>, { ctx, startSeq }: ActionCall): Promise<void> {
    const target = this.target(action.pick);
    if (!target) return;
    this.oracle.adminAttempted.add(target.position.toString());
    await acknowledge(ctx, this.cursor, [target.position], { byId: true });
    const at = this.oracle.done();
    const key = target.position.toString();
    this.oracle.adminAcked.add(key);
    this.oracle.recordAck(target.position, startSeq, at);
  }

  private async resetCursorTo(action: ActionOf<'resetCursor'>, { ctx, startSeq }: ActionCall): Promise<void> {
    const target = this.target(action.pick);
    if (!target) return;
    const reset: ResetMark = { to: target.position, startSeq };
    this.oracle.resets.push(reset);
    this.oracle.deadLetters.replayFrom(target.position);
    this.counters.resets++;
    this.oracle.exactCounts = false;
    // Everything before the new read position is acknowledged by the new mark-delete.
    for (const p of this.oracle.published) {
      if (p.position.compareTo(target.position) < 0) this.oracle.adminAttempted.add(p.position.toString());
    }
    // Consumers keep what they hold: an acknowledgement of it after the reset counts (I1).
    await resetCursor(ctx, this.cursor, target.position);
    this.oracle.finishReset(reset, this.oracle.done());
  }

  private async skipAll({ ctx, startSeq }: ActionCall): Promise<void> {
    this.skippedAllThisRound = true;
    for (const p of this.oracle.published) this.oracle.adminAttempted.add(p.position.toString());
    const state = await ctx.ledger.state(this.partition);
    if (!state) return;
    const to = positionBefore(endOfLog(state));
    await markDeleteForward(ctx, this.cursor, to);
    const at = this.oracle.done();
    for (const p of this.oracle.published)
      if (p.position.compareTo(to) <= 0) this.oracle.recordAck(p.position, startSeq, at);
  }

  private async expire(action: ActionOf<'expire'>, { ctx, startSeq }: ActionCall): Promise<void> {
    const target = this.target(action.pick);
    if (!target) return;
    const to = positionBefore(target.position);
    for (const p of this.oracle.published) {
      if (p.position.compareTo(to) <= 0) this.oracle.adminAttempted.add(p.position.toString());
    }
    await markDeleteForward(ctx, this.cursor, to);
    const at = this.oracle.done();
    for (const p of this.oracle.published)
      if (p.position.compareTo(to) <= 0) this.oracle.recordAck(p.position, startSeq, at);
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
    const deadLetter = this.oracle.deadLetters.producer(invocation);
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
    for (const d of got) this.oracle.checkDeadLetterCount(d);
    for (const d of got)
      this.oracle.observed.push({
        consumer: drainer.id,
        position: d.position.toString(),
        redeliveryCount: d.redeliveryCount,
        atMs: this.clock.nowMs(),
        startSeq: this.oracle.done(),
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
    for (const d of got) this.oracle.acked.set(d.position.toString(), this.oracle.done());
    return true;
  }

  /** I2, once the faults stopped and the subscription drained: everything is acknowledged, and rightly. */
  /** I2, once the faults stopped and the subscription drained: everything is acknowledged, and rightly. */
  private async checkDrained(): Promise<void> {
    for (let i = 0; i < 30; i++) await this.calm((ctx) => foldStep(ctx, this.cursor));
    this.oracle.checkDrained((await this.store.readHead(this.cursor.cursorId))?.head);
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
