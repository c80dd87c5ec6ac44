import { SubscriptionAlreadyExistsError, TopicNotFoundError } from '../../domain/catalog-errors.ts';
import { ConflictError, ForbiddenError, ValidationError } from '../../domain/errors.ts';
import type { HashRange } from '../../domain/key-shared-sticky.ts';
import { type InitialPosition, validateSubscriptionName } from '../../domain/subscription-name.ts';
import { isCumulativeAckType, type SubscriptionType } from '../../domain/subscription-type.ts';
import { TopicName } from '../../domain/topic-name.ts';
import type { ConsumerPartition, ConsumerRecord, DeadLetterPolicy } from '../../ports/consumer-registry.ts';
import type { SubscriptionRecord } from '../../ports/topic-catalog.ts';
import { claimOwnership } from '../engine/dispatcher.ts';
import { cursorOf, engineOf } from '../engine/engine-ports.ts';
import { keySharedJoined, keySharedJoinMark } from '../engine/key-shared-routing.ts';
import { createSubscriptionCursor } from '../engine/subscription-cursor.ts';
import { markConsumerActive, markSubscriptionActive } from '../maintenance/activity.ts';
import { requireConsumerRoom, requireSubscriptionRoom } from '../subscriptions/subscription-limits.ts';
import { requireAction, requirePrincipal } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import { ensureTopic, requirePersistent } from '../topics/topic-lookup.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { buildConsumerPolicy, type ConsumerPolicyInput } from './consumer-policy.ts';
import { DEFAULT_CONSUMER_LEASE_MS, dispatchConsumerOf, subscriptionKey } from './consumer-session.ts';
import { doorbellOf, ringAt } from './doorbells.ts';
import { requireKeySharedFit, requireKeySharedFitAfterJoin } from './key-shared-sticky.ts';

export interface SubscribeRequest {
  readonly topic: TopicName;
  readonly subscription: string;
  readonly subscriptionType: SubscriptionType;
  readonly initialPosition: InitialPosition;
  readonly consumerName?: string;
  readonly policy: ConsumerPolicyInput;
  /** How long the consumer stays alive without a call (default 60 s). */
  readonly leaseMs?: number;
  /** An event-driven (Lambda) consumer: durable, not leased; its function's timeout. */
  readonly lambda?: { readonly functionTimeoutMs: number };
  /** Key_Shared sticky: the hash ranges the consumer owns (validated: see validateHashRanges). */
  readonly hashRanges?: readonly HashRange[];
}

