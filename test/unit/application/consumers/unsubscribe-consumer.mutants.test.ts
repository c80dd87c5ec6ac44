import { describe, expect, it } from 'vitest';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { unsubscribeConsumer } from '../../../../shared/application/consumers/unsubscribe-consumer.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import { ForbiddenError, NotFoundError, PreconditionFailedError } from '../../../../shared/domain/errors.ts';
import type { SubscriptionType } from '../../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

// Pulsar's consumer.unsubscribe() through the consumer use case (mutation testing, issue 21
// criterion 5).

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://public/default/unsubscribe');

/** A partitioned topic and its subscription `sub`, over the in-memory ports. */
async function world(partitions = 2, type: SubscriptionType = 'Shared') {
  const clock = new ManualClock(1_700_000_000_000);
  const registry = new InMemoryConsumerRegistry();
  const { ports } = inMemoryPorts({ clock, consumers: registry, scheduler: new InMemoryScheduler() });
  await createTopic(ports, admin, topic, partitions);
  const subscribe = async (on: UseCasePorts = ports) =>
    (
      await subscribeConsumer(on, admin, {
        topic,
        subscription: 'sub',
        subscriptionType: type,
        initialPosition: 'Earliest',
        policy: {},
      })
    ).consumerId;
  const subscriptionOn = (i: number) => ports.catalog.getSubscription(topic.partition(i), 'sub');
  return { ports, registry, subscribe, subscriptionOn };
}

describe('unsubscribeConsumer', () => {
  it('deletes the subscription on every partition and closes the consumer', async () => {
    const w = await world(2);
    const consumerId = await w.subscribe();
    expect(await w.subscriptionOn(0)).toBeDefined();
    await unsubscribeConsumer(w.ports, admin, consumerId);
    expect(await w.subscriptionOn(0)).toBeUndefined();
    expect(await w.subscriptionOn(1)).toBeUndefined();
    expect(w.registry.records.has(consumerId)).toBe(false);
    await expect(receiveMessages(w.ports, admin, consumerId, { maxMessages: 1 })).rejects.toThrow(
      NotFoundError,
    );
  });

  it('refuses while another consumer is connected (412), changing nothing', async () => {
    const w = await world(1);
    const consumerId = await w.subscribe();
    await w.subscribe();
    await expect(unsubscribeConsumer(w.ports, admin, consumerId)).rejects.toThrow(
      new PreconditionFailedError(
        'Subscription sub has 1 other connected consumer(s): unsubscribe needs it to have this one only',
      ),
    );
    expect(await w.subscriptionOn(0)).toBeDefined();
    expect(w.registry.records.has(consumerId)).toBe(true);
  });

  it('refuses a consumer another container closed, though this one remembers it (404)', async () => {
    const w = await world(1, 'Exclusive');
    const consumerId = await w.subscribe();
    // This container has read the record (and keeps it a while); the other one closes it.
    await receiveMessages(w.ports, admin, consumerId, { maxMessages: 1 });
    await w.registry.delete(consumerId);
    await expect(unsubscribeConsumer(w.ports, admin, consumerId)).rejects.toThrow(NotFoundError);
    expect(await w.subscriptionOn(0)).toBeDefined();
  });

  it('refuses another role’s consumer (403)', async () => {
    const w = await world(1);
    const consumerId = await w.subscribe();
    await expect(
      unsubscribeConsumer(w.ports, { role: 'someone', superuser: false }, consumerId),
    ).rejects.toThrow(ForbiddenError);
    expect(await w.subscriptionOn(0)).toBeDefined();
  });
});
