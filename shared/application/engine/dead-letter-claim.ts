import { carveRun, type DeliveryRun, runStart } from '../../domain/delivery-run.ts';
import { DeadLetterRefusedError } from '../../domain/errors.ts';
import type { HeadRecord, TrackerEntry } from '../../ports/dispatch-store.ts';
import type { StoredEntry } from '../../ports/ledger.ts';
import type { DeadLetterProducer, EngineContext, PartitionCursor } from './engine-context.ts';
import {
  type LocatedRun,
  locateRun,
  lowerTrackerDue,
  readPagesOf,
  runPagesOf,
  withRunsReplaced,
  writeRuns,
} from './pending-state.ts';

/**
 * The holder a dead-letter step records its entries as held by before it publishes them: no
 * consumer, so nobody else takes them meanwhile (consumer ids are never '~'-prefixed).
 */
export const DEAD_LETTER_HOLDER = '~dead-letter';

/**
 * How long a dead-letter step's claim keeps its entries: longer than any call can run (API
 * Gateway's 29 s, the scheduler's and runner's steps), so a step that is still running is never
 * taken over; past it, a step that died is done again (see deadLetterEntries).
 */
export const DEAD_LETTER_CLAIM_MS = 35_000;

/** One dead-letter step: entries of one run, past maxRedeliverCount, as the caller read them. */
export interface DeadLetterStep {
  readonly cursor: PartitionCursor;
  /** The head the run was located on (the claim is conditioned on it, or on the run's page). */
  readonly record: HeadRecord;
  readonly located: LocatedRun;
  /** The unacknowledged entries of the run to dead-letter, in order (all stored). */
  readonly entries: readonly StoredEntry[];
  readonly deadLetter: DeadLetterProducer;
}

/**
 * What a dead-letter step did: published (with the head it ended on when it knows it without a
 * read), or lost the claim (nothing published).
 */
export type DeadLetterOutcome =
  | { readonly kind: 'published'; readonly record?: HeadRecord }
  | { readonly kind: 'lost' };

/**
 * Pulsar's dead-letter step, once per entry whatever the number of consumers racing for it:
 * 1. claim: one conditional write of the run's home (head or page) records the entries as held by
 *    DEAD_LETTER_HOLDER until now + DEAD_LETTER_CLAIM_MS (a tracker entry for that time put first):
 *    of the steps racing on one tracker entry or held run, one wins; the others publish nothing;
 * 2. publish to the dead-letter topic (as the consumer's role);
 * 3. acknowledge on the subscription, and drop the claim's tracker entry.
 * A refusal (DeadLetterRefusedError) gives the entries back as they were before it is rethrown.
 * A crash between 2 and 3 publishes again once the claim has lapsed (the next pickup, or a
 * dead-letter timer, finds the claim due): at most one more publish per crash, never a loss.
 * Cost: one tracker put, one write of the run's home (and of the head's due time when the run is
 * in a page), the publish, one ack write per page, one tracker delete.
 * @returns `lost` when the run changed since it was read (another step or a consumer took it).
 */
export async function deadLetterEntries(
  ctx: EngineContext,
  step: DeadLetterStep,
): Promise<DeadLetterOutcome> {
  const { cursor, located, entries } = step;
  const { run, home } = located;
  const nowMs = ctx.clock.nowMs();
  const timeoutAtMs = nowMs + DEAD_LETTER_CLAIM_MS;
  const claimed: DeliveryRun['state'] = {
    kind: 'held',
    consumerId: DEAD_LETTER_HOLDER,
    deliveredAtMs: nowMs,
    timeoutAtMs,
  };
  const ids = new Set(entries.map((entry) => entry.position.entryId));
  const pieces = carveRun(run, ids, () => ({ deliveries: run.deliveries, state: claimed }));
  const timers: TrackerEntry[] = pieces
    .filter((piece) => piece.state === claimed)
    .map((piece) => ({
      dueAtMs: timeoutAtMs,
      position: runStart(piece),
      deliveries: piece.deliveries,
      n: piece.n,
    }));
  await ctx.store.putTracker(cursor.cursorId, timers);
  const trackerDueAtMs = Math.min(step.record.head.trackerDueAtMs ?? Infinity, timeoutAtMs);
  const written = await writeRuns(ctx.store, cursor.cursorId, {
    record: step.record,
    home,
    replaced: [run],
    by: pieces,
    headChanges: { trackerDueAtMs },
  });
  // Lost: the timer stays (it may share its key with the winner's; judged stale or due later).
  if (!written) return { kind: 'lost' };
  // The head it ends on, when known: what the claim made of it, or (run in a page) the one handed
  // in unless its due time had to be lowered for the claim's timer.
  let ended: HeadRecord | undefined =
    home.kind === 'head'
      ? {
          ...step.record,
          head: {
            ...step.record.head,
            trackerDueAtMs,
            runs: withRunsReplaced(step.record.head.runs, [run], pieces),
          },
          version: step.record.version + 1,
        }
      : step.record;
  if (home.kind === 'page' && trackerDueAtMs !== step.record.head.trackerDueAtMs) {
    await lowerTrackerDue(ctx, cursor, trackerDueAtMs);
    ended = undefined;
  }
  try {
    await step.deadLetter.publish(entries, run.deliveries);
  } catch (error) {
    if (error instanceof DeadLetterRefusedError) await giveBack(ctx, { cursor, run, claimed, timers });
    throw error;
  }
  const positions = entries.map((entry) => entry.position);
  await ctx.store.acknowledge(cursor.cursorId, positions, ctx.clock.nowMs());
  await ctx.store.deleteTracker(cursor.cursorId, timers);
  return { kind: 'published', ...(ended ? { record: ended } : {}) };
}

/**
 * A refused dead letter: the claimed entries get the state they had (the run as it was read) back,
 * so the refusal leaves everything as it was. Retried on conflict (casAttempts); past that the
 * claim lapses after DEAD_LETTER_CLAIM_MS and the entries are due again.
 */
async function giveBack(
  ctx: EngineContext,
  input: {
    readonly cursor: PartitionCursor;
    readonly run: DeliveryRun;
    readonly claimed: DeliveryRun['state'];
    readonly timers: readonly TrackerEntry[];
  },
): Promise<void> {
  const { cursor, run, claimed, timers } = input;
  for (const timer of timers) {
    for (let attempt = 0; attempt < ctx.limits.casAttempts; attempt++) {
      const record = await ctx.store.readHead(cursor.cursorId);
      if (!record) return;
      const pages = await readPagesOf(ctx.store, cursor.cursorId, runPagesOf(timer.position));
      const located = locateRun(record.head, pages, timer.position);
      if (!located || JSON.stringify(located.run.state) !== JSON.stringify(claimed)) break;
      const restored = { ...located.run, deliveries: run.deliveries, state: run.state };
      const home = located.home;
      if (
        await writeRuns(ctx.store, cursor.cursorId, { record, home, replaced: [located.run], by: [restored] })
      )
        break;
    }
  }
  await ctx.store.deleteTracker(cursor.cursorId, timers);
}
