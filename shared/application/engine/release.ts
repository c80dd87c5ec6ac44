import type { DeliveryRun } from '../../domain/delivery-run.ts';
import type { DispatchHead } from '../../domain/dispatch-head.ts';
import { ConsumerFencedError } from '../../domain/ownership.ts';
import { nextInLedger, Position } from '../../domain/position.ts';
import type { TrackerEntry } from '../../ports/dispatch-store.ts';
import { windowPages } from './cursor-window.ts';
import type { EngineContext, PartitionCursor } from './engine-context.ts';
import { lowerTrackerDue, withRunsReplaced } from './pending-state.ts';

/** Pages one release step walks before it returns where it stopped. */
export const RELEASE_PAGES_PER_STEP = 50;
/** Releases contend with every claim on the head: they try this many times casAttempts. */
const RELEASE_ROUNDS = 8;

function isHeldBy(run: DeliveryRun, consumerId: string): boolean {
  return run.state.kind === 'held' && run.state.consumerId === consumerId;
}

/**
 * A gone Shared/Key_Shared consumer (closed, lease lapsed, or its redeliverUnacknowledged): every
 * run it holds is released to the tracker, due now, keeping its count of deliveries (entries it
 * was never handed keep 0; those it was handed come back with their count, I4). The head's runs
 * first, then the pages of the window from mark-delete, RELEASE_PAGES_PER_STEP at a time.
 * Idempotent; resumable: call again with `next` until it is undefined.
 * Cost: per step, the head (read, and a write when it holds the consumer's runs), one read per
 * page, one write per page holding its runs, one tracker write per run released.
 */
export async function releaseConsumerStep(
  ctx: EngineContext,
  cursor: PartitionCursor,
  consumerId: string,
  from?: Position,
): Promise<{ next?: Position }> {
  const now = ctx.clock.nowMs();
  const record = await ctx.store.readHead(cursor.cursorId);
  if (!record) return {};
  const start = from ?? nextInLedger(record.head.markDelete);
  // The head's runs every step (idempotent, and cheap when it holds none of the consumer's): a
  // step that lost every race there, or a claim made since, is covered by the next one.
  if (!(await releaseInHead(ctx, cursor, consumerId, now))) return { next: start };
  const pages = await windowPages(ctx, cursor, start, RELEASE_PAGES_PER_STEP + 1);
  const step = pages
    .slice(0, RELEASE_PAGES_PER_STEP)
    .filter((page) => Position.of(page.ledgerId, page.firstEntryId).compareTo(record.head.readPosition) < 0);
  let released = false;
  const states = await ctx.store.readPages(cursor.cursorId, step);
  for (const page of states) {
    // Runs at or after the read position are leftovers of a reset: nothing there was dispatched.
    const held = page.runs.filter(
      (run) =>
        isHeldBy(run, consumerId) &&
        Position.of(run.ledgerId, run.entryId).compareTo(record.head.readPosition) < 0,
    );
    if (held.length === 0) continue;
    const { pieces, entries } = releasedNow(held, now, consumerId);
    await ctx.store.putTracker(cursor.cursorId, entries);
    if (
      await ctx.store.casPage(cursor.cursorId, page, page.version, {
        runs: withRunsReplaced(page.runs, held, pieces),
      })
    ) {
      released = true;
    } else {
      // Changed meanwhile: walk this page again.
      if (released) await lowerTrackerDue(ctx, cursor, now);
      return { next: Position.of(page.ledgerId, page.page * 100n) };
    }
  }
  if (released) await lowerTrackerDue(ctx, cursor, now);
  const following = pages[RELEASE_PAGES_PER_STEP];
  if (
    following &&
    Position.of(following.ledgerId, following.firstEntryId).compareTo(record.head.readPosition) < 0
  ) {
    return { next: Position.of(following.ledgerId, following.firstEntryId) };
  }
  return {};
}

/**
 * The head's runs held by the consumer, released in one compare-and-set. Many consumers closing at
 * once all write the head: one wins each round, so this tries as many rounds as that may take.
 * @returns false when it lost every round (nothing released; the caller goes on later).
 */
async function releaseInHead(
  ctx: EngineContext,
  cursor: PartitionCursor,
  consumerId: string,
  now: number,
): Promise<boolean> {
  for (let attempt = 0; attempt < ctx.limits.casAttempts * RELEASE_ROUNDS; attempt++) {
    const record = await ctx.store.readHead(cursor.cursorId);
    if (!record) return true;
    const held = record.head.runs.filter((run) => isHeldBy(run, consumerId));
    if (held.length === 0) return true;
    const { pieces, entries } = releasedNow(held, now, consumerId);
    await ctx.store.putTracker(cursor.cursorId, entries);
    const head: DispatchHead = {
      ...record.head,
      runs: withRunsReplaced(record.head.runs, held, pieces),
      trackerDueAtMs: Math.min(record.head.trackerDueAtMs ?? now, now),
    };
    if ((await ctx.store.casHead(cursor.cursorId, record.version, head)).ok) return true;
  }
  return false;
}

/** `held`, released due `now`; their tracker entries name `consumerId`, their last holder. */
function releasedNow(
  held: readonly DeliveryRun[],
  now: number,
  consumerId: string,
): { pieces: DeliveryRun[]; entries: TrackerEntry[] } {
  const pieces = held.map(
    (run): DeliveryRun => ({ ...run, state: { kind: 'released', dueAtMs: now, cause: 'gone' } }),
  );
  const entries = pieces.map((run) => ({
    dueAtMs: now,
    position: Position.of(run.ledgerId, run.entryId),
    deliveries: run.deliveries,
    n: run.n,
    consumerId,
  }));
  return { pieces, entries };
}

/**
 * Exclusive/Failover rewind (Pulsar's cursor rewind): the owner's close, a redeliverUnacknowledged
 * by the owner, or an operator's reset. One head write: the replay starts again at mark-delete;
 * on `close`, the owner is also gone (a new epoch, the closed consumer fenced) so a standby takes
 * over. Returns at once whatever the backlog: receives replay step by step.
 * @throws ConsumerFencedError when `consumerId` is given and is not the owner.
 */
export async function rewind(
  ctx: EngineContext,
  cursor: PartitionCursor,
  options: { readonly consumerId?: string; readonly close?: boolean },
): Promise<void> {
  for (let attempt = 0; attempt < ctx.limits.casAttempts; attempt++) {
    const record = await ctx.store.readHead(cursor.cursorId);
    if (!record) return;
    const head = record.head;
    if (options.consumerId !== undefined && head.owner?.consumerId !== options.consumerId) {
      if (options.close) return; // not the owner: nothing of the subscription is its to give back
      throw new ConsumerFencedError(`Consumer ${options.consumerId} is not the active consumer`);
    }
    const replayFrom = nextInLedger(head.markDelete);
    const { owner, ...rest } = head;
    const next: DispatchHead = options.close
      ? {
          ...rest,
          epoch: head.epoch + 1,
          fenced: [...(head.fenced ?? []), ...(owner ? [owner.consumerId] : [])].slice(-4),
          ...(head.readPosition.compareTo(replayFrom) > 0 ? { replayFrom } : {}),
        }
      : { ...head, ...(head.readPosition.compareTo(replayFrom) > 0 ? { replayFrom } : {}) };
    if ((await ctx.store.casHead(cursor.cursorId, record.version, next)).ok) return;
  }
}
