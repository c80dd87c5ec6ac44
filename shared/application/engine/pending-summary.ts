import { runPositions } from '../../domain/delivery-run.ts';
import { nextInLedger, Position } from '../../domain/position.ts';
import { windowPages } from './cursor-window.ts';
import type { EngineContext, PartitionCursor } from './engine-context.ts';
import { isAcknowledged, locateRun, pageKey } from './pending-state.ts';

/** Pages a summary reads at most (200,000 entries: the subscription's unacknowledged cap). */
export const SUMMARY_PAGES = 2_000;

/** What the delivery engine's pending state says of a subscription on one partition, now. */
export interface PendingSummary {
  /** Entries handed to a consumer and not acknowledged (Pulsar's unackedMessages). */
  readonly unacked: number;
  /** The same, per consumer id. */
  readonly unackedByConsumer: ReadonlyMap<string, number>;
  /**
   * Of those, per consumer id, the entries past their ack timeout: due to be redelivered (Pulsar's
   * client asks for them again, and they no longer count against the consumer's cap).
   */
  readonly overdueByConsumer: ReadonlyMap<string, number>;
  /** Entries the dispatcher read and holds back until their deliverAt (Pulsar's msgDelayed). */
  readonly delayed: number;
  /** The newest acknowledgement the head and the pages read know of (epoch ms). */
  readonly lastAckedAtMs?: number;
  /** The window was longer than SUMMARY_PAGES pages: the counts cover its first part only. */
  readonly truncated: boolean;
}

/**
 * Reads the head and the pages from mark-delete to the read position (at most SUMMARY_PAGES) and
 * counts, entry by entry, what the runs say: held and unacknowledged (per consumer), or delayed
 * (released, never handed out, due later). The head's copy of a run wins over a page's, as for
 * every reader (`locateRun`).
 * Cost: the head, the ledger layout, one read per page of the window (BatchGetItem, 100 a request).
 */
export async function pendingSummary(ctx: EngineContext, cursor: PartitionCursor): Promise<PendingSummary> {
  const record = await ctx.store.readHead(cursor.cursorId);
  if (!record) {
    return {
      unacked: 0,
      unackedByConsumer: new Map(),
      overdueByConsumer: new Map(),
      delayed: 0,
      truncated: false,
    };
  }
  const head = record.head;
  const now = ctx.clock.nowMs();
  const window = (await windowPages(ctx, cursor, nextInLedger(head.markDelete), SUMMARY_PAGES + 1)).filter(
    (page) => Position.of(page.ledgerId, page.firstEntryId).compareTo(head.readPosition) < 0,
  );
  const truncated = window.length > SUMMARY_PAGES;
  const states = await ctx.store.readPages(cursor.cursorId, window.slice(0, SUMMARY_PAGES));
  const pages = new Map(states.map((state) => [pageKey(state), state]));
  let unacked = 0;
  let delayed = 0;
  const unackedByConsumer = new Map<string, number>();
  const overdueByConsumer = new Map<string, number>();
  const seen = new Set<string>();
  const runs = [...head.runs, ...states.flatMap((state) => state.runs)];
  for (const run of runs) {
    for (const position of runPositions(run)) {
      const key = position.toString();
      if (seen.has(key)) continue;
      seen.add(key);
      if (isAcknowledged(head, pages, position)) continue;
      // The run that counts for this entry (the head's, when both hold one; none past the read position).
      const counted = locateRun(head, pages, position)?.run;
      if (!counted) continue;
      if (counted.state.kind === 'held') {
        unacked++;
        const consumer = counted.state.consumerId;
        unackedByConsumer.set(consumer, (unackedByConsumer.get(consumer) ?? 0) + 1);
        if ((counted.state.timeoutAtMs ?? Number.POSITIVE_INFINITY) <= now) {
          overdueByConsumer.set(consumer, (overdueByConsumer.get(consumer) ?? 0) + 1);
        }
      } else if (counted.deliveries === 0 && counted.state.dueAtMs > now) {
        delayed++;
      }
    }
  }
  const lastAckedAtMs = Math.max(head.lastAckedAtMs ?? 0, ...states.map((state) => state.lastAckedAtMs ?? 0));
  return {
    unacked,
    unackedByConsumer,
    overdueByConsumer,
    delayed,
    ...(lastAckedAtMs > 0 ? { lastAckedAtMs } : {}),
    truncated,
  };
}
