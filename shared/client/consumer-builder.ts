import { validateAckTimeoutMs } from '../domain/ack-timeout.ts';
import {
  DEFAULT_CONSUMER_LEASE_MS,
  MAX_CONSUMER_LEASE_MS,
  MIN_CONSUMER_LEASE_MS,
} from '../domain/consumer-lease.ts';
import type { RedeliveryBackoff, RedeliveryBackoffJson } from '../domain/redelivery-backoff.ts';
import { SUBSCRIPTION_TYPES } from '../domain/subscription-type.ts';
import type { ClientClock } from './client-clock.ts';
import type {
  BatchReceivePolicy,
  DeadLetterPolicy,
  KeySharedPolicy,
  RedeliveryBackoffParams,
  SubscriptionInitialPosition,
  SubscriptionType,
} from './client-types.ts';
import {
  Consumer,
  MAX_MESSAGES_PER_RECEIVE,
  MAX_RECEIVER_QUEUE_SIZE,
  type MessageListener,
} from './consumer.ts';
import { parseConsumerId, parseTopicList } from './data-answers.ts';
import { type DataHttp, dataTopic, subscribePath } from './data-http.ts';
import { AcklineClientArgumentError } from './errors.ts';
import type { JsonInput } from './lossless-json.ts';
import { MultiTopicsConsumerBuilder, type MultiTopicsContext } from './multi-topics-consumer-builder.ts';

/** What a {@link ConsumerBuilder} needs from its client. */
export interface ConsumerBuilderContext {
  readonly http: DataHttp;
  readonly requestTimeoutMs: number;
  /** Schedules the consumers' heartbeats. */
  readonly clock: ClientClock;
  /** Throws when the client is closed. */
  checkOpen(): void;
  /** Tracks a subscribed consumer until it closes. */
  register(consumer: Closable): void;
  unregister(consumer: Closable): void;
}

/** What the client closes when it closes. */
export interface Closable {
  /** Closes it; resolves once closed. */
  close(): Promise<void>;
}

/** A backoff as the builder keeps it until subscribe: an object, or a class name and parameters. */
type BackoffSetting = RedeliveryBackoff | RedeliveryBackoffJson;

/** Pulsar's default receiverQueueSize. */
const DEFAULT_RECEIVER_QUEUE_SIZE = 1_000;
/** The kept messages' payload bytes past which polls fetch only what receives wait for (Pulsar's client memoryLimitBytes). */
const DEFAULT_RECEIVER_QUEUE_MAX_BYTES = 64 * 1024 * 1024;
const DEFAULT_BATCH_RECEIVE_TIMEOUT_MS = 100;
const INITIAL_POSITIONS: readonly SubscriptionInitialPosition[] = ['Latest', 'Earliest'];

/**
 * Configures and subscribes a {@link Consumer}, as Pulsar's `ConsumerBuilder`. `topic` and
 * `subscriptionName` are required; the subscription type defaults to Exclusive, as Pulsar's. Setters
 * only record; `subscribe()` checks everything and rejects with {@link AcklineClientArgumentError}
 * before sending anything when a setting is wrong. Durations are in milliseconds.
 *
 * @example
 * const consumer = await client
 *   .newConsumer()
 *   .topic('my-tenant/my-ns/orders')
 *   .subscriptionName('billing')
 *   .subscriptionType('Shared')
 *   .subscriptionInitialPosition('Earliest')
 *   .ackTimeout(30_000)
 *   .negativeAckRedeliveryBackoff(
 *     MultiplierRedeliveryBackoff.builder().minDelayMs(1000).maxDelayMs(60_000).multiplier(2).build(),
 *   )
 *   .deadLetterPolicy({ maxRedeliverCount: 5 })
 *   .subscribe();
 */
export class ConsumerBuilder {
  private topicName: string | undefined;
  private subscription: string | undefined;
  private type: SubscriptionType = 'Exclusive';
  private initialPosition: SubscriptionInitialPosition | undefined;
  private name: string | undefined;
  private queueSize = DEFAULT_RECEIVER_QUEUE_SIZE;
  private queueMaxBytes = DEFAULT_RECEIVER_QUEUE_MAX_BYTES;
  private listener: MessageListener | undefined;
  private listenerErrors: ((error: unknown) => void) | undefined;
  private ackTimeoutMs: number | undefined;
  private ackTimeoutBackoff: BackoffSetting | undefined;
  private nackDelayMs: number | undefined;
  private nackBackoff: BackoffSetting | undefined;
  private deadLetter: DeadLetterPolicy | undefined;
  private batchPolicy: BatchReceivePolicy = {};
  private lease: number | undefined;
  private keyShared: KeySharedPolicy | undefined;

