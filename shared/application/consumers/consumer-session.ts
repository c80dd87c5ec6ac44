import { DEFAULT_CONSUMER_LEASE_MS } from '../../domain/consumer-lease.ts';
import { ForbiddenError, NotFoundError } from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import { isCumulativeAckType } from '../../domain/subscription-type.ts';
import { TopicName } from '../../domain/topic-name.ts';
import type { ConsumerPartition, ConsumerRecord } from '../../ports/consumer-registry.ts';
import { claimOwnership } from '../engine/dispatcher.ts';
import type { DispatchConsumer, KeySharedMember } from '../engine/engine-context.ts';
import { cursorOf, engineOf } from '../engine/engine-ports.ts';
import { releaseConsumerStep, rewind } from '../engine/release.ts';
import { markConsumerActive } from '../maintenance/activity.ts';
import { deadLetterProducerOf } from '../producers/dead-letter-producer.ts';
import { requireAction, requirePrincipal } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { ackTimeoutDelayMs } from './consumer-policy.ts';
import { ringAt } from './doorbells.ts';

/** A consumer that makes no call for this long is gone (Pulsar: its connection dropped). */
export { DEFAULT_CONSUMER_LEASE_MS };
/**
 * A lease renewed this recently by this process is not written again: a quarter of the lease, at
 * least 5 s (half the shortest lease), so three quarters of it are always left.
 */
const RENEW_AFTER_MS = 5_000;
const renewAfterMs = (leaseMs: number) => Math.max(RENEW_AFTER_MS, leaseMs / 4);

/**
 * The longest a call may wait between two renewals of the consumer's lease (renewLease): a renewal
 * may be skipped for renewAfterMs, and a quarter of the lease is kept as a margin, so a consumer
 * whose calls wait (long polls, a blocked receive) never looks gone while it waits. 2.5 s for the
 * shortest lease (10 s), 30 s (more than any poll) for the default one.
 */
export function longestWaitMs(consumer: ConsumerRecord): number {
  const leaseMs = leaseMsOf(consumer);
  return Math.max(1_000, leaseMs - renewAfterMs(leaseMs) - leaseMs / 4);
}
/**
 * The longest a call that started before a close can still be running (API Gateway's 29 s, the
 * function's timeout, a margin): the close's second release pass runs after it, so what an
 * abandoned poll claimed after the close comes back too.
 */
export const CLOSE_SECOND_PASS_MS = 35_000;
/** Release steps a close runs itself before handing the rest to the scheduler. */
const CLOSE_INLINE_STEPS = 4;
/** Lambda consumers hold deliveries until their function's timeout plus this. */
export const LAMBDA_TIMEOUT_MARGIN_MS = 5_000;

/**
 * The key of a subscription's members in the consumer registry: the base topic (a consumer of one
 * `-partition-i` name belongs to the same subscription) and the name, JSON-encoded so that no two
 * (topic, subscription) pairs share a key.
 */
export function subscriptionKey(topic: string, subscription: string): string {
  return JSON.stringify([TopicName.parse(topic).partitionedTopicName.toString(), subscription]);
}

/** A Lambda consumer is durable: its lease never lapses (ten years of 365 days, in ms). */
const DURABLE_LEASE_MS = 315_360_000_000;

/** The consumer, if it exists and belongs to the caller (its subscriber, or a superuser). */
export async function requireConsumer(
  ports: UseCasePorts,
  principal: Principal | undefined,
  consumerId: string,
  options: { readonly fresh?: boolean } = {},
): Promise<ConsumerRecord> {
  const caller = requirePrincipal(principal);
  if (options.fresh) ports.consumers.forget(consumerId);
  const consumer = await ports.consumers.recent(consumerId);
  if (!consumer)
    throw new NotFoundError(
      `Consumer ${consumerId} not found: closed, removed after its lease lapsed (no call for its lease), or never subscribed; subscribe again`,
    );
  if (!caller.superuser && consumer.role !== caller.role) {
    throw new ForbiddenError(`Consumer ${consumerId} belongs to another role`);
  }
  await requireAction(ports.permissions, caller, TopicName.parse(consumer.topic), ['consume']);
  return consumer;
}

/** How long this consumer stays alive without a call. */
export function leaseMsOf(consumer: ConsumerRecord): number {
  if (consumer.kind === 'lambda') return DURABLE_LEASE_MS;
  return consumer.leaseMs ?? DEFAULT_CONSUMER_LEASE_MS;
}

/**
 * Every call renews the consumer's lease (its membership of the subscription), at most once per
 * renewAfterMs per process: one write per consumer every quarter lease, not one per call.
 */
export async function renewLease(ports: UseCasePorts, consumer: ConsumerRecord): Promise<void> {
  await markConsumerActive(ports, consumer);
  if (consumer.kind === 'lambda') return;
  const now = ports.clock.nowMs();
  const renewed = ports.hints.renewals;
  if ((renewed.get(consumer.consumerId) ?? 0) > now - renewAfterMs(leaseMsOf(consumer))) return;
  await ports.consumers.heartbeat(
    subscriptionKey(consumer.topic, consumer.subscription),
    consumer.consumerId,
    now + leaseMsOf(consumer),
  );
  renewed.set(consumer.consumerId, now);
  if (isCumulativeAckType(consumer.subscriptionType) && consumer.partitions.length > 1) {
    // An Exclusive/Failover owner of several partitions keeps every one of them, also those its
    // receives did not reach lately (a receive stops at `max` messages).
    await renewOwnership(ports, consumer);
  }
}

