import { PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { ACTIVITY_SHARDS, activityShardKey } from '../../shared/adapters/dynamodb/catalog-keys.ts';
import { DynamoDbActivityIndex } from '../../shared/adapters/dynamodb/dynamodb-activity-index.ts';
import type { IndexedSubscription } from '../../shared/ports/activity-index.ts';
import { storageBackends, useStorage } from '../support/storage-backends.ts';

// The activity index on DynamoDB (issue 22, criterion 3): its entries spread over ACTIVITY_SHARDS
// partition keys by cursor id, so the marks of every warm process do not meet on one key; an index
// written before the shards (pk `ACT`) is moved into them by the first list.
const T0 = 1_767_225_600_000;
const subscription = (cursorId: string): IndexedSubscription => ({
  cursorId,
  partition: 'persistent://public/default/orders',
  subscription: `sub-${cursorId}`,
  type: 'Shared',
});

describe.each(
  storageBackends().filter((backend) => backend.name !== 'in-memory'),
)('the activity index on $name', (backend) => {
  const stores = useStorage(backend);
  let run = 0;
  /** Cursor ids unique to one test: the tests share the Catalog table. */
  const cursorIds = (count: number) => {
    run += 1;
    return Array.from({ length: count }, (_, i) => `r${run}c${i.toString().padStart(4, '0')}AbCdEfGhIjKlMn`);
  };
  const index = () => {
    const { dynamodb } = stores();
    if (!dynamodb) throw new Error('a DynamoDB backend has a client');
    return { index: new DynamoDbActivityIndex(dynamodb.client, dynamodb.catalogTable), ...dynamodb };
  };
  const mine = (ids: readonly string[]) => (entry: { cursorId: string }) => ids.includes(entry.cursorId);

  it('spreads 200 subscriptions over every shard and lists them all, in cursor id order', async () => {
    const { index: activity, client, catalogTable } = index();
    const ids = cursorIds(200);

    for (const id of ids) await activity.mark(subscription(id), T0);
    const listed = (await activity.list()).filter(mine(ids));

    expect(listed.map((entry) => entry.cursorId)).toEqual([...ids].sort());
    expect(listed[0]).toEqual({ ...subscription(ids[0] as string), markedAtMs: T0 });
    const perShard = await Promise.all(
      Array.from({ length: ACTIVITY_SHARDS }, async (_, shard) => {
        const { Count } = await client.send(
          new QueryCommand({
            TableName: catalogTable,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': { S: activityShardKey(shard) } },
            Select: 'COUNT',
          }),
        );
        return Count ?? 0;
      }),
    );
    expect(Math.min(...perShard)).toBeGreaterThan(0);
    expect(perShard.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(200);
  });

  it('removes and defers an entry in its shard, unless it was marked again', async () => {
    const { index: activity } = index();
    const [kept, removed, deferred] = cursorIds(3) as [string, string, string];
    for (const id of [kept, removed, deferred]) await activity.mark(subscription(id), T0);
    await activity.mark(subscription(kept), T0 + 1);

    await activity.remove(kept, T0);
    await activity.remove(removed, T0);
    await activity.defer(deferred, T0, { revisitAtMs: T0 + 60_000, backlogDueSinceMs: T0 - 5 });
    const listed = (await activity.list()).filter(mine([kept, removed, deferred]));

    expect(listed).toEqual([
      { ...subscription(kept), markedAtMs: T0 + 1 },
      { ...subscription(deferred), markedAtMs: T0, revisitAtMs: T0 + 60_000, backlogDueSinceMs: T0 - 5 },
    ]);
  });

  it('marks partitions with no subscription apart, lists them, and removes one unless marked again', async () => {
    const { index: activity } = index();
    run += 1;
    const names = Array.from({ length: 12 }, (_, i) => `persistent://public/default/run${run}-t${i}`);
    for (const name of names) await activity.markPartition(name, T0);
    await activity.markPartition(names[0] as string, T0 + 1);

    await activity.removePartition(names[0] as string, T0);
    await activity.removePartition(names[1] as string, T0);
    const listed = (await activity.listPartitions()).filter((mark) => names.includes(mark.partition));

    expect(listed).toEqual(
      [names[0], ...names.slice(2)]
        .sort()
        .map((partition) => ({ partition, markedAtMs: partition === names[0] ? T0 + 1 : T0 })),
    );
    // Partition marks are not subscriptions: maintenance's visits never see them.
    expect((await activity.list()).some((entry) => names.includes(entry.partition))).toBe(false);
  });

  it('moves entries of the unsharded index into their shards, keeping the later mark', async () => {
    const { index: activity, client, catalogTable } = index();
    const [onlyLegacy, newerInShard, newerInLegacy] = cursorIds(3) as [string, string, string];
    const putLegacy = (cursorId: string, markedAtMs: number, extra = {}) =>
      client.send(
        new PutItemCommand({
          TableName: catalogTable,
          Item: {
            pk: { S: 'ACT' },
            sk: { S: cursorId },
            p: { S: 'persistent://public/default/orders' },
            s: { S: `sub-${cursorId}` },
            ty: { S: 'Shared' },
            m: { N: String(markedAtMs) },
            ...extra,
          },
        }),
      );
    await putLegacy(onlyLegacy, T0, { rv: { N: String(T0 + 30_000) } });
    await putLegacy(newerInShard, T0);
    await activity.mark(subscription(newerInShard), T0 + 10);
    await activity.mark(subscription(newerInLegacy), T0);
    await putLegacy(newerInLegacy, T0 + 20);

    const listed = (await activity.list()).filter(mine([onlyLegacy, newerInShard, newerInLegacy]));
    const { Count } = await client.send(
      new QueryCommand({
        TableName: catalogTable,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: 'ACT' } },
        Select: 'COUNT',
      }),
    );

    expect(listed).toEqual(
      [
        { ...subscription(onlyLegacy), markedAtMs: T0, revisitAtMs: T0 + 30_000 },
        { ...subscription(newerInShard), markedAtMs: T0 + 10 },
        { ...subscription(newerInLegacy), markedAtMs: T0 + 20 },
      ].sort((a, b) => (a.cursorId < b.cursorId ? -1 : 1)),
    );
    expect(Count).toBe(0);
    // The entries are in their shards: removing by mark finds them there.
    await activity.remove(onlyLegacy, T0);
    expect((await activity.list()).filter(mine([onlyLegacy]))).toEqual([]);
  });
});
