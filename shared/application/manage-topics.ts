import { TopicAlreadyExistsError, TopicNotFoundError } from '../domain/catalog-errors.ts';
import { PreconditionFailedError, ValidationError } from '../domain/errors.ts';
import type { TopicName } from '../domain/topic-name.ts';
import { requireSuperuser } from './authorization.ts';
import { startTopicDeletion } from './deletion-jobs.ts';
import type { UseCasePorts } from './ports.ts';
import type { Principal } from './principal.ts';
import { requirePersistent, resolveTopic } from './topic-lookup.ts';

/** Pulsar's default cap on partitions per topic (maxNumPartitionsPerPartitionedTopic is unlimited; 0 = none). */
export const MAX_PARTITIONS = 1_000;

/**
 * Create a topic (non-partitioned, or with `partitions` > 0).
 * 1. Only superusers manage topics.
 * 2. Refuse names Pulsar refuses: a partition name, or any name with `-partition-`.
 * 3. Initialize the ledger of every partition, then record the topic (so a
 *    recorded topic always has ledgers).
 */
export async function createTopic(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
  partitions: number,
): Promise<void> {
  requireSuperuser(principal, 'creating a topic');
  requirePersistent(topic);
  if (topic.isPartition || topic.localName.includes('-partition-')) {
    throw new PreconditionFailedError(
      `Cannot create topic ${topic.toString()}: a topic name may not contain the keyword '-partition-'`,
    );
  }
  if (!Number.isSafeInteger(partitions) || partitions < 0 || partitions > MAX_PARTITIONS) {
    throw new ValidationError(
      `Number of partitions must be an integer from 1 to ${MAX_PARTITIONS}, got ${partitions}`,
    );
  }
  // Every partition's name must fit the name limits too (TopicName.partition checks them).
  if (partitions > 0) topic.partition(partitions - 1);
  if (await ports.catalog.getTopic(topic)) throw new TopicAlreadyExistsError(topic.toString());
  const names = partitions === 0 ? [topic] : Array.from({ length: partitions }, (_, i) => topic.partition(i));
  await Promise.all(names.map((name) => ports.ledger.initialize(name)));
  await ports.catalog.createTopic({ topic, partitions, createdAtMs: ports.clock.nowMs() });
}

/** Pulsar's partitioned-topic metadata: `{ partitions: 0 }` for a non-partitioned topic. */
export async function getPartitionedMetadata(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
): Promise<{ partitions: number }> {
  requireSuperuser(principal, 'reading topic metadata');
  const resolved = await resolveTopic(ports, topic.partitionedTopicName);
  return { partitions: resolved.record.partitions };
}

/** Full names of a namespace's topics, a partitioned topic by its partitions' names (as Pulsar lists them). */
export async function listTopics(
  ports: UseCasePorts,
  principal: Principal | undefined,
  domain: TopicName['domain'],
  namespaceName: string,
): Promise<string[]> {
  requireSuperuser(principal, 'listing topics');
  const records = await ports.catalog.listTopics(domain, namespaceName);
  const names: string[] = [];
  for (const record of records) {
    if (record.partitions === 0) names.push(record.topic.toString());
    for (let i = 0; i < record.partitions; i++) names.push(record.topic.partition(i).toString());
  }
  return names.sort();
}

/**
 * Delete a topic with its partitions, subscriptions, cursors and messages. Returns within a few
 * seconds whatever the backlog (see startTopicDeletion): the names are detached at once (calls
 * see 404, and a topic created again under the name starts empty, on new ledgers), and deletion
 * jobs purge the rest page by page; maintenance finishes a job whose call or step crashed.
 */
export async function deleteTopic(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
): Promise<void> {
  requireSuperuser(principal, 'deleting a topic');
  if (topic.isPartition) throw new TopicNotFoundError(topic.toString());
  const resolved = await resolveTopic(ports, topic);
  await startTopicDeletion(ports, resolved.record, resolved.partitions);
}
