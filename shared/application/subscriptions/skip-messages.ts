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

/** What skipMessages skips: the first `numMessages` of the subscription's backlog. */
export interface SkipMessagesRequest {
  readonly subscriptionName: string;
  /** How many messages to skip (an integer >= 0; 0 skips nothing). */
  readonly numMessages: number;
}

/** What skipByMessageIds skips: the named messages, on one subscription. */
export interface SkipByMessageIdsRequest {
  readonly subscriptionName: string;
  /** The messages, by `ledgerId:entryId`; each must be a written message of the topic. */
  readonly positions: readonly Position[];
}

/**
 * Skip the first `numMessages` messages of the subscription's backlog. As Pulsar's
 * `internalSkipMessages`, a partitioned topic's own name answers 405 (skip one
 * of its partitions by the partition's name): "the first N" has no order across
 * partitions, and skipping N on each would skip N times the partitions.
 * Under the cursor's lease (concurrent skips must not pick the same entries):
 * 1. load the cursor, 2. acknowledge the first `numMessages` backlog entries,
 * 3. persist the advanced mark-delete position.
 */
export async function skipMessages(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
  request: SkipMessagesRequest,
): Promise<void> {
  const { subscriptionName, numMessages } = request;
  if (!Number.isSafeInteger(numMessages) || numMessages < 0) {
    throw new ValidationError(`Number of messages to skip must be an integer >= 0, got ${numMessages}`);
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
      const positions = loaded.cursor.firstBacklogPositions(numMessages);
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
  request: SkipByMessageIdsRequest,
): Promise<void> {
  const { subscriptionName, positions } = request;
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
