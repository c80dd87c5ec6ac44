// Issue 24, criterion 2: who holds what, over in-memory ports and a manual clock.
import { describe, expect, it } from 'vitest';
import { acknowledgeMessages } from '../../../../shared/application/consumers/consumer-acks.ts';
import { subscriptionKey } from '../../../../shared/application/consumers/consumer-session.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import { listPending } from '../../../../shared/application/subscriptions/pending-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const T0 = 1_700_000_000_000;

async function subscribe(ports: UseCasePorts, topic: TopicName, policy: Record<string, number>) {
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic,
    subscription: 'sub',
    subscriptionType: 'Shared',
    initialPosition: 'Earliest',
    policy,
  });
  return consumerId;
}

describe('pending: who holds what', () => {
  it('lists held entries with consumer, delivered-at, count and when each comes back; filters by consumer; pages', async () => {
    const clock = new ManualClock(T0);
    const { ports } = inMemoryPorts({
      clock,
      consumers: new InMemoryConsumerRegistry(),
      scheduler: new InMemoryScheduler(),
    });
    const topic = TopicName.parse('persistent://public/default/held');
    const timed = await subscribe(ports, topic, { ackTimeoutMs: 30_000 });
    const leased = await subscribe(ports, topic, {});
    const ids = (
      await publishMessages(ports, admin, topic, {
        messages: Array.from({ length: 6 }, (_, i) => ({ payload: `m${i}`, properties: {} })),
        router: new RoundRobinRouter(0),
      })
    ).map((r) => r.messageId);
    const first = await receiveMessages(ports, admin, timed, { maxMessages: 3 });
    clock.advance(1_000);
    const second = await receiveMessages(ports, admin, leased, { maxMessages: 3 });
    await acknowledgeMessages(ports, admin, leased, {
      messageIds: [],
      deliveryHandles: [second[2]?.deliveryHandle as string],
    });

    const all = await listPending(ports, { principal: admin, topic, subscription: 'sub', limit: 100 });

    const leases = await ports.consumers.leases(subscriptionKey(topic.toString(), 'sub'));
    const leaseOf = (id: string) => leases.find((l) => l.consumerId === id)?.untilMs;
    expect(all.messages).toEqual([
      ...[0, 1, 2].map((i) => ({
        messageId: ids[i],
        consumer: timed,
        deliveredAt: T0,
        redeliveryCount: 0,
        comesBackAt: T0 + 30_000,
        comesBackBecause: 'ackTimeout',
      })),
      ...[3, 4].map((i) => ({
        messageId: ids[i],
        consumer: leased,
        deliveredAt: T0 + 1_000,
        redeliveryCount: 0,
        comesBackAt: leaseOf(leased),
        comesBackBecause: 'lease',
      })),
    ]);
    expect(leaseOf(leased)).toBeGreaterThan(T0);
    expect(all.nextPageToken).toBeUndefined();
    const onlyLeased = await listPending(ports, {
      principal: admin,
      topic,
      subscription: 'sub',
      consumerId: leased,
      limit: 100,
    });
    expect(onlyLeased.messages.map((m) => m.messageId)).toEqual([ids[3], ids[4]]);
    const page1 = await listPending(ports, { principal: admin, topic, subscription: 'sub', limit: 2 });
    const page2 = await listPending(ports, {
      principal: admin,
      topic,
      subscription: 'sub',
      limit: 2,
      pageToken: page1.nextPageToken as string,
    });
    expect([...page1.messages, ...page2.messages].map((m) => m.messageId)).toEqual(ids.slice(0, 4));
    expect(first).toHaveLength(3);
  });
});
