import { type DeliveryToken, decodeDeliveryToken } from '../domain/delivery-token.ts';
import { NotFoundError, ValidationError } from '../domain/errors.ts';
import type { ConsumerPartition, ConsumerRecord } from '../ports/consumer-registry.ts';
import {
  type ConsumerMessage,
  checkDeliveries,
  type DeliveryVerdict,
  redeliver,
} from './consume-messages.ts';
import { negativeAckDelayMs } from './consumer-policy.ts';
import { enqueue, positionOf, queueOf } from './delivery.ts';
import type { UseCasePorts } from './ports.ts';

/** One record of a subscription queue's event (an SQS record, as the event-source mapping hands it). */
export interface QueueRecord {
  /** The record's id in the event (SQS's messageId): what a partial batch failure names. */
  readonly recordId: string;
  /** The subscription queue it came from, by its cursor. */
  readonly cursorId: string;
  /** The delivery token, as the queue carries it. */
  readonly body: string;
}

/** The user's code for one message: resolving acknowledges it, throwing negatively acknowledges it. */
export type MessageProcessor = (message: ConsumerMessage) => Promise<void> | void;

/**
 * What became of one record. Every outcome but `failed` tells the event source
 * that the record is done (SQS deletes it): the cursor holds the result.
 */
export type RecordOutcome =
  /** Acknowledged, superseded or never written: not handed to the processor. */
  | { readonly recordId: string; readonly kind: 'dropped' }
  /** A delayed message not yet due: a new token was enqueued for its deliverAt. */
  | { readonly recordId: string; readonly kind: 'deferred' }
  /** The processor resolved; the message is acknowledged on the cursor. */
  | { readonly recordId: string; readonly kind: 'acknowledged'; readonly message: ConsumerMessage }
  /**
   * The processor threw: a negative acknowledgement, as a nack over HTTP (a new
   * token with the count incremented after the nack backoff, or the dead-letter
   * topic past maxRedeliverCount).
   */
  | {
      readonly recordId: string;
      readonly kind: 'negativelyAcknowledged';
      readonly message: ConsumerMessage;
      readonly error: unknown;
    }
  /**
   * Not done: a malformed token, a storage or queue failure, or (ordered
   * subscriptions) a record after such a failure, left untouched to keep the
   * order. Report it as a batch item failure: SQS makes it visible again after
   * the queue's visibility timeout, and the queue's redrive policy moves it to
   * the queue's dead-letter queue after maxReceiveCount receives.
   */
  | { readonly recordId: string; readonly kind: 'failed'; readonly error: unknown };

/**
 * An event-driven consumer's step for one batch of records from its
 * subscription queue(s), with the semantics of an HTTP consumer that receives,
 * processes and acknowledges or nacks each message:
 * 1. The consumer (registered by subscribe) supplies the subscription and the
 *    redelivery policy; a missing consumer, or a queue that is not one of its
 *    subscription's, fails the whole batch (a wiring error, not a message's).
 * 2. Each queue's tokens go through the same delivery check as HTTP receive:
 *    acknowledged or superseded tokens are dropped, delayed messages not yet
 *    due are re-enqueued for their deliverAt.
 * 3. `processMessage` gets each remaining message: one after another on Exclusive and
 *    Failover (the partition's order), one after another per key on
 *    Key_Shared, all at once on Shared.
 * 4. Resolved: acknowledge on the cursor (one cursor write per message).
 *    Thrown: redeliver with count + 1 after the consumer's nack backoff, or
 *    dead-letter past maxRedeliverCount; either way the old token is done.
 * 5. Storage and queue failures leave the record to SQS (`failed`).
 *
 * There is no ack-timeout tracking here: the function's own timeout plays that
 * role. An invocation that times out or crashes acknowledges nothing more;
 * SQS makes its unfinished records visible again after the queue's visibility
 * timeout, and the delivery check hands them out again with the same count.
 */
export async function processQueueRecords(
  ports: UseCasePorts,
  consumerId: string,
  records: readonly QueueRecord[],
  processMessage: MessageProcessor,
): Promise<RecordOutcome[]> {
  const consumer = await ports.consumers.get(consumerId);
  if (!consumer) {
    throw new NotFoundError(`Consumer ${consumerId} not found: subscribe it first, and do not close it`);
  }
  const byQueue = new Map<string, QueueRecord[]>();
  for (const record of records) {
    byQueue.set(record.cursorId, [...(byQueue.get(record.cursorId) ?? []), record]);
  }
  // Every queue is checked before any record is processed: a wiring error changes nothing.
  const batches = [...byQueue].map(([cursorId, queueRecords]) => {
    const partition = consumer.partitions.find((candidate) => candidate.cursorId === cursorId);
    if (!partition) {
      throw new ValidationError(
        `Records of cursor ${cursorId} do not come from a queue of consumer ${consumerId} ` +
          `(subscription ${consumer.subscription} on ${consumer.topic}): wire the function to its own subscription's queues`,
      );
    }
    return { partition, queueRecords };
  });
  const outcomes = new Map<string, RecordOutcome>();
  await Promise.all(
    batches.map(async ({ partition, queueRecords }) => {
      const done = await processPartitionRecords(ports, consumer, partition, queueRecords, processMessage);
      for (const outcome of done) outcomes.set(outcome.recordId, outcome);
    }),
  );
  return records.map((record) => outcomes.get(record.recordId) as RecordOutcome);
}

