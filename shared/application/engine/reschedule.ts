import { carveRun, type DeliveryRun } from '../../domain/delivery-run.ts';
import { MAX_DUE_OVERRIDES, overrideAt, withOverride } from '../../domain/dispatch-head.ts';
import { ConflictError } from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import { isCumulativeAckType } from '../../domain/subscription-type.ts';
import type { HeadRecord } from '../../ports/dispatch-store.ts';
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
 *
 * An entry the dispatcher has not reached (a delayed message, or backlog) has no run yet: its new
 * due time is kept as an override in the head (DispatchHead.overrides), which the claim that
 * reaches the entry honours instead of its deliverAt (Shared and Key_Shared: Exclusive and
 * Failover ignore due times of first deliveries, as they ignore deliverAt).
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
  | { readonly kind: 'earlierThanPolicy'; readonly policyDueAtMs: number }
  /** Not dispatched yet, and MAX_DUE_OVERRIDES other overrides already wait for the dispatcher. */
  | { readonly kind: 'tooManyOverrides'; readonly max: number };

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
    if (!located) {
      const outcome = await overrideUndispatched(ctx, cursor, { request, record });
      if (outcome === 'conflict') continue;
      return outcome;
    }
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

/**
 * The due time of an entry the dispatcher has not reached, kept as an override in the head: from
 * the override it had, else its deliverAt when still to come, else now (it is backlog).
 * Cost: one entry read, one head write (none on a dry run).
 */
async function overrideUndispatched(
  ctx: EngineContext,
  cursor: PartitionCursor,
  input: { readonly request: RescheduleRequest; readonly record: HeadRecord },
): Promise<RescheduleOutcome | 'conflict'> {
  const { request, record } = input;
  const { position, dueAtMs } = request;
  const { head } = record;
  // No run and before the read position: acknowledged on a page, or trimmed. Exclusive and Failover
  // hand out first deliveries in log order whatever their due time.
  if (position.compareTo(head.readPosition) < 0 || isCumulativeAckType(cursor.type))
    return { kind: 'notWaiting', why: 'notDispatched' };
  const [entry] = await ctx.ledger.readEntries(position.ledgerId, position.entryId, position.entryId);
  if (!entry) return { kind: 'notWaiting', why: 'notDispatched' };
  const now = ctx.clock.nowMs();
  const deliverAt = entry.deliverAtMs !== undefined && entry.deliverAtMs > now ? entry.deliverAtMs : now;
  const current = overrideAt(head, position);
  const fromDueAtMs = current?.dueAtMs ?? deliverAt;
  if (dueAtMs < fromDueAtMs && !request.earlier)
    return { kind: 'earlierThanPolicy', policyDueAtMs: fromDueAtMs };
  if (!current && (head.overrides?.length ?? 0) >= MAX_DUE_OVERRIDES)
    return { kind: 'tooManyOverrides', max: MAX_DUE_OVERRIDES };
  const outcome = { kind: 'rescheduled' as const, fromDueAtMs, deliveries: 0 };
  if (request.dryRun) return outcome;
  const next = withOverride(head, { position, dueAtMs });
  // A claim that passed the entry meanwhile fails this write: the next attempt finds its run.
  return (await ctx.store.casHead(cursor.cursorId, record.version, next)).ok ? outcome : 'conflict';
}
