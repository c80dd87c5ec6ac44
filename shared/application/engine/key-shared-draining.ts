import { runPositions } from '../../domain/delivery-run.ts';
import { nextInLedger, Position } from '../../domain/position.ts';
import type { HeadRecord } from '../../ports/dispatch-store.ts';
import { windowPages } from './cursor-window.ts';
import type { EngineContext, KeySharedMember, PartitionCursor } from './engine-context.ts';
import { stickyKeyOf } from './key-shared-order.ts';
import { isAcknowledged, locateRun, pageKey } from './pending-state.ts';

/**
 * Pages of the window (100 entries each) a recently joined member's pickup reads at most to learn
 * which keys other members hold; past them it takes nothing before its join mark until mark-delete
 * has come closer.
 */
export const DRAINING_PAGES = 200;

/**
 * Key_Shared, a member that joined while entries were dispatched (mark-delete before its join
 * mark): the keys other consumers hold unacknowledged entries of, before `upTo` (its join mark),
 * each with the first position held. Such a key moved to this member when it joined; until the
 * entries it had are acknowledged or released, the member takes none of the key's entries after
 * them (Pulsar's recently joined consumers, made exact per key as Pulsar 4's draining hashes of
 * PIP-379 do: a key moving to a new member waits for what its old member holds). `undefined`: the
 * window is longer than DRAINING_PAGES pages, so the member takes nothing before its mark.
 * Only a member in that state pays it, once per tracker pickup. Cost: the ledger layout, the
 * window's pages up to `upTo` (one BatchGetItem per 100 pages), and one Query per ledger of the
 * entries held by others (strongly consistent: they are before the read position).
 */
export async function keysHeldByOthers(
  ctx: EngineContext,
  input: {
    readonly cursor: PartitionCursor;
    readonly record: HeadRecord;
    readonly consumerId: string;
    readonly upTo: Position;
  },
): Promise<ReadonlyMap<string, Position> | undefined> {
  const { cursor, record, consumerId, upTo } = input;
  const head = record.head;
  const window = (await windowPages(ctx, cursor, nextInLedger(head.markDelete), DRAINING_PAGES + 1)).filter(
    (page) => Position.of(page.ledgerId, page.firstEntryId).compareTo(upTo) <= 0,
  );
  if (window.length > DRAINING_PAGES) return undefined;
  const states = await ctx.store.readPages(cursor.cursorId, window);
  const pages = new Map(states.map((state) => [pageKey(state), state]));
  const held = new Set<string>();
  const positions: Position[] = [];
  for (const run of [...head.runs, ...states.flatMap((state) => state.runs)]) {
    for (const position of runPositions(run)) {
      if (position.compareTo(upTo) > 0 || held.has(position.toString())) continue;
      if (isAcknowledged(head, pages, position)) continue;
      // The run that counts for this entry (the head's, when both hold one).
      const state = locateRun(head, pages, position)?.run.state;
      if (state?.kind !== 'held' || state.consumerId === consumerId) continue;
      held.add(position.toString());
      positions.push(position);
    }
  }
  const keys = new Map<string, Position>();
  for (const entry of await readHeld(ctx, positions)) {
    const key = stickyKeyOf(entry);
    const first = keys.get(key);
    if (!first || entry.position.compareTo(first) < 0) keys.set(key, entry.position);
  }
  return keys;
}

/** The stored entries at `positions`: one Query per ledger, from the first to the last. */
async function readHeld(ctx: EngineContext, positions: readonly Position[]) {
  const wanted = new Set(positions.map(String));
  const byLedger = new Map<bigint, bigint[]>();
  for (const position of positions) {
    byLedger.set(position.ledgerId, [...(byLedger.get(position.ledgerId) ?? []), position.entryId]);
  }
  const found = [];
  for (const [ledgerId, ids] of byLedger) {
    const first = ids.reduce((a, b) => (a < b ? a : b));
    const last = ids.reduce((a, b) => (a > b ? a : b));
    const entries = await ctx.ledger.readEntries(ledgerId, first, last);
    found.push(...entries.filter((entry) => wanted.has(entry.position.toString())));
  }
  return found;
}

/** The member `consumerId` as it is now recently joined (mark-delete before its join mark), or none. */
export function recentlyJoined(
  members: readonly KeySharedMember[],
  consumerId: string,
  record: HeadRecord,
): KeySharedMember | undefined {
  const member = members.find((candidate) => candidate.consumerId === consumerId);
  return member && record.head.markDelete.compareTo(member.joinedAfter) < 0 ? member : undefined;
}
