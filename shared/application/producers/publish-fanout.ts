import { TopicName } from '../../domain/topic-name.ts';
import type { FanoutJob } from '../../ports/scheduler.ts';
import type { SubscriptionRecord } from '../../ports/topic-catalog.ts';
import { ringAll } from '../consumers/doorbells.ts';
import { markSubscriptionActive } from '../maintenance/activity.ts';
import type { UseCasePorts } from '../use-case-ports.ts';

/**
 * Rings a publish sends within its request at most, per partition: a partition whose
 * subscriptions times distinct delivery seconds come to more gets one fan-out job instead, so
 * the requests of a publish do not grow with its subscriptions or its delays.
 */
export const INLINE_RINGS = 10;
/** Subscriptions one fan-out job rings; a partition with more is split into shard jobs run side by side. */
export const FANOUT_CHUNK = 100;
/** Rings (SendMessage) one fan-out job keeps in flight. */
const RING_CONCURRENCY = 16;

/**
 * Publishing's second half: every subscription of the partition (listed again only when the
 * subscriptions version the id allocation answered is new to this process) is rung so that a
 * waiting receiver wakes. A subscription announced later finds the entries anyway: dispatch reads
 * the ledger from its read position.
 * - Up to INLINE_RINGS rings (subscriptions times distinct delivery seconds): sent here, now and
 *   at each delayed message's deliverAt (at most a second late, never early), as before.
 * - More: one fan-out job on the scheduler's queue (runFanoutJob) rings every subscription once,
 *   off the request path: one SendMessage for the publish, whatever its subscriptions and delays.
 *   The delayed messages need no ring of their own: the receiver the ring wakes dispatches, reads
 *   them, and sets their timers itself (Dispatcher's `timers`, rung by receiveMessages).
 * Cost: at most INLINE_RINGS SendMessage (and as many activity marks, once a minute per process),
 * or one; plus one subscription Query when the version changed. A failed ring or job is not the
 * publish's failure (the entries are stored): a waiting receiver then wakes at its next poll, and
 * maintenance rings a backlog its partition's activity mark names.
 */
export async function ringSubscriptions(
  ports: UseCasePorts,
  partition: TopicName,
  subscriptionsVersion: string,
  dueAtMs: readonly number[],
): Promise<void> {
  const subscriptions = await ports.catalog.subscriptionsAt(partition, subscriptionsVersion);
  if (subscriptions.length === 0) return;
  const now = ports.clock.nowMs();
  const delays = new Set(dueAtMs.map((due) => Math.max(0, Math.ceil((due - now) / 1000))));
  if (subscriptions.length * delays.size <= INLINE_RINGS) {
    await Promise.all(
      subscriptions.map((subscription) => ringAndMark(ports, partition, subscription, dueAtMs)),
    );
    return;
  }
  const job = {
    kind: 'fanout',
    partition: partition.toString(),
    subscriptionsVersion,
    dueAtMs: now,
  } as const;
  await ports.scheduler.schedule([job]).catch(() => undefined);
}

/**
 * The scheduler's step for a fan-out job (due now): ring every subscription of the partition (a
 * shard job: those of its shard) with no delay, marking each active; a job over more than
 * FANOUT_CHUNK subscriptions schedules one shard job per chunk instead (one SendMessageBatch per
 * ten), which the scheduler runs side by side. A subscription deleted meanwhile is skipped.
 * Cost: one SendMessage per subscription, on the scheduler, not on the publish.
 */
export async function runFanoutJob(ports: UseCasePorts, job: FanoutJob): Promise<void> {
  const partition = TopicName.parse(job.partition);
  const subscriptions = await ports.catalog.subscriptionsAt(partition, job.subscriptionsVersion);
  const now = ports.clock.nowMs();
  const { shard } = job;
  if (!shard && subscriptions.length > FANOUT_CHUNK) {
    const of = Math.ceil(subscriptions.length / FANOUT_CHUNK);
    await ports.scheduler.schedule(
      Array.from({ length: of }, (_, index) => ({ ...job, dueAtMs: now, shard: { index, of } })),
    );
    return;
  }
  const mine = shard
    ? subscriptions.filter((subscription) => shardOf(subscription.cursorId, shard.of) === shard.index)
    : subscriptions;
  await forEachLimited(mine, RING_CONCURRENCY, (subscription) =>
    ringAndMark(ports, partition, subscription, [now]),
  );
}

/** The shard of a cursor id among `of`: FNV-1a of its UTF-16 code units. Pure and stable. */
export function shardOf(cursorId: string, of: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < cursorId.length; i++) {
    hash ^= cursorId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % of;
}

/** A ring at each due time and an activity mark; neither fails the caller (the publish is stored). */
async function ringAndMark(
  ports: UseCasePorts,
  partition: TopicName,
  subscription: Pick<SubscriptionRecord, 'name' | 'cursorId' | 'type'>,
  dueAtMs: readonly number[],
): Promise<void> {
  await Promise.all([
    ringAll(ports, subscription.cursorId, dueAtMs).catch(() => undefined),
    // A lost mark waits for the next activity, as a lost ring does.
    markSubscriptionActive(ports, partition, subscription).catch(() => undefined),
  ]);
}

async function forEachLimited<T>(items: readonly T[], limit: number, each: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await each(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
