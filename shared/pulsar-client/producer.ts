import { parseTopic } from '../client/admin-paths.ts';
import type { Producer as AcklineProducer } from '../client/producer.ts';
import { partitionForKey } from '../domain/message-router.ts';
import { splitIntoChunks } from './chunking.ts';
import { type CompatContext, checkNamespaceExists, partitionCount, resultOf } from './compat-context.ts';
import { Message } from './message.ts';
import { fieldsOf, MessageId } from './message-id.ts';
import { type OutgoingMessage, outgoingMessage } from './outgoing-message.ts';
import { type BatchSettings, PartitionPublisher } from './partition-publisher.ts';
import { checkProducerConfig } from './producer-config.ts';
import type {
  CompressionType,
  CryptoKeyReader,
  HashingScheme,
  MessageRoutingMode,
  ProducerAccessMode,
  ProducerBatchType,
  ProducerCryptoFailureAction,
  ProducerMessage,
  SchemaInfo,
} from './types.ts';

export interface ProducerConfig {
  topic: string;
  producerName?: string;
  sendTimeoutMs?: number;
  initialSequenceId?: number;
  maxPendingMessages?: number;
  maxPendingMessagesAcrossPartitions?: number;
  blockIfQueueFull?: boolean;
  messageRoutingMode?: MessageRoutingMode;
  hashingScheme?: HashingScheme;
  compressionType?: CompressionType;
  batchingEnabled?: boolean;
  batchingMaxPublishDelayMs?: number;
  batchingMaxMessages?: number;
  properties?: { [key: string]: string };
  publicKeyPath?: string;
  encryptionKey?: string;
  encryptionKeys?: string[];
  cryptoKeyReader?: CryptoKeyReader;
  cryptoFailureAction?: ProducerCryptoFailureAction;
  chunkingEnabled?: boolean;
  schema?: SchemaInfo;
  accessMode?: ProducerAccessMode;
  batchingType?: ProducerBatchType;
  messageRouter?: MessageRouter;
  batchingMaxAllowedSizeInBytes?: number;
}

export interface TopicMetadata {
  numPartitions: number;
}

/** Picks the partition of a message (`messageRoutingMode: 'CustomPartition'`). */
export type MessageRouter = (message: Message, topicMetadata: TopicMetadata) => number;

/** pulsar-client's batching defaults (ProducerConfiguration of pulsar-client-cpp). */
const DEFAULT_BATCHING_MAX_PUBLISH_DELAY_MS = 10;
const DEFAULT_BATCHING_MAX_MESSAGES = 1000;
const DEFAULT_BATCHING_MAX_BYTES = 128 * 1024;
/** The SDK's most messages in one produce request. */
const MAX_MESSAGES_PER_REQUEST = 1000;
/** Where a message goes: a partition index, or -1 for a non-partitioned topic. */
const WHOLE_TOPIC = -1;

interface ProducerInit {
  readonly context: CompatContext;
  readonly config: ProducerConfig;
  readonly topic: string;
  readonly partitions: number;
  /** The SDK producers by target: -1 for the topic, else each partition's. */
  readonly sdkProducers: ReadonlyMap<number, AcklineProducer>;
}

