/**
 * The embedded stack's stand-in for an EventBridge rate rule: runs `run` every
 * `intervalMs`, the first run one interval after the start (as a new rate rule
 * does). A run still going when the next is due makes that one skip (counted),
 * where EventBridge would start a second, concurrent invocation: one process
 * runs one at a time. A failed run is reported and the schedule goes on, as the
 * next EventBridge invocation would. State in memory only.
 */

export interface ScheduleStatus {
  readonly name: string;
  readonly intervalMs: number;
  readonly runs: number;
  readonly failures: number;
  readonly skipped: number;
  readonly lastRunAtMs?: number;
  readonly lastError?: string;
}

export interface LocalSchedule {
  status(): ScheduleStatus;
  /** No run starts after this; resolves once a run in progress has finished. */
  stop(): Promise<void>;
}

export function startLocalSchedule(options: {
  readonly name: string;
  readonly intervalMs: number;
  readonly run: () => Promise<unknown>;
  readonly onError?: (error: unknown) => void;
  readonly nowMs?: () => number;
}): LocalSchedule {
  const { name, intervalMs, run } = options;
  if (!Number.isSafeInteger(intervalMs) || intervalMs < 1) {
    throw new RangeError(
      `The ${name} schedule's interval must be a positive integer of ms, got ${intervalMs}`,
    );
  }
  const nowMs = options.nowMs ?? Date.now;
  let status: ScheduleStatus = { name, intervalMs, runs: 0, failures: 0, skipped: 0 };
  let running: Promise<void> | undefined;
  const tick = () => {
    if (running) {
      status = { ...status, skipped: status.skipped + 1 };
      return;
    }
    status = { ...status, lastRunAtMs: nowMs() };
    running = run()
      .then(
        () => {
          status = { ...status, runs: status.runs + 1 };
        },
        (error: unknown) => {
          status = {
            ...status,
            runs: status.runs + 1,
            failures: status.failures + 1,
            lastError: error instanceof Error ? error.message : String(error),
          };
          options.onError?.(error);
        },
      )
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return {
    status: () => status,
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