  /** Use `client.newConsumer()`. */
  constructor(private readonly context: ConsumerBuilderContext) {}

  /**
   * The topic: `persistent://tenant/ns/topic`, `tenant/ns/topic` or a bare `topic` (in
   * `public/default`). A partitioned topic is consumed across its partitions.
   * @example client.newConsumer().topic('persistent://my-tenant/my-ns/orders');
   */
  topic(topic: string): this {
    this.topicName = topic;
    return this;
  }

  /**
   * Several topics on one subscription (Pulsar's `topics(...)`): returns the builder of a
   * {@link MultiTopicsConsumer}, which takes the settings of this one, made before or after.
   * @example
   * const consumer = await client.newConsumer().topics(['t/ns/orders', 't/ns/refunds'])
   *   .subscriptionName('audit').subscribe();
   */
  topics(topics: readonly string[]): MultiTopicsConsumerBuilder {
    if (!Array.isArray(topics) || topics.length === 0) {
      throw new AcklineClientArgumentError('topics(...) takes a non-empty array of topic names');
    }
    const names = [...new Set(topics.map((topic) => dataTopic(topic).name))];
    return new MultiTopicsConsumerBuilder(this.multiTopicsContext(), { topics: names });
  }

  /**
   * Every topic of one namespace whose full name matches `pattern` (Pulsar's `topicsPattern`, matched
   * whole against `persistent://tenant/ns/name`), now and as they are created (looked for every
   * minute). The pattern names its namespace: `persistent://t/ns/orders-.*` or `t/ns/orders-.*`.
   * Listing the namespace takes the `consume` permission on it.
   * @example
   * const consumer = await client.newConsumer().topicsPattern('my-tenant/my-ns/orders-.*')
   *   .subscriptionName('audit').subscribe();
   */
  topicsPattern(pattern: string | RegExp): MultiTopicsConsumerBuilder {
    const source = typeof pattern === 'string' ? pattern : pattern.source;
    const full = source.startsWith('persistent://') ? source : `persistent://${source}`;
    const match = /^persistent:\/\/([^/]+)\/([^/]+)\//.exec(full);
    if (!match || /[\\^$.|?*+()[\]{}]/.test(`${match[1]}${match[2]}`)) {
      throw new AcklineClientArgumentError(
        `Invalid topicsPattern '${source}': it must name its namespace, e.g. 'my-tenant/my-ns/orders-.*'`,
      );
    }
    const regex = new RegExp(
      `^(?:${full})$`,
      typeof pattern === 'string' ? '' : pattern.flags.replace('g', ''),
    );
    return new MultiTopicsConsumerBuilder(this.multiTopicsContext(), {
      namespace: `${match[1]}/${match[2]}`,
      pattern: regex,
    });
  }

  /**
   * The subscription; created on first subscribe.
   * @example client.newConsumer().subscriptionName('billing');
   */
  subscriptionName(subscription: string): this {
    this.subscription = subscription;
    return this;
  }

  /**
   * Exclusive (default), Failover, Shared or Key_Shared. Fixed when the subscription is created;
   * subscribing with another type fails with 409, as does a second consumer on an Exclusive one.
   * @example client.newConsumer().subscriptionType('Key_Shared');
   */
  subscriptionType(type: SubscriptionType): this {
    this.type = type;
    return this;
  }

  /**
   * Where a new subscription starts: Latest (the server's default, as Pulsar's) or Earliest.
   * @example client.newConsumer().subscriptionInitialPosition('Earliest');
   */
  subscriptionInitialPosition(position: SubscriptionInitialPosition): this {
    this.initialPosition = position;
    return this;
  }

  /**
   * A name for this consumer, shown in topic stats.
   * @example client.newConsumer().consumerName(`billing-${process.pid}`);
   */
  consumerName(name: string): this {
    this.name = name;
    return this;
  }

