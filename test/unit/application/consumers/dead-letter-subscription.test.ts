import { describe, expect, it } from 'vitest';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { createSubscription } from '../../../../shared/application/subscriptions/manage-subscriptions.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import { MAX_SUBSCRIPTION_NAME_CHARS } from '../../../../shared/domain/name-limits.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

// Issue 22, criterion 6: under the default retention (Pulsar's 0/0) a dead-letter topic nobody
// subscribed to would keep nothing, so ackline subscribes to the dead-letter topic by default: the
// policy's initialSubscriptionName (Pulsar's), else {subscription}-DLQ-sub.

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://public/default/orders');
const defaultDeadLetterTopic = TopicName.parse('persistent://public/default/orders-sub-DLQ');

function world() {
  const { ports } = inMemoryPorts({
    clock: new ManualClock(1_700_000_000_000),
    scheduler: new InMemoryScheduler(),
    consumers: new InMemoryConsumerRegistry(),
  });
  const subscribe = (principal: Principal, deadLetterPolicy: Record<string, unknown>) =>
    subscribeConsumer(ports, principal, {
      topic,
      subscription: 'sub',
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      policy: { deadLetterPolicy: { maxRedeliverCount: 1, ...deadLetterPolicy } },
    });
  const subscriptionsOf = async (name: TopicName) =>
    (await ports.catalog.listSubscriptions(name)).map((s) => [s.name, s.type]);
  return { ports, subscribe, subscriptionsOf };
}

describe('the subscription that keeps dead letters', () => {
  it('no initialSubscriptionName: a Shared subscription {subscription}-DLQ-sub on the dead-letter topic', async () => {
    const w = world();
    await w.subscribe(admin, {});
    expect(await w.subscriptionsOf(defaultDeadLetterTopic)).toEqual([['sub-DLQ-sub', 'Shared']]);
  });

  it('a subscription name whose default would be too long: 400 before any write, naming initialSubscriptionName', async () => {
    const w = world();
    const subscription = 'x'.repeat(MAX_SUBSCRIPTION_NAME_CHARS - 3);
    await expect(
      subscribeConsumer(w.ports, admin, {
        topic,
        subscription,
        subscriptionType: 'Shared',
        initialPosition: 'Earliest',
        policy: { deadLetterPolicy: { maxRedeliverCount: 1 } },
      }),
    ).rejects.toThrow(/initialSubscriptionName/);
    expect(await w.ports.catalog.getTopic(topic)).toBeUndefined();
  });

  it('initialSubscriptionName: that one and no other (Pulsar)', async () => {
    const w = world();
    const deadLetterTopic = TopicName.parse('persistent://public/default/named-dlq');
    await w.subscribe(admin, {
      deadLetterTopic: deadLetterTopic.toString(),
      initialSubscriptionName: 'reader',
    });
    expect(await w.subscriptionsOf(deadLetterTopic)).toEqual([['reader', 'Shared']]);
  });

  it('one of that name already there, of another type, is kept as it is', async () => {
    const w = world();
    await createTopic(w.ports, admin, defaultDeadLetterTopic, 0);
    await createSubscription(w.ports, admin, defaultDeadLetterTopic, {
      name: 'sub-DLQ-sub',
      type: 'Exclusive',
      initialPosition: 'Earliest',
    });
    await w.subscribe(admin, {});
    expect(await w.subscriptionsOf(defaultDeadLetterTopic)).toEqual([['sub-DLQ-sub', 'Exclusive']]);
  });

  it('a role that may produce but not consume on the dead-letter topic subscribes; no default subscription is made', async () => {
    const w = world();
    const role: Principal = { role: 'app', superuser: false };
    await w.ports.permissions.grant('public/default', role.role, ['consume']);
    const deadLetterTopic = TopicName.parse('persistent://public/other/dlq');
    await w.ports.permissions.grant('public/other', role.role, ['produce']);
    await w.subscribe(role, { deadLetterTopic: deadLetterTopic.toString() });
    expect(await w.ports.catalog.getTopic(deadLetterTopic)).toBeUndefined();
  });
});
