import {
  type DeliveryHandle,
  type DeliveryToken,
  decodeDeliveryHandle,
  encodeDeliveryHandle,
} from '../domain/delivery-token.ts';
import {
  ForbiddenError,
  NotFoundError,
  PositionNotFoundError,
  PreconditionFailedError,
  ValidationError,
} from '../domain/errors.ts';
import { MessageId } from '../domain/message-id.ts';
import { partitionForKey, RoundRobinRouter } from '../domain/message-router.ts';
import type { Position } from '../domain/position.ts';
import { isCumulativeAckType } from '../domain/subscription-type.ts';
import { TopicName } from '../domain/topic-name.ts';
import type { ConsumerPartition, ConsumerRecord } from '../ports/consumer-registry.ts';
import type { ReceivedToken, SubscriptionQueue } from '../ports/delivery-queue.ts';
import type { AckTimeoutJob } from '../ports/scheduler.ts';
import { requireAction, requirePrincipal } from './authorization.ts';
import { ackTimeoutDelayMs, negativeAckDelayMs } from './consumer-policy.ts';
import { enqueue, positionOf, queueOf, tokenFor } from './delivery.ts';
import type { UseCasePorts } from './ports.ts';
import type { Principal } from './principal.ts';
import { consumerRecord, firstUnwritten, forgetConsumer, renewals } from './process-memo.ts';
import { publishMessages } from './publish-messages.ts';
import { rewindSubscription } from './rewind-subscription.ts';
import { hasSingleActiveConsumer, OWNERSHIP_LEASE_MS, subscriptionKey } from './subscribe-consumer.ts';

/**
 * A received token stays hidden this long (SQS's maximum, 12 h) unless it is
 * acknowledged, nacked or timed out first: redelivery is always an explicit
 * new token, so the count it carries is exact.
 */
export const IN_FLIGHT_VISIBILITY_SECONDS = 43_200;
/** A Key_Shared consumer that found only other members' keys waits this long before polling again. */
const KEY_SHARED_PAUSE_MS = 200;
/**
 * An ownership lease or membership renewed this recently by this process is not
 * written again: a consumer polling in a tight loop pays one write per 5 s, not
 * one per receive. The lease (30 s) outlasts the longest poll (20 s) by more
 * than this.
 */
const RENEW_AFTER_MS = 5_000;
/** Key_Shared members count as alive this long after their last poll. */
export const MEMBER_LEASE_MS = 30_000;

/** The role ackline acts as for its own publishes (dead letters). */
const SYSTEM: Principal = { role: 'ackline-system', superuser: true };
/** Dead-letter topics are usually not partitioned; when one is, keyless dead letters spread round-robin. */
const deadLetterRouter = new RoundRobinRouter(0);

/** A message as every consumer gets it: HTTP receive and event-driven (Lambda) consumers. */
export interface ConsumerMessage {
  readonly messageId: string;
  readonly payload: string;
  readonly key: string | null;
  readonly properties: Readonly<Record<string, string>>;
  readonly redeliveryCount: number;
  readonly publishTime: number;
  readonly eventTime: number | null;
}

/** A message handed to an HTTP consumer, with the handle that acknowledges or nacks it. */
export interface DeliveredMessage extends ConsumerMessage {
  readonly deliveryHandle: string;
}

/** The consumer, if it exists and belongs to the caller (its subscriber, or a superuser). */
export async function requireConsumer(
  ports: UseCasePorts,
  principal: Principal | undefined,
  consumerId: string,
): Promise<ConsumerRecord> {
  const caller = requirePrincipal(principal);
  const consumer = await consumerRecord(ports, consumerId);
  if (!consumer) throw new NotFoundError(`Consumer ${consumerId} not found`);
  if (!caller.superuser && consumer.role !== caller.role) {
    throw new ForbiddenError(`Consumer ${consumerId} belongs to another role`);
  }
  await requireAction(ports.permissions, caller, TopicName.parse(consumer.topic), ['consume']);
  return consumer;
}

function queueFor(consumer: ConsumerRecord, partition: ConsumerPartition): SubscriptionQueue {
  return queueOf({ cursorId: partition.cursorId, type: consumer.subscriptionType });
}

