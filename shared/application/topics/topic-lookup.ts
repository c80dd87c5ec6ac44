import {
  NonPersistentTopicError,
  SubscriptionNotFoundError,
  TopicAlreadyExistsError,
  TopicNotFoundError,
} from '../../domain/catalog-errors.ts';
import { Cursor } from '../../domain/cursor.ts';
import { PreconditionFailedError } from '../../domain/errors.ts';
import { PositionNotFoundError } from '../../domain/ledger-layout.ts';
import type { Position } from '../../domain/position.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { ManagedLedgerState } from '../../ports/ledger.ts';
import type { SubscriptionRecord, TopicRecord } from '../../ports/topic-catalog.ts';
import type { UseCasePorts } from '../use-case-ports.ts';

/** A topic as addressed by a call: the base record and the partitions the call applies to. */
export interface ResolvedTopic {
  readonly topic: TopicName;
  readonly record: TopicRecord;
  /** `[topic]` for a non-partitioned topic or one addressed partition; every partition otherwise. */
  readonly partitions: readonly TopicName[];
}

export function requirePersistent(topic: TopicName): void {
  if (!topic.isPersistent) {
    throw new NonPersistentTopicError(
      `${topic.toString()} is a non-persistent topic: it keeps no messages, cursors or subscriptions to administer`,
    );
  }
}

/**
 * Resolves a topic name, a partitioned topic or one of its partitions (`name-partition-i`).
 * @throws TopicNotFoundError when the topic (or that partition) does not exist.
 */
export async function resolveTopic(ports: UseCasePorts, topic: TopicName): Promise<ResolvedTopic> {
  requirePersistent(topic);
  const base = topic.partitionedTopicName;
  const record = await ports.catalog.recentTopic(base);
  if (!record) throw new TopicNotFoundError(topic.toString());
  if (topic.isPartition) {
    if (topic.partitionIndex >= record.partitions) throw new TopicNotFoundError(topic.toString());
    return { topic, record, partitions: [topic] };
  }
  const partitions =
    record.partitions === 0
      ? [base]
      : Array.from({ length: record.partitions }, (_, index) => base.partition(index));
  return { topic, record, partitions };
}

/**
 * The partition of `resolved` that holds `position`.
 * @throws PositionNotFoundError when the position is not a written message of this topic.
 */
export async function resolvePosition(
  ports: UseCasePorts,
  resolved: ResolvedTopic,
  position: Position,
): Promise<{ partition: TopicName }> {
  const notFound = () =>
    new PositionNotFoundError(
      `Message ${position.toString()} not found in topic ${resolved.topic.toString()}`,
    );
  let partition: TopicName | undefined;
  if (resolved.partitions.length === 1) {
    partition = resolved.partitions[0];
  } else {
    const owner = await ports.ledger.knownOwnerOf(position.ledgerId);
    partition = resolved.partitions.find((candidate) => owner?.equals(candidate));
  }
  if (!partition || (await ports.ledger.firstUnwritten(partition, [position]))) throw notFound();
  return { partition };
}

export async function requireSubscription(
  ports: UseCasePorts,
  partition: TopicName,
  name: string,
): Promise<SubscriptionRecord> {
  const subscription = await ports.catalog.getSubscription(partition, name);
  if (!subscription) throw new SubscriptionNotFoundError(partition.toString(), name);
  return subscription;
}

/**
 * The subscription's cursor over the partition's current ledgers. The cursor
 * is read before the layout: the layout only grows, so every stored ack names
 * an entry the layout knows.
 */
export async function loadCursor(
  ports: UseCasePorts,
  partition: TopicName,
  subscription: SubscriptionRecord,
): Promise<LoadedCursor> {
  const stored = await ports.cursors.load(subscription.cursorId);
  const state = await ports.ledger.state(partition);
  if (!stored || !state) throw new SubscriptionNotFoundError(partition.toString(), subscription.name);
  const cursor = new Cursor({
    layout: state.ledgers,
    markDeletePosition: stored.markDeletePosition,
    acknowledged: stored.acknowledged,
  });
  return { cursor, state, storedMarkDelete: stored.markDeletePosition };
}

export interface LoadedCursor {
  readonly cursor: Cursor;
  readonly state: ManagedLedgerState;
  /** The mark-delete position as stored, before advancement over acked ranges. */
  readonly storedMarkDelete: Position;
}

/**
 * Persists what the cursor's mark-delete advancement derived from its acks
 * (mark-delete moves, covered ack pages become tombstones). Safe to call any time: it only
 * moves forward.
 */
export async function foldCursor(
  ports: UseCasePorts,
  subscription: SubscriptionRecord,
  loaded: LoadedCursor,
): Promise<void> {
  if (loaded.cursor.markDeletePosition.compareTo(loaded.storedMarkDelete) > 0) {
    await ports.cursors.markDelete(subscription.cursorId, loaded.cursor.markDeletePosition);
  }
}

/**
 * The topic of a publish or a subscribe, created non-partitioned when missing
 * (Pulsar's default allowAutoTopicCreation). A partition (`name-partition-i`)
 * is never created this way: it must belong to an existing partitioned topic.
 */
export async function ensureTopic(ports: UseCasePorts, topic: TopicName): Promise<TopicRecord> {
  const base = topic.partitionedTopicName;
  const existing = await ports.catalog.recentTopic(base);
  if (existing) {
    if (topic.isPartition && topic.partitionIndex >= existing.partitions) {
      throw new TopicNotFoundError(topic.toString());
    }
    return existing;
  }
  if (topic.isPartition) throw new TopicNotFoundError(topic.toString());
  await requireCreatableByPartitionKeyword(ports, topic);
  await ports.ledger.initialize(base);
  const record: TopicRecord = { topic: base, partitions: 0, createdAtMs: ports.clock.nowMs() };
  try {
    await ports.catalog.createTopic(record);
    return record;
  } catch (error) {
    if (!(error instanceof TopicAlreadyExistsError)) throw error;
    return (await ports.catalog.getTopic(base)) as TopicRecord;
  }
}

/**
 * Pulsar's rule for a non-partitioned topic whose name holds `-partition-` followed by a number
 * (see {@link TopicName.partitionKeywordIndex}): it is created only while the topic before the
 * keyword is partitioned with more partitions than that number, so that it cannot take the name of
 * a partition that topic has or may have. The admin create and the auto-creation of a publish or a
 * subscribe apply it alike. Not for partition names (`x-partition-N`), which callers handle.
 * @throws PreconditionFailedError (412, as Pulsar) when the rule refuses the name.
 */
export async function requireCreatableByPartitionKeyword(
  ports: UseCasePorts,
  topic: TopicName,
): Promise<void> {
  const claim = topic.partitionKeywordIndex;
  if (!claim) return;
  const partitioned = claim.partitionedTopic
    ? await ports.catalog.recentTopic(claim.partitionedTopic)
    : undefined;
  const baseName = claim.partitionedTopic?.toString() ?? 'with an empty name';
  if (!partitioned || partitioned.partitions === 0) {
    throw new PreconditionFailedError(
      `Can't create topic ${topic.toString()} with "-partition-" followed by numeric value if there isn't a partitioned topic ${baseName} created`,
    );
  }
  if (claim.index >= BigInt(partitioned.partitions)) {
    throw new PreconditionFailedError(
      `Can't create topic ${topic.toString()} with "-partition-" followed by a number that is not smaller than the number of partitions (${partitioned.partitions}) of partitioned topic ${baseName}`,
    );
  }
}
