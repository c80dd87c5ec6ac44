import { describe, expect, it } from 'vitest';
import { subscriptionKey } from '../../../../shared/application/consumers/consumer-session.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import {
  ensureSubscriptions,
  PARTITION_CONCURRENCY,
  type SubscribeRequest,
  subscribeConsumer,
} from '../../../../shared/application/consumers/subscribe-consumer.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import {
  SubscriptionAlreadyExistsError,
  TopicNotFoundError,
} from '../../../../shared/domain/catalog-errors.ts';
import { ConflictError, ForbiddenError } from '../../../../shared/domain/errors.ts';
import { ConsumerFencedError } from '../../../../shared/domain/ownership.ts';
import type { SubscriptionType } from '../../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import type { SubscriptionRecord } from '../../../../shared/ports/topic-catalog.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { InMemoryDeliveryQueue } from '../../../support/in-memory-delivery-queue.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';
import { InMemoryLedger } from '../../../support/in-memory-ledger.ts';
import { InMemoryPermissionStore } from '../../../support/in-memory-permission-store.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { InMemoryTopicCatalog } from '../../../support/in-memory-topic-catalog.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

// Subscribing a consumer: the partitions it reads, its record and lease, the subscription made
// or joined, a creation race, and Key_Shared's join (mutation testing, issue 21 criterion 5).

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://public/default/subscribe');
const NOW = 1_700_000_000_000;

/** A catalog where another subscriber creates the subscription first, once, when `raceNext` is set. */
class RacedCatalog extends InMemoryTopicCatalog {
  raceNext = false;
  override async createSubscription(partition: TopicName, record: SubscriptionRecord): Promise<void> {
    if (this.raceNext) {
      this.raceNext = false;
      await super.createSubscription(partition, { ...record, cursorId: 'theirs' });
      throw new SubscriptionAlreadyExistsError(partition.toString(), record.name);
    }
    return super.createSubscription(partition, record);
  }
}

async function world(partitions?: number, permissions?: InMemoryPermissionStore, ledger?: InMemoryLedger) {
  const clock = new ManualClock(NOW);
  const registry = new InMemoryConsumerRegistry();
  const catalog = new RacedCatalog();
  const deliveryQueue = new InMemoryDeliveryQueue();
  const dispatch = new InMemoryDispatchStore();
  const { ports } = inMemoryPorts({
    clock,
    consumers: registry,
    scheduler: new InMemoryScheduler(),
    catalog,
    deliveryQueue,
    dispatch,
    ...(permissions ? { permissions } : {}),
    ...(ledger ? { ledger } : {}),
  });
  if (partitions) await createTopic(ports, admin, topic, partitions);
  const subscribe = async (extra: Partial<SubscribeRequest> & { type?: SubscriptionType } = {}) => {
    const { type, ...rest } = extra;
    const { consumerId } = await subscribeConsumer(ports, admin, {
      topic,
      subscription: 'sub',
      subscriptionType: type ?? 'Shared',
      initialPosition: 'Earliest',
      policy: {},
      ...rest,
    });
    return registry.records.get(consumerId) ?? expect.unreachable();
  };
  const leaseOf = async (consumerId: string) =>
    (await registry.leases(subscriptionKey(topic.toString(), 'sub'))).find((l) => l.consumerId === consumerId)
      ?.untilMs;
  return { ports, clock, registry, catalog, deliveryQueue, dispatch, subscribe, leaseOf };
}

