import { describe, expect, it } from 'vitest';
import { type RetryPolicy, retryDelayMs, retryInBackground } from '../../../infra/local/background-retry.ts';

const FAST: RetryPolicy = { attempts: 4, baseDelayMs: 1, maxDelayMs: 4 };

describe('retryDelayMs', () => {
  const policy: RetryPolicy = { attempts: 10, baseDelayMs: 1_000, maxDelayMs: 60_000 };

  it.each<[number, number, number]>([
    // attempt, random, delay: doubling from the base, capped, 50-100 % of the ceiling.
    [2, 0, 500],
    [2, 1, 1_000],
    [3, 1, 2_000],
    [4, 0.5, 3_000],
    [8, 1, 60_000],
    [20, 0, 30_000],
    [20, 1, 60_000],
  ])('attempt %i with random %f waits %i ms', (attempt, random, expected) => {
    expect(retryDelayMs(policy, attempt, () => random)).toBe(expected);
  });
});

describe('retryInBackground', () => {
  it('retries until the task succeeds, then reports done', async () => {
    const failures: [string, number, boolean][] = [];
    let calls = 0;
    const retry = retryInBackground(
      'rebuild',
      new Error('first'),
      async (attempt) => {
        calls++;
        if (attempt < 3) throw new Error(`attempt ${attempt}`);
      },
      {
        policy: FAST,
        onAttemptFailed: (error, attempt, willRetry) =>
          failures.push([(error as Error).message, attempt, willRetry]),
      },
    );

    expect(retry.status()).toMatchObject({
      name: 'rebuild',
      state: 'retrying',
      attempts: 1,
      lastError: 'first',
    });
    await retry.settled;

    expect(calls).toBe(2);
    expect(retry.status()).toEqual({ name: 'rebuild', state: 'done', attempts: 3 });
    expect(failures).toEqual([
      ['first', 1, true],
      ['attempt 2', 2, true],
    ]);
  });

  it('gives up after the last attempt and says so', async () => {
    const failures: boolean[] = [];
    const retry = retryInBackground(
      'rebuild',
      new Error('first'),
      async (attempt) => {
        throw new Error(`attempt ${attempt}`);
      },
      { policy: FAST, onAttemptFailed: (_, __, willRetry) => failures.push(willRetry) },
    );

    await retry.settled;

    expect(retry.status()).toEqual({ name: 'rebuild', state: 'failed', attempts: 4, lastError: 'attempt 4' });
    expect(failures).toEqual([true, true, true, false]);
  });

  it('stops: no attempt starts after stop()', async () => {
    let calls = 0;
    const retry = retryInBackground(
      'rebuild',
      new Error('first'),
      async () => {
        calls++;
      },
      { policy: { attempts: 3, baseDelayMs: 60_000, maxDelayMs: 60_000 } },
    );

    retry.stop();
    await retry.settled;

    expect(calls).toBe(0);
    expect(retry.status()).toMatchObject({ state: 'stopped', attempts: 1 });
  });
});
