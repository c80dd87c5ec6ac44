import { MessageId as AcklineMessageId } from '../domain/message-id.ts';
import { decodeMessageIdData, encodeMessageIdData, type MessageIdFields } from './message-id-data.ts';

const INT64_MAX = 9_223_372_036_854_775_807n;
const EARLIEST: MessageIdFields = { ledgerId: -1n, entryId: -1n, partition: -1, batchIndex: -1 };
const LATEST: MessageIdFields = { ledgerId: INT64_MAX, entryId: INT64_MAX, partition: -1, batchIndex: -1 };

/**
 * pulsar-client's `MessageId`: `earliest()`, `latest()`, `serialize()` to Pulsar's `MessageIdData`
 * protobuf bytes and `deserialize()` from them (interchangeable with any Pulsar client's), and
 * `toString()` as the C++ client prints it, `(ledgerId,entryId,partition,batchIndex)`. ackline
 * stores messages one per entry, so `batchIndex` is always -1 on the ids it answers.
 *
 * @example
 * const bytes = msg.getMessageId().serialize();
 * await consumer.acknowledgeId(MessageId.deserialize(bytes));
 */
export class MessageId {
  /** @internal */
  readonly fields: MessageIdFields;

  /** @internal applications get ids from `send()`, messages, `earliest()`, `latest()` or `deserialize()`. */
  constructor(fields: MessageIdFields = EARLIEST) {
    this.fields = fields;
  }

  /**
   * The position before the first message of a topic.
   * @example await client.createReader({ topic, startMessageId: MessageId.earliest() });
   */
  static earliest(): MessageId {
    return new MessageId(EARLIEST);
  }

  /**
   * The position after the last message of a topic.
   * @example await client.createReader({ topic, startMessageId: MessageId.latest() });
   */
  static latest(): MessageId {
    return new MessageId(LATEST);
  }

  /**
   * The id that `serialize()` wrote (or any Pulsar client's `MessageIdData` bytes).
   * @example const id = MessageId.deserialize(Buffer.from(saved, 'base64'));
   */
  static deserialize(data: Buffer): MessageId {
    return new MessageId(decodeMessageIdData(data));
  }

  /** @internal the compat id of an id the ackline SDK answered. */
  static fromAckline(id: AcklineMessageId): MessageId {
    return new MessageId({
      ledgerId: id.ledgerId,
      entryId: id.entryId,
      partition: id.partitionIndex,
      batchIndex: -1,
    });
  }

  /**
   * Pulsar's `MessageIdData` protobuf bytes.
   * @example const saved = id.serialize().toString('base64');
   */
  serialize(): Buffer {
    return encodeMessageIdData(this.fields);
  }

  /**
   * `(ledgerId,entryId,partition,batchIndex)`, as pulsar-client prints ids, e.g. `(12,3,-1,-1)`.
   * @example console.log(id.toString());
   */
  toString(): string {
    const { ledgerId, entryId, partition, batchIndex } = this.fields;
    return `(${ledgerId},${entryId},${partition},${batchIndex})`;
  }

  /** @internal whether this is `earliest()`. */
  isEarliest(): boolean {
    return this.fields.ledgerId === -1n && this.fields.entryId === -1n;
  }

  /** @internal whether this is `latest()`. */
  isLatest(): boolean {
    return this.fields.ledgerId === INT64_MAX && this.fields.entryId === INT64_MAX;
  }

  /**
   * @internal the ackline SDK's id of the same message.
   * @throws Error for `earliest()`/`latest()`, which name no message.
   */
  toAckline(): AcklineMessageId {
    const { ledgerId, entryId, partition } = this.fields;
    if (ledgerId < 0n || entryId < 0n || this.isLatest()) {
      throw new Error(`MessageId ${this.toString()} names no message (earliest or latest)`);
    }
    return AcklineMessageId.parse(`${ledgerId}:${entryId}:${partition}`);
  }
}
