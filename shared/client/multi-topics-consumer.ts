import type { MessageId } from '../domain/message-id.ts';
import type { ClientClock, ScheduledTask } from './client-clock.ts';
import type { AcknowledgeTarget, Consumer, MessageListener, SeekTarget } from './consumer.ts';
import { AcklineClientArgumentError, AcklineClientClosedError } from './errors.ts';
import { ListenerLoop } from './listener-loop.ts';
import { Message } from './message.ts';

/** How long each topic's receive waits before the merge asks it again (a long poll per topic). */
const PER_TOPIC_WAIT_MS = 10_000;

/** The consumer of a multi-topic message listener: the multi-topics consumer. */
export type MultiTopicsMessageListener = (
  message: Message,
  consumer: MultiTopicsConsumer,
) => void | Promise<void>;

/** Everything a {@link MultiTopicsConsumer} is built with. */
export interface MultiTopicsConsumerSettings {
  readonly subscription: string;
  /** Subscribes one more topic with the builder's settings (no listener: the merge has it). */
  readonly subscribeTopic: (topic: string) => Promise<Consumer>;
  /** A pattern consumer's discovery: the namespace's topics that match (none for a topic list). */
  readonly discover?: () => Promise<readonly string[]>;
  /** How often a pattern consumer looks for new topics (Pulsar's patternAutoDiscoveryPeriod). */
  readonly discoveryPeriodMs: number;
  readonly clock: ClientClock;
  readonly batchReceive: { readonly maxNumMessages: number; readonly timeoutMs: number };
  readonly listener?: MessageListener | MultiTopicsMessageListener;
  readonly onListenerError?: (error: unknown) => void;
  readonly onClose: (consumer: MultiTopicsConsumer) => void;
}

interface Waiter {
  readonly resolve: (message: Message | undefined) => void;
  readonly reject: (error: unknown) => void;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Pulsar's multi-topics consumer, merged on the client: one {@link Consumer} per topic (a
 * partitioned topic is one of them, across its partitions), all of one subscription, and receives
 * that take the first message any of them brings. Messages of one topic keep their order; between
 * topics there is none, as in Pulsar. A pattern consumer (`topicsPattern`) subscribes the
 * namespace's matching topics and looks for new ones every minute.
 *
 * @example
 * const consumer = await client.newConsumer().topics(['t/ns/orders', 't/ns/refunds'])
 *   .subscriptionName('audit').subscribe();
 * const message = await consumer.receive();
 * await consumer.acknowledge(message);
 */
export class MultiTopicsConsumer {
  private readonly consumers = new Map<string, Consumer>();
  /** Which consumer handed out each ledger (ledgerIds name one partition deployment-wide). */
  private readonly byLedger = new Map<string, Consumer>();
  private readonly incoming: Message[] = [];
  private readonly waiters: Waiter[] = [];
  private readonly pumping = new Set<Consumer>();
  private readonly stopped = new AbortController();
  private discovery: ScheduledTask | undefined;
  private closing: Promise<void> | undefined;
  private readonly listenerLoop: ListenerLoop | undefined;

  /** Use `client.newConsumer().topics([...])` or `.topicsPattern(...)`, then `subscribe()`. */
  constructor(private readonly settings: MultiTopicsConsumerSettings) {
    const { listener } = settings;
    if (listener) {
      this.listenerLoop = new ListenerLoop({
        receive: () => this.take(undefined) as Promise<Message>,
        deliver: (message) => (listener as MultiTopicsMessageListener)(message, this),
        stopped: this.stopped.signal,
        onError: settings.onListenerError ?? (() => undefined),
      });
    }
  }

  /** Subscribes the topics (used by the builder), then starts the listener and discovery. */
  async start(topics: readonly string[]): Promise<void> {
    await this.addTopics(topics);
    this.listenerLoop?.start();
    this.scheduleDiscovery();
  }

  /**
   * The topics consumed, full names.
   * @example consumer.getTopics(); // ['persistent://t/ns/orders', 'persistent://t/ns/refunds']
   */
  getTopics(): string[] {
    return [...this.consumers.keys()].sort();
  }

  /**
   * The subscription's name.
   * @example consumer.getSubscription(); // 'audit'
   */
  getSubscription(): string {
    return this.settings.subscription;
  }

  /**
   * The consumer of each topic.
   * @example for (const c of consumer.getConsumers()) console.log(c.getTopic(), c.getConsumerId());
   */
  getConsumers(): Consumer[] {
    return [...this.consumers.values()];
  }

