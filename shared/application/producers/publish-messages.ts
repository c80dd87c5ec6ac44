import { TopicNotFoundError } from '../../domain/catalog-errors.ts';
import { ServiceUnavailableError } from '../../domain/errors.ts';
import { partitionForKey, type RoundRobinRouter } from '../../domain/message-router.ts';
import {
  type ProducerAccessToken,
  ProducerBusyError,
  ProducerFencedError,
} from '../../domain/producer-access.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { NewEntry } from '../../ports/ledger.ts';
import { markPartitionActive } from '../maintenance/activity.ts';
import { requireAction } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import { ensureTopic, requirePersistent } from '../topics/topic-lookup.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { deduplicate } from './deduplication.ts';
import { ringSubscriptions } from './publish-fanout.ts';

export interface PublishResult {
  readonly messageId: string;
  readonly errorCode: number;
  readonly errorMsg?: string;
}

/** What publishMessages publishes, and how it spreads the messages without a key. */
export interface PublishRequest {
  /** The messages, in the order the answer's MessageIds follow. */
  readonly messages: readonly NewEntry[];
  /** Picks the partition of a message without a key, on a partitioned topic (round-robin). */
  readonly router: RoundRobinRouter;
  /**
   * Epoch ms (of `ports.clock`) by which the call must have returned: the HTTP answer's deadline.
   * Nothing is written unless PUBLISH_RESERVE_MS are left before it. Default: none.
   */
  readonly deadlineMs?: number;
  /** The exclusive producer making the publish: refused (ProducerFencedError) once fenced. */
  readonly access?: ProducerAccessToken;
}

/**
 * What a publish's writes may take at most, kept back from its deadline: per partition, at once,
 * the activity mark, the id allocation, the entries' chunk writes and the rings (a few storage
 * calls each), with the SDK's backoffs of two of them throttled through every retry (1.4 s each
 * with the API functions' bounded retries). A publish that starts later writes nothing and answers
 * 503: writing entries whose MessageIds the producer would never learn makes its retry publish
 * them twice.
 */
export const PUBLISH_RESERVE_MS = 4_000;

/**
 * Publish messages to a topic (Pulsar's REST produce).
 * 1. The caller needs `produce` on the topic or its namespace.
 * 2. A topic that does not exist is created non-partitioned, as Pulsar's
 *    default `allowAutoTopicCreation` does.
 * 3. Route each message to a partition (key hash, else round-robin) and append
 *    each partition's messages as one batch: one counter update (which also
 *    answers the subscriptions version) and one chunk write per partition.
 * 4. Ring every subscription's doorbell (waiting receivers wake; delayed messages set a timer
 *    for their deliverAt): up to INLINE_RINGS rings here, else one fan-out job that the
 *    scheduler runs (ringSubscriptions), so the publish's requests stay bounded. No entry is
 *    fanned out: each subscription's dispatcher reads the ledger, so a publish that dies after
 *    writing loses no delivery (a missed ring delays a waiting receiver by one poll).
 * 5. Answer the MessageIds in the order the messages came.
 * Producer access modes: the id allocation of step 3 appends only if the publish's exclusive
 * producer (`access`) still holds the partition, or, without one, while no exclusive producer holds
 * it (ProducerFencedError / ProducerBusyError, 409, nothing written on that partition).
 * Out of time before step 3 (PUBLISH_RESERVE_MS before `deadlineMs`): nothing is written, and
 * ServiceUnavailableError tells the producer to try again.
 */
export async function publishMessages(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
  request: PublishRequest,
): Promise<PublishResult[]> {
  const { messages, router } = request;
  requirePersistent(topic);
  await requireAction(ports.permissions, principal, topic, ['produce']);
  const record = await ensureTopic(ports, topic);
  if (request.deadlineMs !== undefined && ports.clock.nowMs() > request.deadlineMs - PUBLISH_RESERVE_MS) {
    throw new ServiceUnavailableError(
      `Publishing to ${topic.toString()} started too late to answer in time; nothing was written: try again`,
    );
  }
  const byPartition = new Map<number, { partition: TopicName; indexes: number[]; entries: NewEntry[] }>();
  messages.forEach((message, index) => {
    const partitionIndex = topic.isPartition
      ? topic.partitionIndex
      : record.partitions === 0
        ? -1
        : message.key !== undefined
          ? partitionForKey(message.key, record.partitions)
          : message.sequenceId !== undefined && message.producerName !== undefined
            ? // A retry must reach the partition that deduplicates it: routed by its identity.
              partitionForKey(`${message.producerName}\u0000${message.sequenceId}`, record.partitions)
            : router.choose(record.partitions);
    const group = byPartition.get(partitionIndex) ?? {
      partition: partitionIndex === -1 || topic.isPartition ? topic : topic.partition(partitionIndex),
      indexes: [],
      entries: [],
    };
    group.indexes.push(index);
    group.entries.push(message);
    byPartition.set(partitionIndex, group);
  });
  const results: PublishResult[] = new Array(messages.length);
  const publishTimeMs = ports.clock.nowMs();
  await Promise.all(
    [...byPartition.values()].map(async (group) => {
      // The subscriptions go into the activity index before the entries are written: a publish
      // that dies after writing, before it rang, leaves them where maintenance looks (it rings a
      // backlog it finds; an event-driven consumer runs only when rung). At most one write per
      // subscription and minute in this process.
      await markPartitionActive(ports, group.partition);
      // Producer deduplication: duplicates are answered and left out (producers/deduplication.ts).
      const dedup = await deduplicate(ports, group.partition, group.entries);
      for (const [i, outcome] of dedup.duplicates) {
        results[group.indexes[i] as number] =
          'messageId' in outcome
            ? { messageId: outcome.messageId, errorCode: 0 }
            : { messageId: '', ...outcome };
      }
      if (dedup.fresh.length === 0) return;
      const entries = dedup.fresh.map((i) => group.entries[i] as NewEntry);
      const { positions, subscriptionsVersion } = await ports.ledger
        .append(group.partition, entries, publishTimeMs, {
          ...(principal ? { producerName: principal.role } : {}),
          ...(request.access ? { access: request.access } : {}),
        })
        .catch(async (error: unknown) => {
          // A refusal by the allocation's condition wrote nothing after it: the claim is settled
          // now. Any other failure may have written more later: its claim waits out its timeout.
          if (refusedByAllocation(error)) await dedup.abandon();
          throw error;
        });
      await dedup.finish(positions);
      const dues = entries.map((entry) => Math.max(publishTimeMs, entry.deliverAtMs ?? 0));
      await ringSubscriptions(ports, group.partition, subscriptionsVersion, dues);
      positions.forEach((position, i) => {
        results[group.indexes[dedup.fresh[i] as number] as number] = {
          messageId: `${position.toString()}:${group.partition.partitionIndex}`,
          errorCode: 0,
        };
      });
    }),
  );
  return results;
}

/** An append refused by its id allocation's condition: nothing was written after the refusal. */
function refusedByAllocation(error: unknown): boolean {
  return (
    error instanceof ProducerFencedError ||
    error instanceof ProducerBusyError ||
    error instanceof TopicNotFoundError
  );
}
