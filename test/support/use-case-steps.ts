import { acknowledgeMessages } from '../../shared/application/consumers/consumer-acks.ts';
import { receiveMessages } from '../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../shared/application/consumers/subscribe-consumer.ts';
import { publishMessages } from '../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../shared/application/tenancy/principal.ts';
import type { UseCasePorts } from '../../shared/application/use-case-ports.ts';
import { RoundRobinRouter } from '../../shared/domain/message-router.ts';
import type { TopicName } from '../../shared/domain/topic-name.ts';

/** Publishes `payloads` as one call (one stored batch), round-robin from partition 0. */
export async function publishPayloads(
  ports: UseCasePorts,
  principal: Principal,
  topic: TopicName,
  payloads: readonly string[],
): Promise<void> {
  await publishMessages(ports, principal, topic, {
    messages: payloads.map((payload) => ({ payload, properties: {} })),
    router: new RoundRobinRouter(0),
  });
}

/** Receives (short polls) and acknowledges everything there is for the consumer. */
export async function consumeAll(
  ports: UseCasePorts,
  principal: Principal,
  consumerId: string,
): Promise<void> {
  for (;;) {
    const batch = await receiveMessages(ports, principal, consumerId, { maxMessages: 100 });
    if (batch.length === 0) return;
    await acknowledgeMessages(ports, principal, consumerId, {
      messageIds: [],
      deliveryHandles: batch.map((m) => m.deliveryHandle),
    });
  }
}

/** A consumer of a Shared subscription `sub` created at Earliest, default policy; its id. */
export async function sharedEarliestConsumer(
  ports: UseCasePorts,
  principal: Principal,
  topic: TopicName,
): Promise<string> {
  const { consumerId } = await subscribeConsumer(ports, principal, {
    topic,
    subscription: 'sub',
    subscriptionType: 'Shared',
    initialPosition: 'Earliest',
    policy: {},
  });
  return consumerId;
}
