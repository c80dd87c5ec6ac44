import type { Consumer as AcklineConsumer } from '../client/consumer.ts';
import type { AcklineClientClosedError } from '../client/errors.ts';
import type { Message as AcklineMessage } from '../client/message.ts';
import { ChunkAssembler } from './chunking.ts';
import type { CompatContext } from './compat-context.ts';
import { resultOf } from './compat-context.ts';
import { type CheckedConsumerConfig, checkConsumerConfig } from './consumer-config.ts';
import { checkNamespaces, subscribeSource, topicsNow } from './consumer-sources.ts';
import { type Delivery, IncomingMessages } from './incoming-messages.ts';
import { describeError } from './log.ts';
import { deliveryOf, Message } from './message.ts';
import { fieldsOf, isEarliest, isLatest, type MessageId, toAckline } from './message-id.ts';
import type {
  ConsumerBatchReceivePolicy,
  ConsumerCryptoFailureAction,
  CryptoKeyReader,
  DeadLetterPolicy,
  InitialPosition,
  KeySharedPolicy,
  RegexSubscriptionMode,
  SchemaInfo,
  SubscriptionType,
} from './types.ts';

export interface ConsumerConfig {
  topic?: string;
  topics?: string[];
  topicsPattern?: string;
  subscription: string;
  subscriptionType?: SubscriptionType;
  subscriptionInitialPosition?: InitialPosition;
  ackTimeoutMs?: number;
  nAckRedeliverTimeoutMs?: number;
  receiverQueueSize?: number;
  receiverQueueSizeAcrossPartitions?: number;
  consumerName?: string;
  properties?: { [key: string]: string };
  listener?: (message: Message, consumer: Consumer) => void;
  readCompacted?: boolean;
  privateKeyPath?: string;
  cryptoKeyReader?: CryptoKeyReader;
  cryptoFailureAction?: ConsumerCryptoFailureAction;
  maxPendingChunkedMessage?: number;
  autoAckOldestChunkedMessageOnQueueFull?: number;
  schema?: SchemaInfo;
  batchIndexAckEnabled?: boolean;
  regexSubscriptionMode?: RegexSubscriptionMode;
  deadLetterPolicy?: DeadLetterPolicy;
  batchReceivePolicy?: ConsumerBatchReceivePolicy;
  keySharedPolicy?: KeySharedPolicy;
  replicateSubscriptionState?: boolean;
}

interface ConsumerInit {
  readonly context: CompatContext;
  readonly config: ConsumerConfig;
  readonly checked: CheckedConsumerConfig;
  readonly sources: ReadonlyMap<string, AcklineConsumer>;
}

const FILE = 'consumer.ts';

/** Subscribes a compat consumer: checks the settings, then subscribes each topic through the SDK. */
export async function subscribeConsumer(context: CompatContext, config: ConsumerConfig): Promise<Consumer> {
  const checked = checkConsumerConfig(config);
  const settings = { context, config, checked };
  const topics = await topicsNow(settings);
  await checkNamespaces(settings, topics);
  const sources = new Map<string, AcklineConsumer>();
  try {
    for (const topic of topics) sources.set(topic, await subscribeSource(settings, topic));
  } catch (error) {
    await Promise.allSettled([...sources.values()].map((source) => source.close()));
    throw error;
  }
  const consumer = new Consumer({ context, config, checked, sources });
  consumer.startListener();
  return consumer;
}

/**
 * pulsar-client's `Consumer`, over ackline's consumer API (one SDK consumer per topic). A received
 * message stays this consumer's until it is acknowledged, negatively acknowledged, its ack timeout
 * passes or the consumer closes, as in Pulsar.
 *
 * @example
 * const consumer = await client.subscribe({ topic: 'my-topic', subscription: 'sub1', subscriptionType: 'Shared' });
 * const msg = await consumer.receive(5000); // rejects 'Failed to receive message: TimeOut' after 5 s
 * await consumer.acknowledge(msg);
 */
