import { DEFAULT_RETENTION, keepsEverything } from '../../domain/policies.ts';
import { TopicName } from '../../domain/topic-name.ts';
import type { IndexedSubscription } from '../../ports/activity-index.ts';
import type { ConsumerRecord } from '../../ports/consumer-registry.ts';
import type { SubscriptionRecord } from '../../ports/topic-catalog.ts';
import type { UseCasePorts } from '../use-case-ports.ts';

/**
 * A process marks one subscription active at most this often. Maintenance removes an entry only
 * when it was marked at least this long ago, so activity this process did not write (its mark was
 * recent) cannot fall between a removal and the next mark.
 */
export const MARK_EVERY_MS = 60_000;

/**
 * Marks the subscription active in the activity index (maintenance looks at it on its next run),
 * at most once per MARK_EVERY_MS per process: one write per subscription and minute, whatever
 * the traffic.
 */
export async function markActive(ports: UseCasePorts, subscription: IndexedSubscription): Promise<void> {
  const now = ports.clock.nowMs();
  const marks = ports.hints.activityMarks;
  if ((marks.get(subscription.cursorId) ?? Number.NEGATIVE_INFINITY) > now - MARK_EVERY_MS) return;
  await ports.activity.mark(subscription, now);
  marks.set(subscription.cursorId, now);
}

/** {@link markActive} for a subscription record of a partition. */
export function markSubscriptionActive(
  ports: UseCasePorts,
  partition: TopicName,
  subscription: Pick<SubscriptionRecord, 'name' | 'cursorId' | 'type'>,
): Promise<void> {
  return markActive(ports, {
    cursorId: subscription.cursorId,
    partition: partition.toString(),
    subscription: subscription.name,
    type: subscription.type,
  });
}

/** {@link markActive} for every partition a consumer reads. */
export async function markConsumerActive(ports: UseCasePorts, consumer: ConsumerRecord): Promise<void> {
  for (const partition of consumer.partitions) {
    await markActive(ports, {
      cursorId: partition.cursorId,
      partition: partition.topic,
      subscription: consumer.subscription,
      type: consumer.subscriptionType,
    });
  }
}

/**
 * Subscriptions a publish marks one by one at most; a partition with more is marked itself (one
 * write), and maintenance enters its subscriptions (expandPartitionMarks), so a publish's writes
 * do not grow with the subscriptions.
 */
export const INLINE_MARKS = 10;

/**
 * {@link markActive} for every subscription of a partition (as this process knows them), up to
 * INLINE_MARKS of them. A partition with more is marked itself, and so is one with none when the
 * deployment's default retention deletes what was consumed (Pulsar's 0/0: with no subscription,
 * everything): maintenance trims what activity marks, not every topic. A partition mark is
 * written at most once per MARK_EVERY_MS per partition and process.
 */
export async function markPartitionActive(ports: UseCasePorts, partition: TopicName): Promise<void> {
  const subscriptions = await ports.catalog.knownSubscriptions(partition);
  if (subscriptions.length > 0 && subscriptions.length <= INLINE_MARKS) {
    for (const subscription of subscriptions) await markSubscriptionActive(ports, partition, subscription);
    return;
  }
  if (subscriptions.length === 0 && keepsEverything(ports.settings.defaultRetention ?? DEFAULT_RETENTION))
    return;
  const now = ports.clock.nowMs();
  // Cursor ids are base64url: a key with ':' never meets one.
  const key = `partition:${partition.toString()}`;
  const marks = ports.hints.activityMarks;
  if ((marks.get(key) ?? Number.NEGATIVE_INFINITY) > now - MARK_EVERY_MS) return;
  await ports.activity.markPartition(partition.toString(), now);
  marks.set(key, now);
}

/**
 * Maintenance's step on partition marks (before it lists the index): a marked partition with
 * subscriptions has each entered in the index (marked now, so a minute passes before any is
 * settled, covering the publishes its marking process left unmarked), then its mark goes; one
 * with none is left to retention (enforcePolicies) under a default that deletes, else goes.
 * Cost: one Query per partition-mark shard, and per marked partition its subscription list and a
 * write per subscription.
 */
export async function expandPartitionMarks(
  ports: UseCasePorts,
  options: {
    readonly before: () => boolean;
    readonly onFailure: (partition: string, error: unknown) => void;
  },
): Promise<void> {
  const trims = !keepsEverything(ports.settings.defaultRetention ?? DEFAULT_RETENTION);
  for (const mark of await ports.activity.listPartitions()) {
    if (!options.before()) return;
    try {
      const subscriptions = await ports.catalog.listSubscriptions(TopicName.parse(mark.partition));
      if (subscriptions.length === 0 && trims) continue;
      const now = ports.clock.nowMs();
      for (const subscription of subscriptions) {
        await ports.activity.mark(
          {
            cursorId: subscription.cursorId,
            partition: mark.partition,
            subscription: subscription.name,
            type: subscription.type,
          },
          now,
        );
      }
      await ports.activity.removePartition(mark.partition, mark.markedAtMs);
    } catch (error) {
      options.onFailure(mark.partition, error);
    }
  }
}
