import { PreconditionFailedError } from '../../domain/errors.ts';
import { TopicName } from '../../domain/topic-name.ts';
import { startSubscriptionDeletion } from '../maintenance/deletion-jobs.ts';
import type { Principal } from '../tenancy/principal.ts';
import { requireSubscription, resolveTopic } from '../topics/topic-lookup.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { closeConsumer, requireConsumer } from './consumer-session.ts';
import { connectedConsumers } from './live-consumers.ts';

/**
 * Pulsar's `consumer.unsubscribe()`: the consumer's subscription is deleted, on every partition the
 * consumer reads, and the consumer is closed. The `consume` permission suffices (Pulsar's
 * UNSUBSCRIBE topic operation), unlike the admin delete, which takes a superuser.
 * 1. The consumer must be the caller's (404/403 as every consumer call).
 * 2. As Pulsar, 412 while another consumer is connected to the subscription; nothing changes.
 * 3. Close the consumer (what it held is released, as a close does), then start the subscription's
 *    deletion (the records go at once, deletion jobs purge cursors and queues).
 * A consumer that subscribes between steps 2 and 3 is disconnected by the deletion (its next call
 * answers 404), as an admin delete with `force` does.
 */
export async function unsubscribeConsumer(
  ports: UseCasePorts,
  principal: Principal | undefined,
  consumerId: string,
): Promise<void> {
  const consumer = await requireConsumer(ports, principal, consumerId, { fresh: true });
  const topic = TopicName.parse(consumer.topic);
  const others = (await connectedConsumers(ports, topic, consumer.subscription)).filter(
    (id) => id !== consumerId,
  );
  if (others.length > 0) {
    throw new PreconditionFailedError(
      `Subscription ${consumer.subscription} has ${others.length} other connected consumer(s): unsubscribe needs it to have this one only`,
    );
  }
  const resolved = await resolveTopic(ports, topic);
  const subscriptions = await Promise.all(
    resolved.partitions.map(async (partition) => ({
      partition,
      subscription: await requireSubscription(ports, partition, consumer.subscription),
    })),
  );
  await closeConsumer(ports, principal, consumerId);
  await startSubscriptionDeletion(ports, subscriptions);
}
