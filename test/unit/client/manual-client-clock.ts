import type { ClientClock, ScheduledTask } from '../../../shared/client/client-clock.ts';

interface Pending {
  readonly dueMs: number;
  readonly task: () => void;
}

/** Lets pending promise callbacks and fake fetches run (a macrotask; no time passes on the clock). */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * A {@link ClientClock} that moves only when a test moves it; starts at 0. `advance` runs the tasks
 * that fall due, in due order, each at its own time, and lets what each started (a heartbeat's
 * fetch) settle before the next.
 */
export class ManualClientClock implements ClientClock {
  private currentMs = 0;
  private readonly pending: Pending[] = [];

  nowMs(): number {
    return this.currentMs;
  }

  schedule(task: () => void, delayMs: number): ScheduledTask {
    const entry: Pending = { dueMs: this.currentMs + delayMs, task };
    this.pending.push(entry);
    return {
      cancel: () => {
        const index = this.pending.indexOf(entry);
        if (index >= 0) this.pending.splice(index, 1);
      },
    };
  }

  /** How many tasks are scheduled and not run or cancelled. */
  get scheduled(): number {
    return this.pending.length;
  }

  /** Moves time forward by `ms`, running what falls due on the way. */
  async advance(ms: number): Promise<void> {
    const targetMs = this.currentMs + ms;
    await settle();
    for (;;) {
      const next = this.pending
        .filter((entry) => entry.dueMs <= targetMs)
        .sort((a, b) => a.dueMs - b.dueMs)[0];
      if (next === undefined) break;
      this.pending.splice(this.pending.indexOf(next), 1);
      this.currentMs = Math.max(this.currentMs, next.dueMs);
      next.task();
      await settle();
    }
    this.currentMs = targetMs;
  }
}
