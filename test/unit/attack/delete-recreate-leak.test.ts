// Attack on resumable deletes (deletion-jobs.ts): a topic deletion captures the partition's
// subscriptions, then detaches them. A subscribe in another process (Lambda container) that still
// trusts its cached topic record (CachingTopicCatalog, CATALOG_TTL_MS: 5 s) creates a subscription record after
// the capture: nothing deletes it, and a topic created again under the name finds it (its cursor
// and queue are never purged either). Fixed: a new subscription is made only after a strong read
// finds the topic, and one whose ledger was detached meanwhile is taken back.
import { describe, expect, it } from 'vitest';
import { subscribeConsumer } from '../../../shared/application/consumers/subscribe-consumer.ts';
import type { Principal } from '../../../shared/application/tenancy/principal.ts';
import { createTopic, deleteTopic } from '../../../shared/application/topics/manage-topics.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import { twoProcesses } from '../../support/in-memory-processes.ts';

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://public/default/recreated');

const subscribe = (ports: UseCasePorts, subscription: string) =>
  subscribeConsumer(ports, admin, {
    topic,
    subscription,
    subscriptionType: 'Shared',
    initialPosition: 'Earliest',
    policy: {},
  });

describe('a deleted and re-created topic starts empty', () => {
  it('a subscribe racing the deletion leaves no subscription on the re-created topic', async () => {
    const [first, second] = twoProcesses();
    await createTopic(first, admin, topic, 0);
    // The second process knows the topic (its catalog cache holds the record for a few seconds).
    await subscribe(second, 'known');
    await deleteTopic(first, admin, topic, { force: true });

    // Within the cache's life, the second process subscribes again under a new name.
    await subscribe(second, 'late').catch(() => undefined);

    // The topic is created again: it must start with no subscription.
    await createTopic(first, admin, topic, 0);
    expect((await first.catalog.listSubscriptions(topic)).map((s) => s.name)).toEqual([]);
  });
});
