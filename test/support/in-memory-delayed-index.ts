import { compareGroups, groupDelayed } from '../../shared/domain/delayed-groups.ts';
import type { TopicName } from '../../shared/domain/topic-name.ts';
import type {
  DelayedEntry,
  DelayedGroup,
  DelayedIndex,
  DelayedIndexKey,
} from '../../shared/ports/delayed-index.ts';

/** The delayed index in memory, counting requests and items as DynamoDB would bill them. */
export class InMemoryDelayedIndex implements DelayedIndex {
  private readonly partitions = new Map<string, Map<string, DelayedGroup>>();
  readonly usage = { writes: 0, queries: 0, itemsRead: 0 };

  async put(partition: TopicName, entries: readonly DelayedEntry[]): Promise<void> {
    const groups = this.partitions.get(partition.toString()) ?? new Map<string, DelayedGroup>();
    for (const group of groupDelayed(entries)) {
      this.usage.writes++;
      groups.set(`${group.dueAtMs}#${group.ledgerId}#${group.firstEntryId}`, group);
    }
    this.partitions.set(partition.toString(), groups);
  }

  async groups(
    partition: TopicName,
    request: { readonly from: DelayedIndexKey; readonly untilMs: number; readonly limit: number },
  ): Promise<DelayedGroup[]> {
    this.usage.queries++;
    const from: DelayedGroup = {
      dueAtMs: request.from.dueAtMs,
      ledgerId: request.from.ledgerId,
      firstEntryId: request.from.entryId,
      entryIds: [],
    };
    const found = [...(this.partitions.get(partition.toString())?.values() ?? [])]
      .filter((group) => compareGroups(group, from) >= 0 && group.dueAtMs <= request.untilMs)
      .sort(compareGroups)
      .slice(0, Math.max(0, request.limit));
    this.usage.itemsRead += found.length;
    return found;
  }

  async purge(partition: TopicName): Promise<void> {
    this.partitions.delete(partition.toString());
  }
}
