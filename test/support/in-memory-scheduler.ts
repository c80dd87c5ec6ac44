import type { ScheduledJob, Scheduler } from '../../shared/ports/scheduler.ts';
import { InjectedFaults } from './in-memory-faults.ts';

/**
 * The scheduler's delay queue in memory: jobs wait in `jobs` in the order they
 * were scheduled, and a test takes them off to run them (nothing runs here by
 * itself). Not persisted.
 */
export class InMemoryScheduler implements Scheduler {
  readonly maxDelaySeconds = 900;
  readonly jobs: ScheduledJob[] = [];
  private readonly faults = new InjectedFaults<keyof Scheduler>();

  /** The next call of `operation` rejects with `error` and schedules nothing. */
  failNext(operation: keyof Scheduler, error: Error): void {
    this.faults.failNext(operation, error);
  }

  async schedule(jobs: readonly ScheduledJob[]): Promise<void> {
    await this.faults.enter('schedule');
    this.jobs.push(...jobs);
  }

  /** Takes every job scheduled so far. */
  take(): ScheduledJob[] {
    return this.jobs.splice(0);
  }
}