/**
 * Receive up to `max` messages, waiting up to `waitMs` for the first.
 * 1. Exclusive/Failover: only the owner reads (a Failover standby gets nothing
 *    until the owner closes or stops polling); Key_Shared: the consumer joins
 *    the live members.
 * 2. Take tokens from the partition queues and check each against the cursor:
 *    acknowledged or superseded tokens are dropped, messages not yet due go
 *    back to the scheduler, Key_Shared keys owned by another member go back to
 *    the queue.
 * 3. With an ack timeout, schedule the check of each delivery (PIP-130).
 */
export async function receiveMessages(
  ports: UseCasePorts,
  principal: Principal | undefined,
  consumerId: string,
  max: number,
  waitMs: number,
): Promise<DeliveredMessage[]> {
  const consumer = await requireConsumer(ports, principal, consumerId);
  const key = subscriptionKey(consumer.topic, consumer.subscription);
  const deadline = ports.clock.nowMs() + waitMs;
  let members: string[] = [];
  for (;;) {
    const now = ports.clock.nowMs();
    const renewed = renewals(ports);
    const fresh = (renewed.get(consumerId) ?? 0) > now - RENEW_AFTER_MS;
    if (hasSingleActiveConsumer(consumer.subscriptionType)) {
      if (!fresh) {
        if (!(await ports.consumers.claimOwnership(key, consumerId, now, now + OWNERSHIP_LEASE_MS))) {
          renewed.delete(consumerId);
          if (now >= deadline) return [];
          await sleep(Math.min(500, deadline - now));
          continue;
        }
        renewed.set(consumerId, now);
      }
    } else if (consumer.subscriptionType === 'Key_Shared') {
      if (!fresh) {
        await ports.consumers.heartbeat(key, consumerId, now + MEMBER_LEASE_MS);
        renewed.set(consumerId, now);
      }
      members = await ports.consumers.members(key, now);
    }
    const remaining = Math.max(0, deadline - now);
    const received = await receiveTokens(ports, consumer, max, remaining);
    const { delivered, handedBack } = await deliverChecked(ports, consumer, received, members);
    if (delivered.length > 0 || ports.clock.nowMs() >= deadline) return delivered;
    // Only other members' keys came: give them a moment to poll before taking those tokens again.
    if (handedBack > 0)
      await sleep(Math.min(KEY_SHARED_PAUSE_MS, Math.max(0, deadline - ports.clock.nowMs())));
  }
}

/** Polls the consumer's partition queues; one partition long-polls, several take turns. */
async function receiveTokens(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  max: number,
  waitMs: number,
): Promise<{ partition: ConsumerPartition; tokens: ReceivedToken[] }[]> {
  if (consumer.partitions.length === 1) {
    const partition = consumer.partitions[0] as ConsumerPartition;
    const tokens = await ports.deliveryQueue.receive(
      queueFor(consumer, partition),
      Math.min(10, max),
      IN_FLIGHT_VISIBILITY_SECONDS,
      waitMs,
    );
    return [{ partition, tokens }];
  }
  const deadline = ports.clock.nowMs() + waitMs;
  for (;;) {
    const results = await Promise.all(
      consumer.partitions.map(async (partition) => ({
        partition,
        tokens: await ports.deliveryQueue.receive(
          queueFor(consumer, partition),
          Math.min(10, max),
          IN_FLIGHT_VISIBILITY_SECONDS,
          0,
        ),
      })),
    );
    if (results.some((result) => result.tokens.length > 0) || ports.clock.nowMs() >= deadline) return results;
    await sleep(Math.min(100, Math.max(0, deadline - ports.clock.nowMs())));
  }
}

