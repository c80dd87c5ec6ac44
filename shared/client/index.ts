/** The ackline admin client: Pulsar's admin REST API over `fetch`. */
export { AcklineAdmin, AcklineAdminBuilder } from './admin-client.ts';
export type { FetchFunction } from './admin-http.ts';
export { parseNamespace, parseTopic, type TopicPathParts, topicPath } from './admin-paths.ts';
export type {
  AcknowledgeMessageRequest,
  AdminMessage,
  AuthAction,
  CreateSubscriptionOptions,
  InitialPosition,
  MessagePosition,
  PartitionedTopicMetadata,
  PermissionMap,
  SubscriptionType,
} from './admin-types.ts';
export type { EntryIdInput } from './entry-id.ts';
export {
  AcklineAdminArgumentError,
  AcklineAdminConnectionError,
  AcklineAdminError,
  type AcklineAdminErrorOptions,
  NO_HTTP_STATUS,
} from './errors.ts';
export { type JsonObject, type JsonValue, parseJson, stringifyJson } from './lossless-json.ts';
export { Namespaces } from './namespaces.ts';
export { Topics } from './topics.ts';
