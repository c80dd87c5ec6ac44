import { compareRuns, type DeliveryRun, runEnd } from '../../domain/delivery-run.ts';
import type { DispatchHead } from '../../domain/dispatch-head.ts';
import { dropPassedOverrides, overrideAt, resetOverdue } from '../../domain/dispatch-head.ts';
import { nextInLedger, Position } from '../../domain/position.ts';
import { bump } from '../../domain/rate-counter.ts';
import { isCumulativeAckType } from '../../domain/subscription-type.ts';
import type { HeadRecord, TrackerEntry } from '../../ports/dispatch-store.ts';
import type { StoredEntry } from '../../ports/ledger.ts';
import { type ByteBudget, ByteTally } from './byte-budget.ts';
import { windowSize } from './dispatcher-window.ts';
import {
  bytesOf,
  type Delivery,
  type DispatchConsumer,
  type EngineContext,
  type KeySharedMember,
  MAX_DISPATCH,
  type PartitionCursor,
} from './engine-context.ts';
import { foldStep } from './fold.ts';
import { routesTo } from './key-shared-routing.ts';
import { isAcknowledged, type PageMap, readPagesOf, spillIfFull } from './pending-state.ts';
import { finishReset } from './reset-cursor.ts';

/**
 * First deliveries: the dispatcher's step that hands out entries from the read position, in log
 * order, recording them as held in the same compare-and-set that moves the read position (I2, I4).
 */

/** Ids a dead publisher allocated that one receive acknowledges at most (the next one goes on). */
const MAX_ABANDONED_PER_CALL = 10_000;

/** What one claim of first deliveries did. */
export type ClaimOutcome =
  | {
      readonly kind: 'claimed';
      readonly deliveries: readonly Delivery[];
      readonly timers: readonly number[];
      /** Nothing was found at the read position (it is at the end of what is written). */
      readonly atEnd: boolean;
      /** The claim stopped at an entry the answer's byte budget could not carry. */
      readonly full?: boolean;
    }
  | {
      readonly kind: 'conflict';
      readonly current: HeadRecord | undefined;
      /** The first entry the lost compare-and-set would have handed out (none: no claim was tried). */
      readonly wanted?: Position;
    };

/** One claim of first deliveries for one consumer, on the head it read. */
export interface ClaimRequest {
  readonly cursor: PartitionCursor;
  readonly consumer: DispatchConsumer;
  readonly record: HeadRecord;
  readonly max: number;
  readonly ownerChanges: Partial<DispatchHead>;
  readonly members?: readonly KeySharedMember[];
  /** What the answer can still carry; the claim stops before the first delivery over it. */
  readonly budget?: ByteBudget;
}

/**
 * First deliveries from the read position, in log order: one compare-and-set of the head moves
 * the read position past what it considered and records it as held by this consumer (delayed
 * entries and, on Key_Shared, entries of other members' keys as released to the tracker).
 */
