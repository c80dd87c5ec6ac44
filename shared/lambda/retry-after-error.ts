/**
 * Thrown by your `process(message)` to say when the message should come back: a negative
 * acknowledgement with this delay instead of the consumer's nack backoff (ackline, beyond Pulsar:
 * a per-nack delay, apache/pulsar #24372). The dead-letter rule still applies: past
 * `maxRedeliverCount` the message goes to the dead-letter topic.
 *
 * @example
 * import { acklineConsumer, RetryAfterError } from '@ackline/lambda';
 *
 * export const handler = acklineConsumer({
 *   process: async (message) => {
 *     const answer = await fetch(partnerUrl, { method: 'POST', body: message.payload });
 *     if (answer.status === 429) throw new RetryAfterError(30_000, 'partner rate limit');
 *   },
 * });
 */
export class RetryAfterError extends Error {
  /**
   * @param delayMs when the message comes back, 0 to 86,400,000 ms.
   * @throws RangeError for a delay out of that range.
   */
  constructor(
    readonly delayMs: number,
    message = `retry after ${delayMs} ms`,
  ) {
    super(message);
    if (!Number.isSafeInteger(delayMs) || delayMs < 0 || delayMs > MAX_RETRY_AFTER_MS) {
      throw new RangeError(
        `RetryAfterError: delayMs must be an integer from 0 to ${MAX_RETRY_AFTER_MS}, got ${delayMs}`,
      );
    }
    this.name = 'RetryAfterError';
  }
}

/** The longest delay a RetryAfterError (or an HTTP nack's delayMs) asks for: 24 h. */
export const MAX_RETRY_AFTER_MS = 86_400_000;