describe('subscribeConsumer: the consumer it records', () => {
  it('on a non-partitioned topic: one partition, index -1; named after its id; leased for 60 s', async () => {
    const w = await world();
    const consumer = await w.subscribe();
    expect(consumer.partitions.map((p) => [p.topic, p.partitionIndex])).toEqual([[topic.toString(), -1]]);
    expect(consumer).toMatchObject({
      consumerName: consumer.consumerId,
      role: 'admin',
      superuser: true,
      topic: topic.toString(),
      subscription: 'sub',
      subscriptionType: 'Shared',
      createdAtMs: NOW,
      kind: 'http',
      leaseMs: 60_000,
    });
    expect(consumer.joinedAfter).toBeUndefined();
    expect(await w.leaseOf(consumer.consumerId)).toBe(NOW + 60_000);
  });

  it('on a partitioned topic: every partition; on one partition’s name: that one only', async () => {
    const w = await world(3);
    const all = await w.subscribe({ consumerName: 'reader', leaseMs: 10_000 });
    expect(all.partitions.map((p) => [p.topic, p.partitionIndex])).toEqual(
      [0, 1, 2].map((i) => [topic.partition(i).toString(), i]),
    );
    expect(all).toMatchObject({ consumerName: 'reader', leaseMs: 10_000 });
    expect(await w.leaseOf(all.consumerId)).toBe(NOW + 10_000);
    const one = await w.subscribe({ topic: topic.partition(2) });
    expect(one.partitions.map((p) => [p.topic, p.partitionIndex, p.cursorId])).toEqual([
      [topic.partition(2).toString(), 2, all.partitions[2]?.cursorId],
    ]);
  });

  it('a Lambda consumer: durable, never leased out, with its function’s timeout', async () => {
    const w = await world();
    const consumer = await w.subscribe({ lambda: { functionTimeoutMs: 7_000 } });
    expect(consumer).toMatchObject({ kind: 'lambda', functionTimeoutMs: 7_000 });
    expect(consumer.leaseMs).toBeUndefined();
    expect(await w.leaseOf(consumer.consumerId)).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe('subscribeConsumer: the subscription', () => {
  it('joins an existing subscription of its type, and refuses another type (409), naming both', async () => {
    const w = await world();
    const first = await w.subscribe();
    const second = await w.subscribe();
    expect(second.partitions[0]?.cursorId).toBe(first.partitions[0]?.cursorId);
    await expect(w.subscribe({ type: 'Failover' })).rejects.toThrow(
      new ConflictError(
        `Subscription sub on ${topic.toString()} is Shared; a Failover consumer cannot join it`,
      ),
    );
  });

  it('Exclusive: the first becomes the owner, a second is refused while it lives; Failover: a standby', async () => {
    const w = await world();
    const owner = await w.subscribe({ type: 'Exclusive', subscription: 'ex' });
    const head = await w.dispatch.readHead(owner.partitions[0]?.cursorId as string);
    expect(head?.head.owner?.consumerId).toBe(owner.consumerId);
    await expect(w.subscribe({ type: 'Exclusive', subscription: 'ex' })).rejects.toThrow(ConsumerFencedError);
    const active = await w.subscribe({ type: 'Failover', subscription: 'fo' });
    const standby = await w.subscribe({ type: 'Failover', subscription: 'fo' });
    const foHead = await w.dispatch.readHead(standby.partitions[0]?.cursorId as string);
    expect(foHead?.head.owner?.consumerId).toBe(active.consumerId);
  });

  it('uses the subscription another subscriber created meanwhile, dropping its own cursor and queue', async () => {
    const w = await world();
    w.catalog.raceNext = true;
    const consumer = await w.subscribe();
    expect(consumer.partitions[0]?.cursorId).toBe('theirs');
    // Ours (ids id-1, id-2, ...) are gone: no cursor, no queue.
    expect([...w.deliveryQueue.rings.keys()]).toEqual([]);
    for (let id = 1; id <= 5; id++) expect(w.dispatch.hasCursor(`id-${id}`)).toBe(false);
  });

  it('Key_Shared: a join mark per partition, the joining mark cleared, and a ring to wake waiting receives', async () => {
    const w = await world(2);
    const consumer = await w.subscribe({ type: 'Key_Shared' });
    expect(Object.keys(consumer.joinedAfter ?? {}).sort()).toEqual(
      consumer.partitions.map((p) => p.cursorId).sort(),
    );
    for (const partition of consumer.partitions) {
      expect((await w.dispatch.readHead(partition.cursorId))?.head.joining).toBeUndefined();
      expect(w.deliveryQueue.rings.get(partition.cursorId)?.length).toBeGreaterThan(0);
    }
  });
});

describe('ensureSubscriptions', () => {
  it(`creates ${PARTITION_CONCURRENCY} at a time, in order, and stops starting new ones after a failure`, async () => {
    const w = await world(PARTITION_CONCURRENCY + 4);
    const partitions = Array.from({ length: PARTITION_CONCURRENCY + 4 }, (_, i) => topic.partition(i));
    const made = await ensureSubscriptions(w.ports, partitions, {
      name: 'many',
      type: 'Shared',
      initialPosition: 'Earliest',
    });
    expect(made.map((s) => s.name)).toEqual(partitions.map(() => 'many'));
    expect(new Set(made.map((s) => s.cursorId)).size).toBe(partitions.length);
    // A failure on the first partition: the others under way finish, no new one starts.
    const failure = new Error('throttled');
    w.catalog.failNext('createSubscription', failure);
    await expect(
      ensureSubscriptions(w.ports, partitions, { name: 'few', type: 'Shared', initialPosition: 'Earliest' }),
    ).rejects.toBe(failure);
    const created = await Promise.all(partitions.map((p) => w.catalog.getSubscription(p, 'few')));
    expect(created.filter((s) => s !== undefined)).toHaveLength(PARTITION_CONCURRENCY - 1);
  });
});

describe('subscribeConsumer: the dead-letter topic’s permissions and subscription', () => {
  const app: Principal = { role: 'app', superuser: false };
  const deadLetterTopic = TopicName.parse('persistent://public/other/dlq');

  /** `app` may consume on the topic, and do `actions` on the dead-letter topic's namespace. */
  async function granted(actions: ('produce' | 'consume')[], permissions?: InMemoryPermissionStore) {
    const w = await world(undefined, permissions);
    await w.ports.permissions.grant('public/default', 'app', ['consume']);
    await w.ports.permissions.grant('public/other', 'app', actions);
    const subscribe = (deadLetterPolicy: Record<string, unknown>) =>
      subscribeConsumer(w.ports, app, {
        topic,
        subscription: 'sub',
        subscriptionType: 'Shared',
        initialPosition: 'Earliest',
        policy: {
          deadLetterPolicy: {
            maxRedeliverCount: 1,
            deadLetterTopic: deadLetterTopic.toString(),
            ...deadLetterPolicy,
          },
        },
      });
    const subscriptions = async () =>
      (await w.ports.catalog.listSubscriptions(deadLetterTopic)).map((s) => [s.name, s.type]);
    return { w, subscribe, subscriptions };
  }

  it('initialSubscriptionName takes consume on the dead-letter topic (403 without it)', async () => {
    const without = await granted(['produce']);
    await expect(without.subscribe({ initialSubscriptionName: 'reader' })).rejects.toThrow(
      new ForbiddenError(`Role app is not allowed to consume on ${deadLetterTopic.toString()}`),
    );
    const withIt = await granted(['produce', 'consume']);
    await withIt.subscribe({ initialSubscriptionName: 'reader' });
    expect(await withIt.subscriptions()).toEqual([['reader', 'Shared']]);
  });

  it('a role that may consume on the dead-letter topic gets the default subscription, from its earliest', async () => {
    const g = await granted(['produce', 'consume']);
    // A dead letter already there (an earlier consumer's): the new subscription keeps it.
    await createTopic(g.w.ports, admin, deadLetterTopic, 0);
    await g.w.ports.ledger.append(deadLetterTopic, [{ payload: 'dead', properties: {} }], NOW);
    await g.subscribe({});
    expect(await g.subscriptions()).toEqual([['sub-DLQ-sub', 'Shared']]);
    const reader = await subscribeConsumer(g.w.ports, admin, {
      topic: deadLetterTopic,
      subscription: 'sub-DLQ-sub',
      subscriptionType: 'Shared',
      initialPosition: 'Latest',
      policy: {},
    });
    const received = await receiveMessages(g.w.ports, admin, reader.consumerId, { maxMessages: 5 });
    expect(received.map((m) => m.payload)).toEqual(['dead']);
  });

  it('a failure to read the permissions fails the subscribe (only a refusal means: no default subscription)', async () => {
    class FailingPermissions extends InMemoryPermissionStore {
      otherReads = 0;
      override async actionsOf(role: string, resources: readonly string[]) {
        if (resources.includes('public/other') && ++this.otherReads === 2) throw new Error('throttled');
        return super.actionsOf(role, resources);
      }
    }
    const g = await granted(['produce', 'consume'], new FailingPermissions());
    await expect(g.subscribe({})).rejects.toThrow('throttled');
  });
});

describe('subscribeConsumer: a topic deleted while this process trusted its record', () => {
  it('takes back the subscription it made (record, cursor, queue), and rethrows', async () => {
    const ledger = new InMemoryLedger(1_000);
    const w = await world(undefined, undefined, ledger);
    await w.subscribe({ subscription: 'first' });
    ledger.failNext('announceSubscriptions', new TopicNotFoundError(topic.toString()));
    await expect(w.subscribe()).rejects.toThrow(TopicNotFoundError);
    expect(await w.catalog.getSubscription(topic, 'sub')).toBeUndefined();
    const kept = [...w.deliveryQueue.rings.keys()];
    expect(kept).toHaveLength(1);
    // Another failure there leaves what was made: the retry finds the subscription.
    ledger.failNext('announceSubscriptions', new Error('timeout'));
    await expect(w.subscribe()).rejects.toThrow('timeout');
    expect(await w.catalog.getSubscription(topic, 'sub')).toBeDefined();
  });
});
