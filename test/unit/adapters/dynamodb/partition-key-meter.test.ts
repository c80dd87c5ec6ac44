import { describe, expect, it } from 'vitest';
import {
  COMPARE_AND_SET,
  PartitionKeyMeter,
} from '../../../../shared/adapters/dynamodb/partition-key-meter.ts';

// The requests and answers as the SDK's middleware sees them (no client, no network): the meter is
// plain bookkeeping over them. test/integration/partition-key-cost.test.ts runs it on dynalite and
// DynamoDB Local.
const CURSORS = 'ackline-local-Cursors';
const ENTRIES = 'ackline-local-Entries';
const CATALOG = 'ackline-local-Catalog';
const head = (cursorId: string) => ({ pk: { S: cursorId }, sk: { S: 'H' } });
const write = (units: number) => ({ ConsumedCapacity: { TableName: CURSORS, CapacityUnits: units } });
/** An item of about `bytes` bytes under `key`. */
const itemOf = (key: object, bytes: number) => ({ ...key, s: { S: 'x'.repeat(bytes) } });

describe('PartitionKeyMeter', () => {
  it('bills a refusal on the item it carries, else on the size last seen, else one unit', () => {
    const meter = new PartitionKeyMeter();
    const request = { TableName: CURSORS, Key: head('c1') };

    expect(meter.refused(request, itemOf(head('c1'), 3_000))).toBe(3);
    expect(meter.refused(request, undefined)).toBe(1);
    meter.answered('PutItem', { TableName: CURSORS, Item: itemOf(head('c1'), 1_500) }, write(2));
    expect(meter.refused(request, undefined)).toBe(2);
    // An UpdateItem's answer tells the units it was billed, on the larger of before and after.
    meter.answered('UpdateItem', request, write(4));
    expect(meter.refused(request, undefined)).toBe(4);
    meter.answered('DeleteItem', request, write(4));
    expect(meter.refused(request, undefined)).toBe(1);

    expect(meter.keyUsage()).toEqual([
      expect.objectContaining({ table: 'Cursors', partitionKey: 'c1', requests: 8, failedConditions: 5 }),
    ]);
  });

  it('counts the compare-and-sets of an item, committed and refused', () => {
    const meter = new PartitionKeyMeter();
    const cas = { TableName: CURSORS, Key: head('c1'), [COMPARE_AND_SET]: true };

    meter.answered('UpdateItem', cas, write(1));
    meter.answered('UpdateItem', cas, write(1));
    meter.refused(cas, undefined);
    meter.answered('UpdateItem', { TableName: CURSORS, Key: head('c1') }, write(1));

    expect(meter.compareAndSetUsage()).toEqual([
      { table: 'Cursors', partitionKey: 'c1', sortKey: 'H', committed: 2, refused: 1 },
    ]);
  });

  it.each([
    {
      condition: 'pk = :pk AND sk BETWEEN :a AND :b',
      values: { ':pk': { S: 'ACT' } },
      table: CATALOG,
      key: 'ACT',
    },
    {
      condition: '#k = :v',
      names: { '#k': 'pk' },
      values: { ':v': { S: 'ML#t' } },
      table: CATALOG,
      key: 'ML#t',
    },
    {
      condition: 'ledgerId = :l AND firstEntryId <= :e',
      values: { ':l': { N: '12' }, ':e': { N: '5' } },
      table: ENTRIES,
      key: '12',
    },
    {
      condition: 'firstEntryId = :e AND ledgerId = :l',
      values: { ':l': { N: '12' }, ':e': { N: '5' } },
      table: ENTRIES,
      key: '12',
    },
  ])('attributes the Query "$condition" to the partition key it names', ({
    condition,
    names,
    values,
    table,
    key,
  }) => {
    const meter = new PartitionKeyMeter();

    meter.answered(
      'Query',
      {
        TableName: table,
        KeyConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
      { ConsumedCapacity: { TableName: table, CapacityUnits: 1.5 }, Items: [] },
    );

    expect(meter.keyUsage()).toEqual([
      expect.objectContaining({
        partitionKey: key,
        readCapacityUnits: 1.5,
        byItemKind: { query: expect.any(Object) },
      }),
    ]);
  });

  it("shares a batch's units among the items it processed, by their sizes", () => {
    const meter = new PartitionKeyMeter();
    const put = (pk: string, bytes: number) => ({
      PutRequest: { Item: itemOf({ pk: { S: pk }, sk: { S: 'R#1' } }, bytes) },
    });

    meter.answered(
      'BatchWriteItem',
      { RequestItems: { [CURSORS]: [put('a', 100), put('b', 2_000), put('c', 100)] } },
      {
        ConsumedCapacity: [{ TableName: CURSORS, CapacityUnits: 3 }],
        UnprocessedItems: { [CURSORS]: [put('c', 100)] },
      },
    );

    const units = Object.fromEntries(
      meter.keyUsage().map((key) => [key.partitionKey, key.writeCapacityUnits]),
    );
    expect(units).toEqual({ a: 1, b: 2 });
  });

  it('forgets usage on reset, and keeps what it learnt of sizes', () => {
    const meter = new PartitionKeyMeter();
    meter.answered('PutItem', { TableName: CURSORS, Item: itemOf(head('c1'), 2_500) }, write(3));

    meter.reset();

    expect(meter.keyUsage()).toEqual([]);
    expect(meter.refused({ TableName: CURSORS, Key: head('c1') }, undefined)).toBe(3);
  });
});