/**
 * Subscribe an HTTP consumer (Pulsar's `consumer.subscribe()`).
 * 1. The caller needs `consume` on the topic; the policy must be valid (400).
 * 2. The topic is created if missing (Pulsar's allowAutoTopicCreation), and the
 *    subscription too, at the requested initial position, with its queues.
 * 3. An existing subscription of another type is a conflict (409), as is a
 *    second consumer on an Exclusive subscription whose owner is alive, and one more
 *    consumer on a subscription at maxConsumersPerSubscription; a new subscription on a
 *    topic at maxSubscriptionsPerTopic is refused (412).
 * 4. A dead-letter policy's initial subscription is created up front; with none named, ackline
 *    creates `{subscription}-DLQ-sub` (see ensureDeadLetterSubscription).
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
  const deadLetter = policy.deadLetterPolicy;
  if (deadLetter) {
    // Writes made on the caller's behalf later are authorised as the caller, now (and again then).
    const deadLetterTopic = TopicName.parse(deadLetter.deadLetterTopic);
    await requireAction(ports.permissions, caller, deadLetterTopic, ['produce']);
    if (deadLetter.initialSubscriptionName) {
      await requireAction(ports.permissions, caller, deadLetterTopic, ['consume']);
    } else {
      defaultDeadLetterSubscription(request.subscription); // a name too long is refused before any write
    }
  }
  const record = await ensureTopic(ports, request.topic);
  await requireConsumerRoom(ports, request.topic, request.subscription);
  const partitionNames = request.topic.isPartition
    ? [request.topic]
    : record.partitions === 0
      ? [record.topic]
      : Array.from({ length: record.partitions }, (_, i) => record.topic.partition(i));
  const subscriptions = await ensureSubscriptions(ports, partitionNames, {
    name: request.subscription,
    type: request.subscriptionType,
    initialPosition: request.initialPosition,
  });
  const partitions: ConsumerPartition[] = partitionNames.map((partition, index) => ({
    topic: partition.toString(),
    partitionIndex: partition.partitionIndex,
    cursorId: (subscriptions[index] as SubscriptionRecord).cursorId,
  }));
  const now = ports.clock.nowMs();
  if (deadLetter) await ensureDeadLetterSubscription(ports, caller, deadLetter, request.subscription);
  const consumerId = ports.ids.newId();
  await requireKeySharedFit(ports, request, consumerId);
  const joinedAfter: Record<string, string> = {};
  if (request.subscriptionType === 'Key_Shared') {
    for (const partition of partitions) {
      const cursor = {
        partition: TopicName.parse(partition.topic),
        cursorId: partition.cursorId,
        type: request.subscriptionType,
      };
      // Taken on the head it marks as joining: no receive gives this member's keys to others later.
      joinedAfter[partition.cursorId] = (
        await keySharedJoinMark(engineOf(ports), cursor, consumerId)
      ).toString();
    }
  }
  const leaseMs = request.leaseMs ?? DEFAULT_CONSUMER_LEASE_MS;
  const consumer: ConsumerRecord = {
    consumerId,
    consumerName: request.consumerName ?? consumerId,
    role: caller.role,
    topic: request.topic.toString(),
    subscription: request.subscription,
    subscriptionType: request.subscriptionType,
    partitions,
    policy,
    createdAtMs: now,
    superuser: caller.superuser,
    ...(request.lambda
      ? { kind: 'lambda' as const, functionTimeoutMs: request.lambda.functionTimeoutMs }
      : { kind: 'http' as const, leaseMs }),
    ...(request.subscriptionType === 'Key_Shared' ? { joinedAfter } : {}),
    ...(request.hashRanges ? { hashRanges: request.hashRanges } : {}),
  };
  if (isCumulativeAckType(request.subscriptionType)) {
    // The first consumer of an Exclusive/Failover subscription becomes its active one at once;
    // a second Exclusive one is refused (409) while the first is alive.
    for (const partition of partitions) {
      await claimOwnership(
        engineOf(ports),
        cursorOf(consumer, partition),
        dispatchConsumerOf(ports, consumer, partition),
      );
    }
  }
  await ports.consumers.register(consumer);
  await markConsumerActive(ports, consumer);
  await ports.consumers.heartbeat(
    subscriptionKey(consumer.topic, consumer.subscription),
    consumerId,
    request.lambda ? Number.MAX_SAFE_INTEGER : now + leaseMs,
  );
  await requireKeySharedFitAfterJoin(ports, consumer, request);
  if (request.subscriptionType === 'Key_Shared') {
    // A receive that met the `joining` mark handed nothing out and waits on the doorbell (see
    // joinPending): one ring per partition whose mark this call cleared wakes it.
    for (const partition of partitions) {
      if (await keySharedJoined(engineOf(ports), cursorOf(consumer, partition), consumerId))
        await ringAt(ports, partition.cursorId, ports.clock.nowMs());
    }
  }
  return { consumerId };
}

/**
 * The subscription ackline makes on a dead-letter topic when the policy names none:
 * `{subscription}-DLQ-sub`, a name of its own, so that a reader subscribing there under the
 * consumer's subscription name (Pulsar's tests do, Exclusive) finds it free. 400 when that name
 * is not a valid one (too long): the policy must name its initialSubscriptionName then.
 */
export function defaultDeadLetterSubscription(subscription: string): string {
  const name = `${subscription}-DLQ-sub`;
  try {
    return validateSubscriptionName(name);
  } catch (error) {
    throw new ValidationError(
      `deadLetterPolicy: the default subscription on the dead-letter topic, ${name}, is not a valid name (${(error as Error).message}); name one with initialSubscriptionName`,
    );
  }
}

/**
 * The subscription that keeps a consumer's dead letters: the policy's initialSubscriptionName
 * (Pulsar's; the caller must be allowed to consume there, checked above), else, a stated
 * difference from Pulsar, `{subscription}-DLQ-sub` (defaultDeadLetterSubscription), so that under a
 * retention that deletes (Pulsar's 0/0, when the deployment sets it: entries go once every
 * subscription acknowledged them, at once when there is none) dead letters are kept until someone
 * reads them. The default one is only
 * created when the caller may consume on the dead-letter topic: it never widens what a role may do.
 * Both are Shared, at Earliest, on the topic (created if missing).
 */
export async function ensureDeadLetterSubscription(
  ports: UseCasePorts,
  caller: Principal,
  deadLetter: DeadLetterPolicy,
  subscription: string,
): Promise<void> {
  const deadLetterTopic = TopicName.parse(deadLetter.deadLetterTopic);
  let name = deadLetter.initialSubscriptionName;
  if (!name) {
    try {
      await requireAction(ports.permissions, caller, deadLetterTopic, ['consume']);
    } catch (error) {
      if (error instanceof ForbiddenError) return;
      throw error;
    }
    name = defaultDeadLetterSubscription(subscription);
    // One the application made there already, of any type, keeps them as well.
    if (await ports.catalog.getSubscription(deadLetterTopic, name)) return;
  }
  await ensureTopic(ports, deadLetterTopic);
  await ensureSubscription(ports, deadLetterTopic, { name, type: 'Shared', initialPosition: 'Earliest' });
}

