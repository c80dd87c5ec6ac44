import { BoundedMap } from '../domain/bounded-map.ts';
import type { TopicName } from '../domain/topic-name.ts';
import type { Clock } from '../ports/clock.ts';
import type {
  CachedTopicCatalog,
  FeedProgress,
  FeedProgressClaim,
  SubscriptionRecord,
  TopicCatalog,
  TopicRecord,
} from '../ports/topic-catalog.ts';

/**
 * How long a container trusts a topic record or a partition's subscription list it read: a topic
 * deleted through another container is noticed here within this long. Pulsar clients cache topic
 * metadata in the same way (and for longer: their partitions are read again every 60 s).
 */
export const CATALOG_TTL_MS = 5_000;

interface ListedSubscriptions {
  /** The subscriptions version the list was made for ('' when listed for no publish). */
  readonly version: string;
  readonly records: readonly SubscriptionRecord[];
  readonly untilMs: number;
}

/**
 * This container's topic records and subscription lists, in front of the catalog. At most 10,000
 * of each, the oldest read going first. Every TopicCatalog method reads and writes the store,
 * uncached. In memory; cost: none per hit.
 *
 * Topic records (`recentTopic`):
 * - Caches: each record found (not a missing one: a topic created through another container is
 *   found at once). TTL: CATALOG_TTL_MS (5 s) from the read.
 * - Invalidation: `deleteTopic` through this decorator; `forgetTopic` when a strong read or a
 *   write found the topic gone (a subscribe on a deleted topic).
 * - Why a stale read is safe: a record changes only by deletion (a topic created again is a new
 *   incarnation), and whatever a call makes on a partition that was deleted meanwhile is refused
 *   or taken back by the partition's own state: a publish's append fails once the ledger is
 *   detached, a new subscription reads the topic strongly and is undone when its announcement
 *   finds no ledger.
 *
 * Subscription lists (`subscriptionsAt`, `knownSubscriptions`), one per partition:
 * - Caches: the partition's list, with the subscriptions version it was made for.
 * - TTL: CATALOG_TTL_MS for `subscriptionsAt`; `knownSubscriptions` takes the list whatever its
 *   age, and lists only when there is none.
 * - Invalidation: a new subscriptions version (Appended.subscriptionsVersion, which every creation
 *   and deletion of a subscription raises through Ledger.announceSubscriptions) lists again.
 * - Why a stale read is safe: a subscription announced before a publish's id allocation was
 *   created before it, so a list made for that version holds it; one announced after owes
 *   itself the entry (it feeds its backlog up to its announcement). The TTL bounds the case of a
 *   creator killed between creating and announcing: the subscription is still found within 5 s
 *   (what was published meanwhile is not rung for it; dispatch reads the ledger anyway). For
 *   `knownSubscriptions` (activity marks before a publish writes): a subscription newer than the
 *   list marked itself when it was made; one deleted since costs maintenance one look.
 */
export class CachingTopicCatalog implements CachedTopicCatalog {
  private readonly topics = new BoundedMap<string, { record: TopicRecord; untilMs: number }>();
  private readonly subscriptions = new BoundedMap<string, ListedSubscriptions>();

  constructor(
    private readonly store: TopicCatalog,
    private readonly clock: Clock,
    private readonly ttlMs = CATALOG_TTL_MS,
  ) {}

  async recentTopic(topic: TopicName): Promise<TopicRecord | undefined> {
    const key = topic.toString();
    const now = this.clock.nowMs();
    const known = this.topics.get(key);
    if (known && known.untilMs > now) return known.record;
    // Reads go through this decorator's own methods: a wrapper that counts the port's reads counts them.
    const record = await this.getTopic(topic);
    if (record) this.topics.set(key, { record, untilMs: now + this.ttlMs });
    else this.topics.delete(key);
    return record;
  }

  forgetTopic(topic: TopicName): void {
    this.topics.delete(topic.toString());
  }

  async subscriptionsAt(partition: TopicName, version: string): Promise<readonly SubscriptionRecord[]> {
    const key = partition.toString();
    const now = this.clock.nowMs();
    const known = this.subscriptions.get(key);
    if (known && known.version === version && known.untilMs > now) return known.records;
    const records = await this.listSubscriptions(partition);
    this.subscriptions.set(key, { version, records, untilMs: now + this.ttlMs });
    return records;
  }

  async knownSubscriptions(partition: TopicName): Promise<readonly SubscriptionRecord[]> {
    const key = partition.toString();
    const known = this.subscriptions.get(key);
    if (known) return known.records;
    const records = await this.listSubscriptions(partition);
    // Under no version: the publish's own subscriptionsAt lists again, after its ids are allocated.
    this.subscriptions.set(key, { version: '', records, untilMs: this.clock.nowMs() + this.ttlMs });
    return records;
  }

  createTopic(record: TopicRecord): Promise<void> {
    return this.store.createTopic(record);
  }

  getTopic(topic: TopicName): Promise<TopicRecord | undefined> {
    return this.store.getTopic(topic);
  }

  listTopics(domain: TopicName['domain'], namespaceName: string): Promise<TopicRecord[]> {
    return this.store.listTopics(domain, namespaceName);
  }

  async deleteTopic(topic: TopicName, options?: { readonly createdAtMs?: number }): Promise<void> {
    await this.store.deleteTopic(topic, options);
    this.forgetTopic(topic);
  }

  listAllTopics(): Promise<TopicRecord[]> {
    return this.store.listAllTopics();
  }

  createSubscription(partition: TopicName, record: SubscriptionRecord): Promise<void> {
    return this.store.createSubscription(partition, record);
  }

  getSubscription(partition: TopicName, name: string): Promise<SubscriptionRecord | undefined> {
    return this.store.getSubscription(partition, name);
  }

  listSubscriptions(partition: TopicName): Promise<SubscriptionRecord[]> {
    return this.store.listSubscriptions(partition);
  }

  deleteSubscription(
    partition: TopicName,
    name: string,
    options?: { readonly cursorId?: string },
  ): Promise<void> {
    return this.store.deleteSubscription(partition, name, options);
  }

  getFeedProgress(partition: TopicName, name: string, cursorId: string): Promise<FeedProgress | undefined> {
    return this.store.getFeedProgress(partition, name, cursorId);
  }

  recordFeedProgress(partition: TopicName, name: string, claim: FeedProgressClaim): Promise<boolean> {
    return this.store.recordFeedProgress(partition, name, claim);
  }
}
