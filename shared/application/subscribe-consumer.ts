import { SubscriptionAlreadyExistsError } from '../domain/catalog-errors.ts';
import { Cursor } from '../domain/cursor.ts';
import { ConflictError } from '../domain/errors.ts';
import { LedgerIndex } from '../domain/ledger-layout.ts';
import { isCumulativeAckType, type SubscriptionType } from '../domain/subscription-type.ts';
import { TopicName } from '../domain/topic-name.ts';
import type { ConsumerPartition, ConsumerRecord } from '../ports/consumer-registry.ts';
import type { SubscriptionRecord } from '../ports/topic-catalog.ts';
import { requireAction, requirePrincipal } from './authorization.ts';
import { buildConsumerPolicy, type ConsumerPolicyInput } from './consumer-policy.ts';
import { queueOf } from './delivery.ts';
import { feedBacklog, INLINE_BACKFILL, UNWRITTEN_GRACE_MS } from './feed-backlog.ts';
import type { UseCasePorts } from './ports.ts';
import type { Principal } from './principal.ts';
import { type InitialPosition, validateSubscriptionName } from './subscription-name.ts';
import { ensureTopic, requirePersistent } from './topic-lookup.ts';

/** How long an Exclusive/Failover owner stays owner without polling. */
export const OWNERSHIP_LEASE_MS = 30_000;

export interface SubscribeRequest {
  readonly topic: TopicName;
  readonly subscription: string;
  readonly subscriptionType: SubscriptionType;
  readonly initialPosition: InitialPosition;
  readonly consumerName?: string;
  readonly policy: ConsumerPolicyInput;
}

/** The key under which a subscription's owner and members are kept. */
export function subscriptionKey(topic: string, subscription: string): string {
  return `${topic}|${subscription}`;
}

/**
 * Subscribe an HTTP consumer (Pulsar's `consumer.subscribe()`).
 * 1. The caller needs `consume` on the topic; the policy must be valid (400).
 * 2. The topic is created if missing (Pulsar's allowAutoTopicCreation), and the
 *    subscription too, at the requested initial position, with its queues.
 * 3. An existing subscription of another type is a conflict (409), as is a
 *    second consumer on an Exclusive subscription whose owner is alive.
 * 4. A dead-letter policy's initial subscription is created up front.
 * 5. The consumer is recorded with its policy; its id is returned.
 */
export async function subscribeConsumer(
  ports: UseCasePorts,
  principal: Principal | undefined,
  request: SubscribeRequest,
): Promise<{ consumerId: string }> {
  const caller = requirePrincipal(principal);
  requirePersistent(request.topic);
  validateSubscriptionName(request.subscription);
  await requireAction(ports.permissions, caller, request.topic, ['consume']);
  const policy = buildConsumerPolicy(ports.backoffs, request.topic, request.subscription, request.policy);
  const record = await ensureTopic(ports, request.topic);
  const partitionNames = request.topic.isPartition
    ? [request.topic]
    : record.partitions === 0
      ? [record.topic]
      : Array.from({ length: record.partitions }, (_, i) => record.topic.partition(i));
  const subscriptions = await ensureSubscriptions(
    ports,
    partitionNames,
    request.subscription,
    request.subscriptionType,
    request.initialPosition,
  );
  const partitions: ConsumerPartition[] = partitionNames.map((partition, index) => ({
    topic: partition.toString(),
    partitionIndex: partition.partitionIndex,
    cursorId: (subscriptions[index] as SubscriptionRecord).cursorId,
  }));
  const consumerId = ports.ids.newId();
  const key = subscriptionKey(request.topic.toString(), request.subscription);
  if (request.subscriptionType === 'Exclusive') {
    const now = ports.clock.nowMs();
    if (!(await ports.consumers.claimOwnership(key, consumerId, now, now + OWNERSHIP_LEASE_MS))) {
      throw new ConflictError(
        `Exclusive subscription ${request.subscription} on ${request.topic.toString()} already has a consumer`,
      );
    }
  }
  if (policy.deadLetterPolicy?.initialSubscriptionName) {
    const deadLetterTopic = TopicName.parse(policy.deadLetterPolicy.deadLetterTopic);
    await ensureTopic(ports, deadLetterTopic);
    await ensureSubscription(
      ports,
      deadLetterTopic,
      policy.deadLetterPolicy.initialSubscriptionName,
      'Shared',
      'Earliest',
    );
  }
  const consumer: ConsumerRecord = {
    consumerId,
    consumerName: request.consumerName ?? consumerId,
    role: caller.role,
    topic: request.topic.toString(),
    subscription: request.subscription,
    subscriptionType: request.subscriptionType,
    partitions,
    policy,
    createdAtMs: ports.clock.nowMs(),
  };
  await ports.consumers.register(consumer);
  return { consumerId };
}

