import { TopicAlreadyExistsError, TopicNotFoundError } from '../../domain/catalog-errors.ts';
import {
  NotAcceptableError,
  NotFoundError,
  PreconditionFailedError,
  ValidationError,
} from '../../domain/errors.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import { REMOVE_ALL_POLICIES } from '../../ports/policy-store.ts';
import { requireNoConnectedConsumers } from '../consumers/live-consumers.ts';
import { startTopicDeletion } from '../maintenance/deletion-jobs.ts';
import { requireSuperuser } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { requireCreatableByPartitionKeyword, requirePersistent, resolveTopic } from './topic-lookup.ts';

const PARTITION_KEYWORD = '-partition-';

/** Pulsar's default cap on partitions per topic (maxNumPartitionsPerPartitionedTopic is unlimited; 0 = none). */
export const MAX_PARTITIONS = 1_000;

/**
 * Create a topic (non-partitioned, or with `partitions` > 0).
 * 1. Only superusers manage topics.
 * 2. Refuse names Pulsar refuses (its PersistentTopics create checks): a partitioned topic's name
 *    may not hold `-partition-` (412); a non-partitioned name may, unless `-partition-` is followed
 *    by a number the partitioned topic before it does not cover
 *    ({@link requireCreatableByPartitionKeyword}, 412); a partition's name answers 409 when the
 *    partition exists (it is created with its partitioned topic) and 412 otherwise.
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
  if (!Number.isSafeInteger(partitions)) {
    throw new ValidationError(`Number of partitions must be an integer, got ${partitions}`);
  }
  // Pulsar's answers (406) for a count out of range.
  if (partitions < 0) throw new NotAcceptableError('Number of partitions should be more than 0');
  if (partitions > MAX_PARTITIONS) {
    throw new NotAcceptableError(`Number of partitions should be less than or equal to ${MAX_PARTITIONS}`);
  }
  if (partitions > 0 && topic.localName.includes(PARTITION_KEYWORD)) {
    throw new PreconditionFailedError(
      `Cannot create partitioned topic ${topic.toString()}: a partitioned topic name should not contain '-partition-'`,
    );
  }
  if (topic.isPartition) {
    const partitioned = await ports.catalog.getTopic(topic.partitionedTopicName);
    if (partitioned && topic.partitionIndex < partitioned.partitions) {
      throw new TopicAlreadyExistsError(topic.toString());
    }
    throw new PreconditionFailedError(
      `Cannot create topic ${topic.toString()}: it names partition ${topic.partitionIndex} of ${topic.partitionedTopicName.toString()}, which is not a partitioned topic with more than ${topic.partitionIndex} partitions (a partition is created with its partitioned topic)`,
    );
  }
  if (partitions === 0) await requireCreatableByPartitionKeyword(ports, topic);
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

/** The topic records of a namespace: superusers only. */
function namespaceTopics(
  ports: UseCasePorts,
  principal: Principal | undefined,
  domain: TopicName['domain'],
  namespaceName: string,
) {
  requireSuperuser(principal, 'listing topics');
  return ports.catalog.listTopics(domain, namespaceName);
}

/** Full names of a namespace's partitioned topics, by their own names (Pulsar's getPartitionedTopicList). */
export async function listPartitionedTopics(
  ports: UseCasePorts,
  principal: Principal | undefined,
  domain: TopicName['domain'],
  namespaceName: string,
): Promise<string[]> {
  const records = await namespaceTopics(ports, principal, domain, namespaceName);
  return records
    .filter((record) => record.partitions > 0)
    .map((record) => record.topic.toString())
    .sort();
}

/** Full names of a namespace's topics, a partitioned topic by its partitions' names (as Pulsar lists them). */
export async function listTopics(
  ports: UseCasePorts,
  principal: Principal | undefined,
  domain: TopicName['domain'],
  namespaceName: string,
): Promise<string[]> {
  const records = await namespaceTopics(ports, principal, domain, namespaceName);
  const names: string[] = [];
  for (const record of records) {
    if (record.partitions === 0) names.push(record.topic.toString());
    for (let i = 0; i < record.partitions; i++) names.push(record.topic.partition(i).toString());
  }
  return names.sort();
}

/**
 * Delete a topic with its partitions, subscriptions, cursors, messages, policies and grants. Returns within a few
 * seconds whatever the backlog (see startTopicDeletion): the names are detached at once (calls
 * see 404, and a topic created again under the name starts empty, on new ledgers), and deletion
 * jobs purge the rest page by page; maintenance finishes a job whose call or step crashed.
 * As Pulsar: 412 while a subscription has connected consumers, unless `force` (which disconnects
 * them). `partitionedOnly`: Pulsar's deletePartitionedTopic (`DELETE .../{topic}/partitions`), which
 * refuses (404) a non-partitioned topic.
 */
export async function deleteTopic(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
  options: { readonly partitionedOnly?: boolean; readonly force?: boolean } = {},
): Promise<void> {
  requireSuperuser(principal, 'deleting a topic');
  if (topic.isPartition) throw new TopicNotFoundError(topic.toString());
  const resolved = await resolveTopic(ports, topic);
  if (options.partitionedOnly && resolved.record.partitions === 0) {
    // Pulsar's deletePartitionedTopic: 404 for a non-partitioned topic, which it leaves alone.
    throw new NotFoundError(
      `Partitioned topic ${topic.toString()} does not exist: it is a non-partitioned topic (delete it with DELETE .../${topic.localName})`,
    );
  }
  if (!options.force) {
    const listed = await Promise.all(
      resolved.partitions.map((partition) => ports.catalog.listSubscriptions(partition)),
    );
    const names = new Set(listed.flat().map((subscription) => subscription.name));
    await requireNoConnectedConsumers(ports, topic, [...names], 'Topic');
  }
  await startTopicDeletion(ports, resolved.record, resolved.partitions);
  // Its own retention and TTL go with it (Pulsar deletes a topic's policies with the topic): a
  // topic created again under the name starts under its namespace's.
  const scope = { topic: resolved.record.topic.toString() };
  if (await ports.policies.get(scope)) {
    await ports.policies.update(scope, REMOVE_ALL_POLICIES);
  }
  // So do its grants (Pulsar's deleteTopicAuthentication, and for a partitioned topic
  // removePartitionsAuthenticationPolicies): a topic created again does not hand them back.
  const grantsOf = topic.partitionedTopicName.toString();
  for (const role of Object.keys(await ports.permissions.list(grantsOf))) {
    await ports.permissions.revoke(grantsOf, role);
  }
}
