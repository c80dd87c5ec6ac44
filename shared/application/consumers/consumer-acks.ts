import type { DeliveryHandleSigner } from '../../domain/delivery-handle.ts';
import { PreconditionFailedError, ValidationError } from '../../domain/errors.ts';
import { PositionNotFoundError } from '../../domain/ledger-layout.ts';
import { MessageId } from '../../domain/message-id.ts';
import { Position } from '../../domain/position.ts';
import { isCumulativeAckType } from '../../domain/subscription-type.ts';
import { TopicName } from '../../domain/topic-name.ts';
import type { ConsumerPartition, ConsumerRecord } from '../../ports/consumer-registry.ts';
import { cursorOf, engineOf } from '../engine/engine-ports.ts';
import {
  acknowledge,
  acknowledgeCumulative as acknowledgeCumulativeOnCursor,
  type NackItem,
  negativeAcknowledge as nackOnCursor,
} from '../engine/pending-acks.ts';
import { deadLetterProducerOf } from '../producers/dead-letter-producer.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { negativeAckDelayMs } from './consumer-policy.ts';
import { releaseConsumer, renewLease, requireConsumer } from './consumer-session.ts';
import { deliveryHandlesOf } from './delivery-handles.ts';
import { ringAll } from './doorbells.ts';

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
  if (!partition) throw new ValidationError(`Message id ${text} names no partition of ${consumer.topic}`);
  return { partition, position: id.position };
}

/**
 * The delivery a handle names, when the server issued it (signed with the deployment's key: an
 * entry handed out on that cursor with that count, so no read is needed to trust it) to a
 * consumer of this consumer's subscription: any of them, as Pulsar takes an acknowledgement from
 * any consumer of the subscription. InvalidDeliveryHandleError (400) for a handle the server did
 * not issue; ValidationError (400) for another subscription's.
 */
function partitionOfHandle(consumer: ConsumerRecord, handles: DeliveryHandleSigner, text: string) {
  const handle = handles.verify(text);
  const partition = consumer.partitions.find((candidate) => candidate.cursorId === handle.cursorId);
  if (!partition)
    throw new ValidationError('Delivery handle does not belong to this consumer’s subscription');
  return {
    partition,
    position: Position.of(handle.ledgerId, handle.entryId),
    redeliveryCount: handle.redeliveryCount,
  };
}

/**
 * Acknowledging names written entries of the partition only: an id of an entry not written yet
 * (or of another topic's ledger) would silently swallow a message published later. Handles need
 * no such check (the server signed them for entries it handed out): no ids, no read.
 */
async function requireWritten(
  ports: UseCasePorts,
  partition: ConsumerPartition,
  positions: readonly Position[],
) {
  if (positions.length === 0) return;
  const missing = await ports.ledger.firstUnwritten(TopicName.parse(partition.topic), positions);
  if (missing)
    throw new PositionNotFoundError(`Message ${missing.toString()} not found in topic ${partition.topic}`);
}

/**
 * What a consumer settled (acknowledged, or what its nack released) no longer counts against its
 * cap in this container's count (ContainerHints.unacked, engine/consumer-cap.ts), so a consumer at
 * its cap is unblocked by its acks at once here, not when the count ages (2 s near the cap, else
 * 10 s). Not exact for acks: one of a message it did not hold (acknowledged already, another
 * consumer's: Pulsar takes either) lowers the count too, until the count is taken again.
 */
function settledHere(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  partition: ConsumerPartition,
  positions: readonly Position[],
): void {
  const distinct = new Set(positions.map(String)).size;
  ports.hints.unacked.add(partition.cursorId, consumer.consumerId, -distinct);
}

/** The messages an acknowledgement names: by message id ('L:E' or 'L:E:P') and/or by delivery handle. */
export interface AcknowledgeTargets {
  readonly messageIds: readonly string[];
  readonly deliveryHandles: readonly string[];
}

/** The messages a negative acknowledgement names, and whether they come back at once. */
export interface NegativeAcknowledgeTargets extends AcknowledgeTargets {
  /**
   * Redeliver at once (redeliverUnacknowledged): no backoff delay and no dead-letter topic.
   * Default false: the consumer's nack backoff.
   */
  readonly immediate?: boolean;
  /**
   * This nack's delay instead of the consumer's nack backoff (ackline, beyond Pulsar: apache/pulsar
   * #24372); the dead-letter rule still applies. Ignored with `immediate`.
   */
  readonly delayMs?: number;
}

type Targets = Map<string, { partition: ConsumerPartition; byHandle: NackItem[]; byId: Position[] }>;

