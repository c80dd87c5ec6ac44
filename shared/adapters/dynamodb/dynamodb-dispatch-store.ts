import { randomBytes } from 'node:crypto';
import {
  type AttributeValue,
  BatchGetItemCommand,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { DeliveryRun } from '../../domain/delivery-run.ts';
import {
  type DispatchHead,
  decodeDispatchHead,
  decodeRuns,
  encodeDispatchHead,
  encodeRuns,
} from '../../domain/dispatch-head.ts';
import { Position } from '../../domain/position.ts';
import { type RateCounter, type RateSnapshot, snapshotDue } from '../../domain/rate-counter.ts';
import {
  type CasOutcome,
  type DeliveryCounterName,
  DISPATCH_PAGE_SIZE,
  type DispatchStore,
  type HeadRecord,
  type PageRef,
  type PageState,
  type TrackerEntry,
} from '../../ports/dispatch-store.ts';
import { EMULATOR_ONLY } from './capacity-meter.ts';
import {
  backoff,
  deleteAll,
  forEachLimited,
  type Item,
  isConditionalCheckFailed,
  N,
  num,
  pad,
  queryAll,
  S,
  str,
  writeAll,
} from './dynamodb-support.ts';
import { COMPARE_AND_SET } from './partition-key-meter.ts';

const HEAD = 'H';
/** The delivery counters item (see addToCounters). */
const COUNTERS = 'S';
/** Attribute names of each counter: count, bytes, last time, snapshot, previous snapshot. */
const COUNTER_ATTRIBUTES: Record<DeliveryCounterName, readonly [string, string, string, string, string]> = {
  out: ['xn', 'xb', 'xt', 'xs', 'xp'],
  redelivered: ['yn', 'yb', 'yt', 'ys', 'yp'],
};
const PAGE_PREFIX = 'P#';
const TRACKER_PREFIX = 'R#';
/** Sorts after every tracker key ('$' follows '#'): the end of the tracker range. */
const TRACKER_END = 'R$';
/** Sorts after every digit and '#': `R#<due>#~` bounds the entries due at `due`, inclusive. */
const AFTER_DIGITS = '~';
/** Concurrent page writes of one acknowledge. */
const WRITE_CONCURRENCY = 16;
/** BatchGetItem takes at most 100 keys. */
const MAX_BATCH_GET_KEYS = 100;
/** Sends of one BatchGetItem's unprocessed keys before readPages gives up (1.6 to 3.3 s of backoff in all). */
const MAX_BATCH_GET_ATTEMPTS = 10;

/**
 * DispatchStore on DynamoDB: the delivery engine's items in the cursor's own partition of the
 * Cursors table (see docs/design/delivery-engine.md#items).
 *
 * Item layout (table Cursors, one partition per cursor, pk = cursorId):
 *
 * | sk | attributes | meaning |
 * | --- | --- | --- |
 * | `H` | `s` (S) | the head, as encodeDispatchHead writes it |
 * | `H` | `v` (N) | the head's version: 1 at creation, one more per compare-and-set |
 * | `H` | `w` (S) | the write token of the compare-and-set that last wrote `s` (absent: written by createHead) |
 * | `H` | `ah` (S) | the early-ack mark, `<ledgerId:20>:<entryId + 1:20>` (sorts as positions do); raised only, outside `v` |
 * | `P#<ledgerId:20>#<page:17>` | `a` (NS) | offsets (entryId - page * 100) acknowledged by id, `ADD` only |
 * | `P#...` | `s` (S) | the runs spilled to that page, JSON of encodeRuns |
 * | `P#...` | `m` (N) | floor: every offset <= m of the page is acknowledged |
 * | `P#...` | `v` (N) | the version of `s` and `m`; absent (a page with acks only): version 0 |
 * | `P#...` | `w` (S) | the write token of the compare-and-set that last wrote `s` |
 * | `R#<dueMs:15>#<ledgerId:20>#<entryId:20>#<deliveries>#<n>` | none | a redelivery tracker entry, wholly in its key |
 *
 * The padding makes string order numeric order: tracker entries sort by due time, then position,
 * and one Query reads the due ones; `ah < :p` compares positions. The head is only ever written
 * whole by its creating PutItem: every later write is an UpdateItem of `s` and `v`, so the
 * early-ack mark (written by acks outside the head's version) is never erased.
 *
 * Durability and cost: every method is one request per item it writes or one read request, as
 * the port states; acks are commutative `ADD`s to number sets, so concurrent acks never overwrite
 * each other. A write is billed on the whole item, one write unit per started KB: with consumer
 * ids as the server issues them (22 characters), a head is one write unit up to 13 held runs
 * (11 with ack timeouts) and two at 16 (1.1-1.3 KB), raising `ah` included; a page's acks are one
 * write unit each unless its runs document holds 10 held runs with ack timeouts and the page more
 * than 80 acks (two). Reads of a head or a page are one read unit (under 4 KB). Measured in
 * test/integration/dispatch-cost.test.ts.
 *
 * A failed compare-and-set of the head asks DynamoDB for the item it compared against
 * (ReturnValuesOnConditionCheckFailure ALL_OLD), so a conflict costs no second request on AWS and
 * on DynamoDB Local. dynalite 4.0.0 ignores that parameter: when the failure carries no item
 * (there, or on AWS when the head does not exist), the current head is read with a strongly
 * consistent GetItem, one more request.
 *
 * A compare-and-set the SDK retries after its first attempt applied and its answer was lost (a
 * timeout, a connection reset) is refused for its own write. Each one therefore writes a token
 * drawn for that request (`w`, 11 characters; the SDK resends the request as it is): when the
 * refusal's item (or, without one, the emulator-only read) carries this request's token and the
 * value it wrote, the write applied and the answer is success. `w` is only ever written with `s`
 * (raiseAheadAck and acks leave it), so the token names the last compare-and-set of the item,
 * whatever its version became since; a token is never drawn twice (64 random bits), so "my token"
 * means "my write", with no ABA through equal heads or a deleted and recreated item. Cost: no
 * request and no read or write unit on the common path (about 14 bytes more per head and page
 * item, which moves the one-write-unit bounds above by well under one run); a refused page write
 * now asks for its item too (on AWS, no extra unit; on dynalite, one emulator-only read).
 */
export class DynamoDbDispatchStore implements DispatchStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async createHead(cursorId: string, head: DispatchHead): Promise<boolean> {
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: { pk: S(cursorId), sk: S(HEAD), s: S(encodeDispatchHead(head)), v: N(1) },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  async readHead(
    cursorId: string,
    options: { readonly consistent?: boolean } = {},
  ): Promise<HeadRecord | undefined> {
    const { Item: item } = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: this.key(cursorId, HEAD),
        ConsistentRead: options.consistent ?? true,
      }),
    );
    return item ? headRecordOf(item) : undefined;
  }

  /** The item after a refused compare-and-set whose answer carried none (see the class doc). */
  private async itemAfterConflict(cursorId: string, sk: string, cause: unknown): Promise<Item | undefined> {
    const input = {
      TableName: this.tableName,
      Key: this.key(cursorId, sk),
      ConsistentRead: true,
    };
    // On AWS the refusal carries the item (no read unit): this read happens there only for an item
    // deleted meanwhile (rare, and counted with the emulator's reads). The meter files it apart
    // from AWS's bill.
    const emulatorOnly = cause instanceof ConditionalCheckFailedException && cause.Item === undefined;
    const { Item: item } = await this.client.send(
      new GetItemCommand(emulatorOnly ? Object.assign(input, { [EMULATOR_ONLY]: true }) : input),
    );
    return item;
  }

  async casHead(
    cursorId: string,
    expectedVersion: number,
    head: DispatchHead,
  ): Promise<CasOutcome<HeadRecord>> {
    const text = encodeDispatchHead(head);
    const token = newWriteToken();
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.key(cursorId, HEAD),
          UpdateExpression: 'SET s = :s, v = :next, w = :w',
          ConditionExpression: 'v = :expected',
          ExpressionAttributeValues: {
            ':s': S(text),
            ':next': N(expectedVersion + 1),
            ':expected': N(expectedVersion),
            ':w': S(token),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          // For the usage meter only (not sent): the head is the subscription's serialisation point.
          ...{ [COMPARE_AND_SET]: true },
        }),
      );
      return { ok: true };
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      const old = error instanceof ConditionalCheckFailedException ? error.Item : undefined;
      const item = old ?? (await this.itemAfterConflict(cursorId, HEAD, error));
      if (writtenBy(item, token, text)) return { ok: true };
      return { ok: false, current: item ? headRecordOf(item) : undefined };
    }
  }

  async raiseAheadAck(cursorId: string, position: Position): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.key(cursorId, HEAD),
          UpdateExpression: 'SET ah = :p ADD v :one',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(ah) OR ah < :p)',
          ExpressionAttributeValues: { ':p': S(positionKey(position)), ':one': N(1) },
        }),
      );
    } catch (error) {
      // Already at or past `position`, or no head: nothing to raise.
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  /**
   * BatchGetItem of the distinct pages, 100 keys per request; unprocessed keys are sent again
   * with jittered backoff, and after MAX_BATCH_GET_ATTEMPTS sends of one batch it throws.
   */
  async readPages(cursorId: string, pages: readonly PageRef[]): Promise<PageState[]> {
    const sortKeys = [...new Set(pages.map(({ ledgerId, page }) => pageKey(ledgerId, page)))];
    const found = new Map<string, Item>();
    for (let i = 0; i < sortKeys.length; i += MAX_BATCH_GET_KEYS) {
      let keys = sortKeys.slice(i, i + MAX_BATCH_GET_KEYS).map((sk) => this.key(cursorId, sk));
      for (let attempt = 1; keys.length > 0; attempt++) {
        const result = await this.client.send(
          new BatchGetItemCommand({
            RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } },
          }),
        );
        for (const item of result.Responses?.[this.tableName] ?? [])
          found.set(str(item, 'sk') as string, item);
        keys = result.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
        if (keys.length === 0) break;
        if (attempt >= MAX_BATCH_GET_ATTEMPTS) {
          throw new Error(
            `BatchGetItem on ${this.tableName} left ${keys.length} pages unread after ${attempt} attempts`,
          );
        }
        await backoff(attempt - 1);
      }
    }
    return pages.map(({ ledgerId, page }) => pageStateOf(ledgerId, page, found.get(pageKey(ledgerId, page))));
  }

  async casPage(
    cursorId: string,
    { ledgerId, page }: PageRef,
    expectedVersion: number,
    next: { readonly runs: readonly DeliveryRun[]; readonly floor?: number; readonly clearAcks?: boolean },
  ): Promise<boolean> {
    const runs = JSON.stringify(encodeRuns(next.runs));
    const token = newWriteToken();
    const set = ['s = :s', 'v = :next', 'w = :w'];
    const values: Record<string, AttributeValue> = {
      ':s': S(runs),
      ':next': N(expectedVersion + 1),
      ':w': S(token),
    };
    if (next.floor !== undefined) {
      set.push('m = :m');
      values[':m'] = N(next.floor);
    }
    // A page holding only acks (ADDed before any run document) has no `v`: it is version 0.
    let condition = 'attribute_not_exists(v)';
    if (expectedVersion !== 0) {
      condition = 'v = :expected';
      values[':expected'] = N(expectedVersion);
    }
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.key(cursorId, pageKey(ledgerId, page)),
          UpdateExpression: `SET ${set.join(', ')}${next.clearAcks ? ' REMOVE a' : ''}`,
          ConditionExpression: condition,
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          ...{ [COMPARE_AND_SET]: true },
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      const old = error instanceof ConditionalCheckFailedException ? error.Item : undefined;
      const sk = pageKey(ledgerId, page);
      return writtenBy(old ?? (await this.itemAfterConflict(cursorId, sk, error)), token, runs);
    }
  }

  /** One `ADD a` UpdateItem per page touched, WRITE_CONCURRENCY at once. */
  async acknowledge(cursorId: string, positions: readonly Position[], atMs?: number): Promise<void> {
    const byPage = new Map<string, Set<string>>();
    for (const position of positions) {
      const sk = pageKey(position.ledgerId, position.entryId / DISPATCH_PAGE_SIZE);
      const offsets = byPage.get(sk) ?? new Set<string>();
      offsets.add((position.entryId % DISPATCH_PAGE_SIZE).toString());
      byPage.set(sk, offsets);
    }
    await forEachLimited([...byPage], WRITE_CONCURRENCY, async ([sk, offsets]) => {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.key(cursorId, sk),
          UpdateExpression: atMs === undefined ? 'ADD a :offsets' : 'SET la = :at ADD a :offsets',
          ExpressionAttributeValues: {
            ':offsets': { NS: [...offsets] },
            ...(atMs === undefined ? {} : { ':at': N(atMs) }),
          },
        }),
      );
    });
  }

  /** BatchWriteItem deletes, 25 per request. */
  async deletePages(cursorId: string, pages: readonly PageRef[]): Promise<void> {
    await deleteAll(
      this.client,
      this.tableName,
      pages.map(({ ledgerId, page }) => this.key(cursorId, pageKey(ledgerId, page))),
    );
  }

  /** One UpdateItem (ADD) on the counters item; then, for the first of a minute, the snapshots' renewal. */
  async addToCounters(
    cursorId: string,
    additions: Partial<Record<DeliveryCounterName, { readonly count: number; readonly bytes: number }>>,
    atMs: number,
  ): Promise<void> {
    const entries = Object.entries(additions) as [DeliveryCounterName, { count: number; bytes: number }][];
    if (entries.length === 0) return;
    const adds: string[] = [];
    const sets: string[] = [];
    const values: Record<string, AttributeValue> = { ':at': N(atMs) };
    for (const [name, { count, bytes }] of entries) {
      const [n, b, t] = COUNTER_ATTRIBUTES[name];
      adds.push(`${n} :${n}`, `${b} :${b}`);
      sets.push(`${t} = :at`);
      values[`:${n}`] = N(count);
      values[`:${b}`] = N(bytes);
    }
    const result = await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: this.key(cursorId, COUNTERS),
        UpdateExpression: `SET ${sets.join(', ')} ADD ${adds.join(', ')}`,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    const item = result.Attributes ?? {};
    for (const [name, added] of entries) {
      const counter = counterOf(item, name);
      if (!snapshotDue(counter, atMs)) continue;
      const [n, b, , snap, prev] = COUNTER_ATTRIBUTES[name];
      // A counter's first snapshot is zero (what it was before any addition, whichever racing
      // addition writes it); a renewal takes the counter before this addition.
      const snapshot: RateSnapshot = counter
        ? { atMs, count: (num(item, n) ?? 0) - added.count, bytes: (num(item, b) ?? 0) - added.bytes }
        : { atMs, count: 0, bytes: 0 };
      const renewal: Record<string, AttributeValue> = { ':s': snapshotValue(snapshot) };
      let update = `SET ${snap} = :s`;
      let condition = `attribute_not_exists(${snap})`;
      if (counter) {
        renewal[':p'] = snapshotValue(counter.snapshot);
        renewal[':old'] = N(counter.snapshot.atMs);
        update += `, ${prev} = :p`;
        condition = `${snap}[0] = :old`;
      }
      try {
        await this.client.send(
          new UpdateItemCommand({
            TableName: this.tableName,
            Key: this.key(cursorId, COUNTERS),
            UpdateExpression: update,
            ConditionExpression: condition,
            ExpressionAttributeValues: renewal,
          }),
        );
      } catch (error) {
        // Another call renewed it first.
        if (!isConditionalCheckFailed(error)) throw error;
      }
    }
  }

  /** One strongly consistent GetItem. */
  async readCounters(cursorId: string): Promise<Partial<Record<DeliveryCounterName, RateCounter>>> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: this.key(cursorId, COUNTERS),
        ConsistentRead: true,
      }),
    );
    const counters: Partial<Record<DeliveryCounterName, RateCounter>> = {};
    for (const name of Object.keys(COUNTER_ATTRIBUTES) as DeliveryCounterName[]) {
      const counter = result.Item ? counterOf(result.Item, name) : undefined;
      if (counter) counters[name] = counter;
    }
    return counters;
  }

  /**
   * BatchWriteItem puts, 25 per request (see writeAll for its bounded retries). A last holder
   * (`c`, a consumer id of 22 characters) keeps the item well under 1 KB: still one write unit.
   */
  async putTracker(cursorId: string, entries: readonly TrackerEntry[]): Promise<void> {
    await writeAll(
      this.client,
      this.tableName,
      distinctTrackerItems(entries).map(([sk, consumerId]) => ({
        PutRequest: {
          Item: { ...this.key(cursorId, sk), ...(consumerId !== undefined ? { c: S(consumerId) } : {}) },
        },
      })),
    );
  }

  /**
   * One Query of the keys from `R#` to `R#<nowMs>#~`, at most `limit` items (a tracker item is
   * about 100 bytes, so a page of DynamoDB's 1 MB holds thousands).
   */
  async dueTracker(
    cursorId: string,
    nowMs: number,
    limit: number,
    options: { readonly after?: TrackerEntry } = {},
  ): Promise<TrackerEntry[]> {
    if (limit <= 0) return [];
    const { Items: items = [] } = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: {
          ':pk': S(cursorId),
          ':from': S(TRACKER_PREFIX),
          ':to': S(`${TRACKER_PREFIX}${dueKey(nowMs)}#${AFTER_DIGITS}`),
        },
        ProjectionExpression: 'sk, c',
        ConsistentRead: true,
        Limit: limit,
        ...(options.after
          ? { ExclusiveStartKey: { pk: S(cursorId), sk: S(trackerKey(options.after)) } }
          : {}),
      }),
    );
    return items.map((item) => {
      const entry = trackerEntryOf(str(item, 'sk') as string);
      const consumerId = str(item, 'c');
      return consumerId === undefined ? entry : { ...entry, consumerId };
    });
  }

  /** One Query, Limit 1, of the keys after every entry due at or before `afterMs`. */
  async nextTrackerDue(cursorId: string, afterMs: number): Promise<number | undefined> {
    const from = afterMs < 0 ? TRACKER_PREFIX : `${TRACKER_PREFIX}${dueKey(afterMs)}#${AFTER_DIGITS}`;
    const { Items: items = [] } = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': S(cursorId), ':from': S(from), ':to': S(TRACKER_END) },
        ProjectionExpression: 'sk',
        ConsistentRead: true,
        Limit: 1,
      }),
    );
    const first = items[0];
    return first ? trackerEntryOf(str(first, 'sk') as string).dueAtMs : undefined;
  }

  /** BatchWriteItem deletes, 25 per request (see writeAll for its bounded retries). */
  async deleteTracker(cursorId: string, entries: readonly TrackerEntry[]): Promise<void> {
    await deleteAll(
      this.client,
      this.tableName,
      distinctTrackerKeys(entries).map((sk) => this.key(cursorId, sk)),
    );
  }

  /** Queries the cursor's keys (paged), then deletes them 25 per BatchWriteItem. */
  async deleteCursor(cursorId: string): Promise<void> {
    const keys = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': S(cursorId) },
      ProjectionExpression: 'pk, sk',
      ConsistentRead: true,
    });
    await deleteAll(this.client, this.tableName, keys);
  }

  async purgeCursor(cursorId: string, maxItems: number): Promise<boolean> {
    const page = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': S(cursorId) },
        ProjectionExpression: 'pk, sk',
        Limit: maxItems,
        ConsistentRead: true,
      }),
    );
    const keys = page.Items ?? [];
    await deleteAll(this.client, this.tableName, keys);
    return keys.length >= maxItems || page.LastEvaluatedKey !== undefined;
  }

  private key(cursorId: string, sk: string): Item {
    return { pk: S(cursorId), sk: S(sk) };
  }
}

