import type { DispatchHead } from '../../domain/dispatch-head.ts';
import { NotFoundError, ServiceUnavailableError } from '../../domain/errors.ts';
import { rangesHold, stickySlot } from '../../domain/key-shared-sticky.ts';
import { murmur3Hash31 } from '../../domain/murmur3.ts';
import { Position } from '../../domain/position.ts';
import type { StoredEntry } from '../../ports/ledger.ts';
import type { EngineContext, KeySharedMember, PartitionCursor } from './engine-context.ts';

/** Points each member has on the hash ring (Pulsar's subscriptionKeySharedConsistentHashingReplicaPoints, 100). */
export const POINTS_PER_MEMBER = 100;

/** The hash ring of a member list: each member's points, ascending (ties: the lower member id). */
type HashRing = readonly { readonly point: number; readonly member: KeySharedMember }[];

/**
 * Rings already built, per member list: a dispatch routes every entry it reads against one list,
 * and a ring costs POINTS_PER_MEMBER hashes per member to build. Held as long as the list is (a
 * list is built per receive), so nothing outlives the call that made it.
 */
const rings = new WeakMap<readonly KeySharedMember[], HashRing>();

function ringOf(members: readonly KeySharedMember[]): HashRing {
  const known = rings.get(members);
  // Stryker disable next-line ConditionalExpression: equivalent, a ring built again is the same ring (the cache saves only the hashing)
  if (known) return known;
  const ring = members
    .flatMap((member) =>
      Array.from({ length: POINTS_PER_MEMBER }, (_, i) => ({
        point: murmur3Hash31(`${member.consumerId}\0${i}`),
        member,
      })),
    )
    .sort((a, b) =>
      a.point !== b.point ? a.point - b.point : a.member.consumerId < b.member.consumerId ? -1 : 1,
    );
  rings.set(members, ring);
  return ring;
}

/**
 * The member a key belongs to, by consistent hashing as Pulsar's
 * ConsistentHashingStickyKeyConsumerSelector does: POINTS_PER_MEMBER points per member on a ring of
 * 31-bit Murmur3 hashes (of `consumerId NUL i`), and the key (its Murmur3 hash) goes to the first
 * point at or after it, wrapping around. When a member leaves only its keys move; when one joins
 * only the keys it takes move; with 3 members each holds about a third of the ring (100 points
 * each). Pure. Sticky members (with hashRanges) are routed by their ranges instead.
 */
export function memberForKey(members: readonly KeySharedMember[], key: string): KeySharedMember | undefined {
  if (members.length === 0) return undefined;
  if (members.some((member) => member.hashRanges !== undefined)) {
    // Sticky (Pulsar's HashRangeExclusiveStickyKeyConsumerSelector): the member whose ranges hold
    // the key's slot; none when no member does (the key waits for one).
    const slot = stickySlot(key);
    return members.find((member) => member.hashRanges !== undefined && rangesHold(member.hashRanges, slot));
  }
  const ring = ringOf(members);
  const keyHash = murmur3Hash31(key);
  let low = 0;
  let high = ring.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((ring[mid] as HashRing[number]).point < keyHash) low = mid + 1;
    else high = mid;
  }
  // Past the last point the key wraps around to the first; the ring has points (members do).
  return (ring[low] ?? (ring[0] as HashRing[number])).member;
}

/**
 * Key_Shared: whether `consumerId` may take `entry` now: its key (its position when it has none)
 * belongs to that member, and the member is not recently joined for it: an entry at or after the
 * read position the member joined at waits until mark-delete has passed that position (Pulsar's
 * recently joined consumers), so a key never has two holders. A gone member keeps its keys until
 * its held entries were released (its membership ends after that), so those come first. Sticky
 * members: a key whose slot no member's ranges hold goes to nobody (it waits for such a member).
 */
export function routesTo(
  members: readonly KeySharedMember[],
  consumerId: string,
  entry: StoredEntry,
  head: DispatchHead,
): boolean {
  const member = memberForKey(members, entry.key ?? entry.position.toString());
  // No member at all: nobody to route for. Members but no owner: a sticky key no range holds waits.
  if (!member) return members.length === 0;
  if (member.consumerId !== consumerId) return false;
  if (entry.position.compareTo(member.joinedAfter) <= 0) return true;
  return head.markDelete.compareTo(member.joinedAfter) >= 0;
}

/**
 * How long a head's `joining` holds receives back at most: longer than a subscribe call runs, so
 * only a subscribe that died between its join mark and its registration leaves one this long.
 */
export const JOIN_PENDING_MS = 30_000;

/**
 * Members a head names as joining at most (live ones: a mark older than JOIN_PENDING_MS no longer
 * counts and is dropped by the next join). Past it a subscribe is refused (503, try again): keeps
 * the head small; subscribes take milliseconds, so only a burst of this many at once meets it.
 */