async function deliverChecked(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  received: readonly { partition: ConsumerPartition; tokens: ReceivedToken[] }[],
  members: readonly string[],
): Promise<{ delivered: DeliveredMessage[]; handedBack: number }> {
  const delivered: DeliveredMessage[] = [];
  const ackTimeoutJobs: AckTimeoutJob[] = [];
  const now = ports.clock.nowMs();
  let handedBackCount = 0;
  for (const { partition, tokens } of received) {
    if (tokens.length === 0) continue;
    const queue = queueFor(consumer, partition);
    const verdicts = await checkDeliveries(
      ports,
      consumer,
      partition,
      tokens.map((received) => received.token),
      members,
      now,
    );
    const dropped: string[] = [];
    const notYetDue: { token: DeliveryToken; dueAtMs: number }[] = [];
    const handedBack: { token: DeliveryToken; dueAtMs: number }[] = [];
    for (const [index, { token, receipt }] of tokens.entries()) {
      const verdict = verdicts[index] as DeliveryVerdict;
      if (verdict.kind === 'drop') {
        dropped.push(receipt);
        continue;
      }
      if (verdict.kind === 'notYetDue') {
        dropped.push(receipt);
        notYetDue.push({ token, dueAtMs: verdict.dueAtMs });
        continue;
      }
      if (verdict.kind === 'otherMember') {
        // A fresh token, not a visibility change: the SQS receive count (and its redrive) starts again.
        dropped.push(receipt);
        handedBack.push({ token, dueAtMs: now });
        continue;
      }
      const handle: DeliveryHandle = {
        cursorId: partition.cursorId,
        receipt,
        ledgerId: token.ledgerId,
        entryId: token.entryId,
        partitionIndex: partition.partitionIndex,
        redeliveryCount: token.redeliveryCount,
      };
      delivered.push({ ...verdict.message, deliveryHandle: encodeDeliveryHandle(handle) });
      const timeoutMs = ackTimeoutDelayMs(ports.backoffs, consumer.policy, token.redeliveryCount);
      if (timeoutMs > 0) {
        ackTimeoutJobs.push({
          kind: 'ackTimeout',
          consumerId: consumer.consumerId,
          queue,
          receipt,
          token,
          dueAtMs: now + timeoutMs,
        });
      }
    }
    await enqueue(ports, queue, [...notYetDue, ...handedBack]);
    await ports.deliveryQueue.remove(queue, dropped);
    handedBackCount += handedBack.length;
  }
  await ports.scheduler.schedule(ackTimeoutJobs);
  ports.counters?.add('delivered', delivered.length);
  const redelivered = delivered.filter((message) => message.redeliveryCount > 0).length;
  if (redelivered > 0) ports.counters?.add('redelivered', redelivered);
  return { delivered, handedBack: handedBackCount };
}

/** What the delivery check decided for one token taken from a subscription queue. */
export type DeliveryVerdict =
  /** Hand the message to the consumer. */
  | { readonly kind: 'deliver'; readonly message: ConsumerMessage }
  /**
   * Never hand it out; delete the token: acknowledged by anyone (consumer,
   * admin, skip), superseded by a redelivery (the cursor recorded a higher
   * count), or allocated but never written (its publisher sends the real token).
   */
  | { readonly kind: 'drop' }
  /** A delayed message not yet due (Shared, Key_Shared): delete the token and put it back for `dueAtMs`. */
  | { readonly kind: 'notYetDue'; readonly dueAtMs: number }
  /** Key_Shared: another live member owns the message's key; make the token visible again at once. */
  | { readonly kind: 'otherMember' };

/**
 * The delivery check every consumer goes through (HTTP receive, event-driven
 * consumers): the cursor, not the queue, says whether a token's message may be
 * handed out. Decides only; the caller deletes, releases or re-enqueues tokens.
 * `members` are the live Key_Shared members (empty: no key selection).
 * Cost: one cursor read for the batch (each ack page touched, plus the head
 * for Exclusive and Failover, or when a page does not exist), plus one ledger
 * read per deliverable token that does not carry its message.
 */
