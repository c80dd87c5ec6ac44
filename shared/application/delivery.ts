import { type DeliveryToken, type InlineMessage, MAX_INLINE_BYTES } from '../domain/delivery-token.ts';
import { Position } from '../domain/position.ts';
import { isCumulativeAckType, type SubscriptionType } from '../domain/subscription-type.ts';
import type { TopicName } from '../domain/topic-name.ts';
import type { SubscriptionQueue } from '../ports/delivery-queue.ts';
import type { StoredEntry } from '../ports/ledger.ts';
import type { SubscriptionRecord } from '../ports/topic-catalog.ts';
import type { UseCasePorts } from './ports.ts';
import { loadCursor } from './topic-lookup.ts';

/** The queue of a subscription on one partition: FIFO for the types that keep order. */
export function queueOf(subscription: Pick<SubscriptionRecord, 'cursorId' | 'type'>): SubscriptionQueue {
  return { cursorId: subscription.cursorId, ordered: isCumulativeAckType(subscription.type) };
}

/** A token for `entry`, carrying the message itself when it is small enough. */
export function tokenFor(partition: TopicName, entry: StoredEntry, redeliveryCount: number): DeliveryToken {
  const size =
    Buffer.byteLength(entry.payload) +
    Buffer.byteLength(entry.key ?? '') +
    Object.entries(entry.properties).reduce(
      (sum, [k, v]) => sum + Buffer.byteLength(k) + Buffer.byteLength(v),
      0,
    );
  const token = {
    topic: partition.toString(),
    ledgerId: entry.position.ledgerId.toString(),
    entryId: entry.position.entryId.toString(),
    redeliveryCount,
  };
  if (size > MAX_INLINE_BYTES) return token;
  const message: { -readonly [K in keyof InlineMessage]: InlineMessage[K] } = {
    payload: entry.payload,
    publishTimeMs: entry.publishTimeMs,
  };
  if (entry.key !== undefined) message.key = entry.key;
  if (Object.keys(entry.properties).length > 0) message.properties = entry.properties;
  if (entry.eventTimeMs !== undefined) message.eventTimeMs = entry.eventTimeMs;
  if (entry.deliverAtMs !== undefined) message.deliverAtMs = entry.deliverAtMs;
  return { ...token, message };
}

export function positionOf(token: Pick<DeliveryToken, 'ledgerId' | 'entryId'>): Position {
  return Position.of(token.ledgerId, token.entryId);
}

/**
 * Puts tokens on a subscription queue, each visible at its due time: at once,
 * after an SQS delay (up to the queue's maximum), or through the scheduler for
 * longer waits and for ordered queues, which take no per-message delay.
 * Delays round up to whole seconds: never early.
 */
export async function enqueue(
  ports: UseCasePorts,
  queue: SubscriptionQueue,
  items: readonly { token: DeliveryToken; dueAtMs: number }[],
): Promise<void> {
  const now = ports.clock.nowMs();
  const direct: { token: DeliveryToken; delaySeconds: number }[] = [];
  const later: { token: DeliveryToken; dueAtMs: number }[] = [];
  for (const item of items) {
    const delaySeconds = Math.max(0, Math.ceil((item.dueAtMs - now) / 1000));
    if (delaySeconds === 0 || (!queue.ordered && delaySeconds <= ports.deliveryQueue.maxDelaySeconds)) {
      direct.push({ token: item.token, delaySeconds });
    } else {
      later.push(item);
    }
  }
  await ports.deliveryQueue.send(queue, direct);
  await ports.scheduler.schedule(
    later.map((item) => ({ kind: 'deliver', queue, token: item.token, dueAtMs: item.dueAtMs })),
  );
}

/**
 * When a message is first due on a subscription: delayed delivery (deliverAt)
 * applies to Shared and Key_Shared only; Exclusive and Failover deliver at once,
 * as in Pulsar.
 */
export function firstDueAtMs(type: SubscriptionType, entry: { deliverAtMs?: number }, nowMs: number): number {
  if (isCumulativeAckType(type) || entry.deliverAtMs === undefined) return nowMs;
  return Math.max(nowMs, entry.deliverAtMs);
}

/**
 * Publishing's second half: one token per subscription of the partition. The
 * subscriptions are read after the entries were allocated, so a subscription
 * created at Latest before the allocation is always found.
 */
export async function fanOut(
  ports: UseCasePorts,
  partition: TopicName,
  entries: readonly StoredEntry[],
): Promise<void> {
  if (entries.length === 0) return;
  const subscriptions = await ports.catalog.listSubscriptions(partition);
  const now = ports.clock.nowMs();
  await Promise.all(
    subscriptions.map((subscription) =>
      enqueue(
        ports,
        queueOf(subscription),
        entries.map((entry) => ({
          token: tokenFor(partition, entry, 0),
          dueAtMs: firstDueAtMs(subscription.type, entry, now),
        })),
      ),
    ),
  );
}

/** How many backlog entries one backfill call puts on a queue (bigger backlogs: maintenance). */
export const MAX_BACKFILL = 100_000;

/**
 * Puts a token on the subscription's queue for every unacknowledged entry
 * after its mark-delete position (up to MAX_BACKFILL): a new subscription at
 * Earliest gets the existing backlog, and a queue lost with the embedded
 * stack's in-memory SQS is rebuilt from the cursor. Redelivery counts restart
 * from what the cursor recorded.
 * @returns how many tokens were enqueued.
 */
export async function backfill(
  ports: UseCasePorts,
  partition: TopicName,
  subscription: SubscriptionRecord,
  options: { readonly acknowledgeUnwritten?: boolean } = {},
): Promise<number> {
  const { cursor } = await loadCursor(ports, partition, subscription);
  const positions = cursor.firstBacklogPositions(Math.min(cursor.backlog(), MAX_BACKFILL));
  const now = ports.clock.nowMs();
  let enqueued = 0;
  for (let i = 0; i < positions.length; i += 100) {
    const slice = positions.slice(i, i + 100);
    const states = await ports.cursors.deliveryState(subscription.cursorId, slice);
    const entries = await Promise.all(slice.map((position) => ports.ledger.readEntry(position)));
    const items: { token: DeliveryToken; dueAtMs: number }[] = [];
    const unwritten: Position[] = [];
    entries.forEach((entry, index) => {
      if (!entry) {
        // Allocated but not written: normally its publisher is still writing and sends the token;
        // after a crash (acknowledgeUnwritten) no one will, and it was never a message.
        unwritten.push(slice[index] as Position);
        return;
      }
      items.push({
        token: tokenFor(partition, entry, states[index]?.redeliveryCount ?? 0),
        dueAtMs: firstDueAtMs(subscription.type, entry, now),
      });
    });
    await enqueue(ports, queueOf(subscription), items);
    if (options.acknowledgeUnwritten && unwritten.length > 0) {
      await ports.cursors.acknowledge(subscription.cursorId, unwritten);
    }
    enqueued += items.length;
  }
  return enqueued;
}
