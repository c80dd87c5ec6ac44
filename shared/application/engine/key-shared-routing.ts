import type { DispatchHead } from '../../domain/dispatch-head.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import type { StoredEntry } from '../../ports/ledger.ts';
import type { EngineContext, KeySharedMember, PartitionCursor } from './engine-context.ts';

/** Points each member has on the hash ring (Pulsar's consistent-hashing selector uses 100). */
const POINTS_PER_MEMBER = 100;

/** FNV-1a, 32 bits: stable across processes and runtimes. */
function hash32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/**
 * The member a key belongs to, by consistent hashing (Pulsar's ConsistentHashingStickyKeyConsumerSelector):
 * when a member leaves, only its keys move; when one joins, only the keys it takes move. Pure.
 */
export function memberForKey(members: readonly KeySharedMember[], key: string): KeySharedMember | undefined {
  if (members.length === 0) return undefined;
  const keyHash = hash32(key);
  let best: { point: number; member: KeySharedMember } | undefined;
  let lowest: { point: number; member: KeySharedMember } | undefined;
  for (const member of members) {
    for (let i = 0; i < POINTS_PER_MEMBER; i++) {
      const point = hash32(`${member.consumerId}#${i}`);
      if (point >= keyHash && (!best || point < best.point)) best = { point, member };
      if (!lowest || point < lowest.point) lowest = { point, member };
    }
  }
  return (best ?? lowest)?.member;
}

/**
 * Key_Shared: whether `consumerId` may take `entry` now: its key (its position when it has none)
 * belongs to that member, and the member is not recently joined for it: an entry at or after the
 * read position the member joined at waits until mark-delete has passed that position (Pulsar's
 * recently joined consumers), so a key never has two holders. A gone member keeps its keys until
 * its held entries were released (its membership ends after that), so those come first.
 */
export function routesTo(
  members: readonly KeySharedMember[],
  consumerId: string,
  entry: StoredEntry,
  head: DispatchHead,
): boolean {
  const member = memberForKey(members, entry.key ?? entry.position.toString());
  if (!member) return true;
  if (member.consumerId !== consumerId) return false;
  if (entry.position.compareTo(member.joinedAfter) <= 0) return true;
  return head.markDelete.compareTo(member.joinedAfter) >= 0;
}

/**
 * Where a member joining now starts being restricted (Pulsar's recently joined consumers): the
 * last entry dispatched before it joined, or mark-delete when nothing after it was dispatched.
 * Entries after it wait for this member until mark-delete reaches it.
 */
export async function keySharedJoinMark(ctx: EngineContext, cursor: PartitionCursor): Promise<Position> {
  const record = await ctx.store.readHead(cursor.cursorId);
  if (!record) throw new NotFoundError(`Cursor ${cursor.cursorId} not found`);
  const { markDelete, readPosition } = record.head;
  let before: Position | undefined;
  if (readPosition.entryId > 0n) {
    before = Position.of(readPosition.ledgerId, readPosition.entryId - 1n);
  } else {
    const ledgers = (await ctx.ledger.state(cursor.partition))?.ledgers ?? [];
    const previous = ledgers
      .filter((ledger) => ledger.ledgerId < readPosition.ledgerId && ledger.entries > 0n)
      .pop();
    if (previous) before = Position.of(previous.ledgerId, previous.entries - 1n);
  }
  return before && before.compareTo(markDelete) > 0 ? before : markDelete;
}
