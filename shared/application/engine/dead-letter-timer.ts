import { runPositions } from '../../domain/delivery-run.ts';
import { Position } from '../../domain/position.ts';
import type { TrackerEntry } from '../../ports/dispatch-store.ts';
import { deadLetterEntries } from './dead-letter-claim.ts';
import type { DeadLetterProducer, EngineContext, PartitionCursor } from './engine-context.ts';
import { readPagesOf, runPagesOf } from './pending-state.ts';
import { judgeTrackerEntry, readEntriesAt, type TrackerSegment } from './redelivery-tracker.ts';

/** A dead-letter timer: the tracker entry of an ack timeout, and the policy of its consumer. */
export interface DeadLetterTimer {
  readonly cursor: PartitionCursor;
  readonly entry: TrackerEntry;
  readonly deadLetter: DeadLetterProducer;
}

/**
 * Pulsar dead-letters on its timer, not on the next receive: when the ack timeout of a delivery
 * whose next one would pass maxRedeliverCount comes due, the server publishes the entries to the
 * dead-letter topic and acknowledges them (deadLetterEntries: claimed first, so a consumer's
 * pickup racing this step publishes nothing more), whether or not any consumer polls.
 * Only what the tracker entry names and is still due with the entry's count is taken: acknowledged
 * or redelivered since, it is left alone.
 * Cost: the head and the pages of the entry (reads), the entries, and per stretch published the
 * dead-letter step's writes; retried on a lost race (casAttempts).
 * @returns `retryAtMs` when part of it is not due yet (its ack timeout, or a dead-letter step's
 *   claim, runs until then): the caller looks again at that time.
 */
export async function deadLetterOnTimer(
  ctx: EngineContext,
  timer: DeadLetterTimer,
): Promise<{ readonly retryAtMs?: number }> {
  const { cursor, entry, deadLetter } = timer;
  const last = Position.of(entry.position.ledgerId, entry.position.entryId + BigInt(entry.n - 1));
  for (let attempt = 0; attempt < ctx.limits.casAttempts; attempt++) {
    const record = await ctx.store.readHead(cursor.cursorId);
    if (!record) return {};
    const pages = await readPagesOf(ctx.store, cursor.cursorId, [...runPagesOf(entry.position), last]);
    const nowMs = ctx.clock.nowMs();
    const segments = judgeTrackerEntry(record.head, pages, entry, nowMs);
    const due = segments.find(
      (segment) =>
        segment.verdict === 'due' &&
        segment.located !== undefined &&
        segment.located.run.deliveries > deadLetter.maxRedeliverCount,
    );
    if (!due?.located) {
      // All settled (published, acknowledged, or redelivered since): the entry is an index of nothing.
      if (segments.every((segment) => segment.verdict === 'stale')) {
        await ctx.store.deleteTracker(cursor.cursorId, [entry]);
      }
      return retryOf(segments, nowMs);
    }
    // The due stretch, within its run (the segments are judged run by run): one entry at least.
    const positions = runPositions({ ...due.located.run, entryId: due.from, n: due.n });
    const found = await readEntriesAt(ctx, positions);
    const entries = positions.flatMap((position) => found.get(position.toString()) ?? []);
    // Some gone (retention deleted them meanwhile): nothing to publish; the tracker entry stays.
    if (entries.length < positions.length) return {};
    // Published: look at the rest of the entry on a fresh head. Lost: read again and judge anew.
    await deadLetterEntries(ctx, { cursor, record, located: due.located, entries, deadLetter });
  }
  return {};
}

/** The earliest end of an ack timeout or claim still running over part of the entry, if any. */
function retryOf(segments: readonly TrackerSegment[], nowMs: number): { readonly retryAtMs?: number } {
  const ends = segments.flatMap((segment) => {
    const state = segment.located?.run.state;
    return segment.verdict === 'pending' && state?.kind === 'held' && (state.timeoutAtMs ?? 0) > nowMs
      ? [state.timeoutAtMs as number]
      : [];
  });
  return ends.length > 0 ? { retryAtMs: Math.min(...ends) } : {};
}