  /**
   * How many messages the consumer may keep ahead of the application (Pulsar's receiverQueueSize:
   * 0..100 000, default 1 000, as Pulsar's). A receive poll asks for up to 100 messages (the most one
   * answer carries) while fewer than this are kept, and while the kept ones hold fewer payload bytes
   * than {@link receiverQueueMaxBytes}. Kept messages count as delivered to this consumer (on a Shared
   * subscription the other consumers do not get them; their ack timeout runs); 0 fetches only what
   * receives wait for. Polls run only while a receive (or the listener) waits, as before.
   * @example client.newConsumer().receiverQueueSize(50);
   */
  receiverQueueSize(size: number): this {
    this.queueSize = size;
    return this;
  }

  /**
   * The payload bytes the consumer may keep ahead (default 64 MiB, Pulsar's client
   * `memoryLimitBytes`). The server answers a poll by count, so a poll asks for as many messages as
   * this many bytes hold at the mean payload size of the last poll (never fewer than receives wait
   * for): an estimate, exact for payloads of one size.
   * @example client.newConsumer().receiverQueueSize(1000).receiverQueueMaxBytes(8 * 1024 * 1024);
   */
  receiverQueueMaxBytes(maxBytes: number): this {
    this.queueMaxBytes = maxBytes;
    return this;
  }

  /**
   * Pulsar's `messageListener`: the consumer receives by itself and calls `listener` with each message,
   * one at a time, in order (the next call waits for the previous one's promise). The listener
   * acknowledges or nacks; what it throws goes to `onError` (default: ignored, as Pulsar logs it) and
   * the loop goes on. With a listener, `receive()` and `batchReceive()` reject. `close()` stops it.
   * @example
   * await client.newConsumer().topic('my-tenant/my-ns/orders').subscriptionName('billing')
   *   .messageListener(async (message, consumer) => {
   *     await handle(message.getValue());
   *     await consumer.acknowledge(message);
   *   })
   *   .subscribe();
   */
  messageListener(listener: MessageListener, onError?: (error: unknown) => void): this {
    this.listener = listener;
    this.listenerErrors = onError;
    return this;
  }

  /**
   * Redelivers a message not acknowledged within `timeoutMs` of its delivery (0 disables it, the
   * default; otherwise >= 1000 ms).
   * @example client.newConsumer().ackTimeout(30_000);
   */
  ackTimeout(timeoutMs: number): this {
    this.ackTimeoutMs = timeoutMs;
    return this;
  }

  /**
   * Waits longer before each ack-timeout redelivery (PIP-130): a backoff object such as
   * `MultiplierRedeliveryBackoff`, or a class name known to the server and its parameters.
   * @example
   * client.newConsumer().ackTimeout(10_000)
   *   .ackTimeoutRedeliveryBackoff(MultiplierRedeliveryBackoff.builder().minDelayMs(1000).maxDelayMs(60_000).build());
   */
  ackTimeoutRedeliveryBackoff(backoff: RedeliveryBackoff): this;
  /**
   * As above, by class name: `{"className", "params"}` is sent as given.
   * @example client.newConsumer().ackTimeoutRedeliveryBackoff('MultiplierRedeliveryBackoff', { minDelayMs: 1000 });
   */
  ackTimeoutRedeliveryBackoff(className: string, params?: RedeliveryBackoffParams): this;
  ackTimeoutRedeliveryBackoff(backoff: RedeliveryBackoff | string, params?: RedeliveryBackoffParams): this {
    this.ackTimeoutBackoff = backoffSetting(backoff, params);
    return this;
  }

  /**
   * The same delay before every negative-ack redelivery (Pulsar's `negativeAckRedeliveryDelay`; the
   * server's default is 60 000 ms). Set this or {@link negativeAckRedeliveryBackoff}, not both.
   * @example client.newConsumer().negativeAckRedeliveryDelay(5_000);
   */
  negativeAckRedeliveryDelay(delayMs: number): this {
    this.nackDelayMs = delayMs;
    return this;
  }

