import { compareRuns, type DeliveryRun, runCovers, runEnd } from '../../domain/delivery-run.ts';
import type { DispatchHead } from '../../domain/dispatch-head.ts';
import { Position } from '../../domain/position.ts';
import {
  DISPATCH_PAGE_SIZE,
  type DispatchStore,
  type HeadRecord,
  type PageRef,
  type PageState,
} from '../../ports/dispatch-store.ts';
import type { EngineContext, PartitionCursor } from './engine-context.ts';

/**
 * Pulsar's pendingAcks, durable: who holds which entry, read from the delivery runs of the head
 * and of the pages, minus the acknowledgements. The head's copy of a run wins over a page's (a
 * spill writes the page first, then takes the runs out of the head), and a run is changed where
 * it is authoritative: in the head while it is there, in its page after.
 */

/** Pages one spill call moves at most. */
const SPILLS_PER_CALL = 4;

export function pageOf(position: Position): PageRef {
  return { ledgerId: position.ledgerId, page: position.entryId / DISPATCH_PAGE_SIZE };
}

export function pageKey(page: PageRef): string {
  return `${page.ledgerId}#${page.page}`;
}

function offsetOf(position: Position): number {
  return Number(position.entryId % DISPATCH_PAGE_SIZE);
}

/** Pages read for one decision, by key. */
export type PageMap = ReadonlyMap<string, PageState>;

/** Reads (strongly) the pages of `positions` not in `known`. */
export async function readPagesOf(
  store: DispatchStore,
  cursorId: string,
  positions: readonly Position[],
  known: PageMap = new Map(),
): Promise<Map<string, PageState>> {
  const pages = new Map(known);
  const missing = new Map<string, PageRef>();
  for (const position of positions) {
    const page = pageOf(position);
    const key = pageKey(page);
    if (!pages.has(key)) missing.set(key, page);
  }
  if (missing.size > 0) {
    for (const state of await store.readPages(cursorId, [...missing.values()])) {
      pages.set(pageKey(state), state);
    }
  }
  return pages;
}

/** Acknowledged: at or before mark-delete, under a page's floor, or in a page's acks. */
export function isAcknowledged(head: DispatchHead, pages: PageMap, position: Position): boolean {
  if (position.compareTo(head.markDelete) <= 0) return true;
  const page = pages.get(pageKey(pageOf(position)));
  if (!page) return false;
  return offsetAcknowledged(page, offsetOf(position));
}

/** The entry at `offset` of the page is acknowledged: under the page's floor, or in its acks. */
export function offsetAcknowledged(page: PageState, offset: number): boolean {
  return (page.floor !== undefined && offset <= page.floor) || page.acked.has(offset);
}

/** Where a run lives: the head, or a page (with the page's state as read). */
export type RunHome = { readonly kind: 'head' } | { readonly kind: 'page'; readonly page: PageState };

export interface LocatedRun {
  readonly run: DeliveryRun;
  readonly home: RunHome;
}

/**
 * The run that covers `position`: the head's, else its page's (pages must have been read). Nothing
 * at or after the read position: no entry there was dispatched, so a run there is a leftover of a
 * reset (or of a spill that raced one) and never counts.
 */
export function locateRun(head: DispatchHead, pages: PageMap, position: Position): LocatedRun | undefined {
  if (position.compareTo(head.readPosition) >= 0) return undefined;
  const inHead = head.runs.find((run) => runCovers(run, position));
  if (inHead) return { run: inHead, home: { kind: 'head' } };
  // A run starts in the page of its first entry and may end in the next one.
  const own = pageOf(position);
  const refs = own.page > 0n ? [own, { ledgerId: own.ledgerId, page: own.page - 1n }] : [own];
  for (const ref of refs) {
    const page = pages.get(pageKey(ref));
    const run = page?.runs.find((candidate) => runCovers(candidate, position));
    if (page && run) return { run, home: { kind: 'page', page } };
  }
  return undefined;
}

/** The page refs a position's run may live in (its own page and the one before). */
export function runPagesOf(position: Position): Position[] {
  return position.entryId >= DISPATCH_PAGE_SIZE
    ? [position, Position.of(position.ledgerId, position.entryId - DISPATCH_PAGE_SIZE)]
    : [position];
}

/** `runs` with `replaced` taken out (by identity) and `by` put in, ordered by position. */
export function withRunsReplaced(
  runs: readonly DeliveryRun[],
  replaced: readonly DeliveryRun[],
  by: readonly DeliveryRun[],
): DeliveryRun[] {
  // By value, not identity: the runs to replace may come from an earlier read of the same item.
  const gone = new Set(replaced.map(runIdentity));
  return [...runs.filter((run) => !gone.has(runIdentity(run))), ...by].sort(compareRuns);
}

