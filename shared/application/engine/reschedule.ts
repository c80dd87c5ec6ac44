import { carveRun, type DeliveryRun } from '../../domain/delivery-run.ts';
import { ConflictError } from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import type { EngineContext, PartitionCursor } from './engine-context.ts';
import {
  isAcknowledged,
  locateRun,
  lowerTrackerDue,
  readPagesOf,
  runPagesOf,
  writeRuns,
} from './pending-state.ts';

/**
 * An operator moves one waiting entry's due time (issue 24): its released run is carved around it
 * and released again with the new due time (cause `rescheduled`), a tracker entry put first (the
 * tracker's rule: the index before the write that makes it true; the old entry becomes stale and
 * the next pickup deletes it). Separate from the dispatcher: it changes only a released run.
 */

export interface RescheduleRequest {
  readonly position: Position;
  readonly dueAtMs: number;
  /** Earlier than the due time the run has (its consumer's policy, or its deliverAt) only when true. */
  readonly earlier: boolean;
  readonly dryRun: boolean;
}

export type RescheduleOutcome =
  /** Moved (or, dry run, would be) from `fromDueAtMs`; `deliveries` its count of hand-outs. */
  | { readonly kind: 'rescheduled'; readonly fromDueAtMs: number; readonly deliveries: number }
  /** Acknowledged, or never dispatched to a run (not reached, or past the read position). */
  | { readonly kind: 'notWaiting'; readonly why: 'acknowledged' | 'notDispatched' }
  /** Held by a consumer: it waits for its acknowledgement, not for a due time. */
  | { readonly kind: 'held'; readonly consumerId: string }
  /** Earlier than the run's due time, and `earlier` was not asked. */
  | { readonly kind: 'earlierThanPolicy'; readonly policyDueAtMs: number };

/**
 * Cost: the head and one or two pages (reads), one tracker Query (its last holder, kept on the new
 * tracker entry) for an entry handed out before, one tracker write, one write of the run's home,
 * one head write when the head's tracker due time must come earlier; retried on a lost
 * compare-and-set up to casAttempts times (then it answers the last conflict as an error).
 */
export async function rescheduleEntry(
  ctx: EngineContext,
  cursor: PartitionCursor,
  request: RescheduleRequest,
): Promise<RescheduleOutcome> {
  const { position, dueAtMs } = request;
  for (let attempt = 0; attempt < ctx.limits.casAttempts; attempt++) {
    const record = await ctx.store.readHead(cursor.cursorId);
    if (!record) return { kind: 'notWaiting', why: 'notDispatched' };
    const pages = await readPagesOf(ctx.store, cursor.cursorId, runPagesOf(position));
    if (isAcknowledged(record.head, pages, position)) return { kind: 'notWaiting', why: 'acknowledged' };
    const located = locateRun(record.head, pages, position);
    if (!located) return { kind: 'notWaiting', why: 'notDispatched' };
    const { run } = located;
    if (run.state.kind === 'held') return { kind: 'held', consumerId: run.state.consumerId };
    const fromDueAtMs = run.state.dueAtMs;
    if (dueAtMs < fromDueAtMs && !request.earlier)
      return { kind: 'earlierThanPolicy', policyDueAtMs: fromDueAtMs };
    const outcome = { kind: 'rescheduled' as const, fromDueAtMs, deliveries: run.deliveries };
    if (request.dryRun) return outcome;
    const state: DeliveryRun['state'] = { kind: 'released', dueAtMs, cause: 'rescheduled' };
    const pieces = carveRun(run, new Set([position.entryId]), () => ({ deliveries: run.deliveries, state }));
    const consumerId = await lastHolderOf(ctx, cursor, { position, deliveries: run.deliveries, fromDueAtMs });
    await ctx.store.putTracker(cursor.cursorId, [
      { dueAtMs, position, deliveries: run.deliveries, n: 1, ...(consumerId ? { consumerId } : {}) },
    ]);
    const written = await writeRuns(ctx.store, cursor.cursorId, {
      record,
      home: located.home,
      replaced: [run],
      by: pieces,
    });
    if (!written) continue;
    await lowerTrackerDue(ctx, cursor, dueAtMs);
    return outcome;
  }
  throw new ConflictError(
    `The subscription's delivery state kept changing while ${position.toString()} was rescheduled; nothing was changed, try again`,
  );
}

/** Tracker items at the old due time one lookup of the last holder reads at most. */
const HOLDER_LOOKUP_ITEMS = 100;

/**
 * The consumer the entry last went to, as the tracker entry of its old due time names it, so a
 * rescheduled entry keeps it (none: never handed out, or not among the first HOLDER_LOOKUP_ITEMS
 * items of that due time and ledger). Cost: one Query, none for an entry never handed out.
 */
async function lastHolderOf(
  ctx: EngineContext,
  cursor: PartitionCursor,
  entry: { readonly position: Position; readonly deliveries: number; readonly fromDueAtMs: number },
): Promise<string | undefined> {
  const { position, deliveries, fromDueAtMs } = entry;
  if (deliveries === 0) return undefined;
  // The key before every item of that due time in the position's ledger.
  const after = { dueAtMs: fromDueAtMs, position: Position.of(position.ledgerId, 0n), deliveries: 0, n: 0 };
  const items = await ctx.store.dueTracker(cursor.cursorId, fromDueAtMs, HOLDER_LOOKUP_ITEMS, { after });
  const covering = items.find(
    (item) =>
      item.position.ledgerId === position.ledgerId &&
      item.position.entryId <= position.entryId &&
      position.entryId < item.position.entryId + BigInt(item.n) &&
      item.deliveries === deliveries &&
      item.consumerId !== undefined,
  );
  return covering?.consumerId;
}
