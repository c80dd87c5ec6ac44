import { queueOf } from './delivery.ts';
import { feedBacklog } from './feed-backlog.ts';
import type { UseCasePorts } from './ports.ts';

/**
 * Recreates every subscription's queue from its cursor and the ledger: each
 * unacknowledged entry after the mark-delete position gets a token again, the
 * first INLINE_BACKFILL per subscription now and the rest through the
 * scheduler's feed jobs (feedBacklog). The embedded stack runs it at start
 * (local SQS keeps messages in memory only), before its gateway opens and its
 * scheduler polls; on AWS it is the operator's recovery. Redelivery counts
 * continue from what the cursors recorded. Cost: a scan of the topics, then at
 * most INLINE_BACKFILL entries per subscription.
 * @returns the number of tokens enqueued now per subscription (`partition|subscription`).
 */
export async function rebuildSubscriptionQueues(
  ports: UseCasePorts,
  options: {
    readonly acknowledgeUnwritten?: boolean;
    /** Rebuild only these subscriptions (`partition|subscription`); default: all. */
    readonly only?: ReadonlySet<string>;
    /**
     * Hears a subscription whose rebuild failed, and the rebuild carries on with
     * the next one (without it, the first failure is thrown).
     */
    readonly onFailure?: (subscription: string, error: unknown) => void;
  } = {},
): Promise<Record<string, number>> {
  const { only, onFailure, ...feedOptions } = options;
  const enqueued: Record<string, number> = {};
  for (const record of await ports.catalog.listAllTopics()) {
    const partitions =
      record.partitions === 0
        ? [record.topic]
        : Array.from({ length: record.partitions }, (_, i) => record.topic.partition(i));
    for (const partition of partitions) {
      for (const subscription of await ports.catalog.listSubscriptions(partition)) {
        const name = `${partition.toString()}|${subscription.name}`;
        if (only && !only.has(name)) continue;
        try {
          await ports.deliveryQueue.create(queueOf(subscription));
          enqueued[name] = await feedBacklog(ports, partition, subscription, feedOptions);
        } catch (error) {
          if (!onFailure) throw error;
          onFailure(name, error);
        }
      }
    }
  }
  return enqueued;
}
