import { carveRun, type DeliveryRun, runPositions } from '../../domain/delivery-run.ts';
import { markDeleteTo } from '../../domain/dispatch-head.ts';
import { PreconditionFailedError, ServiceUnavailableError } from '../../domain/errors.ts';
import { ConsumerFencedError } from '../../domain/ownership.ts';
import { Position } from '../../domain/position.ts';
import type { HeadRecord, TrackerEntry } from '../../ports/dispatch-store.ts';
import { deadLetterEntries } from './dead-letter-claim.ts';
import type { DeadLetterProducer, EngineContext, PartitionCursor } from './engine-context.ts';
import {
  isAcknowledged,
  type LocatedRun,
  locateRun,
  lowerTrackerDue,
  type PageMap,
  pageKey,
  readPagesOf,
  runPagesOf,
  writeRuns,
} from './pending-state.ts';
import { readEntriesAt } from './redelivery-tracker.ts';

/**
 * Individual acknowledgement: each page touched gets the positions added to its acks (commutative,
 * idempotent; runs are not touched: an entry's pending state is its run minus its ack). `byId`:
 * the caller cannot prove the entries were dispatched (an ack by message id, the admin's
 * acknowledgeMessage, skip): positions at or after the read position raise the head's early-ack
 * mark after the pages are written, so a later claim reads those pages before handing them out.
 * Cost: one write per page; by id, also one head read and (rarely) one head write.
 */
export async function acknowledge(
  ctx: EngineContext,
  cursor: PartitionCursor,
  positions: readonly Position[],
  options: { readonly byId: boolean },
): Promise<void> {
  if (positions.length === 0) return;
  const record = options.byId ? await ctx.store.readHead(cursor.cursorId) : undefined;
  await ctx.store.acknowledge(cursor.cursorId, positions, ctx.clock.nowMs());
  if (!record) return;
  const ahead = positions.filter((position) => position.compareTo(record.head.readPosition) >= 0);
  if (ahead.length === 0) return;
  const highest = ahead.reduce((a, b) => (a.compareTo(b) >= 0 ? a : b));
  await ctx.store.raiseAheadAck(cursor.cursorId, highest);
}

/**
 * Cumulative acknowledgement (Exclusive, Failover): mark-delete moves forward to `position` in one
 * compare-and-set of the head that also checks the caller is still the owner (I6), and runs it
 * passes are dropped. As in Pulsar, a position not dispatched yet is accepted (the client says so);
 * the dispatcher's order is what keeps a well-behaved client's cumulative ack over delivered
 * entries only (I3).
 * Cost: one head read, one head write (more under contention, at most casAttempts).
 */
export async function acknowledgeCumulative(
  ctx: EngineContext,
  cursor: PartitionCursor,
  consumerId: string,
  position: Position,
): Promise<void> {
  let record = await ctx.store.readHead(cursor.cursorId);
  for (let attempt = 0; attempt < ctx.limits.casAttempts && record; attempt++) {
    const head = record.head;
    if (head.owner?.consumerId !== consumerId) {
      throw new ConsumerFencedError(
        `Consumer ${consumerId} is not the active consumer (epoch ${head.epoch}): its cumulative acknowledgement is refused`,
      );
    }
    if (position.compareTo(head.markDelete) <= 0) return;
    const next = { ...markDeleteTo(head, position), lastAckedAtMs: ctx.clock.nowMs() };
    const written = await ctx.store.casHead(cursor.cursorId, record.version, next);
    if (written.ok) return;
    record = written.current;
  }
  if (record) throw new PreconditionFailedError('The subscription is busy: acknowledge again');
}

/** One message to nack: its position and, with a delivery handle, the count it was handed with. */
export interface NackItem {
  readonly position: Position;
  readonly redeliveryCount?: number;
}

export interface NackResult {
  /** When the released entries are due (for timers that wake receivers). */
  readonly dueAtMs: number[];
  /** The entries released (those the consumer held; the others were left alone). */
  readonly released: Position[];
  /** Entries the consumer's dead-letter policy took instead (published and acknowledged). */
  readonly deadLettered: Position[];
}

/**
 * A nack contends on the head with every claim and with the consumer's other nacks (a client that
 * nacks a batch sends them at once): it tries this many times casAttempts, pausing after each lost
 * race (ctx.pauseAfterConflict), before it answers 503.
 */
const NACK_ROUNDS = 8;