/**
 * The subscription of one partition, created when missing. Creation order makes
 * a concurrent publish safe: queue, then cursor, then the record, then its
 * announcement (Ledger.announceSubscriptions: publishers allocating ids after
 * it list the subscriptions again and find the record), then a feed of
 * whatever the cursor owes up to the last entry allocated before the
 * announcement: the whole backlog at Earliest, any entry allocated between the
 * cursor and the announcement at Latest. The feed waits for entries of that
 * range still being written (UNWRITTEN_GRACE_MS), since their publishers read
 * the older subscriptions version. Later entries get their tokens from
 * publish's fan-out. When the announcement or the start of the feed fails,
 * the subscription is withdrawn and the error thrown: a retry creates it
 * whole. (A process killed in between, e.g. at a function timeout, leaves the
 * record without a feed; publishers find it within RECORD_TTL_MS anyway.) The first
 * `inlineLimit` entries are enqueued before this returns; a bigger backlog
 * is fed on by the scheduler (feedBacklog), in log order but after whatever
 * publishes meanwhile put on the queue.
 * @throws ConflictError when the subscription exists with another type.
 */
export async function ensureSubscription(
  ports: UseCasePorts,
  partition: TopicName,
  name: string,
  type: SubscriptionType,
  initialPosition: InitialPosition,
  inlineLimit: number = INLINE_BACKFILL,
): Promise<SubscriptionRecord> {
  const existing = await ports.catalog.getSubscription(partition, name);
  if (existing) {
    if (existing.type !== type) {
      throw new ConflictError(
        `Subscription ${name} on ${partition.toString()} is ${existing.type}; a ${type} consumer cannot join it`,
      );
    }
    return existing;
  }
  const cursorId = ports.ids.newId();
  const record: SubscriptionRecord = { name, type, cursorId, createdAtMs: ports.clock.nowMs() };
  await ports.deliveryQueue.create(queueOf(record));
  const state = await ports.ledger.initialize(partition);
  const cursor =
    initialPosition === 'Earliest' ? Cursor.atEarliest(state.ledgers) : Cursor.atLatest(state.ledgers);
  await ports.cursors.create(cursorId, cursor.markDeletePosition);
  try {
    await ports.catalog.createSubscription(partition, record);
  } catch (error) {
    if (!(error instanceof SubscriptionAlreadyExistsError)) throw error;
    // Another consumer created it meanwhile: use theirs, drop ours.
    await ports.cursors.delete(cursorId);
    await ports.deliveryQueue.delete(queueOf(record));
    return ensureSubscription(ports, partition, name, type, initialPosition, inlineLimit);
  }
  try {
    const announced = await ports.ledger.announceSubscriptions(partition);
    const until = new LedgerIndex(announced.ledgers).lastEntry();
    if (until !== undefined) {
      await feedBacklog(ports, partition, record, {
        inlineLimit,
        until,
        awaitUnwrittenUntilMs: ports.clock.nowMs() + UNWRITTEN_GRACE_MS,
      });
    }
  } catch (error) {
    // Not announced, or its backlog not handed to the feeder: as it stands nothing would ever feed
    // it what it is owed. Take it back, so that the caller's retry creates it whole.
    await withdrawSubscription(ports, partition, record);
    throw error;
  }
  return record;
}

/**
 * Undoes a creation that failed after its record was written: the record (if
 * still this one), an announcement so that publishers stop sending to it, the
 * cursor and the queue. Best effort: each step is tried whatever the others
 * did; what fails stays (an orphan cursor or queue costs storage, nothing
 * else).
 */
async function withdrawSubscription(
  ports: UseCasePorts,
  partition: TopicName,
  record: SubscriptionRecord,
): Promise<void> {
  const attempt = async (step: () => Promise<unknown>) => {
    try {
      await step();
    } catch {
      // Best effort (see above).
    }
  };
  await attempt(async () => {
    const current = await ports.catalog.getSubscription(partition, record.name);
    if (current?.cursorId === record.cursorId) await ports.catalog.deleteSubscription(partition, record.name);
  });
  await attempt(() => ports.ledger.announceSubscriptions(partition));
  await attempt(() => ports.cursors.delete(record.cursorId));
  await attempt(() => ports.deliveryQueue.delete(queueOf(record)));
}

/** How many partitions' subscriptions are created (with their first backlog part) at once. */
export const PARTITION_CONCURRENCY = 8;

/**
 * ensureSubscription on each partition, PARTITION_CONCURRENCY at a time. The
 * partitions share INLINE_BACKFILL (at least one entry each): what a subscribe
 * enqueues itself stays about the same whatever the number of partitions, and
 * the scheduler feeds the rest.
 * @returns the subscriptions in the order of `partitions`.
 * @throws the first failure, once the partitions under way are done (no new one starts after it).
 */
export async function ensureSubscriptions(
  ports: UseCasePorts,
  partitions: readonly TopicName[],
  name: string,
  type: SubscriptionType,
  initialPosition: InitialPosition,
): Promise<SubscriptionRecord[]> {
  const inlineLimit = Math.max(1, Math.floor(INLINE_BACKFILL / Math.max(1, partitions.length)));
  const subscriptions: SubscriptionRecord[] = new Array(partitions.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (failure === undefined && next < partitions.length) {
      const index = next++;
      try {
        subscriptions[index] = await ensureSubscription(
          ports,
          partitions[index] as TopicName,
          name,
          type,
          initialPosition,
          inlineLimit,
        );
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARTITION_CONCURRENCY, partitions.length) }, worker));
  if (failure) throw failure.error;
  return subscriptions;
}

/** Ordered subscription types have one active consumer. */
export function hasSingleActiveConsumer(type: SubscriptionType): boolean {
  return isCumulativeAckType(type);
}
