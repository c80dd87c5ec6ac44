import {
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { ConflictError } from '../../domain/errors.ts';
import { InvalidPositionError } from '../../domain/non-negative-id.ts';
import { Position } from '../../domain/position.ts';
import type {
  CursorStore,
  DeliveryState,
  DeliveryStateOptions,
  StoredCursor,
} from '../../ports/cursor-store.ts';
import {
  batchGetAll,
  big,
  deleteAll,
  forEachLimited,
  type Item,
  isConditionalCheckFailed,
  N,
  pad,
  queryAll,
  S,
  str,
} from './dynamodb-support.ts';

/**
 * Entries per ack page. A page's number set holds offsets 0..199 (1 to 3
 * digits, about 2-3 bytes each in DynamoDB's size rules), so even a full page
 * with its keys stays under 1 KB: an acknowledgement always costs one write
 * unit per page it touches, whatever the number of holes in the cursor.
 * Decimal, so that batches of 10, 20, 25, 40, 50, 100 or 200 entries aligned
 * on their size never straddle two pages.
 */
export const ACK_PAGE_SIZE = 200n;
/** The floor of a page the mark-delete position wholly covers. */
const LAST_OFFSET = ACK_PAGE_SIZE - 1n;

/**
 * Redelivery counts share the ack page: attribute `r` (number set) holds
 * `offset * 2^20 + count` for each (re)delivery recorded, so recording is an
 * `ADD` (commutative) and the current count of an entry is its highest value.
 * Written only when a message is nacked or times out: the page of a message
 * that is simply delivered and acknowledged never holds any.
 */
const REDELIVERY_COUNT_LIMIT = 1_048_576n;

const HEAD = 'H';
const PAGE_PREFIX = 'P#';
/** Sorts after every page key ('$' follows '#'): the end of the page range. */
const PAGES_END = 'P$';
/** Concurrent page writes of one call. */
const WRITE_CONCURRENCY = 16;
/**
 * A mark-delete move within one ledger over at most this many pages writes
 * their floors by key, without reading which pages exist. For a cursor moved
 * by folding individual acks every page it passes exists (each entry in it was
 * acknowledged), so those are exactly the writes needed and a Query would only
 * add its read unit. A longer move (a cumulative ack over a large backlog,
 * whose pages mostly do not exist) or one across ledgers (their sizes are not
 * known here) queries the pages that exist and writes only those.
 */
const FLOOR_BY_KEY_MAX_PAGES = 4n;

/**
 * Item layout (table Cursors, one partition per cursor, pk = cursorId):
 *
 * | sk | attributes | meaning |
 * | `H` | `ml`, `me` (N), `mk` (S) | mark-delete position; `mk` = sortable form for monotonic conditional writes |
 * | `H` | `lh` (S), `lu` (N) | the lease of a read-modify-write operation (skip): holder, expiry |
 * | `P#<ledgerId:20>#<page:17>` | `a` (NS) | offsets (entryId - page * 200) individually acknowledged in that page |
 * | `P#...` | `m` (N) | floor: every offset <= m of that page is acknowledged (199: the whole page) |
 * | `P#...` | `r` (NS) | `offset * 2^20 + redeliveryCount` of redelivered entries of that page |
 *
 * A page says by itself which of its entries are acknowledged: those in `a`
 * and those at or below `m`. `m` is written when the cursor is created (the
 * page of its first mark-delete position) and when mark-delete moves: the
 * pages it passed wholly become tombstones (`m` = 199, `a` and `r` removed,
 * about 60-70 bytes each, kept for good). The page it stops in keeps its `a`:
 * a subscription that acknowledges individually has every entry of it up to
 * mark-delete there already, and one that acknowledges cumulatively has its
 * head read by every check. Pages are never deleted before the cursor is: a late duplicate ack
 * or a redelivery record `ADD`ed to a deleted page would bring it back without
 * its history, and a check reading that page alone would then deliver its
 * acknowledged entries again. `m` is only ever set at or below the mark-delete
 * position, so `load` can skip every page before mark-delete's page.
 *
 * Durability: every acknowledgement is one `ADD` to a number set, which is
 * commutative and idempotent, so concurrent acks of neighbouring entries never
 * overwrite each other and nothing is capped. Mark-delete only moves forward
 * (conditional on `mk`); floors only rise (`m` is conditional, a tombstone is
 * the highest floor). A crash between the head write and the floors leaves
 * pages with their full `a`: still correct, only larger.
 */
export class DynamoDbCursorStore implements CursorStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  /** Cost: two writes (the head, the floor of its page); one when mark-delete is `L:-1`. */
  async create(cursorId: string, markDeletePosition: Position): Promise<void> {
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: { pk: S(cursorId), sk: S(HEAD), ...markDeleteAttributes(markDeletePosition) },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) throw new ConflictError(`Cursor ${cursorId} already exists`);
      throw error;
    }
    // Entries before a cursor created at Latest share its first page with entries after it: read
    // alone, that page must say they are acknowledged. Nothing acks or redelivers on a cursor
    // before its create returns, so no page write can come first.
    const first = pageOf(markDeletePosition);
    if (first) await this.raiseFloor(cursorId, first.key, first.offset);
  }

  /**
   * Cost: the head, then one Query over the ack pages from mark-delete's page
   * on (one read unit per 4 KB, at least one); the tombstones before it are not read.
   */
  async load(cursorId: string): Promise<StoredCursor | undefined> {
    const head = (await this.read(cursorId, [HEAD])).get(HEAD);
    if (!head) return undefined;
    const markDelete = markDeleteOf(head);
    const pages = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': S(cursorId),
        ':from': S(pageKey(markDelete.ledgerId, pageNumber(markDelete))),
        ':to': S(PAGES_END),
      },
      ConsistentRead: true,
    });
    // Offsets under a floor `m` are at or before mark-delete (floors never pass it): only `a` counts.
    const acknowledged: Position[] = [];
    for (const item of pages) {
      const { ledgerId, firstEntryId } = parsePageKey(str(item, 'sk') as string);
      const offsets = (item.a?.NS ?? []).map((offset) => BigInt(offset)).sort(compareBigInt);
      for (const offset of offsets) acknowledged.push(Position.of(ledgerId, firstEntryId + offset));
    }
    return { markDeletePosition: markDelete, acknowledged };
  }

  async acknowledge(cursorId: string, positions: readonly Position[]): Promise<void> {
    const pages = new Map<string, Set<string>>();
    for (const position of positions) {
      const page = pageOf(position);
      if (!page) {
        throw new InvalidPositionError(`Cannot acknowledge ${position.toString()}: it names no entry`);
      }
      const offsets = pages.get(page.key) ?? new Set<string>();
      offsets.add(page.offset.toString());
      pages.set(page.key, offsets);
    }
    await forEachLimited([...pages], WRITE_CONCURRENCY, async ([sk, offsets]) => {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: S(cursorId), sk: S(sk) },
          UpdateExpression: 'ADD a :offsets',
          ExpressionAttributeValues: { ':offsets': { NS: [...offsets] } },
        }),
      );
    });
  }

  /**
   * Cost: one write for the head, then one per page passed (none for the page
   * mark-delete stops in); a move across ledgers or over more than
   * FLOOR_BY_KEY_MAX_PAGES pages first queries which of those pages exist.
   */
  async markDelete(cursorId: string, position: Position): Promise<void> {
    let previous: Position;
    try {
      const { Attributes } = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: S(cursorId), sk: S(HEAD) },
          UpdateExpression: 'SET ml = :ml, me = :me, mk = :mk',
          ConditionExpression: 'attribute_exists(pk) AND mk < :mk',
          ExpressionAttributeValues: {
            ':ml': N(position.ledgerId),
            ':me': N(position.entryId),
            ':mk': S(sortableKey(position)),
          },
          ReturnValues: 'ALL_OLD',
        }),
      );
      previous = markDeleteOf(Attributes as Item);
    } catch (error) {
      // Already at or past `position` (or deleted): mark-delete never moves back, and the call
      // that moved it writes the floors.
      if (isConditionalCheckFailed(error)) return;
      throw error;
    }
    await this.writeFloors(cursorId, previous, position);
  }

  async isAcknowledged(cursorId: string, positions: readonly Position[]): Promise<boolean[]> {
    return (await this.deliveryState(cursorId, positions)).map((state) => state.acknowledged);
  }

  /**
   * One consistent read of the head and the pages of `positions` (a BatchGet,
   * or a GetItem for one key). With `individualAcksOnly` the pages alone answer, and the head
   * is read (a second request) only when one of them does not exist: a missing
   * page holds no ack, no redelivery and no floor, so only mark-delete can say.
   */
  async deliveryState(
    cursorId: string,
    positions: readonly Position[],
    options: DeliveryStateOptions = {},
  ): Promise<DeliveryState[]> {
    if (positions.length === 0) return [];
    const pageKeys = [...new Set(positions.flatMap((position) => pageOf(position)?.key ?? []))];
    let items: Map<string, Item>;
    if (options.individualAcksOnly) {
      items = await this.read(cursorId, pageKeys);
      const missing = positions.some((position) => {
        const page = pageOf(position);
        return page === undefined || !items.has(page.key);
      });
      if (missing) {
        const head = (await this.read(cursorId, [HEAD])).get(HEAD);
        if (head) items.set(HEAD, head);
        else return positions.map(() => UNACKNOWLEDGED); // no such cursor
      }
    } else {
      items = await this.read(cursorId, [HEAD, ...pageKeys]);
      if (!items.has(HEAD)) return positions.map(() => UNACKNOWLEDGED);
    }
    const head = items.get(HEAD);
    const markDelete = head ? markDeleteOf(head) : undefined;
    return positions.map((position) => {
      if (markDelete && position.compareTo(markDelete) <= 0) return ACKNOWLEDGED;
      const page = pageOf(position);
      const item = page && items.get(page.key);
      if (!page || !item) return UNACKNOWLEDGED;
      const floor = big(item, 'm');
      if (floor !== undefined && page.offset <= floor) return ACKNOWLEDGED;
      return {
        acknowledged: item.a?.NS?.includes(page.offset.toString()) ?? false,
        redeliveryCount: highestCount(item.r?.NS, page.offset),
      };
    });
  }

  async recordRedelivery(
    cursorId: string,
    redeliveries: readonly { position: Position; count: number }[],
  ): Promise<void> {
    const pages = new Map<string, Set<string>>();
    for (const { position, count } of redeliveries) {
      const key = pageKey(position.ledgerId, position.entryId / ACK_PAGE_SIZE);
      const values = pages.get(key) ?? new Set<string>();
      const capped = BigInt(Math.min(Math.max(0, Math.floor(count)), Number(REDELIVERY_COUNT_LIMIT) - 1));
      values.add(((position.entryId % ACK_PAGE_SIZE) * REDELIVERY_COUNT_LIMIT + capped).toString());
      pages.set(key, values);
    }
    await forEachLimited([...pages], WRITE_CONCURRENCY, async ([sk, values]) => {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: S(cursorId), sk: S(sk) },
          UpdateExpression: 'ADD r :values',
          ExpressionAttributeValues: { ':values': { NS: [...values] } },
        }),
      );
    });
  }

  async delete(cursorId: string): Promise<void> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': S(cursorId) },
      ProjectionExpression: 'pk, sk',
      ConsistentRead: true,
    });
    await deleteAll(this.client, this.tableName, items);
  }

  async acquireLease(cursorId: string, holder: string, nowMs: number, untilMs: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: S(cursorId), sk: S(HEAD) },
          UpdateExpression: 'SET lh = :holder, lu = :until',
          ConditionExpression:
            'attribute_exists(pk) AND (attribute_not_exists(lu) OR lu < :now OR lh = :holder)',
          ExpressionAttributeValues: { ':holder': S(holder), ':until': N(untilMs), ':now': N(nowMs) },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  async releaseLease(cursorId: string, holder: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: S(cursorId), sk: S(HEAD) },
          UpdateExpression: 'REMOVE lh, lu',
          ConditionExpression: 'lh = :holder',
          ExpressionAttributeValues: { ':holder': S(holder) },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  /**
   * The floors of a mark-delete move from `from` to `to`: a tombstone on every
   * page now wholly covered (from the page of the entry after `from` on). A short move within one ledger writes the pages by key,
   * creating missing ones as tombstones; a longer one writes only the pages
   * that exist (see FLOOR_BY_KEY_MAX_PAGES). For a cursor moved by folding
   * individual acks both write the same pages, since every page it passes
   * exists (each of its entries was acknowledged); a page that does not exist
   * holds no ack, and a check that finds none reads the head.
   */
  private async writeFloors(cursorId: string, from: Position, to: Position): Promise<void> {
    // The first page holding an entry after `from` (the page `from` ends is already a tombstone),
    // and the first page of `to`'s ledger that does not end at or before `to`.
    const firstPage = (from.entryId + 1n) / ACK_PAGE_SIZE;
    const endPage = (to.entryId + 1n) / ACK_PAGE_SIZE;
    let covered: string[];
    if (from.ledgerId === to.ledgerId && endPage - firstPage <= FLOOR_BY_KEY_MAX_PAGES) {
      covered = [];
      for (let page = firstPage; page < endPage; page++) covered.push(pageKey(to.ledgerId, page));
    } else {
      const last = endPage > 0n ? pageKey(to.ledgerId, endPage - 1n) : `${PAGE_PREFIX}${pad(to.ledgerId)}#`;
      const existing = await queryAll(this.client, {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: {
          ':pk': S(cursorId),
          ':from': S(pageKey(from.ledgerId, firstPage)),
          ':to': S(last),
        },
        ProjectionExpression: 'sk',
        ConsistentRead: true,
      });
      covered = existing.map((item) => str(item, 'sk') as string);
    }
    await forEachLimited(covered, WRITE_CONCURRENCY, (sk) => this.tombstone(cursorId, sk));
  }

  /** Every offset of the page is acknowledged: its acks and redelivery counts are no longer needed. */
  private async tombstone(cursorId: string, sk: string): Promise<void> {
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: { pk: S(cursorId), sk: S(sk) },
        UpdateExpression: 'SET m = :m REMOVE a, r',
        ExpressionAttributeValues: { ':m': N(LAST_OFFSET) },
      }),
    );
  }

  /** Sets the page's floor to `floor` unless it is already as high. */
  private async raiseFloor(cursorId: string, sk: string, floor: bigint): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: S(cursorId), sk: S(sk) },
          UpdateExpression: 'SET m = :m',
          ConditionExpression: 'attribute_not_exists(m) OR m < :m',
          ExpressionAttributeValues: { ':m': N(floor) },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  /** Consistent reads by key: one GetItem for one key, BatchGets of 100 otherwise. */
  private async read(cursorId: string, sortKeys: readonly string[]): Promise<Map<string, Item>> {
    if (sortKeys.length !== 1) return this.batchGet(cursorId, sortKeys);
    const sk = sortKeys[0] as string;
    const { Item: item } = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { pk: S(cursorId), sk: S(sk) },
        ConsistentRead: true,
      }),
    );
    return new Map(item ? [[sk, item]] : []);
  }

  /** The items of `sortKeys` that exist (batchGetAll: bounded attempts, then an error). */
  private async batchGet(cursorId: string, sortKeys: readonly string[]): Promise<Map<string, Item>> {
    const items = await batchGetAll(this.client, {
      tableName: this.tableName,
      keys: sortKeys.map((sk) => ({ pk: S(cursorId), sk: S(sk) })),
    });
    return new Map(items.map((item) => [str(item, 'sk') as string, item]));
  }
}

