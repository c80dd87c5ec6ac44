import type { Position } from './position.ts';

/** A message with a deliverAt, as an append indexes it. */
export interface DelayedEntry {
  readonly position: Position;
  readonly deliverAtMs: number;
}

/** Entries of one ledger sharing one deliverAt: one item of a partition's delayed index. */
export interface DelayedGroup {
  readonly dueAtMs: number;
  readonly ledgerId: bigint;
  /** The smallest of `entryIds`: with the due time and the ledger, the item's key. */
  readonly firstEntryId: bigint;
  /** Ascending. */
  readonly entryIds: readonly bigint[];
}

/**
 * Entry ids one group holds at most: about 10 bytes each in a number set, so an item stays under
 * 1 KB and its write costs one write unit.
 */
export const MAX_GROUP_IDS = 100;

/**
 * The index items of `entries`: one per distinct (deliverAt, ledger) and MAX_GROUP_IDS ids, ids
 * ascending, in key order.
 */
export function groupDelayed(entries: readonly DelayedEntry[]): DelayedGroup[] {
  const groups = new Map<string, { dueAtMs: number; ledgerId: bigint; ids: bigint[] }>();
  for (const { position, deliverAtMs } of entries) {
    const key = `${deliverAtMs}#${position.ledgerId}`;
    const group = groups.get(key) ?? { dueAtMs: deliverAtMs, ledgerId: position.ledgerId, ids: [] };
    group.ids.push(position.entryId);
    groups.set(key, group);
  }
  return [...groups.values()]
    .flatMap(({ dueAtMs, ledgerId, ids }) => {
      const sorted = [...new Set(ids)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const chunks: DelayedGroup[] = [];
      for (let i = 0; i < sorted.length; i += MAX_GROUP_IDS) {
        const entryIds = sorted.slice(i, i + MAX_GROUP_IDS);
        chunks.push({ dueAtMs, ledgerId, firstEntryId: entryIds[0] as bigint, entryIds });
      }
      return chunks;
    })
    .sort(compareGroups);
}

/** Key order of the index: due time, then ledger, then first entry. */
export function compareGroups(a: DelayedGroup, b: DelayedGroup): number {
  if (a.dueAtMs !== b.dueAtMs) return a.dueAtMs < b.dueAtMs ? -1 : 1;
  if (a.ledgerId !== b.ledgerId) return a.ledgerId < b.ledgerId ? -1 : 1;
  return a.firstEntryId < b.firstEntryId ? -1 : a.firstEntryId > b.firstEntryId ? 1 : 0;
}
