import type fc from 'fast-check';
import {
  acknowledgeCumulative,
  acknowledgeMessages,
  negativeAcknowledge,
  redeliverUnacknowledged,
} from '../../../shared/application/consumers/consumer-acks.ts';
import {
  ackTimeoutDelayMs,
  negativeAckDelayMs,
} from '../../../shared/application/consumers/consumer-policy.ts';
import { closeConsumer, keepAlive } from '../../../shared/application/consumers/consumer-session.ts';
import { receiveMessages } from '../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../shared/application/consumers/subscribe-consumer.ts';
import {
  DEFAULT_ENGINE_LIMITS,
  type EngineLimits,
} from '../../../shared/application/engine/engine-context.ts';
import { maintainSubscriptions } from '../../../shared/application/maintenance/maintain-subscriptions.ts';
import { runScheduledJob } from '../../../shared/application/maintenance/run-scheduled-job.ts';
import { publishMessages } from '../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../shared/application/topics/manage-topics.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { AcklineError, NotFoundError } from '../../../shared/domain/errors.ts';
import { RoundRobinRouter } from '../../../shared/domain/message-router.ts';
import { ConsumerFencedError } from '../../../shared/domain/ownership.ts';
import { Position } from '../../../shared/domain/position.ts';
import { latestDelay } from '../../../shared/domain/redelivery-backoff.ts';
import { RedeliveryBackoffRegistry } from '../../../shared/domain/redelivery-backoff-registry.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { ConsumerPolicy } from '../../../shared/ports/consumer-registry.ts';
import type { NewEntry } from '../../../shared/ports/ledger.ts';
import { InMemoryDispatchStore, STALE_VERSIONS } from '../in-memory-dispatch-store.ts';
import { InMemoryLedger } from '../in-memory-ledger.ts';
import { ManualClock } from '../manual-clock.ts';
import { PathAdmin } from './consumer-path-admin.ts';
import { CapCheck } from './consumer-path-caps.ts';
import {
  checkDeadLetterCopies,
  checkHeldHandedOut,
  checkUnpolledDeadLetters,
  type DeadLetterCopies,
  type DrainPhase,
  drainAndCheck,
  type LostReceive,
  type Phase,
} from './consumer-path-checks.ts';
import { type HeldMessage, type PathClient, PathOracle } from './consumer-path-oracle.ts';
import { RescheduleOracle } from './consumer-path-reschedule.ts';
import { PathRunner, RUNNER_ACK_TIMEOUT_MS, RUNNER_FUNCTION_TIMEOUT_MS } from './consumer-path-runner.ts';
import type { PathAction, PathActionOf, PathBackoff, PathScript } from './consumer-path-script.ts';
import { FakeSqs } from './fake-sqs.ts';
import { mutate } from './fault-stores.ts';
import { type CallFault, Invocation, SimRejectedError } from './scheduled-ports.ts';
import { ActiveCall, SimContainer, type SimStores, simStores } from './sim-containers.ts';
import { addByIndex, emptyCounters, type SimCounters } from './sim-counters.ts';
import { Violation } from './sim-oracle.ts';
import type { Mutation } from './sim-script.ts';

/**
 * The consumer-path simulation (issue 21, criterion 1): the use cases of
 * shared/application/consumers/ (subscribe, receive with long polls and doorbells, acknowledge,
 * cumulative acknowledge, nack, redeliverUnacknowledged, close, heartbeat), the producer
 * (publishMessages, and through it the dead-letter producer), the scheduler's jobs
 * (runScheduledJob: close second passes, dead-letter timers, rings) and maintenance
 * (maintainSubscriptions: folds, lapsed consumers), run in several warm containers at once (each
 * its own caching decorators and ContainerHints, as the composition root builds them) over the
 * in-memory stores and a fake SQS (fake-sqs.ts). Every store and queue call is a scheduling
 * point; invocations crash at any call, calls are throttled (and retried), repeated, and each
 * invocation's clock is skewed and moved by its long polls. The oracle (consumer-path-oracle.ts)
 * checks every delivery; consumer-path-checks.ts checks dead letters each round, dead-lettering
 * with no consumer polling, the nack backoff's liveness and, once drained, that nothing was lost.
 */

const admin: Principal = { role: 'admin', superuser: true };
export const PATH_TOPIC = TopicName.parse('persistent://public/default/path');
const SUBSCRIPTION = 'sub';
/** Pulsar's default dead-letter topic name: {topic}-{subscription}-DLQ. */
export const PATH_DEAD_LETTER_TOPIC = TopicName.parse(`${PATH_TOPIC.toString()}-${SUBSCRIPTION}-DLQ`);
/** Consumers at most (joins stop there). */
const MAX_CLIENTS = 6;
/** Odds of a store call's fault when the script has call faults: about one call in this many. */
const CALL_FAULT_ONE_IN = 30;
/** Call indexes a fault may be drawn for (past a receive's longest sequences). */
const CALL_FAULT_SPAN = 80;

