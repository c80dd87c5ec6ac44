import { type RunState, runPositions } from '../../domain/delivery-run.ts';
import { overrideAt } from '../../domain/dispatch-head.ts';
import { nextInLedger, Position } from '../../domain/position.ts';
import { DISPATCH_PAGE_SIZE } from '../../ports/dispatch-store.ts';
import { windowPages } from './cursor-window.ts';
import type { EngineContext, PartitionCursor } from './engine-context.ts';
import { isAcknowledged, locateRun, pageKey, readPagesOf, runPagesOf } from './pending-state.ts';

/**
 * Pulsar's pendingAcks, listed: the entries of one subscription's partition handed to a consumer
 * and not acknowledged, in log order, read from the runs of the head and of the window's pages
 * (the head's copy of a run wins, as for every reader). Read only.
 */

/** One entry held by a consumer. */
export interface HeldEntry {
  readonly position: Position;
  readonly consumerId: string;
  readonly deliveredAtMs: number;
  /** Its ack timeout (none: it comes back only when its consumer goes). */
  readonly timeoutAtMs?: number;
  /** Times handed out: the consumer got it with redeliveryCount `deliveries - 1`. */
  readonly deliveries: number;
}

export interface HeldRead {
  /** The first position to look at (default: after mark-delete). */
  readonly from?: Position;
  /** Only what this consumer holds. */
  readonly consumerId?: string;
  readonly limit: number;
  /** Pages of the window one read walks at most (the next read goes on from where it stopped). */
  readonly maxPages: number;
}

/**
 * Held entries from `read.from`, at most `limit`; `next` where a next read goes on (none: the
 * window was walked to the read position).
 * Cost: the head, the ledger layout, one read per page walked (BatchGetItem, 100 a request), at
 * most `maxPages`: in proportion to the window walked, never to the whole backlog.
 */
export async function heldOnCursor(
  ctx: EngineContext,
  cursor: PartitionCursor,
  read: HeldRead,
): Promise<{ entries: HeldEntry[]; next?: Position }> {
  const record = await ctx.store.readHead(cursor.cursorId);
  if (!record) return { entries: [] };
  const { head } = record;
  const afterMarkDelete = nextInLedger(head.markDelete);
  const start = read.from && read.from.compareTo(afterMarkDelete) > 0 ? read.from : afterMarkDelete;
  const window = (await windowPages(ctx, cursor, start, read.maxPages + 1)).filter(
    (page) => Position.of(page.ledgerId, page.firstEntryId).compareTo(head.readPosition) < 0,
  );
  const walked = window.slice(0, read.maxPages);
  const states = await ctx.store.readPages(cursor.cursorId, walked);
  const pages = new Map(states.map((state) => [pageKey(state), state]));
  const lastPage = walked[walked.length - 1];
  // Positions past the pages walked are left to the next read (their acks were not read).
  const end = lastPage ? Position.of(lastPage.ledgerId, lastPage.firstEntryId + DISPATCH_PAGE_SIZE) : start;
  const positions = new Map<string, Position>();
  for (const run of [...head.runs, ...states.flatMap((state) => state.runs)]) {
    for (const position of runPositions(run)) {
      if (position.compareTo(start) >= 0 && position.compareTo(end) < 0)
        positions.set(position.toString(), position);
    }
  }
  const entries: HeldEntry[] = [];
  for (const position of [...positions.values()].sort((a, b) => a.compareTo(b))) {
    if (isAcknowledged(head, pages, position)) continue;
    const run = locateRun(head, pages, position)?.run;
    if (!run || run.state.kind !== 'held') continue;
    const { consumerId, deliveredAtMs, timeoutAtMs } = run.state;
    if (read.consumerId !== undefined && consumerId !== read.consumerId) continue;
    if (entries.length >= read.limit) return { entries, next: position };
    entries.push({
      position,
      consumerId,
      deliveredAtMs,
      ...(timeoutAtMs !== undefined ? { timeoutAtMs } : {}),
      deliveries: run.deliveries,
    });
  }
  const following = window[read.maxPages];
  return following ? { entries, next: Position.of(following.ledgerId, following.firstEntryId) } : { entries };
}

/**
 * How many times the entry was handed out on the cursor (0: never, or not dispatched yet),
 * whether a consumer holds it now, its run's state (none: no run covers it), and, not dispatched
 * yet, the due time an operator set on it (the head's override). Cost: the head and one or two
 * pages.
 */
export async function deliveriesOf(
  ctx: EngineContext,
  cursor: PartitionCursor,
  position: Position,
): Promise<{ deliveries: number; held: boolean; state?: RunState; overrideDueAtMs?: number }> {
  const record = await ctx.store.readHead(cursor.cursorId);
  if (!record) return { deliveries: 0, held: false };
  const pages = await readPagesOf(ctx.store, cursor.cursorId, runPagesOf(position));
  const run = locateRun(record.head, pages, position)?.run;
  const override = run ? undefined : overrideAt(record.head, position);
  return {
    deliveries: run?.deliveries ?? 0,
    held: run?.state.kind === 'held',
    ...(run ? { state: run.state } : {}),
    ...(override ? { overrideDueAtMs: override.dueAtMs } : {}),
  };
}
