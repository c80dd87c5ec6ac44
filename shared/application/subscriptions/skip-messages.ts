import { MethodNotAllowedError, ValidationError } from '../../domain/errors.ts';
import type { Position } from '../../domain/position.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import { markSubscriptionActive } from '../maintenance/activity.ts';
import { requireAction } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import {
  foldCursor,
  loadCursor,
  requireSubscription,
  resolvePosition,
  resolveTopic,
} from '../topics/topic-lookup.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { withCursorLease } from './cursor-lease.ts';

/**
 * Skip the first `count` messages of the subscription's backlog. As Pulsar's
 * `internalSkipMessages`, a partitioned topic's own name answers 405 (skip one
 * of its partitions by the partition's name): "the first N" has no order across
 * partitions, and skipping N on each would skip N times the partitions.
 * Under the cursor's lease (concurrent skips must not pick the same entries):
 * 1. load the cursor, 2. acknowledge the first `count` backlog entries,
 * 3. persist the advanced mark-delete position.
 */
export async function skipMessages(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
  subscriptionName: string,
  count: number,
): Promise<void> {
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new ValidationError(`Number of messages to skip must be an integer >= 0, got ${count}`);
  }
  await requireAction(ports.permissions, principal, topic, ['consume']);
  const resolved = await resolveTopic(ports, topic);
  if (resolved.record.partitions > 0 && !topic.isPartition) {
    throw new MethodNotAllowedError(
      `Skip messages on a partitioned topic is not allowed: ${topic} (skip on one of its partitions)`,
    );
  }
  const subscriptions = await Promise.all(
    resolved.partitions.map(async (partition) => ({
      partition,
      subscription: await requireSubscription(ports, partition, subscriptionName),
    })),
  );
  for (const { partition, subscription } of subscriptions) {
    await withCursorLease(ports, subscription.cursorId, async () => {
      const loaded = await loadCursor(ports, partition, subscription);
      const positions = loaded.cursor.firstBacklogPositions(count);
      if (positions.length === 0) return;
      await ports.cursors.acknowledge(subscription.cursorId, positions);
      for (const position of positions) loaded.cursor.acknowledge(position);
      await foldCursor(ports, subscription, loaded);
    });
    await markSubscriptionActive(ports, partition, subscription);
  }
}

/**
 * Skip the named messages (Pulsar's skipByMessageIds): each position is
 * acknowledged on the subscription of the partition that owns it.
 * 1. Resolve every position first (404 if any is not a message of the topic,
 *    nothing written), 2. then acknowledge them, grouped by partition.
 */
export async function skipByMessageIds(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
  subscriptionName: string,
  positions: readonly Position[],
): Promise<void> {
  await requireAction(ports.permissions, principal, topic, ['consume']);
  const resolved = await resolveTopic(ports, topic);
  await Promise.all(
    resolved.partitions.map((partition) => requireSubscription(ports, partition, subscriptionName)),
  );
  const byPartition = new Map<string, { partition: TopicName; positions: Position[] }>();
  for (const position of positions) {
    const { partition } = await resolvePosition(ports, resolved, position);
    const group = byPartition.get(partition.toString()) ?? { partition, positions: [] };
    group.positions.push(position);
    byPartition.set(partition.toString(), group);
  }
  const targets = await Promise.all(
    [...byPartition.values()].map(async (group) => ({
      ...group,
      subscription: await requireSubscription(ports, group.partition, subscriptionName),
    })),
  );
  for (const target of targets) {
    await ports.cursors.acknowledge(target.subscription.cursorId, target.positions);
    await markSubscriptionActive(ports, target.partition, target.subscription);
  }
}
