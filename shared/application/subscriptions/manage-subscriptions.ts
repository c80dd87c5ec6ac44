import { SubscriptionAlreadyExistsError } from '../../domain/catalog-errors.ts';
import { validateSubscriptionName } from '../../domain/subscription-name.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import { requireNoConnectedConsumers } from '../consumers/live-consumers.ts';
import { ensureSubscriptions, type SubscriptionSpec } from '../consumers/subscribe-consumer.ts';
import { startSubscriptionDeletion } from '../maintenance/deletion-jobs.ts';
import { requireAction, requireSuperuser } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import { requireSubscription, resolveTopic } from '../topics/topic-lookup.ts';
import type { UseCasePorts } from '../use-case-ports.ts';

/**
 * Create a subscription on every partition the call addresses.
 * 1. Only superusers manage subscriptions; the topic must exist.
 * 2. Refuse when it exists on any partition (409), before writing anything.
 * 3. Per partition: its queue, its cursor (Earliest: before the first entry;
 *    Latest: at the last written entry), the record, then the backlog it owes
 *    onto its queue (see ensureSubscription).
 */
export async function createSubscription(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
  subscription: SubscriptionSpec,
): Promise<void> {
  const { name } = subscription;
  requireSuperuser(principal, 'creating a subscription');
  validateSubscriptionName(name);
  const resolved = await resolveTopic(ports, topic);
  for (const partition of resolved.partitions) {
    if (await ports.catalog.getSubscription(partition, name)) {
      throw new SubscriptionAlreadyExistsError(topic.toString(), name);
    }
  }
  // Concurrent creations all pass the check above: the one that made the first partition's
  // subscription answers 204, the others (after making sure every partition has it) 409, as Pulsar
  // answers a creation of a subscription that exists; theirs may have asked another position.
  const created = new Set<string>();
  await ensureSubscriptions(ports, resolved.partitions, { ...subscription, created });
  if (!created.has((resolved.partitions[0] as TopicName).toString())) {
    throw new SubscriptionAlreadyExistsError(topic.toString(), name);
  }
}

/** Subscription names of the topic (of its first partition: they are created on all of them). */
export async function listSubscriptions(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
): Promise<string[]> {
  await requireAction(ports.permissions, principal, topic, ['consume', 'produce', 'acknowledge_message']);
  const resolved = await resolveTopic(ports, topic);
  const names = new Set<string>();
  for (const partition of resolved.partitions) {
    for (const subscription of await ports.catalog.listSubscriptions(partition)) names.add(subscription.name);
  }
  return [...names].sort();
}

/** The subscription deleteSubscription deletes, and whether its connected consumers stop it. */
export interface DeleteSubscriptionOptions {
  readonly name: string;
  /** Delete even while consumers are connected, disconnecting them (default false: 412). */
  readonly force?: boolean;
}

/**
 * Delete the subscription on every partition. Returns within a few seconds whatever the backlog
 * (see startSubscriptionDeletion): the records go at once (publishers are told; a subscription
 * created again under the name gets a new cursor), and deletion jobs purge the cursors, queues
 * and consumers page by page. As Pulsar: 412 while consumers are connected, unless `force`
 * (which disconnects them: their next call answers 404).
 */
export async function deleteSubscription(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
  options: DeleteSubscriptionOptions,
): Promise<void> {
  const { name, force = false } = options;
  requireSuperuser(principal, 'deleting a subscription');
  const resolved = await resolveTopic(ports, topic);
  const subscriptions = await Promise.all(
    resolved.partitions.map(async (partition) => ({
      partition,
      subscription: await requireSubscription(ports, partition, name),
    })),
  );
  if (!force) await requireNoConnectedConsumers(ports, topic, [name], 'Subscription');
  await startSubscriptionDeletion(ports, subscriptions);
}
