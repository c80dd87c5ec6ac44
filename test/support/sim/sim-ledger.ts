import type { Position } from '../../../shared/domain/position.ts';
import type { TopicName } from '../../../shared/domain/topic-name.ts';
import type {
  Appended,
  Ledger,
  ManagedLedgerState,
  NewEntry,
  ReadEntriesOptions,
  Renewed,
  StoredEntry,
  Trimmed,
} from '../../../shared/ports/ledger.ts';
import { InMemoryLedger } from '../in-memory-ledger.ts';

/**
 * The ledger as the simulation needs it: publishing in DynamoDbLedger's two requests (allocate ids,
 * then write the chunk), so a publisher can die in between; and eventually consistent reads that
 * may miss what was written in the last second (a replica behind), never return anything wrong.
 */
export class SimLedger implements Ledger {
  private readonly inner: InMemoryLedger;
  private readonly writtenAtMs = new Map<string, number>();

  constructor(
    maxEntriesPerLedger: number,
    /**
     * Whether this eventually consistent read is served by a replica behind: by one second (true),
     * or by half a second a version (a number of versions behind, as the head's stale reads).
     */
    private readonly stale: () => boolean | number,
    private readonly nowMs: () => number,
  ) {
    this.inner = new InMemoryLedger(maxEntriesPerLedger);
  }

  /** First half of a publish: ids allocated, nothing written. */
  allocate(partition: TopicName, count: number): Position[] {
    return this.inner.allocateUnwritten(partition, count);
  }

  /** Second half: the chunk written. */
  write(positions: readonly Position[], entries: readonly NewEntry[], publishTimeMs: number): StoredEntry[] {
    return positions.map((position, index) => {
      this.writtenAtMs.set(position.toString(), this.nowMs());
      return this.inner.writeAllocated(position, entries[index] as NewEntry, publishTimeMs);
    });
  }

  initialize(partition: TopicName): Promise<ManagedLedgerState> {
    return this.inner.initialize(partition);
  }

  append(partition: TopicName, entries: readonly NewEntry[], publishTimeMs: number): Promise<Appended> {
    return this.inner.append(partition, entries, publishTimeMs);
  }

  announceSubscriptions(partition: TopicName): Promise<ManagedLedgerState> {
    return this.inner.announceSubscriptions(partition);
  }

  state(partition: TopicName): Promise<ManagedLedgerState | undefined> {
    return this.inner.state(partition);
  }

  ownerOf(ledgerId: bigint): Promise<TopicName | undefined> {
    return this.inner.ownerOf(ledgerId);
  }

  readEntry(position: Position): Promise<StoredEntry | undefined> {
    return this.inner.readEntry(position);
  }

  async readEntries(
    ledgerId: bigint,
    firstEntryId: bigint,
    lastEntryId: bigint,
    options: ReadEntriesOptions = {},
  ): Promise<StoredEntry[]> {
    const entries = await this.inner.readEntries(ledgerId, firstEntryId, lastEntryId);
    if (options.consistent ?? true) return entries;
    const behind = this.stale();
    if (!behind) return entries;
    // A replica behind: entries written in the last second (or half-seconds) are not there yet.
    const cutoff = this.nowMs() - (behind === true ? 1_000 : behind * 500);
    return entries.filter((entry) => (this.writtenAtMs.get(entry.position.toString()) ?? 0) <= cutoff);
  }

  firstWrittenAfter(
    ledgerId: bigint,
    entryId: bigint,
  ): Promise<{ position: Position; publishTimeMs: number } | undefined> {
    return this.inner.firstWrittenAfter(ledgerId, entryId);
  }

  trim(partition: TopicName, request: Parameters<Ledger['trim']>[1]): Promise<Trimmed | undefined> {
    return this.inner.trim(partition, request);
  }

  renewExpiry(
    partition: TopicName,
    request: Parameters<Ledger['renewExpiry']>[1],
  ): Promise<Renewed | undefined> {
    return this.inner.renewExpiry(partition, request);
  }

  detachPartition(partition: TopicName, firstLedgerId: bigint): Promise<void> {
    return this.inner.detachPartition(partition, firstLedgerId);
  }

  purgeLedger(ledgerId: bigint, maxItems: number): Promise<boolean> {
    return this.inner.purgeLedger(ledgerId, maxItems);
  }
}
