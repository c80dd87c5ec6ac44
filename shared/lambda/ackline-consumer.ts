import { createDependencies, type Dependencies } from '../adapters/create-dependencies.ts';
import { findLambdaConsumer, type LambdaConsumerRef } from '../application/consumers/find-lambda-consumer.ts';
import {
  type MessageProcessor,
  processQueueRecords,
  type QueueRecordsResult,
} from '../application/process-queue-records.ts';
import { ConfigurationError, loadConfig } from '../config/load-config.ts';
import { CONSUMER_ID_ENV, CONSUMER_NAME_ENV, SUBSCRIPTION_ENV, TOPIC_ENV } from './consumer-env.ts';
import type { InvocationContext, SqsBatchResponse, SqsEvent } from './sqs-event.ts';
import { cursorIdOfQueueArn } from './subscription-queue-arn.ts';

/**
 * What {@link acklineConsumer} takes: your `process`, and which consumer the function is (by
 * default, from the environment the AcklineSubscriptionConsumer construct sets).
 *
 * @example
 * const options: AcklineConsumerOptions = { process: async (message) => console.log(message.payload) };
 */
export interface AcklineConsumerOptions {
  /**
   * The topic whose subscription the function consumes (`persistent://tenant/namespace/name`).
   * Default: the `ACKLINE_TOPIC` environment variable (the AcklineSubscriptionConsumer CDK
   * construct sets it).
   */
  readonly topic?: string;
  /** The subscription. Default: the `ACKLINE_SUBSCRIPTION` environment variable (set by the construct). */
  readonly subscription?: string;
  /**
   * The `consumerName` of the function's consumer, when the subscription has several
   * event-driven consumers. Default: the `ACKLINE_CONSUMER_NAME` environment variable, if any.
   */
  readonly consumerName?: string;
  /**
   * The consumer whose subscription and redelivery policy apply, by the `consumerId` that
   * subscribe answered, instead of by topic and subscription. Default: the
   * `ACKLINE_CONSUMER_ID` environment variable, if any.
   */
  readonly consumerId?: string;
  /**
   * Your code for one message. Resolving acknowledges the message; throwing
   * negatively acknowledges it: it comes back after the consumer's nack
   * backoff with `redeliveryCount` + 1, or goes to the dead-letter topic past
   * the dead-letter policy's `maxRedeliverCount`.
   */
  readonly process: MessageProcessor;
}

/** A Lambda handler for SQS events with partial batch failures (`reportBatchItemFailures`). */
export type AcklineConsumerHandler = (
  event: SqsEvent,
  context?: InvocationContext,
) => Promise<SqsBatchResponse>;

/**
 * Turns `process(message)` into the handler of a Lambda function that an SQS
 * event source feeds from a subscription's queue: an event-driven Pulsar
 * consumer, with the semantics of an HTTP consumer that receives, processes
 * and acknowledges.
 *
 * - Every record goes through the delivery check first: messages acknowledged
 *   by anyone (consumer, admin acknowledgeMessage, skip) or superseded by a
 *   redelivery never reach `process`; delayed messages wait for deliverAt.
 * - `process` resolves: the message is acknowledged on the cursor.
 * - `process` throws: a negative acknowledgement (PIP-106): redelivered after
 *   the consumer's nack backoff with the count incremented, or published to
 *   the dead-letter topic (with `REAL_TOPIC`, `ORIGIN_MESSAGE_ID`,
 *   `REAL_SUBSCRIPTION`) past `maxRedeliverCount`. The record itself is
 *   reported done, so SQS's own receive count and redrive stay out of it.
 * - Only storage and queue failures are reported as batch item failures: SQS
 *   shows those records again after the queue's visibility timeout (30 s).
 * - Ack timeout: the function's timeout plays that role, not the consumer's
 *   `ackTimeoutMs`. An invocation that times out or crashes leaves its
 *   messages held: they are redelivered once the function's timeout (plus
 *   5 s) has passed, with `redeliveryCount` + 1, so they too go to the
 *   dead-letter topic past `maxRedeliverCount`. Keep the function's timeout
 *   under the subscription queue's visibility timeout (30 s).
 * - Exclusive and Failover: messages are processed one after another, in
 *   order; Key_Shared processes one key after another, Shared a whole batch
 *   at once.
 *
 * The function finds its consumer once per cold start: the one subscribed
 * with `consumerKind: "lambda"` on `topic` and `subscription` (by default from
 * `ACKLINE_TOPIC` and `ACKLINE_SUBSCRIPTION`, which the construct sets).
 * The dependencies (DynamoDB and SQS clients, from the same environment
 * variables as ackline's own functions) are built once per cold start.
 *
 * @example
 * import { acklineConsumer } from '@ackline/lambda';
 *
 * export const handler = acklineConsumer({
 *   process: async (message) => {
 *     const order = JSON.parse(message.payload);
 *     await fulfil(order); // a throw is a nack: back after the backoff, redeliveryCount + 1
 *   },
 * });
 */
