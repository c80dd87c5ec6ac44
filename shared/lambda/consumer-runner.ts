import type { Dependencies } from '../adapters/create-dependencies.ts';
import type { ConsumerMessage } from '../application/consumers/consumer-message.ts';
import { findLambdaConsumer, type LambdaConsumerRef } from '../application/consumers/find-lambda-consumer.ts';
import {
  type BatchHandled,
  type BatchHandler,
  type ConsumerBatch,
  processQueueRecords,
  type RetryChoice,
} from '../application/consumers/process-queue-records.ts';
import { ConfigurationError } from '../config/load-config.ts';
import type { FunctionInvoker } from '../ports/function-invoker.ts';
import { FunctionInvocationError } from '../ports/function-invoker.ts';
import { type AcklineBatchEvent, isAcklineBatchResponse } from './consumer-batch.ts';
import { CONSUMER_ID_ENV, CONSUMER_NAME_ENV, SUBSCRIPTION_ENV, TOPIC_ENV } from './consumer-env.ts';
import type { InvocationContext, SqsBatchResponse, SqsEvent } from './sqs-event.ts';
import { cursorIdOfQueueArn } from './subscription-queue-arn.ts';

/** Which consumer the runner dispatches to: by id, or by topic and subscription (and name). */
export type ConsumerSelector = { readonly consumerId: string } | LambdaConsumerRef;

/** What {@link makeConsumerRunner} needs besides the dependencies. */
export interface ConsumerRunnerOptions {
  readonly consumer: ConsumerSelector;
  /** The user's function (its handler is `acklineConsumer()`), invoked synchronously per batch. */
  readonly target: FunctionInvoker;
  /** The user's function's timeout: no batch is handed over later than this before the runner's own end. */
  readonly targetTimeoutMs: number;
}

/** The runner's handler: Lambda's SQS event with partial batch failures. */
export type ConsumerRunnerHandler = (
  event: SqsEvent,
  context?: InvocationContext,
) => Promise<SqsBatchResponse>;

/**
 * Lambda's synchronous invocation payload limit is 6 MB; a batch is split into invocations below
 * it (a message's JSON is at most about 2 MB: 320 KiB, escaped).
 */
const MAX_INVOCATION_BYTES = 5_000_000;
/** Time kept back after the last invocation to acknowledge its batch. */
const INVOCATION_MARGIN_MS = 1_000;

/**
 * The subscription runner: ackline's function on a subscription's doorbell queues, which does
 * for the user's function everything that touches ackline's tables and queues, so the user's
 * function needs no permission but being invoked.
 *
 * adapter (SQS event) -> processQueueRecords -> cursor store / delivery queue / scheduler
 *                                            -> the user's function (FunctionInvoker), per batch
 *
 * 1. Finds its consumer once per cold start (by id, or by topic and subscription name).
 * 2. Dispatches batches to it (processQueueRecords) and invokes the user's function with each,
 *    synchronously: the function's answer names the messages whose processing failed
 *    (negatively acknowledged); the others are acknowledged.
 * 3. An invocation that fails, times out, crashes or answers something else acknowledges nothing:
 *    its messages stay held and the ack timeout redelivers them, counted as a delivery (and
 *    dead-lettered past maxRedeliverCount).
 * 4. Only storage and queue failures become batch item failures (SQS shows the records again).
 *
 * The metrics it adds are flushed by the Lambda entry point's middleware (functions/consumer-runner).
 *
 * @example
 * const runner = makeConsumerRunner(createDependencies(loadConfig(), 'consumer'), {
 *   consumer: { topic: 'persistent://public/default/orders', subscription: 'billing' },
 *   target: new InProcessFunctionInvoker(acklineConsumer({ process: async () => {} })),
 *   targetTimeoutMs: 20_000,
 * });
 */