/** A negative acknowledgement of a consumer's entries on one partition. */
export interface NackRequest {
  readonly cursor: PartitionCursor;
  readonly consumerId: string;
  readonly items: readonly NackItem[];
  readonly delayMs: (redeliveryCount: number) => number;
  /** The consumer's dead-letter policy: entries past its maxRedeliverCount go there instead. */
  readonly deadLetter?: DeadLetterProducer;
}

/**
 * Negative acknowledgement (PIP-106): each entry the consumer holds (with the handle's count, when
 * given) is released to the tracker, due after the consumer's backoff for the count it was handed
 * with; past the dead-letter policy's maxRedeliverCount it goes to the dead-letter topic instead
 * (deadLetterEntries: claimed first, so a nack racing another nack or the ack timeout's pickup
 * publishes once). Entries the consumer does not hold (acknowledged, redelivered since, another
 * consumer's) are left alone. Dead letters go first, so a refused one (DeadLetterRefusedError,
 * 403) leaves every entry as it was.
 * Cost: the head and the pages of the runs (reads), one tracker write per released run, one write
 * per run home (head or page), and one head write to lower the due time for a page's run; again
 * per lost race (at most casAttempts × NACK_ROUNDS attempts).
 * @throws ServiceUnavailableError (503) when every attempt lost its race, rather than a success
 * with entries still held: the client sends the nack again (what is no longer held is left alone).
 */
export async function negativeAcknowledge(ctx: EngineContext, request: NackRequest): Promise<NackResult> {
  const result: NackResult = { dueAtMs: [], released: [], deadLettered: [] };
  // The backoff counts from the nack's arrival, whatever attempt writes it.
  const now = ctx.clock.nowMs();
  const attempts = ctx.limits.casAttempts * NACK_ROUNDS;
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await ctx.pauseAfterConflict?.(attempt - 1);
    const record = await ctx.store.readHead(request.cursor.cursorId);
    if (!record) return result;
    const pages = await readPagesOf(
      ctx.store,
      request.cursor.cursorId,
      request.items.flatMap((item) => [...runPagesOf(item.position), item.position]),
    );
    const byRun = heldByConsumer(record, pages, request);
    if (byRun.size === 0) return result;
    if (!(await releaseOrDeadLetter(ctx, { request, record, byRun, result, now }))) return result;
  }
  // Never a silent success: the entries are still held, and only a lapse would bring them back.
  throw new ServiceUnavailableError(
    `The subscription of cursor ${request.cursor.cursorId} is too busy: the negative acknowledgement did not get through; send it again`,
  );
}

/** The key of the head among a nack's run homes (the pages' keys are pageKey's). */
// Stryker disable next-line StringLiteral: equivalent, any key that is no page's names the head
const HEAD_HOME = 'head';

type NackGroups = Map<DeliveryRun, { located: LocatedRun; ids: Set<bigint> }>;

/** The nacked entries the consumer holds, by run (with the handle's count, when given). */
function heldByConsumer(record: HeadRecord, pages: PageMap, request: NackRequest): NackGroups {
  const byRun: NackGroups = new Map();
  for (const item of request.items) {
    if (isAcknowledged(record.head, pages, item.position)) continue;
    const located = locateRun(record.head, pages, item.position);
    if (!located || located.run.state.kind !== 'held') continue;
    if (located.run.state.consumerId !== request.consumerId) continue;
    if (item.redeliveryCount !== undefined && located.run.deliveries !== item.redeliveryCount + 1) continue;
    const group = byRun.get(located.run) ?? { located, ids: new Set<bigint>() };
    group.ids.add(item.position.entryId);
    byRun.set(located.run, group);
  }
  return byRun;
}

/**
 * One attempt: each run's nacked entries dead-lettered (first) or released, the released runs of
 * one home (the head, a page) in one write: written one run at a time, the second run's write on a
 * page carried the version the first had just replaced, lost to this nack's own write, and a nack
 * of k runs of a page took k attempts (past casAttempts, runs were left held).
 * @returns true when a write lost a race (the caller reads again and retries what is left).
 */