  /**
   * A delay before each negative-ack redelivery that grows with the message's redelivery count
   * (PIP-106). Set this or {@link negativeAckRedeliveryDelay}, not both: subscribe() refuses both, as
   * PIP-106 says.
   * @example
   * client.newConsumer().negativeAckRedeliveryBackoff(
   *   MultiplierRedeliveryBackoff.builder().minDelayMs(1000).maxDelayMs(60_000).multiplier(2).build(),
   * );
   */
  negativeAckRedeliveryBackoff(backoff: RedeliveryBackoff): this;
  /**
   * As above, by class name: `{"className", "params"}` is sent as given, for a backoff registered on
   * the server.
   * @example
   * client.newConsumer().negativeAckRedeliveryBackoff('MultiplierRedeliveryBackoff', {
   *   minDelayMs: 1000, maxDelayMs: 60_000, multiplier: 2,
   * });
   */
  negativeAckRedeliveryBackoff(className: string, params?: RedeliveryBackoffParams): this;
  negativeAckRedeliveryBackoff(backoff: RedeliveryBackoff | string, params?: RedeliveryBackoffParams): this {
    this.nackBackoff = backoffSetting(backoff, params);
    return this;
  }

  /**
   * Sends a message to a dead letter topic after `maxRedeliverCount` redeliveries.
   * @example client.newConsumer().deadLetterPolicy({ maxRedeliverCount: 5, deadLetterTopic: 'my-tenant/my-ns/orders-DLQ' });
   */
  deadLetterPolicy(policy: DeadLetterPolicy): this {
    this.deadLetter = policy;
    return this;
  }

  /**
   * Key_Shared: how the consumer gets its keys, as Pulsar's `keySharedPolicy(KeySharedPolicy.stickyHashRange()...)`:
   * `STICKY` with the hash ranges it owns, or `AUTO_SPLIT` (the default). Subscribing is refused
   * (409) when the ranges overlap another consumer's, or its mode differs from the others'.
   * @example client.newConsumer().subscriptionType('Key_Shared').keySharedPolicy({ mode: 'STICKY', hashRanges: [{ start: 0, end: 999 }] });
   */
  keySharedPolicy(policy: KeySharedPolicy): this {
    this.keyShared = policy;
    return this;
  }

  /**
   * How `batchReceive()` batches (default: up to 100 messages, 100 ms wait).
   * @example client.newConsumer().batchReceivePolicy({ maxNumMessages: 20, timeoutMs: 1000 });
   */
  batchReceivePolicy(policy: BatchReceivePolicy): this {
    this.batchPolicy = policy;
    return this;
  }

  /**
   * How long the server keeps this consumer without a call (10 000..3 600 000 ms; the server's
   * default is 60 000). A consumer silent for longer is gone: what it received and did not
   * acknowledge goes to the other consumers, and an Exclusive or Failover one is replaced. While the
   * consumer is open the SDK keeps the lease alive by itself: it sends a heartbeat when the consumer
   * made no call for a third of the lease, so only a crashed or frozen process loses it. A short
   * lease hands a dead consumer's messages on sooner, for one small request per third of it.
   * @example client.newConsumer().subscriptionType('Failover').leaseMs(10_000);
   */
  leaseMs(leaseMs: number): this {
    this.lease = leaseMs;
    return this;
  }

  /**
   * Checks the settings, subscribes (`POST /consumers/{domain}/{tenant}/{ns}/{topic}/subscription/{sub}`)
   * and resolves to the consumer.
   * @throws AcklineClientArgumentError (rejects, nothing sent) on a missing or invalid setting, or
   * when both negativeAckRedeliveryDelay and negativeAckRedeliveryBackoff are set;
   * AcklineClientError with the server's reason on 400 (e.g. an unknown backoff class), 409 (the
   * subscription has another type, an Exclusive one has a consumer, or it has
   * maxConsumersPerSubscription connected: Pulsar's ConsumerBusy) or 412 (a new subscription on a
   * topic that has maxSubscriptionsPerTopic).
   * @example const consumer = await client.newConsumer().topic('my-tenant/my-ns/orders').subscriptionName('billing').subscribe();
   */
  async subscribe(): Promise<Consumer> {
    this.context.checkOpen();
    const topic = dataTopic(required(this.topicName, 'topic'));
    const subscription = required(this.subscription, 'subscriptionName');
    const body = this.subscribeBody();
    const batchReceive = this.batchReceiveSettings();
    const { http, requestTimeoutMs } = this.context;
    const consumerId = parseConsumerId(
      await http.json({ method: 'POST', path: subscribePath(topic, subscription), body }),
    );
    const consumer = new Consumer({
      http,
      consumerId,
      topic,
      subscription,
      subscriptionType: this.type,
      receiverQueueSize: this.queueSize,
      receiverQueueMaxBytes: this.queueMaxBytes,
      ...(this.listener ? { listener: this.listener } : {}),
      ...(this.listenerErrors ? { onListenerError: this.listenerErrors } : {}),
      batchReceive,
      requestTimeoutMs,
      leaseMs: this.lease ?? DEFAULT_CONSUMER_LEASE_MS,
      clock: this.context.clock,
      onClose: (closed) => this.context.unregister(closed),
    });
    this.context.register(consumer);
    return consumer;
  }

