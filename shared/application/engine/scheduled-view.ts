import type { ReleaseCause } from '../../domain/delivery-run.ts';
import { overrideAt } from '../../domain/dispatch-head.ts';
import { Position } from '../../domain/position.ts';
import { compareScheduled, NO_END_MS, type ScheduledKey } from '../../domain/scheduled-order.ts';
import { isCumulativeAckType } from '../../domain/subscription-type.ts';
import type { DelayedGroup, DelayedIndex } from '../../ports/delayed-index.ts';
import type { HeadRecord, TrackerEntry } from '../../ports/dispatch-store.ts';
import type { EngineContext, PartitionCursor } from './engine-context.ts';
import { isAcknowledged, locateRun, type PageMap, readPagesOf, runPagesOf } from './pending-state.ts';

/**
 * What waits on one subscription's partition, in due-time order: the redelivery tracker (nack
 * backoff, ack timeouts, a gone consumer's entries, delayed entries the dispatcher passed), each
 * entry judged on the runs (a tracker entry is an index put before the write that makes it true:
 * only what the runs confirm is listed), and the partition's delayed index for what the dispatcher
 * has not reached (after the read position, not acknowledged). Read only: it writes nothing.
 */

/** How a listed entry waits, as the runs say it. */
export type WaitState =
  /**
   * Released, due at its time; `cause` as the run says (none: a nack backoff, or a first
   * delivery); `lastConsumerId`, the consumer it last went to, as its tracker entry names it.
   */
  | { readonly kind: 'released'; readonly cause?: ReleaseCause; readonly lastConsumerId?: string }
  /** Held by `consumerId`, due again at its ack timeout. */
  | { readonly kind: 'held'; readonly consumerId: string }
  /**
   * Not reached by the dispatcher yet: held back until its deliverAt, or (`rescheduled`) until the
   * due time an operator set (the head's override, which the dispatcher honours when it reaches it).
   */
  | { readonly kind: 'undispatched'; readonly rescheduled?: boolean };

export interface WaitingEntry extends WaitingBound {
  readonly position: Position;
  /** Times handed out so far: the redeliveryCount its next delivery carries. */
  readonly deliveries: number;
  readonly state: WaitState;
}

export interface WaitingRead {
  /** The item key reading starts at (included). */
  readonly from: ScheduledKey;
  /** Entries at or before it are skipped (a previous page listed them). */
  readonly after?: ScheduledKey;
  readonly untilMs: number;
  readonly limit: number;
}

/** A key, with the first entry of the item (of the same due time and ledger) reading goes on from. */
export interface WaitingBound extends ScheduledKey {
  readonly itemStart: bigint;
}

/** What one source answered: its entries in order, and how far it looked. */
export interface WaitingSlice {
  readonly entries: WaitingEntry[];
  /**
   * Every entry of the source up to this key (included) was looked at; past it, it may hold more.
   * Undefined: every entry up to `untilMs` was.
   */
  readonly lookedUpTo?: WaitingBound;
}

/** Items one Query asks for at most (a tracker Query page of 1 MB holds about 10,000). */
const QUERY_ITEMS = 1_000;
/**
 * Queries one source makes at most for one read, beyond those its limit needs (stale tracker
 * entries, dispatched or acknowledged delayed ones are skipped, not counted).
 */
const EXTRA_QUERIES = 4;

function queriesFor(read: WaitingRead): { readonly items: number; readonly queries: number } {
  const items = Math.min(read.limit, QUERY_ITEMS);
  return { items, queries: Math.ceil(read.limit / items) + EXTRA_QUERIES };
}

/**
 * The entries waiting on the cursor from `read.from`, both sources, each at most `read.limit`.
 * Cost: the head, per source the Queries its limit needs (of QUERY_ITEMS items) and EXTRA_QUERIES
 * more at most, and the pages of the entries found (BatchGetItem, 100 a request): in proportion to
 * the page, not to what waits.
 */
export async function waitingOnCursor(
  ctx: EngineContext,
  cursor: PartitionCursor,
  input: { readonly read: WaitingRead; readonly delayedIndex?: DelayedIndex; readonly nowMs: number },
): Promise<WaitingSlice[]> {
  const record = await ctx.store.readHead(cursor.cursorId);
  if (!record) return [];
  const slices = [await trackerSlice(ctx, cursor, record, input.read)];
  // Exclusive and Failover ignore deliverAt, as Pulsar does: nothing of theirs is delayed.
  if (input.delayedIndex && !isCumulativeAckType(cursor.type)) {
    // What the dispatcher has not reached and is due is no longer held back: it is backlog.
    const now = { dueAtMs: input.nowMs + 1, ledgerId: 0n, entryId: 0n };
    const from = compareScheduled(input.read.from, now) < 0 ? now : input.read.from;
    const read = { ...input.read, from, index: input.delayedIndex };
    slices.push(await undispatchedSlice(ctx, cursor, record, read));
    slices.push(await overriddenSlice(ctx, cursor, record, { ...input.read, from }));
  }
  return slices;
}

