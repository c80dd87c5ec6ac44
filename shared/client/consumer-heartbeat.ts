import type { ClientClock, ScheduledTask } from './client-clock.ts';
import { AcklineClientError } from './errors.ts';

/** Everything a {@link ConsumerHeartbeat} is built with. */
export interface ConsumerHeartbeatSettings {
  readonly clock: ClientClock;
  /** The consumer's lease: the server drops it after this long without a call. */
  readonly leaseMs: number;
  /** Sends `POST /consumers/{id}/heartbeat`. */
  readonly send: () => Promise<unknown>;
  /**
   * Called once when a heartbeat answers 404 (the server no longer knows the consumer) or 409 (it
   * was replaced as the active consumer); the heartbeat has stopped.
   */
  readonly onLost: (answer: AcklineClientError) => void;
}

/** The server answered the heartbeat that the consumer is gone (404) or replaced (409). */
const LOST_STATUS_CODES: readonly number[] = [404, 409];

/**
 * Keeps an open consumer's lease alive while its application is busy: when the consumer made no
 * call for a third of its lease, it sends a heartbeat, so two lost heartbeats in a row still leave
 * the lease alive. Not persisted; one scheduled task at a time, re-armed lazily: a call of the
 * consumer only stores its time ({@link touch}), it does not reset a timer.
 *
 * A heartbeat that fails otherwise (network, 5xx) is retried at the next beat; one answering 404 or
 * 409 stops the heartbeat and reports the consumer lost.
 */
export class ConsumerHeartbeat {
  /** A third of the lease. */
  readonly intervalMs: number;
  private lastCallMs: number;
  private task: ScheduledTask | undefined;
  private stopped = false;

  constructor(private readonly settings: ConsumerHeartbeatSettings) {
    this.intervalMs = Math.floor(settings.leaseMs / 3);
    this.lastCallMs = settings.clock.nowMs();
  }

  /** Arms the first beat, a third of the lease after the last call (the subscribe). */
  start(): void {
    this.arm(this.intervalMs);
  }

  /** Notes a call of the consumer: the server renewed its lease when it got it. */
  touch(): void {
    this.lastCallMs = this.settings.clock.nowMs();
  }

  /** Stops beating (close); a heartbeat in flight is left to finish and ignored. */
  stop(): void {
    this.stopped = true;
    this.task?.cancel();
    this.task = undefined;
  }

  private arm(delayMs: number): void {
    if (this.stopped) return;
    this.task = this.settings.clock.schedule(() => void this.beat(), delayMs);
  }

  private async beat(): Promise<void> {
    this.task = undefined;
    if (this.stopped) return;
    const idleMs = this.settings.clock.nowMs() - this.lastCallMs;
    if (idleMs < this.intervalMs) {
      this.arm(this.intervalMs - idleMs);
      return;
    }
    this.touch();
    try {
      await this.settings.send();
    } catch (error) {
      if (this.stopped) return;
      if (error instanceof AcklineClientError && LOST_STATUS_CODES.includes(error.statusCode)) {
        this.stop();
        this.settings.onLost(error);
        return;
      }
      // Network failure or 5xx: the lease may still be alive; the next beat tries again.
    }
    this.arm(this.intervalMs);
  }
}
