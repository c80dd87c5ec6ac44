import {
  SubscriptionAlreadyExistsError,
  TopicAlreadyExistsError,
} from '../../shared/domain/catalog-errors.ts';
import type { TopicName } from '../../shared/domain/topic-name.ts';
import type {
  FeedProgress,
  FeedProgressClaim,
  SubscriptionRecord,
  TopicCatalog,
  TopicRecord,
} from '../../shared/ports/topic-catalog.ts';
import { compareUtf8, InjectedFaults } from './in-memory-faults.ts';

/**
 * TopicCatalog in memory, with the semantics of DynamoDbTopicCatalog:
 * conditional creation, deletes that ignore what is missing, and lists sorted
 * by name in UTF-8 byte order (DynamoDB's sort-key order). Deleting a topic
 * leaves its subscriptions alone. Not persisted; every operation is atomic.
 */
export class InMemoryTopicCatalog implements TopicCatalog {
  private readonly topics = new Map<string, TopicRecord>();
  /** Partition name -> subscription name -> record. */
  private readonly subscriptions = new Map<string, Map<string, SubscriptionRecord>>();
  /** The feeder's progress, kept with the record it belongs to (gone with it). */
  private readonly feeds = new WeakMap<SubscriptionRecord, FeedProgress>();
  private readonly faults = new InjectedFaults<keyof TopicCatalog>();

  /** The next call of `operation` rejects with `error` and changes nothing. */
  failNext(operation: keyof TopicCatalog, error: Error): void {
    this.faults.failNext(operation, error);
  }

  async createTopic(record: TopicRecord): Promise<void> {
    await this.faults.enter('createTopic');
    const key = record.topic.toString();
    if (this.topics.has(key)) throw new TopicAlreadyExistsError(key);
    this.topics.set(key, { ...record });
  }

  async getTopic(topic: TopicName): Promise<TopicRecord | undefined> {
    await this.faults.enter('getTopic');
    const record = this.topics.get(topic.toString());
    return record === undefined ? undefined : { ...record };
  }

  async listTopics(domain: TopicName['domain'], namespaceName: string): Promise<TopicRecord[]> {
    await this.faults.enter('listTopics');
    return [...this.topics.values()]
      .filter(({ topic }) => topic.domain === domain && topic.namespaceName === namespaceName)
      .sort((a, b) => compareUtf8(a.topic.localName, b.topic.localName))
      .map((record) => ({ ...record }));
  }

  async listAllTopics(): Promise<TopicRecord[]> {
    await this.faults.enter('listAllTopics');
    return [...this.topics.values()].map((record) => ({ ...record }));
  }

  async deleteTopic(topic: TopicName, options: { readonly createdAtMs?: number } = {}): Promise<void> {
    await this.faults.enter('deleteTopic');
    const record = this.topics.get(topic.toString());
    if (options.createdAtMs !== undefined && record?.createdAtMs !== options.createdAtMs) return;
    this.topics.delete(topic.toString());
  }

  async createSubscription(partition: TopicName, record: SubscriptionRecord): Promise<void> {
    await this.faults.enter('createSubscription');
    const subscriptions =
      this.subscriptions.get(partition.toString()) ?? new Map<string, SubscriptionRecord>();
    if (subscriptions.has(record.name)) {
      throw new SubscriptionAlreadyExistsError(partition.toString(), record.name);
    }
    subscriptions.set(record.name, { ...record });
    this.subscriptions.set(partition.toString(), subscriptions);
  }

  async getSubscription(partition: TopicName, name: string): Promise<SubscriptionRecord | undefined> {
    await this.faults.enter('getSubscription');
    const record = this.subscriptions.get(partition.toString())?.get(name);
    return record === undefined ? undefined : { ...record };
  }

  async listSubscriptions(partition: TopicName): Promise<SubscriptionRecord[]> {
    await this.faults.enter('listSubscriptions');
    return [...(this.subscriptions.get(partition.toString())?.values() ?? [])]
      .sort((a, b) => compareUtf8(a.name, b.name))
      .map((record) => ({ ...record }));
  }

  async deleteSubscription(
    partition: TopicName,
    name: string,
    options: { readonly cursorId?: string } = {},
  ): Promise<void> {
    await this.faults.enter('deleteSubscription');
    const subscriptions = this.subscriptions.get(partition.toString());
    if (options.cursorId !== undefined && subscriptions?.get(name)?.cursorId !== options.cursorId) return;
    subscriptions?.delete(name);
  }

  async getFeedProgress(
    partition: TopicName,
    name: string,
    cursorId: string,
  ): Promise<FeedProgress | undefined> {
    await this.faults.enter('getFeedProgress');
    const record = this.subscriptions.get(partition.toString())?.get(name);
    const progress = record?.cursorId === cursorId ? this.feeds.get(record) : undefined;
    return progress === undefined ? undefined : { ...progress };
  }

  async recordFeedProgress(partition: TopicName, name: string, claim: FeedProgressClaim): Promise<boolean> {
    await this.faults.enter('recordFeedProgress');
    const { cursorId, expectedJobId, progress } = claim;
    const record = this.subscriptions.get(partition.toString())?.get(name);
    if (record?.cursorId !== cursorId) return false;
    if (expectedJobId !== undefined && this.feeds.get(record)?.jobId !== expectedJobId) return false;
    this.feeds.set(record, { ...progress });
    return true;
  }
}
