import { setTimeout as sleep } from 'node:timers/promises';
import { AcklineClientClosedError } from './errors.ts';
import type { Message } from './message.ts';

/** Pause after a receive failed (a network error, a 5xx) before the loop receives again. */
const RECEIVE_FAILURE_PAUSE_MS = 1_000;

/** What a {@link ListenerLoop} runs against: the consumer's own receive and its listener. */
export interface ListenerLoopSettings {
  /** The consumer's receive, bypassing the refusal applications get while a listener is set. */
  readonly receive: () => Promise<Message>;
  /** Calls the application's listener; what it throws or rejects with goes to `onError`. */
  readonly deliver: (message: Message) => void | Promise<void>;
  /** Aborted when the consumer closes or is lost: the loop ends. */
  readonly stopped: AbortSignal;
  /** A listener that threw, or a receive that failed (the loop goes on after a pause). */
  readonly onError: (error: unknown) => void;
}

/**
 * Pulsar's `MessageListener` dispatch: one message at a time, in order, each handed to the listener
 * once the previous call returned (or its promise settled). A listener that throws does not stop the
 * loop, as in Pulsar (the message is neither acknowledged nor nacked: that is the listener's call).
 * A failed receive pauses the loop for a second and it receives again; a closed consumer ends it.
 */
export class ListenerLoop {
  private running: Promise<void> | undefined;

  constructor(private readonly settings: ListenerLoopSettings) {}

  /** Starts the loop (once). */
  start(): void {
    this.running ??= this.run();
  }

  /** Resolves when the loop has ended (after the consumer closed), with the listener call in flight. */
  whenStopped(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async run(): Promise<void> {
    const { stopped } = this.settings;
    while (!stopped.aborted) {
      let message: Message;
      try {
        message = await this.settings.receive();
      } catch (error) {
        if (stopped.aborted || error instanceof AcklineClientClosedError) return;
        this.settings.onError(error);
        await sleep(RECEIVE_FAILURE_PAUSE_MS, undefined, { signal: stopped }).catch(() => undefined);
        continue;
      }
      try {
        await this.settings.deliver(message);
      } catch (error) {
        this.settings.onError(error);
      }
    }
  }
}