/** Creates a compat producer: checks the settings and that the namespace exists, as Pulsar. */
export async function createProducer(context: CompatContext, config: ProducerConfig): Promise<Producer> {
  const failed = 'Failed to create producer';
  checkProducerConfig(config);
  let parts: ReturnType<typeof parseTopic>;
  try {
    parts = parseTopic(config.topic);
  } catch (error) {
    throw new Error(`${failed}: InvalidTopicName`, { cause: error });
  }
  const topic = `${parts.domain}://${parts.tenant}/${parts.namespace}/${parts.localName}`;
  await checkNamespaceExists(context, parts, failed);
  const partitions = await partitionCount(context, topic, failed, true);
  const producerName = config.producerName ?? `ackline-${globalThis.crypto.randomUUID().slice(0, 8)}`;
  // One SDK producer per partition (or the topic's one): a partition's messages then leave in order,
  // with one sequence of ids per partition for deduplication.
  const targets = partitions > 0 ? Array.from({ length: partitions }, (_, index) => index) : [WHOLE_TOPIC];
  const sdkProducers = new Map<number, AcklineProducer>();
  for (const target of targets) {
    const name = target === WHOLE_TOPIC ? topic : `${topic}-partition-${target}`;
    const builder = context.sdk
      .newProducer()
      .topic(name)
      .producerName(producerName)
      .enableBatching(true)
      .batchingMaxPublishDelay(60_000)
      .batchingMaxMessages(MAX_MESSAGES_PER_REQUEST)
      // The compat queue sizes each request; the SDK must not split one into concurrent requests.
      .batchingMaxBytes(Number.MAX_SAFE_INTEGER);
    if (config.initialSequenceId !== undefined) builder.initialSequenceId(config.initialSequenceId);
    // Registered as Pulsar's producers are: a Shared one is refused while an exclusive one holds the
    // partition; an exclusive one takes it (its partitions one by one, given back on a refusal).
    builder.accessMode(config.accessMode ?? 'Shared');
    try {
      sdkProducers.set(target, await builder.create());
    } catch (error) {
      await Promise.all([...sdkProducers.values()].map((created) => created.close()));
      throw new Error(`${failed}: ${resultOf(error)}`, { cause: error });
    }
  }
  return new Producer({ context, config: { ...config, producerName }, topic, partitions, sdkProducers });
}

/**
 * pulsar-client's `Producer`, publishing through ackline's produce API. `send()` resolves once the
 * message is stored (durably), to its `MessageId`.
 *
 * @example
 * const producer = await client.createProducer({ topic: 'my-topic' });
 * const id = await producer.send({ data: Buffer.from('hello'), partitionKey: 'k1', properties: { a: '1' } });
 */
export class Producer {
  private readonly publishers = new Map<number, PartitionPublisher>();
  private readonly init: ProducerInit;
  private readonly producerName: string;
  private readonly batching: BatchSettings;
  private readonly singlePartition: number;
  private roundRobin = 0;
  private closing: Promise<null> | undefined;

  /** @internal use `client.createProducer(...)`. */
  constructor(init?: ProducerInit) {
    if (init === undefined) throw new Error('Use client.createProducer(config) to create a Producer');
    this.init = init;
    const { config, partitions } = init;
    this.producerName = config.producerName ?? '';
    this.batching = {
      // Chunking needs batching off, as in Pulsar.
      enabled: (config.batchingEnabled ?? true) && !config.chunkingEnabled,
      maxPublishDelayMs: config.batchingMaxPublishDelayMs ?? DEFAULT_BATCHING_MAX_PUBLISH_DELAY_MS,
      maxMessages: Math.min(
        config.batchingMaxMessages ?? DEFAULT_BATCHING_MAX_MESSAGES,
        MAX_MESSAGES_PER_REQUEST,
      ),
      maxBytes: config.batchingMaxAllowedSizeInBytes ?? DEFAULT_BATCHING_MAX_BYTES,
      keyBased: config.batchingType === 'KeyBasedBatching',
    };
    this.singlePartition = partitions > 0 ? Math.floor(Math.random() * partitions) : WHOLE_TOPIC;
    init.context.open.add(this);
  }

  /**
   * Publishes a message; resolves to its id once stored. Messages are stored in the order of the calls.
   * @example const id = await producer.send({ data: Buffer.from('hello'), deliverAfter: 60_000 });
   */
  async send(message: ProducerMessage): Promise<MessageId> {
    if (this.closing) throw new Error('Failed to send message: AlreadyClosed');
    const outgoing = outgoingMessage(message);
    const publisher = this.publisher(this.route(outgoing));
    if (!this.init.config.chunkingEnabled) return publisher.enqueue(outgoing);
    // The chunks are queued together, in order; the message's id is its last chunk's.
    const sent = splitIntoChunks(outgoing).map((chunk) => publisher.enqueue(chunk));
    const ids = await Promise.all(sent);
    return ids[ids.length - 1]!;
  }

