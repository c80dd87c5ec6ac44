import { NotFoundError, ValidationError } from '../domain/errors.ts';
import { isCumulativeAckType } from '../domain/subscription-type.ts';
import type { ConsumerPartition, ConsumerRecord } from '../ports/consumer-registry.ts';
import { markConsumerActive } from './activity.ts';
import { negativeAckDelayMs } from './consumer-policy.ts';
import { deadLetterProducerOf } from './consumers/dead-letter-producer.ts';
import { ringAll, ringAt } from './consumers/doorbells.ts';
import { type ConsumerMessage, consumerMessageOf, dispatchFor } from './consumers/receive-messages.ts';
import type { Delivery } from './engine/engine-context.ts';
import { acknowledge, negativeAcknowledge } from './engine/pending-acks.ts';
import { cursorOf, engineOf } from './engine-ports.ts';
import type { UseCasePorts } from './ports.ts';
import { addHandedOut } from './process-memo.ts';

/** One record of a subscription's doorbell queue, as the event-source mapping hands it. */
export interface QueueRecord {
  /** The record's id in the event (SQS's messageId): what a partial batch failure names. */
  readonly recordId: string;
  /** The subscription queue it came from, by its cursor. */
  readonly cursorId: string;
  readonly body: string;
}

/** The user's code for one message: resolving acknowledges it, throwing negatively acknowledges it. */
export type MessageProcessor = (message: ConsumerMessage) => Promise<void> | void;

/** What became of one message handed to the processor. */
export type MessageOutcome =
  | { readonly kind: 'acknowledged'; readonly message: ConsumerMessage }
  | { readonly kind: 'negativelyAcknowledged'; readonly message: ConsumerMessage; readonly error: unknown };

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

/**
 * An event-driven consumer's step (a Lambda function on its subscription's doorbell queue), with
 * the semantics of an HTTP consumer that receives, processes and acknowledges:
 * 1. The records are rings: they say "something may be due", nothing more. The consumer
 *    (registered by subscribe, durable) supplies the subscription and its policies; a record from
 *    another subscription's queue fails the batch (a wiring error).
 * 2. Until the dispatcher has nothing more or the time is nearly up: dispatch a batch (recorded as
 *    held by this consumer, with the function's timeout as its ack timeout), hand each message to
 *    `processMessage` (in order on Exclusive/Failover, in order per key on Key_Shared, all at once
 *    on Shared), acknowledge what resolved, negatively acknowledge what threw (backoff, or the
 *    dead-letter topic past maxRedeliverCount, published as the consumer's role).
 * 3. An invocation that times out or crashes leaves its batch held: the tracker redelivers it at
 *    the timeout with the count incremented, so it counts as a delivery and dead-letters past
 *    maxRedeliverCount, never in an SQS DLQ. Out of time with work left: the doorbell is rung
 *    again for the next invocation.
 */
export async function processQueueRecords(
  ports: UseCasePorts,
  consumerId: string,
  records: readonly QueueRecord[],
  processMessage: MessageProcessor,
  options: { readonly deadlineMs?: number } = {},
): Promise<QueueRecordsResult> {
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
  const deadline = options.deadlineMs ?? Number.POSITIVE_INFINITY;
  try {
    for (;;) {
      if (ports.clock.nowMs() > deadline - RESERVE_MS) {
        for (const partition of consumer.partitions)
          await ringAt(ports, partition.cursorId, ports.clock.nowMs());
        break;
      }
      const taken = await dispatchFor(ports, consumer, BATCH);
      if (taken.length === 0) break;
      outcomes.push(...(await processBatch(ports, consumer, taken, processMessage)));
    }
  } catch (error) {
    return { outcomes, failedRecords: records.map((record) => record.recordId), error };
  }
  return { outcomes, failedRecords: [] };
}

type Taken = { readonly partition: ConsumerPartition; readonly delivery: Delivery };

async function processBatch(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  taken: readonly Taken[],
  processMessage: MessageProcessor,
): Promise<MessageOutcome[]> {
  const handle = (item: Taken) => processOne(ports, consumer, item, processMessage);
  if (isCumulativeAckType(consumer.subscriptionType)) {
    const outcomes: MessageOutcome[] = [];
    for (const item of taken) outcomes.push(await handle(item));
    return outcomes;
  }
  if (consumer.subscriptionType === 'Key_Shared') {
    const byKey = new Map<string, Taken[]>();
    for (const item of taken) {
      const key = item.delivery.entry.key ?? item.delivery.position.toString();
      byKey.set(key, [...(byKey.get(key) ?? []), item]);
    }
    const groups = await Promise.all(
      [...byKey.values()].map(async (items) => {
        const outcomes: MessageOutcome[] = [];
        for (const item of items) outcomes.push(await handle(item));
        return outcomes;
      }),
    );
    return groups.flat();
  }
  return Promise.all(taken.map(handle));
}

/** Hands one message to the processor, then acknowledges or negatively acknowledges it. */
async function processOne(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  { partition, delivery }: Taken,
  processMessage: MessageProcessor,
): Promise<MessageOutcome> {
  const message = consumerMessageOf(partition, delivery);
  const cursor = cursorOf(consumer, partition);
  const ctx = engineOf(ports);
  try {
    await processMessage(message);
  } catch (error) {
    const producer = deadLetterProducerOf(ports, consumer, partition);
    const result = await negativeAcknowledge(ctx, {
      cursor,
      consumerId: consumer.consumerId,
      items: [{ position: delivery.position, redeliveryCount: delivery.redeliveryCount }],
      delayMs: (count) => negativeAckDelayMs(ports.backoffs, consumer.policy, count),
      ...(producer
        ? {
            maxRedeliverCount: producer.maxRedeliverCount,
            deadLetter: (_positions, count) => producer.publish([delivery.entry], count),
          }
        : {}),
    });
    await ringAll(ports, partition.cursorId, result.dueAtMs);
    settled(ports, consumer, partition);
    ports.counters?.add('nacked', 1);
    return { kind: 'negativelyAcknowledged', message, error };
  }
  await acknowledge(ctx, cursor, [delivery.position], { byId: false });
  settled(ports, consumer, partition);
  ports.counters?.add('acked', 1);
  return { kind: 'acknowledged', message };
}

/**
 * A message this invocation was handed is settled: it no longer counts against the consumer's cap
 * in this process's count (engine/consumer-cap.ts). Without this the count, taken a moment ago,
 * would block the next dispatch of the same invocation, which then ends with the backlog left and
 * nothing to ring for it. Exact here: a container runs one invocation at a time, and each message
 * it was handed is settled once.
 */
function settled(ports: UseCasePorts, consumer: ConsumerRecord, partition: ConsumerPartition): void {
  addHandedOut(ports, partition.cursorId, consumer.consumerId, -1);
}
