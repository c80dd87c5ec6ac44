// The API functions' SDK retries (shared/adapters/bounded-retry-strategy.ts): bounded in count and
// backoff, so the margin an answer keeps back for them is a number. What the SDK's middleware does
// with them: test/integration/sdk-retries.test.ts.
import { describe, expect, it } from 'vitest';
import {
  API_REQUEST_RETRIES,
  BoundedRetryStrategy,
  worstCaseBackoffMs,
} from '../../../shared/adapters/bounded-retry-strategy.ts';

const throttled = { errorType: 'THROTTLING' } as const;
const transient = { errorType: 'TRANSIENT' } as const;

/** The delays of every retry the strategy grants for `errorInfo`, until it refuses. */
async function delaysOf(
  strategy: BoundedRetryStrategy,
  errorInfo: { errorType: 'THROTTLING' | 'TRANSIENT' },
) {
  const delays: number[] = [];
  let token = await strategy.acquireInitialRetryToken('scope');
  for (;;) {
    try {
      token = await strategy.refreshRetryTokenForRetry(token, errorInfo);
    } catch {
      return delays;
    }
    delays.push(token.getRetryDelay());
  }
}

describe('BoundedRetryStrategy', () => {
  it('bounds the backoff of one call: 1,400 ms throttled, 350 ms otherwise', () => {
    expect(worstCaseBackoffMs(API_REQUEST_RETRIES, 'throttling')).toBe(1_400);
    expect(worstCaseBackoffMs(API_REQUEST_RETRIES, 'transient')).toBe(350);
  });

  it.each([
    ['throttling', throttled, [200, 400, 800]],
    ['transient', transient, [50, 100, 200]],
  ])('retries a %s error 3 times, doubling the bound of a full-jitter delay', async (_, errorInfo, bounds) => {
    const atMost = await delaysOf(new BoundedRetryStrategy(API_REQUEST_RETRIES, () => 0.9999), errorInfo);
    const atLeast = await delaysOf(new BoundedRetryStrategy(API_REQUEST_RETRIES, () => 0), errorInfo);

    expect(atMost).toEqual(bounds.map((bound) => bound - 1));
    expect(atLeast).toEqual([0, 0, 0]);
  });

  it('caps every delay at maxDelayMs', async () => {
    const strategy = new BoundedRetryStrategy({ ...API_REQUEST_RETRIES, maxAttempts: 8 }, () => 0.9999);

    const delays = await delaysOf(strategy, throttled);

    expect(delays).toEqual([199, 399, 799, 999, 999, 999, 999]);
  });

  it.each(['CLIENT_ERROR', 'SERVER_ERROR'] as const)('does not retry a %s', async (errorType) => {
    const strategy = new BoundedRetryStrategy(API_REQUEST_RETRIES);
    const first = await strategy.acquireInitialRetryToken('scope');

    await expect(strategy.refreshRetryTokenForRetry(first, { errorType })).rejects.toThrow();
  });
});
