import { TopicName } from '../domain/topic-name.ts';
import type { ConsumerPartition, ConsumerRecord } from '../ports/consumer-registry.ts';
import { enqueue, queueOf, readBacklogEntries, tokenFor } from './delivery.ts';
import type { UseCasePorts } from './ports.ts';
import { loadCursor } from './topic-lookup.ts';

/** How many backlog entries one rewind puts back on the queue. */
export const MAX_REWIND = 100_000;

/**
 * Puts every unacknowledged entry of one partition's subscription back on its
 * queue with its redelivery count + 1, then records the new counts, so that
 * every older token (queued or held by a consumer) is dropped when it shows
 * up. Linear in the backlog (at most MAX_REWIND entries per call): per 100
 * entries one cursor read, one redelivery write per ack page, one range read
 * per run of nearby entries and one batch send per 10 tokens.
 */
export async function rewindSubscription(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  partition: ConsumerPartition,
): Promise<void> {
  const topic = TopicName.parse(partition.topic);
  const subscription = await ports.catalog.getSubscription(topic, consumer.subscription);
  if (!subscription) return;
  const { cursor } = await loadCursor(ports, topic, subscription);
  const positions = cursor.firstBacklogPositions(Math.min(cursor.backlog(), MAX_REWIND));
  const queue = queueOf(subscription);
  for (let i = 0; i < positions.length; i += 100) {
    const slice = positions.slice(i, i + 100);
    const states = await ports.cursors.deliveryState(partition.cursorId, slice);
    const next = slice.map((position, index) => ({
      position,
      count: (states[index]?.redeliveryCount ?? 0) + 1,
    }));
    const entries = await readBacklogEntries(ports, slice);
    const now = ports.clock.nowMs();
    const items = entries.flatMap((entry, index) =>
      entry ? [{ token: tokenFor(topic, entry, next[index]?.count ?? 1), dueAtMs: now }] : [],
    );
    // New tokens first, as redeliver does: a failure in between leaves the older tokens valid (a
    // duplicate at worst), never older tokens dropped as superseded with no new one.
    await enqueue(ports, queue, items);
    await ports.cursors.recordRedelivery(partition.cursorId, next);
  }
}
