import type { EntryIdInput } from './entry-id.ts';
import type { JsonValue } from './lossless-json.ts';

/** Pulsar's subscription types. */
export type SubscriptionType = 'Exclusive' | 'Shared' | 'Failover' | 'Key_Shared';

/** Where a new subscription's cursor starts. */
export type InitialPosition = 'Earliest' | 'Latest';

/** Pulsar's `AuthAction`s that ackline knows. */
export type AuthAction = 'produce' | 'consume' | 'acknowledge_message';

/** Options of `topics().createSubscription`. */
export interface CreateSubscriptionOptions {
  /** Sent as `?subscriptionType=`; the server's default applies when absent. */
  readonly subscriptionType?: SubscriptionType;
  /** Sent as `{"initialPosition": ...}`; the server's default (Latest, as Pulsar) applies when absent. */
  readonly initialPosition?: InitialPosition;
}

/** Options of `topics().delete`, `deletePartitionedTopic` and `deleteSubscription`. */
export interface DeleteOptions {
  /** Delete even while consumers are connected (Pulsar's `force=true`): they are disconnected. */
  readonly force?: boolean;
}

/** A message position: the ledger and entry of its entry. */
export interface MessagePosition {
  readonly ledgerId: EntryIdInput;
  readonly entryId: EntryIdInput;
}

/** What `topics().acknowledgeMessage` acknowledges (PIP-423). */
export interface AcknowledgeMessageRequest extends MessagePosition {
  /** The subscriptions to acknowledge on; absent or empty means every subscription of the topic. */
  readonly subscriptionNames?: readonly string[];
  /** Ask what would be acknowledged, changing nothing. */
  readonly dryRun?: boolean;
}

/**
 * A message as the admin API shows it (peek, get by id). Integers beyond 2^53 arrive as decimal
 * strings; fields the server adds are kept.
 */
export interface AdminMessage {
  readonly [field: string]: JsonValue | undefined;
  readonly messageId: JsonValue;
  readonly payload: JsonValue;
  readonly key?: JsonValue;
  readonly properties?: JsonValue;
  readonly publishTime?: JsonValue;
  readonly eventTime?: JsonValue;
  readonly deliverAt?: JsonValue;
}

/** `GET .../partitions`. */
export interface PartitionedTopicMetadata {
  readonly partitions: number;
}

/** Role -> granted actions. */
export type PermissionMap = { readonly [role: string]: readonly string[] };
