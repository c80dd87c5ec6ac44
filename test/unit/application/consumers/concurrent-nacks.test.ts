import { describe, expect, it } from 'vitest';
import { negativeAcknowledge } from '../../../../shared/application/consumers/consumer-acks.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const orders = TopicName.parse('persistent://public/default/orders');

describe('concurrent nacks', () => {
  for (const subscriptionType of ['Shared', 'Exclusive'] as const)
  it(`${subscriptionType}: every nacked message comes back`, async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const { ports } = inMemoryPorts({ clock, consumers: new InMemoryConsumerRegistry(), scheduler: new InMemoryScheduler() });
    const { consumerId } = await subscribeConsumer(ports, admin, {
      topic: orders, subscription: 'sub', subscriptionType, initialPosition: 'Earliest', consumerName: 'c',
      policy: { negativeAckRedeliveryDelayMs: 1000 },
    });
    await publishMessages(ports, admin, orders, {
      messages: Array.from({ length: 8 }, (_, i) => ({ payload: `m-${i}`, properties: {} })),
      router: new RoundRobinRouter(0),
    });
    const held = [];
    while (held.length < 8) held.push(...(await receiveMessages(ports, admin, consumerId, { maxMessages: 1 })));
    await Promise.all(held.map((m) => negativeAcknowledge(ports, admin, consumerId, { messageIds: [], deliveryHandles: [m.deliveryHandle] })));
    clock.advance(1000);
    const back = [];
    for (let i = 0; i < 10 && back.length < 8; i++) back.push(...(await receiveMessages(ports, admin, consumerId, { maxMessages: 10 })));
    expect(back.map((m) => m.messageId).sort()).toEqual(held.map((m) => m.messageId).sort());
  });
});