/** A compare-and-set request's write token: 64 random bits, 11 characters. */
function newWriteToken(): string {
  return randomBytes(8).toString('base64url');
}

/** Whether `item` is as the compare-and-set with `token` writing `value` to `s` left it (see the class doc). */
function writtenBy(item: Item | undefined, token: string, value: string): boolean {
  return str(item, 'w') === token && str(item, 's') === value;
}

function headRecordOf(item: Item): HeadRecord {
  const aheadAck = str(item, 'ah');
  return {
    head: decodeDispatchHead(str(item, 's') as string),
    version: num(item, 'v') as number,
    ...(aheadAck !== undefined ? { aheadAck: positionOfKey(aheadAck) } : {}),
  };
}

function snapshotValue(snapshot: RateSnapshot): AttributeValue {
  return { L: [N(snapshot.atMs), N(snapshot.count), N(snapshot.bytes)] };
}

function counterOf(item: Item, name: DeliveryCounterName): RateCounter | undefined {
  const [n, b, t, snap, prev] = COUNTER_ATTRIBUTES[name];
  const read = (value: AttributeValue | undefined): RateSnapshot | undefined => {
    const list = value?.L?.map((entry) => Number(entry.N));
    return list && list.length >= 3
      ? { atMs: list[0] as number, count: list[1] as number, bytes: list[2] as number }
      : undefined;
  };
  const snapshot = read(item[snap]);
  if (!snapshot) return undefined;
  const previous = read(item[prev]);
  return {
    count: num(item, n) ?? 0,
    bytes: num(item, b) ?? 0,
    lastAtMs: num(item, t) ?? snapshot.atMs,
    snapshot,
    ...(previous ? { previous } : {}),
  };
}

