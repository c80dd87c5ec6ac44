import { type DispatchHead, markDeleteTo, resetOverdue } from '../../domain/dispatch-head.ts';
import { nextInLedger, Position } from '../../domain/position.ts';
import { DISPATCH_PAGE_SIZE } from '../../ports/dispatch-store.ts';
import { windowPages } from './cursor-window.ts';
import type { EngineContext, PartitionCursor } from './engine-context.ts';
import { offsetAcknowledged, readPagesOf, runPagesOf } from './pending-state.ts';
import { judgeTrackerEntry } from './redelivery-tracker.ts';
import { finishReset } from './reset-cursor.ts';

/** Pages one fold step reads at most (10,000 entries). */
export const FOLD_PAGES_PER_STEP = 100;

/**
 * Maintenance's fold (Pulsar's mark-delete advance over individually acknowledged ranges): mark-
 * delete moves over the acknowledged entries that follow it, across pages and rolled-over
 * ledgers, up to the first one not acknowledged; the pages it passed become tombstones (floor at
 * the last offset, acks and runs dropped) so a cursor keeps about one small item per page passed.
 * Also repairs the head's tracker due time (a lost update would hide due entries). Bounded by
 * FOLD_PAGES_PER_STEP; the next run goes on.
 * Cost: the head, one read per page walked, one head write when mark-delete moves, one write per
 * page tombstoned, one tracker Query.
 */
export async function foldStep(
  ctx: EngineContext,
  cursor: PartitionCursor,
): Promise<{ markDelete?: Position; entries: number; tombstoned: number }> {
  const record = await ctx.store.readHead(cursor.cursorId);
  if (!record) return { entries: 0, tombstoned: 0 };
  if (record.head.resetting) {
    // The pages still hold acknowledgements of before a reset: never fold over them.
    if (resetOverdue(record.head, ctx.clock.nowMs())) await finishReset(ctx, cursor);
    return { entries: 0, tombstoned: 0 };
  }
  const start = nextInLedger(record.head.markDelete);
  const pages = await windowPages(ctx, cursor, start, FOLD_PAGES_PER_STEP);
  const states = await ctx.store.readPages(cursor.cursorId, pages);
  let markDelete = record.head.markDelete;
  let entries = 0;
  const passed: typeof states = [];
  walk: for (const [index, page] of pages.entries()) {
    const state = states[index];
    // Stryker disable next-line ConditionalExpression: equivalent, readPages answers a state for every page asked (a page never written reads as empty)
    if (!state) break;
    // The window starts at the page holding mark-delete's next entry; each page after it in the
    // same ledger starts right after the one passed before.
    const from = markDelete.ledgerId === page.ledgerId ? markDelete.entryId + 1n : page.firstEntryId;
    for (let entryId = from; entryId < page.endEntryId; entryId++) {
      if (!offsetAcknowledged(state, Number(entryId - page.firstEntryId))) break walk;
      markDelete = Position.of(page.ledgerId, entryId);
      entries++;
    }
    const complete = page.endEntryId === page.firstEntryId + DISPATCH_PAGE_SIZE || page.ledgerClosed;
    if (!complete) break;
    passed.push(state);
  }
  let moved: Position | undefined;
  if (markDelete.compareTo(record.head.markDelete) > 0) {
    let current: typeof record | undefined = record;
    for (let attempt = 0; attempt < ctx.limits.casAttempts && current; attempt++) {
      if (resetSince(record.head, current.head)) break;
      // The newest acknowledgement of the pages passed (and of the one it stopped in) stays known
      // once they are tombstones.
      const lastAckedAtMs = Math.max(
        current.head.lastAckedAtMs ?? 0,
        ...states.slice(0, passed.length + 1).map((page) => page.lastAckedAtMs ?? 0),
      );
      const written = await ctx.store.casHead(cursor.cursorId, current.version, {
        ...markDeleteTo(current.head, markDelete),
        ...(lastAckedAtMs > 0 ? { lastAckedAtMs } : {}),
      });
      if (written.ok) {
        moved = markDelete;
        break;
      }
      current = written.current;
    }
  }
  let tombstoned = 0;
  if (moved) {
    // Every entry of a page passed is at or before mark-delete (a page is passed only whole, or
    // as the last of a closed ledger): it becomes a tombstone, unless it is one already.
    for (const page of passed) {
      if (page.floor === Number(DISPATCH_PAGE_SIZE) - 1 && page.runs.length === 0) continue;
      const written = await ctx.store.casPage(cursor.cursorId, page, page.version, {
        runs: [],
        floor: Number(DISPATCH_PAGE_SIZE) - 1,
        clearAcks: true,
      });
      if (written) tombstoned++;
    }
  }
  await sweepOrphanedTrackerEntries(ctx, cursor);
  await repairTrackerDue(ctx, cursor);
  return { ...(moved ? { markDelete: moved } : {}), entries: moved ? entries : 0, tombstoned };
}

/**
 * A reset came between the fold's reads and its head write (under way, or done: the read position
 * went back). The acknowledgements the fold read may be cleared since: the mark-delete it found
 * stands no more (the next fold reads again).
 */
function resetSince(read: DispatchHead, now: DispatchHead): boolean {
  return now.resetting !== undefined || now.readPosition.compareTo(read.readPosition) < 0;
}

/**
 * A tracker entry is put before the write that makes it true; when that write never came (its
 * call died, or lost a race), the entry stays `pending` and keeps receivers querying the tracker.
 * Once it is ORPHAN_AGE_MS past due, no call that put it can still be running: it goes.
 */
export const ORPHAN_AGE_MS = 5 * 60_000;

async function sweepOrphanedTrackerEntries(ctx: EngineContext, cursor: PartitionCursor): Promise<void> {
  const now = ctx.clock.nowMs();
  const old = await ctx.store.dueTracker(cursor.cursorId, now - ORPHAN_AGE_MS, 100);
  if (old.length === 0) return;
  const record = await ctx.store.readHead(cursor.cursorId);
  if (!record) return;
  const pages = await readPagesOf(
    ctx.store,
    cursor.cursorId,
    old.flatMap((entry) => [
      ...runPagesOf(entry.position),
      Position.of(entry.position.ledgerId, entry.position.entryId + BigInt(entry.n - 1)),
    ]),
  );
  const orphans = old.filter(
    (entry) =>
      !judgeTrackerEntry(record.head, pages, entry, now).some((segment) => segment.verdict === 'due'),
  );
  await ctx.store.deleteTracker(cursor.cursorId, orphans);
}

/** Lowers the head's tracker due time when the tracker holds an entry due earlier (a lost update). */
async function repairTrackerDue(ctx: EngineContext, cursor: PartitionCursor): Promise<void> {
  const earliest = await ctx.store.nextTrackerDue(cursor.cursorId, 0);
  if (earliest === undefined) return;
  for (let attempt = 0; attempt < ctx.limits.casAttempts; attempt++) {
    const record = await ctx.store.readHead(cursor.cursorId);
    if (!record) return;
    if (record.head.trackerDueAtMs !== undefined && record.head.trackerDueAtMs <= earliest) return;
    if (
      (await ctx.store.casHead(cursor.cursorId, record.version, { ...record.head, trackerDueAtMs: earliest }))
        .ok
    )
      return;
  }
}
