import type { MessageId } from '../domain/message-id.ts';
import { AcklineClientArgumentError } from './errors.ts';

/** One message of Pulsar's REST produce body (a type, not an interface, so it is JSON input). */
export type ProduceMessage = {
  readonly payload: string;
  readonly key?: string;
  readonly properties?: Readonly<Record<string, string>>;
  readonly eventTime?: number;
  readonly deliverAt?: number;
  readonly deliverAfterMs?: number;
  /** `base64` when the payload is bytes: JSON carries them as base64, the server stores the bytes. */
  readonly payloadEncoding?: 'base64';
  /** Pulsar's sequenceId; the producer fills it when it has a name (deduplication keys on both). */
  readonly sequenceId?: number;
};

/** A message's value: text (sent as UTF-8) or bytes (`Uint8Array`, `Buffer`). */
export type MessageValue = string | Uint8Array;

/** What a {@link TypedMessageBuilder} hands its producer. */
export interface MessageSink {
  /** `flushNow`: send the pending batch now instead of after the batching delay. */
  enqueue(message: ProduceMessage, flushNow: boolean): Promise<MessageId>;
}

/**
 * Builds one message, as Pulsar's `TypedMessageBuilder<String>`; get one from
 * `producer.newMessage()`. Setters may be called in any order; `send()` checks the values.
 *
 * @example
 * const id = await producer
 *   .newMessage()
 *   .key('customer-7')
 *   .value(JSON.stringify(order))
 *   .property('traceId', traceId)
 *   .eventTime(order.createdAtMs)
 *   .deliverAfter(60_000)
 *   .send();
 */
export class TypedMessageBuilder {
  private payload: MessageValue | undefined;
  private messageSequenceId: number | undefined;
  private messageKey: string | undefined;
  private readonly messageProperties: Record<string, string> = {};
  private eventTimeMs: number | undefined;
  private deliverAtMs: number | undefined;
  private deliverAfterMs: number | undefined;

  /** Use `producer.newMessage()`. */
  constructor(private readonly sink: MessageSink) {}

  /**
   * The payload (required): a string, sent as UTF-8, or bytes (a `Uint8Array` or `Buffer`), stored
   * and delivered as bytes (base64 only inside the JSON of the request). At most 256 KiB of bytes.
   * @example
   * producer.newMessage().value('order 1');
   * producer.newMessage().value(new Uint8Array([0xca, 0xfe]));
   */
  value(value: MessageValue): this {
    this.payload = value;
    return this;
  }

  /**
   * The key: Key_Shared subscriptions deliver one key's messages to one consumer, and a partitioned
   * topic routes by its hash.
   * @example producer.newMessage().key('customer-7').value('order 1');
   */
  key(key: string): this {
    this.messageKey = key;
    return this;
  }

  /**
   * Adds one property (a later value for the same name wins).
   * @example producer.newMessage().value('order 1').property('traceId', 'abc');
   */
  property(name: string, value: string): this {
    this.messageProperties[name] = value;
    return this;
  }

  /**
   * Adds several properties, as Pulsar's `properties(Map)`: they are merged into those already set.
   * @example producer.newMessage().value('order 1').properties({ traceId: 'abc', source: 'web' });
   */
  properties(properties: Readonly<Record<string, string>>): this {
    Object.assign(this.messageProperties, properties);
    return this;
  }

  /**
   * The event time, in epoch milliseconds (a whole number >= 0).
   * @example producer.newMessage().value('order 1').eventTime(Date.parse('2025-01-01T00:00:00Z'));
   */
  eventTime(epochMs: number): this {
    this.eventTimeMs = epochMs;
    return this;
  }

  /**
   * Delivers the message `delayMs` milliseconds after the server stores it (Pulsar's
   * `deliverAfter`; Shared and Key_Shared subscriptions only). Replaces an earlier `deliverAt`, as in
   * Pulsar, where both set the same delivery time.
   * @example producer.newMessage().value('reminder').deliverAfter(60 * 60_000);
   */
  deliverAfter(delayMs: number): this {
    this.deliverAfterMs = delayMs;
    this.deliverAtMs = undefined;
    return this;
  }

  /**
   * The message's sequence id (Pulsar's `sequenceId`), a whole number >= 0. A producer with a name
   * numbers its messages by itself (the last one + 1); set this to choose the number, e.g. an offset
   * of the source the messages come from. With deduplication on, the server stores a message only if
   * its id is above the last one stored for the producer name.
   * @example producer.newMessage().value('row 42').sequenceId(42);
   */
  sequenceId(sequenceId: number): this {
    this.messageSequenceId = sequenceId;
    return this;
  }

  /**
   * Delivers the message at `epochMs` (Pulsar's `deliverAt`). Replaces an earlier `deliverAfter`.
   * @example producer.newMessage().value('reminder').deliverAt(Date.parse('2030-01-01T09:00:00Z'));
   */
  deliverAt(epochMs: number): this {
    this.deliverAtMs = epochMs;
    this.deliverAfterMs = undefined;
    return this;
  }

  /**
   * Sends the message, and any batched before it, now; resolves to its id once the server stored it.
   * @throws AcklineClientArgumentError (rejects) when the value is missing or a time is not a whole
   * number of milliseconds >= 0; AcklineClientClosedError when the producer is closed;
   * AcklinePublishError when the server refused this message; AcklineClientError on an HTTP error.
   * @example const id = await producer.newMessage().value('order 1').send(); // MessageId 12:3:-1
   */
  async send(): Promise<MessageId> {
    return this.sink.enqueue(this.build(), true);
  }

  /**
   * Sends the message with the next batch (Pulsar's `sendAsync`): messages sent within the
   * producer's batching delay go in one request. Without batching, the same as {@link send}.
   * @example
   * const ids = await Promise.all(orders.map((o) => producer.newMessage().value(o).sendAsync()));
   */
  async sendAsync(): Promise<MessageId> {
    return this.sink.enqueue(this.build(), false);
  }

  private build(): ProduceMessage {
    const binary = this.payload instanceof Uint8Array;
    if (typeof this.payload !== 'string' && !binary) {
      throw new AcklineClientArgumentError(
        'Invalid message: no value; call value(...) with a string or a Uint8Array before send()',
      );
    }
    return {
      payload: binary ? Buffer.from(this.payload as Uint8Array).toString('base64') : (this.payload as string),
      ...(binary ? { payloadEncoding: 'base64' as const } : {}),
      sequenceId: checkSequenceId(this.messageSequenceId),
      key: this.messageKey,
      properties: Object.keys(this.messageProperties).length > 0 ? { ...this.messageProperties } : undefined,
      eventTime: checkMs(this.eventTimeMs, 'eventTime'),
      deliverAt: checkMs(this.deliverAtMs, 'deliverAt'),
      deliverAfterMs: checkMs(this.deliverAfterMs, 'deliverAfter'),
    };
  }
}

function checkSequenceId(value: number | undefined): number | undefined {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
    throw new AcklineClientArgumentError(
      `Invalid message sequenceId '${value}': expected a whole number >= 0`,
    );
  }
  return value;
}

function checkMs(value: number | undefined, what: string): number | undefined {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
    throw new AcklineClientArgumentError(
      `Invalid message ${what} '${value}': expected a whole number of milliseconds >= 0`,
    );
  }
  return value;
}