/** Undispatched delayed entries counted at most (msgDelayed beyond it is a lower bound). */
export const MAX_UNDISPATCHED_COUNT = 100_000;

/**
 * The delayed entries the dispatcher has not reached, due later and not acknowledged, up to
 * MAX_UNDISPATCHED_COUNT (stats' msgDelayed adds those it passed, from the pending summary).
 * Cost: one Query per 1,000 index items (100,000 entries at most), one page read per 100 entries.
 */
export async function countUndispatched(
  ctx: EngineContext,
  cursor: PartitionCursor,
  delayedIndex: DelayedIndex,
): Promise<number> {
  if (isCumulativeAckType(cursor.type)) return 0;
  const record = await ctx.store.readHead(cursor.cursorId);
  if (!record) return 0;
  const read = {
    from: { dueAtMs: ctx.clock.nowMs() + 1, ledgerId: 0n, entryId: 0n },
    untilMs: NO_END_MS,
    limit: MAX_UNDISPATCHED_COUNT,
  };
  const indexed = await undispatchedSlice(ctx, cursor, record, { ...read, index: delayedIndex });
  return indexed.entries.length + (await overriddenSlice(ctx, cursor, record, read)).entries.length;
}

async function trackerSlice(
  ctx: EngineContext,
  cursor: PartitionCursor,
  record: HeadRecord,
  read: WaitingRead,
): Promise<WaitingSlice> {
  const entries: WaitingEntry[] = [];
  // `R#<due>#<ledger>#<entry>#0#0` sorts before every entry keyed from that position.
  let after: TrackerEntry = {
    dueAtMs: read.from.dueAtMs,
    position: Position.of(read.from.ledgerId, read.from.entryId),
    deliveries: 0,
    n: 0,
  };
  const { items: perQuery, queries } = queriesFor(read);
  for (let query = 0; query < queries; query++) {
    const items = await ctx.store.dueTracker(cursor.cursorId, read.untilMs, perQuery, { after });
    const pages = await readPagesOf(
      ctx.store,
      cursor.cursorId,
      items.flatMap((item) => runPagesOf(item.position)),
    );
    for (const item of items) {
      for (const entry of confirmed(record, pages, item)) {
        if (read.after && compareScheduled(entry, read.after) <= 0) continue;
        entries.push(entry);
        if (entries.length >= read.limit) return { entries, lookedUpTo: entry };
      }
    }
    const last = items[items.length - 1];
    if (!last || items.length < perQuery) return { entries };
    after = last;
    if (query === queries - 1) {
      const end = last.position.entryId + BigInt(last.n - 1);
      return {
        entries,
        // Read on from the last item itself (an item may start inside it): its entries are skipped.
        lookedUpTo: {
          dueAtMs: last.dueAtMs,
          ledgerId: last.position.ledgerId,
          entryId: end,
          itemStart: last.position.entryId,
        },
      };
    }
  }
  return { entries };
}

/** The entries of a tracker item that the runs confirm: not acknowledged, in the state it names. */
function confirmed(record: HeadRecord, pages: PageMap, item: TrackerEntry): WaitingEntry[] {
  const found: WaitingEntry[] = [];
  for (let i = 0; i < item.n; i++) {
    const position = Position.of(item.position.ledgerId, item.position.entryId + BigInt(i));
    if (isAcknowledged(record.head, pages, position)) continue;
    const run = locateRun(record.head, pages, position)?.run;
    if (!run || run.deliveries !== item.deliveries) continue;
    const { state } = run;
    let wait: WaitState;
    if (state.kind === 'released' && state.dueAtMs === item.dueAtMs) {
      wait = {
        kind: 'released',
        ...(state.cause ? { cause: state.cause } : {}),
        ...(item.consumerId !== undefined && run.deliveries > 0 ? { lastConsumerId: item.consumerId } : {}),
      };
    } else if (state.kind === 'held' && state.timeoutAtMs === item.dueAtMs) {
      wait = { kind: 'held', consumerId: state.consumerId };
    } else {
      continue;
    }
    found.push({
      dueAtMs: item.dueAtMs,
      ledgerId: position.ledgerId,
      entryId: position.entryId,
      position,
      deliveries: run.deliveries,
      state: wait,
      itemStart: item.position.entryId,
    });
  }
  return found;
}