export function acklineConsumer(options: AcklineConsumerOptions): AcklineConsumerHandler {
  let cached: Promise<AcklineConsumerHandler> | undefined;
  return async (event, context) => {
    cached ??= coldStart(options).catch((error: unknown) => {
      cached = undefined; // a consumer subscribed later is found by the next invocation
      throw error;
    });
    return (await cached)(event, context);
  };
}

/** Once per cold start: the dependencies, and the consumer the function acts as. */
async function coldStart(options: AcklineConsumerOptions): Promise<AcklineConsumerHandler> {
  const deps = createDependencies(loadConfig(), 'consumer');
  const consumerId =
    options.consumerId ??
    process.env[CONSUMER_ID_ENV] ??
    (await findLambdaConsumer(deps.ports, consumerRef(options)));
  return makeAcklineConsumer(deps, { consumerId, process: options.process });
}

/**
 * {@link acklineConsumer} over given dependencies (tests, or a composition
 * root of your own).
 *
 * adapter (SQS event) -> processQueueRecords -> cursor store / delivery queue / scheduler
 *
 * @example
 * const handler = makeAcklineConsumer(createDependencies(loadConfig(), 'consumer'), {
 *   consumerId,
 *   process: async (message) => console.log(message.payload),
 * });
 */
export function makeAcklineConsumer(
  deps: Dependencies,
  options: { readonly consumerId: string; readonly process: MessageProcessor },
): AcklineConsumerHandler {
  return async (event, context) => {
    const records = event.Records.map((record) => ({
      recordId: record.messageId,
      cursorId: cursorIdOfQueueArn(deps.config.queuePrefix, record.eventSourceARN),
      body: record.body,
    }));
    const remainingMs = context?.getRemainingTimeInMillis?.();
    let result: QueueRecordsResult;
    try {
      result = await processQueueRecords(deps.ports, options.consumerId, records, options.process, {
        ...(remainingMs !== undefined ? { deadlineMs: deps.ports.clock.nowMs() + remainingMs } : {}),
      });
    } finally {
      deps.metrics.publishStoredMetrics();
    }
    for (const outcome of result.outcomes) {
      if (outcome.kind === 'negativelyAcknowledged') {
        deps.logger.warn('process threw: message negatively acknowledged', {
          messageId: outcome.message.messageId,
          redeliveryCount: outcome.message.redeliveryCount,
          error: outcome.error as Error,
        });
      }
    }
    if (result.error) deps.logger.error('records left to SQS for a retry', { error: result.error as Error });
    return { batchItemFailures: result.failedRecords.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}

function consumerRef(options: AcklineConsumerOptions): LambdaConsumerRef {
  const topic = options.topic ?? process.env[TOPIC_ENV];
  const subscription = options.subscription ?? process.env[SUBSCRIPTION_ENV];
  if (!topic || !subscription) {
    throw new ConfigurationError(
      `missing environment variables ${TOPIC_ENV} and ${SUBSCRIPTION_ENV} ` +
        '(or give acklineConsumer a topic and subscription, or a consumerId)',
    );
  }
  const consumerName = options.consumerName ?? process.env[CONSUMER_NAME_ENV];
  return { topic, subscription, ...(consumerName ? { consumerName } : {}) };
}
