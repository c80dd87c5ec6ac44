import { NotFoundError, ValidationError } from '../../domain/errors.ts';
import { isCumulativeAckType, type SubscriptionType } from '../../domain/subscription-type.ts';
import type { ConsumerPartition, ConsumerRecord } from '../../ports/consumer-registry.ts';
import type { Delivery } from '../engine/engine-context.ts';
import { cursorOf, engineOf } from '../engine/engine-ports.ts';
import { acknowledge, negativeAcknowledge } from '../engine/pending-acks.ts';
import { markConsumerActive } from '../maintenance/activity.ts';
import { deadLetterProducerOf } from '../producers/dead-letter-producer.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import type { BatchOrder, ConsumerMessage } from './consumer-message.ts';
import { negativeAckDelayMs } from './consumer-policy.ts';
import { ringAll, ringAt } from './doorbells.ts';
import { consumerMessageOf, dispatchFor } from './receive-messages.ts';

/** One record of a subscription's doorbell queue, as the event-source mapping hands it. */
export interface QueueRecord {
  /** The record's id in the event (SQS's messageId): what a partial batch failure names. */
  readonly recordId: string;
  /** The subscription queue it came from, by its cursor. */
  readonly cursorId: string;
  readonly body: string;
}

/** One batch handed to the consumer's function: the messages, and how they may be processed. */
export interface ConsumerBatch {
  readonly order: BatchOrder;
  readonly messages: readonly ConsumerMessage[];
}

/**
 * What became of a batch, by messageId: `failed` (the function's process threw: negatively
 * acknowledged), `unfinished` (the invocation failed, timed out or crashed: left held, so the ack
 * timeout redelivers it, counted as a delivery); every other message of the batch succeeded.
 */
export interface BatchHandled {
  readonly failed: ReadonlyMap<string, string>;
  readonly unfinished: ReadonlyMap<string, unknown>;
  /** Of the failed, how the function asked them retried (none: the consumer's nack backoff). */
  readonly retry?: ReadonlyMap<string, RetryChoice>;
}

/** A failed message's retry: after `delayMs` (RetryAfterError), or never (non-retryable: dead letter). */
export type RetryChoice = { readonly delayMs: number } | { readonly nonRetryable: true };

/** Hands a batch to the consumer's function (the user's Lambda, invoked synchronously). */
export type BatchHandler = (batch: ConsumerBatch) => Promise<BatchHandled>;

/** What became of one message handed to the function. */
export type MessageOutcome =
  | { readonly kind: 'acknowledged'; readonly message: ConsumerMessage }
  | { readonly kind: 'negativelyAcknowledged'; readonly message: ConsumerMessage; readonly error: string }
  | { readonly kind: 'unfinished'; readonly message: ConsumerMessage; readonly error: unknown };

export interface QueueRecordsResult {
  readonly outcomes: readonly MessageOutcome[];
  /** Records to report as batch item failures (the event source shows them again). */
  readonly failedRecords: readonly string[];
  /** A storage or queue failure that stopped the step, if any. */
  readonly error?: unknown;
}

/** Messages one dispatch hands a Lambda consumer. */
const BATCH = 10;
/** Time an invocation keeps back for acknowledging the last batch. */
const RESERVE_MS = 3_000;

/** What {@link processQueueRecords} works on. */
export interface QueueRecordsRequest {
  /** The event-driven consumer (registered by subscribe, durable) the messages are dispatched to. */
  readonly consumerId: string;
  readonly records: readonly QueueRecord[];
  readonly handleBatch: BatchHandler;
  /**
   * The latest time a batch may be handed over: the caller's own end, less the time the function
   * may take (its timeout). Default: no limit.
   */
  readonly deadlineMs?: number;
}

/**
 * An event-driven consumer's step (the runner on its subscription's doorbell queue), with the
 * semantics of an HTTP consumer that receives, processes and acknowledges:
 * 1. The records are rings: they say "something may be due", nothing more. The consumer
 *    (registered by subscribe, durable) supplies the subscription and its policies; a record from
 *    another subscription's queue fails the batch (a wiring error).
 * 2. Until the dispatcher has nothing more or the time is nearly up: dispatch a batch (recorded as
 *    held by this consumer, with the function's timeout as its ack timeout), hand it to
 *    `handleBatch` (to be processed in order on Exclusive/Failover, in order per key on
 *    Key_Shared, all at once on Shared), acknowledge what succeeded, negatively acknowledge what
 *    failed (backoff, or the dead-letter topic past maxRedeliverCount, published as the
 *    consumer's role), and leave held what is unfinished.
 * 3. An invocation that times out or crashes leaves its batch held: the tracker redelivers it at
 *    the ack timeout with the count incremented, so it counts as a delivery and dead-letters past
 *    maxRedeliverCount, never in an SQS DLQ. Out of time with work left: the doorbell is rung
 *    again for the next invocation.
 */