export async function checkDeliveries(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  partition: ConsumerPartition,
  tokens: readonly DeliveryToken[],
  members: readonly string[],
  nowMs: number,
): Promise<DeliveryVerdict[]> {
  if (tokens.length === 0) return [];
  const queue = queueFor(consumer, partition);
  // Shared and Key_Shared never ack cumulatively: their ack pages answer without the mark-delete position.
  const states = await ports.cursors.deliveryState(partition.cursorId, tokens.map(positionOf), {
    individualAcksOnly: !isCumulativeAckType(consumer.subscriptionType),
  });
  const verdicts: DeliveryVerdict[] = [];
  for (const [index, token] of tokens.entries()) {
    const state = states[index] as { acknowledged: boolean; redeliveryCount: number };
    // Acknowledged by anyone (consumer, admin, skip), or superseded by a redelivery: never handed out.
    if (state.acknowledged || state.redeliveryCount > token.redeliveryCount) {
      verdicts.push({ kind: 'drop' });
      continue;
    }
    const deliverAt = token.message?.deliverAtMs ?? token.deliverAtMs;
    if (!queue.ordered && deliverAt !== undefined && deliverAt > nowMs) {
      verdicts.push({ kind: 'notYetDue', dueAtMs: deliverAt });
      continue;
    }
    if (consumer.subscriptionType === 'Key_Shared' && members.length > 1) {
      const messageKey = token.message?.key ?? token.key ?? `${token.ledgerId}:${token.entryId}`;
      if (members[partitionForKey(messageKey, members.length)] !== consumer.consumerId) {
        verdicts.push({ kind: 'otherMember' });
        continue;
      }
    }
    const message = await messageOf(ports, token);
    if (!message) {
      verdicts.push({ kind: 'drop' }); // allocated but never written: its publisher sends the real token
      continue;
    }
    verdicts.push({
      kind: 'deliver',
      message: {
        messageId: `${token.ledgerId}:${token.entryId}:${partition.partitionIndex}`,
        payload: message.payload,
        key: message.key ?? null,
        properties: message.properties ?? {},
        redeliveryCount: token.redeliveryCount,
        publishTime: message.publishTimeMs,
        eventTime: message.eventTimeMs ?? null,
      },
    });
  }
  return verdicts;
}

async function messageOf(ports: UseCasePorts, token: DeliveryToken) {
  if (token.message) return token.message;
  const entry = await ports.ledger.readEntry(positionOf(token));
  if (!entry) return undefined;
  return { ...entry };
}

/** A message id of this consumer's topic: 'L:E' or 'L:E:P', resolved to its partition. */
function partitionOfMessageId(
  consumer: ConsumerRecord,
  text: string,
): { partition: ConsumerPartition; position: Position } {
  const id = MessageId.parse(text);
  const partition =
    consumer.partitions.length === 1
      ? consumer.partitions[0]
      : consumer.partitions.find((candidate) => candidate.partitionIndex === id.partitionIndex);
  if (!partition) {
    throw new ValidationError(`Message id ${text} names no partition of ${consumer.topic}`);
  }
  return { partition, position: id.position };
}

/** A handle issued to this consumer's subscription (a forged cursor id is refused). */
function partitionOfHandle(
  consumer: ConsumerRecord,
  text: string,
): { partition: ConsumerPartition; handle: DeliveryHandle } {
  const handle = decodeDeliveryHandle(text);
  const partition = consumer.partitions.find((candidate) => candidate.cursorId === handle.cursorId);
  if (!partition)
    throw new ValidationError('Delivery handle does not belong to this consumer’s subscription');
  return { partition, handle };
}

/**
 * Individual acknowledgement by message id and/or delivery handle: the cursor
 * first (that is what "acknowledged" means), then the tokens are deleted; a
 * token acknowledged by id alone is dropped when it next shows up.
 */
export async function acknowledgeMessages(
  ports: UseCasePorts,
  principal: Principal | undefined,
  consumerId: string,
  messageIds: readonly string[],
  deliveryHandles: readonly string[],
): Promise<void> {
  const consumer = await requireConsumer(ports, principal, consumerId);
  const positions = new Map<
    string,
    { partition: ConsumerPartition; positions: Position[]; receipts: string[] }
  >();
  const group = (partition: ConsumerPartition) => {
    const existing = positions.get(partition.cursorId) ?? { partition, positions: [], receipts: [] };
    positions.set(partition.cursorId, existing);
    return existing;
  };
  for (const text of messageIds) {
    const { partition, position } = partitionOfMessageId(consumer, text);
    group(partition).positions.push(position);
  }
  for (const text of deliveryHandles) {
    const { partition, handle } = partitionOfHandle(consumer, text);
    const target = group(partition);
    target.positions.push(positionOf(handle));
    target.receipts.push(handle.receipt);
  }
  for (const { partition, positions: acked } of positions.values())
    await requireWritten(ports, partition, acked);
  await Promise.all(
    [...positions.values()].map(async ({ partition, positions: acked, receipts }) => {
      await ports.cursors.acknowledge(partition.cursorId, acked);
      await ports.deliveryQueue.remove(queueFor(consumer, partition), receipts);
    }),
  );
  ports.counters?.add('acked', messageIds.length + deliveryHandles.length);
}

