import { MessageId } from '../domain/message-id.ts';
import type { DataTopic } from './data-http.ts';
import { AcklineClientError } from './errors.ts';
import type { JsonObject, JsonValue } from './lossless-json.ts';
import { Message } from './message.ts';

/**
 * Checks on what the data API answered, so the SDK hands out the types it promises or an
 * {@link AcklineClientError} saying what came instead. Fields a newer server adds are ignored.
 */

/** The outcome of one message of a produce request, in request order. */
export type PublishOutcome =
  | { readonly messageId: MessageId }
  | { readonly errorCode: number; readonly reason: string };

/** `{"consumerId": "..."}`, the answer to subscribe. */
export function parseConsumerId(body: JsonValue): string {
  const { consumerId } = expectObject(body, 'subscribe');
  if (typeof consumerId !== 'string' || consumerId.length === 0) {
    throw unexpected(body, 'subscribe', 'a non-empty consumerId');
  }
  return consumerId;
}

/** `{"messagePublishResults": [{"messageId", "errorCode", "errorMsg"?}]}`, one per message sent. */
export function parsePublishResults(body: JsonValue, messageCount: number): PublishOutcome[] {
  const { messagePublishResults: results } = expectObject(body, 'produce');
  if (!Array.isArray(results) || results.length !== messageCount) {
    throw unexpected(body, 'produce', `messagePublishResults with ${messageCount} result(s)`);
  }
  return results.map((result: JsonValue): PublishOutcome => {
    const { messageId, errorCode, errorMsg, error } = expectObject(result, 'a publish result');
    if (errorCode !== undefined && errorCode !== 0) {
      const code = typeof errorCode === 'number' ? errorCode : -1;
      const reason = [errorMsg, error].find((text) => typeof text === 'string' && text.length > 0);
      return {
        errorCode: code,
        reason: (reason as string | undefined) ?? `Publish failed (errorCode ${code})`,
      };
    }
    return { messageId: messageIdOf(messageId, result, 'a publish result') };
  });
}

/** `{"topics": [...]}`, the answer to a namespace's topic list. */
export function parseTopicList(body: JsonValue): string[] {
  const { topics } = expectObject(body, 'topic list');
  if (!Array.isArray(topics) || topics.some((topic) => typeof topic !== 'string')) {
    throw unexpected(body, 'topic list', 'a topics array of names');
  }
  return topics as string[];
}

/** `{"lastSequenceId": n}` (-1: none stored), the answer to a producer's lastSequenceId. */
export function parseLastSequenceId(body: JsonValue): number {
  const { lastSequenceId } = expectObject(body, 'lastSequenceId');
  if (typeof lastSequenceId !== 'number' || !Number.isSafeInteger(lastSequenceId) || lastSequenceId < -1) {
    throw unexpected(body, 'lastSequenceId', 'a lastSequenceId >= -1');
  }
  return lastSequenceId;
}

/** `{"messages": [...]}`, the answer to receive; an empty answer means no message. */
export function parseReceivedMessages(body: JsonValue | undefined, topic: DataTopic): Message[] {
  if (body === undefined) return [];
  const { messages } = expectObject(body, 'receive');
  if (!Array.isArray(messages)) throw unexpected(body, 'receive', 'a messages array');
  return messages.map((message: JsonValue) => receivedMessage(message, topic));
}

function receivedMessage(value: JsonValue, topic: DataTopic): Message {
  const what = 'a received message';
  const fields = expectObject(value, what);
  const messageId = messageIdOf(fields.messageId, value, what);
  if (typeof fields.payload !== 'string') throw unexpected(value, what, 'a string payload');
  const data = fields.payloadEncoding === 'base64' ? Buffer.from(fields.payload, 'base64') : undefined;
  const producerName = optional(fields.producerName, 'string', value, 'producerName');
  return new Message({
    messageId,
    value: data === undefined ? fields.payload : data.toString('utf8'),
    ...(data === undefined ? {} : { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) }),
    ...(producerName === undefined ? {} : { producerName }),
    key: optional(fields.key, 'string', value, 'key'),
    properties: propertiesOf(fields.properties, value),
    redeliveryCount: optional(fields.redeliveryCount, 'number', value, 'redeliveryCount') ?? 0,
    publishTimeMs: optional(fields.publishTime, 'number', value, 'publishTime') ?? 0,
    eventTimeMs: optional(fields.eventTime, 'number', value, 'eventTime') ?? 0,
    topicName: optional(fields.topic, 'string', value, 'topic') ?? topicNameOf(topic, messageId),
    deliveryHandle: optional(fields.deliveryHandle, 'string', value, 'deliveryHandle'),
  });
}

/** As Pulsar, a message of a partitioned topic names its partition. */
function topicNameOf(topic: DataTopic, messageId: MessageId): string {
  if (messageId.partitionIndex < 0 || /-partition-\d+$/.test(topic.name)) return topic.name;
  return `${topic.name}-partition-${messageId.partitionIndex}`;
}

function messageIdOf(value: JsonValue | undefined, whole: JsonValue, what: string): MessageId {
  if (typeof value === 'string') {
    try {
      return MessageId.parse(value);
    } catch (error) {
      throw unexpected(whole, what, 'a messageId ledgerId:entryId:partitionIndex', error);
    }
  }
  throw unexpected(whole, what, 'a messageId ledgerId:entryId:partitionIndex');
}

function propertiesOf(value: JsonValue | undefined, whole: JsonValue): Record<string, string> {
  if (value === undefined || value === null) return {};
  const properties = expectObject(value, 'message properties');
  for (const property of Object.values(properties)) {
    if (typeof property !== 'string') throw unexpected(whole, 'a received message', 'string properties');
  }
  return properties as Record<string, string>;
}

/** A field that may be absent or null; when present it must be of `type`. */
function optional<T extends 'string' | 'number'>(
  value: JsonValue | undefined,
  type: T,
  whole: JsonValue,
  name: string,
): (T extends 'string' ? string : number) | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== type) throw unexpected(whole, 'a received message', `${name} to be a ${type}`);
  return value as T extends 'string' ? string : number;
}

function expectObject(value: JsonValue, what: string): JsonObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw unexpected(value, what, 'an object');
  }
  return value as JsonObject;
}

function unexpected(value: JsonValue, what: string, expected: string, cause?: unknown): AcklineClientError {
  const shown = JSON.stringify(value).slice(0, 200);
  return new AcklineClientError(200, `Unexpected answer for ${what}: expected ${expected}, got ${shown}`, {
    statusText: 'OK',
    cause,
  });
}
