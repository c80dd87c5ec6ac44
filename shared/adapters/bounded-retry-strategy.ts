/**
 * SDK retries for calls made while an API Gateway request waits (the admin and data APIs): few,
 * with short backoffs, so that the retries of one call add a bounded, known time to the answer.
 * The SDK's standard strategy, given `maxAttempts: 5`, backs off a throttled call for up to
 * 1 + 2 + 4 + 8 = 15 s (the `Retry` delays of @smithy/core 3.41: a 1,000 ms base for throttling,
 * 50 ms otherwise, doubled per retry, full jitter), which no answer deadline can absorb.
 *
 * A retry's delay is `random() * min(maxDelayMs, baseDelayMs * 2^(retry - 1))` (full jitter),
 * with the throttling base for throttling errors. Only what the SDK classifies as throttling or
 * transient (a reset connection, a 500, 502, 503 or 504 answer) is retried, as its standard
 * strategy does; anything else (a failed condition, a validation error) fails at once. After the
 * last attempt the call fails with the SDK's error, which the use case reports as it would any
 * storage error.
 *
 * Not persisted; no token bucket (the standard strategy's retry quota): each call's retries are
 * bounded by count and delay instead.
 */
export interface BoundedRetryOptions {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  /** The first retry's delay bound for a transient error (a connection reset, a 5xx it retries). */
  readonly baseDelayMs: number;
  /** The first retry's delay bound for a throttling error (ThrottlingException, a 429). */
  readonly throttlingBaseDelayMs: number;
  /** No retry's delay bound is larger. */
  readonly maxDelayMs: number;
}

/**
 * The API functions' retries: 4 attempts; a throttled call backs off at most 200 + 400 + 800 =
 * 1,400 ms in all, a transient error 50 + 100 + 200 = 350 ms (worstCaseBackoffMs).
 */
export const API_REQUEST_RETRIES: BoundedRetryOptions = {
  maxAttempts: 4,
  baseDelayMs: 50,
  throttlingBaseDelayMs: 200,
  maxDelayMs: 1_000,
};

/** The SDK's classification of a failed attempt (@smithy/types RetryErrorType). */
type RetryErrorType = 'TRANSIENT' | 'THROTTLING' | 'SERVER_ERROR' | 'CLIENT_ERROR';

/** The SDK's retry token, as the retry middleware reads it: it sleeps `getRetryDelay()` before the retry. */
interface RetryToken {
  getRetryCount(): number;
  getRetryDelay(): number;
}

/** The longest the retries of one call back off in all, for errors of `kind`. */
export function worstCaseBackoffMs(options: BoundedRetryOptions, kind: 'transient' | 'throttling'): number {
  let total = 0;
  for (let retry = 1; retry < options.maxAttempts; retry++) total += delayBound(options, kind, retry);
  return total;
}

function delayBound(options: BoundedRetryOptions, kind: 'transient' | 'throttling', retry: number): number {
  const base = kind === 'throttling' ? options.throttlingBaseDelayMs : options.baseDelayMs;
  return Math.min(options.maxDelayMs, base * 2 ** (retry - 1));
}

function token(count: number, delayMs: number): RetryToken {
  return { getRetryCount: () => count, getRetryDelay: () => delayMs };
}

/**
 * A RetryStrategyV2 for the SDK clients (`retryStrategy` in a client's configuration).
 *
 * @example
 * const client = new DynamoDBClient({ retryStrategy: new BoundedRetryStrategy(API_REQUEST_RETRIES) });
 */
export class BoundedRetryStrategy {
  constructor(
    private readonly options: BoundedRetryOptions,
    private readonly random: () => number = Math.random,
  ) {}

  async acquireInitialRetryToken(_scope: string): Promise<RetryToken> {
    return token(0, 0);
  }

  async refreshRetryTokenForRetry(
    previous: RetryToken,
    errorInfo: { readonly errorType: RetryErrorType },
  ): Promise<RetryToken> {
    const retry = previous.getRetryCount() + 1;
    const kind =
      errorInfo.errorType === 'THROTTLING'
        ? 'throttling'
        : errorInfo.errorType === 'TRANSIENT'
          ? 'transient'
          : undefined;
    if (kind === undefined || retry >= this.options.maxAttempts) {
      // The middleware then throws the attempt's own error.
      throw new Error('No retry token available');
    }
    return token(retry, Math.floor(this.random() * delayBound(this.options, kind, retry)));
  }

  recordSuccess(_token: RetryToken): void {}
}