  private multiTopicsContext(): MultiTopicsContext {
    return {
      template: this,
      subscribeTopic: (topic) => this.copyFor(topic).subscribe(),
      settings: () => ({
        subscription: required(this.subscription, 'subscriptionName'),
        batchReceive: this.batchReceiveSettings(),
      }),
      listTopics: async (namespace) => {
        const path = `/topics/persistent/${namespace.split('/').map(encodeURIComponent).join('/')}`;
        return parseTopicList(await this.context.http.json({ method: 'GET', path }));
      },
      clock: this.context.clock,
      register: (consumer) => this.context.register(consumer),
      unregister: (consumer) => this.context.unregister(consumer),
    };
  }

  /** This builder's settings for one topic, without a listener (a merged consumer has it). */
  private copyFor(topic: string): ConsumerBuilder {
    const copy = Object.assign(Object.create(ConsumerBuilder.prototype) as ConsumerBuilder, this);
    copy.topicName = topic;
    copy.listener = undefined;
    copy.listenerErrors = undefined;
    return copy;
  }

  private subscribeBody(): JsonInput {
    if (!SUBSCRIPTION_TYPES.includes(this.type)) {
      throw new AcklineClientArgumentError(
        `Invalid subscriptionType '${this.type}': expected one of ${SUBSCRIPTION_TYPES.join(', ')}`,
      );
    }
    if (this.initialPosition !== undefined && !INITIAL_POSITIONS.includes(this.initialPosition)) {
      throw new AcklineClientArgumentError(
        `Invalid subscriptionInitialPosition '${this.initialPosition}': expected Latest or Earliest`,
      );
    }
    if (this.name !== undefined && this.name.length === 0) {
      throw new AcklineClientArgumentError('Invalid consumerName: it is empty');
    }
    if (
      !Number.isSafeInteger(this.queueSize) ||
      this.queueSize < 0 ||
      this.queueSize > MAX_RECEIVER_QUEUE_SIZE
    ) {
      throw new AcklineClientArgumentError(
        `Invalid receiverQueueSize '${this.queueSize}': expected an integer from 0 to ${MAX_RECEIVER_QUEUE_SIZE}`,
      );
    }
    if (!Number.isSafeInteger(this.queueMaxBytes) || this.queueMaxBytes < 0) {
      throw new AcklineClientArgumentError(
        `Invalid receiverQueueMaxBytes '${this.queueMaxBytes}': expected a whole number of bytes >= 0`,
      );
    }
    if (this.listener !== undefined && typeof this.listener !== 'function') {
      throw new AcklineClientArgumentError('Invalid messageListener: expected a function');
    }
    if (this.nackDelayMs !== undefined && this.nackBackoff !== undefined) {
      throw new AcklineClientArgumentError(
        'Set negativeAckRedeliveryDelay or negativeAckRedeliveryBackoff, not both (PIP-106)',
      );
    }
    if (this.ackTimeoutMs !== undefined) {
      try {
        validateAckTimeoutMs(this.ackTimeoutMs);
      } catch (error) {
        throw new AcklineClientArgumentError(error instanceof Error ? error.message : String(error), {
          cause: error,
        });
      }
    }
    if (this.nackDelayMs !== undefined && (!Number.isSafeInteger(this.nackDelayMs) || this.nackDelayMs < 0)) {
      throw new AcklineClientArgumentError(
        `Invalid negativeAckRedeliveryDelay '${this.nackDelayMs}' ms: expected a whole number >= 0`,
      );
    }
    if (
      this.lease !== undefined &&
      (!Number.isSafeInteger(this.lease) ||
        this.lease < MIN_CONSUMER_LEASE_MS ||
        this.lease > MAX_CONSUMER_LEASE_MS)
    ) {
      throw new AcklineClientArgumentError(
        `Invalid leaseMs '${this.lease}': expected a whole number of ms from ${MIN_CONSUMER_LEASE_MS} to ${MAX_CONSUMER_LEASE_MS}`,
      );
    }
    return {
      consumerName: this.name,
      leaseMs: this.lease,
      subscriptionType: this.type,
      subscriptionInitialPosition: this.initialPosition,
      ackTimeoutMs: this.ackTimeoutMs,
      ackTimeoutRedeliveryBackoff: backoffJson(this.ackTimeoutBackoff, 'ackTimeoutRedeliveryBackoff'),
      negativeAckRedeliveryDelayMs: this.nackDelayMs,
      negativeAckRedeliveryBackoff: backoffJson(this.nackBackoff, 'negativeAckRedeliveryBackoff'),
      deadLetterPolicy: this.deadLetter === undefined ? undefined : deadLetterJson(this.deadLetter),
      keySharedPolicy:
        this.keyShared === undefined
          ? undefined
          : {
              keySharedMode: this.keyShared.mode,
              hashRanges: this.keyShared.hashRanges?.map(({ start, end }) => ({ start, end })),
            },
    };
  }

