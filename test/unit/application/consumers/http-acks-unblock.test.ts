import { describe, expect, it } from 'vitest';
import {
  acknowledgeMessages,
  negativeAcknowledge,
} from '../../../../shared/application/consumers/consumer-acks.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { DEFAULT_ENGINE_LIMITS } from '../../../../shared/application/engine/engine-context.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

/**
 * An HTTP consumer at its cap (maxUnackedPerConsumer) is unblocked by its acknowledgements and
 * negative acknowledgements at once in the container that served them: they lower that
 * container's count of its unacknowledged entries, as a Lambda consumer's do. Before, the count
 * taken by the receive that filled the cap was used until it aged (2 s near the cap, else 10 s).
 */
const topic = TopicName.parse('persistent://public/default/http-acks-cap');
const admin: Principal = { role: 'admin', superuser: true };

async function world() {
  const { ports } = inMemoryPorts({
    clock: new ManualClock(1_700_000_000_000),
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
    engineLimits: { ...DEFAULT_ENGINE_LIMITS, maxUnackedPerConsumer: 3 },
    sleep: async () => {},
  });
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic,
    subscription: 'work',
    subscriptionType: 'Shared',
    initialPosition: 'Earliest',
    policy: { negativeAckRedeliveryDelayMs: 60_000 },
  });
  await publishMessages(ports, admin, topic, {
    messages: Array.from({ length: 10 }, (_, i) => ({ payload: `p${i}`, properties: {} })),
    router: new RoundRobinRouter(0),
  });
  const receive = () => receiveMessages(ports, admin, consumerId, { maxMessages: 10, waitMs: 0 });
  return { ports, consumerId, receive };
}

describe('HTTP acknowledgements and the per-consumer cap', () => {
  it('acks by handle unblock a consumer at its cap at once', async () => {
    const { ports, consumerId, receive } = await world();
    const first = await receive();
    const blocked = await receive();

    await acknowledgeMessages(ports, admin, consumerId, {
      messageIds: [],
      deliveryHandles: first.map((m) => m.deliveryHandle),
    });
    const next = await receive();

    expect(first.map((m) => m.payload)).toEqual(['p0', 'p1', 'p2']);
    expect(blocked).toEqual([]);
    expect(next.map((m) => m.payload)).toEqual(['p3', 'p4', 'p5']);
  });

  it('nacks unblock a consumer at its cap at once', async () => {
    const { ports, consumerId, receive } = await world();
    const first = await receive();

    await negativeAcknowledge(ports, admin, consumerId, {
      messageIds: [],
      deliveryHandles: first.slice(0, 2).map((m) => m.deliveryHandle),
    });
    const next = await receive();

    expect(next.map((m) => m.payload)).toEqual(['p3', 'p4']);
  });

  it('acks by message id unblock it too', async () => {
    const { ports, consumerId, receive } = await world();
    const first = await receive();

    await acknowledgeMessages(ports, admin, consumerId, {
      messageIds: [first[0]?.messageId as string],
      deliveryHandles: [],
    });
    const next = await receive();

    expect(next.map((m) => m.payload)).toEqual(['p3']);
  });
});
