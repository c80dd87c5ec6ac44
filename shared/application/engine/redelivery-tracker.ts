import { carveRun, type DeliveryRun, runEnd, runPositions, sliceRun } from '../../domain/delivery-run.ts';
import { Position } from '../../domain/position.ts';
import type { HeadRecord, PageState, TrackerEntry } from '../../ports/dispatch-store.ts';
import type { StoredEntry } from '../../ports/ledger.ts';
import type {
  Delivery,
  DispatchConsumer,
  EngineContext,
  KeySharedMember,
  PartitionCursor,
} from './engine-context.ts';
import { routesTo } from './key-shared-routing.ts';
import {
  isAcknowledged,
  locateRun,
  type PageMap,
  pageKey,
  readPagesOf,
  runPagesOf,
  withRunsReplaced,
  writeRuns,
} from './pending-state.ts';

/**
 * Pulsar's redelivery tracker, durable: `R#` items in due-time order, each naming a run whose
 * delivery is to be looked at again (released: hand it out again; held: its ack timeout). The run
 * is the truth; a tracker entry is an index, put before the write that makes it true, so a crash
 * leaves at worst a stale entry, which the pickup deletes.
 */

export interface PickUpRequest {
  readonly cursor: PartitionCursor;
  readonly consumer: DispatchConsumer;
  readonly record: HeadRecord;
  readonly max: number;
  readonly members?: readonly KeySharedMember[];
}

/**
 * Hands out due redeliveries (in due-time, then log order), each with the count of its earlier
 * deliveries; deletes stale tracker entries; when nothing more is due, moves the head's due time
 * to the next entry. Cost: one Query, the pages of the runs (one read each), one write per run
 * taken (head or page), one tracker write per entry put or deleted.
 */
export async function pickUpDue(
  ctx: EngineContext,
  request: PickUpRequest,
): Promise<{ deliveries: Delivery[]; record: HeadRecord | undefined }> {
  const { cursor } = request;
  const now = ctx.clock.nowMs();
  const limit = Math.max(request.max, 10);
  const due = await ctx.store.dueTracker(cursor.cursorId, now, limit);
  const deliveries: Delivery[] = [];
  let record: HeadRecord | undefined = request.record;
  let allSettled = due.length < limit;
  if (due.length > 0) {
    let pages: PageMap = await readPagesOf(
      ctx.store,
      cursor.cursorId,
      due.flatMap((entry) => [
        ...runPagesOf(entry.position),
        Position.of(entry.position.ledgerId, entry.position.entryId + BigInt(entry.n - 1)),
      ]),
    );
    for (const entry of due) {
      if (!record) break;
      if (deliveries.length >= request.max) {
        allSettled = false;
        break;
      }
      const outcome = await takeTrackerEntry(ctx, {
        ...request,
        record,
        pages,
        entry,
        max: request.max - deliveries.length,
        nowMs: now,
      });
      if (outcome.kind === 'taken') {
        deliveries.push(...outcome.deliveries);
        record = outcome.record;
        pages = outcome.pages;
      } else if (outcome.kind === 'stale') {
        await ctx.store.deleteTracker(cursor.cursorId, [entry]);
      } else {
        allSettled = false;
        if (outcome.kind === 'conflict') break;
      }
    }
  }
  if (allSettled && record) {
    const next = await ctx.store.nextTrackerDue(cursor.cursorId, now);
    if (record.head.trackerDueAtMs !== next) {
      const { trackerDueAtMs: _old, ...rest } = record.head;
      const head = next === undefined ? rest : { ...rest, trackerDueAtMs: next };
      const written = await ctx.store.casHead(cursor.cursorId, record.version, head);
      record = written.ok ? { ...record, head, version: record.version + 1 } : written.current;
    }
  }
  return { deliveries, record };
}

type TakeOutcome =
  | {
      readonly kind: 'taken';
      readonly deliveries: Delivery[];
      readonly record: HeadRecord;
      readonly pages: PageMap;
    }
  /** The run no longer is in the state the entry names: delete the entry. */
  | { readonly kind: 'stale' }
  /** Key_Shared: due, but for another member (or this one is recently joined). */
  | { readonly kind: 'notMine' }
  /** The head or page changed meanwhile: leave the entry for the next receive. */
  | { readonly kind: 'conflict' };

