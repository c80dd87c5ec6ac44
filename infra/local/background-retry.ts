/**
 * Start-up work of the embedded stack that must not keep it from starting
 * (rebuilding subscription queues from stored data): when an attempt fails,
 * the work is retried in the background with bounded, jittered exponential
 * backoff, and its state is reported (logged, and served at the local status
 * path). After the last attempt it stays `failed`: nothing retries it until the
 * next start (the operator's recovery is the admin API; maintenance re-derives
 * lost timers).
 */

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly attempts: number;
  /** The wait before the second attempt, doubled before each later one... */
  readonly baseDelayMs: number;
  /** ...up to this. Each wait is drawn from [half, all] of it (jitter), so restarts do not retry in step. */
  readonly maxDelayMs: number;
}

/** About 9 minutes of attempts: 1, 2, 4 ... 60 s (each 50-100 % of that). */
export const STARTUP_RETRY: RetryPolicy = { attempts: 12, baseDelayMs: 1_000, maxDelayMs: 60_000 };

export interface TaskStatus {
  readonly name: string;
  readonly state: 'retrying' | 'done' | 'failed' | 'stopped';
  /** Attempts made so far. */
  readonly attempts: number;
  readonly lastError?: string;
  /** Epoch ms of the next attempt, while retrying. */
  readonly nextAttemptAtMs?: number;
}

export interface BackgroundRetry {
  status(): TaskStatus;
  /** Settles when the task succeeded, gave up or was stopped (never rejects). */
  readonly settled: Promise<void>;
  /** No further attempt starts; one in progress finishes. */
  stop(): void;
}

/** The wait before attempt `attempt` (2, 3, ...): min(max, base * 2^(attempt-2)), jittered to 50-100 %. */
export function retryDelayMs(policy: RetryPolicy, attempt: number, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 2));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * Retries `task` in the background after a first attempt that failed with
 * `firstError` (the caller made it, in the foreground). `onAttemptFailed` hears
 * every failure with whether another attempt follows.
 */
export function retryInBackground(
  name: string,
  firstError: unknown,
  task: (attempt: number) => Promise<void>,
  options: {
    readonly policy?: RetryPolicy;
    readonly onAttemptFailed?: (error: unknown, attempt: number, willRetry: boolean) => void;
    readonly onDone?: (attempt: number) => void;
    readonly random?: () => number;
    readonly nowMs?: () => number;
  } = {},
): BackgroundRetry {
  const policy = options.policy ?? STARTUP_RETRY;
  const random = options.random ?? Math.random;
  const nowMs = options.nowMs ?? Date.now;
  let status: TaskStatus = { name, state: 'retrying', attempts: 1, lastError: describe(firstError) };
  let stopped = false;
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;

  const settled = (async () => {
    options.onAttemptFailed?.(firstError, 1, policy.attempts > 1);
    for (let attempt = 2; attempt <= policy.attempts; attempt++) {
      if (stopped) return;
      const delayMs = retryDelayMs(policy, attempt, random);
      status = { ...status, nextAttemptAtMs: nowMs() + delayMs };
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, delayMs);
      });
      if (stopped) return;
      try {
        await task(attempt);
        status = { name, state: 'done', attempts: attempt };
        options.onDone?.(attempt);
        return;
      } catch (error) {
        status = { name, state: 'retrying', attempts: attempt, lastError: describe(error) };
        options.onAttemptFailed?.(error, attempt, attempt < policy.attempts);
      }
    }
    const { nextAttemptAtMs: _, ...last } = status;
    status = { ...last, state: 'failed' };
  })();

  return {
    status: () => status,
    settled,
    stop: () => {
      if (status.state === 'retrying') {
        const { nextAttemptAtMs: _, ...rest } = status;
        status = { ...rest, state: 'stopped' };
      }
      stopped = true;
      clearTimeout(timer);
      wake?.();
    },
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