  /**
   * Publishes what is batched now; resolves to null when every message sent so far is answered.
   * @example producer.send({ data }); await producer.flush();
   */
  async flush(): Promise<null> {
    await Promise.all([...this.publishers.values()].map((publisher) => publisher.flush()));
    return null;
  }

  /**
   * Publishes what is batched, then closes; closing again resolves at once.
   * @example await producer.close();
   */
  close(): Promise<null> {
    this.closing ??= Promise.all([...this.publishers.values()].map((publisher) => publisher.flush()))
      .then(() => Promise.all([...this.init.sdkProducers.values()].map((sdk) => sdk.close())))
      .then(() => {
        this.init.context.open.delete(this);
        return null;
      });
    return this.closing;
  }

  /** The configured `producerName`, else a name made for this producer (`ackline-<8 hex digits>`). */
  getProducerName(): string {
    return this.producerName;
  }

  /** The topic's full name. */
  getTopic(): string {
    return this.init.topic;
  }

  /**
   * True from creation until `close()`, or until the server fenced this exclusive producer (another
   * took the topic): ackline's producer holds no connection to lose.
   */
  isConnected(): boolean {
    return (
      this.closing === undefined && [...this.init.sdkProducers.values()].every((sdk) => sdk.isConnected())
    );
  }

  private route(message: OutgoingMessage): number {
    const { partitions, config } = this.init;
    if (partitions === 0) return WHOLE_TOPIC;
    if (config.messageRoutingMode === 'CustomPartition' && config.messageRouter) {
      let index: number;
      try {
        index = config.messageRouter(routerView(message), { numPartitions: partitions });
      } catch (error) {
        throw new Error('Failed to send message: UnknownError (the messageRouter threw)', { cause: error });
      }
      if (!Number.isInteger(index) || index < 0 || index >= partitions) {
        throw new Error(`Failed to send message: UnknownError (the messageRouter answered ${index})`);
      }
      return index;
    }
    // As the server and Pulsar's Java client route a key: JavaStringHash, sign-safe modulo.
    if (message.partitionKey) return partitionForKey(message.partitionKey, partitions);
    if (config.messageRoutingMode === 'RoundRobinDistribution') {
      this.roundRobin = (this.roundRobin + 1) % partitions;
      return this.roundRobin;
    }
    return this.singlePartition;
  }

  private publisher(target: number): PartitionPublisher {
    let publisher = this.publishers.get(target);
    if (publisher === undefined) {
      const sdk = this.init.sdkProducers.get(target)!;
      publisher = new PartitionPublisher(sdk, this.batching, (id) => this.published(id));
      this.publishers.set(target, publisher);
    }
    return publisher;
  }

  private published(id: MessageId): void {
    const { ledgerId, entryId, partition } = fieldsOf(id);
    const key = `${this.init.topic}|${partition}`;
    const known = this.init.context.lastPublished.get(key);
    if (known === undefined || known[0] < ledgerId || (known[0] === ledgerId && known[1] < entryId)) {
      this.init.context.lastPublished.set(key, [ledgerId, entryId]);
    }
  }
}

/** What a message router sees: the message's keys and properties (no id, no topic yet). */
function routerView(message: OutgoingMessage): Message {
  return new Message({
    messageId: MessageId.earliest(),
    data: message.data,
    topicName: '',
    properties: message.properties,
    partitionKey: message.partitionKey,
    orderingKey: message.orderingKey,
    publishTimestamp: 0,
    eventTimestamp: message.eventTimestamp ?? 0,
    redeliveryCount: 0,
    producerName: '',
  });
}