export function makeConsumerRunner(
  deps: Dependencies,
  options: ConsumerRunnerOptions,
): ConsumerRunnerHandler {
  let consumerId: Promise<string> | undefined;
  const handleBatch = batchHandlerOf(options.target);
  return async (event, context) => {
    consumerId ??= resolveConsumer(deps, options).catch((error: unknown) => {
      consumerId = undefined; // a consumer subscribed later is found by the next invocation
      throw error;
    });
    const id = await consumerId;
    const records = event.Records.map((record) => ({
      recordId: record.messageId,
      cursorId: cursorIdOfQueueArn(deps.config.queuePrefix, record.eventSourceARN),
      body: record.body,
    }));
    const remainingMs = context?.getRemainingTimeInMillis?.();
    const result = await processQueueRecords(deps.ports, {
      consumerId: id,
      records,
      handleBatch,
      ...(remainingMs !== undefined
        ? {
            deadlineMs:
              deps.ports.clock.nowMs() + remainingMs - options.targetTimeoutMs - INVOCATION_MARGIN_MS,
          }
        : {}),
    });
    for (const outcome of result.outcomes) {
      if (outcome.kind === 'negativelyAcknowledged') {
        deps.logger.warn('process threw: message negatively acknowledged', {
          messageId: outcome.message.messageId,
          redeliveryCount: outcome.message.redeliveryCount,
          error: outcome.error,
        });
      } else if (outcome.kind === 'unfinished') {
        deps.logger.error('invocation failed: message held until its ack timeout', {
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

/**
 * Hands a batch to the user's function: one invocation per slice under Lambda's payload limit, in
 * order; after an invocation that failed, the rest of the batch is not handed over (unfinished).
 */
export function batchHandlerOf(target: FunctionInvoker): BatchHandler {
  return async (batch: ConsumerBatch): Promise<BatchHandled> => {
    const failed = new Map<string, string>();
    const retry = new Map<string, RetryChoice>();
    const unfinished = new Map<string, unknown>();
    let stopped: unknown;
    for (const messages of slices(batch.messages)) {
      if (stopped !== undefined) {
        for (const message of messages) unfinished.set(message.messageId, stopped);
        continue;
      }
      const event: AcklineBatchEvent = { acklineBatch: { order: batch.order, messages } };
      try {
        const answer = await target.invoke(event);
        if (!isAcklineBatchResponse(answer)) {
          throw new FunctionInvocationError(
            'the function answered no { acklineFailures }: is its handler acklineConsumer() (@ackline/lambda)?',
          );
        }
        const ids = new Set(messages.map((message) => message.messageId));
        for (const failure of answer.acklineFailures) {
          if (!ids.has(failure.messageId)) continue;
          failed.set(failure.messageId, failure.error);
          if (failure.nonRetryable) retry.set(failure.messageId, { nonRetryable: true });
          else if (failure.retryAfterMs !== undefined)
            retry.set(failure.messageId, { delayMs: failure.retryAfterMs });
        }
      } catch (error) {
        stopped = error;
        for (const message of messages) unfinished.set(message.messageId, error);
      }
    }
    return { failed, unfinished, retry };
  };
}

/** The messages in slices whose invocation payload stays under {@link MAX_INVOCATION_BYTES}. */
function slices(messages: readonly ConsumerMessage[]): ConsumerMessage[][] {
  const result: ConsumerMessage[][] = [];
  let current: ConsumerMessage[] = [];
  let bytes = 0;
  for (const message of messages) {
    const size = Buffer.byteLength(JSON.stringify(message));
    if (current.length > 0 && bytes + size > MAX_INVOCATION_BYTES) {
      result.push(current);
      current = [];
      bytes = 0;
    }
    current.push(message);
    bytes += size + 1;
  }
  if (current.length > 0) result.push(current);
  return result;
}

/**
 * The consumer's id, once per cold start; warns when its registered `functionTimeoutMs` (the ack
 * timeout of what the runner dispatches) is shorter than the function's timeout: a slow
 * invocation's messages would then be redelivered while it still runs.
 */
async function resolveConsumer(deps: Dependencies, options: ConsumerRunnerOptions): Promise<string> {
  const selector = options.consumer;
  const consumerId =
    'consumerId' in selector ? selector.consumerId : await findLambdaConsumer(deps.ports, selector);
  const registered = (await deps.ports.consumers.get(consumerId))?.functionTimeoutMs;
  if (registered !== undefined && registered < options.targetTimeoutMs) {
    deps.logger.warn(
      'the consumer was subscribed with a functionTimeoutMs shorter than the function timeout',
      {
        consumerId,
        functionTimeoutMs: registered,
        functionTimeoutMsDeployed: options.targetTimeoutMs,
      },
    );
  }
  return consumerId;
}

/**
 * The consumer a deployed runner dispatches to, from its environment (the construct sets
 * `ACKLINE_TOPIC`, `ACKLINE_SUBSCRIPTION` and, when given, `ACKLINE_CONSUMER_NAME`; or
 * `ACKLINE_CONSUMER_ID`).
 * @throws ConfigurationError when neither a consumer id nor a topic and subscription is set.
 */
export function consumerSelectorFromEnv(env: NodeJS.ProcessEnv): ConsumerSelector {
  const consumerId = env[CONSUMER_ID_ENV];
  if (consumerId) return { consumerId };
  const topic = env[TOPIC_ENV];
  const subscription = env[SUBSCRIPTION_ENV];
  if (!topic || !subscription) {
    throw new ConfigurationError(
      `missing environment variables ${TOPIC_ENV} and ${SUBSCRIPTION_ENV} (or ${CONSUMER_ID_ENV})`,
    );
  }
  const consumerName = env[CONSUMER_NAME_ENV];
  return { topic, subscription, ...(consumerName ? { consumerName } : {}) };
}
