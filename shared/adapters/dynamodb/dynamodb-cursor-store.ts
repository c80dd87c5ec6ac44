import {
  BatchGetItemCommand,
  type DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { ConflictError, InvalidPositionError } from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import type { CursorStore, DeliveryState, StoredCursor } from '../../ports/cursor-store.ts';
import {
  backoff,
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
 * Entries per ack page. A page's number set holds offsets 0..255 (1 to 3
 * digits, about 2-3 bytes each in DynamoDB's size rules), so even a full page
 * with its keys stays under 1 KB: an acknowledgement always costs one write
 * unit per page it touches, whatever the number of holes in the cursor.
 */
export const ACK_PAGE_SIZE = 256n;

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
/** Concurrent page writes of one acknowledge call. */
const WRITE_CONCURRENCY = 16;

/**
 * Item layout (table Cursors, one partition per cursor, pk = cursorId):
 *
 * | sk | attributes | meaning |
 * | `H` | `ml`, `me` (N), `mk` (S) | mark-delete position; `mk` = sortable form for monotonic conditional writes |
 * | `H` | `lh` (S), `lu` (N) | the lease of a read-modify-write operation (skip): holder, expiry |
 * | `P#<ledgerId:20>#<page:17>` | `a` (NS) | offsets (entryId - page * 256) individually acknowledged in that page |
 * | `P#...` | `r` (NS) | `offset * 2^20 + redeliveryCount` of redelivered entries of that page |
 *
 * Durability: every acknowledgement is one `ADD` to a number set, which is
 * commutative and idempotent, so concurrent acks of neighbouring entries never
 * overwrite each other and nothing is capped. Mark-delete only moves forward
 * (conditional on `mk`), and pages it fully covers are deleted afterwards; an
 * ack racing that deletion can only concern positions already covered.
 */
export class DynamoDbCursorStore implements CursorStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

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
  }

  async load(cursorId: string): Promise<StoredCursor | undefined> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': S(cursorId) },
      ConsistentRead: true,
    });
    const head = items.find((item) => str(item, 'sk') === HEAD);
    if (!head) return undefined;
    const acknowledged: Position[] = [];
    for (const item of items) {
      const sk = str(item, 'sk') as string;
      if (!sk.startsWith(PAGE_PREFIX)) continue;
      const { ledgerId, firstEntryId } = parsePageKey(sk);
      const offsets = (item.a?.NS ?? []).map((offset) => BigInt(offset)).sort(compareBigInt);
      for (const offset of offsets) acknowledged.push(Position.of(ledgerId, firstEntryId + offset));
    }
    return { markDeletePosition: markDeleteOf(head), acknowledged };
  }

  async acknowledge(cursorId: string, positions: readonly Position[]): Promise<void> {
    const pages = new Map<string, Set<string>>();
    for (const position of positions) {
      if (position.isBeforeFirst) {
        throw new InvalidPositionError(`Cannot acknowledge ${position.toString()}: it names no entry`);
      }
      const key = pageKey(position.ledgerId, position.entryId / ACK_PAGE_SIZE);
      const offsets = pages.get(key) ?? new Set<string>();
      offsets.add((position.entryId % ACK_PAGE_SIZE).toString());
      pages.set(key, offsets);
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

  async markDelete(cursorId: string, position: Position): Promise<void> {
    try {
      await this.client.send(
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
        }),
      );
    } catch (error) {
      // Already at or past `position` (or deleted): mark-delete never moves back.
      if (!isConditionalCheckFailed(error)) throw error;
    }
    await this.deletePagesCoveredBy(cursorId, position);
  }

  async isAcknowledged(cursorId: string, positions: readonly Position[]): Promise<boolean[]> {
    return (await this.deliveryState(cursorId, positions)).map((state) => state.acknowledged);
  }

  async deliveryState(cursorId: string, positions: readonly Position[]): Promise<DeliveryState[]> {
    if (positions.length === 0) return [];
    const pageKeys = [...new Set(positions.map((p) => pageKey(p.ledgerId, p.entryId / ACK_PAGE_SIZE)))];
    const items = await this.batchGet(cursorId, [HEAD, ...pageKeys]);
    const head = items.get(HEAD);
    if (!head) return positions.map(() => ({ acknowledged: false, redeliveryCount: 0 }));
    const markDelete = markDeleteOf(head);
    return positions.map((position) => {
      if (position.compareTo(markDelete) <= 0) return { acknowledged: true, redeliveryCount: 0 };
      const page = items.get(pageKey(position.ledgerId, position.entryId / ACK_PAGE_SIZE));
      const offset = position.entryId % ACK_PAGE_SIZE;
      return {
        acknowledged: page?.a?.NS?.includes(offset.toString()) ?? false,
        redeliveryCount: highestCount(page?.r?.NS, offset),
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

  private async deletePagesCoveredBy(cursorId: string, markDelete: Position): Promise<void> {
    // Pages of earlier ledgers, and pages of this ledger that end at or before mark-delete.
    const fullPagesInLedger = (markDelete.entryId + 1n) / ACK_PAGE_SIZE;
    const upTo =
      fullPagesInLedger > 0n
        ? pageKey(markDelete.ledgerId, fullPagesInLedger - 1n)
        : `${PAGE_PREFIX}${pad(markDelete.ledgerId)}#`;
    const covered = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': S(cursorId), ':from': S(PAGE_PREFIX), ':to': S(upTo) },
      ProjectionExpression: 'pk, sk',
      ConsistentRead: true,
    });
    await deleteAll(this.client, this.tableName, covered);
  }

  private async batchGet(cursorId: string, sortKeys: readonly string[]): Promise<Map<string, Item>> {
    const found = new Map<string, Item>();
    for (let i = 0; i < sortKeys.length; i += 100) {
      let keys: Item[] = sortKeys.slice(i, i + 100).map((sk) => ({ pk: S(cursorId), sk: S(sk) }));
      for (let attempt = 0; keys.length > 0; attempt++) {
        const result = await this.client.send(
          new BatchGetItemCommand({
            RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } },
          }),
        );
        for (const item of result.Responses?.[this.tableName] ?? [])
          found.set(str(item, 'sk') as string, item);
        keys = (result.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Item[];
        if (keys.length > 0) await backoff(attempt);
      }
    }
    return found;
  }
}

function pageKey(ledgerId: bigint, page: bigint): string {
  return `${PAGE_PREFIX}${pad(ledgerId)}#${pad(page, 17)}`; // 2^63 / 256 has 17 digits
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
  const ledgerId = big(head, 'ml') as bigint;
  const entryId = big(head, 'me') as bigint;
  return entryId < 0n ? Position.beforeFirst(ledgerId) : Position.of(ledgerId, entryId);
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
