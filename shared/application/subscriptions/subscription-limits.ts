import { ConflictError, PreconditionFailedError } from '../../domain/errors.ts';
import { limitReached } from '../../domain/policies.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import { subscriptionKey } from '../consumers/consumer-session.ts';
import { policiesInForce } from '../tenancy/manage-policies.ts';
import type { UseCasePorts } from '../use-case-ports.ts';

/**
 * Refuses one more subscription on a partition that has maxSubscriptionsPerTopic of them (the
 * topic's, else its namespace's, else 1,000; 0: no limit), as Pulsar: 412 "Exceed the maximum
 * number of subscriptions of the topic". Cost: two policy reads and one Query of the partition's
 * subscriptions, on creation only.
 *
 * Counted, not reserved: creations racing on one partition all see the same count, so a topic may
 * exceed its limit by at most the number of creations racing (Pulsar's broker check races alike).
 * A conditional write would need a counter item on the partition, written in a transaction with
 * each subscription (twice the write cost) and taken down by every path that deletes one (the
 * deletion jobs, the rollbacks): a drift would refuse subscriptions for good.
 */
export async function requireSubscriptionRoom(ports: UseCasePorts, partition: TopicName): Promise<void> {
  const { maxSubscriptionsPerTopic: limit } = await policiesInForce(ports, partition);
  if (limit === 0) return;
  const subscriptions = await ports.catalog.listSubscriptions(partition);
  if (limitReached(limit, subscriptions.length)) {
    throw new PreconditionFailedError(
      `Exceed the maximum number of subscriptions of the topic: ${partition.toString()} (maxSubscriptionsPerTopic ${limit})`,
    );
  }
}

/**
 * Refuses one more consumer on a subscription that has maxConsumersPerSubscription connected (the
 * topic's, else its namespace's, else 1,000; 0: no limit), as Pulsar's ConsumerBusy: 409
 * "Subscription reached max consumers limit". Connected: a lease that has not lapsed (a consumer
 * gone silent stops counting when its lease lapses). Cost: two policy reads and one Query of the
 * subscription's leases. Counted, not reserved, like requireSubscriptionRoom: subscribes racing
 * may exceed the limit by their number (a counter could not follow leases that lapse by time).
 */
export async function requireConsumerRoom(
  ports: UseCasePorts,
  topic: TopicName,
  subscription: string,
): Promise<void> {
  const { maxConsumersPerSubscription: limit } = await policiesInForce(ports, topic);
  if (limit === 0) return;
  const now = ports.clock.nowMs();
  const leases = await ports.consumers.leases(subscriptionKey(topic.toString(), subscription));
  const connected = leases.filter((lease) => lease.untilMs >= now).length;
  if (limitReached(limit, connected)) {
    throw new ConflictError(
      `Subscription reached max consumers limit: ${connected} consumers on ${subscription} of ${topic.toString()} (maxConsumersPerSubscription ${limit})`,
    );
  }
}