export const MAX_JOINING = 8;

/**
 * Where a member joining now starts being restricted (Pulsar's recently joined consumers): the
 * last entry dispatched before it joined, or mark-delete when nothing after it was dispatched.
 * Entries after it wait for this member until mark-delete reaches it.
 * With `joining` (the new member's id), the mark is taken on the head it is written to as
 * `joining`: a claim made on an earlier head fails its compare-and-set, and a receive whose member
 * list lacks the member hands nothing out until the subscribe has registered it and called
 * keySharedJoined (see joinPending), so no receive gives the member's keys to the others after its
 * mark. Cost: the head (strong read), with `joining` one head write (retried on a conflict).
 * @throws ServiceUnavailableError when the head kept changing under every attempt.
 */
export async function keySharedJoinMark(
  ctx: EngineContext,
  cursor: PartitionCursor,
  joining?: string,
): Promise<Position> {
  for (let attempt = 0; attempt < 4 * ctx.limits.casAttempts; attempt++) {
    const record = await ctx.store.readHead(cursor.cursorId);
    if (!record) throw new NotFoundError(`Cursor ${cursor.cursorId} not found`);
    const mark = await joinMarkOf(ctx, cursor, record.head);
    if (joining === undefined) return mark;
    const now = ctx.clock.nowMs();
    // Each racing subscribe keeps its own mark: one overwriting another's let a receive whose list
    // lacked the first member give its keys to others once the second had registered.
    const others = (record.head.joining ?? []).filter(
      (member) => member.consumerId !== joining && now - member.atMs <= JOIN_PENDING_MS,
    );
    if (others.length >= MAX_JOINING) {
      throw new ServiceUnavailableError(
        `Cursor ${cursor.cursorId} has ${others.length} members joining at once; try again`,
      );
    }
    const head = { ...record.head, joining: [...others, { consumerId: joining, atMs: now }] };
    if ((await ctx.store.casHead(cursor.cursorId, record.version, head)).ok) return mark;
    await ctx.pauseAfterConflict?.(attempt);
  }
  throw new ServiceUnavailableError(`Cursor ${cursor.cursorId} is too busy to join now; try again`);
}

/**
 * The subscribe registered `consumerId`: the head no longer names it as joining (the others stay). Best effort (a
 * few attempts): a `joining` left behind stops holding receives back JOIN_PENDING_MS after it was
 * written. Cost: the head (strong read), and one write when it still names the member.
 * @returns whether it cleared the mark (receives held back by it wait for a ring: the caller's).
 */
export async function keySharedJoined(
  ctx: EngineContext,
  cursor: PartitionCursor,
  consumerId: string,
): Promise<boolean> {
  for (let attempt = 0; attempt < ctx.limits.casAttempts; attempt++) {
    const record = await ctx.store.readHead(cursor.cursorId);
    const joining = record?.head.joining ?? [];
    if (!record || !joining.some((member) => member.consumerId === consumerId)) return false;
    const { joining: _all, ...rest } = record.head;
    const left = joining.filter((member) => member.consumerId !== consumerId);
    const head = left.length > 0 ? { ...rest, joining: left } : rest;
    if ((await ctx.store.casHead(cursor.cursorId, record.version, head)).ok) return true;
  }
  return false;
}

/**
 * Whether a receive with this member list must hand nothing out on `head` now: a member is joining
 * (its join mark taken, JOIN_PENDING_MS ago at most) that the list, read before it registered, does
 * not have yet; every member the head names as joining is checked.
 */
export function joinPending(
  head: DispatchHead,
  members: readonly KeySharedMember[] | undefined,
  nowMs: number,
): boolean {
  if (!head.joining || !members) return false;
  return head.joining.some(
    (joining) =>
      nowMs - joining.atMs <= JOIN_PENDING_MS &&
      !members.some((member) => member.consumerId === joining.consumerId),
  );
}

/** The join mark on `head`: the last entry dispatched, or mark-delete when that is later. */
async function joinMarkOf(
  ctx: EngineContext,
  cursor: PartitionCursor,
  head: DispatchHead,
): Promise<Position> {
  const { markDelete, readPosition } = head;
  let before: Position | undefined;
  if (readPosition.entryId > 0n) {
    before = Position.of(readPosition.ledgerId, readPosition.entryId - 1n);
  } else {
    // Stryker disable next-line ArrayDeclaration: equivalent, an element that is no LedgerInfo has no ledgerId to pass the filter
    const ledgers = (await ctx.ledger.state(cursor.partition))?.ledgers ?? [];
    const previous = ledgers
      .filter((ledger) => ledger.ledgerId < readPosition.ledgerId && ledger.entries > 0n)
      .pop();
    if (previous) before = Position.of(previous.ledgerId, previous.entries - 1n);
  }
  return before && before.compareTo(markDelete) > 0 ? before : markDelete;
}
