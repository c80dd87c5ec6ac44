import type { ConsumerMessage } from '../application/consumers/consumer-message.ts';
import {
  type AcklineBatchEvent,
  type AcklineBatchResponse,
  type AcklineFailure,
  type BatchOrder,
  isAcklineBatchEvent,
} from './consumer-batch.ts';
import { RetryAfterError } from './retry-after-error.ts';

/** Your code for one message: resolving acknowledges it, throwing negatively acknowledges it. */
export type MessageProcessor = (message: ConsumerMessage) => Promise<void> | void;

/**
 * What {@link acklineConsumer} takes: your code for one message.
 *
 * @example
 * const options: AcklineConsumerOptions = { process: async (message) => console.log(message.payload) };
 */
export interface AcklineConsumerOptions {
  /**
   * Your code for one message. Resolving acknowledges the message; throwing
   * negatively acknowledges it: it comes back after the consumer's nack
   * backoff with `redeliveryCount` + 1, or goes to the dead-letter topic past
   * the dead-letter policy's `maxRedeliverCount`.
   */
  readonly process: MessageProcessor;
  /**
   * Errors that retrying cannot fix (a message that does not parse, a rule it breaks): when
   * `process` throws an instance of one, the message goes straight to the dead-letter topic,
   * whatever its count (ackline, beyond Pulsar). The consumer needs a dead-letter policy; without
   * one the message is negatively acknowledged as for any error.
   * @example nonRetryableErrors: [SyntaxError, ValidationError]
   */
  readonly nonRetryableErrors?: readonly (abstract new (
    ...args: never[]
  ) => Error)[];
}

/** The handler of your function: invoked by the subscription's runner with a batch of messages. */
export type AcklineConsumerHandler = (event: AcklineBatchEvent) => Promise<AcklineBatchResponse>;

/** Longest error text sent back per failed message (the runner logs it). */
const MAX_ERROR_CHARS = 1_000;

/**
 * Turns `process(message)` into the handler of your Lambda function: an event-driven Pulsar
 * consumer, with the semantics of an HTTP consumer that receives, processes and acknowledges.
 *
 * Your function touches no ackline table or queue, and needs no permission but being invoked:
 * the AcklineSubscriptionConsumer construct (@ackline/cdk) deploys a runner (ackline's code, with
 * its own role) on the subscription's queues, which dispatches messages to your consumer and
 * invokes your function synchronously with them.
 *
 * - The runner's delivery check comes first: messages acknowledged by anyone (consumer, admin
 *   acknowledgeMessage, skip) never reach `process`; delayed messages wait for deliverAt.
 * - `process` resolves: the message is acknowledged on the cursor.
 * - `process` throws: a negative acknowledgement (PIP-106): redelivered after the consumer's nack
 *   backoff with the count incremented, or published to the dead-letter topic (with `REAL_TOPIC`,
 *   `ORIGIN_MESSAGE_ID`, `REAL_SUBSCRIPTION`) past `maxRedeliverCount`. A {@link RetryAfterError}
 *   sets this nack's delay; an error of `nonRetryableErrors` dead-letters at once.
 * - The invocation times out or crashes: its messages stay held and are redelivered once the
 *   function's timeout (plus 5 s) has passed, with `redeliveryCount` + 1, so they too go to the
 *   dead-letter topic past `maxRedeliverCount`.
 * - Exclusive and Failover: messages are processed one after another, in order; Key_Shared
 *   processes one key after another, Shared a whole batch at once.
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
  return async (event) => {
    if (!isAcklineBatchEvent(event)) {
      // Not a delivery: the invocation fails and acknowledges nothing.
      throw new TypeError(
        'acklineConsumer() takes the batches of its subscription runner (an AcklineSubscriptionConsumer ' +
          'of @ackline/cdk): wire the function with the construct, not with an event source of its own',
      );
    }
    const { order, messages } = event.acklineBatch;
    const failures: AcklineFailure[] = [];
    const processOne = async (message: ConsumerMessage) => {
      try {
        await options.process(message);
      } catch (error) {
        failures.push({ messageId: message.messageId, error: describe(error), ...retryOf(error, options) });
      }
    };
    await Promise.all(
      runsOf(order, messages).map(async (run) => {
        for (const message of run) await processOne(message);
      }),
    );
    return { acklineFailures: failures };
  };
}

/** How a failure is retried: after a RetryAfterError's delay, never (non-retryable), or by the backoff. */
function retryOf(
  error: unknown,
  options: AcklineConsumerOptions,
): Pick<AcklineFailure, 'retryAfterMs' | 'nonRetryable'> {
  if (error instanceof RetryAfterError) return { retryAfterMs: error.delayMs };
  if (options.nonRetryableErrors?.some((type) => error instanceof type)) return { nonRetryable: true };
  return {};
}

/**
 * The batch as runs, processed at once; the messages of a run one after another. `sequential`:
 * one run of all; `byKey`: one run per key (a message without a key is its own run);
 * `concurrent`: one run per message.
 */
function runsOf(order: BatchOrder, messages: readonly ConsumerMessage[]): ConsumerMessage[][] {
  if (order === 'sequential') return [[...messages]];
  if (order === 'concurrent') return messages.map((message) => [message]);
  const byKey = new Map<string, ConsumerMessage[]>();
  for (const message of messages) {
    const key = message.key === null ? `#${message.messageId}` : `=${message.key}`;
    byKey.set(key, [...(byKey.get(key) ?? []), message]);
  }
  return [...byKey.values()];
}

function describe(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text;
}
