import type { DelayedEntry, DelayedGroup } from '../domain/delayed-groups.ts';
import type { TopicName } from '../domain/topic-name.ts';

export type { DelayedEntry, DelayedGroup };

/** Where a read of the index starts: the group keyed (dueAtMs, ledgerId, firstEntryId), included. */
export interface DelayedIndexKey {
  readonly dueAtMs: number;
  readonly ledgerId: bigint;
  readonly entryId: bigint;
}

/**
 * The delivery times of a partition's delayed messages, in due-time order (see
 * docs/design/storage.md#delayed-index). The delivery time belongs to the message, not to a
 * subscription: the index is kept once per partition, written by the append (before its entries,
 * so a crash leaves at worst an item naming entries never written, which readers skip as they skip
 * anything acknowledged), and each subscription's view is this index minus what its own cursor and
 * pending state say (acknowledged, or already passed by its dispatcher).
 *
 * Durability: items are never updated. Past their due time they are never read again (reads start
 * at a due time); on AWS DynamoDB's TTL deletes them a day after it (attribute `ttl`), and they go
 * with the partition when its topic is deleted.
 */
export interface DelayedIndex {
  /**
   * Indexes the entries: one item per distinct (deliverAt, ledger) among them, idempotent.
   * Cost: one write unit per item (BatchWriteItem, 25 a request), whatever the number of entries
   * of a group (a group of a few thousand ids stays under 1 KB per 100 ids).
   */
  put(partition: TopicName, entries: readonly DelayedEntry[]): Promise<void>;
  /**
   * Groups due from `from` (its key included) up to `untilMs` (included), in key order, at most
   * `limit`. Cost: one Query (eventually consistent: the entries it names were written after it,
   * so a group read late is one whose entries were not yet readable either).
   */
  groups(
    partition: TopicName,
    request: { readonly from: DelayedIndexKey; readonly untilMs: number; readonly limit: number },
  ): Promise<DelayedGroup[]>;
  /** Deletes every item of the partition. Cost: one Query of keys (paged) and one delete per item. */
  purge(partition: TopicName): Promise<void>;
}