export async function claimFirstDeliveries(ctx: EngineContext, request: ClaimRequest): Promise<ClaimOutcome> {
  const { cursor, consumer, record } = request;
  const head = record.head;
  const now = ctx.clock.nowMs();
  if (head.resetting) {
    // A reset is clearing the pages it rewound over: nothing is handed out until it is done (its
    // resetter died: finish it here).
    if (!resetOverdue(head, now)) return renewOnly(ctx, request, false);
    await finishReset(ctx, cursor);
    return { kind: 'conflict', current: await ctx.store.readHead(cursor.cursorId) };
  }
  const room = await windowRoom(ctx, cursor, head);
  if (room <= 0) {
    // At the cap: fold what was acknowledged (maintenance would, within a minute), then go on
    // with the folded head, or pause while the window really is full (I7).
    const folded = await foldStep(ctx, cursor);
    if (!folded.markDelete) return renewOnly(ctx, request, false);
    return { kind: 'conflict', current: await ctx.store.readHead(cursor.cursorId) };
  }
  const max = Math.min(request.max, room);
  const found = await entriesAtReadPosition(ctx, cursor, head, Math.min(MAX_DISPATCH, max));
  if (found.entries.length === 0 && found.readPosition.equals(head.readPosition)) {
    return renewOnly(ctx, request, true);
  }
  let pages: PageMap = new Map();
  const positions = found.entries.map((entry) => entry.position);
  if (record.aheadAck && positions.some((position) => position.compareTo(record.aheadAck as Position) <= 0)) {
    pages = await readPagesOf(ctx.store, cursor.cursorId, positions);
  }
  const plan = planFirstDeliveries({
    head,
    pages,
    entries: found.entries,
    max,
    consumer,
    type: cursor.type,
    nowMs: now,
    maxNewRuns: ctx.limits.maxHeadRuns,
    ...(request.members ? { members: request.members } : {}),
    ...(request.budget ? { budget: request.budget } : {}),
  });
  if (plan.nextReadPosition === undefined && found.entries.length > 0) {
    // The first entry does not fit what the answer can still carry: nothing to write.
    const renewed = await renewOnly(ctx, request, false);
    return renewed.kind === 'claimed' ? { ...renewed, full: true } : renewed;
  }
  const readPosition = plan.nextReadPosition ?? found.readPosition;
  await ctx.store.putTracker(cursor.cursorId, plan.trackerEntries);
  const dues = plan.trackerEntries.map((entry) => entry.dueAtMs);
  const trackerDueAtMs = minDue(head.trackerDueAtMs, ...dues);
  // An operator's due time on an entry this claim passed is in its run now.
  const next: DispatchHead = dropPassedOverrides({
    ...head,
    ...request.ownerChanges,
    readPosition,
    // The claim's runs start at the read position, after every run of the head: sorting keeps
    // the order whatever a run left behind there.
    runs: [...head.runs, ...plan.runs].sort(compareRuns),
    ...(trackerDueAtMs !== undefined ? { trackerDueAtMs } : {}),
    ...(plan.routedAtMs !== undefined ? { routedAtMs: plan.routedAtMs } : {}),
    // Counted in the claim's own write: first deliveries cost no write of their own.
    ...(plan.deliveries.length > 0
      ? { delivered: bump(head.delivered, plan.deliveries.length, bytesOf(plan.deliveries), now) }
      : {}),
  });
  const written = await ctx.store.casHead(cursor.cursorId, record.version, next);
  if (!written.ok) {
    const wanted = found.entries[0]?.position;
    return { kind: 'conflict', current: written.current, ...(wanted ? { wanted } : {}) };
  }
  await spillIfFull(
    ctx.store,
    cursor.cursorId,
    { ...record, head: next, version: record.version + 1 },
    ctx.limits.maxHeadRuns,
  );
  return { kind: 'claimed', deliveries: plan.deliveries, timers: dues, atEnd: false, full: plan.full };
}

async function renewOnly(ctx: EngineContext, request: ClaimRequest, atEnd: boolean): Promise<ClaimOutcome> {
  const nothing: ClaimOutcome = { kind: 'claimed', deliveries: [], timers: [], atEnd };
  if (Object.keys(request.ownerChanges).length === 0) return nothing;
  const next = { ...request.record.head, ...request.ownerChanges };
  const written = await ctx.store.casHead(request.cursor.cursorId, request.record.version, next);
  return written.ok ? nothing : { kind: 'conflict', current: written.current };
}

/**
 * How many more entries first deliveries may hand out before the subscription reaches its cap
 * of unacknowledged entries (Pulsar's maxUnackedMessagesPerSubscription), measured by the window
 * from mark-delete to the read position (windowSize: conservative, a message stuck at mark-delete
 * pauses dispatch once the cap more were dispatched). On Exclusive and Failover the one active
 * consumer holds the whole window, so Pulsar's maxUnackedMessagesPerConsumer caps it too.
 */
async function windowRoom(ctx: EngineContext, cursor: PartitionCursor, head: DispatchHead): Promise<number> {
  const cap = isCumulativeAckType(cursor.type)
    ? Math.min(ctx.limits.maxUnackedPerSubscription, ctx.limits.maxUnackedPerConsumer)
    : ctx.limits.maxUnackedPerSubscription;
  return cap - (await windowSize(ctx, cursor, head));
}

function minDue(...dues: (number | undefined)[]): number | undefined {
  const defined = dues.filter((due): due is number => due !== undefined);
  return defined.length === 0 ? undefined : Math.min(...defined);
}

/**
 * The written entries from the read position on, contiguous, at most `window`: across ledgers
 * rolled over, and past ids allocated but never written once an entry written after them is
 * `abandonedIdMs` old (those are acknowledged here, before the read position passes them).
 * `readPosition` is where those entries start (the head's, or later past rolled ledgers and
 * abandoned ids).
 */
