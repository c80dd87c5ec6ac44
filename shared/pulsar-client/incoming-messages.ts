import { setTimeout as sleep } from 'node:timers/promises';
import type { Consumer as AcklineConsumer } from '../client/consumer.ts';
import { AcklineClientClosedError } from '../client/errors.ts';
import type { Message as AcklineMessage } from '../client/message.ts';
import { describeError } from './log.ts';

/** Pause after a receive failed (a network error, a 5xx) before that topic's pump receives again. */
const RECEIVE_FAILURE_PAUSE_MS = 1_000;

/** A message as it came from one of the consumer's SDK consumers. */
export interface Delivery {
  readonly message: AcklineMessage;
  readonly source: AcklineConsumer;
}

interface Waiter {
  readonly resolve: (delivery: Delivery) => void;
  readonly reject: (error: Error) => void;
  timer: NodeJS.Timeout | undefined;
}

/** What {@link IncomingMessages} reports besides messages. */
export interface IncomingEvents {
  /** An SDK consumer the server dropped or replaced: the compat consumer is no longer connected. */
  readonly onLost: (error: AcklineClientClosedError) => void;
  /** A receive that failed and will be retried. */
  readonly onReceiveFailed: (message: string) => void;
  /** Resolves when a new receive may start (the consumer's negative acknowledgements are sent). */
  readonly beforeReceive?: () => Promise<unknown>;
}

/**
 * Merges the messages of a compat consumer's SDK consumers (one per topic) into one queue that
 * `receive()`, `batchReceive()` and the listener take from. A topic's pump receives while someone
 * waits; each SDK consumer prefetches its own receiver queue. A pump whose waiter timed out keeps
 * its receive going: the message it brings waits here for the next taker.
 */
export class IncomingMessages {
  private readonly kept: Delivery[] = [];
  private readonly waiters: Waiter[] = [];
  private readonly pumping = new Set<AcklineConsumer>();
  private readonly sources: AcklineConsumer[] = [];
  private closedError: Error | undefined;

  constructor(private readonly events: IncomingEvents) {}

  /** Adds a topic's SDK consumer (at creation, and as a pattern finds new topics). */
  add(source: AcklineConsumer): void {
    this.sources.push(source);
    if (this.waiters.length > 0) void this.pump(source);
  }

  /** Every SDK consumer added. */
  all(): readonly AcklineConsumer[] {
    return this.sources;
  }

  /**
   * The next message; rejects with pulsar-client's `Failed to receive message: TimeOut` after
   * `timeoutMs`, or with the close error.
   */
  next(timeoutMs?: number): Promise<Delivery> {
    if (this.closedError) return Promise.reject(this.closedError);
    const kept = this.kept.shift();
    if (kept) return Promise.resolve(kept);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, timer: undefined };
      if (timeoutMs !== undefined) {
        waiter.timer = setTimeout(() => {
          const index = this.waiters.indexOf(waiter);
          if (index >= 0) this.waiters.splice(index, 1);
          reject(new Error('Failed to receive message: TimeOut'));
        }, timeoutMs);
      }
      this.waiters.push(waiter);
      for (const source of this.sources) void this.pump(source);
    });
  }

  /** Drops what is kept (a seek: the SDK consumers drop theirs too). */
  clear(): void {
    this.kept.length = 0;
  }

  /** Rejects every waiter and later call with `error`. */
  close(error: Error): void {
    this.closedError ??= error;
    this.kept.length = 0;
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
  }

  private async pump(source: AcklineConsumer): Promise<void> {
    if (this.pumping.has(source)) return;
    this.pumping.add(source);
    try {
      while (!this.closedError && this.waiters.length > 0) {
        let message: AcklineMessage;
        try {
          await this.events.beforeReceive?.();
          message = await source.receive();
        } catch (error) {
          if (this.closedError) return;
          if (error instanceof AcklineClientClosedError) {
            this.events.onLost(error);
            return;
          }
          this.events.onReceiveFailed(describeError(error));
          await sleep(RECEIVE_FAILURE_PAUSE_MS);
          continue;
        }
        this.deliver({ message, source });
      }
    } finally {
      this.pumping.delete(source);
    }
  }

  private deliver(delivery: Delivery): void {
    const waiter = this.waiters.shift();
    if (waiter === undefined) {
      this.kept.push(delivery);
      return;
    }
    clearTimeout(waiter.timer);
    waiter.resolve(delivery);
  }
}