function pageStateOf(ledgerId: bigint, page: bigint, item: Item | undefined): PageState {
  const runs = str(item, 's');
  const floor = num(item, 'm');
  const lastAckedAtMs = num(item, 'la');
  return {
    ledgerId,
    page,
    acked: new Set((item?.a?.NS ?? []).map(Number)),
    runs: runs !== undefined ? decodeRuns(JSON.parse(runs)) : [],
    ...(floor !== undefined ? { floor } : {}),
    version: num(item, 'v') ?? 0,
    ...(lastAckedAtMs !== undefined ? { lastAckedAtMs } : {}),
  };
}

function pageKey(ledgerId: bigint, page: bigint): string {
  return `${PAGE_PREFIX}${pad(ledgerId)}#${pad(page, 17)}`; // 2^63 / 100 has 17 digits
}

/** Orders as Position does, `L:-1` included (entryId + 1, so no digit is a sign). */
function positionKey(position: Position): string {
  return `${pad(position.ledgerId)}:${pad(position.entryId + 1n)}`;
}

function positionOfKey(key: string): Position {
  const [ledgerId, entryIdPlusOne] = key.split(':') as [string, string];
  return Position.ofStored(BigInt(ledgerId), BigInt(entryIdPlusOne) - 1n);
}

/** Epoch milliseconds, 15 digits: good until the year 33658. */
function dueKey(dueAtMs: number): string {
  return pad(dueAtMs, 15);
}

function trackerKey(entry: TrackerEntry): string {
  const { dueAtMs, position, deliveries, n } = entry;
  return `${TRACKER_PREFIX}${dueKey(dueAtMs)}#${pad(position.ledgerId)}#${pad(position.entryId)}#${deliveries}#${n}`;
}

/** A batch may not name one key twice (DynamoDB refuses it): equal entries are one item anyway. */
function distinctTrackerKeys(entries: readonly TrackerEntry[]): string[] {
  return [...new Set(entries.map(trackerKey))];
}

/** The items to put, one per key (the last entry of a key names its holder). */
function distinctTrackerItems(entries: readonly TrackerEntry[]): [string, string | undefined][] {
  return [...new Map(entries.map((entry) => [trackerKey(entry), entry.consumerId])).entries()];
}

function trackerEntryOf(sk: string): TrackerEntry {
  const [, dueAtMs, ledgerId, entryId, deliveries, n] = sk.split('#') as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  return {
    dueAtMs: Number(dueAtMs),
    position: Position.ofStored(BigInt(ledgerId), BigInt(entryId)),
    deliveries: Number(deliveries),
    n: Number(n),
  };
}