async function releaseOrDeadLetter(
  ctx: EngineContext,
  input: {
    readonly request: NackRequest;
    readonly record: HeadRecord;
    readonly byRun: NackGroups;
    readonly result: NackResult;
    /** When the nack arrived: its backoff counts from then. */
    readonly now: number;
  },
): Promise<boolean> {
  const { request, byRun, result } = input;
  const { cursor, deadLetter } = request;
  let current: HeadRecord = input.record;
  const pastMax = (run: DeliveryRun) =>
    deadLetter !== undefined && run.deliveries > deadLetter.maxRedeliverCount;
  // Dead letters first: a refused one (DeadLetterRefusedError) is thrown before anything is released.
  const homes = new Map<string, NackGroup[]>();
  for (const [run, { located, ids }] of byRun) {
    if (!(pastMax(run) && deadLetter)) {
      const home = located.home.kind === 'head' ? HEAD_HOME : pageKey(located.home.page);
      homes.set(home, [...(homes.get(home) ?? []), { run, located, ids }]);
      continue;
    }
    const positions = runPositions(run).filter((position) => ids.has(position.entryId));
    const found = await readEntriesAt(ctx, positions);
    const entries = positions.flatMap((position) => found.get(position.toString()) ?? []);
    const step = { cursor, record: current, located, entries, deadLetter };
    const done = entries.length === positions.length ? await deadLetterEntries(ctx, step) : undefined;
    if (done?.kind !== 'published') return true;
    current = done.record ?? (await refreshed(ctx, cursor, current));
    result.deadLettered.push(...positions);
  }
  let lowestDue: number | undefined;
  for (const [home, groups] of homes) {
    const released = await releaseRuns(ctx, { ...input, record: current, groups });
    if (!released) return true;
    // The head's write lowered its own due time; a page's release lowers it after.
    if (home !== HEAD_HOME) lowestDue = Math.min(lowestDue ?? Infinity, ...released.dueAtMs);
    result.dueAtMs.push(...released.dueAtMs);
    result.released.push(...released.positions);
  }
  if (lowestDue !== undefined) await lowerTrackerDue(ctx, cursor, lowestDue);
  return false;
}

type NackGroup = { readonly run: DeliveryRun; readonly located: LocatedRun; readonly ids: Set<bigint> };

/**
 * Releases the nacked entries of runs that share one home: their tracker entries first, then the
 * runs, in one compare-and-set of that home.
 * @returns what it released, or undefined when the write lost a race (nothing released).
 */
async function releaseRuns(
  ctx: EngineContext,
  input: {
    readonly request: NackRequest;
    readonly record: HeadRecord;
    readonly groups: readonly NackGroup[];
    readonly now: number;
  },
): Promise<{ dueAtMs: number[]; positions: Position[] } | undefined> {
  const { request, record, groups, now } = input;
  const dueAtMs: number[] = [];
  const positions: Position[] = [];
  const pieces: DeliveryRun[] = [];
  const entries: TrackerEntry[] = [];
  for (const { run, ids } of groups) {
    const due = now + request.delayMs(run.deliveries - 1);
    const state: DeliveryRun['state'] = { kind: 'released', dueAtMs: due };
    const carved = carveRun(run, ids, () => ({ deliveries: run.deliveries, state }));
    pieces.push(...carved);
    for (const piece of carved.filter((candidate) => candidate.state === state)) {
      entries.push({
        dueAtMs: due,
        position: Position.of(piece.ledgerId, piece.entryId),
        deliveries: piece.deliveries,
        n: piece.n,
        consumerId: request.consumerId,
      });
    }
    dueAtMs.push(due);
    positions.push(...runPositions(run).filter((position) => ids.has(position.entryId)));
  }
  await ctx.store.putTracker(request.cursor.cursorId, entries);
  const written = await writeRuns(ctx.store, request.cursor.cursorId, {
    record,
    home: (groups[0] as NackGroup).located.home,
    replaced: groups.map(({ run }) => run),
    by: pieces,
    headChanges: { trackerDueAtMs: Math.min(record.head.trackerDueAtMs ?? Infinity, ...dueAtMs) },
  });
  return written ? { dueAtMs, positions } : undefined;
}

async function refreshed(
  ctx: EngineContext,
  cursor: PartitionCursor,
  fallback: HeadRecord,
): Promise<HeadRecord> {
  return (await ctx.store.readHead(cursor.cursorId)) ?? fallback;
}

/** Whether `position` is acknowledged on the cursor (reads the head and its page). */
export async function isPositionAcknowledged(
  ctx: EngineContext,
  cursor: PartitionCursor,
  position: Position,
): Promise<boolean> {
  const record = await ctx.store.readHead(cursor.cursorId);
  if (!record) return false;
  const pages = await readPagesOf(ctx.store, cursor.cursorId, [position]);
  return isAcknowledged(record.head, pages, position);
}
