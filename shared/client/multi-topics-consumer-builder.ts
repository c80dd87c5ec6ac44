import type { RedeliveryBackoff } from '../domain/redelivery-backoff.ts';
import type { ClientClock } from './client-clock.ts';
import type {
  BatchReceivePolicy,
  DeadLetterPolicy,
  RedeliveryBackoffParams,
  SubscriptionInitialPosition,
  SubscriptionType,
} from './client-types.ts';
import type { Consumer } from './consumer.ts';
import { AcklineClientArgumentError } from './errors.ts';
import { MultiTopicsConsumer, type MultiTopicsMessageListener } from './multi-topics-consumer.ts';

/** Pulsar's patternAutoDiscoveryPeriod default: one minute. */
const DISCOVERY_PERIOD_MS = 60_000;

/** What a {@link MultiTopicsConsumerBuilder} forwards its settings to: the `ConsumerBuilder` it came from. */
export interface ConsumerTemplate {
  subscriptionName(subscription: string): unknown;
  subscriptionType(type: SubscriptionType): unknown;
  subscriptionInitialPosition(position: SubscriptionInitialPosition): unknown;
  consumerName(name: string): unknown;
  receiverQueueSize(size: number): unknown;
  receiverQueueMaxBytes(maxBytes: number): unknown;
  ackTimeout(timeoutMs: number): unknown;
  ackTimeoutRedeliveryBackoff(backoff: RedeliveryBackoff | string, params?: RedeliveryBackoffParams): unknown;
  negativeAckRedeliveryDelay(delayMs: number): unknown;
  negativeAckRedeliveryBackoff(
    backoff: RedeliveryBackoff | string,
    params?: RedeliveryBackoffParams,
  ): unknown;
  deadLetterPolicy(policy: DeadLetterPolicy): unknown;
  batchReceivePolicy(policy: BatchReceivePolicy): unknown;
  leaseMs(leaseMs: number): unknown;
}

/** What the builder needs besides the template's setters. */
export interface MultiTopicsContext {
  readonly template: ConsumerTemplate;
  /** The template's consumer for one topic, without a listener. */
  readonly subscribeTopic: (topic: string) => Promise<Consumer>;
  /** The subscription name and batch receive policy the template holds, checked. */
  readonly settings: () => {
    readonly subscription: string;
    readonly batchReceive: { readonly maxNumMessages: number; readonly timeoutMs: number };
  };
  /** The namespace's topics (`GET /topics/persistent/{tenant}/{namespace}`), full names. */
  readonly listTopics: (namespace: string) => Promise<readonly string[]>;
  readonly clock: ClientClock;
  readonly register: (consumer: MultiTopicsConsumer) => void;
  readonly unregister: (consumer: MultiTopicsConsumer) => void;
}

/** The topics to consume: a list, or a pattern within one namespace. */
export type TopicSelection =
  | { readonly topics: readonly string[] }
  | { readonly namespace: string; readonly pattern: RegExp };

/**
 * Configures a {@link MultiTopicsConsumer}: what `client.newConsumer().topics([...])` or
 * `.topicsPattern(...)` returns. Takes the same settings as `ConsumerBuilder` (each topic's consumer
 * gets them); `subscribe()` subscribes every topic.
 *
 * @example
 * const consumer = await client.newConsumer()
 *   .topicsPattern('persistent://my-tenant/my-ns/orders-.*')
 *   .subscriptionName('audit')
 *   .subscriptionType('Shared')
 *   .subscribe();
 */
export class MultiTopicsConsumerBuilder {
  private listener: MultiTopicsMessageListener | undefined;
  private listenerErrors: ((error: unknown) => void) | undefined;
  private discoveryPeriodMs = DISCOVERY_PERIOD_MS;

  /** Use `client.newConsumer().topics([...])` or `.topicsPattern(...)`. */
  constructor(
    private readonly context: MultiTopicsContext,
    private readonly selection: TopicSelection,
  ) {}