async function entriesAtReadPosition(
  ctx: EngineContext,
  cursor: PartitionCursor,
  head: DispatchHead,
  window: number,
): Promise<{ readPosition: Position; entries: StoredEntry[] }> {
  let readPosition = maxPosition(head.readPosition, nextInLedger(head.markDelete));
  for (let hops = 0; hops < 8; hops++) {
    const read = await ctx.ledger.readEntries(
      readPosition.ledgerId,
      readPosition.entryId,
      readPosition.entryId + BigInt(window) - 1n,
      { consistent: false },
    );
    const entries = contiguousFrom(readPosition, read);
    if (entries.length > 0) return { readPosition, entries };
    const state = await (ctx.recentState ?? ((partition) => ctx.ledger.state(partition)))(cursor.partition);
    const ledgers = state?.ledgers ?? [];
    const index = ledgers.findIndex((ledger) => ledger.ledgerId === readPosition.ledgerId);
    const ledger = ledgers[index];
    if (!ledger) {
      // The read position names a ledger before the first one kept (or none yet): start at the first.
      const first = ledgers.find((candidate) => candidate.ledgerId > readPosition.ledgerId);
      if (!first) return { readPosition, entries: [] };
      readPosition = Position.of(first.ledgerId, 0n);
      continue;
    }
    if (readPosition.entryId >= ledger.entries) {
      const following = ledgers[index + 1];
      if (!following) return { readPosition, entries: [] }; // caught up
      readPosition = Position.of(following.ledgerId, 0n);
      continue;
    }
    // Allocated, not visible: being written, or its publisher died. The first entry written
    // after it (in this ledger, or in a later one when this one was rolled over) tells which.
    let later = read[0] ?? (await ctx.ledger.firstWrittenAfter(readPosition.ledgerId, readPosition.entryId));
    for (const following of ledgers.slice(index + 1)) {
      if (later) break;
      later = await ctx.ledger.firstWrittenAfter(following.ledgerId, -1n);
    }
    if (!later || later.publishTimeMs > ctx.clock.nowMs() - ctx.limits.abandonedIdMs) {
      return { readPosition, entries: [] };
    }
    const abandoned: Position[] = [];
    const holeEnd =
      later.position.ledgerId === readPosition.ledgerId ? later.position.entryId : ledger.entries;
    for (let id = readPosition.entryId; id < holeEnd && abandoned.length < MAX_ABANDONED_PER_CALL; id++) {
      abandoned.push(Position.of(readPosition.ledgerId, id));
    }
    await ctx.store.acknowledge(cursor.cursorId, abandoned);
    readPosition = nextInLedger(abandoned[abandoned.length - 1] as Position);
  }
  return { readPosition, entries: [] };
}

function contiguousFrom(start: Position, read: readonly StoredEntry[]): StoredEntry[] {
  const entries: StoredEntry[] = [];
  let expected = start.entryId;
  for (const entry of [...read].sort((a, b) => Position.compare(a.position, b.position))) {
    if (entry.position.ledgerId !== start.ledgerId || entry.position.entryId !== expected) break;
    entries.push(entry);
    expected += 1n;
  }
  return entries;
}

function maxPosition(a: Position, b: Position): Position {
  return a.compareTo(b) >= 0 ? a : b;
}

export interface FirstDeliveryPlan {
  /** New runs for the head, in position order. */
  readonly runs: DeliveryRun[];
  readonly deliveries: Delivery[];
  readonly trackerEntries: TrackerEntry[];
  /** The read position after what was considered; undefined when nothing was. */
  readonly nextReadPosition?: Position;
  readonly routedAtMs?: number;
  /** The plan stopped at a delivery the byte budget could not carry. */
  readonly full: boolean;
}

/**
 * What a claim of first deliveries records (pure): entries in order, acknowledged ones skipped,
 * up to `max` handed to the consumer as one held run per stretch; on Shared and Key_Shared,
 * delayed entries released to the tracker for their deliverAt (Exclusive and Failover ignore
 * deliverAt, as Pulsar does); on Key_Shared, entries of another member's key (or of a recently
 * joined member, Pulsar's rule) released to the tracker for that member. With a byte budget, the
 * plan stops before the first delivery the answer cannot carry (the read position stays there).
 */