/** A seeded random source (a linear congruential generator). */
export function seededRandom(seed: number): () => number {
  let state = seed % 2_147_483_647 || 1;
  return () => {
    state = (state * 48_271) % 2_147_483_647;
    return (state - 1) / 2_147_483_646;
  };
}

function backoffInput(backoff: PathBackoff) {
  return 'fixedMs' in backoff
    ? { negativeAckRedeliveryDelayMs: backoff.fixedMs }
    : { negativeAckRedeliveryBackoff: backoff };
}

/** Runs one script; throws a Violation naming the rule when one breaks. Adds what it exercised to `counters`. */
export async function runConsumerPath(
  script: PathScript,
  scheduler: fc.Scheduler,
  counters: SimCounters = emptyCounters(),
  mutation?: Mutation,
): Promise<void> {
  await new ConsumerPathSimulation(script, scheduler, counters, mutation).run();
}

interface Running {
  readonly action: PathAction;
  readonly call: ActiveCall;
  readonly container: number;
  failed: boolean;
  /**
   * The consumer the action's pick named when it started (`consumer % clients`: a join in the
   * same round may change what the pick names later).
   */
  client?: PathClient;
}

class ConsumerPathSimulation {
  private readonly clock = new ManualClock(1_700_000_000_000);
  private readonly random: () => number;
  /** What the use cases draw (a receive's first partition): seeded apart from the script's faults. */
  private readonly portsRandom: () => number;
  private readonly stores: SimStores;
  private readonly containers: SimContainer[] = [];
  private readonly clients: PathClient[] = [];
  private readonly oracle: PathOracle;
  private readonly reschedules: RescheduleOracle;
  private readonly limits: EngineLimits;
  private readonly policy: ConsumerPolicy;
  private readonly backoffs = RedeliveryBackoffRegistry.withBuiltIns();
  /** Dead letters as they were appended: origin message id -> the invocations that appended one. */
  readonly deadLetters: DeadLetterCopies = new Map();
  /** position -> its partition index (from the message ids seen). */
  private readonly partitionOf = new Map<string, number>();
  /** Positions the producers were told they published. */
  private readonly published = new Set<string>();
  private readonly failed = new Set<Invocation>();
  /** Receives whose answer was lost (they died or failed), for checkHeldHandedOut. */
  private readonly lostReceives: LostReceive[] = [];
  private running: Running[] = [];
  private invocations = 0;
  /** The admin's cursor operations, maintenance with policies, deletions, and their checks. */
  private readonly admin: PathAdmin;
  /** I7: each consumer's holdings against its cap (Shared, Key_Shared). */
  private readonly caps: CapCheck;
  /** The Lambda consumer runner's steps (consumer-path-runner.ts), and its event-driven consumer (Shared, Key_Shared). */
  private readonly runner: PathRunner;
  private runnerClient?: PathClient;
  /** The container each invocation of the round runs in (by name: a cold one is another). */
  private readonly containerOf = new Map<Invocation, string>();

  constructor(
    private readonly script: PathScript,
    private readonly scheduler: fc.Scheduler,
    private readonly counters: SimCounters,
    mutation: Mutation | undefined,
  ) {
    this.random = seededRandom(script.seed);
    this.portsRandom = seededRandom(script.seed + 19);
    const staleRandom = seededRandom(script.seed + 7);
    // One eventually consistent head read in four answers any of the last STALE_VERSIONS versions.
    const dispatch = new InMemoryDispatchStore(() =>
      staleRandom() < 0.25 ? 1 + Math.floor(staleRandom() * STALE_VERSIONS) : 0,
    );
    this.stores = simStores({
      ledger: trimming(new InMemoryLedger(script.rounds.length > 6 ? 20 : 1_000), mutation),
      dispatch,
      engineStore: mutate(dispatch, mutation),
      sqs: new FakeSqs(
        { lose: 0.1, duplicate: 0.1, partial: 0.2, falseEmpty: 0.2, undeleted: 0.05 },
        seededRandom(script.seed + 13),
      ),
    });
    this.limits = {
      ...DEFAULT_ENGINE_LIMITS,
      maxUnackedPerSubscription: script.maxUnacked,
      // Broken on purpose (noConsumerCap): the containers ignore the cap the check holds them to.
      maxUnackedPerConsumer: mutation === 'noConsumerCap' ? 50_000 : script.maxUnackedPerConsumer,
    };
    this.caps = new CapCheck({
      stores: this.stores,
      ctx: {
        store: this.stores.dispatch,
        ledger: this.stores.ledger,
        clock: this.clock,
        limits: this.limits,
      },
      partitions:
        script.partitions === 0
          ? [PATH_TOPIC]
          : Array.from({ length: script.partitions }, (_, i) => PATH_TOPIC.partition(i)),
      cap: script.maxUnackedPerConsumer,
      counters,
    });
    this.policy = this.consumerPolicy();
    this.oracle = new PathOracle(
      {
        type: script.type,
        skewMs: script.skewMs,
        ...(script.deadLetter !== undefined ? { deadLetter: script.deadLetter } : {}),
        ackTimeoutDelayMs: (count) => ackTimeoutDelayMs(this.backoffs, this.policy, count),
        nackDelayMs: (count) => negativeAckDelayMs(this.backoffs, this.policy, count, () => 0),
      },
      this.clients,
      (position) => this.partitionOf.get(position),
    );
    // A reset after a reschedule hands the entry out again at once (as Pulsar's reset clears what waits).
    this.reschedules = new RescheduleOracle(script.skewMs, counters, (position, seq) =>
      this.oracle.resetOverlaps(position, seq),
    );
    this.oracle.afterDelivery = (message) => this.reschedules.delivered(message);
    this.admin = new PathAdmin({
      script,
      topic: PATH_TOPIC,
      oracle: this.oracle,
      stores: this.stores,
      clock: this.clock,
      counters,
      deadLetters: this.deadLetters,
      partitionOf: this.partitionOf,
      clients: this.clients,
      ...(mutation ? { mutation } : {}),
    });
    this.runner = new PathRunner({
      oracle: this.oracle,
      counters,
      stores: this.stores,
      deadLetters: this.deadLetters,
      maybeAcked: this.admin.maybeAcked,
      mayBeAcked: (position) => this.admin.mayBeAcked(position),
      deleting: () => this.admin.deletion !== undefined,
      noteMessageId: (messageId) => this.noteMessageId(messageId),
      mutation,
      deadLetterPolicy: script.deadLetter !== undefined,
    });
    for (let i = 0; i < script.containers; i++) this.containers.push(this.newContainer(i));
  }

