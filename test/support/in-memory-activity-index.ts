import type {
  ActivePartition,
  ActiveSubscription,
  ActivityIndex,
  IndexedSubscription,
} from '../../shared/ports/activity-index.ts';

/** ActivityIndex in memory, with DynamoDbActivityIndex's semantics (entries by cursorId). Not persisted. */
export class InMemoryActivityIndex implements ActivityIndex {
  readonly entries = new Map<string, ActiveSubscription>();
  readonly partitions = new Map<string, number>();
  private isSeeded = false;

  async markPartition(partition: string, nowMs: number): Promise<void> {
    this.partitions.set(partition, nowMs);
  }

  async listPartitions(): Promise<ActivePartition[]> {
    return [...this.partitions].sort().map(([partition, markedAtMs]) => ({ partition, markedAtMs }));
  }

  async removePartition(partition: string, markedAtMs: number): Promise<void> {
    if (this.partitions.get(partition) === markedAtMs) this.partitions.delete(partition);
  }

  async mark(subscription: IndexedSubscription, nowMs: number): Promise<void> {
    this.entries.set(subscription.cursorId, { ...subscription, markedAtMs: nowMs });
  }

  async list(): Promise<ActiveSubscription[]> {
    return [...this.entries.values()]
      .sort((a, b) => (a.cursorId < b.cursorId ? -1 : a.cursorId > b.cursorId ? 1 : 0))
      .map((entry) => ({ ...entry }));
  }

  async remove(cursorId: string, markedAtMs: number): Promise<void> {
    if (this.entries.get(cursorId)?.markedAtMs === markedAtMs) this.entries.delete(cursorId);
  }

  async defer(
    cursorId: string,
    markedAtMs: number,
    next: { readonly revisitAtMs: number; readonly backlogDueSinceMs?: number },
  ): Promise<void> {
    const entry = this.entries.get(cursorId);
    if (entry?.markedAtMs !== markedAtMs) return;
    const { backlogDueSinceMs: _, ...rest } = entry;
    this.entries.set(cursorId, { ...rest, ...next });
  }

  async seeded(): Promise<boolean> {
    return this.isSeeded;
  }

  async markSeeded(): Promise<void> {
    this.isSeeded = true;
  }
}
