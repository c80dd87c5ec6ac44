import { runEnd } from '../../domain/delivery-run.ts';
import type { DispatchHead } from '../../domain/dispatch-head.ts';
import { NotFoundError, PreconditionFailedError } from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import { DISPATCH_PAGE_SIZE, type HeadRecord, type PageState } from '../../ports/dispatch-store.ts';
import { windowPages } from './cursor-window.ts';
import type { EngineContext, PartitionCursor } from './engine-context.ts';
import { markDeleteTo } from './pending-acks.ts';

/**
 * Pages one reset rewrites at most (500,000 entries): a reset further back than this answers 412
 * (an admin call has API Gateway's 29 s; each page is one conditional write).
 */
export const MAX_RESET_PAGES = 5_000;
/** Tracker entries one reset deletes per Query; it queries until none is left (bounded). */
const TRACKER_BATCH = 1_000;
const TRACKER_ROUNDS = 50;

/** What a cursor operation changed (or, in a dry run, would change) on one partition. */
export interface CursorMove {
  readonly markDeletePosition: Position;
  readonly readPosition: Position;
  readonly newMarkDeletePosition: Position;
  readonly newReadPosition: Position;
}

/** The position before `position` in its ledger (`L:-1` before the first entry). */
export function positionBefore(position: Position): Position {
  return position.entryId === 0n
    ? Position.beforeFirst(position.ledgerId)
    : Position.ofStored(position.ledgerId, position.entryId - 1n);
}

/**
 * Pulsar's `ManagedCursorImpl.resetCursor` on the delivery engine: the subscription starts over at
 * `readPosition`, backwards or forwards. Mark-delete becomes the entry before it, the read position
 * is it, every individual acknowledgement from it on is cleared (Pulsar clears
 * individuallyDeletedMessages), and the subscription's delivery runs and redelivery tracker are
 * dropped: entries from `readPosition` on are dispatched again as first deliveries, in log order,
 * with redeliveryCount 0 (Pulsar disconnects the consumers and reads again from the new read
 * position). Consumers and an Exclusive/Failover owner stay (no new epoch): what they held before
 * may still be acknowledged, and such an acknowledgement counts (the early-ack mark makes the
 * claims of the re-dispatched range read their pages first, I1).
 *
 * Order of the writes, so a crash at any point leaves a cursor the engine reads correctly: the
 * pages first (acks, floors and runs from `readPosition` on cleared; the page before it loses runs
 * that reach into it), then the early-ack mark, then the tracker entries, then the head in one
 * compare-and-set. Before the head write, the old head still rules (a page cleared early only
 * makes entries unacknowledged that the old mark-delete or a later retry covers again; dispatch
 * of the old head never reads runs at or after its read position). After it, runs at or after the
 * read position are ignored by every reader (`locateRun`), so a run a racing spill writes late
 * cannot be handed out.
 *
 * Cost: the head (read, one write), the ledger layout, one read per page from `readPosition` to
 * the old read position (or the early-ack mark), one write per such page holding anything, one
 * write to raise the early-ack mark, one Query and one write per tracker entry.
 * @throws PreconditionFailedError when more than MAX_RESET_PAGES pages would be rewritten, or the
 *   head kept changing (busy); NotFoundError when the cursor is gone.
 */
export async function resetCursor(
  ctx: EngineContext,
  cursor: PartitionCursor,
  readPosition: Position,
  options: { readonly dryRun?: boolean } = {},
): Promise<CursorMove> {
  const markDelete = positionBefore(readPosition);
  for (let attempt = 0; attempt < ctx.limits.casAttempts; attempt++) {
    const record = await requireHead(ctx, cursor);
    const head = record.head;
    const move: CursorMove = {
      markDeletePosition: head.markDelete,
      readPosition: head.readPosition,
      newMarkDeletePosition: markDelete,
      newReadPosition: readPosition,
    };
    if (options.dryRun) return move;
    let end = head.readPosition;
    if (record.aheadAck && record.aheadAck.compareTo(end) >= 0) {
      end = Position.ofStored(record.aheadAck.ledgerId, record.aheadAck.entryId + 1n);
    }
    if (readPosition.compareTo(end) < 0) {
      await clearPages(ctx, cursor, readPosition, end);
      // Acks by delivery handle of entries handed out before the reset must be seen by the claims
      // that hand them out again: those claims read the pages up to the mark.
      await ctx.store.raiseAheadAck(cursor.cursorId, positionBefore(end));
    }
    await clearTracker(ctx, cursor);
    const { replayFrom: _replay, trackerDueAtMs: _due, ...rest } = head;
    const next: DispatchHead = { ...rest, markDelete, readPosition, runs: [] };
    if ((await ctx.store.casHead(cursor.cursorId, record.version, next)).ok) return move;
  }
  throw new PreconditionFailedError('The subscription is busy (its cursor kept changing): reset again');
}

