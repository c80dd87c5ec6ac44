import { carveRun, type DeliveryRun } from '../../domain/delivery-run.ts';
import type { DispatchHead } from '../../domain/dispatch-head.ts';
import { nextInLedger, Position } from '../../domain/position.ts';
import {
  DISPATCH_PAGE_SIZE,
  type HeadRecord,
  type PageState,
  type TrackerEntry,
} from '../../ports/dispatch-store.ts';
import type { StoredEntry } from '../../ports/ledger.ts';
import { type ByteBudget, ByteTally } from './byte-budget.ts';
import type { Delivery, DispatchConsumer, EngineContext, PartitionCursor } from './engine-context.ts';
import {
  isAcknowledged,
  type LocatedRun,
  locateRun,
  type PageMap,
  pageKey,
  readPagesOf,
  runPagesOf,
  withRunsReplaced,
} from './pending-state.ts';
import { readEntriesAt } from './redelivery-tracker.ts';

export type ReplayOutcome =
  | {
      readonly kind: 'replayed';
      readonly deliveries: readonly Delivery[];
      readonly timers: readonly number[];
      /**
       * The ack timeouts of entries handed out with the last count their consumer's dead-letter
       * policy allows (or past it): the server dead-letters them when due (scheduleDeadLetterTimers),
       * as it does those a tracker pickup hands out.
       */
      readonly deadLetterTimers?: readonly TrackerEntry[];
      /** The step stopped at an entry the answer's byte budget could not carry (replayFrom is there). */
      readonly full?: boolean;
    }
  | {
      readonly kind: 'conflict';
      readonly deliveries: readonly Delivery[];
      readonly timers: readonly number[];
      readonly current: HeadRecord | undefined;
    };

/**
 * One step of an Exclusive/Failover rewind (Pulsar's cursor rewind after a takeover, a close or
 * redeliverUnacknowledged): from `replayFrom` in log order, every unacknowledged entry before the
 * read position that is held (by anyone) or released and due is handed to the owner again with
 * the count of its earlier deliveries; released entries not yet due are left to the tracker (a nack
 * backoff is never cut short). At most one page per step; the head's `replayFrom` moves in the same
 * compare-and-set that records the owner's runs there (runs in a page: that page first), and
 * first deliveries wait until it reaches the read position (I3). With a byte budget, the step stops
 * before the first entry the answer cannot carry, and the replay resumes there.
 */
export async function replayStep(
  ctx: EngineContext,
  request: {
    readonly cursor: PartitionCursor;
    readonly consumer: DispatchConsumer;
    readonly record: HeadRecord;
    readonly max: number;
    readonly budget?: ByteBudget;
  },
): Promise<ReplayOutcome> {
  const { cursor, consumer, record } = request;
  const head = record.head;
  const nowMs = ctx.clock.nowMs();
  const from = await normalize(ctx, cursor, head.replayFrom as Position);
  const to = head.readPosition;
  const positions = stepPositions(from, to, await ledgerSize(ctx, cursor, from.ledgerId));
  if (positions.length === 0) return finish(ctx, cursor, record, from.compareTo(to) >= 0 ? undefined : from);
  const pages = await readPagesOf(ctx.store, cursor.cursorId, positions.flatMap(runPagesOf));
  const entries = await readEntriesAt(ctx, positions);
  const { taken, consumedUpTo, full } = chooseReplayed({
    head,
    pages,
    entries,
    positions,
    max: request.max,
    nowMs,
    ...(request.budget ? { budget: request.budget } : {}),
  });
  // The answer cannot carry the first entry to replay: nothing moves, nothing to write.
  if (full && consumedUpTo === undefined) return { kind: 'replayed', deliveries: [], timers: [], full };
  const carved = carveReplayed({ head, taken, from, consumer, nowMs });
  await ctx.store.putTracker(cursor.cursorId, carved.trackerEntries);
  for (const { page, runs } of carved.pageChanges.values()) {
    if (!(await ctx.store.casPage(cursor.cursorId, page, page.version, { runs }))) {
      return {
        kind: 'conflict',
        deliveries: [],
        timers: [],
        current: await ctx.store.readHead(cursor.cursorId),
      };
    }
  }
  const next = consumedUpTo ? nextInLedger(consumedUpTo) : from;
  const { replayFrom: _old, ...rest } = head;
  const nextHead: DispatchHead = {
    ...rest,
    runs: carved.headRuns,
    ...(next.compareTo(to) < 0 ? { replayFrom: next } : {}),
  };
  const written = await ctx.store.casHead(cursor.cursorId, record.version, nextHead);
  if (!written.ok) return { kind: 'conflict', deliveries: [], timers: [], current: written.current };
  const deliveries = taken.map(({ position, located }) => ({
    position,
    redeliveryCount: located?.run.deliveries ?? 0,
    entry: entries.get(position.toString()) as NonNullable<ReturnType<typeof entries.get>>,
  }));
  const timers = carved.trackerEntries.map((entry) => entry.dueAtMs);
  return { kind: 'replayed', deliveries, timers, deadLetterTimers: carved.deadLetterTimers, full };
}

