import type { BatchOrder, ConsumerMessage } from '../application/consumers/consumer-message.ts';

export type { BatchOrder } from '../application/consumers/consumer-message.ts';

/**
 * What the subscription's runner (ackline's function, which the AcklineSubscriptionConsumer
 * construct deploys beside yours) invokes your function with: messages it has dispatched to your
 * consumer and holds for it. The invocation is synchronous: your function's answer decides what
 * is acknowledged.
 *
 * @example
 * const event: AcklineBatchEvent = {
 *   acklineBatch: {
 *     order: 'concurrent',
 *     messages: [{ messageId: '7:0:-1', payload: 'order 1', key: null, properties: {},
 *       redeliveryCount: 0, publishTime: 1_700_000_000_000, eventTime: null }],
 *   },
 * };
 */
export interface AcklineBatchEvent {
  readonly acklineBatch: {
    /** How the messages may be processed. */
    readonly order: BatchOrder;
    /** The messages, in the order of the subscription (on each partition). */
    readonly messages: readonly ConsumerMessage[];
  };
}

/**
 * Your function's answer to an {@link AcklineBatchEvent}: the messages whose processing failed
 * (negatively acknowledged); every other message of the batch is acknowledged. An invocation that
 * fails (a handler error, a timeout, a crash) or answers anything else acknowledges nothing: its
 * messages stay held and come back at the ack timeout, counted as a delivery.
 *
 * @example
 * const response: AcklineBatchResponse = { acklineFailures: [{ messageId: '7:0:-1', error: 'Error: no stock' }] };
 */
export interface AcklineBatchResponse {
  readonly acklineFailures: readonly AcklineFailure[];
}

/** One message whose processing failed, and how it is to be retried. */
export interface AcklineFailure {
  readonly messageId: string;
  readonly error: string;
  /** A RetryAfterError: back after this delay instead of the consumer's nack backoff. */
  readonly retryAfterMs?: number;
  /** One of the consumer's nonRetryableErrors: straight to the dead-letter topic. */
  readonly nonRetryable?: boolean;
}

/** The event is an ackline batch (what the runner sends), checked before anything is processed. */
export function isAcklineBatchEvent(event: unknown): event is AcklineBatchEvent {
  const batch = (event as { acklineBatch?: unknown } | null | undefined)?.acklineBatch as
    | { order?: unknown; messages?: unknown }
    | undefined;
  return (
    typeof batch === 'object' &&
    batch !== null &&
    (batch.order === 'sequential' || batch.order === 'byKey' || batch.order === 'concurrent') &&
    Array.isArray(batch.messages) &&
    batch.messages.every(
      (message: unknown) =>
        typeof (message as ConsumerMessage | null)?.messageId === 'string' &&
        typeof (message as ConsumerMessage).payload === 'string',
    )
  );
}

/** The answer is a batch response (what `acklineConsumer()` returns). */
export function isAcklineBatchResponse(response: unknown): response is AcklineBatchResponse {
  const failures = (response as { acklineFailures?: unknown } | null | undefined)?.acklineFailures;
  return (
    Array.isArray(failures) &&
    failures.every(
      (failure: unknown) =>
        typeof (failure as { messageId?: unknown } | null)?.messageId === 'string' &&
        typeof (failure as { error?: unknown }).error === 'string' &&
        isRetryAfter((failure as { retryAfterMs?: unknown }).retryAfterMs) &&
        ['undefined', 'boolean'].includes(typeof (failure as { nonRetryable?: unknown }).nonRetryable),
    )
  );
}

function isRetryAfter(value: unknown): boolean {
  return (
    value === undefined ||
    (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= 86_400_000)
  );
}
