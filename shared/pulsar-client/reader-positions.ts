import type { JsonValue } from '../client/lossless-json.ts';

/** `[ledgerId, entryId]` of an entry in one partition (entryId -1: before the ledger's first). */
export type EntryPosition = readonly [bigint, bigint];

const BEFORE_ALL: EntryPosition = [-1n, -1n];

/**
 * What a reader knows of its topic, per partition (-1 for a non-partitioned topic): the last entry
 * it read (or the one it starts after), and the topic's last entry as the server last told it and as
 * this client's producers last published. `hasNext()` answers from it, never from the network.
 */
export class ReaderPositions {
  private readonly lastRead = new Map<number, EntryPosition>();
  private readonly lastKnown = new Map<number, EntryPosition>();

  /** The reader starts after `position` in `partition` (a seek, a start id, latest at creation). */
  readAfter(partition: number, position: EntryPosition): void {
    this.lastRead.set(partition, position);
  }

  /** Forgets where the reader is (a seek to earliest): it starts before every entry. */
  restart(): void {
    this.lastRead.clear();
  }

  /** The topic's last entry in `partition`, as someone reported it; older reports change nothing. */
  known(partition: number, position: EntryPosition): void {
    const current = this.lastKnown.get(partition);
    if (current === undefined || isAfter(position, current)) this.lastKnown.set(partition, position);
  }

  /** Whether some partition's last known entry is after the last read one. */
  hasUnread(): boolean {
    for (const [partition, last] of this.lastKnown) {
      if (isAfter(last, this.lastRead.get(partition) ?? BEFORE_ALL)) return true;
    }
    return false;
  }

  /** Every partition's position, as {@link readAfter} for each (a reader that starts at latest). */
  readAllKnown(): void {
    for (const [partition, last] of this.lastKnown) this.lastRead.set(partition, last);
  }
}

function isAfter(a: EntryPosition, b: EntryPosition): boolean {
  return a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);
}

/**
 * The positions of a reset-cursor report (`{"subscriptions":{"<sub>":[{"partition","newMarkDeletePosition"}]}}`,
 * what a dry run answers): per partition, the entry the cursor would stand after.
 */
export function reportedPositions(
  report: JsonValue | undefined,
  subscription: string,
): Map<number, EntryPosition> {
  const positions = new Map<number, EntryPosition>();
  const rows = (report as { subscriptions?: Record<string, unknown> } | undefined)?.subscriptions?.[
    subscription
  ];
  if (!Array.isArray(rows)) return positions;
  for (const row of rows as { partition?: unknown; newMarkDeletePosition?: unknown }[]) {
    const match = /^(-?\d+):(-?\d+)$/.exec(String(row.newMarkDeletePosition));
    if (!match) continue;
    const partition = /-partition-(\d+)$/.exec(String(row.partition))?.[1];
    positions.set(partition === undefined ? -1 : Number(partition), [BigInt(match[1]!), BigInt(match[2]!)]);
  }
  return positions;
}
