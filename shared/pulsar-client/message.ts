import type { Message as AcklineMessage } from '../client/message.ts';
import { fromAckline, MessageId } from './message-id.ts';
import type { EncryptionContext } from './types.ts';

/**
 * Reserved properties that carry what ackline's message has one field for: Pulsar messages have a
 * partition key and an ordering key, ackline's one `key`. A message with an ordering key is stored
 * with `key` = the ordering key (Key_Shared routes by it, as Pulsar) and these properties; the compat
 * layer hides them from `getProperties()`. Other ackline clients see them as properties.
 */
export const ORDERING_KEY_PROPERTY = '__pulsar.orderingKey';
export const PARTITION_KEY_PROPERTY = '__pulsar.partitionKey';
const RESERVED_PREFIX = '__pulsar.';

/** The SDK message of each delivery, which acknowledges it; kept beside the compat message. */
const DELIVERIES = new WeakMap<Message, AcklineMessage>();

/** The ackline SDK's message that `message` was made from (undefined for one made otherwise). */
export function deliveryOf(message: Message): AcklineMessage | undefined {
  return message instanceof Message ? DELIVERIES.get(message) : undefined;
}

/** What a compat {@link Message} is built from. */
export interface MessageInit {
  readonly messageId: MessageId;
  readonly data: Buffer;
  readonly topicName: string;
  readonly properties: { [key: string]: string };
  readonly partitionKey: string;
  readonly orderingKey: string;
  readonly publishTimestamp: number;
  readonly eventTimestamp: number;
  readonly redeliveryCount: number;
  readonly producerName: string;
}

/**
 * pulsar-client's `Message`: a received (or read) message.
 *
 * @example
 * const msg = await consumer.receive();
 * console.log(msg.getMessageId().toString(), msg.getPartitionKey(), msg.getData().toString());
 */
export class Message {
  private readonly init: MessageInit;

  /** Applications receive messages, they do not build them. */
  constructor(init?: MessageInit, delivery?: AcklineMessage) {
    this.init = init ?? emptyInit();
    if (delivery) DELIVERIES.set(this, delivery);
  }

  /** The compat message of a message the ackline SDK received. */
  static fromAckline(message: AcklineMessage, producerName = ''): Message {
    const properties: { [key: string]: string } = {};
    for (const [name, value] of Object.entries(message.getProperties())) {
      if (!name.startsWith(RESERVED_PREFIX)) properties[name] = value;
    }
    const reserved = message.getProperties();
    const orderingKey = reserved[ORDERING_KEY_PROPERTY];
    const key = message.getKey() ?? '';
    return new Message(
      {
        messageId: fromAckline(message.getMessageId()),
        data: Buffer.from(message.getData()),
        topicName: message.getTopicName(),
        properties,
        partitionKey: orderingKey === undefined ? key : (reserved[PARTITION_KEY_PROPERTY] ?? ''),
        orderingKey: orderingKey ?? '',
        publishTimestamp: message.getPublishTime(),
        eventTimestamp: message.getEventTime(),
        redeliveryCount: message.getRedeliveryCount(),
        producerName,
      },
      message,
    );
  }

  /** One message made of the chunks of a chunked message (its id: the last chunk's). */
  static fromChunks(chunks: readonly AcklineMessage[], producerName = ''): Message {
    const first = Message.fromAckline(chunks[0]!, producerName);
    return new Message({
      ...first.init,
      data: Buffer.concat(chunks.map((chunk) => Buffer.from(chunk.getData()))),
      messageId: fromAckline(chunks[chunks.length - 1]!.getMessageId()),
    });
  }

  /** The topic (for a partitioned topic, the partition) the message came from. */
  getTopicName(): string {
    return this.init.topicName;
  }

  /** The producer's properties (a copy). */
  getProperties(): { [key: string]: string } {
    return { ...this.init.properties };
  }

  /** The payload bytes. */
  getData(): Buffer {
    return this.init.data;
  }

  getMessageId(): MessageId {
    return this.init.messageId;
  }

  /** Epoch milliseconds. */
  getPublishTimestamp(): number {
    return this.init.publishTimestamp;
  }

  /** Epoch milliseconds; 0 when the producer set none. */
  getEventTimestamp(): number {
    return this.init.eventTimestamp;
  }

  getRedeliveryCount(): number {
    return this.init.redeliveryCount;
  }

  /** '' when the producer set none. */
  getPartitionKey(): string {
    return this.init.partitionKey;
  }

  /** '' when the producer set none. */
  getOrderingKey(): string {
    return this.init.orderingKey;
  }

  getProducerName(): string {
    return this.init.producerName;
  }

  /** Always false: ackline has no geo-replication. */
  isReplicated(): boolean {
    return false;
  }

  /** Always '': ackline has no geo-replication. */
  getReplicatedFrom(): string {
    return '';
  }

  /** Always null: ackline has no end-to-end encryption. */
  getEncryptionContext(): EncryptionContext | null {
    return null;
  }
}

function emptyInit(): MessageInit {
  return {
    messageId: MessageId.earliest(),
    data: Buffer.alloc(0),
    topicName: '',
    properties: {},
    partitionKey: '',
    orderingKey: '',
    publishTimestamp: 0,
    eventTimestamp: 0,
    redeliveryCount: 0,
    producerName: '',
  };
}
