import { describe, expect, it } from 'vitest';
import { CATALOG_TTL_MS, CachingTopicCatalog } from '../../../shared/adapters/caching-topic-catalog.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { SubscriptionRecord, TopicRecord } from '../../../shared/ports/topic-catalog.ts';
import { InMemoryTopicCatalog } from '../../support/in-memory-topic-catalog.ts';
import { ManualClock } from '../../support/manual-clock.ts';

const topic = TopicName.parse('persistent://public/default/cached');

/** The in-memory catalog, counting its topic reads and subscription lists. */
class CountingCatalog extends InMemoryTopicCatalog {
  gets = 0;
  lists = 0;

  override async getTopic(name: TopicName): Promise<TopicRecord | undefined> {
    this.gets++;
    return super.getTopic(name);
  }

  override async listSubscriptions(partition: TopicName): Promise<SubscriptionRecord[]> {
    this.lists++;
    return super.listSubscriptions(partition);
  }
}

const subscription = (name: string): SubscriptionRecord => ({
  name,
  type: 'Shared',
  cursorId: `cursor-${name}`,
  createdAtMs: 1,
});

function cached() {
  const store = new CountingCatalog();
  const clock = new ManualClock(1_000);
  return { store, clock, catalog: new CachingTopicCatalog(store, clock) };
}

describe('CachingTopicCatalog', () => {
  it('reads a topic record once per CATALOG_TTL_MS, and again at once after forgetTopic', async () => {
    const { store, clock, catalog } = cached();
    await store.createTopic({ topic, partitions: 0, createdAtMs: 1 });

    await catalog.recentTopic(topic);
    await catalog.recentTopic(topic);
    expect(store.gets).toBe(1);
    clock.advance(CATALOG_TTL_MS);
    await catalog.recentTopic(topic);
    expect(store.gets).toBe(2);
    // Deleted through another container: seen here once the copy is forgotten.
    await store.deleteTopic(topic);
    expect(await catalog.recentTopic(topic)).toBeDefined();
    catalog.forgetTopic(topic);
    expect(await catalog.recentTopic(topic)).toBeUndefined();
    expect(store.gets).toBe(3);
  });

  it('does not remember a missing topic, and forgets the topic it deletes', async () => {
    const { store, catalog } = cached();
    await catalog.recentTopic(topic);
    await catalog.createTopic({ topic, partitions: 0, createdAtMs: 1 });
    expect(await catalog.recentTopic(topic)).toBeDefined();

    await catalog.deleteTopic(topic);

    expect(await catalog.recentTopic(topic)).toBeUndefined();
    expect(store.gets).toBe(3);
  });

  it('lists subscriptions again for a new subscriptions version, or once the list is CATALOG_TTL_MS old', async () => {
    const { store, clock, catalog } = cached();
    await store.createSubscription(topic, subscription('a'));

    expect((await catalog.subscriptionsAt(topic, 'v1')).map((s) => s.name)).toEqual(['a']);
    await catalog.subscriptionsAt(topic, 'v1');
    expect(store.lists).toBe(1);
    await store.createSubscription(topic, subscription('b'));
    expect((await catalog.subscriptionsAt(topic, 'v2')).map((s) => s.name)).toEqual(['a', 'b']);
    expect(store.lists).toBe(2);
    clock.advance(CATALOG_TTL_MS);
    await catalog.subscriptionsAt(topic, 'v2');
    expect(store.lists).toBe(3);
  });

  it('answers the known subscriptions whatever their age, listing only when it never did', async () => {
    const { store, clock, catalog } = cached();
    await store.createSubscription(topic, subscription('a'));

    await catalog.knownSubscriptions(topic);
    clock.advance(10 * CATALOG_TTL_MS);
    await store.createSubscription(topic, subscription('b'));
    const known = await catalog.knownSubscriptions(topic);

    expect(known.map((s) => s.name)).toEqual(['a']);
    expect(store.lists).toBe(1);
    // A list made for no version is not one for a publish's version.
    await catalog.subscriptionsAt(topic, 'v1');
    expect(store.lists).toBe(2);
  });
});
