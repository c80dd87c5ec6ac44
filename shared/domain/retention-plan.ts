import { Position } from './position.ts';

/** One stored publish batch, as retention sees it. */
export interface StoredBatch {
  readonly ledgerId: bigint;
  readonly firstEntryId: bigint;
  readonly count: number;
  readonly publishTimeMs: number;
  readonly bytes: number;
}

/** What retention may delete: Pulsar's rules (ManagedLedgerImpl's trim), per batch. */
export interface RetentionRequest {
  /** Every subscription's mark-delete is at or after it (nothing later may go). */
  readonly consumedUpTo: Position;
  /** -1: no limit by time. */
  readonly retentionTimeMs: number;
  /** -1: no limit by size. */
  readonly retentionSizeBytes: number;
  readonly nowMs: number;
}

/**
 * The batches to delete, oldest first (pure): a batch goes when every subscription consumed it
 * and it is older than the retention time, or the partition's stored bytes without what goes
 * before it still exceed the retention size. The first batch that may not go stops the plan
 * (Pulsar trims a prefix of the log too). `storedBytes`: the partition's bytes before the plan.
 */
export function planRetention(
  batches: readonly StoredBatch[],
  storedBytes: number,
  request: RetentionRequest,
): { readonly deleted: StoredBatch[]; readonly bytes: number; readonly entries: number } {
  const deleted: StoredBatch[] = [];
  let bytes = 0;
  let entries = 0;
  for (const batch of batches) {
    const last = Position.of(batch.ledgerId, batch.firstEntryId + BigInt(batch.count - 1));
    if (last.compareTo(request.consumedUpTo) > 0) break;
    const expired =
      request.retentionTimeMs >= 0 && request.nowMs - batch.publishTimeMs > request.retentionTimeMs;
    const overSize = request.retentionSizeBytes >= 0 && storedBytes - bytes > request.retentionSizeBytes;
    if (!expired && !overSize) break;
    deleted.push(batch);
    bytes += batch.bytes;
    entries += batch.count;
  }
  return { deleted, bytes, entries };
}

/**
 * Whether the request lets go everything consumed, whatever its age and size (Pulsar's 0/0): then
 * the new first kept position follows from `consumedUpTo` alone, with no batch read.
 */
export function letsGoAllConsumed(request: RetentionRequest): boolean {
  return request.retentionTimeMs === 0 && request.retentionSizeBytes === 0;
}

/** How many entry ids the ledgers allocated in [from, to) (holes never written included). */
export function entriesBetween(
  ledgers: readonly { readonly ledgerId: bigint; readonly entries: bigint }[],
  from: Position,
  to: Position,
): number {
  let count = 0n;
  for (const { ledgerId, entries } of ledgers) {
    if (ledgerId < from.ledgerId || ledgerId > to.ledgerId) continue;
    const low = ledgerId === from.ledgerId ? from.entryId : 0n;
    const high = ledgerId === to.ledgerId ? (to.entryId < entries ? to.entryId : entries) : entries;
    if (high > low) count += high - (low < 0n ? 0n : low);
  }
  return Number(count);
}