function runIdentity(run: DeliveryRun): string {
  return `${run.ledgerId}:${run.entryId}:${run.n}:${run.deliveries}:${JSON.stringify(run.state)}`;
}

/** Runs to replace where they live: `replaced` by `by`, on the head or page they were read from. */
export interface RunsWrite {
  readonly record: HeadRecord;
  readonly home: RunHome;
  readonly replaced: readonly DeliveryRun[];
  readonly by: readonly DeliveryRun[];
  /** Other changes to the head, written with the runs when they live in the head. */
  readonly headChanges?: Partial<DispatchHead>;
}

/**
 * Replaces runs where they live, with one compare-and-set: the head's (keeping everything else of
 * `head`, which the caller may have changed too) or one page's.
 * @returns false when the head or the page changed since it was read (nothing written).
 */
export async function writeRuns(store: DispatchStore, cursorId: string, write: RunsWrite): Promise<boolean> {
  const { record, home, replaced, by, headChanges = {} } = write;
  const present = (runs: readonly DeliveryRun[]) => {
    const ids = new Set(runs.map(runIdentity));
    return replaced.every((run) => ids.has(runIdentity(run)));
  };
  if (home.kind === 'head') {
    if (!present(record.head.runs)) return false; // changed since it was read: decide again
    const head = { ...record.head, ...headChanges, runs: withRunsReplaced(record.head.runs, replaced, by) };
    return (await store.casHead(cursorId, record.version, head)).ok;
  }
  const page = home.page;
  if (!present(page.runs)) return false;
  return store.casPage(cursorId, page, page.version, {
    runs: withRunsReplaced(page.runs, replaced, by),
  });
}

/**
 * Moves the runs of the head's oldest page to that page when the head holds more than
 * `maxHeadRuns`: the page first (its overlapping runs replaced by the head's copies), then the head
 * without them. Best effort: a conflict leaves both copies, and the head's wins until a later spill.
 * Cost: one page read, one page write, one head write.
 */
export async function spillIfFull(
  store: DispatchStore,
  cursorId: string,
  record: HeadRecord,
  maxHeadRuns: number,
): Promise<void> {
  let current = record;
  // A claim adds at most a page's worth of runs: a few pages moved bring the head back under its bound.
  for (let spill = 0; spill < SPILLS_PER_CALL && current.head.runs.length > maxHeadRuns; spill++) {
    const runs = current.head.runs;
    const first = runs[0] as DeliveryRun;
    const ref = pageOf(Position.of(first.ledgerId, first.entryId));
    const moving = runs.filter(
      (run) => run.ledgerId === ref.ledgerId && run.entryId / DISPATCH_PAGE_SIZE === ref.page,
    );
    const [page] = await store.readPages(cursorId, [ref]);
    if (!page) return;
    const kept = page.runs.filter(
      (run) =>
        !moving.some(
          (moved) =>
            moved.ledgerId === run.ledgerId && moved.entryId < runEnd(run) && run.entryId < runEnd(moved),
        ),
    );
    const written = await store.casPage(cursorId, ref, page.version, {
      runs: [...kept, ...moving].sort(compareRuns),
    });
    if (!written) return;
    const head = { ...current.head, runs: withRunsReplaced(runs, moving, []) };
    if (!(await store.casHead(cursorId, current.version, head)).ok) return;
    current = { ...current, head, version: current.version + 1 };
  }
}

/**
 * Makes the head's tracker due time at most `dueAtMs` (after a run released in a page, or a
 * tracker entry put by a job). Cost: one head read and write when it must move; retried on
 * conflict at most casAttempts times (maintenance repairs what is still missed).
 */
export async function lowerTrackerDue(
  ctx: EngineContext,
  cursor: PartitionCursor,
  dueAtMs: number,
): Promise<void> {
  for (let attempt = 0; attempt < ctx.limits.casAttempts; attempt++) {
    const record = await ctx.store.readHead(cursor.cursorId);
    if (!record || (record.head.trackerDueAtMs !== undefined && record.head.trackerDueAtMs <= dueAtMs))
      return;
    const written = await ctx.store.casHead(cursor.cursorId, record.version, {
      ...record.head,
      trackerDueAtMs: dueAtMs,
    });
    if (written.ok) return;
  }
}
