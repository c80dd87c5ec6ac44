import type { DispatchHead } from '../../domain/dispatch-head.ts';
import { LedgerIndex } from '../../domain/ledger-layout.ts';
import { Position } from '../../domain/position.ts';
import type { LedgerInfo } from '../../ports/ledger.ts';
import type { EngineContext, PartitionCursor } from './engine-context.ts';

/**
 * The entries from mark-delete (excluded) to the read position (excluded): everything dispatched
 * and not yet folded, so a bound of what is unacknowledged (entries acknowledged one by one inside
 * it count too). Reads the ledger layout only when the window spans ledgers (remembered for a
 * moment); 0 when the partition has none left (deleted).
 */
export async function windowSize(
  ctx: EngineContext,
  cursor: PartitionCursor,
  head: DispatchHead,
): Promise<number> {
  if (head.markDelete.ledgerId === head.readPosition.ledgerId) {
    // Stryker disable next-line ArrayDeclaration: within one ledger the layout is not read
    return dispatchWindowSize(head.markDelete, head.readPosition, []);
  }
  const state = await (ctx.recentState ?? ((partition) => ctx.ledger.state(partition)))(cursor.partition);
  return dispatchWindowSize(head.markDelete, head.readPosition, state?.ledgers ?? []);
}

/**
 * The entries after `markDelete` and before `readPosition` (the dispatch window that the
 * subscription's cap of unacknowledged entries bounds); 0 when mark-delete is at or past the read
 * position. `ledgers`: the partition's layout, needed only when the two are in different ledgers.
 */
export function dispatchWindowSize(
  markDelete: Position,
  readPosition: Position,
  ledgers: readonly LedgerInfo[],
): number {
  if (markDelete.compareTo(readPosition) >= 0) return 0;
  if (markDelete.ledgerId === readPosition.ledgerId) {
    return Number(readPosition.entryId - markDelete.entryId - 1n);
  }
  // No layout: the partition was deleted (its cursors are purged after it): nothing more to hand out.
  if (ledgers.length === 0) return 0;
  const index = new LedgerIndex(ledgers);
  const lastDispatched =
    readPosition.entryId > 0n
      ? Position.of(readPosition.ledgerId, readPosition.entryId - 1n)
      : Position.beforeFirst(readPosition.ledgerId);
  // A layout without entries counts every position's ordinal 0: an empty window.
  return Math.max(0, Number(index.ordinal(lastDispatched) - index.ordinal(markDelete)));
}