  /** The policy every consumer subscribes with, as subscribe stores it (for the oracle's delays). */
  private consumerPolicy(): ConsumerPolicy {
    const { ackTimeoutMs, ackTimeoutBackoff, nackBackoff, deadLetter } = this.script;
    const nack = backoffInput(nackBackoff);
    return {
      ackTimeoutMs,
      negativeAckRedeliveryDelayMs: 'fixedMs' in nackBackoff ? nackBackoff.fixedMs : 60_000,
      ...(ackTimeoutBackoff
        ? {
            ackTimeoutRedeliveryBackoff: this.backoffs
              .create('MultiplierRedeliveryBackoff', ackTimeoutBackoff)
              .toJSON(),
          }
        : {}),
      ...('negativeAckRedeliveryBackoff' in nack
        ? {
            negativeAckRedeliveryBackoff: this.backoffs
              .create('MultiplierRedeliveryBackoff', nack.negativeAckRedeliveryBackoff)
              .toJSON(),
          }
        : {}),
      ...(deadLetter !== undefined
        ? {
            deadLetterPolicy: {
              maxRedeliverCount: deadLetter,
              deadLetterTopic: PATH_DEAD_LETTER_TOPIC.toString(),
            },
          }
        : {}),
    };
  }

  private newContainer(index: number): SimContainer {
    return new SimContainer(`w${index}.${this.invocations}`, this.stores, {
      deployment: this.clock,
      scheduler: this.scheduler,
      limits: this.limits,
      random: this.portsRandom,
      onCall: (call, port, method, args) => this.heard(call, port, method, args),
    });
  }

  /** Dead letters, as they are appended to the dead-letter topic (each time, when applied twice). */
  private heard(call: ActiveCall | undefined, port: string, method: string, args: unknown[]): void {
    if (port !== 'ledger' || method !== 'append' || !call) return;
    const [partition, entries] = args as [TopicName, readonly NewEntry[]];
    if (partition.partitionedTopicName.toString() !== PATH_DEAD_LETTER_TOPIC.toString()) return;
    for (const entry of entries) {
      const origin = entry.properties?.ORIGIN_MESSAGE_ID ?? '?';
      const copies = this.deadLetters.get(origin) ?? [];
      copies.push({ invocation: call.invocation, atMs: call.trueNowMs() });
      this.deadLetters.set(origin, copies);
    }
  }

  async run(): Promise<void> {
    await this.setUp();
    for (const round of this.script.rounds) await this.runRound(round.actions, round.advanceMs);
    const exactAtEnd = this.oracle.exact;
    if (this.admin.deletion) {
      // The subscription or the topic is gone (or, when its deletion did not answer, may be).
      await this.admin.checkDeleted({ ...this.drainPhase(), clients: this.clients });
      this.count(exactAtEnd);
      return;
    }
    await checkUnpolledDeadLetters(this.quietPhase());
    this.oracle.exact = false;
    await drainAndCheck(this.drainPhase());
    this.count(exactAtEnd);
  }

