/** A callback scheduled by a {@link ClientClock}; `cancel()` stops it if it has not run yet. */
export interface ScheduledTask {
  /** Stops the callback if it has not run yet; does nothing after. */
  cancel(): void;
}

/**
 * The time source of the client's background work (a consumer's heartbeat), as Pulsar's
 * `ClientBuilder.clock(...)`: the system's by default; tests inject one they move by hand.
 *
 * @example
 * // The system clock, logging each heartbeat check:
 * const clock: ClientClock = {
 *   nowMs: () => SYSTEM_CLIENT_CLOCK.nowMs(),
 *   schedule: (task, delayMs) => SYSTEM_CLIENT_CLOCK.schedule(() => { log.debug('heartbeat check'); task(); }, delayMs),
 * };
 * const client = AcklineClient.builder().serviceUrl(url).clock(clock).build();
 */
export interface ClientClock {
  /** Milliseconds since the Unix epoch. */
  nowMs(): number;
  /**
   * Runs `task` once, `delayMs` from now. A scheduled task must never keep the process alive: the
   * system clock unrefs its timers, so a consumer left open does not stop Node from exiting.
   */
  schedule(task: () => void, delayMs: number): ScheduledTask;
}

/** `Date.now()` and unref'd `setTimeout`s. */
export const SYSTEM_CLIENT_CLOCK: ClientClock = {
  nowMs: () => Date.now(),
  schedule(task, delayMs) {
    const timer = setTimeout(task, delayMs);
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};
