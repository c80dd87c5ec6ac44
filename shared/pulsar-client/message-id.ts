import { MessageId as AcklineMessageId } from '../domain/message-id.ts';
import { decodeMessageIdData, encodeMessageIdData, type MessageIdFields } from './message-id-data.ts';

const INT64_MAX = 9_223_372_036_854_775_807n;
const EARLIEST: MessageIdFields = { ledgerId: -1n, entryId: -1n, partition: -1, batchIndex: -1 };
const LATEST: MessageIdFields = { ledgerId: INT64_MAX, entryId: INT64_MAX, partition: -1, batchIndex: -1 };

/**
 * Each id's fields, kept beside the object rather than on it: a `MessageId` then has exactly
 * pulsar-client's public members, so ids typed with pulsar-client's declarations are ours too.
 */
const FIELDS = new WeakMap<MessageId, MessageIdFields>();

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
  /** Applications get ids from `send()`, messages, `earliest()`, `latest()` or `deserialize()`. */
  constructor(fields: MessageIdFields = EARLIEST) {
    FIELDS.set(this, fields);
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

  /**
   * Pulsar's `MessageIdData` protobuf bytes.
   * @example const saved = id.serialize().toString('base64');
   */
  serialize(): Buffer {
    return encodeMessageIdData(fieldsOf(this));
  }

  /**
   * `(ledgerId,entryId,partition,batchIndex)`, as pulsar-client prints ids, e.g. `(12,3,-1,-1)`.
   * @example console.log(id.toString());
   */
  toString(): string {
    const { ledgerId, entryId, partition, batchIndex } = fieldsOf(this);
    return `(${ledgerId},${entryId},${partition},${batchIndex})`;
  }
}

/**
 * The fields of an id made by this module.
 * @throws Error for anything else (an object that only looks like a MessageId).
 */
export function fieldsOf(id: MessageId): MessageIdFields {
  const fields = id instanceof MessageId ? FIELDS.get(id) : undefined;
  if (fields === undefined)
    throw new Error('Invalid MessageId: expected a MessageId of ackline/pulsar-client');
  return fields;
}

/** Whether `id` is `MessageId.earliest()`. */
export function isEarliest(id: MessageId): boolean {
  const { ledgerId, entryId } = fieldsOf(id);
  return ledgerId === -1n && entryId === -1n;
}

/** Whether `id` is `MessageId.latest()`. */
export function isLatest(id: MessageId): boolean {
  const { ledgerId, entryId } = fieldsOf(id);
  return ledgerId === INT64_MAX && entryId === INT64_MAX;
}

/** The compat id of an id the ackline SDK answered. */
export function fromAckline(id: AcklineMessageId): MessageId {
  return new MessageId({
    ledgerId: id.ledgerId,
    entryId: id.entryId,
    partition: id.partitionIndex,
    batchIndex: -1,
  });
}

/**
 * The ackline SDK's id of the same message.
 * @throws Error for `earliest()`/`latest()`, which name no message.
 */
export function toAckline(id: MessageId): AcklineMessageId {
  const { ledgerId, entryId, partition } = fieldsOf(id);
  if (ledgerId < 0n || entryId < 0n || isLatest(id)) {
    throw new Error(`MessageId ${id.toString()} names no message (earliest or latest)`);
  }
  return AcklineMessageId.parse(`${ledgerId}:${entryId}:${partition}`);
}