  private count(exact: boolean): void {
    const c = this.counters;
    c.schedules++;
    if (exact) c.exactCountSchedules++;
    if (this.script.partitions > 0) c.partitionedSchedules++;
    for (const seen of this.oracle.deliveries.values()) c.deliveries += seen.length;
    c.redeliveredTwice += this.oracle.redeliveredTwice;
    c.redeliveredAfterReset += this.oracle.redeliveredAfterReset;
    c.ownershipChecks += this.oracle.ownershipChecks;
    c.ackTimeoutsFired += this.oracle.ackTimeoutsFired;
    for (const copies of this.deadLetters.values()) c.deadLetters += copies.length;
    c.lostConditionalWrites += this.stores.dispatch.usage.failedConditionalWrites;
    addByIndex(c.staleHeadReads, this.stores.dispatch.usage.staleHeadReads);
    const { tally } = this.stores.sqs;
    c.ringsLost += tally.lost;
    c.ringsDuplicated += tally.duplicated;
    c.falseEmptyPolls += tally.falseEmpties + tally.partialReceives;
    c.longPollsWaited += tally.longPollsWaited;
  }

  /** A calm invocation (no crash, no fault, no skew) in container 0, run to its end. */
  async calm<T>(work: (ports: UseCasePorts) => Promise<T>): Promise<T> {
    const call = new ActiveCall(new Invocation(`calm${++this.invocations}`), this.clock, 0);
    const container = this.containers[0] as SimContainer;
    return this.scheduler.waitFor(container.run(call, work));
  }

  private async setUp(): Promise<void> {
    const { ttlSeconds, retention } = this.script;
    if (ttlSeconds !== undefined || retention !== undefined) {
      await this.stores.policies.update(
        { namespace: PATH_TOPIC.namespaceName },
        {
          ...(ttlSeconds !== undefined ? { messageTTLInSeconds: ttlSeconds } : {}),
          ...(retention ? { retention } : {}),
        },
      );
    }
    if (this.script.partitions > 0) {
      await this.calm((ports) => createTopic(ports, admin, PATH_TOPIC, this.script.partitions));
    }
    for (let i = 0; i < this.script.consumers; i++) {
      const client = this.newClient();
      try {
        client.id = await this.calm((ports) => this.subscribe(ports));
      } catch (error) {
        // A second consumer of an Exclusive subscription is refused (409), as in Pulsar.
        if (!(error instanceof AcklineError)) throw error;
        client.state = 'gone';
      }
    }
    const runs = this.script.rounds.some((round) => round.actions.some((a) => a.kind === 'runner'));
    if (this.shared && runs) {
      const client = this.newClient(RUNNER_ACK_TIMEOUT_MS);
      client.id = await this.calm((ports) => this.subscribe(ports, true));
      this.runnerClient = client;
    }
  }

  private newClient(ackTimeoutMs?: number): PathClient {
    const client: PathClient = {
      ...(ackTimeoutMs !== undefined ? { ackTimeoutMs } : {}),
      index: this.clients.length,
      state: 'open',
      held: [],
      releasedSinceSeq: 0,
      mustRewind: false,
    };
    this.clients.push(client);
    return client;
  }

  /** A consumer subscribes: one that receives over HTTP, or (`lambda`) the runner's event-driven one. */
  private async subscribe(ports: UseCasePorts, lambda = false): Promise<string> {
    const { ackTimeoutMs, ackTimeoutBackoff, nackBackoff, deadLetter } = this.script;
    const { consumerId } = await subscribeConsumer(ports, admin, {
      topic: PATH_TOPIC,
      subscription: SUBSCRIPTION,
      subscriptionType: this.script.type,
      initialPosition: 'Earliest',
      leaseMs: this.script.leaseMs,
      ...(lambda ? { lambda: { functionTimeoutMs: RUNNER_FUNCTION_TIMEOUT_MS } } : {}),
      policy: {
        ackTimeoutMs,
        ...(ackTimeoutBackoff ? { ackTimeoutRedeliveryBackoff: ackTimeoutBackoff } : {}),
        ...backoffInput(nackBackoff),
        ...(deadLetter !== undefined ? { deadLetterPolicy: { maxRedeliverCount: deadLetter } } : {}),
      },
    });
    return consumerId;
  }

  /** The faults of one invocation's calls (none without call faults), drawn from the script's seed. */
  private callFaults(): Map<number, CallFault> {
    const faults = new Map<number, CallFault>();
    if (!this.script.callFaults) return faults;
    for (let index = 0; index < CALL_FAULT_SPAN; index++) {
      if (this.random() * CALL_FAULT_ONE_IN >= 1) continue;
      const draw = this.random();
      faults.set(
        index,
        draw < 0.5
          ? { kind: 'throttled', attempts: 1 + Math.floor(this.random() * 3) }
          : draw < 0.75
            ? { kind: 'timeout' }
            : { kind: 'later' },
      );
    }
    return faults;
  }