  /** @example builder.subscriptionName('audit'); */
  subscriptionName(subscription: string): this {
    this.context.template.subscriptionName(subscription);
    return this;
  }
  /** @example builder.subscriptionType('Shared'); */
  subscriptionType(type: SubscriptionType): this {
    this.context.template.subscriptionType(type);
    return this;
  }
  /** @example builder.subscriptionInitialPosition('Earliest'); */
  subscriptionInitialPosition(position: SubscriptionInitialPosition): this {
    this.context.template.subscriptionInitialPosition(position);
    return this;
  }
  /** @example builder.consumerName('audit-1'); */
  consumerName(name: string): this {
    this.context.template.consumerName(name);
    return this;
  }
  /** Each topic's receiver queue. @example builder.receiverQueueSize(100); */
  receiverQueueSize(size: number): this {
    this.context.template.receiverQueueSize(size);
    return this;
  }
  /** @example builder.receiverQueueMaxBytes(8 * 1024 * 1024); */
  receiverQueueMaxBytes(maxBytes: number): this {
    this.context.template.receiverQueueMaxBytes(maxBytes);
    return this;
  }
  /** @example builder.ackTimeout(30_000); */
  ackTimeout(timeoutMs: number): this {
    this.context.template.ackTimeout(timeoutMs);
    return this;
  }
  /** @example builder.ackTimeoutRedeliveryBackoff(MultiplierRedeliveryBackoff.builder().build()); */
  ackTimeoutRedeliveryBackoff(backoff: RedeliveryBackoff | string, params?: RedeliveryBackoffParams): this {
    this.context.template.ackTimeoutRedeliveryBackoff(backoff, params);
    return this;
  }
  /** @example builder.negativeAckRedeliveryDelay(5_000); */
  negativeAckRedeliveryDelay(delayMs: number): this {
    this.context.template.negativeAckRedeliveryDelay(delayMs);
    return this;
  }
  /** @example builder.negativeAckRedeliveryBackoff(MultiplierRedeliveryBackoff.builder().build()); */
  negativeAckRedeliveryBackoff(backoff: RedeliveryBackoff | string, params?: RedeliveryBackoffParams): this {
    this.context.template.negativeAckRedeliveryBackoff(backoff, params);
    return this;
  }
  /** Each topic's own dead-letter topic by default. @example builder.deadLetterPolicy({ maxRedeliverCount: 5 }); */
  deadLetterPolicy(policy: DeadLetterPolicy): this {
    this.context.template.deadLetterPolicy(policy);
    return this;
  }
  /** @example builder.batchReceivePolicy({ maxNumMessages: 50, timeoutMs: 500 }); */
  batchReceivePolicy(policy: BatchReceivePolicy): this {
    this.context.template.batchReceivePolicy(policy);
    return this;
  }
  /** @example builder.leaseMs(30_000); */
  leaseMs(leaseMs: number): this {
    this.context.template.leaseMs(leaseMs);
    return this;
  }
  /**
   * The message listener of the merged consumer: one message at a time, from any topic.
   * @example builder.messageListener(async (message, consumer) => consumer.acknowledge(message));
   */
  messageListener(listener: MultiTopicsMessageListener, onError?: (error: unknown) => void): this {
    this.listener = listener;
    this.listenerErrors = onError;
    return this;
  }
  /**
   * How often a pattern consumer looks for new topics (default 60 000 ms, Pulsar's
   * patternAutoDiscoveryPeriod of one minute).
   * @example builder.patternAutoDiscoveryPeriod(10_000);
   */
  patternAutoDiscoveryPeriod(periodMs: number): this {
    this.discoveryPeriodMs = periodMs;
    return this;
  }

  /**
   * Subscribes every topic (a pattern: every matching topic of its namespace now) and resolves to
   * the merged consumer; when one topic's subscribe fails, those done are closed and it rejects.
   * @example const consumer = await client.newConsumer().topics(['t/ns/a', 't/ns/b']).subscriptionName('s').subscribe();
   */
  async subscribe(): Promise<MultiTopicsConsumer> {
    const { subscription, batchReceive } = this.context.settings();
    if (!Number.isSafeInteger(this.discoveryPeriodMs) || this.discoveryPeriodMs < 1_000) {
      throw new AcklineClientArgumentError(
        `Invalid patternAutoDiscoveryPeriod '${this.discoveryPeriodMs}': expected a whole number of ms >= 1000`,
      );
    }
    const discover =
      'pattern' in this.selection
        ? this.discoverer(this.selection.namespace, this.selection.pattern)
        : undefined;
    const topics =
      'topics' in this.selection ? this.selection.topics : await (discover as () => Promise<string[]>)();
    const consumer = new MultiTopicsConsumer({
      subscription,
      subscribeTopic: this.context.subscribeTopic,
      ...(discover ? { discover } : {}),
      discoveryPeriodMs: this.discoveryPeriodMs,
      clock: this.context.clock,
      batchReceive,
      ...(this.listener ? { listener: this.listener } : {}),
      ...(this.listenerErrors ? { onListenerError: this.listenerErrors } : {}),
      onClose: (closed) => this.context.unregister(closed),
    });
    await consumer.start(topics);
    this.context.register(consumer);
    return consumer;
  }

  private discoverer(namespace: string, pattern: RegExp): () => Promise<string[]> {
    return async () =>
      (await this.context.listTopics(namespace)).filter((topic) => {
        pattern.lastIndex = 0;
        return pattern.test(topic);
      });
  }
}