const ACKNOWLEDGED: DeliveryState = { acknowledged: true, redeliveryCount: 0 };
const UNACKNOWLEDGED: DeliveryState = { acknowledged: false, redeliveryCount: 0 };

function pageKey(ledgerId: bigint, page: bigint): string {
  return `${PAGE_PREFIX}${pad(ledgerId)}#${pad(page, 17)}`; // 2^63 / 200 still has 17 digits
}

/** The page of an entry and its offset there; none for `L:-1`, which names no entry. */
function pageOf(position: Position): { key: string; offset: bigint } | undefined {
  if (position.isBeforeFirst) return undefined;
  return {
    key: pageKey(position.ledgerId, position.entryId / ACK_PAGE_SIZE),
    offset: position.entryId % ACK_PAGE_SIZE,
  };
}

/** The page number of a position; `L:-1` counts as page 0 of L. */
function pageNumber(position: Position): bigint {
  return position.isBeforeFirst ? 0n : position.entryId / ACK_PAGE_SIZE;
}

function parsePageKey(sk: string): { ledgerId: bigint; firstEntryId: bigint } {
  const [, ledger, page] = sk.split('#') as [string, string, string];
  return { ledgerId: BigInt(ledger), firstEntryId: BigInt(page) * ACK_PAGE_SIZE };
}

/** Orders like Position, including entryId -1 ("before the first entry"). */
function sortableKey(position: Position): string {
  return `${pad(position.ledgerId)}:${pad(position.entryId + 1n)}`;
}

function markDeleteAttributes(position: Position): Item {
  return { ml: N(position.ledgerId), me: N(position.entryId), mk: S(sortableKey(position)) };
}

function markDeleteOf(head: Item): Position {
  return Position.ofStored(big(head, 'ml') as bigint, big(head, 'me') as bigint);
}

function highestCount(values: readonly string[] | undefined, offset: bigint): number {
  let highest = 0n;
  for (const value of values ?? []) {
    const number = BigInt(value);
    if (number / REDELIVERY_COUNT_LIMIT === offset) {
      const count = number % REDELIVERY_COUNT_LIMIT;
      if (count > highest) highest = count;
    }
  }
  return Number(highest);
}

function compareBigInt(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
