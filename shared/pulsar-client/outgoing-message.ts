import type { TypedMessageBuilder } from '../client/message-builder.ts';
import { ORDERING_KEY_PROPERTY, PARTITION_KEY_PROPERTY } from './message.ts';
import type { ProducerMessage } from './types.ts';

/** A message as the compat producer keeps it until it is published. */
export interface OutgoingMessage {
  readonly data: Buffer;
  readonly partitionKey: string;
  readonly orderingKey: string;
  readonly properties: { [key: string]: string };
  readonly eventTimestamp: number | undefined;
  readonly deliverAfter: number | undefined;
  readonly deliverAt: number | undefined;
  readonly sequenceId: number | undefined;
}

/**
 * Reads what `producer.send(...)` was given. As pulsar-client (whose binding reads the fields of
 * whatever it gets), a value that is not an object, or an object without `data`, is a message with an
 * empty payload.
 * @throws Error for a field of the wrong type.
 */
export function outgoingMessage(message: ProducerMessage): OutgoingMessage {
  const fields = (message !== null && typeof message === 'object' ? message : {}) as Partial<ProducerMessage>;
  const data: unknown = fields.data;
  let bytes: Buffer;
  if (data === undefined || data === null) bytes = Buffer.alloc(0);
  else if (Buffer.isBuffer(data)) bytes = data;
  else if (data instanceof Uint8Array) bytes = Buffer.from(data);
  else if (typeof data === 'string') bytes = Buffer.from(data, 'utf8');
  else throw new Error('Failed to send message: data must be a Buffer');
  return {
    data: bytes,
    partitionKey: optionalString(fields.partitionKey, 'partitionKey') ?? '',
    orderingKey: optionalString(fields.orderingKey, 'orderingKey') ?? '',
    properties: stringProperties(fields.properties),
    eventTimestamp: optionalMs(fields.eventTimestamp, 'eventTimestamp'),
    deliverAfter: optionalMs(fields.deliverAfter, 'deliverAfter'),
    deliverAt: optionalMs(fields.deliverAt, 'deliverAt'),
    sequenceId: optionalMs(fields.sequenceId, 'sequenceId'),
  };
}

/** The key Key_Shared and key-based batching group by: the ordering key, else the partition key. */
export function routingKeyOf(message: OutgoingMessage): string {
  return message.orderingKey || message.partitionKey;
}

/**
 * Fills an ackline SDK message builder. ackline's message has one key: it takes the ordering key
 * when there is one (Key_Shared routes by it, as Pulsar), and reserved properties keep both keys so
 * the compat consumer answers `getPartitionKey()` and `getOrderingKey()` as sent.
 */
export function fillBuilder(builder: TypedMessageBuilder, message: OutgoingMessage): TypedMessageBuilder {
  builder.value(message.data);
  if (message.sequenceId !== undefined) builder.sequenceId(message.sequenceId);
  const properties = { ...message.properties };
  if (message.orderingKey) {
    properties[ORDERING_KEY_PROPERTY] = message.orderingKey;
    if (message.partitionKey) properties[PARTITION_KEY_PROPERTY] = message.partitionKey;
  }
  const key = routingKeyOf(message);
  if (key) builder.key(key);
  if (Object.keys(properties).length > 0) builder.properties(properties);
  if (message.eventTimestamp !== undefined && message.eventTimestamp > 0)
    builder.eventTime(message.eventTimestamp);
  if (message.deliverAt !== undefined && message.deliverAt > 0) builder.deliverAt(message.deliverAt);
  else if (message.deliverAfter !== undefined && message.deliverAfter > 0)
    builder.deliverAfter(message.deliverAfter);
  return builder;
}

function optionalString(value: unknown, what: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new Error(`Failed to send message: ${what} must be a string`);
  return value;
}

function optionalMs(value: unknown, what: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new Error(`Failed to send message: ${what} must be a number`);
  }
  return Math.trunc(value);
}

function stringProperties(value: unknown): { [key: string]: string } {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object') throw new Error('Failed to send message: properties must be an object');
  const properties: { [key: string]: string } = {};
  for (const [name, property] of Object.entries(value)) properties[name] = String(property);
  return properties;
}