async function takeTrackerEntry(
  ctx: EngineContext,
  request: PickUpRequest & { readonly pages: PageMap; readonly entry: TrackerEntry; readonly nowMs: number },
): Promise<TakeOutcome> {
  const { cursor, consumer, record, pages, entry, nowMs } = request;
  const located = locateRun(record.head, pages, entry.position);
  if (!located || located.run.deliveries !== entry.deliveries) return { kind: 'stale' };
  const { run, home } = located;
  const slice = sliceRun(run, entry.position.entryId, entry.position.entryId + BigInt(entry.n));
  if (!slice) return { kind: 'stale' };
  if (
    run.state.kind === 'released' ? run.state.dueAtMs > nowMs : (run.state.timeoutAtMs ?? Infinity) > nowMs
  ) {
    return { kind: 'stale' }; // released or handed out again since: the newer state has its own entry
  }
  const unacked = runPositions(slice).filter((position) => !isAcknowledged(record.head, pages, position));
  if (unacked.length === 0) return { kind: 'stale' };
  const entries = await readEntriesAt(ctx, unacked);
  const deadLetter = consumer.deadLetter;
  if (deadLetter && run.deliveries > deadLetter.maxRedeliverCount) {
    // Handed out again it would pass maxRedeliverCount: Pulsar's dead-letter producer takes it.
    const stored = unacked.flatMap((position) => entries.get(position.toString()) ?? []);
    if (stored.length < unacked.length) return { kind: 'conflict' };
    await deadLetter.publish(stored, run.deliveries);
    await ctx.store.acknowledge(cursor.cursorId, unacked);
    return { kind: 'stale' };
  }
  const taken: { position: Position; entry: StoredEntry }[] = [];
  for (const position of unacked) {
    if (taken.length >= request.max) break;
    const stored = entries.get(position.toString());
    if (!stored) break; // not visible yet: take what comes before it
    if (
      cursor.type === 'Key_Shared' &&
      request.members &&
      !routesTo(request.members, consumer.consumerId, stored, record.head)
    ) {
      break;
    }
    taken.push({ position, entry: stored });
  }
  if (taken.length === 0) return { kind: cursor.type === 'Key_Shared' ? 'notMine' : 'conflict' };
  const takenIds = new Set(taken.map(({ position }) => position.entryId));
  const timeoutMs = consumer.ackTimeoutMs(run.deliveries);
  const heldState: DeliveryRun['state'] = {
    kind: 'held',
    consumerId: consumer.consumerId,
    deliveredAtMs: nowMs,
    ...(timeoutMs > 0 ? { timeoutAtMs: nowMs + timeoutMs } : {}),
  };
  const replacement = carveRun(run, takenIds, () => ({ deliveries: run.deliveries + 1, state: heldState }));
  const lastTaken = (taken[taken.length - 1] as { position: Position }).position.entryId;
  const trackerEntries: TrackerEntry[] = [];
  const sliceEnd = runEnd(slice);
  if (lastTaken + 1n < sliceEnd) {
    // The rest of this entry's slice keeps its state and its due time.
    trackerEntries.push({
      dueAtMs: entry.dueAtMs,
      position: Position.of(slice.ledgerId, lastTaken + 1n),
      deliveries: entry.deliveries,
      n: Number(sliceEnd - lastTaken - 1n),
    });
  }
  for (const piece of replacement) {
    if (piece.state === heldState && heldState.kind === 'held' && heldState.timeoutAtMs !== undefined) {
      trackerEntries.push({
        dueAtMs: heldState.timeoutAtMs,
        position: Position.of(piece.ledgerId, piece.entryId),
        deliveries: piece.deliveries,
        n: piece.n,
      });
    }
  }
  await ctx.store.putTracker(cursor.cursorId, trackerEntries);
  const written = await writeRuns(ctx.store, cursor.cursorId, record, home, [run], replacement);
  if (!written) return { kind: 'conflict' };
  await ctx.store.deleteTracker(cursor.cursorId, [entry]);
  const deliveries = taken.map(({ position, entry: stored }) => ({
    position,
    redeliveryCount: run.deliveries,
    entry: stored,
  }));
  if (home.kind === 'head') {
    const head = { ...record.head, runs: withRunsReplaced(record.head.runs, [run], replacement) };
    return { kind: 'taken', deliveries, record: { ...record, head, version: record.version + 1 }, pages };
  }
  const page: PageState = {
    ...home.page,
    runs: withRunsReplaced(home.page.runs, [run], replacement),
    version: home.page.version + 1,
  };
  return { kind: 'taken', deliveries, record, pages: new Map(pages).set(pageKey(page), page) };
}

/** The stored entries at `positions`, strongly consistent (they are before the read position). */
export async function readEntriesAt(
  ctx: EngineContext,
  positions: readonly Position[],
): Promise<Map<string, StoredEntry>> {
  const found = new Map<string, StoredEntry>();
  const byLedger = new Map<bigint, bigint[]>();
  for (const position of positions) {
    byLedger.set(position.ledgerId, [...(byLedger.get(position.ledgerId) ?? []), position.entryId]);
  }
  for (const [ledgerId, ids] of byLedger) {
    const first = ids.reduce((a, b) => (a < b ? a : b));
    const last = ids.reduce((a, b) => (a > b ? a : b));
    for (const entry of await ctx.ledger.readEntries(ledgerId, first, last)) {
      found.set(entry.position.toString(), entry);
    }
  }
  return found;
}
