import type { AttributeValue, ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { tables } from '../../config/resources.ts';
import { itemBytes, writeUnitsOf } from './item-size.ts';

/**
 * Marks a compare-and-set (set as a property of the command's input, which the SDK does not send):
 * a write whose condition compares against what the writer read, retried on conflict. The meter
 * counts, per item, how many committed and how many were refused, for the ceiling a contended
 * item puts on throughput (`npm run bench`, docs/design/aws-limits.md#hot-keys).
 */
export const COMPARE_AND_SET = Symbol.for('ackline.compareAndSet');

/** Read and write units. */
export interface Units {
  readCapacityUnits: number;
  writeCapacityUnits: number;
}

/**
 * What one partition key of one table consumed. DynamoDB serves at most 1,000 write units and
 * 3,000 read units a second per partition, and a partition key's items are never split across
 * partitions by their load, so this is what bounds the key.
 */
export interface KeyUsage extends Units {
  /** The table's logical name (`Catalog`, `Entries`, `Cursors`). */
  readonly table: string;
  /** The partition key's value, as text. */
  readonly partitionKey: string;
  requests: number;
  /** Writes refused by their condition; their units are in writeCapacityUnits. */
  failedConditions: number;
  /** Units by kind of item: the sort key's prefix (`H`, `P#`, `S#`, `M`), `item` otherwise, `query` for a Query. */
  readonly byItemKind: Record<string, Units>;
}

/** Compare-and-sets of one item (marked COMPARE_AND_SET by its adapter). */
export interface CompareAndSetUsage {
  readonly table: string;
  readonly partitionKey: string;
  readonly sortKey: string;
  committed: number;
  refused: number;
}

type Key = Record<string, AttributeValue>;
type Request = {
  TableName?: string;
  Key?: Key;
  Item?: Key;
  KeyConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Key;
  ProjectionExpression?: string;
  ReturnValues?: string;
  RequestItems?: Record<string, unknown>;
};
type Answer = {
  ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[];
  Item?: Key;
  Items?: Key[];
  Attributes?: Key;
  Responses?: Record<string, Key[]>;
  UnprocessedKeys?: Record<string, { Keys?: Key[] }>;
  UnprocessedItems?: Record<string, WriteRequest[]>;
};
type WriteRequest = { PutRequest?: { Item?: Key }; DeleteRequest?: { Key?: Key } };

/** Items whose size the meter remembers, to bill a refused write on it (oldest forgotten first). */
const MAX_KNOWN_ITEMS = 100_000;

/**
 * Attributes capacity to partition keys, as DynamoDB's per-partition limits see it: the key of a
 * GetItem, PutItem, UpdateItem or DeleteItem; a Query's partition key value from its key
 * condition; each item of a BatchGetItem or BatchWriteItem, the table's reported units shared
 * among them by their sizes. Scans are not attributed. A write refused by its condition is billed
 * as AWS bills it, on the size of the item it found
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html),
 * at least one unit: the item the refusal carries (ReturnValuesOnConditionCheckFailure), else the
 * size this meter last saw of it (an item read or written whole; after an UpdateItem, the units
 * that write consumed, which DynamoDB bills on the larger of the item before and after).
 * Not persisted; memory linear in the keys touched since the last reset.
 */
export class PartitionKeyMeter {
  private readonly keys = new Map<string, KeyUsage>();
  private readonly compareAndSets = new Map<string, CompareAndSetUsage>();
  /** Item id -> the write units a write billed on its current size would cost. */
  private readonly known = new Map<string, number>();

  /** A request DynamoDB answered: its input and output as the SDK's middleware sees them. */
  answered(command: string, input: object, output: object): void {
    const request = input as Request;
    const answer = output as Answer;
    if (command === 'BatchGetItem') {
      this.batchGet(request, answer);
      return;
    }
    if (command === 'BatchWriteItem') {
      this.batchWrite(request, answer);
      return;
    }
    const consumed = firstCapacity(answer.ConsumedCapacity);
    if (command === 'Query') {
      const key = queryKey(request);
      if (key) this.add(key, 'query', unitsOf(consumed, false));
      for (const item of request.ProjectionExpression ? [] : (answer.Items ?? []))
        this.learn(request.TableName, item, writeUnitsOf(itemBytes(item)));
      return;
    }
    const key = itemKeyOf(request.TableName, request.Key ?? request.Item);
    if (!key) return;
    const write = command !== 'GetItem';
    const units = unitsOf(consumed, write);
    this.add(key, kindOf(key.sortKey), units);
    if (COMPARE_AND_SET in request) this.compareAndSet(key).committed += 1;
    this.learnFrom(command, request, answer, units);
  }

  /** A write refused by its condition: bills it, and answers the write units it was billed. */
  refused(input: object, foundItem: Key | undefined): number {
    const request = input as Request;
    const key = itemKeyOf(request.TableName, request.Key ?? request.Item);
    const units = foundItem ? writeUnitsOf(itemBytes(foundItem)) : ((key && this.known.get(key.id)) ?? 1);
    if (!key) return units;
    const usage = this.add(key, kindOf(key.sortKey), { readCapacityUnits: 0, writeCapacityUnits: units });
    usage.failedConditions += 1;
    if (COMPARE_AND_SET in request) this.compareAndSet(key).refused += 1;
    return units;
  }

  keyUsage(): KeyUsage[] {
    return [...this.keys.values()].map((usage) => ({
      ...usage,
      byItemKind: Object.fromEntries(Object.entries(usage.byItemKind).map(([kind, u]) => [kind, { ...u }])),
    }));
  }

  compareAndSetUsage(): CompareAndSetUsage[] {
    return [...this.compareAndSets.values()].map((usage) => ({ ...usage }));
  }

  /** Forgets the usage; what it learnt of items' sizes stays true, and is kept. */
  reset(): void {
    this.keys.clear();
    this.compareAndSets.clear();
  }

  private add(key: ItemKey, kind: string, units: Units): KeyUsage {
    const id = `${key.table}\u0000${key.partitionKey}`;
    let usage = this.keys.get(id);
    if (!usage) {
      usage = {
        table: key.table,
        partitionKey: key.partitionKey,
        requests: 0,
        readCapacityUnits: 0,
        writeCapacityUnits: 0,
        failedConditions: 0,
        byItemKind: {},
      };
      this.keys.set(id, usage);
    }
    usage.requests += 1;
    usage.readCapacityUnits += units.readCapacityUnits;
    usage.writeCapacityUnits += units.writeCapacityUnits;
    const byKind = usage.byItemKind[kind] ?? { readCapacityUnits: 0, writeCapacityUnits: 0 };
    byKind.readCapacityUnits += units.readCapacityUnits;
    byKind.writeCapacityUnits += units.writeCapacityUnits;
    usage.byItemKind[kind] = byKind;
    return usage;
  }

  private compareAndSet(key: ItemKey): CompareAndSetUsage {
    let usage = this.compareAndSets.get(key.id);
    if (!usage) {
      const { table, partitionKey, sortKey } = key;
      usage = { table, partitionKey, sortKey: sortKey ?? '', committed: 0, refused: 0 };
      this.compareAndSets.set(key.id, usage);
    }
    return usage;
  }

  /** What a single-item request tells of the item's size now. */
  private learnFrom(command: string, request: Request, answer: Answer, units: Units): void {
    const key = itemKeyOf(request.TableName, request.Key ?? request.Item);
    if (!key) return;
    if (command === 'DeleteItem') {
      this.known.delete(key.id);
    } else if (command === 'PutItem' && request.Item) {
      this.remember(key.id, writeUnitsOf(itemBytes(request.Item)));
    } else if (command === 'UpdateItem') {
      const after = request.ReturnValues === 'ALL_NEW' ? answer.Attributes : undefined;
      this.remember(key.id, after ? writeUnitsOf(itemBytes(after)) : Math.max(1, units.writeCapacityUnits));
    } else if (command === 'GetItem' && !request.ProjectionExpression) {
      if (answer.Item) this.remember(key.id, writeUnitsOf(itemBytes(answer.Item)));
      else this.known.delete(key.id);
    }
  }

  private learn(table: string | undefined, item: Key, units: number): void {
    const key = itemKeyOf(table, item);
    if (key) this.remember(key.id, units);
  }

  private remember(id: string, units: number): void {
    this.known.delete(id);
    this.known.set(id, units);
    if (this.known.size > MAX_KNOWN_ITEMS) {
      const oldest = this.known.keys().next().value;
      if (oldest !== undefined) this.known.delete(oldest);
    }
  }

  /** Each table's read units shared among the keys it answered for, by their sizes in 4 KB steps. */
  private batchGet(request: Request, answer: Answer): void {
    const requested = (request.RequestItems ?? {}) as Record<
      string,
      { Keys?: Key[]; ProjectionExpression?: string }
    >;
    for (const [table, { Keys = [], ProjectionExpression }] of Object.entries(requested)) {
      const unprocessed = idsOf(table, answer.UnprocessedKeys?.[table]?.Keys ?? []);
      const found = new Map<string, Key>();
      for (const item of answer.Responses?.[table] ?? []) {
        const key = itemKeyOf(table, item);
        if (key) found.set(key.id, item);
        if (key && !ProjectionExpression) this.remember(key.id, writeUnitsOf(itemBytes(item)));
      }
      const served = Keys.flatMap((k) => itemKeyOf(table, k) ?? []).filter((k) => !unprocessed.has(k.id));
      const weights = served.map((key) => {
        const item = found.get(key.id);
        return item ? Math.max(1, Math.ceil(itemBytes(item) / 4096)) : 1;
      });
      this.share(served, weights, unitsOf(capacityOfTable(answer.ConsumedCapacity, table), false));
    }
  }

  /** Each table's write units shared among the items written, by their sizes in 1 KB steps. */
  private batchWrite(request: Request, answer: Answer): void {
    const requested = (request.RequestItems ?? {}) as Record<string, WriteRequest[]>;
    for (const [table, writes] of Object.entries(requested)) {
      const unprocessed = idsOf(
        table,
        (answer.UnprocessedItems?.[table] ?? []).flatMap((w): Key[] => {
          const key = w.PutRequest?.Item ?? w.DeleteRequest?.Key;
          return key ? [key] : [];
        }),
      );
      const served: ItemKey[] = [];
      const weights: number[] = [];
      for (const write of writes) {
        const key = itemKeyOf(table, write.PutRequest?.Item ?? write.DeleteRequest?.Key);
        if (!key || unprocessed.has(key.id)) continue;
        const put = write.PutRequest?.Item;
        const units = put ? writeUnitsOf(itemBytes(put)) : (this.known.get(key.id) ?? 1);
        served.push(key);
        weights.push(units);
        if (put) this.remember(key.id, units);
        else this.known.delete(key.id);
      }
      this.share(served, weights, unitsOf(capacityOfTable(answer.ConsumedCapacity, table), true));
    }
  }

  private share(keys: readonly ItemKey[], weights: readonly number[], total: Units): void {
    const sum = weights.reduce((a, b) => a + b, 0);
    keys.forEach((key, i) => {
      const part = sum === 0 ? 0 : (weights[i] ?? 0) / sum;
      this.add(key, kindOf(key.sortKey), {
        readCapacityUnits: total.readCapacityUnits * part,
        writeCapacityUnits: total.writeCapacityUnits * part,
      });
    });
  }
}

interface ItemKey {
  readonly table: string;
  readonly partitionKey: string;
  readonly sortKey: string | undefined;
  /** table, partition key and sort key together. */
  readonly id: string;
}

/** The logical table name (physical names end in `-<logicalName>`) and its key attributes. */
function schemaOf(tableName: string | undefined): { table: string; pk: string; sk: string } {
  const table = (tableName ?? '?').replace(/^.*-/, '');
  const definition = tables.find((t) => t.logicalName === table);
  return { table, pk: definition?.partitionKey.name ?? 'pk', sk: definition?.sortKey.name ?? 'sk' };
}

function text(value: AttributeValue | undefined): string | undefined {
  return value?.S ?? value?.N;
}

function itemKeyOf(tableName: string | undefined, key: Key | undefined): ItemKey | undefined {
  if (!key) return undefined;
  const schema = schemaOf(tableName);
  const partitionKey = text(key[schema.pk]);
  if (partitionKey === undefined) return undefined;
  const sortKey = text(key[schema.sk]);
  return {
    table: schema.table,
    partitionKey,
    sortKey,
    id: `${schema.table}\u0000${partitionKey}\u0000${sortKey ?? ''}`,
  };
}

function idsOf(table: string, keys: readonly Key[]): Set<string> {
  return new Set(keys.flatMap((key) => itemKeyOf(table, key)?.id ?? []));
}

/** A Query's partition key: the value its key condition sets the table's partition key equal to. */
function queryKey(request: Request): ItemKey | undefined {
  const schema = schemaOf(request.TableName);
  for (const [, name, placeholder] of (request.KeyConditionExpression ?? '').matchAll(
    /(#?[A-Za-z_][\w]*)\s*=\s*(:[\w]+)/g,
  )) {
    const attribute = name?.startsWith('#') ? request.ExpressionAttributeNames?.[name] : name;
    if (attribute !== schema.pk || !placeholder) continue;
    const partitionKey = text(request.ExpressionAttributeValues?.[placeholder]);
    if (partitionKey === undefined) return undefined;
    return {
      table: schema.table,
      partitionKey,
      sortKey: undefined,
      id: `${schema.table}\u0000${partitionKey}`,
    };
  }
  return undefined;
}

/** The kind of an item, from a fixed prefix of its sort key, never a name. */
function kindOf(sortKey: string | undefined): string {
  if (sortKey === undefined) return 'query';
  const prefix = /^[A-Z]{1,5}#/.exec(sortKey)?.[0];
  if (prefix) return prefix;
  return /^[A-Z]{1,2}$/.test(sortKey) ? sortKey : 'item';
}

function firstCapacity(
  consumed: ConsumedCapacity | ConsumedCapacity[] | undefined,
): ConsumedCapacity | undefined {
  return Array.isArray(consumed) ? consumed[0] : consumed;
}

function capacityOfTable(
  consumed: ConsumedCapacity | ConsumedCapacity[] | undefined,
  table: string,
): ConsumedCapacity | undefined {
  const all = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
  return all.find((c) => c.TableName === table) ?? (all.length === 1 ? all[0] : undefined);
}

/** DynamoDB Local and dynalite report only CapacityUnits; AWS also splits read and write. */
export function unitsOf(capacity: ConsumedCapacity | undefined, write: boolean): Units {
  return {
    readCapacityUnits: capacity?.ReadCapacityUnits ?? (write ? 0 : (capacity?.CapacityUnits ?? 0)),
    writeCapacityUnits: capacity?.WriteCapacityUnits ?? (write ? (capacity?.CapacityUnits ?? 0) : 0),
  };
}