interface Replayed {
  readonly position: Position;
  readonly located: LocatedRun | undefined;
}

/**
 * The entries of one step handed out again, in log order: every unacknowledged one that is held or
 * released and due, stopping at one not yet visible or one the byte budget cannot carry (`full`);
 * and how far the step got.
 */
function chooseReplayed(input: {
  readonly head: DispatchHead;
  readonly pages: PageMap;
  readonly entries: ReadonlyMap<string, StoredEntry>;
  readonly positions: readonly Position[];
  readonly max: number;
  readonly nowMs: number;
  readonly budget?: ByteBudget;
}): { taken: Replayed[]; consumedUpTo: Position | undefined; full: boolean } {
  const { head, pages, entries } = input;
  const taken: Replayed[] = [];
  const tally = new ByteTally(input.budget);
  let consumedUpTo: Position | undefined;
  for (const position of input.positions) {
    if (taken.length >= input.max) break;
    if (isAcknowledged(head, pages, position)) {
      consumedUpTo = position;
      continue;
    }
    const located = locateRun(head, pages, position);
    if (located?.run.state.kind === 'released' && located.run.state.dueAtMs > input.nowMs) {
      consumedUpTo = position;
      continue;
    }
    const entry = entries.get(position.toString());
    if (!entry) break; // not visible yet: never skipped
    if (!tally.admits({ position, redeliveryCount: located?.run.deliveries ?? 0, entry })) break;
    taken.push({ position, located });
    consumedUpTo = position;
  }
  return { taken, consumedUpTo, full: tally.full };
}

/**
 * The runs after the step: each run the taken entries come from carved once, the taken part held
 * by the owner with its count + 1 (in the head, or in the page the run lives in), and the tracker
 * entries of their ack timeouts.
 */
