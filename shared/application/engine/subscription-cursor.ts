import { Cursor } from '../../domain/cursor.ts';
import { newDispatchHead } from '../../domain/dispatch-head.ts';
import type { Position } from '../../domain/position.ts';
import { nextInLedger, positionBefore } from '../../domain/position.ts';
import type { EngineContext, PartitionCursor } from './engine-context.ts';

/**
 * Creates a subscription cursor's head on one partition at Earliest (every entry kept is backlog),
 * Latest (only what is published after), or a given mark-delete position. Nothing is fed anywhere: dispatch reads the ledger
 * from the read position. Idempotent: an existing head is left as it is.
 * Cost: the ledger state (one read), one conditional write.
 * @returns the head's mark-delete position.
 */
export async function createSubscriptionCursor(
  ctx: EngineContext,
  cursor: PartitionCursor,
  initialPosition: 'Earliest' | 'Latest' | Position,
): Promise<Position> {
  let markDelete: Position;
  if (typeof initialPosition === 'string') {
    const state = await ctx.ledger.initialize(cursor.partition);
    markDelete = (
      initialPosition === 'Earliest' ? Cursor.atEarliest(state.ledgers) : Cursor.atLatest(state.ledgers)
    ).markDeletePosition;
    // Earliest is the first entry retention kept (what it deleted is no message any more).
    const beforeKept = state.firstKept ? positionBefore(state.firstKept) : undefined;
    if (beforeKept && beforeKept.compareTo(markDelete) > 0) markDelete = beforeKept;
  } else {
    markDelete = initialPosition;
  }
  await ctx.store.createHead(cursor.cursorId, newDispatchHead(markDelete, nextInLedger(markDelete)));
  return markDelete;
}
