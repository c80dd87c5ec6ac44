import { afterEach, describe, expect, it, vi } from 'vitest';
import { startLocalSchedule } from '../../../infra/local/local-schedule.ts';

// Timers are vitest's fake ones: intervals of minutes pass at once.
const FIVE_MINUTES_MS = 300_000;

afterEach(() => {
  vi.useRealTimers();
});

describe('startLocalSchedule', () => {
  it('runs every interval, the first one interval after the start', async () => {
    vi.useFakeTimers();
    let runs = 0;
    const schedule = startLocalSchedule({
      name: 'maintenance',
      intervalMs: FIVE_MINUTES_MS,
      run: async () => {
        runs++;
      },
      nowMs: () => Date.now(),
    });

    await vi.advanceTimersByTimeAsync(FIVE_MINUTES_MS - 1);
    const before = runs;
    await vi.advanceTimersByTimeAsync(1);
    const atFirst = runs;
    await vi.advanceTimersByTimeAsync(2 * FIVE_MINUTES_MS);
    await schedule.stop();
    await vi.advanceTimersByTimeAsync(FIVE_MINUTES_MS);

    expect([before, atFirst, runs]).toEqual([0, 1, 3]);
    expect(schedule.status()).toMatchObject({ name: 'maintenance', runs: 3, failures: 0, skipped: 0 });
  });

  it('reports a failed run and keeps the schedule', async () => {
    vi.useFakeTimers();
    const errors: unknown[] = [];
    let calls = 0;
    const schedule = startLocalSchedule({
      name: 'maintenance',
      intervalMs: 1000,
      run: async () => {
        if (++calls === 1) throw new Error('DynamoDB is down');
      },
      onError: (error) => errors.push(error),
    });

    await vi.advanceTimersByTimeAsync(2000);
    await schedule.stop();

    expect(schedule.status()).toMatchObject({ runs: 2, failures: 1, lastError: 'DynamoDB is down' });
    expect(errors).toHaveLength(1);
  });

  it('skips a tick while a run is still going, and stop() waits for that run', async () => {
    vi.useFakeTimers();
    let finish: () => void = () => undefined;
    let calls = 0;
    const schedule = startLocalSchedule({
      name: 'maintenance',
      intervalMs: 1000,
      run: () => {
        calls++;
        return new Promise<void>((resolve) => {
          finish = resolve;
        });
      },
    });

    await vi.advanceTimersByTimeAsync(3000);
    let stopped = false;
    const stopping = schedule.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    const stoppedBeforeFinish = stopped;
    finish();
    await stopping;

    expect(calls).toBe(1);
    expect(stoppedBeforeFinish).toBe(false);
    expect(schedule.status()).toMatchObject({ runs: 1, skipped: 2 });
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses an interval of %s ms', (intervalMs) => {
    expect(() => startLocalSchedule({ name: 'm', intervalMs, run: async () => undefined })).toThrow(
      RangeError,
    );
  });
});