  /** One round: its actions at once (one after the other within a container), then what follows. */
  private async runRound(actions: readonly PathAction[], advanceMs: number): Promise<void> {
    const settled: { error?: unknown }[] = [];
    this.running = [];
    actions.forEach((action, i) => {
      const index = action.container % this.containers.length;
      const invocation = new Invocation(`i${++this.invocations}`, action.crash, undefined, this.callFaults());
      const skewMs = Math.floor(this.random() * (this.script.skewMs + 1));
      const call = new ActiveCall(invocation, this.clock, skewMs);
      const running: Running = { action, call, container: index, failed: false };
      this.running.push(running);
      const container = this.containers[index] as SimContainer;
      this.containerOf.set(invocation, container.name);
      const startSeq = this.oracle.next();
      container
        .run(call, (ports) => this.perform(action, { ports, call, startSeq }, running))
        .catch((error: unknown) => this.answered(running, error))
        .then(
          () => {
            settled[i] = {};
          },
          (error: unknown) => {
            settled[i] = { error };
          },
        );
    });
    for (let idle = 0; idle < 3; ) {
      await this.scheduler.waitAll();
      await new Promise((resolve) => setImmediate(resolve));
      idle = this.scheduler.count() === 0 ? idle + 1 : 0;
    }
    for (const result of settled) if (result?.error) throw result.error;
    this.running.forEach(({ action, call }, i) => {
      if (settled[i] === undefined && !call.invocation.dead) {
        throw new Violation(
          `liveness: ${action.kind} (${call.invocation.id}) neither ended nor died: it waits on something no call settles`,
        );
      }
    });
    this.afterRound();
    await this.admin.roundEnd();
    this.runner.roundEnd();
    if (this.shared) await this.caps.check(this.clients, this.clock.nowMs());
    this.containerOf.clear();
    // A reset may make a message dead-lettered before unacknowledged again: the policy applies again.
    checkDeadLetterCopies(this.deadLetters, this.failed, this.oracle.resets.length);
    await checkHeldHandedOut(this.quietPhase(), this.lostReceives);
    const waited = Math.max(0, ...this.running.map((r) => r.call.waitedMs));
    this.clock.advance(Math.max(advanceMs, waited));
  }

  /** A call that answered an error: an answer the client handles, or a violation. */
  private answered(running: Running, error: unknown): void {
    const { action, client } = running;
    if (error instanceof Violation) throw error;
    if (error instanceof SimRejectedError) {
      this.counters.rejectedStoreCalls++;
    } else if (!(error instanceof AcklineError)) {
      throw new Violation(`unexpected error in ${action.kind}: ${(error as Error).stack ?? String(error)}`);
    }
    running.failed = true;
    this.failed.add(running.call.invocation);
    if (client && (error instanceof ConsumerFencedError || error instanceof NotFoundError)) {
      if (error instanceof ConsumerFencedError) this.counters.replacedOwnerCalls++;
      client.state = 'gone';
      client.held = [];
    }
    if ((action.kind === 'receive' || action.kind === 'runner') && client)
      this.receiveLost(client, running.call);
  }

  /**
   * A receive whose answer never came may have claimed (what it claimed is held, unseen, from its
   * start to its end by its own clock): counts are no longer exact; an ordered consumer rewinds.
   */
  private receiveLost(client: PathClient, call: ActiveCall): void {
    this.lostReceives.push({
      client: client.index,
      fromMs: call.nowMs() - call.waitedMs,
      toMs: call.nowMs(),
    });
    this.oracle.exact = false;
    if (this.ordered) client.mustRewind = true;
  }

  private get shared(): boolean {
    return this.script.type === 'Shared' || this.script.type === 'Key_Shared';
  }

  private get ordered(): boolean {
    return this.script.type === 'Exclusive' || this.script.type === 'Failover';
  }

  /** After a round: dead invocations' containers start cold; consumers maintenance removed are gone. */
  private afterRound(): void {
    for (const running of this.running) {
      const { invocation } = running.call;
      const { action } = running;
      if (action.kind === 'receive' && (invocation.dead || running.failed)) {
        // Its claim may have applied with nobody seeing it: up to `max` more held in no container's count.
        const container = this.containerOf.get(invocation) ?? '?';
        const client = running.client ?? this.clientOf(action.consumer);
        this.caps.received(client, container, running.call.trueNowMs(), action.max);
      }
      this.countCalls(invocation);
      if (invocation.runaway) {
        throw new Violation(
          `liveness: ${running.action.kind} (${invocation.id}) made ${invocation.calls} store calls without ending`,
        );
      }
      if (!invocation.dead) continue;
      this.failed.add(invocation);
      this.counters.coldStarts++;
      this.containers[running.container] = this.newContainer(running.container);
      if ((action.kind === 'receive' || action.kind === 'runner') && running.client)
        this.receiveLost(running.client, running.call);
    }
    for (const client of this.clients) {
      if (client.state !== 'open' || !client.id || this.stores.consumers.records.has(client.id)) continue;
      client.state = 'gone';
      client.held = [];
      this.counters.lapsedReleased++;
    }
  }