export class Consumer {
  private readonly init: ConsumerInit;
  private readonly incoming: IncomingMessages;
  private readonly sourceOf = new WeakMap<Message, AcklineConsumer>();
  private readonly sourceOfId = new Map<string, AcklineConsumer>();
  private readonly chunkDeliveries = new WeakMap<Message, readonly Delivery[]>();
  private readonly chunks: ChunkAssembler;
  /** Acknowledgements and negative acknowledgements in flight: `close()` waits for them. */
  private readonly pending = new Set<Promise<unknown>>();
  /** Negative acknowledgements in flight (also in {@link pending}). */
  private readonly nacks = new Set<Promise<unknown>>();
  private listening: Promise<void> | undefined;
  private lost = false;
  private closing: Promise<null> | undefined;

  /** @internal use `client.subscribe(config)`. */
  constructor(init?: ConsumerInit) {
    if (init === undefined) throw new Error('Use client.subscribe(config) to create a Consumer');
    this.init = init;
    this.incoming = new IncomingMessages({
      onLost: (error) => this.onLost(error),
      onReceiveFailed: (reason) => init.context.logger.log(2, FILE, `receive failed, retrying: ${reason}`),
      // A receive waiting while a negative acknowledgement is in flight can miss its redelivery on
      // the server (see the report of issue 23): the queue is sent first.
      beforeReceive: () => Promise.allSettled([...this.nacks]),
    });
    for (const source of init.sources.values()) this.incoming.add(source);
    this.chunks = new ChunkAssembler({
      maxPending: init.config.maxPendingChunkedMessage ?? 10,
      autoAckOldest: Boolean(init.config.autoAckOldestChunkedMessageOnQueueFull),
      onDropped: (dropped, acknowledge) => {
        const source = dropped[0]?.source;
        const messages = dropped.map((delivery) => delivery.message);
        if (source)
          this.queueNack(acknowledge ? source.acknowledge(messages) : source.negativeAcknowledge(messages));
      },
    });
    init.context.open.add(this);
  }

  /**
   * The next message. Without a timeout it waits until one comes; with one it rejects with
   * `Failed to receive message: TimeOut` when none came in time, as pulsar-client.
   */
  async receive(timeout?: number): Promise<Message> {
    if (this.init.config.listener) {
      throw new Error('Failed to receive message: InvalidConfiguration (the consumer has a listener)');
    }
    if (timeout !== undefined && !(typeof timeout === 'number' && timeout >= 0)) {
      throw new Error('Failed to receive message: InvalidConfiguration (timeout must be a number >= 0)');
    }
    return this.nextMessage(timeout);
  }

  /**
   * The messages that arrive within the batch receive policy: up to `maxNumMessages` and
   * `maxNumBytes`, waiting at most `timeoutMs` (pulsar-client-cpp's defaults: -1, 10 MiB, 100 ms).
   */
  async batchReceive(): Promise<Message[]> {
    const { maxNumMessages, maxNumBytes, timeoutMs } = this.init.checked.batchReceive;
    const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : undefined;
    const messages: Message[] = [];
    let bytes = 0;
    while (
      (maxNumMessages <= 0 || messages.length < maxNumMessages) &&
      (maxNumBytes <= 0 || bytes < maxNumBytes)
    ) {
      const remaining = deadline === undefined ? undefined : deadline - Date.now();
      if (remaining !== undefined && remaining <= 0) break;
      let message: Message;
      try {
        message = await this.nextMessage(remaining);
      } catch (error) {
        if (describeError(error).endsWith('TimeOut')) break;
        throw error;
      }
      messages.push(message);
      bytes += message.getData().length;
    }
    return messages;
  }

  /** Acknowledges the message (Pulsar's individual ack). */
  acknowledge(message: Message): Promise<null> {
    return this.track(this.ackMessage(message), 'Failed to acknowledge');
  }

  /** Acknowledges the message of this id. */
  acknowledgeId(messageId: MessageId): Promise<null> {
    return this.track(this.ackId(messageId), 'Failed to acknowledge');
  }

  /** Asks for the message again after `nAckRedeliverTimeoutMs`; a failure goes to the log handler. */
  negativeAcknowledge(message: Message): void {
    const delivered = this.deliveriesOf(message);
    const request = delivered
      ? delivered.source.negativeAcknowledge(delivered.messages)
      : this.nackId(message.getMessageId());
    this.queueNack(request);
  }

  /** As {@link negativeAcknowledge}, by id. */
  negativeAcknowledgeId(messageId: MessageId): void {
    this.queueNack(this.nackId(messageId));
  }