async function undispatchedSlice(
  ctx: EngineContext,
  cursor: PartitionCursor,
  record: HeadRecord,
  read: WaitingRead & { readonly index: DelayedIndex },
): Promise<WaitingSlice> {
  const entries: WaitingEntry[] = [];
  let from = read.from;
  let skip = read.after;
  let looked: WaitingBound | undefined;
  const { items: perQuery, queries } = queriesFor(read);
  for (let query = 0; query < queries; query++) {
    const groups = await read.index.groups(cursor.partition, {
      from,
      untilMs: read.untilMs,
      limit: perQuery,
    });
    // Only what the dispatcher has not reached (what it passed, its runs and tracker tell), and
    // only as many as the page can still take: their pages are read for acknowledgements.
    const candidates = groups
      .flatMap((group) => group.entryIds.map((entryId) => undispatched(group, entryId)))
      .filter(
        (entry) =>
          entry.position.compareTo(record.head.readPosition) >= 0 &&
          // An operator moved it: it waits until the override's time (overriddenSlice lists it).
          !overrideAt(record.head, entry.position) &&
          (!skip || compareScheduled(entry, skip) > 0),
      );
    const examined = candidates.slice(0, read.limit - entries.length);
    const pages = await readPagesOf(
      ctx.store,
      cursor.cursorId,
      examined.map(({ position }) => position),
    );
    // Acknowledged before it was dispatched: an operator's acknowledgeMessage cancelled it.
    entries.push(...examined.filter((entry) => !isAcknowledged(record.head, pages, entry.position)));
    const lastExamined = examined[examined.length - 1];
    if (entries.length >= read.limit) return { entries, lookedUpTo: lastExamined };
    if (lastExamined && examined.length < candidates.length) {
      // Some were acknowledged: go on after the last one examined, in its own item.
      skip = lastExamined;
      looked = lastExamined;
      from = {
        dueAtMs: lastExamined.dueAtMs,
        ledgerId: lastExamined.ledgerId,
        entryId: lastExamined.itemStart,
      };
      continue;
    }
    const last = groups[groups.length - 1];
    if (!last || groups.length < perQuery) return { entries };
    // The next item after the last one read (its key, plus one entry).
    from = { dueAtMs: last.dueAtMs, ledgerId: last.ledgerId, entryId: last.firstEntryId + 1n };
    const end = last.entryIds.at(-1) as bigint;
    looked = { dueAtMs: last.dueAtMs, ledgerId: last.ledgerId, entryId: end, itemStart: from.entryId };
  }
  return { entries, ...(looked ? { lookedUpTo: looked } : {}) };
}

function undispatched(group: DelayedGroup, entryId: bigint): WaitingEntry {
  return {
    dueAtMs: group.dueAtMs,
    ledgerId: group.ledgerId,
    entryId,
    position: Position.of(group.ledgerId, entryId),
    deliveries: 0,
    state: { kind: 'undispatched' },
    itemStart: group.firstEntryId,
  };
}

/**
 * The entries the dispatcher has not reached whose due time an operator set (the head's overrides,
 * MAX_DUE_OVERRIDES at most), within the read, not acknowledged. Cost: none without overrides;
 * else their pages (one BatchGetItem).
 */
async function overriddenSlice(
  ctx: EngineContext,
  cursor: PartitionCursor,
  record: HeadRecord,
  read: WaitingRead,
): Promise<WaitingSlice> {
  const { head } = record;
  const candidates = (head.overrides ?? [])
    .filter((override) => override.position.compareTo(head.readPosition) >= 0)
    .map(
      ({ position, dueAtMs }): WaitingEntry => ({
        dueAtMs,
        ledgerId: position.ledgerId,
        entryId: position.entryId,
        position,
        deliveries: 0,
        state: { kind: 'undispatched', rescheduled: true },
        itemStart: position.entryId,
      }),
    )
    .filter(
      (entry) =>
        compareScheduled(entry, read.from) >= 0 &&
        entry.dueAtMs <= read.untilMs &&
        (!read.after || compareScheduled(entry, read.after) > 0),
    )
    .sort(compareScheduled);
  if (candidates.length === 0) return { entries: [] };
  const pages = await readPagesOf(
    ctx.store,
    cursor.cursorId,
    candidates.map(({ position }) => position),
  );
  const entries = candidates
    .filter((entry) => !isAcknowledged(head, pages, entry.position))
    .slice(0, read.limit);
  const last = entries[entries.length - 1];
  return entries.length >= read.limit && last ? { entries, lookedUpTo: last } : { entries };
}