/** Cumulative acknowledgement: Exclusive and Failover only (412 otherwise, as Pulsar refuses it). */
export async function acknowledgeCumulative(
  ports: UseCasePorts,
  principal: Principal | undefined,
  consumerId: string,
  messageId: string,
): Promise<void> {
  const consumer = await requireConsumer(ports, principal, consumerId);
  if (!isCumulativeAckType(consumer.subscriptionType)) {
    throw new PreconditionFailedError(
      `Cumulative acknowledgement is not allowed on a ${consumer.subscriptionType} subscription`,
    );
  }
  const { partition, position } = partitionOfMessageId(consumer, messageId);
  await requireWritten(ports, partition, [position]);
  await ports.cursors.markDelete(partition.cursorId, position);
}

/**
 * Acknowledging names written entries of the partition only: an id of an entry
 * not written yet (or of another topic's ledger) would silently swallow a
 * message published later. At most one ledger-state read per partition, none
 * when this process already saw the entries written.
 */
async function requireWritten(
  ports: UseCasePorts,
  partition: ConsumerPartition,
  positions: readonly Position[],
): Promise<void> {
  const missing = await firstUnwritten(ports, TopicName.parse(partition.topic), positions);
  if (missing) {
    throw new PositionNotFoundError(`Message ${missing.toString()} not found in topic ${partition.topic}`);
  }
}

/**
 * Negative acknowledgement (PIP-106): each message comes back after the
 * consumer's nack backoff for its redelivery count (or the fixed delay), with
 * the count incremented, unless it passed the dead-letter policy's
 * maxRedeliverCount. By message id alone the count comes from the cursor's
 * record (kept server-side), so that path backs off too.
 */
export async function negativeAcknowledge(
  ports: UseCasePorts,
  principal: Principal | undefined,
  consumerId: string,
  messageIds: readonly string[],
  deliveryHandles: readonly string[],
): Promise<void> {
  const consumer = await requireConsumer(ports, principal, consumerId);
  // A nack by id carries no count: redeliver takes the one the cursor recorded, in the read it makes anyway.
  const items: { partition: ConsumerPartition; position: Position; count?: number; receipt?: string }[] = [];
  for (const text of deliveryHandles) {
    const { partition, handle } = partitionOfHandle(consumer, text);
    items.push({
      partition,
      position: positionOf(handle),
      count: handle.redeliveryCount,
      receipt: handle.receipt,
    });
  }
  const byId = new Map<ConsumerPartition, Position[]>();
  for (const text of messageIds) {
    const { partition, position } = partitionOfMessageId(consumer, text);
    items.push({ partition, position });
    byId.set(partition, [...(byId.get(partition) ?? []), position]);
  }
  // As acknowledging: an id of an entry not written (yet) is a 404, before anything is redelivered.
  for (const [partition, positions] of byId) await requireWritten(ports, partition, positions);
  const delayMs = (count: number) => negativeAckDelayMs(ports.backoffs, consumer.policy, count);
  for (const item of items) {
    await redeliver(ports, consumer, item.partition, item.position, item.count, item.receipt, delayMs);
  }
  ports.counters?.add('nacked', items.length);
}

/**
 * Redelivers one delivery with count + 1 after `delayMs` (a number, or a
 * function of the count), or dead-letters it. `count` is the count the
 * delivery carried; undefined takes the one the cursor recorded.
 * 1. the cursor decides (already acknowledged: nothing to do);
 * 2. past maxRedeliverCount: publish to the dead-letter topic, then acknowledge;
 * 3. otherwise put the new token on the queue, record the new count (older
 *    tokens become stale) and delete the old token.
 */
