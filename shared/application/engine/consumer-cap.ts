import type { DispatchHead } from '../../domain/dispatch-head.ts';
import { windowSize } from './dispatcher-window.ts';
import type { EngineContext, PartitionCursor } from './engine-context.ts';
import { type PendingSummary, pendingSummary } from './pending-summary.ts';

/**
 * How long a count of each consumer's unacknowledged entries is used before it is taken again:
 * long while the consumer is far from its cap, short near it (so it resumes soon after its acks).
 */
export const UNACKED_COUNT_TTL_MS = 10_000;
export const UNACKED_COUNT_NEAR_CAP_TTL_MS = 2_000;

type UnackedByConsumer = NonNullable<EngineContext['unackedByConsumer']>;

/**
 * Pulsar's maxUnackedMessagesPerConsumer on a Shared or Key_Shared subscription (on Exclusive and
 * Failover one consumer holds every unacknowledged entry, and the window's cap applies, see
 * windowRoom): how many more entries `consumerId` may be handed on this partition. Dispatch to it
 * pauses at 0 (Pulsar's blockedConsumerOnUnackedMsgs) and resumes once its acknowledgements are
 * counted.
 *
 * Every entry a consumer holds lies between mark-delete and the read position, so while that
 * window plus what is wanted stays within the cap nothing is counted (the common case costs
 * nothing; the window's length is known from the head, and from the ledger layout when it spans
 * ledgers). Past it, the consumers' holdings are counted from the pages (pendingSummary: up
 * to 2,000 page reads) and that count is used for UNACKED_COUNT_TTL_MS in this process (2 s near
 * the cap), plus what this process handed out since: a consumer may pass its cap only by what
 * other processes (Lambda containers) hand it in that time.
 * @returns at least `wanted` when no count was needed.
 */
export async function consumerRoom(
  ctx: EngineContext,
  cursor: PartitionCursor,
  ask: { readonly head: DispatchHead; readonly consumerId: string; readonly wanted: number },
): Promise<number> {
  const { head, consumerId, wanted } = ask;
  const cap = ctx.limits.maxUnackedPerConsumer;
  const size = await windowSize(ctx, cursor, head);
  // Whatever it holds lies in the window: with `wanted` more it stays within the cap.
  if (size + wanted <= cap) return cap - size;
  const count = ctx.unackedByConsumer ?? freshCount(ctx);
  let room = cap - ((await count(cursor, UNACKED_COUNT_TTL_MS)).get(consumerId) ?? 0);
  if (room < cap / 10) {
    room = cap - ((await count(cursor, UNACKED_COUNT_NEAR_CAP_TTL_MS)).get(consumerId) ?? 0);
  }
  return room;
}

function freshCount(ctx: EngineContext): UnackedByConsumer {
  return async (cursor) => heldAgainstCap(await pendingSummary(ctx, cursor));
}

/**
 * What counts against each consumer's cap: what it holds, less what is past its ack timeout (due
 * again: Pulsar's client redelivers it, which unblocks the consumer; counting it would keep a sole
 * consumer blocked for ever, with nobody to take its timed-out entries back).
 */
export function heldAgainstCap(summary: PendingSummary): ReadonlyMap<string, number> {
  const counts = new Map(summary.unackedByConsumer);
  for (const [consumerId, overdue] of summary.overdueByConsumer) {
    counts.set(consumerId, (counts.get(consumerId) ?? 0) - overdue);
  }
  return counts;
}