interface Deliverable {
  readonly record: QueueRecord;
  readonly token: DeliveryToken;
  readonly message: ConsumerMessage;
}

async function processPartitionRecords(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  partition: ConsumerPartition,
  records: readonly QueueRecord[],
  processMessage: MessageProcessor,
): Promise<RecordOutcome[]> {
  const queue = queueOf({ cursorId: partition.cursorId, type: consumer.subscriptionType });
  const outcomes: RecordOutcome[] = [];
  const decoded: { record: QueueRecord; token: DeliveryToken }[] = [];
  for (const record of records) {
    try {
      decoded.push({ record, token: decodeDeliveryToken(record.body) });
    } catch (error) {
      outcomes.push({ recordId: record.recordId, kind: 'failed', error });
    }
  }
  let verdicts: DeliveryVerdict[];
  try {
    verdicts = await checkDeliveries(
      ports,
      consumer,
      partition,
      decoded.map((each) => each.token),
      [],
      ports.clock.nowMs(),
    );
  } catch (error) {
    return [...outcomes, ...decoded.map(({ record }) => failed(record, error))];
  }
  const deliverable: Deliverable[] = [];
  const notYetDue: { record: QueueRecord; token: DeliveryToken; dueAtMs: number }[] = [];
  for (const [index, { record, token }] of decoded.entries()) {
    const verdict = verdicts[index] as DeliveryVerdict;
    if (verdict.kind === 'deliver') deliverable.push({ record, token, message: verdict.message });
    else if (verdict.kind === 'notYetDue') notYetDue.push({ record, token, dueAtMs: verdict.dueAtMs });
    else if (verdict.kind === 'drop') outcomes.push({ recordId: record.recordId, kind: 'dropped' });
    // No Key_Shared member selection here (no members were given): the event source shares the queue out.
    else outcomes.push(failed(record, new Error(`Unexpected delivery verdict ${verdict.kind}`)));
  }
  if (notYetDue.length > 0) {
    try {
      await enqueue(ports, queue, notYetDue);
      for (const { record } of notYetDue) outcomes.push({ recordId: record.recordId, kind: 'deferred' });
    } catch (error) {
      for (const { record } of notYetDue) outcomes.push(failed(record, error));
    }
  }
  ports.counters?.add('delivered', deliverable.length);
  const redelivered = deliverable.filter((item) => item.message.redeliveryCount > 0).length;
  if (redelivered > 0) ports.counters?.add('redelivered', redelivered);
  const handle = (item: Deliverable) => processOne(ports, consumer, partition, item, processMessage);
  if (queue.ordered) {
    // FIFO: a record left on the queue must not be overtaken by the ones after it.
    let blocked: unknown;
    for (const item of deliverable) {
      const outcome = blocked === undefined ? await handle(item) : failed(item.record, blocked);
      if (outcome.kind === 'failed') blocked = outcome.error;
      outcomes.push(outcome);
    }
  } else if (consumer.subscriptionType === 'Key_Shared') {
    const byKey = new Map<string, Deliverable[]>();
    for (const item of deliverable) {
      const key = item.message.key ?? item.message.messageId;
      byKey.set(key, [...(byKey.get(key) ?? []), item]);
    }
    await Promise.all(
      [...byKey.values()].map(async (items) => {
        for (const item of items) outcomes.push(await handle(item));
      }),
    );
  } else {
    outcomes.push(...(await Promise.all(deliverable.map(handle))));
  }
  return outcomes;
}

/** Hands one message to the processor, then acknowledges it or nacks it. */
async function processOne(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  partition: ConsumerPartition,
  { record, token, message }: Deliverable,
  processMessage: MessageProcessor,
): Promise<RecordOutcome> {
  const position = positionOf(token);
  let processingError: unknown;
  let processed = false;
  try {
    await processMessage(message);
    processed = true;
  } catch (error) {
    processingError = error;
  }
  try {
    if (processed) {
      await ports.cursors.acknowledge(partition.cursorId, [position]);
      ports.counters?.add('acked', 1);
      return { recordId: record.recordId, kind: 'acknowledged', message };
    }
    // The event source deletes the old token once this record is reported done: no receipt to remove.
    const delayMs = negativeAckDelayMs(ports.backoffs, consumer.policy, token.redeliveryCount);
    await redeliver(ports, consumer, partition, position, token.redeliveryCount, undefined, delayMs);
    ports.counters?.add('nacked', 1);
    return { recordId: record.recordId, kind: 'negativelyAcknowledged', message, error: processingError };
  } catch (error) {
    return failed(record, error);
  }
}

function failed(record: QueueRecord, error: unknown): RecordOutcome {
  return { recordId: record.recordId, kind: 'failed', error };
}