/** Renews (or takes, when none is alive) the ownership of every partition of `consumer`. */
async function renewOwnership(ports: UseCasePorts, consumer: ConsumerRecord): Promise<void> {
  for (const partition of consumer.partitions) {
    await claimOwnership(
      engineOf(ports),
      cursorOf(consumer, partition),
      dispatchConsumerOf(ports, consumer, partition),
    );
  }
}

/**
 * A call that does nothing but renew the consumer's lease (`POST /consumers/{id}/heartbeat`): the
 * SDK sends it while a consumer is open and processing, so a long processing time does not make
 * it gone. Exclusive/Failover owners keep their ownership too (it is renewed with the lease).
 */
export async function keepAlive(
  ports: UseCasePorts,
  principal: Principal | undefined,
  consumerId: string,
): Promise<void> {
  const consumer = await requireConsumer(ports, principal, consumerId);
  await renewLease(ports, consumer);
  if (isCumulativeAckType(consumer.subscriptionType)) await renewOwnership(ports, consumer);
}

/** The consumer as the dispatcher serves it on one partition. */
export function dispatchConsumerOf(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  partition: ConsumerPartition,
): DispatchConsumer {
  const deadLetter = deadLetterProducerOf(ports, consumer, partition);
  return {
    consumerId: consumer.consumerId,
    ackTimeoutMs: (count) =>
      consumer.kind === 'lambda'
        ? (consumer.functionTimeoutMs ?? 900_000) + LAMBDA_TIMEOUT_MARGIN_MS
        : ackTimeoutDelayMs(ports.backoffs, consumer.policy, count, ports.random),
    leaseMs: leaseMsOf(consumer),
    ...(deadLetter ? { deadLetter } : {}),
  };
}

/** Key_Shared: the live members of the subscription with their join marks on this partition. */
export async function keySharedMembers(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  partition: ConsumerPartition,
): Promise<KeySharedMember[]> {
  // Members whose lease ran out keep their keys until maintenance has released what they held and
  // removed them: only then do their keys move, so a key never has two holders.
  const ids = await ports.consumers.members(subscriptionKey(consumer.topic, consumer.subscription), 0);
  const members: KeySharedMember[] = [];
  for (const id of ids.includes(consumer.consumerId) ? ids : [...ids, consumer.consumerId].sort()) {
    const record = id === consumer.consumerId ? consumer : await ports.consumers.recent(id);
    const mark = record?.joinedAfter?.[partition.cursorId];
    if (record && mark) {
      members.push({
        consumerId: id,
        joinedAfter: Position.parseStored(mark),
        ...(record.hashRanges ? { hashRanges: record.hashRanges } : {}),
      });
    }
  }
  return members;
}

/**
 * Gives back what a gone consumer held on every partition: Exclusive/Failover rewind (the owner
 * gone, a standby replays in order); Shared/Key_Shared release its held runs to the tracker
 * (due now; only entries it was handed count a redelivery). A few steps here, the rest through
 * the scheduler. Rings the doorbells so that waiting receivers take them at once.
 */
export async function releaseConsumer(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  options: { readonly close: boolean },
): Promise<void> {
  const ctx = engineOf(ports);
  for (const partition of consumer.partitions) {
    const cursor = cursorOf(consumer, partition);
    if (isCumulativeAckType(consumer.subscriptionType)) {
      await rewind(ctx, cursor, { consumerId: consumer.consumerId, close: options.close });
    } else {
      let from: Position | undefined;
      for (let step = 0; step === 0 || (from && step < CLOSE_INLINE_STEPS); step++) {
        from = (await releaseConsumerStep(ctx, cursor, consumer.consumerId, from)).next;
      }
      if (from) {
        await ports.scheduler.schedule([
          {
            kind: 'release',
            cursorId: partition.cursorId,
            partition: partition.topic,
            consumerId: consumer.consumerId,
            from: from.toString(),
            dueAtMs: ports.clock.nowMs(),
          },
        ]);
      }
    }
    await ringAt(ports, partition.cursorId, ports.clock.nowMs());
  }
}

/**
 * Close the consumer (Pulsar's consumer.close()): its record goes, so its later calls and the
 * calls it still has in flight (re-checked after each wait) are refused; it leaves the
 * subscription; what it held comes back (releaseConsumer); and a second pass after
 * CLOSE_SECOND_PASS_MS gives back what a call racing the close claimed. Returns within a few
 * seconds whatever the backlog.
 */
export async function closeConsumer(
  ports: UseCasePorts,
  principal: Principal | undefined,
  consumerId: string,
): Promise<void> {
  const consumer = await requireConsumer(ports, principal, consumerId);
  // The second pass first: once it is scheduled, a crash at any later step still gives back what
  // the consumer held (and what a call racing the close claimed).
  await scheduleSecondPass(ports, consumer);
  // The registry's cache forgets the record with the delete; this container's renewal goes too.
  await ports.consumers.delete(consumerId);
  ports.hints.renewals.delete(consumerId);
  await releaseConsumer(ports, consumer, { close: true });
  await ports.consumers.leave(subscriptionKey(consumer.topic, consumer.subscription), consumerId);
}

/** A release of what `consumer` holds, CLOSE_SECOND_PASS_MS from now (Shared, Key_Shared). */
export async function scheduleSecondPass(ports: UseCasePorts, consumer: ConsumerRecord): Promise<void> {
  if (isCumulativeAckType(consumer.subscriptionType)) return;
  await ports.scheduler.schedule(
    consumer.partitions.map((partition) => ({
      kind: 'release' as const,
      cursorId: partition.cursorId,
      partition: partition.topic,
      consumerId: consumer.consumerId,
      dueAtMs: ports.clock.nowMs() + CLOSE_SECOND_PASS_MS,
    })),
  );
}