  private countCalls(invocation: Invocation): void {
    const c = this.counters;
    c.callsAppliedTwice += invocation.faultsMet.appliedTwice;
    c.refusedAttempts += invocation.faultsMet.refusedAttempts;
    if (!invocation.crash) return;
    if (!invocation.dead) {
      c.crashPlansUnreached++;
      return;
    }
    c.crashes++;
    const at = invocation.crash.atCall;
    for (let i = c.crashesByCall.length; i <= at; i++) c.crashesByCall[i] = 0;
    c.crashesByCall[at] = (c.crashesByCall[at] ?? 0) + 1;
  }

  /** The consumer an action's pick names (the runner's event-driven consumer receives only through its runner). */
  private clientOf(pick: number): PathClient {
    const clients = this.clients.filter((client) => client !== this.runnerClient);
    return clients[pick % clients.length] as PathClient;
  }

  private async perform(
    action: PathAction,
    call: { ports: UseCasePorts; call: ActiveCall; startSeq: number },
    running: Running,
  ): Promise<void> {
    if (action.kind === 'publish') return this.publish(action, call);
    if (action.kind === 'join') return this.join(call.ports);
    if (action.kind === 'scheduler') return this.runJobs(call.ports, call.startSeq);
    if (action.kind === 'reschedule') return this.reschedule(action, call);
    if (action.kind === 'runner') return this.runRunner(action, call, running);
    if (
      action.kind === 'maintenance' ||
      action.kind === 'reset' ||
      action.kind === 'skip' ||
      action.kind === 'expire' ||
      action.kind === 'delete'
    ) {
      return this.admin.perform(action, call);
    }
    const client = this.clientOf(action.consumer);
    running.client = client;
    if (client.state !== 'open' || !client.id) return;
    return this.consumerCall(action, client, call);
  }

  private async consumerCall(
    action: Exclude<
      PathAction,
      { kind: 'publish' | 'join' | 'scheduler' | 'maintenance' | 'reset' | 'skip' | 'expire' | 'delete' }
    >,
    client: PathClient,
    call: { ports: UseCasePorts; call: ActiveCall; startSeq: number },
  ): Promise<void> {
    const { ports, startSeq } = call;
    const id = client.id as string;
    switch (action.kind) {
      case 'receive':
        return this.receive(action, client, call);
      case 'ack':
        return this.ack(action, client, call);
      case 'nack':
        return this.nack(action, client, call);
      case 'cumulativeAck':
        return this.cumulativeAck(client, call);
      case 'redeliver':
        client.held = [];
        client.releasedSinceSeq = startSeq;
        await redeliverUnacknowledged(ports, admin, id, []);
        // It may give back what a receive of this consumer running alongside claimed before it
        // (Pulsar's redeliverUnacknowledgedMessages takes in-flight messages too): from its end.
        client.releasedSinceSeq = this.oracle.next();
        client.gaveBackAtSeq = client.releasedSinceSeq;
        return;
      case 'close':
        client.state = 'gone';
        client.held = [];
        client.releasedSinceSeq = startSeq;
        await closeConsumer(ports, admin, id);
        return;
      case 'heartbeat':
        await keepAlive(ports, admin, id);
        this.counters.heartbeats++;
        return;
    }
  }

  /** The Lambda consumer runner's step, for its event-driven consumer (none: Exclusive, Failover). */
  private async runRunner(
    action: PathActionOf<'runner'>,
    call: { ports: UseCasePorts; call: ActiveCall; startSeq: number },
    running: Running,
  ): Promise<void> {
    const client = this.runnerClient;
    if (!client || client.state !== 'open' || !client.id) return;
    running.client = client;
    // As a receive: a step that may die or fail after its claim leaves counts inexact.
    if (action.crash || call.call.invocation.faults.size > 0) this.oracle.exact = false;
    const { lost } = await this.runner.run(action, client, call);
    if (lost) this.receiveLost(client, call.call);
  }

  /** An operator reschedules one published message (consumer-path-reschedule.ts checks it). */
  private async reschedule(
    action: PathActionOf<'reschedule'>,
    { ports, call, startSeq }: { ports: UseCasePorts; call: ActiveCall; startSeq: number },
  ): Promise<void> {
    const positions = [...this.published];
    const position = positions[action.pick % Math.max(positions.length, 1)];
    if (position === undefined) return;
    const messageId = `${position}:${this.partitionOf.get(position) ?? -1}`;
    const before = this.counters.reschedules;
    await this.reschedules.reschedule({
      ports,
      principal: admin,
      topic: PATH_TOPIC,
      subscription: SUBSCRIPTION,
      messageId,
      delayMs: action.delayMs,
      earlier: action.earlier,
      startSeq,
      trueStartMs: call.trueNowMs(),
    });
    if (this.counters.reschedules > before) this.oracle.rescheduled(position);
  }