export async function redeliver(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  partition: ConsumerPartition,
  position: Position,
  deliveredCount: number | undefined,
  receipt: string | undefined,
  delayMs: number | ((count: number) => number),
): Promise<void> {
  const queue = queueFor(consumer, partition);
  const [state] = await ports.cursors.deliveryState(partition.cursorId, [position]);
  const count = deliveredCount ?? state?.redeliveryCount ?? 0;
  if (!state || state.acknowledged || state.redeliveryCount > count) {
    if (receipt) await ports.deliveryQueue.remove(queue, [receipt]);
    return;
  }
  const entry = await ports.ledger.readEntry(position);
  if (!entry) return;
  const next = count + 1;
  const waitMs = typeof delayMs === 'number' ? delayMs : delayMs(count);
  const deadLetter = consumer.policy.deadLetterPolicy;
  if (deadLetter && next > deadLetter.maxRedeliverCount) {
    await publishMessages(
      ports,
      SYSTEM,
      TopicName.parse(deadLetter.deadLetterTopic),
      [
        {
          payload: entry.payload,
          ...(entry.key !== undefined ? { key: entry.key } : {}),
          ...(entry.eventTimeMs !== undefined ? { eventTimeMs: entry.eventTimeMs } : {}),
          properties: {
            ...entry.properties,
            REAL_TOPIC: partition.topic,
            ORIGIN_MESSAGE_ID: `${position.toString()}:${partition.partitionIndex}`,
            REAL_SUBSCRIPTION: consumer.subscription,
          },
        },
      ],
      deadLetterRouter,
    );
    await ports.cursors.acknowledge(partition.cursorId, [position]);
    if (receipt) await ports.deliveryQueue.remove(queue, [receipt]);
    ports.counters?.add('deadLettered', 1);
    return;
  }
  // New token first: a failure after it can only cause a duplicate, never a message without a token.
  const token = tokenFor(TopicName.parse(partition.topic), entry, next);
  await enqueue(ports, queue, [{ token, dueAtMs: ports.clock.nowMs() + waitMs }]);
  await ports.cursors.recordRedelivery(partition.cursorId, [{ position, count: next }]);
  if (receipt) await ports.deliveryQueue.remove(queue, [receipt]);
}

/**
 * The ack-timeout check the scheduler runs (PIP-130): a delivery still not
 * acknowledged, and not redelivered since, comes back at once with count + 1.
 */
export async function handleAckTimeout(ports: UseCasePorts, job: AckTimeoutJob): Promise<void> {
  const consumer = await ports.consumers.get(job.consumerId);
  if (!consumer) return; // closed: its deliveries are released by the close
  const partition = consumer.partitions.find((candidate) => candidate.cursorId === job.queue.cursorId);
  if (!partition) return;
  await redeliver(
    ports,
    consumer,
    partition,
    positionOf(job.token),
    job.token.redeliveryCount,
    job.receipt,
    0,
  );
}

/**
 * Pulsar's redeliverUnacknowledgedMessages: the given deliveries (those the
 * client still holds) come back at once with count + 1. Without handles, every
 * unacknowledged entry of the subscription is put back on its queue (a rewind,
 * which is exact for Exclusive and Failover, and for Shared may also redeliver
 * what other consumers hold).
 */
export async function redeliverUnacknowledged(
  ports: UseCasePorts,
  principal: Principal | undefined,
  consumerId: string,
  deliveryHandles: readonly string[],
): Promise<void> {
  const consumer = await requireConsumer(ports, principal, consumerId);
  if (deliveryHandles.length > 0) {
    // Every handle is decoded before anything is redelivered: one bad handle is a 400 with no partial write.
    const targets = deliveryHandles.map((text) => partitionOfHandle(consumer, text));
    for (const { partition, handle } of targets) {
      await redeliver(
        ports,
        consumer,
        partition,
        positionOf(handle),
        handle.redeliveryCount,
        handle.receipt,
        0,
      );
    }
    return;
  }
  for (const partition of consumer.partitions) {
    await rewindSubscription(ports, consumer, partition);
  }
}

/**
 * Close the consumer: it leaves the subscription, its unacknowledged messages
 * are put back on the queue, and an Exclusive/Failover standby may take over.
 * Cost: linear in the subscription's backlog (the rewind).
 */
export async function closeConsumer(
  ports: UseCasePorts,
  principal: Principal | undefined,
  consumerId: string,
): Promise<void> {
  const consumer = await requireConsumer(ports, principal, consumerId);
  const key = subscriptionKey(consumer.topic, consumer.subscription);
  await ports.consumers.delete(consumerId);
  forgetConsumer(ports, consumerId);
  await ports.consumers.leave(key, consumerId);
  // What it received but did not acknowledge comes back now (Pulsar redelivers a closed consumer's
  // pending messages). Deliveries are not tracked per consumer, so the subscription is rewound:
  // exact for Exclusive and Failover, at-least-once for Shared and Key_Shared.
  for (const partition of consumer.partitions) await rewindSubscription(ports, consumer, partition);
  await ports.consumers.releaseOwnership(key, consumerId);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