export async function processQueueRecords(
  ports: UseCasePorts,
  request: QueueRecordsRequest,
): Promise<QueueRecordsResult> {
  const { consumerId, records } = request;
  const consumer = await ports.consumers.get(consumerId);
  if (!consumer) {
    throw new NotFoundError(`Consumer ${consumerId} not found: subscribe it first, and do not close it`);
  }
  await markConsumerActive(ports, consumer);
  for (const record of records) {
    if (!consumer.partitions.some((partition) => partition.cursorId === record.cursorId)) {
      throw new ValidationError(
        `Records of cursor ${record.cursorId} do not come from a queue of consumer ${consumerId} ` +
          `(subscription ${consumer.subscription} on ${consumer.topic}): wire the function to its own subscription's queues`,
      );
    }
  }
  const outcomes: MessageOutcome[] = [];
  const deadline = request.deadlineMs ?? Number.POSITIVE_INFINITY;
  try {
    for (;;) {
      if (ports.clock.nowMs() > deadline - RESERVE_MS) {
        for (const partition of consumer.partitions)
          await ringAt(ports, partition.cursorId, ports.clock.nowMs());
        break;
      }
      const taken = await dispatchFor(ports, consumer, BATCH);
      if (taken.length === 0) break;
      outcomes.push(...(await processBatch(ports, consumer, taken, request.handleBatch)));
    }
  } catch (error) {
    return { outcomes, failedRecords: records.map((record) => record.recordId), error };
  }
  return { outcomes, failedRecords: [] };
}

type Taken = { readonly partition: ConsumerPartition; readonly delivery: Delivery };

/** How a subscription type lets a batch be processed. */
export function batchOrderOf(subscriptionType: SubscriptionType): BatchOrder {
  if (isCumulativeAckType(subscriptionType)) return 'sequential';
  return subscriptionType === 'Key_Shared' ? 'byKey' : 'concurrent';
}

/** Hands the batch over, then acknowledges what succeeded and negatively acknowledges what failed. */
async function processBatch(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  taken: readonly Taken[],
  handleBatch: BatchHandler,
): Promise<MessageOutcome[]> {
  const items = taken.map((item) => ({ ...item, message: consumerMessageOf(item.partition, item.delivery) }));
  const handled = await handleBatch({
    order: batchOrderOf(consumer.subscriptionType),
    messages: items.map((item) => item.message),
  });
  const outcomes: MessageOutcome[] = [];
  const acked = new Map<ConsumerPartition, Taken[]>();
  for (const item of items) {
    const { message } = item;
    if (handled.unfinished.has(message.messageId)) {
      outcomes.push({ kind: 'unfinished', message, error: handled.unfinished.get(message.messageId) });
      continue;
    }
    const error = handled.failed.get(message.messageId);
    if (error !== undefined) {
      await negativelyAcknowledge(ports, consumer, item, handled.retry?.get(message.messageId));
      outcomes.push({ kind: 'negativelyAcknowledged', message, error });
      continue;
    }
    acked.set(item.partition, [...(acked.get(item.partition) ?? []), item]);
    outcomes.push({ kind: 'acknowledged', message });
  }
  const ctx = engineOf(ports);
  for (const [partition, items] of acked) {
    const positions = items.map((item) => item.delivery.position);
    await acknowledge(ctx, cursorOf(consumer, partition), positions, { byId: false });
    settled(ports, consumer, partition, positions.length);
    ports.counters?.add('acked', positions.length);
  }
  return outcomes;
}

/** A nack of one message: due again after the backoff, or dead-lettered past maxRedeliverCount. */
async function negativelyAcknowledge(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  { partition, delivery }: Taken,
  retry?: RetryChoice,
): Promise<void> {
  const policyProducer = deadLetterProducerOf(ports, consumer, partition);
  // Non-retryable: every count is past this producer's max, so the nack dead-letters it now.
  const producer =
    policyProducer && retry && 'nonRetryable' in retry
      ? { ...policyProducer, maxRedeliverCount: -1 }
      : policyProducer;
  const delayMs = retry && 'delayMs' in retry ? retry.delayMs : undefined;
  const result = await negativeAcknowledge(engineOf(ports), {
    cursor: cursorOf(consumer, partition),
    consumerId: consumer.consumerId,
    items: [{ position: delivery.position, redeliveryCount: delivery.redeliveryCount }],
    delayMs: (count) => delayMs ?? negativeAckDelayMs(ports.backoffs, consumer.policy, count, ports.random),
    ...(producer ? { deadLetter: producer } : {}),
  });
  await ringAll(ports, partition.cursorId, result.dueAtMs);
  settled(ports, consumer, partition, 1);
  ports.counters?.add('nacked', 1);
}

/**
 * A message this invocation was handed is settled: it no longer counts against the consumer's cap
 * in this process's count (engine/consumer-cap.ts). Without this the count, taken a moment ago,
 * would block the next dispatch of the same invocation, which then ends with the backlog left and
 * nothing to ring for it. Exact here: a container runs one invocation at a time, and each message
 * it was handed is settled once.
 */
function settled(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  partition: ConsumerPartition,
  count: number,
): void {
  ports.hints.unacked.add(partition.cursorId, consumer.consumerId, -count);
}