  private async publish(
    action: PathActionOf<'publish'>,
    { ports, call }: { ports: UseCasePorts; call: ActiveCall },
  ): Promise<void> {
    const now = ports.clock.nowMs();
    const messages: NewEntry[] = Array.from({ length: action.count }, (_, i) => ({
      payload: `p${this.invocations}.${i}`,
      key: `k${(this.invocations + i) % action.keys}`,
      properties: {},
      ...(action.delayMs > 0 ? { deliverAtMs: now + action.delayMs } : {}),
    }));
    const results = await publishMessages(ports, admin, PATH_TOPIC, {
      messages,
      router: new RoundRobinRouter(this.invocations),
    });
    for (const { messageId } of results)
      this.admin.published(this.noteMessageId(messageId, true), call.trueNowMs());
  }

  /** `L:E:P` -> `L:E`, noting its partition. */
  private noteMessageId(messageId: string, published = false): string {
    const [ledger, entry, partition] = messageId.split(':');
    const position = `${ledger}:${entry}`;
    this.partitionOf.set(position, Number(partition));
    if (published) this.published.add(position);
    return position;
  }

  private async join(ports: UseCasePorts): Promise<void> {
    if (this.clients.length >= MAX_CLIENTS) return;
    const id = await this.subscribe(ports);
    const client = this.newClient();
    client.id = id;
    if (this.script.type === 'Key_Shared') this.counters.keySharedJoins++;
    this.counters.joins++;
  }

  /** The scheduler's delay queue hands over what is due; a job is deleted once it ran (at least once). */
  private async runJobs(ports: UseCasePorts, startSeq: number): Promise<void> {
    this.oracle.releaseAll(startSeq);
    const now = ports.clock.nowMs();
    const due = this.stores.scheduler.jobs.filter((job) => job.dueAtMs <= now);
    for (const job of due) {
      await runScheduledJob(ports, job);
      const at = this.stores.scheduler.jobs.indexOf(job);
      if (at !== -1) this.stores.scheduler.jobs.splice(at, 1);
      this.counters.schedulerJobs++;
    }
  }

  private async receive(
    action: PathActionOf<'receive'>,
    client: PathClient,
    { ports, call, startSeq }: { ports: UseCasePorts; call: ActiveCall; startSeq: number },
  ): Promise<void> {
    const id = client.id as string;
    if (client.mustRewind) {
      // The SDK's rule after a failed receive on Exclusive/Failover: redeliver before going on.
      client.held = [];
      client.releasedSinceSeq = startSeq;
      await redeliverUnacknowledged(ports, admin, id, []);
      client.mustRewind = false;
      return;
    }
    // A receive that may die or fail after its claim commits deliveries nobody sees, and another
    // receive of the same round may hand them out again (count + 1): counts stay increasing, no
    // longer exact, from its start on.
    if (action.crash || call.invocation.faults.size > 0) this.oracle.exact = false;
    const messages = await receiveMessages(ports, admin, id, {
      maxMessages: action.max,
      waitMs: action.waitMs,
      deadlineMs: ports.clock.nowMs() + 25_000,
    });
    if (action.waitMs > 0) this.counters.longPolls++;
    const seq = this.oracle.next();
    this.caps.received(
      client,
      this.containerOf.get(call.invocation) ?? '?',
      call.trueNowMs(),
      messages.length,
    );
    for (const message of messages) {
      const held: HeldMessage = {
        position: this.noteMessageId(message.messageId),
        messageId: message.messageId,
        handle: message.deliveryHandle,
        count: message.redeliveryCount,
        key: message.key,
        atMs: call.trueNowMs(),
        seq,
      };
      this.oracle.delivered(client, held, startSeq);
      client.held.push(held);
    }
  }

  private async ack(
    action: PathActionOf<'ack'>,
    client: PathClient,
    { ports }: { ports: UseCasePorts },
  ): Promise<void> {
    const chosen = choose(client.held, action.pick);
    if (chosen.length === 0) return;
    client.held = client.held.filter((h) => !chosen.includes(h));
    for (const h of chosen) this.admin.maybeAcked.add(h.position);
    await acknowledgeMessages(ports, admin, client.id as string, {
      messageIds: action.byId ? chosen.map((h) => h.messageId) : [],
      deliveryHandles: action.byId ? [] : chosen.map((h) => h.handle),
    });
    const seq = this.oracle.next();
    for (const h of chosen) this.oracle.acknowledged(h.position, seq);
  }