  /** Acknowledges this message and every one before it (Exclusive and Failover subscriptions). */
  acknowledgeCumulative(message: Message): Promise<null> {
    return this.acknowledgeCumulativeId(message.getMessageId());
  }

  /** As {@link acknowledgeCumulative}, by id. */
  acknowledgeCumulativeId(messageId: MessageId): Promise<null> {
    const request = (async () => {
      const source = this.sourceFor(messageId);
      await source.acknowledgeCumulative(toAckline(messageId));
    })();
    return this.track(request, 'Failed to acknowledge cumulatively');
  }

  /**
   * Moves the subscription so the next message is the one after `messageId` (as pulsar-client), or
   * the first (`MessageId.earliest()`) or none yet published (`MessageId.latest()`).
   */
  async seek(messageId: MessageId): Promise<null> {
    this.checkOpen('Failed to seek');
    const { sources } = this.init;
    if (sources.size !== 1 && !isEarliest(messageId) && !isLatest(messageId)) {
      throw new Error(
        'Failed to seek: NotSupported (seek by message id on a multi-topic consumer, as Pulsar)',
      );
    }
    await this.reset('Failed to seek', (topic) => {
      if (isEarliest(messageId)) return 'earliest';
      if (isLatest(messageId)) return 'latest';
      const { ledgerId, entryId } = fieldsOf(messageId);
      return { ledgerId: ledgerId.toString(), entryId: entryId.toString(), isExcluded: true, topic };
    });
    return null;
  }

  /** Moves the subscription to the first message published at or after `timestamp` (epoch ms). */
  async seekTimestamp(timestamp: number): Promise<null> {
    this.checkOpen('Failed to seek');
    if (!(Number.isSafeInteger(timestamp) && timestamp >= 0)) {
      throw new Error('Failed to seek: InvalidConfiguration (timestamp must be epoch milliseconds)');
    }
    await this.reset('Failed to seek', () => timestamp);
    return null;
  }

  /** True from a successful subscribe until `close()` or until the server dropped the consumer. */
  isConnected(): boolean {
    return this.closing === undefined && !this.lost;
  }

  /**
   * Waits for the acknowledgements and negative acknowledgements in flight, then closes; what was
   * received and not acknowledged is redelivered. Closing again resolves at once.
   */
  close(): Promise<null> {
    this.closing ??= (async () => {
      this.incoming.close(new Error('Failed to receive message: AlreadyClosed'));
      await Promise.allSettled([...this.pending]);
      await Promise.allSettled([...this.init.sources.values()].map((source) => source.close()));
      await this.listening;
      this.init.context.open.delete(this);
      return null;
    })();
    return this.closing;
  }

  /**
   * Deletes the subscription on every topic of the consumer and closes it (the server refuses, 412,
   * while another consumer of the subscription is connected, as Pulsar).
   */
  async unsubscribe(): Promise<null> {
    this.checkOpen('Failed to unsubscribe consumer');
    await Promise.allSettled([...this.pending]);
    try {
      await Promise.all([...this.init.sources.values()].map((source) => source.unsubscribe()));
    } catch (error) {
      throw new Error(`Failed to unsubscribe consumer: ${resultOf(error)}`, { cause: error });
    }
    await this.close();
    return null;
  }

  /** @internal starts the listener loop when the config has a listener. */
  startListener(): void {
    const { listener } = this.init.config;
    if (listener === undefined) return;
    this.listening = (async () => {
      while (this.closing === undefined && !this.lost) {
        let message: Message;
        try {
          message = await this.nextMessage();
        } catch {
          return;
        }
        try {
          await listener(message, this);
        } catch (error) {
          this.init.context.logger.error(FILE, `The message listener failed: ${describeError(error)}`);
        }
      }
    })();
  }

  /** The next whole message: chunks are collected until their message is complete. */
  private async nextMessage(timeout?: number): Promise<Message> {
    const deadline = timeout === undefined ? undefined : Date.now() + timeout;
    for (;;) {
      const remaining = deadline === undefined ? undefined : Math.max(0, deadline - Date.now());
      const whole = this.chunks.add(await this.incoming.next(remaining));
      if (whole) return this.take(whole);
    }
  }

