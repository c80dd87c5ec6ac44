import type { SubscriptionType } from '../domain/subscription-type.ts';
import type { TopicName } from '../domain/topic-name.ts';

/** A topic as created by the admin API (or auto-created by a first publish). */
export interface TopicRecord {
  /** The base topic (never a `-partition-i` name). */
  readonly topic: TopicName;
  /** 0 for a non-partitioned topic. */
  readonly partitions: number;
  readonly createdAtMs: number;
}

/** A subscription of one topic partition (a partitioned topic has one per partition). */
export interface SubscriptionRecord {
  readonly name: string;
  readonly type: SubscriptionType;
  /** Key of the subscription's cursor in the CursorStore; new for every (re)creation. */
  readonly cursorId: string;
  readonly createdAtMs: number;
}

/**
 * Topics and subscriptions. Creation is conditional: creating what exists
 * throws TopicAlreadyExistsError / SubscriptionAlreadyExistsError.
 */
export interface TopicCatalog {
  createTopic(record: TopicRecord): Promise<void>;
  getTopic(topic: TopicName): Promise<TopicRecord | undefined>;
  /** Topics of `tenant/namespace` of the given domain, sorted by name. */
  listTopics(domain: TopicName['domain'], namespaceName: string): Promise<TopicRecord[]>;
  deleteTopic(topic: TopicName): Promise<void>;
  /** Every topic of the deployment (a full scan: for recovery and maintenance, not for requests). */
  listAllTopics(): Promise<TopicRecord[]>;

  createSubscription(partition: TopicName, record: SubscriptionRecord): Promise<void>;
  getSubscription(partition: TopicName, name: string): Promise<SubscriptionRecord | undefined>;
  listSubscriptions(partition: TopicName): Promise<SubscriptionRecord[]>;
  deleteSubscription(partition: TopicName, name: string): Promise<void>;
}
