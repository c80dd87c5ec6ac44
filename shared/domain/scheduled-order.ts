import { ValidationError } from './errors.ts';
import { murmur3Hash31 } from './murmur3.ts';

/**
 * The order of a scheduled view: due time, then position (ledger ids are unique across the
 * deployment, so this orders the entries of every partition of a topic at once).
 */
export interface ScheduledKey {
  readonly dueAtMs: number;
  readonly ledgerId: bigint;
  readonly entryId: bigint;
}

/** The greatest due time a stored key holds (15 digits of epoch ms): "no end". */
export const NO_END_MS = 999_999_999_999_999;

export function compareScheduled(a: ScheduledKey, b: ScheduledKey): number {
  if (a.dueAtMs !== b.dueAtMs) return a.dueAtMs < b.dueAtMs ? -1 : 1;
  if (a.ledgerId !== b.ledgerId) return a.ledgerId < b.ledgerId ? -1 : 1;
  return a.entryId < b.entryId ? -1 : a.entryId > b.entryId ? 1 : 0;
}

/** The smaller of two bounds; undefined stands for "no bound". */
export function minBound<K extends ScheduledKey>(a: K | undefined, b: K | undefined): K | undefined {
  if (!a) return b;
  if (!b) return a;
  return compareScheduled(a, b) <= 0 ? a : b;
}

/**
 * Where the next page of a scheduled view starts: its sources are read again from `from` (an item
 * key, included: the item holding the last entry listed may hold more), and every entry at or
 * before `after` is skipped.
 */
export interface ScheduledCursor {
  readonly from: ScheduledKey;
  readonly after: ScheduledKey;
}

/**
 * What a page token belongs to: the listing (`scheduled`, `pending`), the topic and the
 * subscription, hashed to a short tag the token carries, so a token given by one listing is
 * refused by another (it would name positions of another cursor: a page that skips or repeats).
 */
export function pageTokenScope(listing: string, topic: string, subscription: string): string {
  return murmur3Hash31(`${listing}\n${topic}\n${subscription}`).toString(36);
}

/**
 * The token's text without its scope tag, checked against `scope`.
 * @throws ValidationError when the token is not one this API gave, or gave for another scope.
 */
export function unscopedToken(token: string, scope: string): string {
  const text = Buffer.from(token, 'base64url').toString('utf8');
  const cut = text.lastIndexOf('~');
  if (cut < 0 || !/^[0-9a-z]{1,7}$/.test(text.slice(cut + 1)))
    throw new ValidationError(`pageToken '${token}' is not a token this API gave`);
  if (text.slice(cut + 1) !== scope) {
    throw new ValidationError(
      `pageToken '${token}' was given by another listing (another topic, subscription or path): a token goes on only with the listing that gave it`,
    );
  }
  return text.slice(0, cut);
}

/** `text` with the scope tag, as a token. */
export function scopedToken(text: string, scope: string): string {
  return Buffer.from(`${text}~${scope}`).toString('base64url');
}

/**
 * The page token: base64url of `d.l.s.e~scope` (due time, ledger, the item's first entry, the last
 * entry; see pageTokenScope).
 */
export function encodePageToken(cursor: ScheduledCursor, scope: string): string {
  const { from, after } = cursor;
  return scopedToken(`${after.dueAtMs}.${after.ledgerId}.${from.entryId}.${after.entryId}`, scope);
}

/** @throws ValidationError when the token is not one this API gave for `scope`. */
export function decodePageToken(token: string, scope: string): ScheduledCursor {
  const text = unscopedToken(token, scope);
  const match = /^(\d{1,15})\.(\d{1,19})\.(\d{1,19})\.(\d{1,19})$/.exec(text);
  if (!match) throw new ValidationError(`pageToken '${token}' is not a token this API gave`);
  const [, due, ledger, start, entry] = match as unknown as [string, string, string, string, string];
  const dueAtMs = Number(due);
  const ledgerId = BigInt(ledger);
  return {
    from: { dueAtMs, ledgerId, entryId: BigInt(start) },
    after: { dueAtMs, ledgerId, entryId: BigInt(entry) },
  };
}

/** One bucket of a scheduled histogram: entries due from `startMs` (included) to `startMs + size`. */
export interface ScheduledBucket {
  readonly startMs: number;
  readonly count: number;
}

/** Counts due times per bucket of `bucketMs`, aligned on multiples of it; empty buckets left out. */
export function histogram(dueTimes: readonly number[], bucketMs: number): ScheduledBucket[] {
  const counts = new Map<number, number>();
  for (const due of dueTimes) {
    const start = Math.floor(due / bucketMs) * bucketMs;
    counts.set(start, (counts.get(start) ?? 0) + 1);
  }
  return [...counts.entries()].sort(([a], [b]) => a - b).map(([startMs, count]) => ({ startMs, count }));
}