  /**
   * Waits for the next message of any topic (at most `timeoutMs`: undefined after it, as
   * `Consumer.receive(timeoutMs)`).
   * @example const message = await consumer.receive(5_000);
   */
  receive(): Promise<Message>;
  receive(timeoutMs: number): Promise<Message | undefined>;
  async receive(timeoutMs?: number): Promise<Message | undefined> {
    this.checkOpen();
    if (this.settings.listener) {
      throw new AcklineClientArgumentError('Cannot call receive() on a consumer with a message listener');
    }
    if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs >= 0)) {
      throw new AcklineClientArgumentError(`Invalid receive timeout '${timeoutMs}' ms: expected >= 0`);
    }
    return this.take(timeoutMs);
  }

  /**
   * The messages at hand, up to the batch receive policy's `maxNumMessages`, after waiting at most
   * its `timeoutMs` for the first.
   * @example const messages = await consumer.batchReceive();
   */
  async batchReceive(): Promise<Message[]> {
    const { maxNumMessages, timeoutMs } = this.settings.batchReceive;
    const first = await this.receive(timeoutMs);
    if (first === undefined) return [];
    return [first, ...this.incoming.splice(0, maxNumMessages - 1)];
  }

  /**
   * Acknowledges messages (or ids of messages this consumer received), each on its topic's consumer.
   * @example await consumer.acknowledge(message);
   */
  async acknowledge(target: AcknowledgeTarget): Promise<void> {
    await Promise.all([...this.split(target)].map(([consumer, items]) => consumer.acknowledge(items)));
  }

  /**
   * Acknowledges everything up to `target` on its topic (Exclusive and Failover only).
   * @example await consumer.acknowledgeCumulative(message);
   */
  async acknowledgeCumulative(target: Message | MessageId): Promise<void> {
    const [[consumer, items] = []] = this.split(target);
    if (consumer && items?.[0]) await consumer.acknowledgeCumulative(items[0]);
  }

  /**
   * Negatively acknowledges messages, each on its topic's consumer.
   * @example await consumer.negativeAcknowledge(message);
   */
  async negativeAcknowledge(target: AcknowledgeTarget): Promise<void> {
    await Promise.all(
      [...this.split(target)].map(([consumer, items]) => consumer.negativeAcknowledge(items)),
    );
  }

  /**
   * Hands back everything every topic's consumer holds, and what this one kept.
   * @example await consumer.redeliverUnacknowledgedMessages();
   */
  async redeliverUnacknowledgedMessages(): Promise<void> {
    this.incoming.length = 0;
    await Promise.all(this.getConsumers().map((consumer) => consumer.redeliverUnacknowledgedMessages()));
  }

  /**
   * Seeks the topic of a message id (one this consumer received), or every topic to an edge.
   * @example await consumer.seek('earliest');
   */
  async seek(target: SeekTarget): Promise<void> {
    this.incoming.length = 0;
    if (typeof target === 'string') {
      await Promise.all(this.getConsumers().map((consumer) => consumer.seek(target)));
      return;
    }
    await this.ownerOf(target).seek(target);
  }

  /**
   * Seeks every topic to the first message published at or after `timestampMs`.
   * @example await consumer.seekTimestamp(Date.now() - 60_000);
   */
  async seekTimestamp(timestampMs: number): Promise<void> {
    this.incoming.length = 0;
    await Promise.all(this.getConsumers().map((consumer) => consumer.seekTimestamp(timestampMs)));
  }

  /**
   * Unsubscribes every topic (each refuses with 412 while another consumer is connected to it).
   * @example await consumer.unsubscribe();
   */
  async unsubscribe(): Promise<void> {
    this.checkOpen();
    await Promise.all(this.getConsumers().map((consumer) => consumer.unsubscribe()));
    await this.close();
  }

  /**
   * Closes every topic's consumer; waiting receives reject as closed.
   * @example await consumer.close();
   */
  async close(): Promise<void> {
    if (this.closing) return this.closing;
    this.stopped.abort();
    this.discovery?.cancel();
    const error = new AcklineClientClosedError(`Consumer of ${this.describe()} was closed`);
    for (const waiter of this.waiters.splice(0)) settle(waiter, () => waiter.reject(error));
    this.incoming.length = 0;
    this.closing = Promise.all(this.getConsumers().map((consumer) => consumer.close())).then(() =>
      this.settings.onClose(this),
    );
    return this.closing;
  }

  /**
   * A pattern consumer's discovery, now: subscribes the matching topics created since (Pulsar runs
   * it every minute; so does this consumer, on the client's clock).
   * @example await consumer.refreshTopics();
   */
  async refreshTopics(): Promise<void> {
    const { discover } = this.settings;
    if (!discover || this.stopped.signal.aborted) return;
    await this.addTopics((await discover()).filter((topic) => !this.consumers.has(topic)));
    if (this.waiters.length > 0) this.pumpAll();
  }

  /** A topic list fails whole (what it subscribed is closed); a pattern's discovery reports and goes on. */
  private async addTopics(topics: readonly string[]): Promise<void> {
    const subscribed = await Promise.allSettled(topics.map((topic) => this.settings.subscribeTopic(topic)));
    for (const outcome of subscribed) {
      if (outcome.status === 'fulfilled') this.consumers.set(outcome.value.getTopic(), outcome.value);
    }
    const failed = subscribed.find((outcome) => outcome.status === 'rejected');
    if (!failed) return;
    if (this.settings.discover === undefined) {
      await Promise.allSettled(this.getConsumers().map((consumer) => consumer.close()));
      throw failed.reason;
    }
    this.settings.onListenerError?.(failed.reason);
  }

  private scheduleDiscovery(): void {
    if (!this.settings.discover || this.stopped.signal.aborted) return;
    this.discovery = this.settings.clock.schedule(() => {
      void this.refreshTopics()
        .catch((error: unknown) => this.settings.onListenerError?.(error))
        .finally(() => this.scheduleDiscovery());
    }, this.settings.discoveryPeriodMs);
  }

  private take(timeoutMs: number | undefined): Promise<Message | undefined> {
    const kept = this.incoming.shift();
    if (kept !== undefined) return Promise.resolve(kept);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, timer: undefined };
      if (timeoutMs !== undefined) {
        waiter.timer = setTimeout(() => {
          const index = this.waiters.indexOf(waiter);
          if (index >= 0) this.waiters.splice(index, 1);
          resolve(undefined);
        }, timeoutMs);
      }
      this.waiters.push(waiter);
      this.pumpAll();
    });
  }

  private pumpAll(): void {
    for (const consumer of this.consumers.values()) {
      if (!this.pumping.has(consumer)) void this.pump(consumer);
    }
  }

  /** One topic's receives, while a receive of the merge waits; what comes goes to it, else is kept. */
  private async pump(consumer: Consumer): Promise<void> {
    this.pumping.add(consumer);
    try {
      while (this.waiters.length > 0 && !this.stopped.signal.aborted) {
        const message = await consumer.receive(PER_TOPIC_WAIT_MS);
        if (message === undefined) continue;
        this.byLedger.set(message.getMessageId().ledgerId.toString(), consumer);
        const waiter = this.waiters.shift();
        if (waiter) settle(waiter, () => waiter.resolve(message));
        else this.incoming.push(message);
      }
    } catch (error) {
      if (!this.stopped.signal.aborted) {
        for (const waiter of this.waiters.splice(0)) settle(waiter, () => waiter.reject(error));
      }
    } finally {
      this.pumping.delete(consumer);
    }
  }

  /** The targets grouped by the consumer of their topic. */
  private split(target: AcknowledgeTarget | Message | MessageId): Map<Consumer, (Message | MessageId)[]> {
    const groups = new Map<Consumer, (Message | MessageId)[]>();
    const items: readonly (Message | MessageId)[] = Array.isArray(target) ? target : [target as Message];
    for (const item of items) {
      const consumer = this.ownerOf(item instanceof Message ? item.getMessageId() : item);
      groups.set(consumer, [...(groups.get(consumer) ?? []), item]);
    }
    return groups;
  }

  private ownerOf(messageId: MessageId): Consumer {
    const consumer = this.byLedger.get(messageId.ledgerId?.toString());
    if (!consumer) {
      throw new AcklineClientArgumentError(
        `MessageId ${String(messageId)} was not received by this consumer of ${this.describe()}: use the topic's own consumer (getConsumers())`,
      );
    }
    return consumer;
  }

  private checkOpen(): void {
    if (this.stopped.signal.aborted)
      throw new AcklineClientClosedError(`Consumer of ${this.describe()} is closed`);
  }

  private describe(): string {
    return `subscription '${this.settings.subscription}' on ${this.getTopics().join(', ') || 'no topic yet'}`;
  }
}

function settle(waiter: Waiter, outcome: () => void): void {
  clearTimeout(waiter.timer);
  outcome();
}
