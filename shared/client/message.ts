import type { MessageId } from '../domain/message-id.ts';

/** What a {@link Message} is built from; the consumer fills it from the server's answer. */
export interface MessageInit {
  readonly messageId: MessageId;
  /** The payload as text (a binary payload's bytes decoded as UTF-8). */
  readonly value: string;
  /** A binary payload's bytes (the producer sent bytes); absent for a text payload. */
  readonly data?: Uint8Array;
  /** The producer's name; absent when the server stored none. */
  readonly producerName?: string;
  readonly key: string | undefined;
  readonly properties: Readonly<Record<string, string>>;
  readonly redeliveryCount: number;
  /** Epoch milliseconds. */
  readonly publishTimeMs: number;
  /** Epoch milliseconds; 0 when the producer set none. */
  readonly eventTimeMs: number;
  readonly topicName: string;
  readonly deliveryHandle: string | undefined;
}

/**
 * A received message, as Pulsar's `Message<String>`: the value is the UTF-8 payload as a string.
 * Immutable. Acknowledge it with `consumer.acknowledge(message)` (which uses this delivery's
 * handle), or keep only `getMessageId()` and acknowledge by id later.
 *
 * @example
 * const message = await consumer.receive();
 * console.log(message.getMessageId().toString(), message.getKey(), message.getValue());
 * await consumer.acknowledge(message);
 */
export class Message {
  /**
   * The server's opaque token for this delivery of the message (absent when the server sent none).
   * `consumer.acknowledge(message)` and `negativeAcknowledge(message)` send it instead of the id.
   */
  readonly deliveryHandle: string | undefined;
  private readonly init: MessageInit;

  /** Built by the consumer from the server's answer; applications receive messages, not build them. */
  constructor(init: MessageInit) {
    this.init = { ...init, properties: Object.freeze({ ...init.properties }) };
    this.deliveryHandle = init.deliveryHandle;
  }

  /**
   * The message's id, `ledgerId:entryId:partitionIndex`.
   * @example const id = message.getMessageId().toString(); // '12:3:-1'
   */
  getMessageId(): MessageId {
    return this.init.messageId;
  }

  /**
   * The payload as text: what the producer sent as a string, or its bytes decoded as UTF-8.
   * @example const order = JSON.parse(message.getValue());
   */
  getValue(): string {
    return this.init.value;
  }

  /**
   * The payload; the same as {@link getValue}.
   * @example const { value } = message;
   */
  get value(): string {
    return this.init.value;
  }

  /**
   * The payload's bytes (Pulsar's `getData()`): those the producer sent, or a string's UTF-8 bytes.
   * A new copy on each call.
   * @example const bytes = message.getData();
   */
  getData(): Uint8Array {
    const { data } = this.init;
    return data === undefined ? new TextEncoder().encode(this.init.value) : new Uint8Array(data);
  }

  /**
   * Whether the producer sent bytes (`value(Uint8Array)`) rather than a string.
   * @example const payload = message.isBinary() ? message.getData() : message.getValue();
   */
  isBinary(): boolean {
    return this.init.data !== undefined;
  }

  /**
   * The name of the producer that published the message (Pulsar's `getProducerName()`): the name it
   * was created with, or the publishing role's when it had none.
   * @example console.log(`${message.getProducerName()} sent ${message.getMessageId()}`);
   */
  getProducerName(): string | undefined {
    return this.init.producerName;
  }

  /**
   * The payload's size in bytes (Pulsar's `size()`).
   * @example if (message.getPayloadSize() > 1024 * 1024) log.warn('large message');
   */
  getPayloadSize(): number {
    return this.init.data?.byteLength ?? Buffer.byteLength(this.init.value, 'utf8');
  }

  /**
   * The key the producer set, or undefined.
   * @example const customer = message.getKey();
   */
  getKey(): string | undefined {
    return this.init.key;
  }

  /**
   * Whether the producer set a key.
   * @example if (message.hasKey()) route(message.getKey());
   */
  hasKey(): boolean {
    return this.init.key !== undefined;
  }

  /**
   * The properties the producer set (a frozen copy; empty when none).
   * @example const { traceId } = message.getProperties();
   */
  getProperties(): Readonly<Record<string, string>> {
    return this.init.properties;
  }

  /**
   * One property, or undefined.
   * @example const traceId = message.getProperty('traceId');
   */
  getProperty(name: string): string | undefined {
    return Object.hasOwn(this.init.properties, name) ? this.init.properties[name] : undefined;
  }

  /**
   * How many times the message was redelivered to the subscription before this delivery (0 on the
   * first delivery); the redelivery backoff and the dead-letter policy count with it.
   * @example if (message.getRedeliveryCount() > 3) log.warn('slow poison?');
   */
  getRedeliveryCount(): number {
    return this.init.redeliveryCount;
  }

  /**
   * When the message was published, in epoch milliseconds.
   * @example const ageMs = Date.now() - message.getPublishTime();
   */
  getPublishTime(): number {
    return this.init.publishTimeMs;
  }

  /**
   * The event time the producer set, in epoch milliseconds; 0 when it set none (as Pulsar).
   * @example const eventTime = message.getEventTime() || message.getPublishTime();
   */
  getEventTime(): number {
    return this.init.eventTimeMs;
  }

  /**
   * The topic the message was read from; for a partitioned topic, the partition
   * (`persistent://t/ns/orders-partition-2`), as Pulsar.
   * @example console.log(message.getTopicName());
   */
  getTopicName(): string {
    return this.init.topicName;
  }
}
