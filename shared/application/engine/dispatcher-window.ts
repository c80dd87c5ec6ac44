import type { DispatchHead } from '../../domain/dispatch-head.ts';
import { LedgerIndex } from '../../domain/ledger-layout.ts';
import { Position } from '../../domain/position.ts';
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
  const from = head.markDelete;
  const to = head.readPosition;
  if (from.ledgerId === to.ledgerId) return Number(to.entryId - from.entryId - 1n);
  const state = await (ctx.recentState ?? ((partition) => ctx.ledger.state(partition)))(cursor.partition);
  // No layout: the partition was deleted (its cursors are purged after it): nothing more to hand out.
  if (!state || state.ledgers.length === 0) return 0;
  const ledgers = new LedgerIndex(state.ledgers);
  const lastDispatched =
    to.entryId > 0n ? Position.of(to.ledgerId, to.entryId - 1n) : Position.beforeFirst(to.ledgerId);
  return ledgers.totalEntries === 0n ? 0 : Number(ledgers.ordinal(lastDispatched) - ledgers.ordinal(from));
}