  private batchReceiveSettings(): { maxNumMessages: number; timeoutMs: number } {
    const maxNumMessages = this.batchPolicy.maxNumMessages ?? MAX_MESSAGES_PER_RECEIVE;
    const timeoutMs = this.batchPolicy.timeoutMs ?? DEFAULT_BATCH_RECEIVE_TIMEOUT_MS;
    if (
      !Number.isSafeInteger(maxNumMessages) ||
      maxNumMessages < 1 ||
      maxNumMessages > MAX_MESSAGES_PER_RECEIVE
    ) {
      throw new AcklineClientArgumentError(
        `Invalid batchReceivePolicy maxNumMessages '${maxNumMessages}': expected an integer from 1 to ${MAX_MESSAGES_PER_RECEIVE}`,
      );
    }
    if (!Number.isFinite(timeoutMs) || timeoutMs < 0) {
      throw new AcklineClientArgumentError(
        `Invalid batchReceivePolicy timeoutMs '${timeoutMs}': expected >= 0`,
      );
    }
    return { maxNumMessages, timeoutMs };
  }
}

function required(value: string | undefined, what: string): string {
  if (value === undefined || value.length === 0) {
    throw new AcklineClientArgumentError(`Cannot subscribe: ${what} is required`);
  }
  return value;
}

function backoffSetting(
  backoff: RedeliveryBackoff | string,
  params?: RedeliveryBackoffParams,
): BackoffSetting {
  return typeof backoff === 'string' ? { className: backoff, params: params ?? {} } : backoff;
}

/** The `{"className", "params"}` wire form: a backoff object's `toJSON()`, or what was given. */
function backoffJson(backoff: BackoffSetting | undefined, what: string): JsonInput | undefined {
  if (backoff === undefined) return undefined;
  const json: unknown =
    'toJSON' in backoff && typeof backoff.toJSON === 'function' ? backoff.toJSON() : backoff;
  const { className, params } = (json ?? {}) as Partial<RedeliveryBackoffJson>;
  if (typeof className !== 'string' || className.length === 0) {
    throw new AcklineClientArgumentError(`Invalid ${what}: expected a RedeliveryBackoff or a class name`);
  }
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    throw new AcklineClientArgumentError(`Invalid ${what} params for '${className}': expected an object`);
  }
  return { className, params };
}

function deadLetterJson(policy: DeadLetterPolicy): JsonInput {
  const { maxRedeliverCount, deadLetterTopic, initialSubscriptionName } = policy;
  if (!Number.isSafeInteger(maxRedeliverCount) || maxRedeliverCount < 1) {
    throw new AcklineClientArgumentError(
      `Invalid deadLetterPolicy maxRedeliverCount '${maxRedeliverCount}': expected an integer >= 1`,
    );
  }
  for (const [what, value] of [
    ['deadLetterTopic', deadLetterTopic],
    ['initialSubscriptionName', initialSubscriptionName],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value.length === 0)) {
      throw new AcklineClientArgumentError(`Invalid deadLetterPolicy ${what}: expected a non-empty string`);
    }
  }
  return { maxRedeliverCount, deadLetterTopic, initialSubscriptionName };
}
