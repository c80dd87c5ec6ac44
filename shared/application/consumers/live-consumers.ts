import { PreconditionFailedError } from '../../domain/errors.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { subscriptionKey } from './consumer-session.ts';

/**
 * The consumers connected to a subscription now: those whose lease has not lapsed (an HTTP
 * consumer that polled within its lease; a Lambda consumer, whose lease is durable).
 * Cost: one Query of the subscription's memberships.
 */
export async function connectedConsumers(
  ports: UseCasePorts,
  topic: TopicName,
  subscription: string,
): Promise<string[]> {
  const now = ports.clock.nowMs();
  const leases = await ports.consumers.leases(
    subscriptionKey(topic.partitionedTopicName.toString(), subscription),
  );
  return leases.filter((lease) => lease.untilMs >= now).map((lease) => lease.consumerId);
}

/**
 * Pulsar refuses to delete a subscription (or a topic) with connected consumers unless forced:
 * 412 naming how many there are and how to go on.
 */
export async function requireNoConnectedConsumers(
  ports: UseCasePorts,
  topic: TopicName,
  subscriptions: readonly string[],
  what: 'Subscription' | 'Topic',
): Promise<void> {
  for (const subscription of subscriptions) {
    const connected = await connectedConsumers(ports, topic, subscription);
    if (connected.length > 0) {
      throw new PreconditionFailedError(
        `${what} has active connected consumers: ${connected.length} on subscription ${subscription} (close them, or delete with force=true to disconnect them)`,
      );
    }
  }
}