  private async nack(
    action: PathActionOf<'nack'>,
    client: PathClient,
    { ports, call, startSeq }: { ports: UseCasePorts; call: ActiveCall; startSeq: number },
  ): Promise<void> {
    const chosen = choose(client.held, action.pick);
    if (chosen.length === 0) return;
    client.held = client.held.filter((h) => !chosen.includes(h));
    const startMs = call.trueNowMs();
    await negativeAcknowledge(ports, admin, client.id as string, {
      messageIds: [],
      deliveryHandles: chosen.map((h) => h.handle),
      ...(action.delayMs !== undefined ? { delayMs: action.delayMs } : {}),
    });
    const endSeq = this.oracle.next();
    const { delayMs } = action;
    for (const h of chosen) this.oracle.nack(client, h, { startSeq, atMs: startMs, endSeq, delayMs });
    if (delayMs !== undefined) this.counters.nacksWithDelay++;
    this.counters.nacksReleasing++;
  }

  private async cumulativeAck(client: PathClient, { ports }: { ports: UseCasePorts }): Promise<void> {
    if (!this.ordered) return;
    const last = client.held.at(-1);
    if (!last) return;
    const partition = this.partitionOf.get(last.position);
    const covered = (position: string) =>
      this.partitionOf.get(position) === partition && comparePositions(position, last.position) <= 0;
    client.held = client.held.filter((h) => !covered(h.position));
    for (const position of this.admin.publishedAtMs.keys())
      if (covered(position)) this.admin.maybeAcked.add(position);
    await acknowledgeCumulative(ports, admin, client.id as string, last.messageId);
    const seq = this.oracle.next();
    for (const position of this.oracle.deliveries.keys())
      if (covered(position)) this.oracle.acknowledged(position, seq);
  }

  // The phases after the rounds (consumer-path-checks.ts reads what they return).

  /** No consumer receives: time passes second by second, heartbeats keep the consumers, the scheduler runs. */
  private quietPhase(): Phase {
    return {
      deadLetters: this.deadLetters,
      clients: this.clients,
      oracle: this.oracle,
      stores: this.stores,
      clock: this.clock,
      script: this.script,
      failed: this.failed,
      counters: this.counters,
      keepAlive: (id: string) => this.calm((ports) => keepAlive(ports, admin, id)),
      mayBeAcked: (position: string) => this.admin.mayBeAcked(position),
      runJobs: () => this.calm((ports) => this.runJobs(ports, this.oracle.next())),
      maintain: () =>
        this.calm((ports) => maintainSubscriptions(ports, { deadlineMs: ports.clock.nowMs() + 60_000 })),
    };
  }

  /** Faults stop: the consumers close, a fresh consumer drains the subscription. */
  private drainPhase(): DrainPhase {
    return {
      ...this.quietPhase(),
      published: this.published,
      partitionOf: this.partitionOf,
      close: (id: string) => this.calm((ports) => closeConsumer(ports, admin, id)),
      subscribe: () => this.calm((ports) => this.subscribe(ports)),
      receive: (id: string) =>
        this.calm((ports) => receiveMessages(ports, admin, id, { maxMessages: 20, waitMs: 0 })),
      ack: (id: string, handles: string[]) =>
        this.calm((ports) =>
          acknowledgeMessages(ports, admin, id, { messageIds: [], deliveryHandles: handles }),
        ),
      nack: (id: string, handles: string[]) =>
        this.calm((ports) =>
          negativeAcknowledge(ports, admin, id, { messageIds: [], deliveryHandles: handles }),
        ),
      noteMessageId: (messageId: string) => this.noteMessageId(messageId),
      nackDelayMs: (count: number) => negativeAckDelayMs(this.backoffs, this.policy, count, () => 0),
      nackLatestDelayMs: (count: number) => {
        const json = this.policy.negativeAckRedeliveryBackoff;
        return json
          ? latestDelay(this.backoffs.fromJson(json), count)
          : this.policy.negativeAckRedeliveryDelayMs;
      },
    };
  }
}

/** `ledger`, or with mutation `trimUnconsumed` a ledger whose trim deletes past what every subscription consumed. */
function trimming(ledger: InMemoryLedger, mutation: Mutation | undefined): InMemoryLedger {
  if (mutation !== 'trimUnconsumed') return ledger;
  const trim = ledger.trim.bind(ledger);
  ledger.trim = (partition, request) =>
    trim(partition, { ...request, consumedUpTo: Position.of(1_000_000_000n, 0n) });
  return ledger;
}

function choose<T>(items: readonly T[], pick: number): T[] {
  if (items.length === 0) return [];
  const chosen = items.filter((_, i) => ((pick >> (i % 16)) & 1) === 1);
  return chosen.length > 0 ? chosen : [items[pick % items.length] as T];
}

/** Compares two `L:E` positions. */
export function comparePositions(a: string, b: string): number {
  const [la, ea] = a.split(':').map(BigInt) as [bigint, bigint];
  const [lb, eb] = b.split(':').map(BigInt) as [bigint, bigint];
  return la !== lb ? (la < lb ? -1 : 1) : ea < eb ? -1 : ea > eb ? 1 : 0;
}
