import type { Position } from '../domain/position.ts';
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
 * Where a subscription's backlog feeder stands (see feed-backlog.ts): the one
 * feed job entitled to feed next, and the last entry fed before it. Kept with
 * the subscription so that one chain of feed jobs goes on: a job that finds
 * another job named here (a copy SQS delivered twice, a job that already ran,
 * a feed started over) stops instead of feeding the backlog a second time.
 */
export interface FeedProgress {
  readonly jobId: string;
  readonly after: Position;
}

/**
 * A claim on a subscription's feed progress (see TopicCatalog.recordFeedProgress): it holds while
 * the subscription has cursor `cursorId` and its progress names job `expectedJobId`.
 */
export interface FeedProgressClaim {
  /** The subscription's cursor: a subscription recreated since (another cursor) refuses the claim. */
  readonly cursorId: string;
  /** The job the recorded progress must name; undefined for a feed starting over (any, or none). */
  readonly expectedJobId: string | undefined;
  /** What to record when the claim holds. */
  readonly progress: FeedProgress;
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
  /**
   * Removes the topic's record; with `createdAtMs`, only while the record is that incarnation's
   * (a deletion resumed after the topic was created again leaves the new one alone).
   */
  deleteTopic(topic: TopicName, options?: { readonly createdAtMs?: number }): Promise<void>;
  /** Every topic of the deployment (a full scan: for recovery and maintenance, not for requests). */
  listAllTopics(): Promise<TopicRecord[]>;

  createSubscription(partition: TopicName, record: SubscriptionRecord): Promise<void>;
  getSubscription(partition: TopicName, name: string): Promise<SubscriptionRecord | undefined>;
  listSubscriptions(partition: TopicName): Promise<SubscriptionRecord[]>;
  /** Removes the record; with `cursorId`, only while the record has that cursor (that incarnation). */
  deleteSubscription(
    partition: TopicName,
    name: string,
    options?: { readonly cursorId?: string },
  ): Promise<void>;

  /**
   * The backlog feeder's progress on the subscription with cursor `cursorId`;
   * undefined when none was recorded, or the subscription is gone or was
   * recreated (another cursor). A strongly consistent read.
   */
  getFeedProgress(partition: TopicName, name: string, cursorId: string): Promise<FeedProgress | undefined>;
  /**
   * Records the feeder's progress, as a claim: only while the subscription has
   * cursor `claim.cursorId` and its progress names job `claim.expectedJobId`, or
   * whatever it names when `expectedJobId` is undefined (a feed starting over).
   * One conditional write: of two jobs claiming from one job, one wins.
   * @returns false (nothing written) when the condition does not hold.
   */
  recordFeedProgress(partition: TopicName, name: string, claim: FeedProgressClaim): Promise<boolean>;
}

/**
 * The catalog with this container's cache of topic records and subscription lists in front of it
 * (CachingTopicCatalog, built in the composition root). The TopicCatalog methods read and write
 * the store as they say; these answer from what this container read lately.
 */
export interface CachedTopicCatalog extends TopicCatalog {
  /** The topic's record as this container read it lately (a `getTopic` when it did not, or too long ago). */
  recentTopic(topic: TopicName): Promise<TopicRecord | undefined>;
  /** Forgets this container's copy of the topic's record: the next `recentTopic` reads it. */
  forgetTopic(topic: TopicName): void;
  /**
   * The partition's subscriptions for subscriptions version `version` (Appended.subscriptionsVersion),
   * listed again when the version is new to this container, or the list is old.
   */
  subscriptionsAt(partition: TopicName, version: string): Promise<readonly SubscriptionRecord[]>;
  /** The partition's subscriptions as this container last listed them, whatever their age. */
  knownSubscriptions(partition: TopicName): Promise<readonly SubscriptionRecord[]>;
}
