/**
 * The ackline clients over `fetch`: the producer/consumer SDK (`AcklineClient`, Pulsar's
 * `PulsarClient`) and the admin client (`AcklineAdmin`, Pulsar's `PulsarAdmin`).
 */

export { MessageId } from '../domain/message-id.ts';
// Thrown by the backoff builders and MessageId.parse, which SDK users call.
export { InvalidPositionError } from '../domain/non-negative-id.ts';
export {
  DEFAULT_FIXED_DELAY_MS,
  DEFAULT_MAX_DELAY_MS,
  DEFAULT_MIN_DELAY_MS,
  DEFAULT_MULTIPLIER,
  FixedRedeliveryBackoff,
  FixedRedeliveryBackoffBuilder,
  InvalidRedeliveryBackoffError,
  MultiplierRedeliveryBackoff,
  MultiplierRedeliveryBackoffBuilder,
  type RedeliveryBackoff,
  type RedeliveryBackoffJson,
} from '../domain/redelivery-backoff.ts';
export { AcklineClient, AcklineClientBuilder } from './ackline-client.ts';
export { AcklineAdmin, AcklineAdminBuilder } from './admin-client.ts';
export { parseNamespace, parseTopic, type TopicPathParts, topicPath } from './admin-paths.ts';
export type {
  AcknowledgeMessageRequest,
  AdminMessage,
  AuthAction,
  CreateSubscriptionOptions,
  DeleteOptions,
  InitialPosition,
  MessagePosition,
  PartitionedTopicMetadata,
  PermissionMap,
  SubscriptionType,
} from './admin-types.ts';
export { type ClientClock, type ScheduledTask, SYSTEM_CLIENT_CLOCK } from './client-clock.ts';
export type {
  BatchReceivePolicy,
  DeadLetterPolicy,
  KeySharedPolicy,
  RedeliveryBackoffParams,
  SubscriptionInitialPosition,
} from './client-types.ts';
export { type AcknowledgeTarget, Consumer, type MessageListener, type SeekTarget } from './consumer.ts';
export { type Closable, ConsumerBuilder } from './consumer-builder.ts';
export type { EntryIdInput } from './entry-id.ts';
export {
  AcklineAdminArgumentError,
  AcklineAdminConnectionError,
  AcklineAdminError,
  type AcklineAdminErrorOptions,
  AcklineClientArgumentError,
  AcklineClientClosedError,
  AcklineClientConnectionError,
  AcklineClientError,
  type AcklineClientErrorOptions,
  AcklineProducerBusyError,
  AcklineProducerFencedError,
  AcklinePublishError,
  NO_HTTP_STATUS,
} from './errors.ts';
export type { FetchFunction } from './http-transport.ts';
export { type JsonObject, type JsonValue, parseJson, stringifyJson } from './lossless-json.ts';
export { Message } from './message.ts';
export { type MessageValue, TypedMessageBuilder } from './message-builder.ts';
export { MultiTopicsConsumer, type MultiTopicsMessageListener } from './multi-topics-consumer.ts';
export { MultiTopicsConsumerBuilder } from './multi-topics-consumer-builder.ts';
export { Namespaces } from './namespaces.ts';
export type { RetentionPolicies } from './policies.ts';
export { Producer } from './producer.ts';
export type { ProducerAccessMode } from './producer-access.ts';
export { ProducerBuilder } from './producer-builder.ts';
export { Reader, ReaderBuilder, type ReaderStart } from './reader.ts';
export type { PendingQuery, RescheduleRequest, ScheduledQuery } from './topic-scheduling.ts';
export { Topics } from './topics.ts';