function carveReplayed(input: {
  readonly head: DispatchHead;
  readonly taken: readonly Replayed[];
  readonly from: Position;
  readonly consumer: DispatchConsumer;
  readonly nowMs: number;
}): {
  headRuns: readonly DeliveryRun[];
  pageChanges: Map<string, { page: PageState; runs: readonly DeliveryRun[] }>;
  trackerEntries: TrackerEntry[];
  deadLetterTimers: TrackerEntry[];
} {
  const { consumer, nowMs } = input;
  // Group the taken entries by the run they come from, and carve each run once.
  const byRun = new Map<DeliveryRun | undefined, { located: LocatedRun | undefined; ids: Set<bigint> }>();
  for (const { position, located } of input.taken) {
    const key = located?.run;
    const group = byRun.get(key) ?? { located, ids: new Set<bigint>() };
    group.ids.add(position.entryId);
    byRun.set(key, group);
  }
  let headRuns = input.head.runs;
  const pageChanges = new Map<string, { page: PageState; runs: readonly DeliveryRun[] }>();
  const trackerEntries: TrackerEntry[] = [];
  const deadLetterTimers: TrackerEntry[] = [];
  const limit = consumer.deadLetter?.maxRedeliverCount;
  for (const [run, { located, ids }] of byRun) {
    const deliveries = run?.deliveries ?? 0;
    const timeoutMs = consumer.ackTimeoutMs(deliveries);
    const held: DeliveryRun['state'] = {
      kind: 'held',
      consumerId: consumer.consumerId,
      deliveredAtMs: nowMs,
      ...(timeoutMs > 0 ? { timeoutAtMs: nowMs + timeoutMs } : {}),
    };
    const source: DeliveryRun = run ?? {
      ledgerId: input.from.ledgerId,
      entryId: [...ids][0] as bigint,
      n: ids.size,
      deliveries: 0,
      state: held,
    };
    const pieces = carveRun(source, ids, () => ({ deliveries: deliveries + 1, state: held }));
    if (timeoutMs > 0) {
      for (const piece of pieces.filter((candidate) => candidate.state === held)) {
        const timeout = {
          dueAtMs: nowMs + timeoutMs,
          position: Position.of(piece.ledgerId, piece.entryId),
          deliveries: piece.deliveries,
          n: piece.n,
        };
        trackerEntries.push(timeout);
        // Its next hand-out would pass maxRedeliverCount: dead-lettered on the server's timer.
        if (limit !== undefined && piece.deliveries > limit) deadLetterTimers.push(timeout);
      }
    }
    if (!located || located.home.kind === 'head') {
      headRuns = withRunsReplaced(headRuns, run ? [run] : [], pieces);
    } else {
      const key = pageKey(located.home.page);
      const change = pageChanges.get(key) ?? { page: located.home.page, runs: located.home.page.runs };
      pageChanges.set(key, {
        page: change.page,
        runs: withRunsReplaced(change.runs, [run as DeliveryRun], pieces),
      });
    }
  }
  return { headRuns, pageChanges, trackerEntries, deadLetterTimers };
}

async function finish(
  ctx: EngineContext,
  cursor: PartitionCursor,
  record: HeadRecord,
  replayFrom: Position | undefined,
): Promise<ReplayOutcome> {
  const { replayFrom: _old, ...rest } = record.head;
  const head: DispatchHead = replayFrom ? { ...rest, replayFrom } : rest;
  const written = await ctx.store.casHead(cursor.cursorId, record.version, head);
  return written.ok
    ? { kind: 'replayed', deliveries: [], timers: [] }
    : { kind: 'conflict', deliveries: [], timers: [], current: written.current };
}

/** A replay position past the end of a rolled-over ledger moves to the next ledger's first entry. */
async function normalize(ctx: EngineContext, cursor: PartitionCursor, from: Position): Promise<Position> {
  const ledgers = (await ctx.ledger.state(cursor.partition))?.ledgers ?? [];
  let position = from;
  for (let i = 0; i < ledgers.length; i++) {
    const ledger = ledgers[i] as { ledgerId: bigint; entries: bigint };
    if (ledger.ledgerId < position.ledgerId) continue;
    if (ledger.ledgerId > position.ledgerId) position = Position.of(ledger.ledgerId, 0n);
    // Past the end of the last ledger too: the position stays (nothing is there yet).
    if (position.entryId < ledger.entries) return position;
  }
  return position;
}

async function ledgerSize(ctx: EngineContext, cursor: PartitionCursor, ledgerId: bigint): Promise<bigint> {
  const ledgers = (await ctx.ledger.state(cursor.partition))?.ledgers ?? [];
  return ledgers.find((ledger) => ledger.ledgerId === ledgerId)?.entries ?? 0n;
}

/** The positions of one step: from `from` to the end of its page, before `to` and the ledger's end. */
function stepPositions(from: Position, to: Position, size: bigint): Position[] {
  const pageEnd = (from.entryId / DISPATCH_PAGE_SIZE + 1n) * DISPATCH_PAGE_SIZE;
  let end = pageEnd < size ? pageEnd : size;
  if (to.ledgerId === from.ledgerId && to.entryId < end) end = to.entryId;
  if (from.compareTo(to) >= 0) return [];
  const positions: Position[] = [];
  for (let id = from.entryId; id < end; id++) positions.push(Position.of(from.ledgerId, id));
  return positions;
}