  private take(deliveries: readonly Delivery[]): Message {
    const first = deliveries[0]!;
    const producerName = producerNameOf(first.message);
    const message =
      deliveries.length === 1
        ? Message.fromAckline(first.message, producerName)
        : Message.fromChunks(
            deliveries.map((delivery) => delivery.message),
            producerName,
          );
    if (deliveries.length > 1) this.chunkDeliveries.set(message, deliveries);
    this.sourceOf.set(message, first.source);
    this.sourceOfId.set(message.getMessageId().toString(), first.source);
    return message;
  }

  /** The SDK messages a compat message stands for (its chunks'), with the SDK consumer that got them. */
  private deliveriesOf(
    message: Message,
  ): { source: AcklineConsumer; messages: AcklineMessage[] } | undefined {
    const chunks = this.chunkDeliveries.get(message);
    if (chunks) return { source: chunks[0]!.source, messages: chunks.map((delivery) => delivery.message) };
    const source = this.sourceOf.get(message);
    const delivery = deliveryOf(message);
    return source && delivery ? { source, messages: [delivery] } : undefined;
  }

  private async ackMessage(message: Message): Promise<void> {
    const delivered = this.deliveriesOf(message);
    if (delivered === undefined) return this.ackId(message.getMessageId());
    this.sourceOfId.delete(message.getMessageId().toString());
    await delivered.source.acknowledge(delivered.messages);
  }

  private async ackId(messageId: MessageId): Promise<void> {
    const source = this.sourceFor(messageId);
    this.sourceOfId.delete(messageId.toString());
    await source.acknowledge(toAckline(messageId));
  }

  private async nackId(messageId: MessageId): Promise<void> {
    await this.sourceFor(messageId).negativeAcknowledge(toAckline(messageId));
  }

  /** The SDK consumer a message id belongs to: the one that received it, else the only one. */
  private sourceFor(messageId: MessageId): AcklineConsumer {
    const source = this.sourceOfId.get(messageId.toString());
    if (source) return source;
    const all = [...this.init.sources.values()];
    if (all.length === 1) return all[0]!;
    throw new Error(`the message ${messageId.toString()} was not received by this multi-topic consumer`);
  }

  private queueNack(request: Promise<unknown>): void {
    const tracked = request.catch((error: unknown) =>
      this.init.context.logger.error(FILE, `Failed to negatively acknowledge: ${describeError(error)}`),
    );
    this.pending.add(tracked);
    this.nacks.add(tracked);
    void tracked.finally(() => {
      this.pending.delete(tracked);
      this.nacks.delete(tracked);
    });
  }

  private track(request: Promise<unknown>, failed: string): Promise<null> {
    const settled = request.then(() => null);
    this.pending.add(settled);
    void settled.catch(() => undefined).finally(() => this.pending.delete(settled));
    return settled.catch((error: unknown) => {
      throw new Error(`${failed}: ${resultOf(error)}`, { cause: error });
    });
  }

  private async reset(
    failed: string,
    target: (
      topic: string,
    ) => number | 'earliest' | 'latest' | { ledgerId: string; entryId: string; isExcluded: true },
  ): Promise<void> {
    const { context, checked, sources } = this.init;
    try {
      for (const [topic, source] of sources) {
        await context.sdk.admin().topics().resetCursor(topic, checked.subscription, target(topic));
        // Drops what the SDK consumer prefetched and had handed out: it comes from the new position.
        await source.redeliverUnacknowledgedMessages();
      }
    } catch (error) {
      throw new Error(`${failed}: ${resultOf(error)}`, { cause: error });
    }
    this.incoming.clear();
  }

  private checkOpen(failed: string): void {
    if (this.closing) throw new Error(`${failed}: AlreadyClosed`);
  }

  private onLost(error: AcklineClientClosedError): void {
    if (this.closing) return;
    this.lost = true;
    this.init.context.logger.error(FILE, `The consumer is no longer connected: ${error.message}`);
    this.incoming.close(new Error(`Failed to receive message: AlreadyClosed (${error.message})`));
  }
}

/** The name of the producer that published the message ('' when the server has none). */
function producerNameOf(message: AcklineMessage): string {
  return message.getProducerName() ?? '';
}