export function planFirstDeliveries(input: {
  readonly head: DispatchHead;
  readonly pages: PageMap;
  readonly entries: readonly StoredEntry[];
  readonly max: number;
  readonly consumer: DispatchConsumer;
  readonly type: PartitionCursor['type'];
  readonly nowMs: number;
  readonly members?: readonly KeySharedMember[];
  readonly maxNewRuns: number;
  readonly budget?: ByteBudget;
}): FirstDeliveryPlan {
  const { head, pages, entries, max, consumer, type, nowMs } = input;
  const runs: DeliveryRun[] = [];
  const deliveries: Delivery[] = [];
  const trackerEntries: TrackerEntry[] = [];
  let routedAtMs: number | undefined;
  let last: Position | undefined;
  const tally = new ByteTally(input.budget);
  const timeoutMs = consumer.ackTimeoutMs(0);
  const held = (): DeliveryRun['state'] => ({
    kind: 'held',
    consumerId: consumer.consumerId,
    deliveredAtMs: nowMs,
    ...(timeoutMs > 0 ? { timeoutAtMs: nowMs + timeoutMs } : {}),
  });
  const append = (position: Position, state: DeliveryRun['state'], deliveries: number) => {
    const previous = runs[runs.length - 1];
    if (
      previous &&
      previous.ledgerId === position.ledgerId &&
      runEnd(previous) === position.entryId &&
      previous.deliveries === deliveries &&
      JSON.stringify(previous.state) === JSON.stringify(state)
    ) {
      runs[runs.length - 1] = { ...previous, n: previous.n + 1 };
    } else {
      runs.push({ ledgerId: position.ledgerId, entryId: position.entryId, n: 1, deliveries, state });
    }
  };
  for (const entry of entries) {
    if (deliveries.length >= max) break;
    // A claim adds at most maxNewRuns runs (delayed and routed entries each may start one), so
    // the head stays within a fixed size whatever the mix of entries.
    if (runs.length >= input.maxNewRuns) break;
    const position = entry.position;
    const before = last;
    last = position;
    if (isAcknowledged(head, pages, position)) continue;
    const delayedUntil = delayedUntilMs(head, entry, type);
    if (delayedUntil !== undefined && delayedUntil.dueAtMs > nowMs) {
      const cause = delayedUntil.rescheduled ? { cause: 'rescheduled' as const } : {};
      append(position, { kind: 'released', dueAtMs: delayedUntil.dueAtMs, ...cause }, 0);
      continue;
    }
    if (
      type === 'Key_Shared' &&
      input.members &&
      !routesTo(input.members, consumer.consumerId, entry, head)
    ) {
      routedAtMs ??= Math.max(nowMs, head.routedAtMs ?? 0);
      append(position, { kind: 'released', dueAtMs: routedAtMs }, 0);
      continue;
    }
    const delivery: Delivery = { position, redeliveryCount: 0, entry };
    if (!tally.admits(delivery)) {
      last = before; // not considered: the read position stays at it
      break;
    }
    append(position, held(), 1);
    deliveries.push(delivery);
  }
  for (const run of runs) {
    if (run.state.kind === 'released') {
      trackerEntries.push({
        dueAtMs: run.state.dueAtMs,
        position: Position.of(run.ledgerId, run.entryId),
        deliveries: 0,
        n: run.n,
      });
    } else if (run.state.timeoutAtMs !== undefined) {
      trackerEntries.push({
        dueAtMs: run.state.timeoutAtMs,
        position: Position.of(run.ledgerId, run.entryId),
        deliveries: 1,
        n: run.n,
      });
    }
  }
  return {
    runs,
    deliveries,
    trackerEntries,
    ...(last ? { nextReadPosition: nextInLedger(last) } : {}),
    ...(routedAtMs !== undefined ? { routedAtMs } : {}),
    full: tally.full,
  };
}

/**
 * When a first delivery of `entry` is due: an operator's override (topics reschedule, earlier or
 * later than its deliverAt), else its deliverAt; none on Exclusive and Failover (they ignore
 * deliverAt, as Pulsar does) or for an entry without either.
 */
function delayedUntilMs(
  head: DispatchHead,
  entry: StoredEntry,
  type: PartitionCursor['type'],
): { readonly dueAtMs: number; readonly rescheduled: boolean } | undefined {
  if (isCumulativeAckType(type)) return undefined;
  const override = overrideAt(head, entry.position);
  if (override) return { dueAtMs: override.dueAtMs, rescheduled: true };
  return entry.deliverAtMs === undefined ? undefined : { dueAtMs: entry.deliverAtMs, rescheduled: false };
}
