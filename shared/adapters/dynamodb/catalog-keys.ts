import { subscriptionItemKey } from '../../config/catalog-keys.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import { pad } from './dynamodb-support.ts';

/** A key of the Catalog table: partition key `pk`, sort key `sk`. */
export interface CatalogKey {
  readonly pk: string;
  readonly sk: string;
}

/**
 * Every Catalog key built from names, in one place, pure, so a property test
 * (test/unit/adapters/dynamodb/catalog-keys.test.ts) can show that distinct entities never share
 * one. Why each is injective:
 * - a prefix (`NS#`, `ML#`, `MEM#`, ...) names the kind, and the sort keys of kinds sharing a
 *   prefix differ in their own prefix (`T#`, `S#`, `L#`, `M`);
 * - a topic's full name is injective: tenant, cluster and namespace hold no '/', and neither does
 *   the local name (TopicName refuses it), so the '/'-separated parts are recovered;
 * - two free names in one key are JSON-encoded ([topic, subscription]), or split between pk and
 *   sk; numbers are fixed-width, so `<atMs:15>#<requestId>` and `<day:6>#<topic>` split at their
 *   first '#'.
 * Lengths: see shared/domain/name-limits.ts.
 */
export const catalogKeys = {
  topic: (topic: TopicName): CatalogKey => ({
    pk: `NS#${topic.domain}://${topic.namespaceName}`,
    sk: `T#${topic.localName}`,
  }),
  /** Shared with the consumer construct, which reads the item at deploy time (config/catalog-keys.ts). */
  subscription: (partition: TopicName, name: string): CatalogKey =>
    subscriptionItemKey(partition.toString(), name),
  ledgerState: (partition: TopicName): CatalogKey => ({ pk: `ML#${partition.toString()}`, sk: 'M' }),
  /** One closed ledger of the partition, beside its state; in ledger id order. */
  closedLedger: (partition: TopicName, ledgerId: bigint): CatalogKey => ({
    pk: `ML#${partition.toString()}`,
    sk: `L#${pad(ledgerId)}`,
  }),
  ledgerIndex: (ledgerId: bigint): CatalogKey => ({ pk: `L#${ledgerId}`, sk: 'M' }),
  /**
   * One group of the partition's delayed index (entries of one ledger sharing a deliverAt), in
   * due-time order: a partition key of its own, so delayed publishes do not heat the state item's.
   */
  delayedGroup: (
    partition: TopicName,
    dueAtMs: number,
    ledgerId: bigint,
    firstEntryId: bigint,
  ): CatalogKey => ({
    pk: `DX#${partition.toString()}`,
    sk: `${pad(dueAtMs, 15)}#${pad(ledgerId)}#${pad(firstEntryId)}`,
  }),
  consumer: (consumerId: string): CatalogKey => ({ pk: `CONS#${consumerId}`, sk: 'M' }),
  /** `subscriptionKey` is consumer-session.ts's JSON of [base topic, subscription]. */
  membership: (subscriptionKey: string, consumerId: string): CatalogKey => ({
    pk: `MEM#${subscriptionKey}`,
    sk: consumerId,
  }),
  /** `resource`: a full topic name, or `tenant/namespace` (one '/', where a topic name has at least four). */
  permission: (resource: string, role: string): CatalogKey => ({ pk: `PERM#${resource}`, sk: role }),
  audit: (topic: string, atMs: number, requestId: string): CatalogKey => ({
    pk: `AUDIT#${topic}`,
    sk: `${pad(atMs, 15)}#${requestId}`,
  }),
  auditExpiry: (expiryDay: number, topic: string): CatalogKey => ({
    pk: 'AUDX',
    sk: `${pad(expiryDay, 6)}#${topic}`,
  }),
  deletionJob: (jobId: string): CatalogKey => ({ pk: 'DJ', sk: jobId }),
  /** A subscription's entry in the activity index: in one of ACTIVITY_SHARDS partitions, by its cursor id. */
  activity: (cursorId: string): CatalogKey => ({
    pk: activityShardKey(activityShard(cursorId)),
    sk: cursorId,
  }),
  /** A partition with no subscription that had publishes: in one of PARTITION_ACTIVITY_SHARDS keys. */
  partitionActivity: (partition: string): CatalogKey => ({
    pk: partitionActivityShardKey(activityShard(partition) % PARTITION_ACTIVITY_SHARDS),
    sk: partition,
  }),
} as const;

/**
 * Partitions of the partition marks (topics published to with no subscription). A process marks
 * such a partition at most once a minute: four keys take 240,000 marks a minute.
 */
export const PARTITION_ACTIVITY_SHARDS = 4;

/** `ACTP#0` to `ACTP#3`. */
export function partitionActivityShardKey(shard: number): string {
  return `ACTP#${shard}`;
}

/**
 * Partitions of the activity index. Every warm process marks each subscription it serves at most
 * once a minute, so one partition key (at most 1,000 writes a second) would cap a deployment at
 * 60,000 marks a minute; sixteen take 960,000, and maintenance reads them with sixteen Queries a
 * run (docs/design/aws-limits.md#hot-keys).
 */
export const ACTIVITY_SHARDS = 16;

/** The activity index's partition key before it was sharded: read by maintenance, never written. */
export const LEGACY_ACTIVITY_PK = 'ACT';

/** `ACT#00` to `ACT#15`: fixed width, so never `ACT#seeded` (the seed flag). */
export function activityShardKey(shard: number): string {
  return `ACT#${pad(shard, 2)}`;
}

/** The shard of a cursor id: FNV-1a of its UTF-16 code units, modulo ACTIVITY_SHARDS. Pure and stable. */
export function activityShard(cursorId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < cursorId.length; i++) {
    hash ^= cursorId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % ACTIVITY_SHARDS;
}

/** The key as DynamoDB attribute values. */
export function itemKey(key: CatalogKey): { pk: { S: string }; sk: { S: string } } {
  return { pk: { S: key.pk }, sk: { S: key.sk } };
}