/** A subscription to have on a partition: the one of that name, or a new one made with these. */
export interface SubscriptionSpec {
  readonly name: string;
  /** The type the subscription has; an existing one of another type is a conflict. */
  readonly type: SubscriptionType;
  /** Where a subscription this call creates starts (an existing one keeps its cursor). */
  readonly initialPosition: InitialPosition;
}

/** ensureSubscription's subscription, and where it reports what it made. */
export interface EnsureSubscriptionOptions extends SubscriptionSpec {
  /** When given, receives the name of each partition whose subscription this call made. */
  readonly created?: Set<string>;
}

/**
 * The subscription of one partition, created when missing: its doorbell queue, its cursor head
 * (mark-delete at Earliest or Latest; dispatch reads the ledger from there, so there is nothing to
 * feed), then the record and its announcement (publishers list the subscriptions again and ring
 * its doorbell). A process killed in between leaves at most an orphan queue or head, which costs
 * storage only; the retry creates the subscription whole with a new cursor.
 * `created`, when given, receives the partition's name if this call made its subscription.
 * @throws ConflictError when the subscription exists with another type.
 */
export async function ensureSubscription(
  ports: UseCasePorts,
  partition: TopicName,
  options: EnsureSubscriptionOptions,
): Promise<SubscriptionRecord> {
  const { name, type, initialPosition, created } = options;
  const existing = await ports.catalog.getSubscription(partition, name);
  if (existing) {
    if (existing.type !== type) {
      throw new ConflictError(
        `Subscription ${name} on ${partition.toString()} is ${existing.type}; a ${type} consumer cannot join it`,
      );
    }
    return existing;
  }
  // A new subscription is made only on a topic that exists now, not on one this process remembers
  // (a topic deleted within the cache's life must not get a new ledger and a subscription that a
  // topic created again under the name would inherit). One strong read, on creation only.
  if (!(await ports.catalog.getTopic(partition.partitionedTopicName))) {
    ports.catalog.forgetTopic(partition.partitionedTopicName);
    throw new TopicNotFoundError(partition.partitionedTopicName.toString());
  }
  await requireSubscriptionRoom(ports, partition);
  const cursorId = ports.ids.newId();
  const record: SubscriptionRecord = { name, type, cursorId, createdAtMs: ports.clock.nowMs() };
  await ports.deliveryQueue.create(doorbellOf(cursorId));
  await createSubscriptionCursor(engineOf(ports), { partition, cursorId, type }, initialPosition);
  try {
    await ports.catalog.createSubscription(partition, record);
  } catch (error) {
    if (!(error instanceof SubscriptionAlreadyExistsError)) throw error;
    // Another consumer created it meanwhile: use theirs, drop ours.
    await ports.dispatch.deleteCursor(cursorId);
    await ports.deliveryQueue.delete(doorbellOf(cursorId));
    return ensureSubscription(ports, partition, { name, type, initialPosition });
  }
  try {
    await ports.ledger.announceSubscriptions(partition);
  } catch (error) {
    // The topic was deleted while this call trusted its cached record of it: take back what was
    // made, so a topic created again under the name starts without it.
    if (error instanceof TopicNotFoundError) {
      await ports.catalog.deleteSubscription(partition, name, { cursorId });
      await ports.dispatch.deleteCursor(cursorId);
      await ports.deliveryQueue.delete(doorbellOf(cursorId));
      ports.catalog.forgetTopic(partition.partitionedTopicName);
    }
    throw error;
  }
  await markSubscriptionActive(ports, partition, record);
  created?.add(partition.toString());
  return record;
}

/** How many partitions' subscriptions are created (with their first backlog part) at once. */
export const PARTITION_CONCURRENCY = 8;

/**
 * ensureSubscription on each partition, PARTITION_CONCURRENCY at a time.
 * @returns the subscriptions in the order of `partitions`.
 * @throws the first failure, once the partitions under way are done (no new one starts after it).
 */
export async function ensureSubscriptions(
  ports: UseCasePorts,
  partitions: readonly TopicName[],
  options: EnsureSubscriptionOptions,
): Promise<SubscriptionRecord[]> {
  const subscriptions: SubscriptionRecord[] = new Array(partitions.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (failure === undefined && next < partitions.length) {
      const index = next++;
      try {
        subscriptions[index] = await ensureSubscription(ports, partitions[index] as TopicName, options);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARTITION_CONCURRENCY, partitions.length) }, worker));
  if (failure) throw failure.error;
  return subscriptions;
}