/** Every id and handle resolved before anything is written: one bad one is a 4xx with no partial write. */
async function targetsOf(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  messageIds: readonly string[],
  deliveryHandles: readonly string[],
): Promise<Targets> {
  const targets: Targets = new Map();
  const group = (partition: ConsumerPartition) => {
    const existing = targets.get(partition.cursorId) ?? { partition, byHandle: [], byId: [] };
    targets.set(partition.cursorId, existing);
    return existing;
  };
  if (deliveryHandles.length > 0) {
    const handles = await deliveryHandlesOf(ports);
    for (const text of deliveryHandles) {
      const { partition, position, redeliveryCount } = partitionOfHandle(consumer, handles, text);
      group(partition).byHandle.push({ position, redeliveryCount });
    }
  }
  for (const text of messageIds) {
    const { partition, position } = partitionOfMessageId(consumer, text);
    group(partition).byId.push(position);
  }
  for (const { partition, byId } of targets.values()) await requireWritten(ports, partition, byId);
  return targets;
}

/**
 * Individual acknowledgement by message id and/or delivery handle: one commutative write per page
 * touched (a handle, signed by the server, proves the entry was dispatched; an id may name one not
 * dispatched yet, which the engine marks so dispatch never hands it out).
 */
export async function acknowledgeMessages(
  ports: UseCasePorts,
  principal: Principal | undefined,
  consumerId: string,
  { messageIds, deliveryHandles }: AcknowledgeTargets,
): Promise<void> {
  const consumer = await requireConsumer(ports, principal, consumerId);
  const targets = await targetsOf(ports, consumer, messageIds, deliveryHandles);
  await renewLease(ports, consumer);
  const ctx = engineOf(ports);
  await Promise.all(
    [...targets.values()].map(async ({ partition, byHandle, byId }) => {
      const cursor = cursorOf(consumer, partition);
      await acknowledge(
        ctx,
        cursor,
        byHandle.map((item) => item.position),
        // Stryker disable next-line ObjectLiteral: equivalent, `byId` left out is false
        { byId: false },
      );
      await acknowledge(ctx, cursor, byId, { byId: true });
      settledHere(ports, consumer, partition, [...byHandle.map((item) => item.position), ...byId]);
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
  await renewLease(ports, consumer);
  await acknowledgeCumulativeOnCursor(engineOf(ports), cursorOf(consumer, partition), consumerId, position);
}

/**
 * Negative acknowledgement (PIP-106): what the consumer holds comes back after its nack backoff for
 * the count it was handed with (a fixed delay, or the backoff), or goes to its dead-letter topic
 * past maxRedeliverCount (published as the consumer's role, then acknowledged). `delayMs` 0:
 * redeliverUnacknowledged of given messages.
 */
export async function negativeAcknowledge(
  ports: UseCasePorts,
  principal: Principal | undefined,
  consumerId: string,
  { messageIds, deliveryHandles, immediate = false, delayMs }: NegativeAcknowledgeTargets,
): Promise<void> {
  const consumer = await requireConsumer(ports, principal, consumerId);
  const targets = await targetsOf(ports, consumer, messageIds, deliveryHandles);
  await renewLease(ports, consumer);
  const ctx = engineOf(ports);
  for (const { partition, byHandle, byId } of targets.values()) {
    const producer = deadLetterProducerOf(ports, consumer, partition);
    const result = await nackOnCursor(ctx, {
      cursor: cursorOf(consumer, partition),
      consumerId,
      items: [...byHandle, ...byId.map((position) => ({ position }))],
      delayMs: (count) =>
        immediate ? 0 : (delayMs ?? negativeAckDelayMs(ports.backoffs, consumer.policy, count, ports.random)),
      ...(producer && !immediate ? { deadLetter: producer } : {}),
    });
    settledHere(ports, consumer, partition, [...result.released, ...result.deadLettered]);
    await ringAll(ports, partition.cursorId, result.dueAtMs);
  }
  ports.counters?.add('nacked', messageIds.length + deliveryHandles.length);
}

/**
 * Pulsar's redeliverUnacknowledgedMessages: the given deliveries come back at once with count + 1;
 * without any, everything the consumer holds does (Exclusive/Failover: a rewind of the partition,
 * replayed in order; Shared/Key_Shared: the consumer's held entries released).
 */
export async function redeliverUnacknowledged(
  ports: UseCasePorts,
  principal: Principal | undefined,
  consumerId: string,
  deliveryHandles: readonly string[],
): Promise<void> {
  if (deliveryHandles.length > 0) {
    await negativeAcknowledge(ports, principal, consumerId, {
      messageIds: [],
      deliveryHandles,
      immediate: true,
    });
    return;
  }
  const consumer = await requireConsumer(ports, principal, consumerId);
  await renewLease(ports, consumer);
  // Stryker disable next-line ObjectLiteral: equivalent, `close` left out is false
  await releaseConsumer(ports, consumer, { close: false });
}
