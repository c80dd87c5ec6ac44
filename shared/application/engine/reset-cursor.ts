import { runEnd } from '../../domain/delivery-run.ts';
import type { DispatchHead } from '../../domain/dispatch-head.ts';
import { markDeleteTo } from '../../domain/dispatch-head.ts';
import { NotFoundError, PreconditionFailedError } from '../../domain/errors.ts';
import { nextInLedger, Position, positionBefore } from '../../domain/position.ts';
import { DISPATCH_PAGE_SIZE, type HeadRecord, type PageState } from '../../ports/dispatch-store.ts';
import { windowPages } from './cursor-window.ts';
import type { EngineContext, PartitionCursor } from './engine-context.ts';

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

/** How long a resetter has to clear the pages before anyone who finds its reset finishes it. */
export const RESET_TIMEOUT_MS = 30_000;

/**
 * Pulsar's `ManagedCursorImpl.resetCursor` on the delivery engine: the subscription starts over at
 * `readPosition`, backwards or forwards. Mark-delete becomes the entry before it, the read position
 * is it, every individual acknowledgement from it on is cleared (Pulsar clears
 * individuallyDeletedMessages), and the subscription's delivery runs and redelivery tracker are
 * dropped: entries from `readPosition` on are dispatched again as first deliveries, in log order,
 * with redeliveryCount 0 (Pulsar disconnects the consumers and reads again from the new read
 * position). Consumers and an Exclusive/Failover owner stay (no new epoch).
 *
 * Three steps, so a crash anywhere leaves a cursor the engine reads correctly:
 * 1. One compare-and-set of the head: the new mark-delete and read position, no runs, no replay,
 *    and `resetting` (the pages up to the old read position, or the early-ack mark, still hold
 *    state of before). From here the reset has happened: dispatch pauses and the fold waits while
 *    `resetting` is set, and runs at or after the read position are ignored by every reader.
 * 2. {@link finishReset}: the pages' acks, floors and runs from `readPosition` to that end are
 *    cleared (and the page before loses runs reaching into it), every tracker entry goes (none can
 *    be true: the runs are gone, and nothing is dispatched meanwhile), the early-ack mark is
 *    raised to that end (claims over the range read the pages, so an acknowledgement made after
 *    the reset is honoured, I1).
 * 3. One compare-and-set clears `resetting`: dispatch goes on from the new read position.
 * A resetter that dies between 1 and 3 leaves `resetting`; after RESET_TIMEOUT_MS the next
 * dispatch or fold that finds it runs steps 2 and 3 (idempotent). An acknowledgement that lands
 * on a page between steps 1 and 2 may be cleared with it (as Pulsar drops the acknowledgements of
 * the consumers a reset disconnects): that entry is handed out again.
 *
 * Cost: the head (read, two writes), the ledger layout, one read per page from `readPosition` to
 * the old read position, one write per such page holding anything, one write to raise the early-ack
 * mark, one Query and one write per tracker entry.
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
    let record = await requireHead(ctx, cursor);
    if (record.head.resetting && !options.dryRun) {
      // Another reset is under way (or died): finish it first; this one then starts over from it.
      await finishReset(ctx, cursor);
      record = await requireHead(ctx, cursor);
    }
    const head = record.head;
    const move: CursorMove = {
      markDeletePosition: head.markDelete,
      readPosition: head.readPosition,
      newMarkDeletePosition: markDelete,
      newReadPosition: readPosition,
    };
    if (options.dryRun) return move;
    let end = head.readPosition;
    if (record.aheadAck && record.aheadAck.compareTo(end) >= 0) end = nextInLedger(record.aheadAck);
    const tooFar = await pagesBetween(ctx, cursor, readPosition, end);
    if (tooFar > MAX_RESET_PAGES) {
      throw new PreconditionFailedError(
        `Resetting to ${readPosition.toString()} would rewrite more than ${MAX_RESET_PAGES} cursor pages (${
          MAX_RESET_PAGES * Number(DISPATCH_PAGE_SIZE)
        } entries): reset in steps, or to a position closer to the read position ${end.toString()}`,
      );
    }
    const { replayFrom: _replay, trackerDueAtMs: _due, resetting: _none, ...rest } = head;
    const next: DispatchHead = {
      ...rest,
      markDelete,
      readPosition,
      runs: [],
      resetting: {
        end: end.compareTo(readPosition) > 0 ? end : readPosition,
        untilMs: ctx.clock.nowMs() + RESET_TIMEOUT_MS,
      },
    };
    if (!(await ctx.store.casHead(cursor.cursorId, record.version, next)).ok) continue;
    await finishReset(ctx, cursor);
    return move;
  }
  throw new PreconditionFailedError('The subscription is busy (its cursor kept changing): reset again');
}

/**
 * Steps 2 and 3 of {@link resetCursor} for the reset the head names, if any. Idempotent: any
 * number of callers may run it at once.
 */
export async function finishReset(ctx: EngineContext, cursor: PartitionCursor): Promise<void> {
  const record = await ctx.store.readHead(cursor.cursorId);
  const resetting = record?.head.resetting;
  if (!record || !resetting) return;
  const from = record.head.readPosition;
  if (from.compareTo(resetting.end) < 0) {
    await clearPages(ctx, cursor, from, resetting.end);
    await ctx.store.raiseAheadAck(cursor.cursorId, positionBefore(resetting.end));
  }
  await clearTracker(ctx, cursor);
  for (let attempt = 0; attempt < ctx.limits.casAttempts * 4; attempt++) {
    const current = await ctx.store.readHead(cursor.cursorId);
    if (!current?.head.resetting) return;
    const { resetting: _done, ...head } = current.head;
    if ((await ctx.store.casHead(cursor.cursorId, current.version, head)).ok) return;
  }
}

async function pagesBetween(
  ctx: EngineContext,
  cursor: PartitionCursor,
  from: Position,
  end: Position,
): Promise<number> {
  if (from.compareTo(end) >= 0) return 0;
  const window = await windowPages(ctx, cursor, from, MAX_RESET_PAGES + 1);
  return window.filter((page) => Position.of(page.ledgerId, page.firstEntryId).compareTo(end) < 0).length;
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
  const fromPage = from.entryId / DISPATCH_PAGE_SIZE;
  if (fromPage > 0n) {
    await rewritePage(ctx, cursor, { ledgerId: from.ledgerId, page: fromPage - 1n }, (page) => {
      // The page is of `from`'s ledger, and so is every run it holds.
      const runs = page.runs.filter((run) => runEnd(run) <= from.entryId);
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
  // Still changing after every attempt (acks landing on it): the next finishReset clears it.
  throw new PreconditionFailedError('The subscription is busy (its cursor pages kept changing): reset again');
}

/** Every tracker entry goes: the reset dropped every run they could name, and nothing is dispatched meanwhile. */
async function clearTracker(ctx: EngineContext, cursor: PartitionCursor): Promise<void> {
  for (let round = 0; round < TRACKER_ROUNDS; round++) {
    const entries = await ctx.store.dueTracker(cursor.cursorId, Number.MAX_SAFE_INTEGER, TRACKER_BATCH);
    if (entries.length === 0) return;
    await ctx.store.deleteTracker(cursor.cursorId, entries);
    if (entries.length < TRACKER_BATCH) return;
  }
}
