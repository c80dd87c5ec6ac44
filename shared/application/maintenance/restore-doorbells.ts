import { doorbellOf } from '../consumers/doorbells.ts';
import type { UseCasePorts } from '../use-case-ports.ts';

/**
 * Makes every subscription's doorbell queue exist and rings it once. The embedded stack runs it at
 * start: local SQS keeps queues and messages in memory only. Nothing else needs rebuilding: what
 * was delivered, to whom, and what is due lives in the cursors (DynamoDB), and dispatch reads the
 * ledger. Cost: a scan of the topics, then one queue creation and one ring per subscription.
 * @returns the subscriptions restored (JSON `[partition, subscription]`: unique).
 */
export async function restoreDoorbells(
  ports: UseCasePorts,
  options: {
    /** Only these subscriptions (JSON `[partition, subscription]`: unique); default: all. */
    readonly only?: ReadonlySet<string>;
    /** Hears a subscription that failed; the others carry on (without it, the first failure is thrown). */
    readonly onFailure?: (subscription: string, error: unknown) => void;
  } = {},
): Promise<string[]> {
  const restored: string[] = [];
  for (const record of await ports.catalog.listAllTopics()) {
    const partitions =
      record.partitions === 0
        ? [record.topic]
        : Array.from({ length: record.partitions }, (_, i) => record.topic.partition(i));
    for (const partition of partitions) {
      for (const subscription of await ports.catalog.listSubscriptions(partition)) {
        const name = JSON.stringify([partition.toString(), subscription.name]);
        if (options.only && !options.only.has(name)) continue;
        try {
          await ports.deliveryQueue.create(doorbellOf(subscription.cursorId));
          await ports.deliveryQueue.ring(doorbellOf(subscription.cursorId), 0);
          restored.push(name);
        } catch (error) {
          if (!options.onFailure) throw error;
          options.onFailure(name, error);
        }
      }
    }
  }
  return restored;
}