/**
 * Mark-delete forward to `position` (never back): Pulsar's clearBacklog (skip_all) and message
 * expiry. Runs it passes are dropped; the read position follows when it was behind. Individual
 * acknowledgements after it are kept, as Pulsar's markDelete keeps them.
 * Cost: the head (read, and one write when it moves; retried on conflict).
 */
export async function markDeleteForward(
  ctx: EngineContext,
  cursor: PartitionCursor,
  position: Position,
  options: { readonly dryRun?: boolean } = {},
): Promise<CursorMove> {
  for (let attempt = 0; attempt < ctx.limits.casAttempts; attempt++) {
    const record = await requireHead(ctx, cursor);
    const head = record.head;
    const next = markDeleteTo(head, position);
    const move: CursorMove = {
      markDeletePosition: head.markDelete,
      readPosition: head.readPosition,
      newMarkDeletePosition: next.markDelete,
      newReadPosition: next.readPosition,
    };
    if (options.dryRun || next === head) return move;
    if ((await ctx.store.casHead(cursor.cursorId, record.version, next)).ok) return move;
  }
  throw new PreconditionFailedError('The subscription is busy (its cursor kept changing): try again');
}

async function requireHead(ctx: EngineContext, cursor: PartitionCursor): Promise<HeadRecord> {
  const record = await ctx.store.readHead(cursor.cursorId);
  if (!record) throw new NotFoundError(`The subscription's cursor ${cursor.cursorId} was deleted`);
  return record;
}

function holdsAnything(page: PageState): boolean {
  return page.acked.size > 0 || (page.floor !== undefined && page.floor >= 0) || page.runs.length > 0;
}

/**
 * Clears acks, floors and runs of the pages from `from` up to `end` (excluded), and the runs of
 * the page before `from`'s that reach into it. A page changed meanwhile is read and written again.
 */
async function clearPages(
  ctx: EngineContext,
  cursor: PartitionCursor,
  from: Position,
  end: Position,
): Promise<void> {
  const window = await windowPages(ctx, cursor, from, MAX_RESET_PAGES + 1);
  const pages = window.filter((page) => Position.of(page.ledgerId, page.firstEntryId).compareTo(end) < 0);
  if (pages.length > MAX_RESET_PAGES) {
    throw new PreconditionFailedError(
      `Resetting to ${from.toString()} would rewrite more than ${MAX_RESET_PAGES} cursor pages (${
        MAX_RESET_PAGES * Number(DISPATCH_PAGE_SIZE)
      } entries); reset in steps, or to a position closer to the read position ${end.toString()}`,
    );
  }
  const fromPage = from.entryId / DISPATCH_PAGE_SIZE;
  if (fromPage > 0n) {
    await rewritePage(ctx, cursor, { ledgerId: from.ledgerId, page: fromPage - 1n }, (page) => {
      const runs = page.runs.filter((run) => runEnd(run) <= from.entryId || run.ledgerId !== from.ledgerId);
      return runs.length === page.runs.length ? undefined : { runs };
    });
  }
  for (const page of pages) {
    await rewritePage(ctx, cursor, page, (state) =>
      holdsAnything(state) ? { runs: [], floor: -1, clearAcks: true } : undefined,
    );
  }
}

async function rewritePage(
  ctx: EngineContext,
  cursor: PartitionCursor,
  ref: { readonly ledgerId: bigint; readonly page: bigint },
  change: (page: PageState) => Parameters<EngineContext['store']['casPage']>[3] | undefined,
): Promise<void> {
  for (let attempt = 0; attempt < ctx.limits.casAttempts; attempt++) {
    const [state] = await ctx.store.readPages(cursor.cursorId, [ref]);
    if (!state) return;
    const next = change(state);
    if (!next) return;
    if (await ctx.store.casPage(cursor.cursorId, ref, state.version, next)) return;
  }
  throw new PreconditionFailedError('The subscription is busy (its cursor pages kept changing): reset again');
}

/** Every tracker entry goes: the reset drops every run they could name. */
async function clearTracker(ctx: EngineContext, cursor: PartitionCursor): Promise<void> {
  for (let round = 0; round < TRACKER_ROUNDS; round++) {
    const entries = await ctx.store.dueTracker(cursor.cursorId, Number.MAX_SAFE_INTEGER, TRACKER_BATCH);
    if (entries.length === 0) return;
    await ctx.store.deleteTracker(cursor.cursorId, entries);
    if (entries.length < TRACKER_BATCH) return;
  }
}
